// The PTX-level wgmma hazard check: hand-written snippets, the Triton 3.6 PTX of
// the embedded set, and the race control.

#include "ptx/ptx_check.hpp"

#include <gtest/gtest.h>

#include <string>

#include "kernels/kernel_sets.hpp"
#include "ptx/ptx_fixtures.hpp"
#include "sass/instruction.hpp"
#include "sweep/race_control.hpp"

namespace lp::ptx {
namespace {

using fixtures::seed_ptx;
using fixtures::snippet_kernel;

// One register-A wgmma: A = %r10..%r13, D = %r100..%r103, B descriptor %rd1.
const std::string k_wgmma =
    "\twgmma.mma_async.sync.aligned.m64n8k16.f32.bf16.bf16 {%r100,%r101,%r102,%r103}, {%r10,%r11,%r12,%r13}, %rd1, "
    "%p1, 1, 1, 0;\n";

TEST(PtxCheck, AWriteBeforeTheWaitIsAFinding) {
  const PtxReport r = analyze_ptx(snippet_kernel("\twgmma.fence.sync.aligned;\n" + k_wgmma +
                                         "\twgmma.commit_group.sync.aligned;\n"
                                         "\tcvt.rn.bf16x2.f32 %r11, %r20, %r21;\n"
                                         "\twgmma.wait_group.sync.aligned 0;\n"),
                                  "before.ptx");
  ASSERT_EQ(r.finding_count(), 1U);
  const PtxFinding& f = r.functions.at(0).findings.at(0);
  EXPECT_EQ(f.check, "wgmma-a-reg-reuse");
  EXPECT_EQ(f.function, "k");
  EXPECT_EQ(f.instruction, "cvt.rn.bf16x2.f32 %r11, %r20, %r21");
  EXPECT_EQ(f.registers, std::vector<std::string>{"%r11"});
  EXPECT_EQ(f.access, "write");
  EXPECT_EQ(f.line, 16);
  EXPECT_EQ(f.wgmma_line, 14);
  EXPECT_FALSE(f.over_back_edge);
  EXPECT_EQ(r.functions[0].wgmma, 1U);
  EXPECT_EQ(r.functions[0].wgmma_register_a, 1U);
}

TEST(PtxCheck, AWriteAfterTheWaitIsClean) {
  const PtxReport r = analyze_ptx(snippet_kernel("\twgmma.fence.sync.aligned;\n" + k_wgmma +
                                         "\twgmma.commit_group.sync.aligned;\n"
                                         "\twgmma.wait_group.sync.aligned 0;\n"
                                         "\tcvt.rn.bf16x2.f32 %r11, %r20, %r21;\n"),
                                  "after.ptx");
  EXPECT_EQ(r.finding_count(), 0U);
  EXPECT_EQ(r.functions.at(0).max_groups_in_flight, 1);
}

TEST(PtxCheck, WaitGroupOneLeavesTheYoungestGroupPendingAcrossTheBackEdge) {
  // Triton 3.6's k-loop: A is written at the top of the trip, the wgmma issued,
  // wait_group 1 leaves it in flight while the next trip writes A again.
  const std::string loop = "$L__BB0_1:\n\tld.shared.v2.b32 {%r20, %r21}, [%r5+16384];\n"
                           "\tcvt.rn.bf16x2.f32 %r10, %r21, %r20;\n"
                           "\twgmma.fence.sync.aligned;\n" +
                           k_wgmma +
                           "\twgmma.commit_group.sync.aligned;\n"
                           "\twgmma.wait_group.sync.aligned 1;\n"
                           "\tadd.s32 %r6, %r6, 1;\n"
                           "\tsetp.ne.b32 %p2, %r6, %r7;\n"
                           "\t@%p2 bra $L__BB0_1;\n"
                           "\twgmma.wait_group.sync.aligned 0;\n";
  const PtxReport r = analyze_ptx(snippet_kernel(loop), "loop.ptx");
  ASSERT_EQ(r.finding_count(), 1U);
  const PtxFinding& f = r.functions[0].findings[0];
  EXPECT_EQ(f.instruction, "cvt.rn.bf16x2.f32 %r10, %r21, %r20");
  EXPECT_TRUE(f.over_back_edge);
  EXPECT_EQ(r.functions[0].max_groups_in_flight, 2);

  // The same loop with wait_group 0: the group is retired before the back-edge.
  std::string waited = loop;
  waited.replace(waited.find("wait_group.sync.aligned 1"), 25, "wait_group.sync.aligned 0");
  EXPECT_EQ(analyze_ptx(snippet_kernel(waited), "loop0.ptx").finding_count(), 0U);
}

TEST(PtxCheck, CopiesAfterTheWaitAreClean) {
  // Triton 3.8's form: the next trip writes other registers and copies them into
  // A only after the wait that retires the wgmma reading A.
  const std::string loop = "$L__BB0_1:\n\tcvt.rn.bf16x2.f32 %r30, %r21, %r20;\n"
                           "\twgmma.wait_group.sync.aligned 0;\n"
                           "\tmov.b32 %r10, %r30;\n"
                           "\twgmma.fence.sync.aligned;\n" +
                           k_wgmma +
                           "\twgmma.commit_group.sync.aligned;\n"
                           "\t@%p2 bra $L__BB0_1;\n"
                           "\twgmma.wait_group.sync.aligned 0;\n";
  EXPECT_EQ(analyze_ptx(snippet_kernel(loop), "copies.ptx").finding_count(), 0U);
}

TEST(PtxCheck, TheAccumulatorIsHeldTooButAChainedWgmmaIsNot) {
  const std::string body = "\twgmma.fence.sync.aligned;\n" + k_wgmma + k_wgmma +
                           "\twgmma.commit_group.sync.aligned;\n"
                           "\tmov.b32 %r40, %r101;\n"
                           "\twgmma.wait_group.sync.aligned 0;\n";
  const PtxReport r = analyze_ptx(snippet_kernel(body), "acc.ptx");
  ASSERT_EQ(r.finding_count(), 2U);  // the read of %r101, against each of the two pending wgmmas
  for (const PtxFinding& f : r.functions[0].findings) {
    EXPECT_EQ(f.check, "wgmma-acc-in-flight");
    EXPECT_EQ(f.access, "read");
    EXPECT_EQ(f.registers, std::vector<std::string>{"%r101"});
  }
}

TEST(PtxCheck, ScopesLabelsAndGuardsAreRead) {
  // An inline-asm scope, a "::" in an opcode (not a label), a guarded write that may happen.
  const std::string body = "\twgmma.fence.sync.aligned;\n" + k_wgmma +
                           "\twgmma.commit_group.sync.aligned;\n"
                           "\tfence.proxy.async.shared::cta;\n"
                           "\t{\n\t.reg .b32 tmp;\n\t@%p3 mov.b32 %r12, 7;\n\t}\n"
                           "\twgmma.wait_group.sync.aligned 0;\n";
  const PtxReport r = analyze_ptx(snippet_kernel(body), "scope.ptx");
  ASSERT_EQ(r.finding_count(), 1U);
  EXPECT_EQ(r.functions[0].findings[0].instruction, "@%p3 mov.b32 %r12, 7");
}

TEST(PtxCheck, BadPtxIsAnErrorNamingTheLine) {
  try {
    analyze_ptx("this is not ptx", "x.ptx");
    ADD_FAILURE() << "accepted";
  } catch (const sass::ListingError& e) {
    EXPECT_STREQ(e.what(), "x.ptx:0: no .entry or .func with a body: not PTX");
  }
  try {
    analyze_ptx(snippet_kernel("\t@%p1 bra $L__nowhere;\n"), "y.ptx");
    ADD_FAILURE() << "accepted";
  } catch (const sass::ListingError& e) {
    EXPECT_STREQ(e.what(), "y.ptx:13: branch target '$L__nowhere' is not a label of function 'k'");
  }
  try {
    analyze_ptx(snippet_kernel("\twgmma.wait_group.sync.aligned;\n"), "z.ptx");
    ADD_FAILURE() << "accepted";
  } catch (const sass::ListingError& e) {
    EXPECT_STREQ(e.what(), "z.ptx:13: wgmma.wait_group without a count: 'wgmma.wait_group.sync.aligned'");
  }
  // fuzz/corpus/ptx/regression-wait-group-overflow.ptx: a count too large for an int.
  try {
    analyze_ptx(snippet_kernel("\twgmma.wait_group.sync.aligned 99999999999999999999;\n"), "w.ptx");
    ADD_FAILURE() << "accepted";
  } catch (const sass::ListingError& e) {
    EXPECT_STREQ(e.what(), "w.ptx:13: wgmma.wait_group count 99999999999999999999 is too large");
  }
}

TEST(PtxCheck, Triton36PtxOfTheVllmDefaultExpandBreaksTheRule) {
  // The embedded set is Triton 3.6.0: its PTX writes the pending A registers itself.
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const kernels::KernelSet& set = sets.at("3.6.0");
  const kernels::Variant* hazard = set.find("expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1");
  ASSERT_NE(hazard, nullptr);
  const PtxReport r = analyze_ptx(set.contents(*hazard->ptx), hazard->id);
  // Two wgmma per trip (block_k 32 = 2 x k16); wait_group 1 after the second retires
  // the first, so the second's A (%r137..%r140) is what the next trip's cvt overwrites.
  ASSERT_EQ(r.finding_count(), 4U);
  for (const PtxFinding& f : r.functions.at(0).findings) {
    EXPECT_EQ(f.check, "wgmma-a-reg-reuse");
    EXPECT_EQ(f.instruction.rfind("cvt.rn.bf16x2.f32 %r1", 0), 0U) << f.instruction;
    EXPECT_TRUE(f.over_back_edge);
    EXPECT_EQ(f.wgmma_instruction.find("{%r137,%r138,%r139,%r140}") != std::string::npos, true) << f.wgmma_instruction;
  }
  EXPECT_EQ(r.functions[0].findings[0].registers, std::vector<std::string>{"%r137"});
  EXPECT_EQ(attribution(r.finding_count(), 8), "ptx");
  // block_n 32: the PTX breaks the rule too, and only ptxas's serialisation
  // (DEPBAR.LE gsb0, 0x0) keeps its SASS clean: attribution "none", by luck.
  const kernels::Variant* bn32 = set.find("expand-fp32-bf16-m64n32k32-w4s2-evenk-add-s1");
  ASSERT_NE(bn32, nullptr);
  EXPECT_EQ(analyze_ptx(set.contents(*bn32->ptx), bn32->id).finding_count(), 4U);
  // bf16 input (A from shared memory) and one stage: nothing pending to break.
  for (const char* id : {"expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1", "expand-fp32-bf16-m64n128k32-w4s1-evenk-add-s1"}) {
    SCOPED_TRACE(id);
    const kernels::Variant* v = set.find(id);
    ASSERT_NE(v, nullptr);
    const PtxReport clean = analyze_ptx(set.contents(*v->ptx), v->id);
    EXPECT_EQ(clean.finding_count(), 0U);
  }
}

TEST(PtxCheck, Triton37StillBreaksTheRuleAnd38And39DoNot) {
  // triton #9514/#9530 copy the A fragments after the wait from Triton 3.8 on.
  const PtxReport t37 = analyze_ptx(seed_ptx("3.7.1"), "3.7.1");
  EXPECT_EQ(t37.finding_count(), 4U);
  EXPECT_EQ(t37.functions.at(0).findings.at(0).instruction.rfind("cvt.rn.bf16x2.f32", 0), 0U);
  for (const char* version : {"3.8.0", "3.9.0"}) {
    SCOPED_TRACE(version);
    const PtxReport r = analyze_ptx(seed_ptx(version), version);
    EXPECT_EQ(r.finding_count(), 0U);
    ASSERT_EQ(r.functions.size(), 1U);
    EXPECT_EQ(r.functions[0].wgmma_register_a, 2U);  // still register-A wgmmas, two per trip
    EXPECT_EQ(r.functions[0].max_groups_in_flight, 2);  // and still one group left pending over the back-edge
    EXPECT_EQ(attribution(r.finding_count(), 8), "ptxas");
  }
}

TEST(PtxCheck, TheRaceControlBreaksTheRuleOnPurpose) {
  const PtxReport r = analyze_ptx(sweep::race_control_ptx(), "race-control.ptx");
  ASSERT_GE(r.finding_count(), 1U);
  EXPECT_EQ(r.functions.at(0).wgmma, 17U);
  for (const PtxFinding& f : r.functions[0].findings) {
    EXPECT_TRUE(f.over_back_edge);
  }
}

TEST(PtxCheck, AttributionSaysWhoMadeTheHazard) {
  EXPECT_EQ(attribution(3, 8), "ptx");
  EXPECT_EQ(attribution(0, 8), "ptxas");
  EXPECT_EQ(attribution(0, 0), "none");
  EXPECT_EQ(attribution(3, 0), "none");  // the PTX breaks the rule, but this SASS serialised it
}

}  // namespace
}  // namespace lp::ptx
