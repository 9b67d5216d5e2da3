#include "util/subprocess.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
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

extern char** environ;

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

/// Owns posix_spawn's attribute objects for the duration of one spawn.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attr{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
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

ProcessResult run_process(const std::vector<std::string>& argv, const ProcessOptions& options) {
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

  Pipe out_pipe;
  Pipe err_pipe;
  Pipe in_pipe;
  SpawnSetup setup;
  posix_spawn_file_actions_adddup2(&setup.actions, out_pipe.write_end(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions, err_pipe.write_end(), STDERR_FILENO);
  if (options.stdin_data.empty()) {
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  } else {
    posix_spawn_file_actions_adddup2(&setup.actions, in_pipe.read_end(), STDIN_FILENO);
  }
  if (options.working_directory) {
    posix_spawn_file_actions_addchdir_np(&setup.actions, options.working_directory->c_str());
  }
  // Own process group, so a timeout kills the tool and anything it started.
  posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  sigset_t all_signals;
  sigset_t no_signals;
  sigfillset(&all_signals);
  sigemptyset(&no_signals);
  posix_spawnattr_setsigdefault(&setup.attr, &all_signals);
  posix_spawnattr_setsigmask(&setup.attr, &no_signals);

  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const std::string& arg : argv) {
    cargv.push_back(const_cast<char*>(arg.c_str()));
  }
  cargv.push_back(nullptr);
  std::vector<char*> cenv;
  if (options.environment) {
    for (const std::string& entry : *options.environment) {
      cenv.push_back(const_cast<char*>(entry.c_str()));
    }
    cenv.push_back(nullptr);
  }

  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, program->c_str(), &setup.actions, &setup.attr, cargv.data(),
                               options.environment ? cenv.data() : environ);
  if (rc != 0) {
    throw Error(fmt::format("cannot run '{}': {}", *program, std::strerror(rc)));
  }
  out_pipe.close_write();
  err_pipe.close_write();
  in_pipe.close_read();

  ProcessResult result;
  std::size_t stdin_written = 0;
  if (options.stdin_data.empty()) {
    in_pipe.close_write();
  } else {
    ::fcntl(in_pipe.write_end(), F_SETFL, O_NONBLOCK);
  }
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + options.timeout;
  Clock::time_point kill_at{};
  bool kill_pending = false;  // SIGTERM sent, SIGKILL due at kill_at
  // Past the deadline the process group gets SIGTERM, and SIGKILL once the grace is over.
  auto escalate = [&](Clock::time_point now) {
    if (!result.timed_out && now >= deadline) {
      result.timed_out = true;
      ::kill(-pid, SIGTERM);
      kill_at = now + options.grace;
      kill_pending = true;
    }
    if (kill_pending && now >= kill_at) {
      ::kill(-pid, SIGKILL);
      kill_pending = false;
    }
  };
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
      throw Interrupted(sig);
    }
    const auto now = Clock::now();
    escalate(now);
    const auto wake = kill_pending ? kill_at : (result.timed_out ? now + std::chrono::seconds(1) : deadline);
    const auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(wake - now).count();
    const int ready = ::poll(fds.data(), n, static_cast<int>(std::clamp<long long>(wait_ms, 1, 1000)));
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
  // Pipes closed: the child has exited or closed them; wait, still honouring the timeout.
  int status = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    if (w == pid) {
      break;
    }
    if (w < 0 && errno != EINTR) {
      break;
    }
    const auto now = Clock::now();
    escalate(now);
    ::usleep(2000);
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.term_signal = WTERMSIG(status);
  }
  return result;
}

}  // namespace lp
