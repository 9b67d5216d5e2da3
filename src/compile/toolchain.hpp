#pragma once
// Where the compilers are: the CUDA toolkit, Triton's bundled ptxas, and the
// project-local ptxas versions setup installs under .tools/. Finding them needs
// no GPU, so `loraprobe env` and the static inspection work on any host.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "util/json_text.hpp"

namespace lp::compile {

/// A ptxas binary and what it says of itself.
struct PtxasInfo {
  std::string spec;     ///< how it was asked for: "toolkit", "triton", "13.0", or a path
  std::string path;     ///< absolute path
  std::string version;  ///< "13.0.88" from `ptxas --version`, empty when it did not say
  std::string sha256;   ///< of the binary
  [[nodiscard]] nlohmann::json to_json() const;
  [[nodiscard]] JsonText to_json_text() const;  ///< to_json() as a record carries it
};

/// The CUDA toolkit loraprobe finds: a report's environment.toolkit.
struct ToolkitRecord {
  std::optional<std::string> root;     ///< none: no toolkit found
  std::optional<std::string> origin;   ///< where root came from (tools::ToolRoot)
  std::optional<std::string> version;  ///< from version.json, else nvcc --version
  std::string build_version;           ///< the CUDA headers loraprobe was built with: "13.0"
  /// {"root", "origin", "version", "build_version"}: every key always present.
  [[nodiscard]] JsonText to_json_text() const;
};

ToolkitRecord toolkit_record();

/// site-packages/triton/backends/nvidia/bin of the python3 on PATH, when Triton is installed.
std::optional<std::string> triton_bin_dir();

/// The ptxas at `path`, which loraprobe found itself (the toolkit's, .tools/, a
/// folder the command line names), described: `--version` run, the binary hashed
/// (unless the caller has just hashed it: `sha256`). Never for a path a document
/// names: resolve_ptxas checks those.
PtxasInfo describe_found_ptxas(std::string spec, const std::string& path, std::optional<std::string> sha256 = std::nullopt);

/// Resolves a ptxas spec ("toolkit", "triton", a version such as "13.0" or "12.8.93"
/// installed under tools::tools_dir()/ptxas/ (a prefix means the newest it names: "13"
/// is 13.5.37 when that is installed), or a path), runs `--version` and hashes it.
/// Throws lp::EnvironmentError (exit 3) when what the spec names is not on this machine
/// (no toolkit, no Triton, a version not installed: it names the versions available),
/// lp::UsageError for a misspelt spec, a path that is no ptxas, and a path the command
/// line does not name (tools::require_named_program).
PtxasInfo resolve_ptxas(const std::string& spec);

/// The ptxas a kernel set's Triton bundles for sm_90, as the set's manifest records it.
struct BundledPtxas {
  std::string triton;     ///< "3.8.0"
  std::string path_hint;  ///< inside the wheel: "triton/backends/nvidia/bin/ptxas" (or ptxas-blackwell)
  std::string sha256;     ///< of the binary: what identifies it wherever it lies
  /// Its own words as the manifest records them ("Cuda compilation tools, release 12.8,
  /// V12.8.93"), or empty: NVIDIA's wheel of that version may hold the same binary.
  std::string version = {};
};

/// The binary of `bundled`, found by its sha256 in (first match wins)
/// tools_dir()/triton-ptxas/<triton>/<file name> (scripts/install_tools.sh triton-ptxas),
/// tools_dir()/triton/<triton>/<path_hint> (scripts/gen_kernels.py --triton), the
/// Triton of the python3 on PATH, and tools_dir()/ptxas/<its version>/ptxas (the ptxas
/// matrix: Triton 3.6-3.8 bundle NVIDIA's 12.8.93 and 12.9.86 byte for byte). Its spec is "triton". Throws lp::EnvironmentError
/// saying where it looked and how to install it; lp::UsageError for a manifest whose
/// names would leave those folders.
PtxasInfo resolve_bundled_ptxas(const BundledPtxas& bundled);

/// Every ptxas found: toolkit, Triton's, and each version under tools::tools_dir()/ptxas/.
std::vector<PtxasInfo> discover_ptxas();

/// What stands in for a Triton set's bundled ptxas that is not here, where a run needs
/// a ptxas of that set and not that exact binary (an amplified prebuilt image, an
/// amplified control): the newest discover_ptxas() finds, Triton's own aside, whose
/// release is at least the bundled one's (`bundled_version`: its banner or "12.8.93"),
/// since it reads the set's PTX and treats its wgmmas as the bundled one does. nullopt
/// when none is, or the bundled version is not known.
std::optional<PtxasInfo> ptxas_standing_in_for(std::string_view bundled_version);

}  // namespace lp::compile
