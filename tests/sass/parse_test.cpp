// Operand and instruction syntax, the two listing front-ends, and their errors.
#include <gtest/gtest.h>

#include "sass/instruction.hpp"
#include "sass/listing.hpp"

namespace lp::sass {
namespace {

TEST(ParseOperand, RegistersOfEveryFile) {
  Operand r = parse_operand("R88.reuse");
  ASSERT_EQ(r.kind, OperandKind::reg);
  EXPECT_EQ(r.gpr(), 88);
  EXPECT_FALSE(parse_operand("RZ").gpr().has_value());
  EXPECT_EQ(parse_operand("UR6").reg->file, RegisterFile::uniform);
  EXPECT_TRUE(parse_operand("URZ").reg->is_zero());
  Operand p = parse_operand("!PT");
  EXPECT_EQ(p.reg->file, RegisterFile::predicate);
  EXPECT_TRUE(p.negated);
  EXPECT_TRUE(p.reg->is_zero());
  EXPECT_EQ(parse_operand("!UP1").reg->file, RegisterFile::uniform_predicate);
  EXPECT_EQ(parse_operand("B0").reg->file, RegisterFile::barrier);
  EXPECT_EQ(parse_operand("SR_CTAID.X").reg->file, RegisterFile::special);
  EXPECT_EQ(parse_operand("-|R5|").gpr(), 5);
  EXPECT_EQ(parse_operand("R7.H0_H0").gpr(), 7);
}

TEST(ParseOperand, MemoryConstantDescriptorTargetFlag) {
  Operand m = parse_operand("[R112+UR6+0x4000]");
  EXPECT_EQ(m.kind, OperandKind::memory);
  ASSERT_EQ(m.inner_gprs.size(), 1u);
  EXPECT_EQ(m.inner_gprs[0], (GprRange{112, 1}));
  Operand d = parse_operand("desc[UR12][R2.64+0x100]");
  EXPECT_EQ(d.kind, OperandKind::memory);
  ASSERT_EQ(d.inner_gprs.size(), 1u);
  EXPECT_EQ(d.inner_gprs[0], (GprRange{2, 2}));
  EXPECT_EQ(parse_operand("c[0x0][0x28]").kind, OperandKind::constant);
  Operand g = parse_operand("gdesc[UR8].tnspB");
  EXPECT_EQ(g.kind, OperandKind::descriptor);
  EXPECT_TRUE(g.inner_gprs.empty());
  Operand t = parse_operand("`(.L_x_1)");
  EXPECT_EQ(t.kind, OperandKind::target);
  EXPECT_EQ(t.label, ".L_x_1");
  EXPECT_EQ(parse_operand("gsb0").kind, OperandKind::flag);
  Operand i = parse_operand("-0x1");
  EXPECT_EQ(i.kind, OperandKind::immediate);
  EXPECT_EQ(i.value, ~std::uint64_t{0});
  EXPECT_EQ(parse_operand("0x20c0").value, 0x20c0u);
  EXPECT_EQ(parse_operand("+INF").kind, OperandKind::immediate);
  EXPECT_EQ(parse_operand("{4,3}").kind, OperandKind::other);
}

TEST(ParseOperand, MalformedRegisterIsAnError) {
  EXPECT_THROW(parse_operand("R12x"), std::invalid_argument);
  EXPECT_THROW(parse_operand("[R1+0x10"), std::invalid_argument);
}

TEST(SplitOperands, CommasInsideBracketsAndBracesStay) {
  auto v = split_operands("R1, desc[UR4][R2.64], {4,3}, `(.L_x_1)");
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[1], "desc[UR4][R2.64]");
  EXPECT_EQ(v[2], "{4,3}");
  EXPECT_TRUE(split_operands("").empty());
}

TEST(ParseInstruction, GuardOpcodeModifiersOperandsText) {
  Instruction insn = parse_instruction(0x1d30, "  @!P0 HGMMA.64x128x16.F32.BF16 R24, R92, gdesc[UR8], R24, gsb0 ;");
  EXPECT_EQ(insn.address, 0x1d30u);
  ASSERT_TRUE(insn.guard.has_value());
  EXPECT_TRUE(insn.guard->negated);
  EXPECT_EQ(insn.guard->reg.index, 0);
  EXPECT_EQ(insn.base, "HGMMA");
  EXPECT_EQ(insn.modifiers, (std::vector<std::string>{"64x128x16", "F32", "BF16"}));
  ASSERT_EQ(insn.operands.size(), 5u);
  EXPECT_EQ(insn.text, "@!P0 HGMMA.64x128x16.F32.BF16 R24, R92, gdesc[UR8], R24, gsb0");
  EXPECT_FALSE(insn.always_executes());
  EXPECT_TRUE(insn.may_execute());

  Instruction never = parse_instruction(0, "@!PT LDS RZ, [RZ]");
  EXPECT_FALSE(never.may_execute());
  Instruction always = parse_instruction(0, "@PT MOV R1, R2");
  EXPECT_TRUE(always.always_executes());
  Instruction bare = parse_instruction(0, "WARPGROUP.ARRIVE ;");
  EXPECT_TRUE(bare.operands.empty());
  EXPECT_EQ(bare.modifiers, std::vector<std::string>{"ARRIVE"});
}

TEST(ParseInstruction, RejectsANonPredicateGuardAndAMissingOpcode) {
  EXPECT_THROW(parse_instruction(0, "@R1 MOV R1, R2"), std::invalid_argument);
  EXPECT_THROW(parse_instruction(0, "@P0"), std::invalid_argument);
  EXPECT_THROW(parse_instruction(0, "r1, r2"), std::invalid_argument);
}

constexpr std::string_view k_small_listing = R"(	.headerflags	@"EF_CUDA_SM90 EF_CUDA_ACCELERATORS"
//--------------------- .text.k              --------------------------
	.section	.text.k,"ax",@progbits
	.sectionflags	@"SHF_BARRIERS=1"
        .global         k
k:
.text.k:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/               @P0 BRA `(.L_x_0) ;   /* 0x000fea000383ffff */
                                                     /* 0x000fc00003800000 */
        /*0020*/                   EXIT ;
.L_x_1:
//--------------------- .nv.info                 --------------------------
	.section	.nv.info,"",@"SHT_CUDA_INFO"
)";

TEST(TextListing, FunctionsLabelsArchAndEncodingComments) {
  Listing l = parse_text_listing(k_small_listing, "small.sass");
  EXPECT_EQ(l.arch, "sm_90a");
  ASSERT_EQ(l.kernels.size(), 1u);
  const KernelListing& k = l.kernels[0];
  EXPECT_EQ(k.name, "k");
  ASSERT_EQ(k.instructions.size(), 3u);
  EXPECT_EQ(k.instructions[1].text, "@P0 BRA `(.L_x_0)");
  EXPECT_EQ(k.instructions[1].line, 10);
  EXPECT_EQ(k.labels.at(".L_x_0"), 0x10u);
  EXPECT_EQ(k.labels.at(".L_x_1"), 0x30u);  // after the last instruction
  EXPECT_EQ(k.labels.at("k"), 0x0u);
}

TEST(TextListing, CuobjdumpSassFormat) {
  constexpr std::string_view text = R"(
	code for sm_90a
		Function : expand
	.headerflags	@"EF_CUDA_SM90"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                   /* 0x00000a00ff017b82 */
                                                                            /* 0x000fe20000000800 */
        /*0010*/              @!P0 BRA 0x0 ;                                /* 0x0000000000008947 */
        /*0020*/                   EXIT ;
		..........
)";
  Listing l = parse_text_listing(text, "cuobjdump");
  ASSERT_EQ(l.kernels.size(), 1u);
  EXPECT_EQ(l.kernels[0].name, "expand");
  EXPECT_EQ(l.kernels[0].instructions.size(), 3u);
  EXPECT_EQ(l.kernels[0].instructions[1].operands[0].value, 0u);
}

TEST(TextListing, ABareSnippetIsOneFunctionNamedAfterItsSource) {
  Listing l = parse_text_listing("/*0000*/ MOV R1, R2 ;\n/*0010*/ EXIT ;\n", "snippet");
  ASSERT_EQ(l.kernels.size(), 1u);
  EXPECT_EQ(l.kernels[0].name, "snippet");
}

TEST(TextListing, ErrorsNameTheSourceAndLine) {
  try {
    (void)parse_text_listing("/*0000*/ MOV R1, R2 ;\n\n/*0010*/ @X9 MOV R1, R2 ;\n", "bad.sass");
    FAIL() << "no error";
  } catch (const ListingError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_STREQ(e.what(), "bad.sass:3: guard '@X9' is not a predicate");
  }
  try {
    (void)parse_text_listing("/*0000*/ MOV R1, R2 ;\nthis is not sass\n", "bad.sass");
    FAIL() << "no error";
  } catch (const ListingError& e) {
    EXPECT_STREQ(e.what(), "bad.sass:2: cannot parse 'this is not sass'");
  }
  try {
    (void)parse_text_listing("/*0010*/ MOV R1, R2 ;\n/*0010*/ EXIT ;\n", "bad.sass");
    FAIL() << "no error";
  } catch (const ListingError& e) {
    EXPECT_STREQ(e.what(), "bad.sass:2: address 0x0010 does not follow the previous one");
  }
}

constexpr std::string_view k_json = R"([{"SM":{"version":{"major":9,"minor":0}},"Producer":"nvdisasm V13.5.37"},
[{"function-name":"k","start":0,"length":48,"sass-instructions":[
 {"opcode":"LDS.64","operands":"R92,[R109+UR6+0x4000]"},
 {"predicate":"@P2","opcode":"BRA","operands":"0x0","other-attributes":{"control-flow":"True"}},
 {"opcode":"EXIT","other-attributes":{"control-flow":"True"}}]}]])";

TEST(JsonListing, InstructionsAddressesAndArch) {
  Listing l = parse_json_listing(k_json, "k.json");
  EXPECT_EQ(l.arch, "sm_90");
  EXPECT_EQ(l.producer, "nvdisasm V13.5.37");
  ASSERT_EQ(l.kernels.size(), 1u);
  const auto& insns = l.kernels[0].instructions;
  ASSERT_EQ(insns.size(), 3u);
  EXPECT_EQ(insns[0].text, "LDS.64 R92, [R109+UR6+0x4000]");
  EXPECT_EQ(insns[1].address, 0x10u);
  EXPECT_EQ(insns[1].text, "@P2 BRA 0x0");
}

TEST(JsonListing, RefusesTheLostCommaOfOlderNvdisasm) {
  std::string bad(k_json);
  bad.replace(bad.find("R92,[R109"), 9, "R92[R109");
  try {
    (void)parse_json_listing(bad, "old.json");
    FAIL() << "no error";
  } catch (const UnreliableJsonError& e) {
    EXPECT_EQ(e.line(), 1);
  }
}

TEST(JsonListing, LengthMustMatchTheInstructionCount) {
  std::string bad(k_json);
  bad.replace(bad.find("\"length\":48"), 11, "\"length\":64");
  EXPECT_THROW((void)parse_json_listing(bad, "bad.json"), ListingError);
}

TEST(ParseJsonListing, WrongTypesDeepInTheLayoutAreListingErrors) {
  // Found by fuzz/sass_fuzzer's corpus: a number where nvdisasm writes an object
  // must be a ListingError, not a stray nlohmann exception.
  EXPECT_THROW(parse_json_listing(R"([{}, [5]])", "x.json"), ListingError);
  EXPECT_THROW(parse_json_listing(R"([{}, [{"sass-instructions": 7, "length": 16}]])", "x.json"), ListingError);
  EXPECT_THROW(parse_json_listing("[1e99999]", "x.json"), ListingError);
  // An SM record without "version" once read past the end of the JSON object (ASan);
  // a malformed SM record just leaves the architecture unknown.
  for (const char* header : {R"([{"SM":{"vnrsion":5}},[]])", R"([{"SM":{"version":5}},[]])", R"([{"SM":3},[]])"}) {
    const Listing listing = parse_json_listing(header, "x.json");
    EXPECT_TRUE(listing.arch.empty()) << header;
    EXPECT_TRUE(listing.kernels.empty()) << header;
  }
}

}  // namespace
}  // namespace lp::sass
