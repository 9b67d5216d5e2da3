// Failure rates, the rule of three, bytes and bandwidth.

#include "verify/stats.hpp"
#include "families/family.hpp"
#include "families/fused_moe/routing.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "test_problems.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

TEST(FailureRate, ObservedRate) {
  const FailureRate r{3, 12};
  EXPECT_DOUBLE_EQ(r.rate(), 0.25);
  EXPECT_FALSE(r.upper_bound_95().has_value()) << "with failures seen, the rate is the statement";
}

TEST(FailureRate, ZeroOfNGivesTheRuleOfThree) {
  const FailureRate r{0, 1000};
  EXPECT_EQ(r.rate(), 0.0);
  ASSERT_TRUE(r.upper_bound_95().has_value());
  EXPECT_DOUBLE_EQ(*r.upper_bound_95(), 0.003);
  // Conservative: 3/n is at least the exact 95% bound 1 - 0.05^(1/n).
  for (const std::uint64_t n : {1u, 2u, 10u, 30u, 100u, 100000u}) {
    EXPECT_GE(rule_of_three_upper_bound(n), 1.0 - std::pow(0.05, 1.0 / static_cast<double>(n))) << n;
  }
}

TEST(FailureRate, SmallNCapsAtOne) {
  EXPECT_EQ(rule_of_three_upper_bound(1), 1.0);
  EXPECT_EQ(rule_of_three_upper_bound(2), 1.0);
  EXPECT_DOUBLE_EQ(rule_of_three_upper_bound(4), 0.75);
}

TEST(FailureRate, NoRunsBoundNothing) {
  EXPECT_FALSE((FailureRate{0, 0}).upper_bound_95().has_value());
  EXPECT_EQ((FailureRate{0, 0}).rate(), 0.0);
  EXPECT_THROW(static_cast<void>(rule_of_three_upper_bound(0)), Error);
}

Problem three_lora_expand() {
  Problem p;
  p.op = Op::expand;
  p.num_tokens = 4;
  p.rank = 16;
  p.slice_hidden = {64, 32};
  p.num_loras = 3;
  p.input_dtype = DType::f32;
  p.weight_dtype = DType::bf16;
  p.lora_of = {0, -1, 2, 0};  // 3 live tokens, 2 LoRAs in use
  return p;
}

TEST(CompulsoryBytes, Expand) {
  Problem p = three_lora_expand();
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  // buf: 2 slices x 3 tokens x 16 x 4 B = 384; B: 2 LoRAs x 96 x 16 x 2 B = 6144;
  // y: 3 x 96 x 2 B = 576.
  EXPECT_EQ(compulsory_bytes(p, m), 384u + 6144u + 576u);
  p.add_inputs = true;
  EXPECT_EQ(compulsory_bytes(p, m), 384u + 6144u + 576u + 576u);
}

TEST(CompulsoryBytes, FusedMoeCountsEachExpertGroupsWeightsOnce) {
  // 2 tokens, each routed to the one expert: 2 pairs, 1 (adapter, expert) group.
  const Problem p = test::make_fused_problem(DType::bf16, 2, 1, 1, 1, 16, 16, 32, 1, false, false, 3);
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  // x: 2 rows x 16 x 2 B = 64; A and B of the group: 16 x (16 + 32) x 2 B = 1536;
  // out: 2 pairs x 32 x 2 B = 128.
  EXPECT_EQ(compulsory_bytes(p, m), 64u + 1536u + 128u);
  const MoeRouting routing = make_moe_routing(p);
  EXPECT_EQ(compulsory_bytes(p, m, &routing), 64u + 1536u + 128u) << "the case's own routing, not built again";
}

TEST(CompulsoryBytes, ShrinkAndLoraLinear) {
  Problem p = three_lora_expand();
  p.op = Op::shrink;
  p.input_dtype = DType::bf16;
  p.hidden_in = 64;
  p.slice_hidden = {64, 64};
  const LoraMetadata m = build_lora_metadata(p.lora_of, p.num_loras);
  // x: 3 x 64 x 2 = 384; A: 2 slices x 2 LoRAs x 16 x 64 x 2 = 8192; buf: 2 x 3 x 16 x 4 = 384.
  const std::uint64_t shrink = 384u + 8192u + 384u;
  EXPECT_EQ(compulsory_bytes(p, m), shrink);
  p.op = Op::lora_linear;
  // + the expand from the fp32 buf: 384 + B 2 x 128 x 16 x 2 = 8192 + y 3 x 128 x 2 = 768.
  EXPECT_EQ(compulsory_bytes(p, m), shrink + 384u + 8192u + 768u);
}

TEST(CaseTiming, Bandwidth) {
  const CaseTiming t{2.0, 5.0, 4'000'000'000u, std::nullopt};
  EXPECT_DOUBLE_EQ(t.bandwidth_gbps().value(), 2000.0);
  EXPECT_EQ((CaseTiming{0.0, 1.0, 100, std::nullopt}).bandwidth_gbps(), 0.0);
  EXPECT_FALSE((CaseTiming{std::nullopt, 1.0, 100, std::nullopt}).bandwidth_gbps().has_value()) << "not timed";
}

}  // namespace
}  // namespace lp
