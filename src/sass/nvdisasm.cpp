#include "sass/nvdisasm.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"
#include "tools/tools.hpp"

namespace lp::sass {
namespace {

namespace fs = std::filesystem;

/// Runs `path --version`; nullopt when it does not run or does not look like nvdisasm.
std::optional<Nvdisasm> probe(const std::string& path, const std::string& origin) {
  if (!tools::is_executable_file(path)) {
    return std::nullopt;
  }
  ProcessOptions opts;
  opts.timeout = std::chrono::seconds(30);
  opts.environment = clean_environment();
  ProcessResult r;
  try {
    r = run_process({path, "--version"}, opts);
  } catch (const lp::Error&) {
    return std::nullopt;
  }
  const std::optional<tools::ToolVersion> version = tools::parse_tool_version(r.out);
  if (!r.ok() || r.out.find("nvdisasm") == std::string::npos || !version) {
    return std::nullopt;
  }
  Nvdisasm tool;
  tool.path = fs::absolute(path).string();
  tool.origin = origin;
  tool.release = version->release;
  tool.version = version->version;
  tool.version_line = version->line;
  tool.sha256 = sha256_file_hex(path);
  return tool;
}

std::vector<std::string> warning_lines(const std::string& err) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < err.size()) {
    std::size_t nl = err.find('\n', pos);
    std::string line = err.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
    pos = nl == std::string::npos ? err.size() : nl + 1;
    if (!line.empty()) {
      out.push_back(line);
    }
  }
  return out;
}

}  // namespace

std::string default_tools_dir() { return tools::tools_dir(); }

Nvdisasm find_nvdisasm(const NvdisasmSearch& search) {
  if (search.path) {
    // A path runs only when this command line names it (a journal's --nvdisasm does not).
    tools::require_named_program(*search.path, "--nvdisasm", "--nvdisasm");
    if (auto tool = probe(*search.path, "option")) {
      return *tool;
    }
    throw lp::UsageError("--nvdisasm " + *search.path + ": not an executable nvdisasm (its --version failed)");
  }
  std::vector<std::pair<std::string, std::string>> candidates;
  if (const char* home = std::getenv("CUDA_HOME"); home != nullptr && *home != '\0') {
    candidates.emplace_back(std::string(home) + "/bin/nvdisasm", "CUDA_HOME");
  }
  // The nvidia-cuda-nvdisasm wheel of the Python environment loraprobe was installed in.
  for (const tools::ToolRoot& root : tools::python_nvidia_roots("bin/nvdisasm")) {
    candidates.emplace_back(root.root + "/bin/nvdisasm", root.origin);
  }
  candidates.emplace_back("/usr/local/cuda/bin/nvdisasm", "/usr/local/cuda");
  const std::string tools = search.tools_dir.empty() ? default_tools_dir() : search.tools_dir;
  candidates.emplace_back(tools + "/nvdisasm/nvdisasm", "tools_dir");
  for (const auto& [path, origin] : candidates) {
    if (auto tool = probe(path, origin)) {
      return *tool;
    }
  }
  std::vector<std::string> looked_at;
  for (const auto& c : candidates) {
    looked_at.push_back(c.first);
  }
  if (search.use_triton) {
    const std::string dir = tools::triton_package_dir(search.python);
    if (!dir.empty()) {
      const std::string path = dir + "/backends/nvidia/bin/nvdisasm";
      if (auto tool = probe(path, "triton")) {
        return *tool;
      }
      looked_at.push_back(path);
    } else {
      looked_at.push_back("Triton's (" + (search.python.empty() ? tools::python_interpreter() : search.python) +
                          " finds no triton package)");
    }
  }
  throw lp::EnvironmentError(fmt::format(
      "no nvdisasm found (looked at {}); run scripts/install_tools.sh nvdisasm or pass --nvdisasm PATH",
      fmt::join(looked_at, ", ")));
}

namespace {

/// nvdisasm `args...` on `path`: JSON when this nvdisasm prints it faithfully, else
/// (or when it turns out malformed) text.
Disassembly run_and_parse(const Nvdisasm& tool, const std::vector<std::string>& args, const std::string& path,
                          std::string_view name, std::chrono::milliseconds timeout) {
  ProcessOptions opts;
  opts.timeout = timeout;
  opts.environment = clean_environment();
  auto run = [&](const std::string& flag) {
    std::vector<std::string> argv = {tool.path, flag};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.push_back(path);
    ProcessResult r = run_process(argv, opts);
    if (!r.ok()) {
      throw lp::Error("nvdisasm " + flag + " on " + std::string(name) + " failed (" + r.describe() +
                      "): " + r.err.substr(0, 2000));
    }
    if (r.out_truncated) {
      throw lp::Error("nvdisasm output for " + std::string(name) + " exceeded the output cap");
    }
    return r;
  };
  Disassembly d;
  if (tool.json_reliable()) {
    ProcessResult r = run("-json");
    try {
      d.listing = parse_json_listing(r.out, name);
      d.format = "json";
      d.warnings = warning_lines(r.err);
      d.raw = std::move(r.out);
      return d;
    } catch (const UnreliableJsonError& e) {
      d.warnings.push_back(std::string("JSON output unusable, fell back to text: ") + e.what());
    }
  }
  ProcessResult r = run("-c");
  d.listing = parse_text_listing(r.out, name);
  d.format = "text";
  for (auto& w : warning_lines(r.err)) {
    d.warnings.push_back(std::move(w));
  }
  d.raw = std::move(r.out);
  return d;
}

}  // namespace

Disassembly disassemble(const Nvdisasm& tool, std::string_view cubin, std::string_view name,
                        std::chrono::milliseconds timeout) {
  const TempDir dir("loraprobe-nvdisasm-");
  return run_and_parse(tool, {}, dir.write("kernel.cubin", cubin), name, timeout);
}

Disassembly disassemble_code(const Nvdisasm& tool, std::string_view code, const std::string& arch,
                             std::string_view name, std::chrono::milliseconds timeout) {
  const TempDir dir("loraprobe-nvdisasm-");
  return run_and_parse(tool, {"-b", arch}, dir.write("code.bin", code), name, timeout);
}

}  // namespace lp::sass
