#pragma once
// The one posix_spawn setup of run_process (util/subprocess.hpp) and ChildProcess
// (util/child_process.hpp): no shell, the child's stdio wired to the given
// descriptors, an environment given whole or inherited with additions.

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lp {

struct SpawnRequest {
  std::string program;            ///< the executable's path (no PATH search here)
  std::vector<std::string> argv;  ///< argv[0] included
  std::vector<std::pair<int, int>> dup2;  ///< (descriptor, child's fd): 0, 1, 2
  bool stdin_from_dev_null = false;       ///< when no dup2 names fd 0
  std::optional<std::string> working_directory;
  /// A process group of its own with default signal dispositions and none
  /// blocked, so a timeout can kill the tool and everything it started.
  bool own_process_group = false;
  std::optional<std::vector<std::string>> environment;  ///< the whole environment; unset: this process's
  std::vector<std::string> extra_environment;           ///< added to the inherited one ("KEY=value")
};

/// Starts the child; throws lp::Error "cannot run '<program>': <reason>".
/// posix_spawn, except for a working_directory on a glibc older than 2.29, which has
/// no posix_spawn_file_actions_addchdir_np (the pip wheel runs on glibc 2.28): then
/// fork, the same setup and chdir in the child, and execve.
pid_t spawn_process(const SpawnRequest& request);

/// spawn_process's fork path, whatever the glibc: for its tests.
pid_t spawn_process_forked(const SpawnRequest& request);

}  // namespace lp
