// The registry is complete and consistent, and each family answers for its problem
// what docs/problem.md says: what a planned case becomes, which kernels it
// launches, what it writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "families/device.hpp"
#include "families/family.hpp"
#include "families/fused_moe/routing.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

const Op k_every_op[] = {Op::expand, Op::shrink, Op::lora_linear, Op::fused_moe, Op::shrink_fp8, Op::expand_fp8};

TEST(Families, EveryOpHasOneFamilyWhoseNameRoundTrips) {
  ASSERT_EQ(families().size(), std::size(k_every_op));
  std::set<std::string_view> names;
  for (const Op op : k_every_op) {
    const KernelFamily& f = family_of(op);
    EXPECT_EQ(f.op(), op);
    EXPECT_EQ(parse_op(f.name()), op);
    EXPECT_EQ(families()[static_cast<std::size_t>(op)], &f) << "the registry is in Op order";
    EXPECT_TRUE(names.insert(f.name()).second) << f.name();
    EXPECT_NE(&device_family_of(op), nullptr);
  }
  EXPECT_EQ(parse_op("Expand"), std::nullopt);
  EXPECT_EQ(parse_op(""), std::nullopt);
}

TEST(Families, EveryLaunchedKernelIsAOneKernelFamilyOfItsOwn) {
  for (const KernelFamily* f : families()) {
    ASSERT_FALSE(f->kernels().empty()) << f->name();
    for (const KernelLaunch& k : f->kernels()) {
      const KernelFamily& kernel = family_of(k.kernel);
      ASSERT_EQ(kernel.kernels().size(), 1U) << f->name() << " launches " << kernel.name();
      EXPECT_EQ(kernel.kernels()[0].kernel, k.kernel);
      EXPECT_EQ(kernel.kernels()[0].slot, k.slot) << "a kernel travels in the same slot in every family";
    }
    EXPECT_TRUE(f->traits().expand_knobs || f->traits().shrink_knobs) << f->name() << " has no knobs";
  }
  // The chain is a shrink, then the expand that reads its buf.
  const auto chain = family_of(Op::lora_linear).kernels();
  ASSERT_EQ(chain.size(), 2U);
  EXPECT_EQ(chain[0].kernel, Op::shrink);
  EXPECT_EQ(chain[1].kernel, Op::expand);
}

Problem planned(Op op) {
  // A case as the sweep fills it before the family shapes it (sweep/entries.cpp).
  Problem p;
  p.op = op;
  p.num_tokens = 4;
  p.rank = 16;
  const bool fp8 = family_of(op).traits().scale_group_axis;
  p.slice_hidden = fp8 ? std::vector<std::int64_t>{64} : std::vector<std::int64_t>{64, 64};  // FP8: one slice
  p.hidden_in = 64;
  p.input_dtype = DType::f32;
  p.weight_dtype = DType::bf16;
  p.add_inputs = true;
  p.scale = 0.25F;
  p.lora_of = {0, -1, 0, 0};
  if (op == Op::fused_moe) {
    p.moe = ExpertRouting{8, 2, false, 16};
  }
  family_of(op).shape(p);
  return p;
}

TEST(Families, ShapeKeepsWhatTheFamilyHasAndTheResultIsValid) {
  const Problem expand = planned(Op::expand);
  EXPECT_EQ(expand.hidden_in, 0);
  EXPECT_EQ(expand.input_dtype, DType::f32) << "the expand's buf keeps its own dtype";
  EXPECT_EQ(expand.scale, 1.0F);
  EXPECT_TRUE(expand.add_inputs);
  const Problem shrink = planned(Op::shrink);
  EXPECT_EQ(shrink.input_dtype, DType::bf16) << "x is in the weight dtype";
  EXPECT_FALSE(shrink.add_inputs) << "the shrink writes buf, it does not add";
  EXPECT_EQ(shrink.scale, 0.25F);
  const Problem chain = planned(Op::lora_linear);
  EXPECT_EQ(chain.input_dtype, DType::bf16);
  EXPECT_TRUE(chain.add_inputs);
  const Problem moe = planned(Op::fused_moe);
  EXPECT_EQ(moe.scale, 1.0F) << "the fused kernel has no scale";
  for (const Op op : k_every_op) {
    EXPECT_NO_THROW(validate(planned(op))) << op_name(op);
  }
}

TEST(Families, OutputsAreWhatDocsProblemMdSays) {
  EXPECT_EQ(output_dtype(planned(Op::shrink)), DType::f32);
  EXPECT_TRUE(family_of(Op::shrink).writes_buf());
  for (const Op op : {Op::expand, Op::lora_linear, Op::fused_moe}) {
    EXPECT_EQ(output_dtype(planned(op)), DType::bf16) << op_name(op);
    EXPECT_FALSE(family_of(op).writes_buf()) << op_name(op);
  }
  EXPECT_EQ(a_operand_dtype(planned(Op::lora_linear)), DType::f32) << "the chain's expand reads the fp32 buf";
  EXPECT_EQ(a_operand_dtype(planned(Op::expand)), DType::f32);
  const Problem moe = planned(Op::fused_moe);
  EXPECT_EQ(output_rows(moe), 8) << "T * top_k routed pairs";
  EXPECT_EQ(x_rows(moe), 4) << "gate/up: x has one row per token";
  EXPECT_EQ(output_rows(planned(Op::expand)), 4);
}

TEST(Families, TheRulesOfOneFamilyAreNotAnothers) {
  Problem expand = planned(Op::expand);
  expand.split_k = 2;
  EXPECT_THROW(validate(expand), Error) << "only a shrink splits K";
  Problem shrink = planned(Op::shrink);
  shrink.add_inputs = true;
  EXPECT_THROW(validate(shrink), Error);
  Problem chain = planned(Op::lora_linear);
  chain.moe = ExpertRouting{8, 2, false, 16};
  EXPECT_THROW(validate(chain), Error) << "only fused_moe routes to experts";
  Problem moe = planned(Op::fused_moe);
  moe.amplify = 1;
  EXPECT_THROW(validate(moe), Error);
  EXPECT_THROW((void)make_moe_routing(planned(Op::expand)), Error) << "an expand problem has no routing";
}

TEST(Families, DeviceBytesGrowWithTheProblemAndNeverWrap) {
  for (const Op op : k_every_op) {
    Problem p = planned(op);
    const std::uint64_t small = family_of(op).device_bytes(p);
    p.num_tokens *= 1024;
    p.lora_of.assign(static_cast<std::size_t>(p.num_tokens), 0);
    EXPECT_GT(family_of(op).device_bytes(p), small) << op_name(op);
    p.num_tokens = std::int64_t{1} << 62;
    p.rank = std::int64_t{1} << 40;
    EXPECT_EQ(family_of(op).device_bytes(p), std::numeric_limits<std::uint64_t>::max()) << op_name(op) << " saturates";
  }
}

TEST(Families, OnlyTheFamiliesThePlanMayNameAreOnTheOpAxis) {
  std::vector<std::string_view> on_axis;
  for (const KernelFamily* f : families()) {
    if (f->traits().off_op_axis_why.empty()) {
      on_axis.push_back(f->name());
    }
  }
  EXPECT_EQ(on_axis, (std::vector<std::string_view>{"expand", "shrink", "lora_linear", "shrink_fp8", "expand_fp8"}));
  EXPECT_NE(family_of(Op::fused_moe).traits().off_op_axis_why.find("--model"), std::string_view::npos)
      << "the refusal says where fused_moe cases come from";
  EXPECT_TRUE(family_of(Op::expand).traits().register_a_remedies);
  EXPECT_FALSE(family_of(Op::lora_linear).traits().register_a_remedies);
  EXPECT_EQ(family_named("shrink"), &family_of(Op::shrink));
  EXPECT_EQ(family_named("fused_moe_shrink"), nullptr) << "the two-kernel path's kernels are no family";
}

}  // namespace
}  // namespace lp
