// The amplifier (src/ptx/amplify.hpp): what it inserts and where, on hand-written
// snippets, on the Triton 3.6 PTX of the embedded set and on the 3.7.1/3.8.0/3.9.0
// fixtures; that every original byte stays in order; that the result assembles with
// the toolkit's ptxas and 13.3; and that the SASS keeps (or stays without) the hazard.

#include "support/nvdisasm.hpp"
#include "ptx/amplify.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>

#include "compile/ptxas.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/axes.hpp"
#include "ptx/parse.hpp"
#include "ptx/ptx_fixtures.hpp"
#include "ptx/ptx_check.hpp"
#include "sass/analyze.hpp"
#include "sass/instruction.hpp"
#include "util/error.hpp"

namespace lp::ptx {
namespace {

using fixtures::k_seed_variant;
using fixtures::seed_ptx;
using fixtures::snippet_kernel;

std::string embedded_ptx(const std::string& variant) {
  static const kernels::KernelSets sets = kernels::KernelSets::load();
  const kernels::KernelSet& set = sets.at("3.6.0");
  const kernels::Variant* v = set.find(variant);
  EXPECT_NE(v, nullptr) << variant;
  return v == nullptr ? std::string() : set.contents(*v->ptx);
}

/// The text with every line the amplifier inserted taken out: its own comment line,
/// and the shared-memory wgmmas, scope braces and descriptor lines that follow it.
std::string without_inserted(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  std::string line;
  bool inserting = false;
  while (std::getline(in, line)) {
    if (line.find("// loraprobe amplify:") != std::string::npos) {
      inserting = true;
      continue;
    }
    if (inserting) {
      const bool ours = line.find("%lp_amp_a") != std::string::npos || line.find_first_not_of(" \t{}") == std::string::npos ||
                        (line.find("wgmma.mma_async") != std::string::npos && line.find(", {%") == std::string::npos);
      if (ours) {
        continue;
      }
      inserting = false;
    }
    out += line + "\n";
  }
  return out;
}

/// For every site: the inserted wgmmas sit between the wgmma.fence before it and it,
/// with no commit or wait among them, so they are in its group; and the group is the
/// one the next wait_group leaves pending when the site is pending.
void expect_in_its_group(const Amplified& a) {
  const std::vector<Function> functions = parse_functions(a.ptx, "amplified.ptx");
  ASSERT_EQ(functions.size(), 1U);
  const std::vector<Statement>& body = functions[0].body;
  std::size_t register_a_seen = 0;
  for (std::size_t i = 0; i < body.size(); ++i) {
    if (body[i].opcode.rfind("wgmma.mma_async", 0) != 0 || body[i].operands.at(1).front() != '{') {
      continue;
    }
    // Walk back over the pairs to the start of the group.
    std::size_t shared = 0;
    std::size_t j = i;
    while (j > 0) {
      const Statement& s = body[--j];
      if (s.opcode.rfind("wgmma.mma_async", 0) == 0 && s.operands.at(1).front() != '{') {
        EXPECT_EQ(s.operands[0], body[i].operands[0]) << "a pair on another accumulator";
        EXPECT_EQ(s.operands[2], body[i].operands[2]) << "a pair reading another B descriptor";
        ++shared;
        continue;
      }
      if (s.opcode.rfind("wgmma.commit_group", 0) == 0 || s.opcode.rfind("wgmma.wait_group", 0) == 0 ||
          s.opcode.rfind("wgmma.fence", 0) == 0) {
        break;
      }
    }
    EXPECT_EQ(shared, static_cast<std::size_t>(2 * a.amplify)) << "before line " << body[i].line;
    ++register_a_seen;
  }
  EXPECT_EQ(register_a_seen, a.register_a_wgmma);
}

TEST(Amplify, Triton36SeedVariantGetsDPairsBeforeBothWgmmasOfATrip) {
  const std::string ptx = embedded_ptx(k_seed_variant);
  const Amplified a = amplify_ptx(ptx, 2, "seed.ptx");
  EXPECT_TRUE(a.changed());
  EXPECT_EQ(a.register_a_wgmma, 2U);
  ASSERT_EQ(a.sites.size(), 2U);
  EXPECT_TRUE(a.skipped.empty());
  for (const AmplifySite& s : a.sites) {
    EXPECT_EQ(s.shape, "m64n128k16");
    EXPECT_FALSE(s.a_stride_cleared);  // N 128 >= 64: A reads B's rows 0..63
    ASSERT_TRUE(s.wait_after.has_value());
    EXPECT_EQ(*s.wait_after, 1);  // wgmma.wait_group 1: left in flight
    EXPECT_TRUE(s.pending());
  }
  EXPECT_EQ(a.describe(),
            "2 pair(s) before each of 2 register-A wgmma(s), 2 of them left in flight by the next wgmma.wait_group");
  // Every original byte, in order: the amplified text minus the inserted lines.
  EXPECT_EQ(without_inserted(a.ptx), ptx);
  expect_in_its_group(a);
  // The pairs: scale-a -1 then +1 on the wgmma's own accumulator, A and B through its B descriptor.
  EXPECT_NE(a.ptx.find(", %rd65, %rd65, %p6, -1, 1, 0, 0;"), std::string::npos);
  EXPECT_NE(a.ptx.find(", %rd65, %rd65, %p6, 1, 1, 0, 0;"), std::string::npos);
}

TEST(Amplify, TheFixturesOfTriton37To39AreAmplifiedAlike) {
  for (const char* version : {"3.7.1", "3.8.0", "3.9.0"}) {
    SCOPED_TRACE(version);
    const std::string ptx = seed_ptx(version);
    for (const int pairs : {1, 4}) {
      const Amplified a = amplify_ptx(ptx, pairs, version);
      ASSERT_EQ(a.sites.size(), 2U);
      EXPECT_EQ(std::count_if(a.sites.begin(), a.sites.end(), [](const AmplifySite& s) { return s.pending(); }), 2);
      EXPECT_EQ(without_inserted(a.ptx), ptx);
      expect_in_its_group(a);
    }
  }
}

TEST(Amplify, TheAmplifiedPtxHasTheSameHazardAsTheOriginal) {
  // The pairs are wgmmas chained on the accumulator: they add no PTX finding and hide none.
  for (const auto& [name, ptx] : {std::pair<std::string, std::string>{"3.6.0", embedded_ptx(k_seed_variant)},
                                  {"3.7.1", seed_ptx("3.7.1")}, {"3.8.0", seed_ptx("3.8.0")}, {"3.9.0", seed_ptx("3.9.0")}}) {
    SCOPED_TRACE(name);
    const std::size_t before = analyze_ptx(ptx, name).finding_count();
    const PtxReport after = analyze_ptx(amplify_ptx(ptx, 2, name).ptx, name);
    EXPECT_EQ(after.finding_count(), before);
    EXPECT_EQ(after.functions.at(0).wgmma, 2U + 2U * 2U * 2U);
    EXPECT_EQ(after.functions.at(0).wgmma_register_a, 2U);
  }
}

TEST(Amplify, BelowN64TheAStrideIsClearedSoThePairsReadOnlyBsFirstRows) {
  const std::string ptx = embedded_ptx("expand-fp32-bf16-m64n32k32-w4s2-evenk-add-s1");
  const Amplified a = amplify_ptx(ptx, 1, "bn32.ptx");
  ASSERT_EQ(a.sites.size(), 2U);
  EXPECT_TRUE(a.sites[0].a_stride_cleared);
  EXPECT_NE(a.ptx.find("and.b64 %lp_amp_a, %rd52, 0xFFFFC000FFFFFFFF;"), std::string::npos);
  EXPECT_NE(a.ptx.find(", %lp_amp_a, %rd52, %p5, -1, 1, 0, 0;"), std::string::npos);
  EXPECT_EQ(without_inserted(a.ptx), ptx);
  expect_in_its_group(a);
}

TEST(Amplify, APtxWithoutARegisterAWgmmaIsUnchangedAndSaysSo) {
  // bf16 input: wgmma reads A from shared memory; nothing to amplify.
  const std::string ptx = embedded_ptx("expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1");
  const Amplified a = amplify_ptx(ptx, 4, "bf16.ptx");
  EXPECT_FALSE(a.changed());
  EXPECT_EQ(a.ptx, ptx);
  EXPECT_EQ(a.register_a_wgmma, 0U);
  EXPECT_EQ(a.describe(), "no register-A wgmma: the PTX is unchanged");
  // And 0 pairs leaves any PTX as it is.
  const std::string seed = embedded_ptx(k_seed_variant);
  const Amplified none = amplify_ptx(seed, 0, "seed.ptx");
  EXPECT_EQ(none.ptx, seed);
  EXPECT_FALSE(none.changed());
  EXPECT_EQ(none.describe(), "not amplified (amplify 0)");
}

TEST(Amplify, AWgmmaItCannotProveSafeIsLeftAloneWithTheReason) {
  const std::string wait = "\twgmma.commit_group.sync.aligned;\n\twgmma.wait_group.sync.aligned 1;\n";
  // MN-major B (imm-trans-b 1): no A tile is provably inside B's footprint.
  const std::string mn_major = snippet_kernel(
      "\twgmma.fence.sync.aligned;\n\twgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%r100,%r101}, "
      "{%r10,%r11,%r12,%r13}, %rd1, %p1, 1, 1, 1;\n" + wait);
  Amplified a = amplify_ptx(mn_major, 2, "mn.ptx");
  EXPECT_FALSE(a.changed());
  EXPECT_EQ(a.ptx, mn_major);
  ASSERT_EQ(a.skipped.size(), 1U);
  EXPECT_EQ(a.skipped[0].reason, "its B is MN-major (imm-trans-b 1): no A tile is provably inside B's footprint");
  EXPECT_EQ(a.skipped[0].line, 14);
  // An f16 accumulator: the pairs' rounding is bounded for f32 only.
  a = amplify_ptx(snippet_kernel("\twgmma.mma_async.sync.aligned.m64n64k16.f16.f16.f16 {%r100,%r101}, {%r10,%r11,%r12,%r13}, "
                         "%rd1, %p1, 1, 1, 0;\n" + wait),
                  2, "f16.ptx");
  ASSERT_EQ(a.skipped.size(), 1U);
  EXPECT_EQ(a.skipped[0].reason, "its accumulator is f16: the pairs' rounding is bounded for f32 only");
  // A guarded wgmma: the pairs would run where it does not.
  a = amplify_ptx(snippet_kernel("\t@%p2 wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%r100,%r101}, "
                         "{%r10,%r11,%r12,%r13}, %rd1, %p1, 1, 1, 0;\n" + wait),
                  2, "guarded.ptx");
  ASSERT_EQ(a.skipped.size(), 1U);
  EXPECT_EQ(a.describe(), "none of its 1 register-A wgmma(s) could be amplified (it is guarded: the pairs would run "
                          "where it does not): the PTX is unchanged");
  // A wgmma on the same line as another statement still gets its pairs, right before it.
  a = amplify_ptx(snippet_kernel("\tmov.b32 %r1, 0; wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%r100,%r101}, "
                         "{%r10,%r11,%r12,%r13}, %rd1, %p1, 1, 1, 0;\n" + wait),
                  1, "same-line.ptx");
  ASSERT_EQ(a.sites.size(), 1U);
  EXPECT_NE(a.ptx.find("\tmov.b32 %r1, 0; \n\t// loraprobe amplify"), std::string::npos) << a.ptx;
}

TEST(Amplify, PairsOutsideTheRangeAreAUsageError) {
  const std::string seed = embedded_ptx(k_seed_variant);
  EXPECT_THROW((void)amplify_ptx(seed, -1, "seed.ptx"), UsageError);
  EXPECT_THROW((void)amplify_ptx(seed, k_max_amplify + 1, "seed.ptx"), UsageError);
  EXPECT_NO_THROW((void)amplify_ptx(seed, k_max_amplify, "seed.ptx"));
  EXPECT_THROW((void)amplify_ptx("not ptx at all", 2, "junk.ptx"), sass::ListingError);
  // The sweep's axis takes exactly the range the transform does (lp_plan does not link lp_ptx).
  EXPECT_EQ(plan::axis_info(plan::AxisId::amplify).min, 0);
  EXPECT_EQ(plan::axis_info(plan::AxisId::amplify).max, k_max_amplify);
}

/// The ptxas at .tools/ptxas/<version> or the toolkit's ("toolkit").
std::optional<compile::PtxasInfo> ptxas_of(const std::string& spec) {
  if (spec != "toolkit" && !std::filesystem::exists(std::string(LP_SOURCE_DIR) + "/.tools/ptxas/" + spec + "/ptxas")) {
    return std::nullopt;
  }
  return compile::resolve_ptxas(spec);
}

TEST(Amplify, TheAmplifiedPtxAssemblesAndItsSassKeepsTheHazardWhereTheOriginalHadOne) {
  LP_REQUIRE_NVDISASM(found);
  const sass::Nvdisasm& nvdisasm = *found;
  struct Row {
    std::string name;
    std::string ptx;
    std::string ptxas;
    bool hazard;  ///< the unamplified SASS's (DESIGN.md: 3.6/3.7 under every ptxas; 3.8 under <= 13.2)
  };
  const std::vector<Row> rows = {
      {"3.6.0 bn128", embedded_ptx(k_seed_variant), "toolkit", true},
      {"3.6.0 bn128", embedded_ptx(k_seed_variant), "13.3.73", true},
      {"3.6.0 bn32", embedded_ptx("expand-fp32-bf16-m64n32k32-w4s2-evenk-add-s1"), "toolkit", false},
      {"3.6.0 bn128 s1", embedded_ptx("expand-fp32-bf16-m64n128k32-w4s1-evenk-add-s1"), "toolkit", false},
      {"3.8.0 bn128", seed_ptx("3.8.0"), "toolkit", true},
      {"3.8.0 bn128", seed_ptx("3.8.0"), "13.3.73", false},
      {"3.9.0 bn128", seed_ptx("3.9.0"), "13.4.92", false},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.name + " under ptxas " + row.ptxas);
    const std::optional<compile::PtxasInfo> ptxas = ptxas_of(row.ptxas);
    ASSERT_TRUE(ptxas.has_value()) << "scripts/install_tools.sh installs ptxas " << row.ptxas;
    const std::size_t original =
        sass::analyze_cubin(compile::compile_with_ptxas(*ptxas, row.ptx, "original").cubin, nvdisasm, {}, "o.cubin")
            .finding_count();
    EXPECT_EQ(original > 0, row.hazard);
    const compile::PtxasOutput out = compile::compile_with_ptxas(*ptxas, amplify_ptx(row.ptx, 2, row.name).ptx, "amp");
    const sass::CubinReport amplified = sass::analyze_cubin(out.cubin, nvdisasm, {}, "amplified.cubin");
    EXPECT_EQ(amplified.finding_count() > 0, row.hazard) << out.log;
    ASSERT_EQ(amplified.kernels.size(), 1U);
    EXPECT_EQ(amplified.kernels[0].stats.wgmma, 2 + 2 * 2 * 2);
  }
}

}  // namespace
}  // namespace lp::ptx
