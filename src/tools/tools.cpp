#include "tools/tools.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/text.hpp"
#include "util/subprocess.hpp"

#ifndef LP_TOOLS_DIR_DEFAULT
#error "LP_TOOLS_DIR_DEFAULT must be defined (src/tools/CMakeLists.txt)"
#endif

namespace lp::tools {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

std::optional<std::string> executable_path() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::nullopt : std::optional<std::string>(exe.string());
}

namespace {

/// <prefix> of the environment whose bin/ holds this executable.
std::optional<fs::path> executable_prefix() {
  const std::optional<std::string> exe = executable_path();
  return exe ? std::optional<fs::path>(fs::path(*exe).parent_path().parent_path()) : std::nullopt;
}

}  // namespace

std::string tools_dir() {
  if (auto dir = env("LP_TOOLS_DIR")) {
    return *dir;
  }
  if (const std::string_view baked = LP_TOOLS_DIR_DEFAULT; !baked.empty()) {
    return std::string(baked);
  }
  // A build without a source tree (the wheel): <prefix>/share/loraprobe/tools of the
  // environment whose bin/ holds this executable.
  return (executable_prefix().value_or("/usr/local") / "share" / "loraprobe" / "tools").string();
}

bool is_executable_file(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

std::vector<std::string> site_dirs_of_prefix(const std::string& prefix_text) {
  const fs::path prefix(prefix_text);
  std::vector<std::string> found;
  std::error_code ec;
  for (const char* lib : {"lib", "lib64"}) {
    const fs::path dir = prefix / lib;
    if (!fs::is_directory(dir, ec)) {
      continue;
    }
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (!entry.path().filename().string().starts_with("python3")) {
        continue;
      }
      for (const char* sub : {"site-packages", "dist-packages"}) {
        if (fs::is_directory(entry.path() / sub, ec)) {
          found.push_back((entry.path() / sub).string());
        }
      }
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

namespace {

std::vector<std::string> site_dirs_of_python3() {
  std::vector<std::string> found;
  try {
    ProcessOptions opts;
    opts.timeout = std::chrono::seconds(60);
    const ProcessResult r = run_process({"python3", "-c",
                                         "import site\n"
                                         "for d in site.getsitepackages() + [site.getusersitepackages()]: print(d)\n"},
                                        opts);
    if (r.ok()) {
      for (const std::string_view line : split(r.out, '\n')) {
        if (!trim(line).empty()) {
          found.emplace_back(trim(line));
        }
      }
    }
  } catch (const lp::Error&) {
    // No python3: no environment of its to look in.
  }
  return found;
}

}  // namespace

const std::vector<std::string>& python_site_dirs() {
  static const std::vector<std::string> dirs = [] {
    std::vector<std::string> candidates;
    if (const std::optional<fs::path> prefix = executable_prefix()) {
      candidates = site_dirs_of_prefix(prefix->string());
    }
    for (std::string& dir : site_dirs_of_python3()) {
      candidates.push_back(std::move(dir));
    }
    std::vector<std::string> unique;
    std::set<std::string> seen;
    for (const std::string& dir : candidates) {
      std::error_code dir_ec;
      const fs::path canonical = fs::canonical(dir, dir_ec);
      if (!dir_ec && fs::is_directory(canonical, dir_ec) && seen.insert(canonical.string()).second) {
        unique.push_back(canonical.string());
      }
    }
    return unique;
  }();
  return dirs;
}

std::vector<ToolRoot> python_nvidia_roots(std::string_view relative) {
  return nvidia_roots_in(python_site_dirs(), relative);
}

std::vector<ToolRoot> nvidia_roots_in(const std::vector<std::string>& sites, std::string_view relative) {
  std::vector<ToolRoot> found;
  for (const std::string& site : sites) {
    const fs::path nvidia = fs::path(site) / "nvidia";
    std::error_code ec;
    if (!fs::is_directory(nvidia, ec)) {
      continue;
    }
    std::vector<fs::path> packages;
    for (const auto& entry : fs::directory_iterator(nvidia, ec)) {
      if (fs::is_regular_file(entry.path() / relative, ec)) {
        packages.push_back(entry.path());
      }
    }
    std::sort(packages.begin(), packages.end());
    for (const fs::path& package : packages) {
      found.push_back({package.string(), "python env " + site});
    }
  }
  return found;
}

std::optional<ToolRoot> toolkit_location() {
  std::vector<ToolRoot> candidates;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto v = env(var)) {
      candidates.push_back({*v, var});
    }
  }
  for (ToolRoot& root : python_nvidia_roots("bin/ptxas")) {
    candidates.push_back(std::move(root));
  }
  candidates.push_back({"/usr/local/cuda", "/usr/local/cuda"});
  for (const ToolRoot& candidate : candidates) {
    if (is_executable_file(candidate.root + "/bin/ptxas")) {
      std::error_code ec;
      const fs::path canonical = fs::canonical(candidate.root, ec);
      return ToolRoot{ec ? candidate.root : canonical.string(), candidate.origin};
    }
  }
  return std::nullopt;
}

std::optional<std::string> toolkit_root() {
  std::optional<ToolRoot> location = toolkit_location();
  return location ? std::optional<std::string>(std::move(location->root)) : std::nullopt;
}

std::string python_interpreter() {
  if (const std::optional<std::string> exe = executable_path()) {
    const std::string beside = (fs::path(*exe).parent_path() / "python3").string();
    if (is_executable_file(beside)) {
      return beside;
    }
  }
  return "python3";
}

std::string triton_package_dir(const std::string& python_or_default) {
  const std::string python = python_or_default.empty() ? python_interpreter() : python_or_default;
  static std::mutex mutex;
  static std::map<std::string, std::string> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(python); it != cache.end()) {
    return it->second;
  }
  std::string dir;
  try {
    ProcessOptions opts;
    opts.timeout = std::chrono::seconds(60);
    // find_spec locates the package without importing it (importing triton takes seconds).
    const ProcessResult r = run_process({python, "-c",
                                         "import importlib.util, os\n"
                                         "s = importlib.util.find_spec('triton')\n"
                                         "print(os.path.dirname(s.origin) if s and s.origin else '')\n"},
                                        opts);
    if (r.ok()) {
      dir = r.out.substr(0, r.out.find('\n'));
    }
  } catch (const lp::Error&) {
    // No python: there is no Triton to fall back on.
  }
  cache[python] = dir;
  return dir;
}

std::optional<ToolVersion> parse_tool_version(const std::string& version_output) {
  static const std::regex k_release(R"(release (\d+)\.(\d+)(?:, V([0-9.]+))?)");
  std::smatch m;
  if (!std::regex_search(version_output, m, k_release)) {
    return std::nullopt;
  }
  ToolVersion v;
  v.version = m[3].matched ? m[3].str() : m[1].str() + "." + m[2].str();
  const std::optional<Release> release = parse_release(v.version, ReleaseParts::two_or_three);
  const std::optional<Release> named = parse_release(m[1].str() + "." + m[2].str(), ReleaseParts::two_or_three);
  if (!release || !named || release->major != named->major || release->minor != named->minor) {
    return std::nullopt;  // too many digits, or a build number of another release: no CUDA tool's words
  }
  v.release = *release;
  const std::size_t begin = version_output.rfind('\n', static_cast<std::size_t>(m.position(0)));
  const std::size_t start = begin == std::string::npos ? 0 : begin + 1;
  const std::size_t end = version_output.find('\n', static_cast<std::size_t>(m.position(0)));
  v.line = version_output.substr(start, end == std::string::npos ? std::string::npos : end - start);
  return v;
}

namespace {

struct ProgramPolicy {
  std::mutex mutex;
  bool restricted = false;
  std::set<std::string> named;
};

ProgramPolicy& program_policy() {
  static ProgramPolicy policy;
  return policy;
}

std::string canonical_or_absolute(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(path, ec);
  if (ec) {
    p = fs::absolute(path, ec).lexically_normal();
  }
  return p.string();
}

}  // namespace

void restrict_program_paths(const std::vector<std::string>& named) {
  ProgramPolicy& policy = program_policy();
  std::lock_guard lock(policy.mutex);
  policy.restricted = true;
  policy.named.clear();
  for (const std::string& path : named) {
    policy.named.insert(canonical_or_absolute(path));
  }
}

void allow_found_program(const std::string& path) {
  ProgramPolicy& policy = program_policy();
  std::lock_guard lock(policy.mutex);
  policy.named.insert(canonical_or_absolute(path));
}

void require_named_program(const std::string& path, std::string_view what, std::string_view flag) {
  ProgramPolicy& policy = program_policy();
  std::lock_guard lock(policy.mutex);
  if (!policy.restricted || policy.named.count(canonical_or_absolute(path)) > 0) {
    return;
  }
  throw UsageError(fmt::format("{} {}: not named on this command line, so not run: loraprobe runs a program given "
                               "by path only when you name it (a report, journal, config or kernel dir may come "
                               "from someone else); add {} {} if you trust it",
                               what, path, flag, path));
}

}  // namespace lp::tools
