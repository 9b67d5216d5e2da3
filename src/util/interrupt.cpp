#include "util/interrupt.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>

#include <fmt/format.h>

namespace lp {

namespace {

std::atomic<int> g_signal{0};

extern "C" void on_signal(int sig) {
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, sig)) {
    // The second signal: the user means it. Only async-signal-safe calls here.
    constexpr char k_message[] = "loraprobe: second signal: exiting at once\n";
    (void)!::write(STDERR_FILENO, k_message, sizeof(k_message) - 1);
    ::_exit(128 + sig);
  }
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking poll returns EINTR and sees the flag
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

int interrupt_signal() noexcept { return g_signal.load(); }

std::string signal_name(int signal) {
  return signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : fmt::format("signal {}", signal);
}

Interrupted::Interrupted(int signal)
    : Fatal(static_cast<ExitCode>(128 + signal), fmt::format("interrupted by {}", signal_name(signal))),
      m_signal(signal) {}

void throw_if_interrupted() {
  if (const int sig = interrupt_signal(); sig != 0) {
    throw Interrupted(sig);
  }
}

}  // namespace lp
