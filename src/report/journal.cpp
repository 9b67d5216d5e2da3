#include "report/journal.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "util/error.hpp"
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

/// Calls `line(number, text)` for each line of `path`, read in bounded chunks: a
/// device or a file without newlines (/dev/zero) stops at k_max_journal_line.
template <typename F>
void for_each_line(const std::string& path, F&& line) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UsageError(fmt::format("{}: cannot read: is a directory, not a journal", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  std::string pending;
  std::size_t number = 0;
  std::array<char, 1 << 16> chunk{};
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    pending.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    std::size_t start = 0;
    for (std::size_t nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n', start)) {
      line(++number, std::string_view(pending).substr(start, nl - start), false);
      start = nl + 1;
    }
    pending.erase(0, start);
    if (pending.size() > k_max_journal_line) {
      bad_line(path, number + 1, fmt::format("longer than {} bytes without a newline: not a loraprobe journal",
                                              k_max_journal_line));
    }
  }
  if (!pending.empty()) {
    line(++number, std::string_view(pending), true);  // no newline: torn by a crash, or the last line
  }
}

}  // namespace

JournalContents read_journal(const std::string& path) {
  JournalContents contents;
  bool torn = false;
  for_each_line(path, [&](std::size_t number, std::string_view line, bool last_without_newline) {
    if (torn) {
      // Only the last line may be torn: a bad line followed by more is corruption.
      bad_line(path, number - 1, "not JSON, and more lines follow it");
    }
    if (line.empty()) {
      return;
    }
    std::optional<json> parsed = try_parse_json_bounded(line, k_max_journal_depth);
    json entry = parsed ? std::move(*parsed) : json(json::value_t::discarded);
    if (entry.is_discarded()) {
      if (number == 1) {
        bad_line(path, number, "not JSON: not a loraprobe journal");
      }
      torn = true;  // acceptable only as the last line
      static_cast<void>(last_without_newline);
      return;
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
      require(path, number, entry, "config_sha256", json::value_t::string, "a string");
      require(path, number, entry, "plan_sha256", json::value_t::string, "a string");
      if (entry.contains("argv")) {
        require(path, number, entry, "argv", json::value_t::array, "a list of strings");
        for (const json& a : entry.at("argv")) {
          if (!a.is_string()) {
            bad_line(path, number, "\"argv\" holds a non-string");
          }
        }
      }
      contents.header = std::move(entry);
      return;
    }
    if (type == "controls") {
      require(path, number, entry, "controls", json::value_t::object, "an object");
      try {
        contents.controls = Controls::from_json(JsonIn(entry["controls"], path, "/controls"));
      } catch (const InputError& e) {
        bad_line(path, number, fmt::format("the controls are malformed: {}: {}", e.pointer(), e.message()));
      }
    } else if (type == "case" || type == "remedy") {
      require(path, number, entry, "record", json::value_t::object, "an object");
      try {
        CaseRecord record = CaseRecord::from_json(JsonIn(entry["record"], path, "/record"));
        (type == "case" ? contents.cases : contents.remedies)[record.id] = std::move(record);
      } catch (const InputError& e) {  // a missing, mistyped or out-of-range field
        bad_line(path, number, fmt::format("the {} record is malformed: {}: {}", type, e.pointer(), e.message()));
      }
    } else {
      bad_line(path, number, fmt::format("unknown entry type \"{}\"", type));
    }
  });
  if (contents.header.is_null()) {
    throw InputError(path, "", "empty: no journal header (not a loraprobe journal)");
  }
  return contents;
}

Journal::Journal(const std::string& path, const json& header) : m_path(path) {
  // A line torn by a crash mid-write is dropped, so appended lines start clean.
  {
    std::ifstream existing(path, std::ios::binary);
    if (existing) {
      const std::string text((std::istreambuf_iterator<char>(existing)), std::istreambuf_iterator<char>());
      if (!text.empty() && text.back() != '\n') {
        const std::size_t keep = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if (::truncate(path.c_str(), static_cast<off_t>(keep)) != 0) {
          throw UsageError(fmt::format("{}: cannot drop its torn last line: {}", path, std::strerror(errno)));
        }
      }
    }
  }
  m_file = std::fopen(path.c_str(), "a");
  if (m_file == nullptr) {
    throw UsageError(fmt::format("{}: cannot open for writing: {}", path, std::strerror(errno)));
  }
  std::fseek(m_file, 0, SEEK_END);
  if (std::ftell(m_file) == 0) {
    json h = header;
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

void Journal::append(const std::string& type, json fields) {
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
