// The gdc-early-read check on PTX: hand-written snippets (the four shapes of issue
// 32) and the dual-stream expand of every embedded Triton set.

#include "ptx/early_read.hpp"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "kernels/kernel_sets.hpp"
#include "ptx/ptx_check.hpp"

namespace lp::ptx {
namespace {

/// A kernel with two pointer parameters: 0 is produced by the previous grid (the
/// shrink's buffer), 1 is not (the LoRA weights); %rd1 and %rd2 hold them.
std::string two_pointer_kernel(const std::string& body) {
  return ".version 8.7\n.target sm_90a\n.address_size 64\n\n.visible .entry k(\n\t.param .u64 k_param_0,\n"
         "\t.param .u64 k_param_1\n)\n{\n\t.reg .pred %p<4>;\n\t.reg .b32 %r<20>;\n\t.reg .b64 %rd<20>;\n"
         "\tld.param.b64 %rd1, [k_param_0];\n\tld.param.b64 %rd2, [k_param_1];\n"
         "\tcvta.to.global.u64 %rd3, %rd1;\n\tcvta.to.global.u64 %rd4, %rd2;\n"
         "\tmul.wide.s32 %rd5, %r1, 4;\n\tadd.s64 %rd6, %rd3, %rd5;\n\tadd.s64 %rd7, %rd4, %rd5;\n" +
         body + "\n\tret;\n}\n";
}

const ProducedParams k_buffer{{0, "input_ptr"}};

std::vector<EarlyRead> early_reads(const std::string& body) {
  const PtxReport r = analyze_ptx(two_pointer_kernel(body), "k.ptx", k_buffer);
  return r.functions.at(0).early_reads;
}

TEST(EarlyRead, AProducedLoadBeforeTheWaitIsAFinding) {
  const auto found = early_reads("\tld.global.b32 %r2, [%rd6];\n\tgriddepcontrol.wait;\n");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].function, "k");
  EXPECT_EQ(found[0].instruction, "ld.global.b32 %r2, [%rd6]");
  EXPECT_EQ(found[0].param, "input_ptr");
  EXPECT_EQ(found[0].line, 20);
  EXPECT_EQ(found[0].wait_line, 21);
  EXPECT_EQ(found[0].wait_instruction, "griddepcontrol.wait");
}

TEST(EarlyRead, AProducedLoadAfterTheWaitIsClean) {
  EXPECT_TRUE(early_reads("\tgriddepcontrol.wait;\n\tld.global.b32 %r2, [%rd6];\n").empty());
}

TEST(EarlyRead, AWeightLoadBeforeTheWaitIsClean) {
  // vLLM prefetches the weights before the wait: they are no grid's output.
  EXPECT_TRUE(early_reads("\tld.global.b32 %r2, [%rd7];\n\tgriddepcontrol.wait;\n"
                          "\tld.global.b32 %r3, [%rd6];\n")
                  .empty());
}

TEST(EarlyRead, AnIndexLoadedFromAProducedBufferDoesNotTaintItsUse) {
  // The value read after the wait is data: a weight address built from it is not the buffer.
  EXPECT_TRUE(early_reads("\tgriddepcontrol.wait;\n\tld.global.b32 %r4, [%rd6];\n\tmul.wide.s32 %rd8, %r4, 4;\n"
                          "\tadd.s64 %rd9, %rd4, %rd8;\n\tld.global.b32 %r5, [%rd9];\n")
                  .empty());
}

TEST(EarlyRead, APrologueLoadBeforeAnInLoopWaitIsAFinding) {
  // The pipelined shape of triton #11905: the first tile's cp.async is issued
  // before the loop, the only wait is inside it.
  const auto found = early_reads(
      "\tcp.async.cg.shared.global [%r6], [%rd7], 16, %r7;\n"
      "\tcp.async.cg.shared.global [%r8], [%rd6], 16, %r7;\n"
      "\tcp.async.commit_group;\n"
      "$L__BB0_1:\n"
      "\tgriddepcontrol.wait;\n"
      "\tcp.async.wait_group 0;\n"
      "\tadd.s64 %rd6, %rd6, 64;\n"
      "\tcp.async.cg.shared.global [%r8], [%rd6], 16, %r7;\n"
      "\tsetp.lt.s32 %p1, %r9, %r10;\n"
      "\t@%p1 bra $L__BB0_1;\n");
  ASSERT_EQ(found.size(), 1U);
  EXPECT_EQ(found[0].instruction, "cp.async.cg.shared.global [%r8], [%rd6], 16, %r7");
  EXPECT_EQ(found[0].line, 21);
}

TEST(EarlyRead, AGuardedWaitDoesNotEndThePath) {
  const auto found = early_reads("\t@%p1 griddepcontrol.wait;\n\tld.global.b32 %r2, [%rd6];\n");
  EXPECT_EQ(found.size(), 1U);
}

TEST(EarlyRead, OneBranchThatSkipsTheWaitIsEnough) {
  const auto found = early_reads("\t@%p1 bra $L__skip;\n\tgriddepcontrol.wait;\n$L__skip:\n"
                                 "\tld.global.b32 %r2, [%rd6];\n");
  EXPECT_EQ(found.size(), 1U);
}

TEST(EarlyRead, AKernelWithoutAWaitIsNotChecked) {
  const PtxReport r = analyze_ptx(two_pointer_kernel("\tld.global.b32 %r2, [%rd6];\n"), "k.ptx", k_buffer);
  EXPECT_EQ(r.early_read_count(), 0U);
  EXPECT_EQ(r.functions.at(0).gdc_waits, 0U);
}

TEST(EarlyRead, NothingProducedNothingFound) {
  const PtxReport r = analyze_ptx(two_pointer_kernel("\tld.global.b32 %r2, [%rd6];\n\tgriddepcontrol.wait;\n"), "k.ptx");
  EXPECT_EQ(r.early_read_count(), 0U);
  EXPECT_EQ(r.functions.at(0).gdc_waits, 1U);
}

TEST(EarlyRead, SharedAndParamLoadsAreNotGlobalReads) {
  EXPECT_TRUE(early_reads("\tld.shared.b32 %r2, [%r6];\n\tld.param.b64 %rd10, [k_param_0];\n"
                          "\tgriddepcontrol.wait;\n")
                  .empty());
}

std::string dual_stream_ptx(const std::string& version) {
  const std::string path = std::string(LP_SOURCE_DIR) + "/tests/ptx/fixtures/triton-" + version +
                           "-expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1-gdc.ptx";
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path << " (tests/ptx/make_fixtures.sh makes it)";
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

TEST(EarlyRead, TheDualStreamExpandOfTriton36To38ReadsTheBufferInItsPrologueAnd39DoesNot) {
  // vLLM's dual-stream expand at its default (2 stages): Triton 3.6.0-3.8.0 pipeline the
  // k-loop and issue the first activation tile before the only wait, which is inside
  // the loop (triton #11905); Triton 3.9.0 leaves a loop that waits unpipelined, so
  // every activation load follows its wait (what triton #11906 proposes).
  for (const std::string version : {"3.6.0", "3.7.1", "3.8.0", "3.9.0"}) {
    const PtxReport r = analyze_ptx(dual_stream_ptx(version), version, k_buffer);
    ASSERT_EQ(r.functions.size(), 1U) << version;
    const PtxFunctionReport& f = r.functions[0];
    EXPECT_GE(f.gdc_waits, 1U) << version;
    if (version == "3.9.0") {
      EXPECT_EQ(f.early_reads.size(), 0U) << version;
      continue;
    }
    ASSERT_GE(f.early_reads.size(), 1U) << version;
    for (const EarlyRead& e : f.early_reads) {
      EXPECT_EQ(e.param, "input_ptr") << version;
      EXPECT_LT(e.line, e.wait_line) << version << ": a prologue load, before the loop's wait";
      EXPECT_EQ(e.wait_instruction.rfind("griddepcontrol.wait", 0), 0U) << version;
    }
  }
}

TEST(EarlyRead, EveryEmbeddedSetsDualStreamExpandIsCheckedAndItsWeightsAreNot) {
  // Each set's dual-stream expand at vLLM's default: the report names input_ptr
  // whenever it finds anything, never lora_ptr, and the vLLM-shaped gdc-off
  // variant of the same config has no wait to check.
  const kernels::KernelSets sets = kernels::KernelSets::load();
  int checked = 0;
  for (const std::string& version : sets.versions()) {
    const kernels::KernelSet& set = sets.at(version);
    const kernels::Variant* gdc = set.find("expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1-gdc");
    ASSERT_NE(gdc, nullptr) << version;
    ASSERT_EQ(gdc->produced, std::vector<std::string>{"input_ptr"}) << version;
    const PtxReport r = analyze_ptx(set.contents(*gdc->ptx), gdc->id, gdc->produced_ordinals());
    ASSERT_EQ(r.functions.size(), 1U);
    EXPECT_GE(r.functions[0].gdc_waits, 1U) << version;
    for (const EarlyRead& e : r.functions[0].early_reads) {
      EXPECT_EQ(e.param, "input_ptr") << version << ": " << e.instruction;
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(sets.versions().size()));
}

}  // namespace
}  // namespace lp::ptx
