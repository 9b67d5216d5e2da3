// The gdc-early-read pass on SASS: hand-written listings with a parameter layout
// (parameter 0, the produced buffer, at c[0x0][0x210]; parameter 1, the weights, at
// c[0x0][0x218]; parameter 2, an int, at c[0x0][0x220]).
#include <gtest/gtest.h>

#include "sass/early_read.hpp"

namespace lp::sass {
namespace {

ParamLayout layout() {
  ParamLayout l;
  l.bank_offset = 0x210;
  l.params = {{0, 0x0, 8}, {1, 0x8, 8}, {2, 0x10, 4}};
  return l;
}

const std::map<int, std::string> k_buffer{{0, "input_ptr"}};

EarlyReadScan scan(std::string_view text, const std::map<int, std::string>& produced = k_buffer) {
  const Listing l = parse_text_listing(text, "early");
  EXPECT_EQ(l.kernels.size(), 1U);
  const KernelListing& k = l.kernels.at(0);
  const ControlFlowGraph g = ControlFlowGraph::build(k, "early");
  return find_early_reads(k, g, layout(), produced);
}

// The buffer's address in R6:R7 (from UR4:UR5), the weights' in R4:R5.
constexpr std::string_view k_addresses = R"(
/*0000*/ ULDC.64 UR4, c[0x0][0x210] ;
/*0010*/ LDC.64 R2, c[0x0][0x218] ;
/*0020*/ IMAD.WIDE R4, R0, 0x4, R2 ;
/*0030*/ IADD3 R6, P0, R0, UR4, RZ ;
/*0040*/ IADD3.X R7, RZ, UR5, RZ, P0, !PT ;
)";

TEST(SassEarlyRead, ThePrologueLoadOfTheBufferBeforeTheInLoopAcquireIsAFinding) {
  const EarlyReadScan s = scan(std::string(k_addresses) + R"(
/*0050*/ LDGSTS.E.BYPASS.128 [R10], desc[UR8][R4.64] ;
/*0060*/ LDGSTS.E.BYPASS.128 [R11], desc[UR8][R6.64] ;
.L_x_0:
/*0070*/ ACQBULK ;
/*0080*/ LDG.E R12, desc[UR8][R6.64] ;
/*0090*/ LDG.E R13, desc[UR8][R4.64] ;
/*00a0*/ @P1 BRA `(.L_x_0) ;
/*00b0*/ EXIT ;
)");
  EXPECT_EQ(s.waits, 1U);
  ASSERT_EQ(s.findings.size(), 1U);
  EXPECT_EQ(s.findings[0].address, 0x60U);
  EXPECT_EQ(s.findings[0].param, "input_ptr");
  EXPECT_EQ(s.findings[0].wait_address, 0x70U);
  EXPECT_EQ(s.findings[0].wait_instruction, "ACQBULK");
}

TEST(SassEarlyRead, TheWeightPrefetchIsNotAFinding) {
  const EarlyReadScan s = scan(std::string(k_addresses) + R"(
/*0050*/ LDG.E.128 R12, desc[UR8][R4.64] ;
/*0060*/ ACQBULK ;
/*0070*/ LDG.E R16, desc[UR8][R6.64] ;
/*0080*/ EXIT ;
)");
  EXPECT_TRUE(s.findings.empty());
}

TEST(SassEarlyRead, ARegisterReusedForTheWeightsIsNotTheBuffer) {
  // R6:R7 held the buffer's address, then the weights' (flow-sensitive provenance).
  const EarlyReadScan s = scan(std::string(k_addresses) + R"(
/*0050*/ IMAD.WIDE R6, R0, 0x4, R2 ;
/*0060*/ LDG.E R12, desc[UR8][R6.64] ;
/*0070*/ ACQBULK ;
/*0080*/ EXIT ;
)");
  EXPECT_TRUE(s.findings.empty());
}

TEST(SassEarlyRead, AValueLoadedFromTheBufferIsData) {
  const EarlyReadScan s = scan(std::string(k_addresses) + R"(
/*0050*/ ACQBULK ;
/*0060*/ LDG.E R8, desc[UR8][R6.64] ;
/*0070*/ IMAD.WIDE R14, R8, 0x4, R2 ;
/*0080*/ LDG.E R12, desc[UR8][R14.64] ;
/*0090*/ EXIT ;
)");
  EXPECT_TRUE(s.findings.empty());
}

TEST(SassEarlyRead, AGuardedAcquireDoesNotEndThePath) {
  const EarlyReadScan s = scan(std::string(k_addresses) + R"(
/*0050*/ @P2 ACQBULK ;
/*0060*/ LDG.E R12, desc[UR8][R6.64] ;
/*0070*/ EXIT ;
)");
  EXPECT_EQ(s.findings.size(), 1U);
}

TEST(SassEarlyRead, ABranchAroundTheAcquireIsAPath) {
  const EarlyReadScan s = scan(std::string(k_addresses) + R"(
/*0050*/ @P2 BRA `(.L_x_1) ;
/*0060*/ ACQBULK ;
.L_x_1:
/*0070*/ LDG.E R12, desc[UR8][R6.64] ;
/*0080*/ EXIT ;
)");
  EXPECT_EQ(s.findings.size(), 1U);
}

TEST(SassEarlyRead, AConstantOperandOfTheBufferIsItsAddress) {
  // ptxas folds the parameter into the address arithmetic.
  const EarlyReadScan s = scan(R"(
/*0000*/ IADD3 R6, P0, R0, c[0x0][0x210], RZ ;
/*0010*/ IADD3.X R7, RZ, c[0x0][0x214], RZ, P0, !PT ;
/*0020*/ LDG.E R12, desc[UR8][R6.64] ;
/*0030*/ ACQBULK ;
/*0040*/ EXIT ;
)");
  EXPECT_EQ(s.findings.size(), 1U);
}

TEST(SassEarlyRead, NothingIsCheckedWithoutAnAcquireOrWithoutProducedParameters) {
  const std::string early = std::string(k_addresses) + "/*0050*/ LDG.E R12, desc[UR8][R6.64] ;\n";
  EXPECT_TRUE(scan(early + "/*0060*/ EXIT ;\n").findings.empty());
  EXPECT_TRUE(scan(early + "/*0060*/ ACQBULK ;\n/*0070*/ EXIT ;\n", {}).findings.empty());
  EXPECT_EQ(scan(early + "/*0060*/ ACQBULK ;\n/*0070*/ EXIT ;\n").findings.size(), 1U);
}

TEST(SassEarlyRead, ParamLayoutFindsTheParameterOfABankOffset) {
  const ParamLayout l = layout();
  EXPECT_EQ(l.ordinal_at(0x210), 0);
  EXPECT_EQ(l.ordinal_at(0x217), 0);
  EXPECT_EQ(l.ordinal_at(0x218), 1);
  EXPECT_EQ(l.ordinal_at(0x223), 2);
  EXPECT_FALSE(l.ordinal_at(0x224).has_value());
  EXPECT_FALSE(l.ordinal_at(0x208).has_value());
}

}  // namespace
}  // namespace lp::sass
