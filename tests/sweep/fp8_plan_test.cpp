// The embedded config fp8 plans only what the embedded sets hold: every case of both
// FP8 families finds its variant in every set, with the case's scale group compiled in.
#include <gtest/gtest.h>

#include <set>

#include "kernels/kernel_sets.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "sass/analyze.hpp"
#include "support/nvdisasm.hpp"
#include "sweep/case_variants.hpp"

namespace lp::sweep {
namespace {

TEST(Fp8Plan, EveryCaseOfTheFp8ConfigFindsItsVariantInEverySet) {
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const plan::Plan plan = plan::expand_plan(plan::load_embedded_config("fp8"), sets.versions());
  std::set<Op> ops;
  for (const plan::Case& c : plan.cases) {
    ops.insert(c.op);
  }
  EXPECT_EQ(ops, (std::set<Op>{Op::shrink_fp8, Op::expand_fp8}));
  const PlannedVariants planned = planned_variants(plan, sets);
  EXPECT_TRUE(planned.unavailable.empty()) << planned.unavailable.front();
  std::set<std::string> found_ops;
  std::set<std::int64_t> groups;
  for (const PlannedVariant& v : planned.variants) {
    found_ops.insert(v.variant->op);
    const std::optional<std::int64_t> group = v.variant->constexprs.integer("group_k");
    ASSERT_TRUE(group.has_value()) << v.variant->id;
    EXPECT_EQ(v.variant->constexprs.integer("group_n"), group) << v.variant->id;
    EXPECT_EQ(v.variant->axes.integer("scale_group"), group) << v.variant->id;
    EXPECT_EQ(v.variant->constexprs.boolean("use_fp8_w8a8"), true) << v.variant->id;
    EXPECT_EQ(v.variant->constexprs.boolean("USE_GDC"), false) << "vLLM 0.34 launches them without PDL";
    groups.insert(*group);
  }
  EXPECT_EQ(found_ops, (std::set<std::string>{"shrink_fp8", "expand_fp8"}));
  EXPECT_EQ(groups, (std::set<std::int64_t>{0, 128}));
  EXPECT_EQ(planned.variants.size() % sets.versions().size(), 0U) << "every set holds the same FP8 variants";
}

// The measured negative the FP8 expand was added to test: at the 16-bit expand's hazard
// configuration (block_n 128, 2 stages) its pending wgmma reads A from shared memory in
// every set's SASS, where the fp32-input 16-bit expand's reads it from registers.
TEST(Fp8Sass, TheFp8ExpandNeverReadsItsAOperandFromRegisters) {
  LP_REQUIRE_NVDISASM(found);
  const kernels::KernelSets sets = kernels::KernelSets::load();
  for (const kernels::KernelSet& set : sets.all()) {
    for (const char* id : {"expandfp8-bf16-tensor-m64n128k32-w4s2-evenk-add",
                           "expandfp8-bf16-block128-m64n128k32-w4s2-evenk-add"}) {
      SCOPED_TRACE(set.triton() + " " + id);
      const kernels::Variant* v = set.find(id);
      ASSERT_NE(v, nullptr);
      ASSERT_TRUE(v->cubin.has_value());
      const sass::CubinReport report = sass::analyze_cubin(set.contents(*v->cubin), *found, {}, std::string(id));
      ASSERT_EQ(report.kernels.size(), 1U);
      EXPECT_GE(report.kernels[0].stats.wgmma, 1);
      EXPECT_EQ(report.kernels[0].stats.wgmma_register_a, 0);
      EXPECT_EQ(report.finding_count(), 0U);
    }
  }
  // The contrast: the same tile and pipeline with a 16-bit B and an fp32 buf cast in registers.
  const kernels::KernelSet& pinned = sets.at("3.6.0");
  const kernels::Variant* fp32 = pinned.find("expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1");
  ASSERT_NE(fp32, nullptr);
  const sass::CubinReport hazard = sass::analyze_cubin(pinned.contents(*fp32->cubin), *found, {}, fp32->id);
  EXPECT_GT(hazard.kernels.at(0).stats.wgmma_register_a, 0);
}

}  // namespace
}  // namespace lp::sweep
