// A dry run resolves every case's variants before any GPU time is spent
// (sweep/case_variants.hpp cases_without_variant): what a run would skip, and why.
#include <gtest/gtest.h>

#include <map>
#include <string>

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

TEST(PlanVariants, NarrowWidthsFindTheVariantsTheJitWouldSpecialise) {
  // Qwen3.6-35B-A3B's shared_expert_gate expands into N = 1, which vLLM's JIT folds to the
  // constant 1 (and the row stride with it); in_proj_ba's two slices are 32 / tp wide,
  // passed unspecialised, their row stride a multiple of 16 at --tp 4 (16) but not at 8.
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const auto variants_of = [&](std::int64_t tp) {
    plan::SweepConfig c = plan::parse_config(
        R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, "axes": {"triton": ["3.9.0"], "op": ["expand"],
            "rank": [64], "tokens": [256], "input_dtype": ["bf16"], "weight_dtype": ["bf16"], "compiler": ["prebuilt"]}})",
        "m.json");
    plan::FlagOverrides flags;
    flags.tp = tp;
    plan::apply_flags(c, flags);
    const plan::Plan p = plan::expand_plan(c, sets.versions());
    EXPECT_TRUE(cases_without_variant(p, sets).empty()) << "--tp " << tp;
    std::map<std::string, std::string> out;  // projection -> variant id
    for (const plan::Case& planned : p.cases) {
      if (const kernels::Lookup found = sets.at(planned.triton).lookup(wanted_expand_axes(planned));
          found.variant != nullptr) {
        out[planned.projection()] = found.variant->id;
      }
    }
    return out;
  };
  const std::map<std::string, std::string> at4 = variants_of(4);
  EXPECT_EQ(at4.at("shared_expert_gate"), "expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1-n1");
  EXPECT_EQ(at4.at("in_proj_ba"), "expand-bf16-bf16-m64n64k32-w4s2-evenk-add-s2-samestride-nany-out16");
  EXPECT_EQ(variants_of(8).at("in_proj_ba"), "expand-bf16-bf16-m64n64k32-w4s2-evenk-add-s2-samestride-nany");
  EXPECT_EQ(variants_of(1).at("in_proj_ba"), "expand-bf16-bf16-m64n64k32-w4s2-evenk-add-s2-samestride")
      << "32 wide: the usual variant";
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
    for (const std::int64_t tp : {1, 2, 4, 8}) {
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
      ADD_FAILURE() << what << ": " << d.count << " " << d.reason;
    }
  }
}

}  // namespace
}  // namespace lp::sweep
