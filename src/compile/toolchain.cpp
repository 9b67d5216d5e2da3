#include "compile/toolchain.hpp"

#include "compile/compiler.hpp"

#include <cuda.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/json_bounded.hpp"
#include "util/json_out.hpp"
#include "util/release.hpp"
#include "util/sha256.hpp"
#include "util/subprocess.hpp"
#include "tools/tools.hpp"

namespace lp::compile {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

ProcessOptions quick() {
  ProcessOptions o;
  o.timeout = std::chrono::seconds(30);
  o.max_output = 1 << 20;
  o.environment = clean_environment();
  return o;
}

}  // namespace

PtxasInfo describe_found_ptxas(std::string spec, const std::string& path, std::optional<std::string> sha256) {
  PtxasInfo info;
  info.spec = std::move(spec);
  info.path = fs::absolute(path).lexically_normal().string();
  const ProcessResult r = run_process({info.path, "--version"}, quick());
  const std::optional<tools::ToolVersion> version = tools::parse_tool_version(r.out);
  info.version = version ? version->version : std::string();
  info.sha256 = sha256 ? std::move(*sha256) : sha256_file_hex(info.path);
  return info;
}

namespace {

/// Version folders under tools_dir()/ptxas, each with ptxas or bin/ptxas, sorted by version.
std::vector<std::pair<std::string, std::string>> installed_versions() {
  std::vector<std::pair<std::string, std::string>> found;
  const fs::path root = fs::path(tools::tools_dir()) / "ptxas";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return found;
  }
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    for (const char* rel : {"ptxas", "bin/ptxas"}) {
      const fs::path candidate = entry.path() / rel;
      if (fs::is_regular_file(candidate, ec) && ::access(candidate.c_str(), X_OK) == 0) {
        found.emplace_back(entry.path().filename().string(), candidate.string());
        break;
      }
    }
  }
  // Ordered as releases (13.10 after 13.9); a folder whose name is no release sorts first, by name.
  const auto key = [](const std::string& name) {
    return std::pair(parse_release(name, ReleaseParts::two_or_three), name);
  };
  std::sort(found.begin(), found.end(), [&](const auto& a, const auto& b) { return key(a.first) < key(b.first); });
  return found;
}

}  // namespace

json PtxasInfo::to_json() const {
  return {{"spec", spec},
          {"path", null_if_empty(path)},
          {"version", null_if_empty(version)},
          {"sha256", null_if_empty(sha256)}};
}

/// compiler.hpp's record: compile's JSON forms are written here, in one unit.
json CompilerRecord::to_json() const {
  return {{"name", compiler.to_string()},
          {"kind", compile::to_string(compiler.kind)},
          {"triton", triton ? json(*triton) : json()},
          {"ptxas", ptxas ? ptxas->to_json() : json()},
          {"version", version ? json(*version) : json()},
          {"options", options ? json(*options) : json()},
          {"error", null_if_empty(error)}};
}

ToolkitRecord toolkit_record() {
  ToolkitRecord record;
  record.build_version = fmt::format("{}.{}", CUDA_VERSION / 1000, (CUDA_VERSION % 1000) / 10);
  const std::optional<tools::ToolRoot> location = tools::toolkit_location();
  record.root = location ? std::optional<std::string>(location->root) : std::nullopt;
  record.origin = location ? std::optional<std::string>(location->origin) : std::nullopt;
  if (record.root) {
    const fs::path version_json = fs::path(*record.root) / "version.json";
    std::error_code ec;
    if (fs::is_regular_file(version_json, ec)) {
      // Unreadable or unexpected version.json: nvcc below says it.
      std::optional<json> v;
      try {
        v = try_parse_json_bounded(read_file(version_json.string(), 1 << 20), 8);
      } catch (const UsageError&) {  // read_file: cannot read it
      }
      const json* cuda = v && v->is_object() && v->contains("cuda") ? &(*v)["cuda"] : nullptr;
      if (cuda != nullptr && cuda->is_object() && cuda->contains("version") && (*cuda)["version"].is_string()) {
        record.version = (*cuda)["version"].get<std::string>();
      }
    }
    if (!record.version) {
      const fs::path nvcc = fs::path(*record.root) / "bin" / "nvcc";
      if (fs::is_regular_file(nvcc, ec)) {
        const auto v = tools::parse_tool_version(run_process({nvcc.string(), "--version"}, quick()).out);
        if (v) {
          record.version = v->version;
        }
      }
    }
  }
  return record;
}

JsonText ToolkitRecord::to_json_text() const {
  return JsonText::of({{"build_version", build_version},
                       {"root", null_if_absent(root)},
                       {"origin", null_if_absent(origin)},
                       {"version", null_if_absent(version)}});
}

JsonText PtxasInfo::to_json_text() const { return JsonText::of(to_json()); }

JsonText CompilerRecord::to_json_text() const { return JsonText::of(to_json()); }

JsonText BuildRecord::to_json_text() const {
  json j = {{"kind", to_string(kind)}, {"tool", tool}, {"version", version}};
  if (sha256) {
    j["sha256"] = *sha256;
  }
  if (options) {
    j["options"] = *options;
  }
  if (ms) {
    j["ms"] = *ms;
  }
  if (log) {
    j["log"] = *log;
  }
  if (amplified) {
    j["amplified"] = *amplified;
  }
  return JsonText::of(j);
}

BuildRecord BuildRecord::from_json(const JsonIn& j) {
  BuildRecord b;
  const JsonIn kind = j.at("kind");
  const std::string name = kind.string();
  bool known = false;
  for (const CompilerKind k : {CompilerKind::prebuilt, CompilerKind::driver, CompilerKind::ptxas, CompilerKind::file}) {
    if (name == to_string(k)) {
      b.kind = k;
      known = true;
    }
  }
  if (!known) {
    kind.fail(fmt::format("expected prebuilt, driver, ptxas or file, got {}", json_preview(kind.json())));
  }
  // Every sweep writes the tool and its version; a record without them reads as "".
  b.tool = j.optional_string("tool").value_or("");
  b.version = j.optional_string("version").value_or("");
  b.sha256 = j.optional_string("sha256");
  if (const auto v = j.find("options")) {
    b.options = v->strings();
  }
  b.ms = j.optional_number("ms");
  b.log = j.optional_string("log");
  if (const auto v = j.find("amplified")) {
    b.amplified = v->whole<int>(0);
  }
  return b;
}

std::optional<std::string> triton_bin_dir() {
  const std::string package = tools::triton_package_dir();
  if (package.empty()) {
    return std::nullopt;
  }
  const fs::path bin = fs::path(package) / "backends" / "nvidia" / "bin";
  std::error_code ec;
  return fs::is_directory(bin, ec) ? std::optional<std::string>(bin.string()) : std::nullopt;
}

PtxasInfo resolve_ptxas(const std::string& spec) {
  if (spec == "toolkit") {
    const std::optional<std::string> root = tools::toolkit_root();
    if (!root) {
      throw EnvironmentError("ptxas=toolkit: no CUDA toolkit found ($CUDA_HOME, $CUDA_PATH, a Python environment's "
                             "nvidia-cuda-nvcc wheel, /usr/local/cuda); pip install nvidia-cuda-nvcc");
    }
    return describe_found_ptxas(spec, *root + "/bin/ptxas");
  }
  if (spec == "triton") {
    const std::optional<std::string> bin = triton_bin_dir();
    if (!bin) {
      throw EnvironmentError("ptxas=triton: Triton is not installed for the python3 on PATH");
    }
    return describe_found_ptxas(spec, *bin + "/ptxas");
  }
  if (spec.find('/') != std::string::npos) {
    // A path runs only when this command line names it: never one from a document.
    tools::require_named_program(spec, "ptxas", "--ptxas");
    if (!find_executable(spec)) {
      throw UsageError(fmt::format("ptxas={}: no executable file at that path", spec));
    }
    // Checked as nvdisasm is: by what --version prints (/bin/sh, /bin/echo are no ptxas).
    PtxasInfo info = describe_found_ptxas(spec, spec);
    if (info.version.empty()) {
      throw UsageError(fmt::format("ptxas={}: `{} --version` does not print a CUDA tool version: not a ptxas", spec,
                                   spec));
    }
    return info;
  }
  // A version prefix ("13", "13.4") means the newest installed version it names.
  std::vector<std::string> available;
  std::optional<std::string> newest;
  for (const auto& [version, path] : installed_versions()) {
    if (version == spec || version.rfind(spec + ".", 0) == 0) {
      newest = path;
    }
    available.push_back(version);
  }
  if (newest) {
    return describe_found_ptxas(spec, *newest);
  }
  // A version that is not installed is the machine's gap (exit 3); anything else is a misspelt spec (exit 2).
  const std::string why = fmt::format("ptxas={}: not a path, 'toolkit', 'triton', or a version installed under {}/ptxas ({})",
                                      spec, tools::tools_dir(),
                                      available.empty() ? "none installed: run scripts/setup.sh"
                                                        : fmt::format("installed: {}", fmt::join(available, ", ")));
  if (!spec.empty() && spec.find_first_not_of("0123456789.") == std::string::npos) {
    throw EnvironmentError(why);
  }
  throw UsageError(why);
}

namespace {

/// A file or folder name a manifest may put into a path: no separator, no "..".
bool plain_name(const std::string& s) {
  return !s.empty() && s != "." && s != ".." && s.find('/') == std::string::npos && s.find('\0') == std::string::npos;
}

/// A relative path of plain names (a manifest's path_hint): it cannot leave the folder it is joined to.
bool plain_relative_path(const std::string& s) {
  if (s.empty() || s.front() == '/') {
    return false;
  }
  for (const fs::path& part : fs::path(s)) {
    if (!plain_name(part.string())) {
      return false;
    }
  }
  return true;
}

}  // namespace

PtxasInfo resolve_bundled_ptxas(const BundledPtxas& bundled) {
  // The manifest is a document: its names only select among binaries loraprobe finds
  // itself, and must not steer the search out of those folders.
  if (!plain_name(bundled.triton) || !plain_relative_path(bundled.path_hint)) {
    throw UsageError(fmt::format("ptxas=triton: the kernel set's manifest names its ptxas as Triton \"{}\", "
                                 "path_hint \"{}\": a version and a relative path inside the wheel are expected",
                                 bundled.triton, bundled.path_hint));
  }
  const std::string name = fs::path(bundled.path_hint).filename().string();
  std::vector<fs::path> candidates = {fs::path(tools::tools_dir()) / "triton-ptxas" / bundled.triton / name,
                                      fs::path(tools::tools_dir()) / "triton" / bundled.triton / bundled.path_hint};
  if (const std::optional<std::string> bin = triton_bin_dir()) {
    candidates.push_back(fs::path(*bin) / name);
  }
  if (const std::optional<tools::ToolVersion> v = tools::parse_tool_version(bundled.version);
      v && plain_name(v->version)) {
    candidates.push_back(fs::path(tools::tools_dir()) / "ptxas" / v->version / "ptxas");
  }
  std::vector<std::string> looked;
  for (const fs::path& candidate : candidates) {
    std::error_code ec;
    looked.push_back(candidate.string());
    if (!fs::is_regular_file(candidate, ec) || ::access(candidate.c_str(), X_OK) != 0) {
      continue;
    }
    // A 30-40 MB binary: hashed once, here (a sweep resolves one per Triton set).
    if (std::string sha = sha256_file_hex(candidate.string()); sha == bundled.sha256) {
      return describe_found_ptxas("triton", candidate.string(), std::move(sha));
    }
    looked.back() += " (another binary)";
  }
  throw EnvironmentError(fmt::format("ptxas=triton: the ptxas Triton {} bundles ({}, sha256 {}) is not here; looked in {}. "
                               "scripts/install_tools.sh triton-ptxas installs it",
                               bundled.triton, bundled.path_hint, bundled.sha256.substr(0, 12), fmt::join(looked, ", ")));
}

std::vector<PtxasInfo> discover_ptxas() {
  std::vector<PtxasInfo> found;
  if (tools::toolkit_root()) {
    found.push_back(resolve_ptxas("toolkit"));
  }
  if (triton_bin_dir()) {
    std::error_code ec;
    if (fs::is_regular_file(*triton_bin_dir() + "/ptxas", ec)) {
      found.push_back(resolve_ptxas("triton"));
    }
  }
  for (const auto& [version, path] : installed_versions()) {
    found.push_back(describe_found_ptxas(version, path));
  }
  return found;
}

std::optional<PtxasInfo> ptxas_standing_in_for(std::string_view bundled_version) {
  const std::optional<tools::ToolVersion> banner = tools::parse_tool_version(std::string(bundled_version));
  const std::optional<Release> floor = parse_release(banner ? std::string_view(banner->version) : bundled_version);
  if (!floor) {
    return std::nullopt;
  }
  std::optional<PtxasInfo> newest;
  std::optional<Release> newest_release;
  for (PtxasInfo& info : discover_ptxas()) {
    const std::optional<Release> v = parse_release(info.version);
    if (v && *v >= *floor && info.spec != "triton" && (!newest_release || *newest_release < *v)) {
      newest_release = v;
      newest = std::move(info);
    }
  }
  return newest;
}

}  // namespace lp::compile
