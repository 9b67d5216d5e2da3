#pragma once
// Ctrl-C, SIGTERM, SIGHUP (the terminal went away) and SIGQUIT: the first signal asks
// the run to stop, keeping what it has. Long waits (run_process, a worker's answer)
// check the flag, kill and reap their children (each sits in its own process group,
// so a terminal's Ctrl-C never reaches it) and throw lp::Interrupted; temporary
// folders go as the stack unwinds; the subcommand then writes what it finished,
// marked interrupted, and main exits 128 + the signal.
//
// A second signal makes the stop urgent: the cleanup still happens (children killed
// and reaped, temporary folders removed), only the partial output is not written.
// `timeout -s INT` signals the process and then its group, so one intent often
// arrives twice within microseconds; further signals within 2 s of the first are
// that. One more after those 2 s exits at once, after killing every child's
// process group (the handler's last resort: no temporary folder is removed then).

#include <string>

#include "util/error.hpp"

namespace lp {

/// Installs the SIGINT, SIGTERM, SIGHUP and SIGQUIT handlers (idempotent). main calls it first.
void install_interrupt_handlers();

/// The signal that asked the run to stop, or 0.
int interrupt_signal() noexcept;

/// True after a second signal: clean up, but write no partial output.
bool interrupt_urgent() noexcept;

/// A child process (the leader of its own process group) to kill if the run must
/// exit at once; spawn_process registers every child, the reaping waits forget them.
void register_child(int pid) noexcept;
void forget_child(int pid) noexcept;

/// Thrown where a wait notices the signal: exit code 128 + signal (130, 143).
class Interrupted : public Fatal {
 public:
  explicit Interrupted(int signal);
  [[nodiscard]] int signal() const noexcept { return m_signal; }

 private:
  int m_signal;
};

/// Throws lp::Interrupted when a signal asked to stop.
void throw_if_interrupted();

/// "SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT".
std::string signal_name(int signal);

}  // namespace lp
