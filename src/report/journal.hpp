#pragma once
// The sweep's journal: a JSON Lines file next to the report, one line per finished
// case, flushed to disk before the next case starts. After a crash or `kill -9`,
// `sweep --resume FILE.jsonl` reads it back and runs only the missing cases.

#include <cstdio>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace lp::report {

/// What a journal holds when it is read back.
struct JournalContents {
  nlohmann::json header;                                    ///< the first line
  std::optional<nlohmann::json> controls;                   ///< the controls' outcome, when recorded
  std::map<std::string, CaseRecord> cases;          ///< by case id
};

/// Reads a journal. A truncated last line (the process died mid-write) is ignored;
/// any other malformed line is an lp::InputError naming the file and line.
JournalContents read_journal(const std::string& path);

class Journal {
 public:
  /// Opens `path` for appending; writes `header` first when the file is new or empty.
  /// Throws lp::UsageError when it cannot be opened.
  Journal(const std::string& path, const nlohmann::json& header);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  /// Appends {"type": type, ...fields} as one line, then fflush and fsync.
  void append(const std::string& type, nlohmann::json fields);

  [[nodiscard]] const std::string& path() const noexcept { return m_path; }

 private:
  std::string m_path;
  std::FILE* m_file = nullptr;
};

}  // namespace lp::report
