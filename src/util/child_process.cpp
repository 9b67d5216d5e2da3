#include "util/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/interrupt.hpp"
#include "util/spawn.hpp"

namespace lp {

namespace {

ChildExit decode(int status) {
  ChildExit e;
  if (WIFEXITED(status)) {
    e.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    e.term_signal = WTERMSIG(status);
  }
  return e;
}

}  // namespace

std::string ChildExit::describe() const {
  if (term_signal != 0) {
    return fmt::format("killed by signal {} ({})", term_signal, ::strsignal(term_signal));
  }
  return fmt::format("exit {}", exit_code);
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env) {
  if (argv.empty()) {
    throw Error("ChildProcess: empty argument vector");
  }
  std::array<int, 2> in{-1, -1};
  std::array<int, 2> out{-1, -1};
  if (::pipe2(in.data(), O_CLOEXEC) != 0 || ::pipe2(out.data(), O_CLOEXEC) != 0) {
    throw Error(fmt::format("pipe2 failed: {}", std::strerror(errno)));
  }
  SpawnRequest request;
  request.program = argv[0];
  request.argv = argv;
  request.dup2 = {{in[0], STDIN_FILENO}, {out[1], STDOUT_FILENO}};
  request.extra_environment = extra_env;
  try {
    m_pid = spawn_process(request);
  } catch (const Error&) {
    for (const int fd : {in[0], in[1], out[0], out[1]}) {
      ::close(fd);
    }
    throw;
  }
  ::close(in[0]);
  ::close(out[1]);
  m_stdin = in[1];
  m_stdout = out[0];
  m_reader = LineReader(m_stdout);
  // A child that died must not kill us with SIGPIPE when we write to it.
  ::signal(SIGPIPE, SIG_IGN);
}

ChildProcess::~ChildProcess() {
  if (m_pid > 0 && !m_exit) {
    kill(std::chrono::milliseconds(500));
  }
  close_all();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : m_pid(other.m_pid),
      m_stdin(other.m_stdin),
      m_stdout(other.m_stdout),
      m_reader(std::move(other.m_reader)),
      m_exit(other.m_exit) {
  other.m_pid = -1;
  other.m_stdin = -1;
  other.m_stdout = -1;
}

void ChildProcess::close_all() noexcept {
  if (m_stdin >= 0) {
    ::close(m_stdin);
    m_stdin = -1;
  }
  if (m_stdout >= 0) {
    ::close(m_stdout);
    m_stdout = -1;
  }
}

bool ChildProcess::send_line(const std::string& line) {
  if (m_stdin < 0) {
    return false;
  }
  return write_all(m_stdin, line + "\n");
}

std::optional<std::string> ChildProcess::read_line(std::chrono::steady_clock::time_point deadline, bool& timed_out,
                                                   std::size_t max_line) {
  timed_out = false;
  while (true) {
    if (std::optional<std::string> line = m_reader.buffered_line()) {
      return line;
    }
    if (m_reader.buffered_bytes() > max_line) {
      throw Error(fmt::format("worker {} sent a line longer than {} bytes", m_pid, max_line));
    }
    if (m_stdout < 0 || m_reader.at_eof()) {
      return std::nullopt;
    }
    if (const int sig = interrupt_signal(); sig != 0) {
      kill(std::chrono::milliseconds(500));  // the worker sits in its own process group: reap it here
      throw Interrupted(sig);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now >= deadline) {
      timed_out = true;
      return std::nullopt;
    }
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
    (void)m_reader.fill(static_cast<int>(std::min<long long>(wait, 1000)));
  }
}

std::optional<ChildExit> ChildProcess::wait_for(std::chrono::milliseconds timeout) {
  if (m_exit) {
    return m_exit;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    int status = 0;
    const pid_t w = ::waitpid(m_pid, &status, WNOHANG);
    if (w == m_pid) {
      forget_child(m_pid);
      m_exit = decode(status);
      return m_exit;
    }
    if (w < 0 && errno != EINTR) {
      m_exit = ChildExit{};
      return m_exit;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return std::nullopt;
    }
    ::usleep(2000);
  }
}

ChildExit ChildProcess::kill(std::chrono::milliseconds grace) {
  if (m_exit) {
    return *m_exit;
  }
  if (m_stdin >= 0) {
    ::close(m_stdin);
    m_stdin = -1;
  }
  ::kill(m_pid, SIGTERM);
  if (auto e = wait_for(grace)) {
    return *e;
  }
  ::kill(m_pid, SIGKILL);
  while (!wait_for(std::chrono::seconds(1))) {
  }
  return *m_exit;
}

}  // namespace lp
