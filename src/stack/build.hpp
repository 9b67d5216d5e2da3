#pragma once
// The kernels of a user's stack, built with their Triton: the embedded generator
// (scripts/gen_kernels.py --stack) run by their interpreter in a temporary copy of the
// source tree, into a kernel dir (manifest + pack) that loads as any --kernel-dir set.

#include <optional>
#include <string>
#include <vector>

namespace lp::stack {

struct BuildRequest {
  std::string python;                      ///< the interpreter whose Triton builds
  std::vector<std::string> ids;            ///< the variants (Selection::ids)
  std::string out_dir;                     ///< where the kernel dir goes (made; must not hold a set)
  unsigned jobs = 2;                       ///< compile processes
  std::optional<std::string> vllm_ops_dir;  ///< build vLLM's own kernels from this folder, not loraprobe's
};

/// A variant the generator could not build, and its words.
struct Rejected {
  std::string id;
  std::string reason;
};

struct BuildOutcome {
  std::string dir;                 ///< the kernel dir
  double seconds = 0.0;            ///< the generator's wall time
  std::vector<Rejected> rejected;  ///< read back from the manifest by the caller; empty here
  std::string log;                 ///< the generator's stderr (its last 64 KiB)
};

/// Runs the generator. Throws lp::EnvironmentError (exit 3: the stack cannot be built
/// here, so nothing can be told) with the generator's last lines when it fails.
BuildOutcome build_kernels(const BuildRequest& request);

}  // namespace lp::stack
