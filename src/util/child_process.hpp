#pragma once
// A long-lived child process we talk to over pipes, one JSON object per line
// (the sweep's GPU workers). Started with posix_spawn, never through a shell.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "util/line_reader.hpp"

namespace lp {

/// How a child ended.
struct ChildExit {
  int exit_code = -1;   ///< when it exited, else -1
  int term_signal = 0;  ///< the signal that ended it, else 0
  /// "exit 3", "killed by signal 9 (Killed)".
  [[nodiscard]] std::string describe() const;
};

/// Move-only owner of a running child with its stdin and stdout as pipes; its
/// stderr is ours (workers' diagnostics reach the user). The destructor kills a
/// child that is still running.
class ChildProcess {
 public:
  /// Starts argv[0] (an absolute path) with argv. `extra_env` ("KEY=VALUE") is added
  /// to our environment. Throws lp::Error when it cannot be started.
  explicit ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env = {});
  ~ChildProcess();
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  /// Writes `line` and a newline to the child's stdin. Returns false when the child
  /// has closed it (it died).
  bool send_line(const std::string& line);

  /// The next line from the child's stdout, without the newline. nullopt when the
  /// deadline passes first (`timed_out` set) or the child closed stdout (it exited).
  /// Lines longer than `max_line` bytes are an lp::Error.
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline, bool& timed_out,
                                       std::size_t max_line = std::size_t{512} << 20);

  /// SIGTERM, then SIGKILL after `grace` if it is still alive; waits for it.
  ChildExit kill(std::chrono::milliseconds grace = std::chrono::seconds(2));

  /// Waits up to `timeout` for the child to exit by itself; nullopt if it has not.
  std::optional<ChildExit> wait_for(std::chrono::milliseconds timeout);

  [[nodiscard]] pid_t pid() const noexcept { return m_pid; }

 private:
  void close_all() noexcept;
  pid_t m_pid = -1;
  int m_stdin = -1;
  int m_stdout = -1;
  LineReader m_reader{-1};  ///< over m_stdout
  std::optional<ChildExit> m_exit;
};

}  // namespace lp
