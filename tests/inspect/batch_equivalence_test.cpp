// Batched disassembly (sass/batch.hpp) over the embedded kernel sets: every cubin's
// report from a batched run equals the one from its own ELF, read as text (the
// listing with labels), field for field but for timings, format and nvdisasm's
// warnings. By default a fixed sample of each set (every 48th variant, in manifest
// order, and 12 more variants with a subroutine call: about 100 cubins, 30 s of
// nvdisasm on 2 cores); with
// LP_BATCH_EQUIVALENCE=all every cubin of every set (scripts/check_batch_equivalence.sh,
// about 6 minutes on 2 cores).
#include <gtest/gtest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "kernels/kernel_sets.hpp"
#include "sass/analyze.hpp"
#include "test_support.hpp"
#include "util/parallel.hpp"

namespace lp::inspect {
namespace {

nlohmann::json comparable(const sass::CubinReport& r) {
  nlohmann::json j = r;
  for (const char* key : {"analysis_ms", "disassemble_ms", "warnings"}) {
    j.erase(key);
  }
  j["disassembler"].erase("format");
  j["disassembler"].erase("input");
  return j;
}

TEST(BatchEquivalence, EachEmbeddedCubinGivesTheReportOfItsElf) {
  LP_REQUIRE_NVDISASM(tool);
  const char* scope = std::getenv("LP_BATCH_EQUIVALENCE");
  const bool all = scope != nullptr && std::string(scope) == "all";
  const kernels::KernelSets sets = kernels::KernelSets::load();
  std::vector<std::string> names;
  std::vector<std::string> cubins;
  std::size_t with_calls = 0;
  for (const kernels::KernelSet& set : sets.all()) {
    std::size_t n = 0;
    for (const kernels::Variant& v : set.variants()) {
      if (!v.ok()) {
        continue;
      }
      // The per-slice expands call a 64-bit remainder subroutine inside their function.
      const bool calls = v.id.find("perslice") != std::string::npos;
      const bool sampled = n++ % 48 == 0;
      if (all || sampled || (calls && with_calls < 12)) {
        with_calls += calls ? 1 : 0;
        names.push_back(set.triton() + "/" + v.id);
        cubins.push_back(set.contents(*v.cubin));
      }
    }
  }
  ASSERT_GE(cubins.size(), 90U);  // 97 at 3069741
  std::vector<sass::BatchInput> inputs;
  for (std::size_t i = 0; i < cubins.size(); ++i) {
    inputs.push_back({cubins[i], names[i], std::nullopt});
  }
  const std::vector<sass::CubinOutcome> batched = sass::analyze_cubins(inputs, *tool, {}, 0);
  sass::Nvdisasm text = *tool;  // the ELF as text: the listing with labels
  text.release = {13, 0, 0};
  std::vector<std::optional<sass::CubinReport>> from_elf(inputs.size());
  parallel_for(inputs.size(), 0, [&](std::size_t i) { from_elf[i] = sass::analyze_cubin(cubins[i], text, {}, names[i]); });
  std::size_t as_code = 0;
  std::size_t findings = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    SCOPED_TRACE(names[i]);
    ASSERT_TRUE(batched[i].report) << batched[i].error;
    ASSERT_TRUE(from_elf[i]);
    as_code += batched[i].report->input == "code" ? 1 : 0;
    findings += batched[i].report->finding_count();
    nlohmann::json elf = comparable(*from_elf[i]);
    if (from_elf[i]->arch.empty()) {
      // The ELF's text listing of ptxas 13's new layout names no architecture; the raw code's does.
      elf["arch"] = batched[i].report->arch;
    }
    EXPECT_EQ(comparable(*batched[i].report), elf);
  }
  EXPECT_EQ(as_code, inputs.size()) << "every embedded cubin is one relocation-free sm_90a function";
  EXPECT_GT(findings, 0U);
  std::printf("batch equivalence: %zu cubins (%s), %zu findings, %zu with subroutine calls\n", inputs.size(),
              all ? "all" : "sample", findings, with_calls);
}

}  // namespace
}  // namespace lp::inspect
