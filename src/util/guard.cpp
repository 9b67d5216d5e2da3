#include "util/guard.hpp"

#include <exception>
#include <new>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/escape.hpp"
#include "version.hpp"

namespace lp {

int run_guarded(const std::function<int()>& body, std::FILE* err) {
  try {
    return body();
  } catch (const Fatal& e) {
    // Messages quote values from documents, flags and devices: shown, never interpreted
    // by the terminal, and one line (a newline in a value is shown as \n).
    fmt::print(err, "loraprobe: {}\n", escape::terminal_line(e.what()));
    return static_cast<int>(e.code());
  } catch (const std::bad_alloc&) {
    // The machine's limit (a huge document, a memory cap), not a bug: nothing was written.
    fmt::print(err, "loraprobe: out of memory: this run needs more memory than the process may use (ulimit -v, a "
                    "container's limit); nothing was written\n");
    return static_cast<int>(ExitCode::environment);
  } catch (const std::exception& e) {
    // A recoverable lp::Error is recorded against its case or file where it happens; one
    // that reaches here, or any other exception, is a bug in loraprobe, not bad input.
    fmt::print(err,
               "loraprobe: internal error: {}\nloraprobe: this is a bug in loraprobe {} (git {}); please report it "
               "with the command line and this message\n",
               escape::terminal(e.what()), k_version, k_git_sha);
    return static_cast<int>(ExitCode::internal);
  }
}

}  // namespace lp
