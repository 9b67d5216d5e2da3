#pragma once
// Running external tools (ptxas, nvdisasm) without a shell: posix_spawn with an
// argument vector, an optional cleaned environment, a timeout and a cap on the
// output kept. A path with spaces or shell metacharacters is just a path.

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace lp {

/// How to run one external process.
struct ProcessOptions {
  /// Wall-clock limit; on expiry the process group gets SIGTERM, then SIGKILL after `grace`.
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::chrono::milliseconds grace{std::chrono::seconds(2)};
  /// Bytes of stdout and of stderr kept each; the rest is read and dropped.
  std::size_t max_output = std::size_t{256} << 20;
  /// When set, the child's whole environment ("KEY=VALUE"); otherwise it inherits ours.
  std::optional<std::vector<std::string>> environment;
  /// Bytes written to the child's stdin (then closed); empty: stdin is /dev/null.
  std::string stdin_data;
  /// When set, the child starts in this folder instead of ours. Tools that look
  /// files up relative to their working directory (ptxas stats the source files
  /// a PTX's .file directives name, and records what it finds) then do not
  /// depend on where loraprobe was started.
  std::optional<std::string> working_directory;
};

/// What a finished (or killed) process left behind.
struct ProcessResult {
  int exit_code = -1;        ///< exit status when it exited normally, else -1
  int term_signal = 0;       ///< signal that ended it, 0 when it exited
  bool timed_out = false;    ///< killed by us because of ProcessOptions::timeout
  bool out_truncated = false;
  bool err_truncated = false;
  std::string out;
  std::string err;
  /// True when it exited normally with status 0.
  [[nodiscard]] bool ok() const noexcept { return exit_code == 0 && term_signal == 0 && !timed_out; }
  /// One line for error messages: "exit 3", "killed by signal 9", "timed out after 5 s".
  [[nodiscard]] std::string describe() const;
};

/// Runs argv[0] (a path, or a name looked up in PATH) with argv. Throws lp::Error
/// when the program cannot be started (not found, not executable).
ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options = {});

/// A minimal environment for compiler tools: PATH=/usr/bin:/bin, LC_ALL=C, and
/// HOME/TMPDIR copied from ours when set. Nothing else leaks through.
std::vector<std::string> clean_environment();

/// Absolute path of `name` in PATH (or `name` itself when it contains '/' and is
/// executable); nullopt when not found.
std::optional<std::string> find_executable(const std::string& name);

}  // namespace lp
