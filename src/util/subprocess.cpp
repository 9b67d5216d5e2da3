#include "util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>

#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/spawn.hpp"


namespace lp {
namespace {

/// A pipe whose ends close themselves.
class Pipe {
 public:
  Pipe() {
    if (::pipe2(m_fd.data(), O_CLOEXEC) != 0) {
      throw Error(fmt::format("pipe2 failed: {}", std::strerror(errno)));
    }
  }
  ~Pipe() {
    close_read();
    close_write();
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  [[nodiscard]] int read_end() const noexcept { return m_fd[0]; }
  [[nodiscard]] int write_end() const noexcept { return m_fd[1]; }
  void close_read() noexcept { close_fd(m_fd[0]); }
  void close_write() noexcept { close_fd(m_fd[1]); }

 private:
  static void close_fd(int& fd) noexcept {
    if (fd >= 0) {
      ::close(fd);
      fd = -1;
    }
  }
  std::array<int, 2> m_fd{-1, -1};
};

bool is_executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

void append_capped(std::string& dst, const char* data, std::size_t n, std::size_t cap, bool& truncated) {
  if (dst.size() >= cap) {
    truncated = truncated || n > 0;
    return;
  }
  const std::size_t take = std::min(n, cap - dst.size());
  dst.append(data, take);
  truncated = truncated || take < n;
}

}  // namespace

std::string ProcessResult::describe() const {
  if (timed_out) {
    return "timed out";
  }
  if (term_signal != 0) {
    return fmt::format("killed by signal {} ({})", term_signal, ::strsignal(term_signal));
  }
  return fmt::format("exit {}", exit_code);
}

std::optional<std::string> find_executable(const std::string& name) {
  if (name.empty()) {
    return std::nullopt;
  }
  if (name.find('/') != std::string::npos) {
    return is_executable_file(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    // An empty PATH entry means the current directory.
    const std::string dir = end > start ? dirs.substr(start, end - start) : std::string(".");
    const std::string candidate = dir + "/" + name;
    if (is_executable_file(candidate)) {
      return candidate;
    }
    start = end + 1;
  }
  return std::nullopt;
}

std::vector<std::string> clean_environment() {
  std::vector<std::string> env{"PATH=/usr/bin:/bin", "LC_ALL=C"};
  for (const char* key : {"HOME", "TMPDIR"}) {
    if (const char* value = std::getenv(key); value != nullptr) {
      env.push_back(std::string(key) + "=" + value);
    }
  }
  return env;
}

namespace {

using Clock = std::chrono::steady_clock;

/// The timeout of one tool run: past the deadline its process group gets SIGTERM,
/// and SIGKILL once the grace is over.
class Deadline {
 public:
  Deadline(pid_t pid, const ProcessOptions& options)
      : m_pid(pid), m_deadline(Clock::now() + options.timeout), m_grace(options.grace) {}

  /// Sends what is due at `now`.
  void escalate(Clock::time_point now) {
    if (!m_timed_out && now >= m_deadline) {
      m_timed_out = true;
      ::kill(-m_pid, SIGTERM);
      m_kill_at = now + m_grace;
      m_kill_pending = true;
    }
    if (m_kill_pending && now >= m_kill_at) {
      ::kill(-m_pid, SIGKILL);
      m_kill_pending = false;
    }
  }
  /// How long poll may sleep from `now` (1 ms to 1 s).
  [[nodiscard]] int wait_ms(Clock::time_point now) const {
    const auto wake = m_kill_pending ? m_kill_at : (m_timed_out ? now + std::chrono::seconds(1) : m_deadline);
    return static_cast<int>(
        std::clamp<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count(), 1, 1000));
  }
  [[nodiscard]] bool timed_out() const noexcept { return m_timed_out; }

 private:
  pid_t m_pid;
  Clock::time_point m_deadline;
  std::chrono::milliseconds m_grace;
  Clock::time_point m_kill_at{};
  bool m_kill_pending = false;
  bool m_timed_out = false;
};

/// Starts argv[0] (found on PATH) with its stdout, stderr and stdin on the pipes
/// (stdin /dev/null when there is nothing to write), in its own process group.
pid_t start_tool(const std::vector<std::string>& argv, const ProcessOptions& options, const Pipe& out, const Pipe& err,
                 const Pipe& in) {
  if (argv.empty()) {
    throw Error("run_process: empty argument vector");
  }
  std::optional<std::string> program = find_executable(argv[0]);
  if (!program) {
    throw Error(fmt::format("cannot run '{}': not found or not executable", argv[0]));
  }
  if (options.working_directory) {
    // The child changes folder before exec: a relative program path must not move with it.
    program = std::filesystem::absolute(*program).string();
  }
  SpawnRequest r;
  r.program = *program;
  r.argv = argv;
  r.dup2 = {{out.write_end(), STDOUT_FILENO}, {err.write_end(), STDERR_FILENO}};
  if (options.stdin_data.empty()) {
    r.stdin_from_dev_null = true;
  } else {
    r.dup2.emplace_back(in.read_end(), STDIN_FILENO);
  }
  r.working_directory = options.working_directory;
  r.own_process_group = true;  // a timeout kills the tool and anything it started
  r.environment = options.environment;
  return spawn_process(r);
}

/// Reads stdout and stderr (capped) and writes stdin until both outputs close,
/// honouring the deadline; on Ctrl-C or SIGTERM kills and reaps the child and
/// throws lp::Interrupted.
void pump(pid_t pid, const ProcessOptions& options, Pipe& out_pipe, Pipe& err_pipe, Pipe& in_pipe, Deadline& deadline,
          ProcessResult& result) {
  std::size_t stdin_written = 0;
  if (options.stdin_data.empty()) {
    in_pipe.close_write();
  } else {
    ::fcntl(in_pipe.write_end(), F_SETFL, O_NONBLOCK);
  }
  std::array<char, 65536> buffer{};
  bool out_open = true;
  bool err_open = true;
  while (out_open || err_open) {
    std::array<pollfd, 3> fds{};
    nfds_t n = 0;
    if (out_open) {
      fds[n++] = pollfd{out_pipe.read_end(), POLLIN, 0};
    }
    if (err_open) {
      fds[n++] = pollfd{err_pipe.read_end(), POLLIN, 0};
    }
    const bool writing = in_pipe.write_end() >= 0;
    if (writing) {
      fds[n++] = pollfd{in_pipe.write_end(), POLLOUT, 0};
    }
    if (const int sig = interrupt_signal(); sig != 0) {
      // Ctrl-C never reaches the child's own process group: stop it and reap it here.
      ::kill(-pid, SIGKILL);
      int ignored = 0;
      while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
      forget_child(pid);
      throw Interrupted(sig);
    }
    const auto now = Clock::now();
    deadline.escalate(now);
    const int ready = ::poll(fds.data(), n, deadline.wait_ms(now));
    if (ready < 0) {
      if (errno == EINTR) {
        continue;
      }
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) {
        continue;
      }
      if (writing && fds[i].fd == in_pipe.write_end()) {
        const ssize_t w = ::write(fds[i].fd, options.stdin_data.data() + stdin_written,
                                  options.stdin_data.size() - stdin_written);
        if (w > 0) {
          stdin_written += static_cast<std::size_t>(w);
        }
        if (w < 0 || stdin_written == options.stdin_data.size()) {
          in_pipe.close_write();
        }
        continue;
      }
      const ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
      const bool is_out = fds[i].fd == out_pipe.read_end();
      if (got <= 0) {
        if (got < 0 && errno == EINTR) {
          continue;
        }
        (is_out ? out_open : err_open) = false;
        continue;
      }
      if (is_out) {
        append_capped(result.out, buffer.data(), static_cast<std::size_t>(got), options.max_output, result.out_truncated);
      } else {
        append_capped(result.err, buffer.data(), static_cast<std::size_t>(got), options.max_output, result.err_truncated);
      }
    }
  }
  in_pipe.close_write();
}

/// Waits for the child whose pipes closed, still honouring the deadline, and
/// records how it ended.
void reap(pid_t pid, Deadline& deadline, ProcessResult& result) {
  int status = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      forget_child(pid);
      break;
    }
    if (w < 0 && errno != EINTR) {
      break;
    }
    deadline.escalate(Clock::now());
    ::usleep(2000);
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
}

}  // namespace

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
  Pipe out_pipe;
  Pipe err_pipe;
  Pipe in_pipe;
  const pid_t pid = start_tool(argv, options, out_pipe, err_pipe, in_pipe);
  out_pipe.close_write();
  err_pipe.close_write();
  in_pipe.close_read();
  ProcessResult result;
  Deadline deadline(pid, options);
  pump(pid, options, out_pipe, err_pipe, in_pipe, deadline, result);
  reap(pid, deadline, result);
  result.timed_out = deadline.timed_out();
  return result;
}

}  // namespace lp
