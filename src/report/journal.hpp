#pragma once
// The sweep's journal: a JSON Lines file next to the report, one line per finished
// case. Each line is handed to the kernel as it is appended, so a crash or `kill -9`
// of loraprobe loses none; a thread beside the sweep fsyncs them as they come, so
// a power loss or a kernel panic loses at most the lines appended since its last
// fsync (about 0.1 ms on the H200 machine's disk). The sweep never waits for the
// disk: an fsync per case in line cost the 1008-case H200 benchmark 0.08 s. After any of these, `sweep --resume FILE.jsonl` reads it back
// and runs only the missing cases.

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/report.hpp"

namespace lp::report {

/// The journal's first line: what a --resume must match (config and plan sha256) and
/// what the run is (versions, kernel sets, --fail-on, argv, shard), for `merge`.
struct JournalHeader {
  std::string schema_version;
  std::string version;
  std::string git_sha;
  std::vector<KernelSetRecord> kernel_sets;
  std::vector<std::string> fail_on;  ///< verdict names, in the report's order
  std::string config_sha256;
  std::string plan_sha256;  ///< of the plan's case ids, in order
  std::vector<std::string> argv;
  std::string started_at;
  std::size_t cases = 0;  ///< the plan's (this shard's)
  std::optional<ShardRecord> shard;

  [[nodiscard]] nlohmann::json to_json() const;
  /// config_sha256 and plan_sha256 are required; the rest is read when present (a
  /// journal of schema 1.x has no kernel sets, fail_on or shard).
  static JournalHeader from_json(const JsonIn& j);
};

/// What a journal holds when it is read back.
struct JournalContents {
  JournalHeader header;                                     ///< the first line
  std::optional<Controls> controls;                         ///< the controls' outcome, when recorded
  std::map<std::string, CaseRecord> cases;          ///< by case id
  /// sweep --remedies: the neighbour cases already measured, by case id ("remedy" lines).
  std::map<std::string, CaseRecord> remedies;
};

/// Reads a journal. A truncated last line (the process died mid-write) is ignored;
/// any other malformed line is an lp::InputError naming the file and line.
JournalContents read_journal(const std::string& path);

/// The first line alone, checked as read_journal checks it (sweep --resume's options
/// come from it; the cases are read once, by the sweep).
JournalHeader read_journal_header(const std::string& path);

class Journal {
 public:
  /// Opens `path` for appending; writes `header` first when the file is new or empty
  /// (and fsyncs it). Throws lp::UsageError when it cannot be opened.
  Journal(const std::string& path, const JournalHeader& header);
  /// fsyncs what is still unsynced, then closes the file.
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  /// Appends one line and fflushes it; the syncing thread fsyncs it soon after. Throws
  /// lp::EnvironmentError when the write, or an earlier line's fsync, failed.
  void append_case(const CaseRecord& record);
  /// sweep --remedies: a neighbour case measured (--resume measures it only once).
  void append_remedy(const CaseRecord& record);
  void append_controls(const Controls& controls);

  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  /// {"type": type, ...fields} as one line.
  void append(const char* type, nlohmann::json&& fields);
  void sync_loop();
  void throw_if_sync_failed() const;

  std::string m_path;
  std::FILE* m_file = nullptr;
  std::mutex m_mutex;
  std::condition_variable m_changed;
  std::uint64_t m_appended = 0;  ///< lines appended (under m_mutex)
  std::uint64_t m_synced = 0;    ///< of those, the ones known to be on disk
  int m_sync_errno = 0;          ///< the first failed fsync's errno
  bool m_closing = false;
  std::thread m_syncer;          ///< last: started once the rest is set
};

}  // namespace lp::report
