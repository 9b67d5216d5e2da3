#pragma once
// The sweep's progress line on stderr: cases done, failures so far, ETA. Redrawn
// in place on a terminal; on a pipe or file, a plain line every 10% or 30 s.

#include <chrono>
#include <cstddef>
#include <string>

namespace lp::sweep {

class Progress {
 public:
  /// `total` cases; `enabled` false prints nothing (e.g. --quiet).
  Progress(std::size_t total, bool enabled);
  /// Records one more finished case.
  void update(std::size_t done, std::size_t failures, std::size_t latent, const std::string& current);
  /// Ends the line (a newline on a terminal).
  void finish();

 private:
  std::size_t m_total;
  bool m_enabled;
  bool m_tty;
  std::chrono::steady_clock::time_point m_start;
  std::chrono::steady_clock::time_point m_last_line;
  std::size_t m_last_decile = 0;
};

/// "1m05s", "42s", "2h03m".
std::string format_duration(double seconds);

}  // namespace lp::sweep
