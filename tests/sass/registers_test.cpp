// The register width table of registers.hpp and the wgmma footprint decoder.
#include <gtest/gtest.h>

#include "sass/registers.hpp"

namespace lp::sass {
namespace {

RegisterEffects fx(std::string_view text) { return register_effects(parse_instruction(0, text)); }

std::vector<GprRange> writes(std::string_view text) { return fx(text).writes; }

TEST(RegisterEffects, WriteWidthsFromTheOpcode) {
  using V = std::vector<GprRange>;
  EXPECT_EQ(writes("LDS.64 R88, [R112+UR6+0x4000]"), (V{{88, 2}}));
  EXPECT_EQ(writes("LDS.128 R36, [R5+UR6]"), (V{{36, 4}}));
  EXPECT_EQ(writes("LDS.U16 R3, [R2]"), (V{{3, 1}}));
  EXPECT_EQ(writes("LDG.E.128.CONSTANT R4, desc[UR4][R2.64]"), (V{{4, 4}}));
  EXPECT_EQ(writes("LDC.64 R2, c[0x0][0x210]"), (V{{2, 2}}));
  EXPECT_EQ(writes("LDSM.16.M88.4 R8, [R3]"), (V{{8, 4}}));
  EXPECT_EQ(writes("LDSM.16.MT88.2 R8, [R3]"), (V{{8, 2}}));
  EXPECT_EQ(writes("LDSM.16.M88 R8, [R3]"), (V{{8, 1}}));
  EXPECT_EQ(writes("IMAD.WIDE R2, R5, 0x4, R2"), (V{{2, 2}}));
  EXPECT_EQ(writes("IMAD.WIDE.U32 R6, R5, 0x4, RZ"), (V{{6, 2}}));
  EXPECT_EQ(writes("CS2R R80, SRZ"), (V{{80, 2}}));
  EXPECT_EQ(writes("CS2R.32 R80, SR_CLOCKLO"), (V{{80, 1}}));
  EXPECT_EQ(writes("F2FP.BF16.F32.PACK_AB R88, R89, R88"), (V{{88, 1}}));
  EXPECT_EQ(writes("MOV R41, R51"), (V{{41, 1}}));
  EXPECT_EQ(writes("IMAD.MOV.U32 R19, RZ, RZ, R3"), (V{{19, 1}}));
  EXPECT_EQ(writes("DADD R4, R2, R6"), (V{{4, 2}}));
  EXPECT_EQ(writes("F2F.F64.F32 R4, R2"), (V{{4, 2}}));
  EXPECT_EQ(writes("F2F.F32.F64 R4, R2"), (V{{4, 1}}));  // F2F names the destination type first
  EXPECT_EQ(writes("I2F.F64.S64 R4, R2"), (V{{4, 2}}));
  EXPECT_EQ(writes("F2I.S64.TRUNC R4, R2"), (V{{4, 2}}));
  EXPECT_EQ(writes("I2F.S64 R4, R2"), (V{{4, 2}}));  // conservative: any 64-bit type widens
  EXPECT_EQ(writes("SHF.L.U64.HI R5, R4, 0x2, R5"), (V{{5, 1}}));
  EXPECT_EQ(writes("HMMA.16816.F32.BF16 R4, R8, R12, R4"), (V{{4, 4}}));
  EXPECT_EQ(writes("HMMA.16816.F16 R4, R8, R12, R4"), (V{{4, 2}}));
  EXPECT_EQ(writes("ATOMG.E.EXCH.64.STRONG.GPU R2, desc[UR4][R4.64], R6"), (V{{2, 2}}));
}

TEST(RegisterEffects, DestinationsAfterLeadingPredicates) {
  using V = std::vector<GprRange>;
  EXPECT_EQ(writes("SHFL.IDX PT, R3, R2, RZ, 0x1f"), (V{{3, 1}}));
  EXPECT_EQ(writes("LOP3.LUT P0, R5, R2, 0x80, RZ, 0xc0, !PT"), (V{{5, 1}}));
  EXPECT_EQ(writes("IADD3 R98, P3, R97, R96, RZ"), (V{{98, 1}}));
}

TEST(RegisterEffects, NoGprDestination) {
  EXPECT_TRUE(writes("ISETP.NE.AND P0, PT, R5, -0x1, PT").empty());
  EXPECT_TRUE(writes("FSETP.GT.AND P0, PT, R5, R6, PT").empty());
  EXPECT_TRUE(writes("STS.64 [R1], R4").empty());
  EXPECT_TRUE(writes("LDGSTS.E.BYPASS.128 [R6+0x4000], desc[UR12][R8.64], P1").empty());
  EXPECT_TRUE(writes("ULDC.64 UR6, c[0x0][0x250]").empty());
  EXPECT_TRUE(writes("LDS RZ, [RZ]").empty());
  EXPECT_TRUE(writes("BAR.SYNC.DEFER_BLOCKING 0x0").empty());
  EXPECT_TRUE(writes("WARPGROUP.DEPBAR.LE gsb0, 0x1").empty());
}

TEST(RegisterEffects, Reads) {
  using V = std::vector<GprRange>;
  EXPECT_EQ(fx("STS.64 [R1+0x10], R4").reads, (V{{1, 1}, {4, 2}}));
  EXPECT_EQ(fx("STG.E.U16 desc[UR12][R112.64], R7").reads, (V{{112, 2}, {7, 1}}));
  EXPECT_EQ(fx("F2FP.BF16.F32.PACK_AB R24, R28, R24").reads, (V{{28, 1}, {24, 1}}));
  EXPECT_EQ(fx("IMAD.WIDE R2, R5, 0x4, R8").reads, (V{{5, 1}, {8, 2}}));
  EXPECT_EQ(fx("DADD R4, R2, R6").reads, (V{{2, 2}, {6, 2}}));
}

TEST(DecodeWgmma, RegisterAFootprintFollowsTheShape) {
  WgmmaShape w = decode_wgmma(parse_instruction(0, "HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR8], R24, gsb0"));
  EXPECT_EQ(w.accumulator, (GprRange{24, 64}));  // m64n128 f32: n/2
  ASSERT_TRUE(w.a_registers.has_value());
  EXPECT_EQ(*w.a_registers, (GprRange{88, 4}));  // m64k16 16-bit
  EXPECT_TRUE(w.commits);
  EXPECT_TRUE(w.accumulate);
  EXPECT_EQ(w.a_bits, 16);
}

TEST(DecodeWgmma, ImplicitF16InputsAndF16Accumulators) {
  // nvdisasm omits the default F16 input type.
  WgmmaShape f16in = decode_wgmma(parse_instruction(0, "HGMMA.64x16x16.F32 R24, R36, gdesc[UR4], R24, gsb0"));
  EXPECT_EQ(*f16in.a_registers, (GprRange{36, 4}));
  EXPECT_EQ(f16in.accumulator, (GprRange{24, 8}));
  WgmmaShape f16acc = decode_wgmma(parse_instruction(0, "HGMMA.64x64x16.F16 R0, R40, gdesc[UR4], R0"));
  EXPECT_EQ(f16acc.accumulator, (GprRange{0, 16}));  // f16 accumulators: n/4
  EXPECT_FALSE(f16acc.commits);
}

TEST(DecodeWgmma, EightBitAndTf32) {
  WgmmaShape q = decode_wgmma(parse_instruction(0, "QGMMA.64x128x32.F32.E4M3.E4M3 R0, R64, gdesc[UR4], R0, gsb0"));
  EXPECT_EQ(*q.a_registers, (GprRange{64, 4}));  // k32 8-bit
  EXPECT_EQ(q.a_bits, 8);
  WgmmaShape t = decode_wgmma(parse_instruction(0, "HGMMA.64x64x8.F32.TF32 R0, R64, gdesc[UR4], R0"));
  EXPECT_EQ(*t.a_registers, (GprRange{64, 4}));  // k8 tf32
  EXPECT_EQ(t.a_bits, 32);
  WgmmaShape i = decode_wgmma(parse_instruction(0, "IGMMA.64x64x32.S32.S8.S8 R0, R64, gdesc[UR4], R0"));
  EXPECT_EQ(i.accumulator, (GprRange{0, 32}));
}

TEST(DecodeWgmma, DescriptorAAndZeroAccumulator) {
  WgmmaShape d = decode_wgmma(parse_instruction(0, "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4].tnspB, RZ, !UPT, gsb0"));
  EXPECT_FALSE(d.a_registers.has_value());
  EXPECT_FALSE(d.accumulate);
  EXPECT_TRUE(d.commits);
  RegisterEffects e = register_effects(parse_instruction(0, "HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], RZ, !UPT"));
  EXPECT_EQ(e.writes, (std::vector<GprRange>{{24, 64}}));
  EXPECT_TRUE(e.reads.empty());
}

TEST(DecodeWgmma, InconsistentOrIncompleteIsAnError) {
  EXPECT_THROW(decode_wgmma(parse_instruction(0, "HGMMA.64x64x16.F32.E4M3 R0, R4, gdesc[UR4], R0")),
               std::invalid_argument);
  EXPECT_THROW(decode_wgmma(parse_instruction(0, "HGMMA.F32.BF16 R0, R4, gdesc[UR4], R0")), std::invalid_argument);
  EXPECT_THROW(decode_wgmma(parse_instruction(0, "HGMMA.64x64x16 R0, R4, gdesc[UR4], R0")), std::invalid_argument);
  EXPECT_THROW(decode_wgmma(parse_instruction(0, "HGMMA.64x64x16.F32.BF16 R0, 0x1, R0")), std::invalid_argument);
}

TEST(WarpgroupDepbar, CountOrNothing) {
  EXPECT_EQ(warpgroup_depbar_count(parse_instruction(0, "WARPGROUP.DEPBAR.LE gsb0, 0x1")), 1);
  EXPECT_EQ(warpgroup_depbar_count(parse_instruction(0, "DEPBAR.LE SB0, 0x0")), std::nullopt);
  EXPECT_THROW(warpgroup_depbar_count(parse_instruction(0, "WARPGROUP.DEPBAR.LE gsb0")), std::invalid_argument);
}

}  // namespace
}  // namespace lp::sass
