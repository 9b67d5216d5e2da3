// The analysis on real SASS of our own expand kernel (tests/sass/fixtures,
// README.md there says where each file came from), plus report invariants that
// must hold after every run.
#include <gtest/gtest.h>

#include <set>
#include <nlohmann/json.hpp>

#include "support/print_name.hpp"
#include "support/nvdisasm.hpp"
#include "sass/analyze.hpp"
#include "sass/cubin.hpp"
#include "sass/registers.hpp"
#include "sass/sass_fixtures.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::sass {
namespace {

const std::string k_hazard = "expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1";
const std::string k_block_n32 = "expand-fp32-bf16-m64n32k32-w4s2-evenk-noadd-s1";
const std::string k_stages1 = "expand-fp32-bf16-m64n128k32-w4s1-evenk-noadd-s1";
const std::string k_bf16 = "expand-bf16-bf16-m64n128k32-w4s2-evenk-noadd-s1";

using fixtures::fixture;

/// Invariants of any report against the listing it came from (after bloaty's
/// test fixture): names unique, findings point at real instructions, registers
/// are ones the racing MMA holds, counts add up.
void check_invariants(const ListingReport& report, const Listing& listing) {
  ASSERT_EQ(report.kernels.size(), listing.kernels.size());
  std::set<std::string> names;
  std::size_t total = 0;
  for (std::size_t i = 0; i < report.kernels.size(); ++i) {
    const KernelReport& k = report.kernels[i];
    const KernelListing& l = listing.kernels[i];
    EXPECT_TRUE(names.insert(k.name).second) << "duplicate kernel " << k.name;
    EXPECT_EQ(k.stats.instructions, l.instructions.size());
    EXPECT_LE(k.stats.wgmma_register_a, k.stats.wgmma);
    EXPECT_EQ(k.stats.max_groups_in_flight > 0, k.stats.wgmma > 0);
    total += k.findings.size();
    for (const Finding& f : k.findings) {
      auto at = [&](std::uint64_t a) -> const Instruction* {
        for (const auto& insn : l.instructions) {
          if (insn.address == a) {
            return &insn;
          }
        }
        return nullptr;
      };
      const Instruction* insn = at(f.address);
      const Instruction* mma = at(f.wgmma_address);
      ASSERT_NE(insn, nullptr) << format_address(f.address);
      ASSERT_NE(mma, nullptr) << format_address(f.wgmma_address);
      EXPECT_EQ(insn->text, f.instruction);
      ASSERT_TRUE(is_wgmma(*mma)) << mma->text;
      ASSERT_FALSE(f.registers.empty());
      EXPECT_TRUE(std::is_sorted(f.registers.begin(), f.registers.end()));
      const WgmmaShape w = decode_wgmma(*mma);
      const GprRange held = f.check == "wgmma-a-reg-reuse" ? *w.a_registers : w.accumulator;
      for (int r : f.registers) {
        EXPECT_TRUE(held.contains(r)) << gpr_name(r) << " is not held by " << mma->text;
      }
    }
  }
  EXPECT_EQ(report.finding_count(), total);
}

struct ListingCase {
  std::string name;
  std::string id;
  std::size_t findings;
  bool a_from_registers;
  int max_groups_in_flight;
};

using test_support::PrintTo;  // a case prints as its name

class RealListing : public ::testing::TestWithParam<ListingCase> {};

TEST_P(RealListing, FindingsStatsAndInvariants) {
  const ListingCase& c = GetParam();
  const std::string text = fixture(c.id + ".sass");
  const Listing listing = parse_text_listing(text, c.id);
  const ListingReport r = analyze_parsed(listing, {}, c.id);
  check_invariants(r, listing);
  ASSERT_EQ(r.kernels.size(), 1u);
  const KernelReport& k = r.kernels[0];
  EXPECT_EQ(k.name, "_lora_expand_kernel");
  EXPECT_EQ(r.arch, "sm_90a");
  EXPECT_EQ(k.findings.size(), c.findings) << nlohmann::json(k.findings).dump(1);
  EXPECT_EQ(k.stats.wgmma, 2u);
  EXPECT_EQ(k.stats.a_from_registers(), c.a_from_registers);
  EXPECT_EQ(k.stats.max_groups_in_flight, c.max_groups_in_flight);
  EXPECT_EQ(k.stats.back_edges, 1u);
  EXPECT_EQ(k.stats.local_loads + k.stats.local_stores, 0u);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RealListing,
                         ::testing::Values(ListingCase{"hazard", k_hazard, 6, true, 2},
                                           ListingCase{"block_n32", k_block_n32, 0, true, 1},
                                           ListingCase{"num_stages1", k_stages1, 0, true, 1},
                                           ListingCase{"bf16_input", k_bf16, 0, false, 2}),
                         [](const ::testing::TestParamInfo<ListingCase>& p) { return p.param.name; });

TEST(RealListing, HazardousLoopFindingsExactly) {
  const ListingReport r = analyze_listing(fixture(k_hazard + ".sass"), {}, k_hazard);
  const auto& f = r.kernels.at(0).findings;
  const std::vector<std::pair<std::uint64_t, std::vector<int>>> expected{
      {0x2340, {88, 89}}, {0x2350, {90, 91}}, {0x23d0, {88}}, {0x23e0, {90}}, {0x2440, {89}}, {0x2460, {91}}};
  ASSERT_EQ(f.size(), expected.size());
  for (std::size_t i = 0; i < f.size(); ++i) {
    EXPECT_EQ(f[i].check, "wgmma-a-reg-reuse");
    EXPECT_EQ(f[i].address, expected[i].first);
    EXPECT_EQ(f[i].registers, expected[i].second);
    EXPECT_EQ(f[i].wgmma_address, 0x24c0u);
    EXPECT_EQ(f[i].wgmma_instruction, "HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR8], R24, gsb0");
    EXPECT_TRUE(f[i].over_back_edge);
    // The wait right after the MMA retires all but one group: the MMA stays in flight
    // round the back edge into the next trip's loads.
    EXPECT_EQ(f[i].wait_address, 0x24d0u);
    EXPECT_EQ(f[i].wait_instruction, "WARPGROUP.DEPBAR.LE gsb0, 0x1");
  }
  EXPECT_EQ(f[0].instruction, "LDS.64 R88, [R126+UR6+0x4000]");
}

TEST(RealListing, JsonAndTextFrontEndsAgree) {
  const Listing text = parse_text_listing(fixture(k_hazard + ".sass"), "text");
  const Listing json = parse_json_listing(fixture(k_hazard + ".json"), "json");
  ASSERT_EQ(text.kernels.size(), 1u);
  ASSERT_EQ(json.kernels.size(), 1u);
  const auto& a = text.kernels[0];
  const auto& b = json.kernels[0];
  EXPECT_EQ(a.name, b.name);
  ASSERT_EQ(a.instructions.size(), b.instructions.size());
  for (std::size_t i = 0; i < a.instructions.size(); ++i) {
    const Instruction& x = a.instructions[i];
    const Instruction& y = b.instructions[i];
    SCOPED_TRACE(x.text + " | " + y.text);
    EXPECT_EQ(x.address, y.address);
    EXPECT_EQ(x.opcode, y.opcode);
    EXPECT_EQ(x.guard.has_value(), y.guard.has_value());
    ASSERT_EQ(x.operands.size(), y.operands.size());
    for (std::size_t j = 0; j < x.operands.size(); ++j) {
      if (x.operands[j].kind == OperandKind::target) {
        // The text names the label, the JSON its address.
        EXPECT_EQ(a.labels.at(x.operands[j].label), y.operands[j].value);
      } else {
        EXPECT_EQ(x.operands[j].text, y.operands[j].text);
      }
    }
  }
  const ListingReport ra = analyze_parsed(text, {}, "text");
  const ListingReport rb = analyze_parsed(json, {}, "json");
  EXPECT_EQ(nlohmann::json(ra.kernels), nlohmann::json(rb.kernels));
}

TEST(Cubin, ResourcesFromTheElfMatchTheManifest) {
  const std::vector<std::pair<std::string, int>> expected{{k_hazard, 138}, {k_block_n32, 60}, {k_stages1, 122},
                                                          {k_bf16, 120}};
  for (const auto& [id, registers] : expected) {
    const auto res = read_function_resources(fixture(id + ".cubin"));
    ASSERT_EQ(res.count("_lora_expand_kernel"), 1u) << id;
    const FunctionResources& r = res.at("_lora_expand_kernel");
    EXPECT_EQ(r.registers, registers) << id;
    EXPECT_EQ(r.frame_bytes, 0u) << id;
    EXPECT_EQ(r.min_stack_bytes, 0u) << id;
  }
}

TEST(Cubin, NotAnElfOrTruncated) {
  EXPECT_FALSE(looks_like_elf("// PTX"));
  EXPECT_THROW((void)read_function_resources("// PTX"), lp::Error);
  const std::string cubin = fixture(k_hazard + ".cubin");
  EXPECT_THROW((void)read_function_resources(cubin.substr(0, 200)), lp::Error);
}

TEST(Cubin, ASymbolTableLinkedToAMissingSectionIsAnError) {
  // Found by the cubin fuzzer's gate: the symbol table's sh_link past the section
  // headers escaped as std::out_of_range instead of lp::Error. Here the .symtab of a
  // real cubin gets that link (the one the fuzzer wrote, 0x0a000002).
  std::string cubin = fixture(k_hazard + ".cubin");
  const auto u16 = [&](std::size_t at) {
    return static_cast<std::size_t>(static_cast<unsigned char>(cubin[at]) |
                                    static_cast<unsigned char>(cubin[at + 1]) << 8);
  };
  std::size_t shoff = 0;
  for (int i = 7; i >= 0; --i) {
    shoff = shoff << 8 | static_cast<unsigned char>(cubin[0x28 + static_cast<std::size_t>(i)]);
  }
  const std::size_t shentsize = u16(0x3a);
  const std::size_t shnum = u16(0x3c);
  bool patched = false;
  for (std::size_t i = 0; i < shnum; ++i) {
    const std::size_t header = shoff + i * shentsize;
    if (static_cast<unsigned char>(cubin[header + 4]) == 2) {  // SHT_SYMTAB
      const std::string link("\x02\x00\x00\x0a", 4);
      cubin.replace(header + 0x28, 4, link);
      patched = true;
    }
  }
  ASSERT_TRUE(patched);
  try {
    (void)read_function_resources(cubin);
    FAIL() << "read_function_resources accepted a symbol table without a string table";
  } catch (const lp::Error& e) {
    EXPECT_STREQ(e.what(), "cubin: the symbol table of .nv.info links to a missing string table");
  }
}

TEST(AnalyzeCubin, SameVerdictsAsTheCommittedListings) {
  LP_REQUIRE_NVDISASM(tool);
  for (const std::string& id : {k_hazard, k_block_n32, k_stages1, k_bf16}) {
    SCOPED_TRACE(id);
    const CubinReport c = analyze_cubin(fixture(id + ".cubin"), *tool, {}, id);
    const ListingReport l = analyze_listing(fixture(id + ".sass"), {}, id);
    ASSERT_EQ(c.kernels.size(), 1u);
    EXPECT_EQ(nlohmann::json(c.kernels[0].findings), nlohmann::json(l.kernels[0].findings));
    EXPECT_TRUE(c.kernels[0].stats.registers.has_value());
    EXPECT_EQ(c.listing_format, tool->json_reliable() ? "json" : "text");
    EXPECT_EQ(c.cubin_bytes, fixture(id + ".cubin").size());
    nlohmann::json j = c;
    EXPECT_EQ(j["disassembler"]["version"], tool->version);
    EXPECT_EQ(j["kernels"][0]["stats"]["registers"], *c.kernels[0].stats.registers);
  }
}

TEST(AnalyzeCubin, RejectsNonCubinAndBadNvdisasmPath) {
  Nvdisasm fake;
  fake.path = "/nonexistent/nvdisasm";
  EXPECT_THROW((void)analyze_cubin("// PTX", fake), lp::Error);
  NvdisasmSearch bad;
  bad.path = "/bin/true";
  EXPECT_THROW((void)find_nvdisasm(bad), lp::UsageError);
}

}  // namespace
}  // namespace lp::sass
