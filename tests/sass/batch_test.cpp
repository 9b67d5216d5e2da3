// Batched disassembly (sass/batch.hpp): which cubins may be read as raw code, how an
// instruction is made relative to its function again, and that a batched cubin's
// report is the one its ELF gives, whatever shares its nvdisasm run.
#include <gtest/gtest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "support/nvdisasm.hpp"
#include "sass/analyze.hpp"
#include "sass/batch.hpp"
#include "sass/cubin.hpp"
#include "sass/sass_fixtures.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::sass {
namespace {

const std::vector<std::string> k_fixtures = {
    "expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1", "expand-fp32-bf16-m64n32k32-w4s2-evenk-noadd-s1",
    "expand-fp32-bf16-m64n128k32-w4s1-evenk-noadd-s1", "expand-bf16-bf16-m64n128k32-w4s2-evenk-noadd-s1"};

/// The committed cubin of fixture `id`.
std::string cubin_of(const std::string& id) { return fixtures::fixture(id + ".cubin"); }


/// Section header field `offset` (bytes into the header) of the section named `name`.
std::uint64_t* section_field(std::string& elf, const std::string& name, std::size_t offset) {
  std::uint64_t shoff = 0;
  std::uint16_t shnum = 0;
  std::uint16_t shstrndx = 0;
  std::memcpy(&shoff, elf.data() + 0x28, 8);
  std::memcpy(&shnum, elf.data() + 0x3c, 2);
  std::memcpy(&shstrndx, elf.data() + 0x3e, 2);
  std::uint64_t names = 0;
  std::memcpy(&names, elf.data() + shoff + shstrndx * 64 + 24, 8);
  for (std::uint16_t i = 0; i < shnum; ++i) {
    std::uint32_t name_at = 0;
    std::memcpy(&name_at, elf.data() + shoff + i * 64, 4);
    if (std::string(elf.data() + names + name_at) == name) {
      return reinterpret_cast<std::uint64_t*>(elf.data() + shoff + i * 64 + offset);
    }
  }
  ADD_FAILURE() << "no section " << name;
  static std::uint64_t dummy = 0;
  return &dummy;
}

/// The report as JSON without what differs by how it was made: timings, the
/// listing format and input, and nvdisasm's warnings about the ELF.
nlohmann::json comparable(const CubinReport& r) {
  nlohmann::json j = r;
  j.erase("analysis_ms");
  j.erase("disassemble_ms");
  j.erase("warnings");
  j["disassembler"].erase("format");
  j["disassembler"].erase("input");
  return j;
}

/// The same nvdisasm, made to print text: the ELF's text listing has labels, the
/// raw code's has none, so comparing the two checks that labels are undone.
Nvdisasm as_text(Nvdisasm tool) {
  tool.release = {13, 0, 0};
  return tool;
}

TEST(FunctionCode, TheFixturesAreOneSm90aFunction) {
  for (const std::string& id : k_fixtures) {
    SCOPED_TRACE(id);
    const std::string cubin = cubin_of(id);
    const FunctionCodeOrWhy c = function_code(cubin);
    ASSERT_TRUE(c.code.has_value()) << c.why_not;
    EXPECT_EQ(c.code->function, "_lora_expand_kernel");
    EXPECT_EQ(c.code->nvdisasm_arch, "SM90a");
    EXPECT_GT(c.code->code.size(), 1000U);
    EXPECT_EQ(c.code->code.size() % 16, 0U);
  }
}

TEST(FunctionCode, RefusesWhatRawCodeWouldMisread) {
  EXPECT_EQ(function_code("// PTX").why_not, "not a 64-bit little-endian ELF");
  const std::string cubin = cubin_of(k_fixtures[0]);
  EXPECT_FALSE(function_code(cubin.substr(0, 200)).code.has_value());
  {
    std::string relocated = cubin;  // the code's (empty) relocation section, given an entry
    *section_field(relocated, ".rela.text._lora_expand_kernel", 32) = 24;
    EXPECT_EQ(function_code(relocated).why_not, "relocations apply to the code");
  }
  {
    std::string two = cubin;  // a second executable section
    *section_field(two, ".nv.constant0._lora_expand_kernel", 8) |= 0x4;
    EXPECT_EQ(function_code(two).why_not, "more than one executable section");
  }
  {
    std::string other_sm = cubin;  // e_flags SM 0x5a -> 0x64 (sm_100)
    other_sm[0x30] = 0x64;
    EXPECT_EQ(function_code(other_sm).why_not, "not sm_90 (SM 100)");
  }
  {
    std::string object = cubin;  // ET_REL: a relocatable object, not final code
    object[0x10] = 1;
    EXPECT_EQ(function_code(object).why_not, "not an executable cubin (ET_EXEC)");
  }
}

TEST(FunctionCode, TheToolkitsNewLayoutSaysSm90OrSm90a) {
  // ptxas 13 writes the new ELF layout (EI_ABIVERSION 8): the SM sits in bits 8-15 of
  // e_flags and the "a" only in ptxas's command line, .note.nv.tkinfo.
  const std::string ptxas = "/usr/local/cuda/bin/ptxas";
  if (!std::filesystem::exists(ptxas)) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  const TempDir dir("lp-batch-test-");
  const std::string ptx = dir.write("k.ptx", ".version 8.0\n.target sm_90\n.address_size 64\n"
                                             ".visible .entry k(.param .u64 p) { .reg .b64 %rd<2>; "
                                             "ld.param.u64 %rd1, [p]; st.global.u32 [%rd1], 1; ret; }\n");
  for (const std::string arch : {"sm_90", "sm_90a"}) {
    SCOPED_TRACE(arch);
    const std::string out = dir.path() + "/" + arch + ".cubin";
    const ProcessResult r = run_process({ptxas, "--gpu-name", arch, ptx, "-o", out}, {});
    ASSERT_TRUE(r.ok()) << r.err;
    const std::string cubin = read_file(out);
    ASSERT_EQ(static_cast<int>(cubin[8]), 8);  // the new layout, or this test tests nothing new
    const FunctionCodeOrWhy c = function_code(cubin);
    ASSERT_TRUE(c.code.has_value()) << c.why_not;
    EXPECT_EQ(c.code->function, "k");
    EXPECT_EQ(c.code->nvdisasm_arch, arch == "sm_90" ? "SM90" : "SM90a");
  }
}

Instruction at(std::uint64_t address, const std::string& text) { return parse_instruction(address, text); }

TEST(Rebase, MakesAddressAndComputedTargetsRelative) {
  const std::uint64_t base = 0x10000;
  const std::uint64_t size = 0x3000;
  const auto bra = rebase(at(base + 0x40, "@!P0 BRA 0x12680"), base, size);
  ASSERT_TRUE(bra);
  EXPECT_EQ(bra->address, 0x40U);
  EXPECT_EQ(bra->text, "@!P0 BRA 0x2680");
  const auto call = rebase(at(base + 0x50, "CALL.REL.NOINC 0x12fa0"), base, size);
  ASSERT_TRUE(call);
  EXPECT_EQ(call->text, "CALL.REL.NOINC 0x2fa0");
  const auto ret = rebase(at(base + 0x60, "RET.REL.NODEC R46 0x10000"), base, size);
  ASSERT_TRUE(ret);
  EXPECT_EQ(ret->text, "RET.REL.NODEC R46 0x0");
  const auto bssy = rebase(at(base + 0x70, "BSSY B0, 0x13000"), base, size);  // may be the function's end
  ASSERT_TRUE(bssy);
  EXPECT_EQ(bssy->text, "BSSY B0, 0x3000");
  // Other instructions keep their immediates, whatever they look like.
  const auto mov = rebase(at(base + 0x80, "MOV R2, 0x12680"), base, size);
  ASSERT_TRUE(mov);
  EXPECT_EQ(mov->text, "MOV R2, 0x12680");
  EXPECT_EQ(mov->address, 0x80U);
}

TEST(Rebase, RefusesWhatItCannotMakeRelative) {
  const std::uint64_t base = 0x10000;
  const std::uint64_t size = 0x3000;
  EXPECT_FALSE(rebase(at(base + 0x40, "JMP 0x100"), base, size));             // absolute
  EXPECT_FALSE(rebase(at(base + 0x40, "BRX R2 -0x10"), base, size));          // indirect
  EXPECT_FALSE(rebase(at(base + 0x40, "CALL.ABS.NOINC 0x0"), base, size));    // absolute
  EXPECT_FALSE(rebase(at(base + 0x40, "BRA 0x13000"), base, size));           // past the function
  EXPECT_FALSE(rebase(at(base + 0x40, "BRA 0xff00"), base, size));            // before it
  EXPECT_FALSE(rebase(at(base + 0x40, "RET.REL.NODEC R4 0x10010"), base, size));  // not its start
  EXPECT_FALSE(rebase(at(base + 0x3000, "NOP"), base, size));                 // not in the function
}

TEST(DisassembleBatch, EachCubinGivesTheReportItsElfGives) {
  LP_REQUIRE_NVDISASM(tool);
  std::vector<std::string> cubins;
  std::vector<BatchInput> inputs;
  for (const std::string& id : k_fixtures) {
    cubins.push_back(cubin_of(id));
  }
  for (std::size_t i = 0; i < cubins.size(); ++i) {
    inputs.push_back({cubins[i], k_fixtures[i], {}});
  }
  // One run for all four (one job), compared with each cubin's own ELF as text (labels).
  const std::vector<CubinOutcome> batched = analyze_cubins(inputs, *tool, {}, 1);
  ASSERT_EQ(batched.size(), inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(k_fixtures[i]);
    ASSERT_TRUE(batched[i].report) << batched[i].error;
    EXPECT_EQ(batched[i].report->input, "code");
    const CubinReport elf = analyze_cubin(cubins[i], as_text(*tool), {}, k_fixtures[i]);
    EXPECT_EQ(elf.input, "cubin");
    EXPECT_EQ(comparable(*batched[i].report), comparable(elf));
  }
  EXPECT_GT(batched[0].report->finding_count(), 0U);  // the hazard fixture keeps its findings
  EXPECT_EQ(batched[1].report->finding_count(), 0U);  // block_n 32 stays clean
}

TEST(DisassembleBatch, ACubinsListingDoesNotDependOnItsNeighbours) {
  LP_REQUIRE_NVDISASM(tool);
  const std::string a = cubin_of(k_fixtures[0]);
  const std::string b = cubin_of(k_fixtures[3]);
  const std::string c = cubin_of(k_fixtures[2]);
  const auto first = disassemble_batch(*tool, {{a, "a", {}}, {b, "b", {}}, {c, "c", {}}}, 1);
  const auto second = disassemble_batch(*tool, {{c, "c", {}}, {a, "a", {}}}, 1);
  const auto alone = disassemble_batch(*tool, {{a, "a", {}}}, 1);
  ASSERT_TRUE(first[0].disassembly && first[2].disassembly && second[0].disassembly && second[1].disassembly &&
              alone[0].disassembly);
  auto texts = [](const Disassembly& d) {
    std::vector<std::pair<std::uint64_t, std::string>> out;
    for (const Instruction& insn : d.listing.kernels.at(0).instructions) {
      out.emplace_back(insn.address, insn.text);
    }
    return out;
  };
  EXPECT_EQ(texts(*first[0].disassembly), texts(*second[1].disassembly));
  EXPECT_EQ(texts(*first[0].disassembly), texts(*alone[0].disassembly));
  EXPECT_EQ(texts(*first[2].disassembly), texts(*second[0].disassembly));
  EXPECT_EQ(first[0].disassembly->listing.kernels.at(0).instructions.front().address, 0U);
}

TEST(DisassembleBatch, WhatCannotBeBatchedIsReadFromItsElfAndAFailureIsItsOwn) {
  LP_REQUIRE_NVDISASM(tool);
  const std::string good = cubin_of(k_fixtures[1]);
  std::string relocated = good;
  *section_field(relocated, ".rela.text._lora_expand_kernel", 32) = 24;
  const std::string broken = std::string("\x7f" "ELF", 4) + std::string(60, '\0');
  const auto out = disassemble_batch(*tool, {{good, "good", {}}, {relocated, "relocated", {}}, {broken, "broken", {}}}, 2);
  ASSERT_EQ(out.size(), 3U);
  EXPECT_EQ(out[0].input, "code");
  ASSERT_TRUE(out[0].disassembly);
  EXPECT_EQ(out[1].input, "cubin");
  EXPECT_EQ(out[1].why_cubin, "relocations apply to the code");
  EXPECT_FALSE(out[2].disassembly);
  EXPECT_NE(out[2].error.find("broken"), std::string::npos) << out[2].error;
}

}  // namespace
}  // namespace lp::sass
