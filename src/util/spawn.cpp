#include "util/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

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

}  // namespace

pid_t spawn_process(const SpawnRequest& r) {
  SpawnSetup setup;
  for (const auto& [from, to] : r.dup2) {
    posix_spawn_file_actions_adddup2(&setup.actions, from, to);
  }
  if (r.stdin_from_dev_null) {
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (r.working_directory) {
    posix_spawn_file_actions_addchdir_np(&setup.actions, r.working_directory->c_str());
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
  std::vector<std::string> environment;
  if (r.environment) {
    environment = *r.environment;
  } else {
    for (char** e = environ; *e != nullptr; ++e) {
      environment.emplace_back(*e);
    }
  }
  environment.insert(environment.end(), r.extra_environment.begin(), r.extra_environment.end());
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
