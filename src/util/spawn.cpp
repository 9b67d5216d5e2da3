#include "util/spawn.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/interrupt.hpp"

extern char** environ;

namespace lp {

namespace {

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

std::vector<char*> c_strings(const std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (const std::string& s : strings) {
    out.push_back(const_cast<char*>(s.c_str()));
  }
  out.push_back(nullptr);
  return out;
}

std::vector<std::string> environment_of(const SpawnRequest& r) {
  std::vector<std::string> environment;
  if (r.environment) {
    environment = *r.environment;
  } else {
    for (char** e = environ; *e != nullptr; ++e) {
      environment.emplace_back(*e);
    }
  }
  environment.insert(environment.end(), r.extra_environment.begin(), r.extra_environment.end());
  return environment;
}

// glibc 2.29's posix_spawn_file_actions_addchdir_np, looked up at run time: the
// wheel is linked against glibc 2.28, which has none.
using AddChdir = int (*)(posix_spawn_file_actions_t*, const char*);
AddChdir add_chdir() {
  static const auto function = reinterpret_cast<AddChdir>(dlsym(RTLD_DEFAULT, "posix_spawn_file_actions_addchdir_np"));
  return function;
}

}  // namespace

pid_t spawn_process_forked(const SpawnRequest& r) {
  // Everything the child needs is made before fork: between fork and execve a
  // multithreaded process may only make async-signal-safe calls.
  const std::vector<std::string> environment = environment_of(r);
  std::vector<char*> cargv = c_strings(r.argv);
  std::vector<char*> cenv = c_strings(environment);
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    throw Error(fmt::format("cannot run '{}': pipe: {}", r.program, std::strerror(errno)));
  }
  sigset_t all_signals;
  sigset_t saved;
  sigfillset(&all_signals);
  pthread_sigmask(SIG_SETMASK, &all_signals, &saved);  // no handler of ours runs in the child
  const pid_t pid = ::fork();
  if (pid == 0) {
    auto fail = [&](int error) {
      const ssize_t ignored = ::write(status_pipe[1], &error, sizeof error);
      static_cast<void>(ignored);
      ::_exit(127);
    };
    for (const auto& [from, to] : r.dup2) {
      if (::dup2(from, to) < 0) {
        fail(errno);
      }
    }
    if (r.stdin_from_dev_null) {
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd < 0 || ::dup2(null_fd, STDIN_FILENO) < 0) {
        fail(errno);
      }
    }
    if (r.working_directory && ::chdir(r.working_directory->c_str()) != 0) {
      fail(errno);
    }
    if (r.own_process_group) {
      if (::setpgid(0, 0) != 0) {
        fail(errno);
      }
      struct sigaction default_action {};
      default_action.sa_handler = SIG_DFL;
      for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
        ::sigaction(signal_number, &default_action, nullptr);  // fails harmlessly for SIGKILL/SIGSTOP
      }
      sigset_t none;
      sigemptyset(&none);
      pthread_sigmask(SIG_SETMASK, &none, nullptr);
    } else {
      pthread_sigmask(SIG_SETMASK, &saved, nullptr);
    }
    ::execve(r.program.c_str(), cargv.data(), cenv.data());
    fail(errno);
  }
  const int fork_error = errno;
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  ::close(status_pipe[1]);
  if (pid < 0) {
    ::close(status_pipe[0]);
    throw Error(fmt::format("cannot run '{}': fork: {}", r.program, std::strerror(fork_error)));
  }
  // execve closed the write end (O_CLOEXEC): no bytes means it ran.
  int child_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(status_pipe[0], &child_error, sizeof child_error);
  } while (got < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof child_error)) {
    int ignored = 0;
    ::waitpid(pid, &ignored, 0);
    throw Error(fmt::format("cannot run '{}': {}", r.program, std::strerror(child_error)));
  }
  register_child(pid);  // killed with its group if the run must exit at once
  return pid;
}

pid_t spawn_process(const SpawnRequest& r) {
  if (r.working_directory && add_chdir() == nullptr) {
    return spawn_process_forked(r);
  }
  SpawnSetup setup;
  for (const auto& [from, to] : r.dup2) {
    posix_spawn_file_actions_adddup2(&setup.actions, from, to);
  }
  if (r.stdin_from_dev_null) {
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (r.working_directory) {
    add_chdir()(&setup.actions, r.working_directory->c_str());
  }
  if (r.own_process_group) {
    posix_spawnattr_setflags(&setup.attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&setup.attr, 0);
    sigset_t all_signals;
    sigset_t no_signals;
    sigfillset(&all_signals);
    sigemptyset(&no_signals);
    posix_spawnattr_setsigdefault(&setup.attr, &all_signals);
    posix_spawnattr_setsigmask(&setup.attr, &no_signals);
  }
  const std::vector<std::string> environment = environment_of(r);
  std::vector<char*> cargv = c_strings(r.argv);
  std::vector<char*> cenv = c_strings(environment);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, r.program.c_str(), &setup.actions, &setup.attr, cargv.data(), cenv.data());
  if (rc != 0) {
    throw Error(fmt::format("cannot run '{}': {}", r.program, std::strerror(rc)));
  }
  register_child(pid);  // killed with its group if the run must exit at once
  return pid;
}

}  // namespace lp
