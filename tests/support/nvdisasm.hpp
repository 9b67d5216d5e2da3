#pragma once
// Test helper: the nvdisasm a test needs, found as loraprobe finds it (the CUDA
// toolkit's, the project's .tools, Triton's), or the test skips, saying why there is
// none: "skipped: no nvdisasm (<why>); scripts/install_tools.sh nvdisasm installs one".
// Only a genuine absence (lp::EnvironmentError) skips; any other error fails the test.

#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "sass/nvdisasm.hpp"
#include "util/error.hpp"

namespace lp::test_support {

/// An nvdisasm, or why there is none.
struct FoundNvdisasm {
  std::optional<sass::Nvdisasm> tool;
  std::string why;
};

inline FoundNvdisasm find_any_nvdisasm() {
  try {
    return {sass::find_nvdisasm(), ""};
  } catch (const EnvironmentError& e) {
    return {std::nullopt, e.what()};
  }
}

}  // namespace lp::test_support

/// Declares `var`, a const std::optional<lp::sass::Nvdisasm>& that holds one, or skips
/// the test.
#define LP_REQUIRE_NVDISASM(var)                                                                       \
  const ::lp::test_support::FoundNvdisasm lp_found_##var = ::lp::test_support::find_any_nvdisasm();    \
  const std::optional<::lp::sass::Nvdisasm>& var = lp_found_##var.tool;                                \
  if (!(var)) {                                                                                        \
    GTEST_SKIP() << "skipped: no nvdisasm (" << lp_found_##var.why                                     \
                 << "); scripts/install_tools.sh nvdisasm installs one";                               \
  }
