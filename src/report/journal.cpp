#include "report/journal.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <array>
#include <cstring>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/json_bounded.hpp"

namespace lp::report {

using nlohmann::json;

namespace {

/// A journal line is a case record or a header: a few levels; 64 is far beyond them.
constexpr std::size_t k_max_journal_depth = 64;

/// Longest journal line accepted: a case record is a few KB; a line past this is no journal.
constexpr std::size_t k_max_journal_line = std::size_t{16} << 20;

/// "<path>:<line>: <message>", exit 2.
[[noreturn]] void bad_line(const std::string& path, std::size_t number, const std::string& message) {
  throw InputError(fmt::format("{}:{}", path, number), "", message);
}

/// "<what> is malformed: <pointer>: <message>" for a record a line holds.
std::string malformed(const std::string& what, const InputError& e) {
  return fmt::format("{} is malformed: {}{}", what, e.pointer().empty() ? "" : e.pointer() + ": ", e.message());
}

/// Checks that `entry[key]` exists and has the JSON type `want` names.
void require(const std::string& path, std::size_t number, const json& entry, const char* key, json::value_t want,
             const char* want_name) {
  const auto it = entry.find(key);
  if (it == entry.end()) {
    bad_line(path, number, fmt::format("missing \"{}\"", key));
  }
  if (it->type() != want) {
    bad_line(path, number, fmt::format("\"{}\" is {}, expected {}", key, it->type_name(), want_name));
  }
}

/// Calls `line(number, text, last_without_newline)` for each line of `path` until it
/// returns false, read in bounded chunks (util/files.hpp: a FIFO, a device or a folder
/// is refused before it is opened); a line past k_max_journal_line is no journal's.
template <typename F>
void for_each_line(const std::string& path, F&& line) {
  std::string pending;
  std::size_t number = 0;
  bool stopped = false;
  read_file_chunks(path, std::numeric_limits<std::size_t>::max(), [&](std::string_view chunk) {
    pending.append(chunk);
    std::size_t start = 0;
    for (std::size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      if (!line(++number, std::string_view(pending).substr(start, nl - start), false)) {
        stopped = true;
        return false;
      }
      start = nl + 1;
    }
    pending.erase(0, start);
    if (pending.size() > k_max_journal_line) {
      bad_line(path, number + 1, fmt::format("longer than {} bytes without a newline: not a loraprobe journal",
                                              k_max_journal_line));
    }
    return true;
  });
  if (!stopped && !pending.empty()) {
    line(++number, std::string_view(pending), true);  // no newline: torn by a crash, or the last line
  }
}

}  // namespace

json JournalHeader::to_json() const {
  json sets = json::array();
  for (const KernelSetRecord& s : kernel_sets) {
    sets.push_back(s.to_json());
  }
  return {{"schema_version", schema_version},
          {"version", version},
          {"git_sha", git_sha},
          {"kernel_sets", std::move(sets)},
          {"fail_on", fail_on},
          {"config_sha256", config_sha256},
          {"plan_sha256", plan_sha256},
          {"argv", argv},
          {"started_at", started_at},
          {"cases", cases},
          {"shard", shard ? shard_to_json(*shard) : json()}};
}

JournalHeader JournalHeader::from_json(const JsonIn& j) {
  JournalHeader h;
  const auto text = [&](const char* key) { return j.find(key) ? j.at(key).string() : std::string(); };
  h.schema_version = text("schema_version");
  h.version = text("version");
  h.git_sha = text("git_sha");
  if (const auto sets = j.find("kernel_sets")) {
    for (const JsonIn& s : sets->items()) {
      h.kernel_sets.push_back(KernelSetRecord::from_json(s));
    }
  }
  if (const auto fail_on = j.find("fail_on")) {
    h.fail_on = fail_on->strings();
  }
  h.config_sha256 = j.at("config_sha256").string();
  h.plan_sha256 = j.at("plan_sha256").string();
  if (const auto argv = j.find("argv")) {
    h.argv = argv->strings();
  }
  h.started_at = text("started_at");
  if (const auto cases = j.find("cases")) {
    h.cases = cases->count();
  }
  if (const auto shard = j.find("shard")) {
    h.shard = shard_from_json(*shard);
  }
  return h;
}

namespace {

/// read_journal, or its header alone (`header_only`: the lines after it are not read).
JournalContents read(const std::string& path, bool header_only) {
  JournalContents contents;
  bool torn = false;
  bool seen_header = false;
  for_each_line(path, [&](std::size_t number, std::string_view line, bool last_without_newline) {
    if (torn) {
      // Only the last line may be torn: a bad line followed by more is corruption.
      bad_line(path, number - 1, "not JSON, and more lines follow it");
    }
    if (line.empty()) {
      return true;
    }
    std::optional<json> parsed = try_parse_json_bounded(line, k_max_journal_depth);
    json entry = parsed ? std::move(*parsed) : json(json::value_t::discarded);
    if (entry.is_discarded()) {
      if (number == 1) {
        bad_line(path, number, "not JSON: not a loraprobe journal");
      }
      torn = true;  // acceptable only as the last line
      static_cast<void>(last_without_newline);
      return true;
    }
    if (!entry.is_object()) {
      bad_line(path, number, fmt::format("a journal line is a JSON object, got {}", entry.type_name()));
    }
    require(path, number, entry, "type", json::value_t::string, "a string");
    const std::string type = entry.at("type").get<std::string>();
    if (number == 1) {
      if (type != "header") {
        bad_line(path, number, fmt::format("the first line is a \"{}\" entry, not a loraprobe journal header", type));
      }
      try {
        contents.header = JournalHeader::from_json(JsonIn(entry, path));
      } catch (const InputError& e) {  // a missing, mistyped or out-of-range field
        bad_line(path, number, malformed("the header", e));
      }
      seen_header = true;
      return !header_only;
    }
    if (type == "controls") {
      require(path, number, entry, "controls", json::value_t::object, "an object");
      try {
        contents.controls = Controls::from_json(JsonIn(entry["controls"], path, "/controls"));
      } catch (const InputError& e) {
        bad_line(path, number, malformed("the controls record", e));
      }
    } else if (type == "case" || type == "remedy") {
      require(path, number, entry, "record", json::value_t::object, "an object");
      try {
        CaseRecord record = CaseRecord::from_json(JsonIn(entry["record"], path, "/record"));
        (type == "case" ? contents.cases : contents.remedies)[record.id] = std::move(record);
      } catch (const InputError& e) {  // a missing, mistyped or out-of-range field
        bad_line(path, number, malformed(fmt::format("the {} record", type), e));
      }
    } else {
      bad_line(path, number, fmt::format("unknown entry type \"{}\"", type));
    }
    return true;
  });
  if (!seen_header) {
    throw InputError(path, "", "empty: no journal header (not a loraprobe journal)");
  }
  return contents;
}

}  // namespace

JournalContents read_journal(const std::string& path) { return read(path, false); }

JournalHeader read_journal_header(const std::string& path) { return read(path, true).header; }

Journal::Journal(const std::string& path, const JournalHeader& header) : m_path(path) {
  // A line torn by a crash mid-write is dropped, so appended lines start clean.
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) {
    std::size_t size = 0;
    std::size_t keep = 0;  // just past the last newline
    read_file_chunks(path, std::numeric_limits<std::size_t>::max(), [&](std::string_view chunk) {
      const std::size_t nl = chunk.rfind('\n');
      if (nl != std::string_view::npos) {
        keep = size + nl + 1;
      }
      size += chunk.size();
      return true;
    });
    if (keep != size && ::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
      throw UsageError(fmt::format("{}: cannot drop its torn last line: {}", path, std::strerror(errno)));
    }
  }
  m_file = std::fopen(path.c_str(), "a");
  if (m_file == nullptr) {
    throw UsageError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  std::fseek(m_file, 0, SEEK_END);
  if (std::ftell(m_file) == 0) {
    json h = header.to_json();
    h["type"] = "header";
    const std::string line = h.dump() + "\n";
    std::fwrite(line.data(), 1, line.size(), m_file);
    std::fflush(m_file);
    ::fsync(::fileno(m_file));
  }
  m_syncer = std::thread([this] { sync_loop(); });
}

Journal::~Journal() {
  {
    const std::lock_guard lock(m_mutex);
    m_closing = true;
  }
  m_changed.notify_all();
  if (m_syncer.joinable()) {
    m_syncer.join();  // its last round synced every line
  }
  if (m_sync_errno != 0) {
    fmt::print(stderr, "sweep: warning: {}: fsync failed: {}; its last lines may not be on disk\n", m_path,
               std::strerror(m_sync_errno));
  }
  if (m_file != nullptr) {
    std::fclose(m_file);
  }
}

void Journal::append_case(const CaseRecord& record) { append("case", {{"record", record.to_json()}}); }

void Journal::append_remedy(const CaseRecord& record) { append("remedy", {{"record", record.to_json()}}); }

void Journal::append_controls(const Controls& controls) { append("controls", {{"controls", controls.to_json()}}); }

void Journal::append(const char* type, json&& fields) {
  fields["type"] = type;
  const std::string line = fields.dump() + "\n";
  const std::lock_guard lock(m_mutex);
  throw_if_sync_failed();
  if (std::fwrite(line.data(), 1, line.size(), m_file) != line.size() || std::fflush(m_file) != 0) {
    throw EnvironmentError(fmt::format("{}: write failed: {}", m_path, std::strerror(errno)));
  }
  ++m_appended;
  m_changed.notify_all();
}

void Journal::throw_if_sync_failed() const {
  if (m_sync_errno != 0) {
    throw EnvironmentError(fmt::format("{}: fsync failed: {}", m_path, std::strerror(m_sync_errno)));
  }
}

void Journal::sync_loop() {
  std::unique_lock lock(m_mutex);
  while (true) {
    m_changed.wait(lock, [&] { return m_closing || m_synced < m_appended; });
    if (m_synced >= m_appended && m_closing) {
      return;
    }
    // Every line counted here was fflushed before it was counted, so one fsync covers them all.
    const std::uint64_t covered = m_appended;
    lock.unlock();
    const int failed = ::fsync(::fileno(m_file)) == 0 ? 0 : errno;
    lock.lock();
    if (failed != 0 && m_sync_errno == 0) {
      m_sync_errno = failed;
    }
    m_synced = covered;
    m_changed.notify_all();
    if (m_sync_errno != 0) {
      // No later fsync can vouch for these lines (Linux may drop the dirty pages after
      // a failed fsync): the next append reports it, and so does the destructor.
      m_changed.wait(lock, [&] { return m_closing; });
      return;
    }
  }
}

}  // namespace lp::report
