#pragma once
// What the inspect tests share: the committed SASS fixtures (real cubins and PTX
// of our expand kernel, tests/sass/fixtures/README.md) as inspect items, the tools
// they need, found the way loraprobe finds them, or a skip saying which one is
// missing, and inspector options.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "support/nvdisasm.hpp"
#include "compile/toolchain.hpp"
#include "inspect/cache.hpp"
#include "inspect/inspector.hpp"
#include "sass/nvdisasm.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp::inspect::test {

/// tests/sass/fixtures/<name>.
inline std::string fixture_path(const std::string& name) {
  return std::string(LP_SOURCE_DIR) + "/tests/sass/fixtures/" + name;
}

/// The bytes of a fixture.
inline std::string fixture(const std::string& name) { return read_file(fixture_path(name)); }

/// vLLM's default expand config with an fp32 input, no ADD_INPUTS: the hazard.
inline const std::string k_hazard_id = "expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1";
/// The same at block_n 32: ptxas serialises the HGMMAs, clean.
inline const std::string k_clean_id = "expand-fp32-bf16-m64n32k32-w4s2-evenk-noadd-s1";

/// A ptxas to compile with: the newest under .tools/ptxas, else the toolkit's,
/// else Triton's; nullopt when there is none.
inline std::optional<compile::PtxasInfo> some_ptxas() {
  // discover_ptxas lists the toolkit's, Triton's, then the installed versions, oldest first.
  std::optional<compile::PtxasInfo> chosen;
  for (compile::PtxasInfo& info : compile::discover_ptxas()) {
    const bool installed = info.spec != "toolkit" && info.spec != "triton";
    if (installed || !chosen) {
      chosen = std::move(info);
    }
  }
  return chosen;
}

/// A fixture cubin (tests/sass/fixtures/<id>.cubin) as an item.
inline InspectItem cubin_item(const std::string& id, const std::string& compiler = "prebuilt") {
  return {id, id, compiler, fixture(id + ".cubin"), std::nullopt, nullptr, "", {}, {}};
}

/// The hazardous fixture's PTX, to be compiled by `ptxas`.
inline InspectItem hazard_ptx_item(const compile::PtxasInfo& ptxas) {
  const auto ptx = std::make_shared<const std::string>(fixture(k_hazard_id + ".ptx"));
  return {k_hazard_id, k_hazard_id, "ptxas=" + ptxas.spec, {}, PtxInput{ptx, ptxas}, nullptr, "", {}, {}};
}

/// Options without the designated-initializer form, which -Wextra flags for every
/// member left out.
inline InspectorOptions options(const sass::Nvdisasm& tool, unsigned jobs = 1,
                                std::optional<std::string> cache_root = std::nullopt,
                                std::vector<std::string> checks = {}) {
  InspectorOptions o;
  o.nvdisasm = tool;
  o.jobs = jobs;
  o.cache_root = std::move(cache_root);
  o.analysis.checks = std::move(checks);
  return o;
}

/// Rewrites the compile record of `ptx_item` (a PTX input) in the cache at `root` to
/// say that its PTX compiles to the cubin `cubin_sha256`: what someone with write
/// access to a cache, or a broken results file, can say. The reason it failed, if it did.
inline std::optional<std::string> forge_compile(const std::string& root, const InspectItem& ptx_item,
                                                const std::string& cubin_sha256) {
  const std::string key =
      compile_cache_key(sha256_hex(*ptx_item.ptx->ptx), ptx_item.ptx->ptxas.sha256, ptx_item.ptx->options);
  return ResultCache(root).store_compile(key, CompiledPtx{cubin_sha256, 1000, 1.0, ""});
}

}  // namespace lp::inspect::test

/// Declares `var`, a ptxas from some_ptxas(), or skips the test saying there is none.
#define LP_REQUIRE_SOME_PTXAS(var)                      \
  const auto var = ::lp::inspect::test::some_ptxas();   \
  if (!(var)) {                                         \
    GTEST_SKIP() << "skipped: no ptxas";                \
  }
