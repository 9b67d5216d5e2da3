#pragma once
// What the inspect tests share: the committed SASS fixtures (real cubins and PTX
// of our expand kernel, tests/sass/fixtures/README.md), and the tools they need,
// found the way loraprobe finds them, or a skip saying which one is missing.

#include <optional>
#include <string>

#include "support/nvdisasm.hpp"
#include "compile/toolchain.hpp"
#include "sass/nvdisasm.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

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

}  // namespace lp::inspect::test
