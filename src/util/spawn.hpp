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
pid_t spawn_process(const SpawnRequest& request);

}  // namespace lp
