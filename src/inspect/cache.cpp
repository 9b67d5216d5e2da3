#include "inspect/cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sass/checks.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/json_bounded.hpp"
#include "util/sha256.hpp"

namespace lp::inspect {

namespace fs = std::filesystem;

namespace {

/// Entries are a few kilobytes; anything much larger is not ours.
constexpr std::uintmax_t k_max_entry_bytes = std::uintmax_t{64} << 20;
/// A CubinReport nests 6 deep (entry, payload, kernels, kernel, findings, finding, wgmma).
constexpr std::size_t k_max_entry_depth = 12;
/// The envelope's format: entries of another (the bare payloads of format 1) are misses.
constexpr int k_entry_format = 2;

/// j[key] when j is an object that has it, else null: a look that never throws, whatever
/// an entry holds (nlohmann's value() throws on a member of another type).
const nlohmann::json& member_of(const nlohmann::json& j, const char* key) {
  static const nlohmann::json k_null;
  if (!j.is_object()) {
    return k_null;
  }
  const auto it = j.find(key);
  return it == j.end() ? k_null : *it;
}

bool is_sha256_hex(const nlohmann::json& j) {
  if (!j.is_string() || j.get_ref<const std::string&>().size() != 64) {
    return false;
  }
  const std::string& s = j.get_ref<const std::string&>();
  return s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

/// A ptxas/ payload read typed: {cubin_sha256, cubin_bytes, ms, log}, exactly.
std::optional<CompiledPtx> compiled_from_json(const nlohmann::json& payload) {
  if (!payload.is_object() || payload.size() != 4 || !is_sha256_hex(payload.value("cubin_sha256", nlohmann::json())) ||
      !payload.contains("cubin_bytes") || !payload["cubin_bytes"].is_number_unsigned() || !payload.contains("ms") ||
      !payload["ms"].is_number() || !payload.contains("log") || !payload["log"].is_string()) {
    return std::nullopt;
  }
  return CompiledPtx{payload["cubin_sha256"].get<std::string>(), payload["cubin_bytes"].get<std::size_t>(),
                     payload["ms"].get<double>(), payload["log"].get<std::string>()};
}

nlohmann::json compiled_to_json(const CompiledPtx& c) {
  return {{"cubin_sha256", c.cubin_sha256}, {"cubin_bytes", c.cubin_bytes}, {"ms", c.ms}, {"log", c.log}};
}

/// The payload of the entry `text` when its envelope is whole (see cache.hpp), is entry
/// `key` of `kind` and describes the cubin `cubin_sha256` (empty: any); else nullopt.
std::optional<nlohmann::json> payload_of(std::string_view text, std::string_view kind, const std::string& key,
                                         std::string_view cubin_sha256) {
  std::optional<nlohmann::json> entry = try_parse_json_bounded(text, k_max_entry_depth);
  // Each member compared as JSON: one of another type is simply not equal (a miss).
  if (!entry || !entry->is_object() || entry->size() != 6 || member_of(*entry, "format") != k_entry_format ||
      member_of(*entry, "kind") != nlohmann::json(kind) || member_of(*entry, "key") != nlohmann::json(key) || !entry->contains("payload") ||
      !is_sha256_hex(member_of(*entry, "payload_sha256")) || !is_sha256_hex(member_of(*entry, "cubin_sha256"))) {
    return std::nullopt;
  }
  nlohmann::json& payload = (*entry)["payload"];
  const std::string cubin = (*entry)["cubin_sha256"].get<std::string>();
  if (sha256_hex(payload.dump()) != (*entry)["payload_sha256"].get<std::string>() ||
      (!cubin_sha256.empty() && cubin != cubin_sha256) || member_of(payload, "cubin_sha256") != nlohmann::json(cubin)) {
    return std::nullopt;
  }
  return std::move(payload);
}

/// The text of the file at `path` when there is one (`present`) and it can be read
/// within the bound; nullopt otherwise.
std::optional<std::string> entry_text(const std::string& path, bool& present) {
  std::error_code ec;
  present = fs::exists(path, ec);
  if (!present) {
    return std::nullopt;
  }
  try {
    return read_file(path, k_max_entry_bytes);  // refuses a FIFO or a device there, and a file too large
  } catch (const UsageError&) {
    return std::nullopt;
  }
}

/// Version of how lp_inspect compiles (compile::compile_with_ptxas, started in an
/// empty folder) and what a ptxas/ record holds; part of every compile key, so a
/// change to either never serves a record made the old way.
constexpr int k_compile_record_version = 1;

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && *value != '\0' ? std::optional<std::string>(value) : std::nullopt;
}

/// sha256 of the parts joined by a separator that cannot occur in any of them
/// (hex digests, check ids, command-line options never hold a NUL).
std::string hash_parts(std::initializer_list<std::string_view> parts) {
  std::string joined;
  for (std::string_view part : parts) {
    joined.append(part);
    joined.push_back('\0');
  }
  return sha256_hex(joined);
}

/// Writes `contents` to a fresh temporary file in `dir` and renames it to `path`.
/// Unlike util's write_file_atomic this does not fsync: a cache entry lost in a
/// crash is only a miss, and thousands of fsyncs would cost more than they save.
std::optional<std::string> write_entry(const fs::path& path, const std::string& contents) {
  std::string tmpl = (path.parent_path() / fmt::format(".{}.XXXXXX", path.filename().string())).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    return fmt::format("{}: cannot create a temporary file: {}", path.string(), std::strerror(errno));
  }
  if (!write_all(fd, contents)) {
    const int saved = errno;
    ::close(fd);
    ::unlink(tmpl.c_str());
    return fmt::format("{}: write failed: {}", path.string(), std::strerror(saved));
  }
  ::fchmod(fd, 0644);
  if (::close(fd) != 0 || ::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmpl.c_str());
    return fmt::format("{}: cannot write: {}", path.string(), std::strerror(saved));
  }
  return std::nullopt;
}

/// Writes `payload` (the JSON form of its kind, with its cubin_sha256) as entry `key`
/// of `kind` under `cache`, in its envelope, atomically.
std::optional<std::string> store(const ResultCache& cache, std::string_view kind, const std::string& key,
                                 const nlohmann::json& payload) {
  const fs::path path = cache.path_of(kind, key);
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) {
    return fmt::format("{}: cannot create: {}", path.parent_path().string(), ec.message());
  }
  const nlohmann::json entry = {{"format", k_entry_format},
                                {"kind", kind},
                                {"key", key},
                                {"cubin_sha256", payload.value("cubin_sha256", "")},
                                {"payload_sha256", sha256_hex(payload.dump())},
                                {"payload", payload}};
  return write_entry(path, entry.dump());
}

}  // namespace

std::optional<std::string> default_cache_root() {
  // The XDG spec says a relative XDG_CACHE_HOME is invalid and must be ignored.
  if (auto xdg = env("XDG_CACHE_HOME"); xdg && fs::path(*xdg).is_absolute()) {
    return (fs::path(*xdg) / "loraprobe").string();
  }
  if (auto home = env("HOME")) {
    return (fs::path(*home) / ".cache" / "loraprobe").string();
  }
  return std::nullopt;
}

std::string analysis_fingerprint(const sass::AnalysisOptions& options) {
  std::string text = fmt::format("lp_sass analysis v{}\n", sass::k_analysis_version);
  for (const sass::Check& check : sass::all_checks()) {
    text += fmt::format("check {}: {}\n", check.id, check.description);
  }
  text += fmt::format("check {}: {}\n", sass::k_early_read_id, sass::k_early_read_description);
  text += "selected:";
  if (options.checks.empty()) {
    text += " all";
  }
  for (const std::string& id : options.checks) {
    if (id != sass::k_early_read_id) {
      (void)sass::require_check(id);
    }
    text += fmt::format(" {}", id);
  }
  return sha256_hex(text);
}

std::string sass_cache_key(std::string_view cubin_sha256, std::string_view nvdisasm_sha256,
                           std::string_view fingerprint) {
  return hash_parts({"sass", cubin_sha256, nvdisasm_sha256, fingerprint});
}

std::string compile_cache_key(std::string_view ptx_sha256, std::string_view ptxas_sha256,
                              const std::vector<std::string>& options) {
  std::string joined_options;
  for (const std::string& option : options) {
    joined_options += option + "\n";
  }
  const std::string version = std::to_string(k_compile_record_version);
  return hash_parts({"ptxas", version, ptx_sha256, ptxas_sha256, joined_options});
}

std::string ResultCache::path_of(std::string_view kind, const std::string& key) const {
  return (fs::path(m_root) / kind / key.substr(0, 2) / (key + ".json")).string();
}

LoadedEntry<sass::CubinReport> report_entry(std::string_view text, const std::string& key,
                                            std::string_view cubin_sha256) {
  LoadedEntry<sass::CubinReport> out;
  if (std::optional<nlohmann::json> payload = payload_of(text, "sass", key, cubin_sha256)) {
    out.payload = sass::cubin_report_from_json(*payload);
  }
  out.rejected = !out.payload;
  return out;
}

LoadedEntry<CompiledPtx> compile_entry(std::string_view text, const std::string& key) {
  LoadedEntry<CompiledPtx> out;
  if (std::optional<nlohmann::json> payload = payload_of(text, "ptxas", key, {})) {
    out.payload = compiled_from_json(*payload);
  }
  out.rejected = !out.payload;
  return out;
}

LoadedEntry<sass::CubinReport> ResultCache::load_report(const std::string& key, std::string_view cubin_sha256) const {
  bool present = false;
  const std::optional<std::string> text = entry_text(path_of("sass", key), present);
  if (!present) {
    return {};
  }
  return text ? report_entry(*text, key, cubin_sha256) : LoadedEntry<sass::CubinReport>{std::nullopt, true};
}

LoadedEntry<CompiledPtx> ResultCache::load_compile(const std::string& key) const {
  bool present = false;
  const std::optional<std::string> text = entry_text(path_of("ptxas", key), present);
  if (!present) {
    return {};
  }
  return text ? compile_entry(*text, key) : LoadedEntry<CompiledPtx>{std::nullopt, true};
}

std::optional<std::string> ResultCache::store_report(const std::string& key, const sass::CubinReport& report) const {
  return store(*this, "sass", key, report);
}

std::optional<std::string> ResultCache::store_compile(const std::string& key, const CompiledPtx& compiled) const {
  return store(*this, "ptxas", key, compiled_to_json(compiled));
}

}  // namespace lp::inspect
