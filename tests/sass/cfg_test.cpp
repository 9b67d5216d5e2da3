// Control-flow graph edges, including the predicated and subroutine cases.
#include <gtest/gtest.h>

#include "sass/cfg.hpp"

namespace lp::sass {
namespace {

KernelListing kernel(std::string_view text) {
  Listing l = parse_text_listing(text, "cfg");
  EXPECT_EQ(l.kernels.size(), 1u);
  return l.kernels.at(0);
}

/// Successor block indices of the block holding the instruction at `address`.
std::vector<std::size_t> succ(const ControlFlowGraph& g, const KernelListing& k, std::uint64_t address) {
  for (std::size_t i = 0; i < k.instructions.size(); ++i) {
    if (k.instructions[i].address == address) {
      return g.blocks()[g.block_of(i)].successors;
    }
  }
  ADD_FAILURE() << "no instruction at " << address;
  return {};
}

TEST(ControlFlowGraph, PredicatedExitFallsThroughAndExitEnds) {
  KernelListing k = kernel(R"(
/*0000*/ @!P0 EXIT ;
/*0010*/ MOV R1, R2 ;
/*0020*/ EXIT ;
/*0030*/ BRA 0x30 ;
)");
  ControlFlowGraph g = ControlFlowGraph::build(k, "cfg");
  ASSERT_EQ(g.blocks().size(), 3u);
  EXPECT_EQ(succ(g, k, 0x00), (std::vector<std::size_t>{1}));
  EXPECT_TRUE(succ(g, k, 0x20).empty());
  EXPECT_EQ(succ(g, k, 0x30), (std::vector<std::size_t>{2}));  // the trap loop after the kernel
  EXPECT_FALSE(g.blocks()[2].reachable);
  EXPECT_EQ(g.back_edge_count(), 0u);  // unreachable blocks are not searched
}

TEST(ControlFlowGraph, PredicatedBranchHasTwoEdgesAndLoopsHaveBackEdges) {
  KernelListing k = kernel(R"(
/*0000*/ MOV R1, RZ ;
.L_top:
/*0010*/ IADD3 R1, R1, 0x1, RZ ;
/*0020*/ ISETP.LT.AND P0, PT, R1, 0x4, PT ;
/*0030*/ @P0 BRA `(.L_top) ;
/*0040*/ @!PT BRA `(.L_top) ;
/*0050*/ EXIT ;
)");
  ControlFlowGraph g = ControlFlowGraph::build(k, "cfg");
  const auto& loop = g.blocks()[g.block_of(1)];
  EXPECT_EQ(loop.successors, (std::vector<std::size_t>{1, 2}));
  EXPECT_EQ(loop.back_edge, (std::vector<bool>{true, false}));
  EXPECT_EQ(succ(g, k, 0x40), (std::vector<std::size_t>{3}));  // @!PT never branches
  EXPECT_EQ(g.back_edge_count(), 1u);
}

TEST(ControlFlowGraph, CallsEnterSubroutinesAndRetReturnsToEveryCallSite) {
  KernelListing k = kernel(R"(
/*0000*/ CALL.REL.NOINC `($sub) ;
/*0010*/ MOV R1, R2 ;
/*0020*/ CALL.REL.NOINC `($sub) ;
/*0030*/ EXIT ;
$sub:
/*0040*/ MOV R3, R4 ;
/*0050*/ RET.REL.NODEC R20 0x0 ;
)");
  ControlFlowGraph g = ControlFlowGraph::build(k, "cfg");
  const std::size_t sub = g.block_of(4);
  EXPECT_EQ(succ(g, k, 0x00), (std::vector<std::size_t>{sub}));
  EXPECT_EQ(succ(g, k, 0x50), (std::vector<std::size_t>{g.block_of(1), g.block_of(3)}));
  EXPECT_TRUE(g.blocks()[sub].reachable);
}

TEST(ControlFlowGraph, UnknownTargetIsAnErrorNamingTheLine) {
  KernelListing k = kernel("/*0000*/ BRA `(.L_nowhere) ;\n/*0010*/ EXIT ;\n");
  try {
    (void)ControlFlowGraph::build(k, "cfg.sass");
    FAIL() << "no error";
  } catch (const ListingError& e) {
    EXPECT_STREQ(e.what(), "cfg.sass:1: branch target '.L_nowhere' is not a label of function 'cfg'");
  }
  KernelListing k2 = kernel("/*0000*/ BRA 0x18 ;\n/*0010*/ EXIT ;\n");
  EXPECT_THROW((void)ControlFlowGraph::build(k2, "cfg.sass"), ListingError);
}

}  // namespace
}  // namespace lp::sass
