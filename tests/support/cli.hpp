#pragma once
// Test helper: the loraprobe binary as a test program runs it, and the program's
// scratch folder. A test using it defines LP_LORAPROBE (the binary's path: its
// CMakeLists.txt, target_compile_definitions) and links lp_util.

#include <chrono>
#include <string>
#include <vector>

#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::test_support {

/// loraprobe with `args`, its output captured; killed after two minutes.
inline ProcessResult loraprobe(std::vector<std::string> args) {
  args.insert(args.begin(), LP_LORAPROBE);
  ProcessOptions options;
  options.timeout = std::chrono::seconds(120);
  return run_process(args, options);
}

/// This test program's own scratch folder ("<tmp>/lp-test-XXXXXX"), removed when the
/// program ends.
inline const TempDir& scratch() {
  static const TempDir dir("lp-test-");
  return dir;
}

}  // namespace lp::test_support
