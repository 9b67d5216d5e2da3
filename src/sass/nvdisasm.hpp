#pragma once
// Finding and running nvdisasm (never through a shell: lp::run_process).
//
// Search order (the first that exists and answers --version wins):
//   1. the path the caller passes (`--nvdisasm PATH`); an unusable one is an error,
//      never silently replaced by another;
//   2. the CUDA toolkit: $CUDA_HOME/bin/nvdisasm, then /usr/local/cuda/bin/nvdisasm;
//   3. the project-local copy that scripts/install_tools.sh puts in
//      <tools dir>/nvdisasm/nvdisasm (PyPI nvidia-cuda-nvdisasm);
//   4. Triton's bundled one, <triton package>/backends/nvidia/bin/nvdisasm, where
//      python3 is asked once per process where the triton package lives.
//
// Output format: JSON (`-json`) when the nvdisasm is 13.5 or newer, text (`-c`)
// otherwise or when the JSON turns out malformed (see listing.hpp for why).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sass/listing.hpp"

#include "util/release.hpp"

namespace lp::sass {

/// Where to look for nvdisasm.
struct NvdisasmSearch {
  std::optional<std::string> path;  ///< explicit choice (`--nvdisasm PATH`)
  std::string tools_dir;             ///< project tools folder; empty: default_tools_dir()
  bool use_triton = true;            ///< fall back to Triton's bundled nvdisasm
  std::string python;                ///< interpreter asked where triton lives; empty: tools::python_interpreter()
};

/// An nvdisasm that was found and answered --version.
struct Nvdisasm {
  std::string path;
  std::string origin;        ///< "option", "CUDA_HOME", "python env <site-packages>", "/usr/local/cuda", "tools_dir", "triton"
  std::string version;       ///< "12.8.55"
  std::string version_line;  ///< "Cuda compilation tools, release 12.8, V12.8.55"
  std::string sha256;        ///< of the binary, for the report's environment block
  Release release;            ///< {12, 8, 55}
  /// True when its -json output can be trusted (13.5 and newer).
  [[nodiscard]] bool json_reliable() const noexcept { return release >= Release{13, 5, 0}; }
};

/// The project tools folder: $LP_TOOLS_DIR when set, else "<source tree>/.tools"
/// (the folder scripts/install_tools.sh fills; the source tree is baked in at build time).
std::string default_tools_dir();

/// Finds nvdisasm as described above. Throws lp::UsageError when an explicit path
/// is not a working nvdisasm, lp::EnvironmentError (listing every place looked
/// at) when none is found.
Nvdisasm find_nvdisasm(const NvdisasmSearch& search = {});

/// A parsed disassembly and how it was made.
struct Disassembly {
  Listing listing;
  std::string format;                 ///< "json" or "text"
  std::vector<std::string> warnings;  ///< nvdisasm's own warnings (stderr lines)
  std::string raw;                    ///< nvdisasm's output that was parsed
};

/// Disassembles `cubin` (the bytes of an ELF cubin, written to a private temporary
/// file) with `tool`. `name` names the cubin in errors. Throws lp::Error when
/// nvdisasm fails or times out, ListingError when its output cannot be parsed.
Disassembly disassemble(const Nvdisasm& tool, std::string_view cubin, std::string_view name,
                        std::chrono::milliseconds timeout = std::chrono::seconds(120));

/// Disassembles raw sm_90 instruction bytes (`nvdisasm -b ARCH`, ARCH "SM90" or
/// "SM90a"): the code of one or more functions laid end to end (batch.hpp), as
/// one listing whose addresses count from the first byte. No labels: branch
/// targets are the addresses nvdisasm computes. Throws like disassemble().
Disassembly disassemble_code(const Nvdisasm& tool, std::string_view code, const std::string& arch,
                             std::string_view name, std::chrono::milliseconds timeout = std::chrono::seconds(300));

}  // namespace lp::sass
