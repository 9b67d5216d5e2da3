// The embedded config fp8 plans only what the embedded sets hold: every case of both
// FP8 families finds its variant in every set, with the case's scale group compiled in.
#include <gtest/gtest.h>

#include <set>

#include "kernels/kernel_sets.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
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

}  // namespace
}  // namespace lp::sweep
