// What the PTX tests share (they compile as one unit, so each helper is here once):
// a hand-written kernel around a snippet, and the committed PTX of vLLM's expand at
// the seed configuration, per Triton version (tests/ptx/make_fixtures.sh makes it).
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace lp::ptx::fixtures {

/// The seed variant the committed fixtures are of.
inline constexpr const char* k_seed_variant = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1";

/// A kernel whose body is `body`, with the registers it names declared.
inline std::string snippet_kernel(const std::string& body) {
  return ".version 8.7\n.target sm_90a\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 k_param_0\n)\n"
         ".reqntid 128\n{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<200>;\n\t.reg .b64 %rd<8>;\n" +
         body + "\n\tret;\n}\n";
}

/// Triton `version`'s PTX of the seed variant.
inline std::string seed_ptx(const std::string& version) {
  const std::string path =
      std::string(LP_SOURCE_DIR) + "/tests/ptx/fixtures/triton-" + version + "-" + k_seed_variant + ".ptx";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path << " (tests/ptx/make_fixtures.sh makes it)";
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace lp::ptx::fixtures
