#pragma once
// Where the NVIDIA command-line tools live and what they say of themselves:
// the CUDA toolkit, the nvidia-* wheels of a Python environment (nvidia/*/bin, what
// `pip install loraprobe[ptxas]` brings), the project-local .tools/ folder that
// scripts/install_tools.sh fills from PyPI, and Triton's bundled binaries. Shared by compile/ (ptxas) and
// sass/ (nvdisasm), so both look in the same places in the same order.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/release.hpp"

namespace lp::tools {

/// This process's executable (/proc/self/exe), nullopt when it cannot be read. Its
/// folder's parent is the prefix of the environment pip installed it in.
std::optional<std::string> executable_path();

/// The project tools folder: $LP_TOOLS_DIR when set, else "<source tree>/.tools"
/// (baked in at build time: the folder scripts/install_tools.sh fills); a build
/// without a source tree (the pip wheel) says <prefix>/share/loraprobe/tools.
std::string tools_dir();

/// A folder holding CUDA tools, and where it was found.
struct ToolRoot {
  std::string root;    ///< has bin/ptxas (or bin/nvdisasm)
  std::string origin;  ///< "CUDA_HOME", "CUDA_PATH", "python env <site-packages>", "/usr/local/cuda"
};

/// The site-packages folders of the Python environments loraprobe belongs to, in
/// search order: the one holding this executable (pip puts it in <prefix>/bin), then
/// those of the python3 on PATH (site.getsitepackages(), then the user's). Existing
/// folders only, each once; asked once per process.
const std::vector<std::string>& python_site_dirs();

/// <prefix>/lib*/python3*/{site,dist}-packages, sorted: the folders of the environment
/// whose bin/ holds an executable at <prefix>/bin.
std::vector<std::string> site_dirs_of_prefix(const std::string& prefix);

/// The roots <site>/nvidia/<package> (nvidia/cu13, nvidia/cuda_nvcc, ...) whose
/// `relative` file exists ("bin/ptxas", "lib/libcublas.so.13"), in `sites` order, then
/// by name; origin "python env <site>".
std::vector<ToolRoot> nvidia_roots_in(const std::vector<std::string>& sites, std::string_view relative);
/// nvidia_roots_in(python_site_dirs(), relative).
std::vector<ToolRoot> python_nvidia_roots(std::string_view relative);

/// The CUDA toolkit whose ptxas `--ptxas toolkit` means, the first with bin/ptxas of:
/// $CUDA_HOME, $CUDA_PATH, a Python environment's nvidia-cuda-nvcc wheel
/// (python_nvidia_roots), /usr/local/cuda. nullopt when none has one.
std::optional<ToolRoot> toolkit_location();
/// toolkit_location()'s root.
std::optional<std::string> toolkit_root();

/// The Python whose Triton loraprobe uses: the python3 beside this executable when
/// there is one (pip put loraprobe in that environment's bin/, with its Triton, even
/// when the environment is not activated), else the python3 on PATH.
std::string python_interpreter();

/// The folder of the triton package the interpreter `python` imports ("" when none;
/// an empty `python` is python_interpreter()), found without importing triton,
/// asked once per interpreter per process.
std::string triton_package_dir(const std::string& python = "");

/// What `<tool> --version` printed, parsed.
struct ToolVersion {
  Release release;      ///< {13, 0, 88}; {13, 0, 0} when no build number
  std::string version;  ///< "13.0.88" (from "V13.0.88"), or "13.0" when no build number
  std::string line;     ///< the whole line: "Cuda compilation tools, release 13.0, V13.0.88"
};

/// Parses "release X.Y, VX.Y.Z" out of a CUDA tool's --version output.
std::optional<ToolVersion> parse_tool_version(const std::string& version_output);

/// True when `path` is a regular file we may execute.
bool is_executable_file(const std::string& path);

// Which programs given by path may run. A report, journal, config, cache entry or
// kernel dir may come from someone else, so a ptxas or nvdisasm *path* runs only
// when the user named that path on this command line (--ptxas, --compiler
// ptxas=PATH, --nvdisasm). What loraprobe finds itself (the toolkit's, .tools/, the
// python3's Triton, a bundled ptxas matched by its sha256) is not given by path and
// is not restricted. main() turns the restriction on for every command; code that
// runs outside main (library tests) is unrestricted.

/// Restricts program paths to `named` (each compared after canonicalisation).
void restrict_program_paths(const std::vector<std::string>& named);

/// Adds `path` to the programs that may run under restrict_program_paths: a binary
/// loraprobe found itself, not one a document named (check: the ptxas inside the
/// Triton of the interpreter the user named, or the one their TRITON_PTXAS_PATH names).
void allow_found_program(const std::string& path);

/// Throws lp::UsageError "<what> <path>: ... add <flag> <path>" when paths are
/// restricted and `path` is not one the command line named.
void require_named_program(const std::string& path, std::string_view what, std::string_view flag);

}  // namespace lp::tools
