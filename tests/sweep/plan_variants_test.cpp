// A dry run resolves every case's variants before any GPU time is spent
// (sweep/case_variants.hpp cases_without_variant): what a run would skip, and why.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kernels/kernel_sets.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "sweep/case_variants.hpp"

namespace lp::sweep {
namespace {

TEST(PlanVariants, CasesWithoutAVariantAreCountedByWhatIsMissing) {
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const plan::Plan p = plan::expand_plan(
      plan::parse_config(R"({"axes": {"triton": ["3.6.0", "3.9.0"], "op": ["expand"], "input_dtype": ["fp32"],
                                      "num_stages": [2, 8], "tokens": [256, 512]}})",
                         "t.json"),
      sets.versions());
  ASSERT_EQ(p.cases.size(), 8U);
  const std::vector<plan::Dropped> missing = cases_without_variant(p, sets);
  ASSERT_EQ(missing.size(), 2U);
  for (const plan::Dropped& d : missing) {
    EXPECT_EQ(d.count, 2U) << d.reason;  // two token counts of each set's num_stages 8
    EXPECT_NE(d.reason.find("no expand variant with num_stages=8 in the kernel set"), std::string::npos) << d.reason;
    EXPECT_EQ(d.reason.find("nearest"), std::string::npos) << "the examples are left out of the reason";
  }
  EXPECT_EQ(missing[0].reason.rfind("Triton 3.6.0: ", 0), 0U);
  EXPECT_EQ(missing[1].reason.rfind("Triton 3.9.0: ", 0), 0U);
  // The default config runs whole: every case finds its variant.
  const plan::Plan whole = plan::expand_plan(plan::load_embedded_config("default"), sets.versions());
  EXPECT_TRUE(cases_without_variant(whole, sets).empty());
}

TEST(PlanVariants, ADryRunNamesTheWidthsTheVariantsCannotTake) {
  // Qwen3.6-35B-A3B's shared_expert_gate expands into N = 1; the expand variants were
  // compiled to assume N divisible by 16, so the launch would refuse them: the dry run
  // says so for exactly those cases.
  const kernels::KernelSets sets = kernels::KernelSets::load();
  plan::SweepConfig c = plan::parse_config(
      R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, "axes": {"triton": ["3.9.0"], "op": ["expand"],
          "rank": [64], "tokens": [256], "input_dtype": ["bf16"], "weight_dtype": ["bf16"], "compiler": ["prebuilt"]}})",
      "m.json");
  const plan::Plan p = plan::expand_plan(c, sets.versions());
  const std::vector<plan::Dropped> missing = cases_without_variant(p, sets);
  ASSERT_EQ(missing.size(), 1U);
  EXPECT_EQ(missing[0].count, 1U);
  EXPECT_EQ(missing[0].reason, "Triton 3.9.0: variant expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1 assumes N is "
                               "divisible by 16; the case has N=1 (the sets carry no variant specialised for it)");
}

TEST(PlanVariants, AModelSweepFindsAVariantForEveryCase) {
  // sweep --model on the shipped configs: the sets carry what vLLM launches for every
  // projection, in every embedded Triton, at any tensor parallelism and SM count.
  const kernels::KernelSets sets = kernels::KernelSets::load();
  struct Run {
    const char* model;
    std::int64_t tp;
    std::int64_t sms;
    const char* config;
  };
  std::vector<Run> runs;
  for (const char* model : {"qwen3.6-35b-a3b", "qwen3-30b-a3b"}) {
    for (const std::int64_t tp : {1, 4, 8}) {
      for (const std::int64_t sms : {78, 132}) {
        for (const char* config : {"default", "seed-48590", "check"}) {
          runs.push_back({model, tp, sms, config});
        }
      }
    }
  }
  for (const char* model : {"qwen3.5-9b", "llama-3.1-8b", "gemma-3-27b"}) {
    runs.push_back({model, 1, 132, "default"});
  }
  for (const Run& r : runs) {
    plan::SweepConfig c = plan::load_embedded_config(r.config);
    plan::FlagOverrides flags;
    flags.model = r.model;
    flags.tp = r.tp;
    flags.sm_count = r.sms;
    plan::apply_flags(c, flags);
    const plan::Plan p = plan::expand_plan(c, sets.versions());
    const std::string what = fmt::format("{} --tp {} --sm-count {} --config {}", r.model, r.tp, r.sms, r.config);
    EXPECT_GT(p.cases.size(), 0U) << what;
    for (const plan::Dropped& d : cases_without_variant(p, sets)) {
      // A width below 16 (shared_expert_gate's N = 1; in_proj_ba's 32 / 4 = 8 at --tp 4):
      // the sets' expand variants assume N divisible by 16, where vLLM's JIT would
      // specialise otherwise. Named, as a run skips them (ADryRunNamesTheWidths...).
      if (d.reason.find("assumes N is divisible by 16; the case has N=") != std::string::npos) {
        continue;
      }
      ADD_FAILURE() << what << ": " << d.count << " " << d.reason;
    }
  }
}

}  // namespace
}  // namespace lp::sweep
