#pragma once
// Error vocabulary of loraprobe (after ccache): an Error is recorded against the
// case or variant it belongs to and the run carries on; a Fatal stops the
// program with a defined exit code. Both are caught once, in main.

#include <stdexcept>
#include <string>
#include <utility>

namespace lp {

namespace detail {
/// `text` with each NUL byte shown as \x00, as escape::terminal shows every other control
/// byte: what() is a C string, and a NUL that a document put into a message would end the
/// message there, the reason after it lost.
inline std::string nul_shown(std::string text) {
  for (std::size_t at = text.find('\0'); at != std::string::npos; at = text.find('\0', at)) {
    text.replace(at, 1, "\\x00");
  }
  return text;
}
}  // namespace detail

/// Exit codes: the CI contract of shared/DESIGN.md.
enum class ExitCode : int {
  clean = 0,        ///< everything passed (or, for inspect, no hazard)
  failures = 1,     ///< a FAIL, or a LATENT with --fail-on latent, or a hazard found
  usage = 2,        ///< bad command line, config, manifest or input file
  environment = 3,  ///< the machine cannot run what was asked (no GPU, driver, a tool, invalid controls)
  internal = 4,     ///< a bug in loraprobe: main asks for a bug report
};

/// A recoverable error: recorded against one case/variant, the run goes on.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(detail::nul_shown(what)) {}
};

/// A non-recoverable error: main prints `loraprobe: <what>` and exits with code().
class Fatal : public std::runtime_error {
 public:
  Fatal(ExitCode code, const std::string& what) : std::runtime_error(detail::nul_shown(what)), m_code(code) {}
  /// The exit code main returns for this error.
  [[nodiscard]] ExitCode code() const noexcept { return m_code; }

 private:
  ExitCode m_code;
};

/// Bad user input (flag, config, file): exit 2. The message names the thing at fault.
class UsageError : public Fatal {
 public:
  explicit UsageError(const std::string& what) : Fatal(ExitCode::usage, what) {}
};

/// Bad input inside a file: formatted as `<file>:<json pointer>: <message>`, exit 2;
/// `<file>: <message>` when the fault is the whole document (unreadable, not JSON).
class InputError : public UsageError {
 public:
  /// file: the path as the user gave it; pointer: RFC 6901 JSON pointer ("" for the
  /// whole document); message: what is wrong, naming the offending value.
  InputError(std::string file, std::string pointer, std::string message)
      : UsageError(pointer.empty() ? file + ": " + message : file + ":" + pointer + ": " + message),
        m_file(std::move(file)),
        m_pointer(std::move(pointer)),
        m_message(std::move(message)) {}
  [[nodiscard]] const std::string& file() const noexcept { return m_file; }
  [[nodiscard]] const std::string& pointer() const noexcept { return m_pointer; }
  [[nodiscard]] const std::string& message() const noexcept { return m_message; }

 private:
  std::string m_file;
  std::string m_pointer;
  std::string m_message;
};

/// The machine cannot do what was asked (no GPU, no driver, a tool missing): exit 3.
class EnvironmentError : public Fatal {
 public:
  explicit EnvironmentError(const std::string& what) : Fatal(ExitCode::environment, what) {}
};

/// A subcommand or option whose implementation does not exist yet: exit 2 with
/// "not built yet: <what>". Never fake the output instead.
class NotBuiltYet : public Fatal {
 public:
  explicit NotBuiltYet(const std::string& what) : Fatal(ExitCode::usage, "not built yet: " + what) {}
};

/// The per-item boundary (one case, one image, one row of `env`): runs fn and returns
/// "" when it returned, else the message of the lp::Error or lp::EnvironmentError it
/// threw, for the caller to record against that item while the run goes on. Anything
/// else (a UsageError, Interrupted, bad_alloc, a bug) passes through to main.
template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    std::forward<Fn>(fn)();
    return {};
  } catch (const Error& e) {
    return e.what();
  } catch (const EnvironmentError& e) {
    return e.what();
  }
}

}  // namespace lp
