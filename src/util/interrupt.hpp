#pragma once
// Ctrl-C and SIGTERM: the first signal asks the run to stop, keeping what it has;
// a second one exits at once. Long waits (run_process, a worker's answer) check the
// flag, kill and reap their children (each sits in its own process group, so a
// terminal's Ctrl-C never reaches it) and throw lp::Interrupted; the subcommand then
// writes what it finished, marked interrupted, and main exits 128 + the signal.

#include <string>

#include "util/error.hpp"

namespace lp {

/// Installs the SIGINT and SIGTERM handlers (idempotent). main calls it first.
void install_interrupt_handlers();

/// The signal that asked the run to stop (SIGINT, SIGTERM), or 0.
int interrupt_signal() noexcept;

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

/// "SIGINT" / "SIGTERM".
std::string signal_name(int signal);

}  // namespace lp
