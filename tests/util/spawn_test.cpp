// spawn_process's fork path (util/spawn.hpp): what the pip wheel uses for a working
// directory on glibc 2.28, which has no posix_spawn_file_actions_addchdir_np. It must
// set up the child as the posix_spawn path does.

#include "util/spawn.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>

#include "util/error.hpp"
#include "util/files.hpp"

namespace lp {
namespace {

// Runs `request` through `spawn` with stdout to a pipe; returns (exit status, stdout).
template <class Spawn>
std::pair<int, std::string> run(SpawnRequest request, Spawn spawn) {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  request.dup2 = {{fds[1], STDOUT_FILENO}};
  const pid_t pid = spawn(request);
  ::close(fds[1]);
  std::string out;
  char buffer[256];
  for (ssize_t n = 0; (n = ::read(fds[0], buffer, sizeof buffer)) > 0;) {
    out.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(SpawnForked, RunsInTheWorkingDirectoryWithItsOwnGroupAndEnvironment) {
  const TempDir dir("lp spawn dir ;$(x) ");
  SpawnRequest r;
  r.program = "/bin/sh";
  // The child's folder, its process group against its pid, and one variable.
  r.argv = {"sh", "-c", "pwd; [ \"$(cut -d' ' -f5 /proc/$$/stat)\" = \"$$\" ] && echo own-group; echo \"$LP_X\""};
  r.working_directory = dir.path();
  r.own_process_group = true;
  r.stdin_from_dev_null = true;
  r.environment = std::vector<std::string>{"PATH=/usr/bin:/bin", "LP_X=x y"};
  for (auto spawn : {&spawn_process_forked, &spawn_process}) {
    const auto [status, out] = run(r, spawn);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out, dir.path() + "\nown-group\nx y\n");
  }
}

TEST(SpawnForked, AMissingProgramOrFolderIsAnErrorNotAChild) {
  SpawnRequest r;
  r.program = "/nonexistent/lp-no-such-program";
  r.argv = {"x"};
  r.working_directory = "/";
  EXPECT_THROW(spawn_process_forked(r), Error);
  r.program = "/bin/true";
  r.working_directory = "/nonexistent/lp-no-such-folder";
  try {
    spawn_process_forked(r);
    FAIL() << "spawned into a missing folder";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("No such file or directory"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lp
