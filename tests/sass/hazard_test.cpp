// The wgmma scoreboard analysis on synthetic listings, one edge case each. Every
// test pins the exact findings (or their absence), so a broken model fails.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sass/analyze.hpp"

namespace lp::sass {
namespace {

/// What one finding must be.
struct Expected {
  std::uint64_t address;
  std::vector<int> registers;
  std::uint64_t wgmma;
  bool over_back_edge;
  std::string check = "wgmma-a-reg-reuse";
  std::string access = "write";
};

KernelReport analyze_one(std::string_view text) {
  ListingReport r = analyze_listing(text, {}, "synthetic");
  EXPECT_EQ(r.kernels.size(), 1u);
  return r.kernels.at(0);
}

void expect_findings(const KernelReport& k, const std::vector<Expected>& expected) {
  ASSERT_EQ(k.findings.size(), expected.size()) << nlohmann::json(k.findings).dump(1);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("finding " + std::to_string(i));
    const Finding& f = k.findings[i];
    EXPECT_EQ(f.address, expected[i].address);
    EXPECT_EQ(f.registers, expected[i].registers);
    EXPECT_EQ(f.wgmma_address, expected[i].wgmma);
    EXPECT_EQ(f.over_back_edge, expected[i].over_back_edge);
    EXPECT_EQ(f.check, expected[i].check);
    EXPECT_EQ(f.access, expected[i].access);
  }
}

// The loop body of shared/DESIGN.md, with the glue it elides written out.
constexpr std::string_view k_design_listing = R"(
	.section	.text.design,"ax",@progbits
        /*0000*/                   CS2R R24, SRZ ;
.L_x_1:
        /*0010*/                   LDS.64 R88, [R112+UR6+0x4000] ;
        /*0020*/                   LDS.64 R90, [R112+UR6+0x4400] ;
        /*0030*/                   F2FP.BF16.F32.PACK_AB R88, R89, R88 ;
        /*0040*/                   F2FP.BF16.F32.PACK_AB R89, R91, R90 ;
        /*0050*/                   WARPGROUP.ARRIVE ;
        /*0060*/                   HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR8], R24, gsb0 ;
        /*0070*/                   WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
        /*0080*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0090*/                   ISETP.NE.AND P0, PT, R2, RZ, PT ;
        /*00a0*/               @P0 BRA `(.L_x_1) ;
        /*00b0*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*00c0*/                   F2FP.BF16.F32.PACK_AB R24, R25, R24 ;
        /*00d0*/                   EXIT ;
)";

TEST(Hazard, DesignListingRacesOverTheBackEdge) {
  KernelReport k = analyze_one(k_design_listing);
  EXPECT_EQ(k.name, "design");
  expect_findings(k, {{0x10, {88, 89}, 0x60, true},
                      {0x20, {90, 91}, 0x60, true},
                      {0x30, {88}, 0x60, true},
                      {0x40, {89}, 0x60, true}});
  EXPECT_EQ(k.stats.wgmma, 1u);
  EXPECT_EQ(k.stats.wgmma_register_a, 1u);
  EXPECT_TRUE(k.stats.a_from_registers());
  EXPECT_EQ(k.stats.max_groups_in_flight, 2);  // last trip's group + this trip's, until the DEPBAR
  EXPECT_EQ(k.stats.back_edges, 1u);
}

TEST(Hazard, DepbarZeroInTheLoopRetiresEverything) {
  std::string text(k_design_listing);
  text.replace(text.find("gsb0, 0x1"), 9, "gsb0, 0x0");
  KernelReport k = analyze_one(text);
  expect_findings(k, {});
  EXPECT_EQ(k.stats.max_groups_in_flight, 1);
}

TEST(Hazard, DepbarKeepsExactlyTheYoungestGroups) {
  constexpr std::string_view text = R"(
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x64x16.F32.BF16 R0, R40, gdesc[UR4], R0, gsb0 ;
/*0020*/ HGMMA.64x64x16.F32.BF16 R0, R44, gdesc[UR4], R0, gsb0 ;
/*0030*/ HGMMA.64x64x16.F32.BF16 R0, R48, gdesc[UR4], R0, gsb0 ;
/*0040*/ WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
/*0050*/ MOV R40, RZ ;
/*0060*/ MOV R44, RZ ;
/*0070*/ MOV R48, RZ ;
/*0080*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0090*/ MOV R49, RZ ;
/*00a0*/ MOV R1, RZ ;
/*00b0*/ EXIT ;
)";
  KernelReport k = analyze_one(text);
  expect_findings(k, {{0x70, {48}, 0x30, false}});
  EXPECT_EQ(k.stats.max_groups_in_flight, 3);
}

TEST(Hazard, OnlyOneArmOfABranchWrites) {
  constexpr std::string_view text = R"(
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x64x16.F32.BF16 R0, R40, gdesc[UR4], R0, gsb0 ;
/*0020*/ ISETP.NE.AND P0, PT, R50, RZ, PT ;
/*0030*/ @P0 BRA `(.L_else) ;
/*0040*/ MOV R41, R51 ;
/*0050*/ BRA `(.L_join) ;
.L_else:
/*0060*/ MOV R60, R51 ;
.L_join:
/*0070*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0080*/ MOV R42, R52 ;
/*0090*/ EXIT ;
)";
  expect_findings(analyze_one(text), {{0x40, {41}, 0x10, false}});
}

TEST(Hazard, RetiredOnOneArmOnlyStillRacesAfterTheJoin) {
  constexpr std::string_view text = R"(
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x64x16.F32.BF16 R0, R40, gdesc[UR4], R0, gsb0 ;
/*0020*/ @P0 BRA `(.L_else) ;
/*0030*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0040*/ BRA `(.L_join) ;
.L_else:
/*0050*/ NOP ;
.L_join:
/*0060*/ LDS.128 R40, [R110] ;
/*0070*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0080*/ EXIT ;
)";
  expect_findings(analyze_one(text), {{0x60, {40, 41, 42, 43}, 0x10, false}});
}

TEST(Hazard, TwoNestedLoops) {
  constexpr std::string_view text = R"(
/*0000*/ CS2R R0, SRZ ;
.L_outer:
/*0010*/ MOV R102, RZ ;
.L_inner:
/*0020*/ LDS.64 R40, [R110] ;
/*0030*/ LDS.64 R42, [R110+0x8] ;
/*0040*/ WARPGROUP.ARRIVE ;
/*0050*/ HGMMA.64x64x16.F32.BF16 R0, R40, gdesc[UR4], R0, gsb0 ;
/*0060*/ WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
/*0070*/ IADD3 R102, R102, 0x1, RZ ;
/*0080*/ ISETP.LT.AND P0, PT, R102, 0x4, PT ;
/*0090*/ @P0 BRA `(.L_inner) ;
/*00a0*/ MOV R43, R103 ;
/*00b0*/ IADD3 R104, R104, 0x1, RZ ;
/*00c0*/ ISETP.LT.AND P1, PT, R104, 0x8, PT ;
/*00d0*/ @P1 BRA `(.L_outer) ;
/*00e0*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*00f0*/ EXIT ;
)";
  KernelReport k = analyze_one(text);
  // The loads race with the previous inner trip's HGMMA (inner back edge) and with
  // the last one of the previous outer trip (outer back edge); the MOV after the
  // inner loop races on a straight path.
  expect_findings(k, {{0x20, {40, 41}, 0x50, true}, {0x30, {42, 43}, 0x50, true}, {0xa0, {43}, 0x50, false}});
  EXPECT_EQ(k.stats.back_edges, 2u);
  EXPECT_EQ(k.stats.max_groups_in_flight, 2);
}

TEST(Hazard, PredicatedWritesAndPredicatedDepbar) {
  constexpr std::string_view text = R"(
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x64x16.F32.BF16 R0, R40, gdesc[UR4], R0, gsb0 ;
/*0020*/ @P1 LDS.64 R40, [R110] ;
/*0030*/ @!PT LDS.64 R42, [R110] ;
/*0040*/ @P2 WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0050*/ MOV R43, RZ ;
/*0060*/ @PT WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0070*/ MOV R42, RZ ;
/*0080*/ EXIT ;
)";
  // A guarded write may happen; @!PT never does; a guarded DEPBAR may not retire.
  expect_findings(analyze_one(text), {{0x20, {40, 41}, 0x10, false}, {0x50, {43}, 0x10, false}});
}

TEST(Hazard, ChainWithoutGsb0UntilItsLastMember) {
  constexpr std::string_view text = R"(
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x128x16.F32.BF16 R0, R64, gdesc[UR4], R0 ;
/*0020*/ HGMMA.64x128x16.F32.BF16 R0, R68, gdesc[UR8], R0 ;
/*0030*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0040*/ MOV R65, R100 ;
/*0050*/ HGMMA.64x128x16.F32.BF16 R0, R72, gdesc[UR12], R0, gsb0 ;
/*0060*/ WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
/*0070*/ MOV R70, R100 ;
/*0080*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0090*/ MOV R66, R100 ;
/*00a0*/ MOV R74, R100 ;
/*00b0*/ EXIT ;
)";
  // Members are in flight from their own issue: a DEPBAR before the gsb0 member
  // retires nothing (the group is not committed), and the committed group of
  // three is one group for DEPBAR.LE 1.
  KernelReport k = analyze_one(text);
  expect_findings(k, {{0x40, {65}, 0x10, false}, {0x70, {70}, 0x20, false}});
  EXPECT_EQ(k.stats.max_groups_in_flight, 1);
}

TEST(Hazard, AccumulatorsInFlight) {
  constexpr std::string_view text = R"(
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x64x16.F32.BF16 R0, R40, gdesc[UR4], R0, gsb0 ;
/*0020*/ HGMMA.64x64x16.F32.BF16 R0, R44, gdesc[UR4], R0, gsb0 ;
/*0030*/ F2FP.BF16.F32.PACK_AB R100, R1, R0 ;
/*0040*/ HGMMA.64x32x16.F32.BF16 R16, R48, gdesc[UR4], R16, gsb0 ;
/*0050*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0060*/ F2FP.BF16.F32.PACK_AB R100, R3, R2 ;
/*0070*/ EXIT ;
)";
  // The second HGMMA chains on the same accumulator (allowed); reading it and a
  // differently shaped MMA overwriting part of it are not.
  std::vector<int> r16_31;
  for (int r = 16; r < 32; ++r) {
    r16_31.push_back(r);
  }
  expect_findings(analyze_one(text), {
                                         {0x30, {0, 1}, 0x10, false, "wgmma-acc-in-flight", "read"},
                                         {0x30, {0, 1}, 0x20, false, "wgmma-acc-in-flight", "read"},
                                         {0x40, r16_31, 0x10, false, "wgmma-acc-in-flight", "read"},
                                         {0x40, r16_31, 0x10, false, "wgmma-acc-in-flight", "write"},
                                         {0x40, r16_31, 0x20, false, "wgmma-acc-in-flight", "read"},
                                         {0x40, r16_31, 0x20, false, "wgmma-acc-in-flight", "write"},
                                     });
}

TEST(Hazard, DescriptorAHoldsOnlyTheAccumulator) {
  constexpr std::string_view text = R"(
.L_x_0:
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x128x16.F32.BF16 R24, gdesc[UR20], R24 ;
/*0020*/ HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24, gsb0 ;
/*0030*/ WARPGROUP.DEPBAR.LE gsb0, 0x1 ;
/*0040*/ LDS.128 R88, [R110] ;
/*0050*/ @P0 BRA `(.L_x_0) ;
/*0060*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0070*/ EXIT ;
)";
  KernelReport k = analyze_one(text);
  expect_findings(k, {});
  EXPECT_EQ(k.stats.wgmma, 2u);
  EXPECT_FALSE(k.stats.a_from_registers());
}

TEST(Hazard, SubroutineWritesCount) {
  constexpr std::string_view text = R"(
/*0000*/ WARPGROUP.ARRIVE ;
/*0010*/ HGMMA.64x64x16.F32.BF16 R0, R40, gdesc[UR4], R0, gsb0 ;
/*0020*/ CALL.REL.NOINC `($slowpath) ;
/*0030*/ WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
/*0040*/ EXIT ;
$slowpath:
/*0050*/ MOV R42, RZ ;
/*0060*/ RET.REL.NODEC R120 0x0 ;
)";
  expect_findings(analyze_one(text), {{0x50, {42}, 0x10, false}});
}

TEST(Checks, TableSelectionAndUnknownIds) {
  ASSERT_GE(all_checks().size(), 2u);
  EXPECT_EQ(all_checks()[0].id, "wgmma-a-reg-reuse");
  EXPECT_NE(find_check("wgmma-acc-in-flight"), nullptr);
  EXPECT_EQ(find_check("nope"), nullptr);
  AnalysisOptions only_a{{"wgmma-a-reg-reuse"}, {}};
  ListingReport r = analyze_listing(k_design_listing, only_a, "synthetic");
  EXPECT_EQ(r.checks, std::vector<std::string>{"wgmma-a-reg-reuse"});
  EXPECT_EQ(r.finding_count(), 4u);
  AnalysisOptions bad{{"wgmma-typo"}, {}};
  EXPECT_THROW((void)analyze_listing(k_design_listing, bad, "synthetic"), lp::UsageError);
}

TEST(Report, JsonShape) {
  ListingReport r = analyze_listing(k_design_listing, {}, "synthetic");
  nlohmann::json j = r;
  EXPECT_EQ(j["finding_count"], 4);
  EXPECT_EQ(j["checks"], nlohmann::json({"wgmma-a-reg-reuse", "wgmma-acc-in-flight", "gdc-early-read"}));
  EXPECT_EQ(j["early_read_count"], 0);  // a listing has no parameter layout
  EXPECT_EQ(j["kernels"][0]["early_reads"], nlohmann::json::array());
  const auto& f = j["kernels"][0]["findings"][0];
  EXPECT_EQ(f, nlohmann::json::parse(R"({
    "check": "wgmma-a-reg-reuse", "kernel": "design", "address": "0x0010",
    "instruction": "LDS.64 R88, [R112+UR6+0x4000]", "access": "write", "registers": ["R88", "R89"],
    "wgmma": {"address": "0x0060", "instruction": "HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR8], R24, gsb0"},
    "over_back_edge": true,
    "wait": {"address": "0x0070", "instruction": "WARPGROUP.DEPBAR.LE gsb0, 0x1"}})"));
  const auto& s = j["kernels"][0]["stats"];
  EXPECT_EQ(s["wgmma"], 1);
  EXPECT_EQ(s["a_from_registers"], true);
  EXPECT_TRUE(s["registers"].is_null());  // a listing carries no ELF
}

}  // namespace
}  // namespace lp::sass
