#include "util/interrupt.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>

#include <fmt/format.h>

namespace lp {

namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_urgent{false};
std::atomic<long long> g_first_ms{0};
/// Children to kill on an immediate exit; 0 is a free slot.
std::array<std::atomic<int>, 256> g_children{};

long long monotonic_ms() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void say(const char* text, std::size_t size) noexcept { (void)!::write(STDERR_FILENO, text, size); }

// Only async-signal-safe calls here.
extern "C" void on_signal(int sig) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, sig)) {
    g_first_ms = monotonic_ms();
    return;
  }
  const bool repeat_of_first = monotonic_ms() - g_first_ms.load() < 2000;
  if (!g_urgent.exchange(true)) {
    constexpr char k_message[] = "loraprobe: second signal: cleaning up without writing partial output\n";
    say(k_message, sizeof(k_message) - 1);
    return;
  }
  if (repeat_of_first) {
    return;  // one intent delivered twice (to the process and to its group)
  }
  constexpr char k_message[] = "loraprobe: another signal: killing the children and exiting at once\n";
  say(k_message, sizeof(k_message) - 1);
  for (std::atomic<int>& child : g_children) {
    if (const int pid = child.load(); pid > 0) {
      ::kill(-pid, SIGKILL);
    }
  }
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: a blocking poll returns EINTR and sees the flag
  for (const int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) {
    ::sigaction(sig, &action, nullptr);
  }
}

int interrupt_signal() noexcept { return g_signal.load(); }

bool interrupt_urgent() noexcept { return g_urgent.load(); }

void register_child(int pid) noexcept {
  for (std::atomic<int>& slot : g_children) {
    int expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) {
      return;
    }
  }
}

void forget_child(int pid) noexcept {
  for (std::atomic<int>& slot : g_children) {
    int expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) {
      return;
    }
  }
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    case SIGQUIT:
      return "SIGQUIT";
    default:
      return fmt::format("signal {}", signal);
  }
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
