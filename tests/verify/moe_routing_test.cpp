// The fused-MoE routing (families/fused_moe/routing.hpp): what vLLM's moe_lora_align_block_size
// hands the kernel, checked against its definition on seeded problems.

#include "families/fused_moe/routing.hpp"
#include "families/family.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "util/error.hpp"

namespace lp {
namespace {

Problem moe_problem(std::int64_t tokens, std::int32_t loras, std::int32_t experts, std::int32_t top_k,
                    std::int32_t block_m, bool routed, std::uint64_t seed = 7) {
  Problem p;
  p.op = Op::fused_moe;
  p.num_tokens = tokens;
  p.rank = 64;
  p.slice_hidden = routed ? std::vector<std::int64_t>{2048} : std::vector<std::int64_t>{512, 512};
  p.hidden_in = routed ? 512 : 2048;
  p.num_loras = loras;
  p.input_dtype = DType::bf16;
  p.weight_dtype = DType::bf16;
  p.add_inputs = true;
  p.seed = seed;
  p.moe = ExpertRouting{experts, top_k, routed, block_m};
  p.lora_of = make_token_mapping(tokens, loras, seed);
  return p;
}

TEST(MoeRouting, EveryLivePairIsSortedOnceByExpertAndPaddedToTheBlock) {
  const Problem p = moe_problem(300, 3, 16, 4, 16, false);
  const MoeRouting r = make_moe_routing(p);
  const std::int64_t pairs = p.num_tokens * 4;
  ASSERT_EQ(static_cast<std::int64_t>(r.topk_ids.size()), pairs);
  EXPECT_EQ(r.padded_pairs % 16, 0);
  EXPECT_GE(r.padded_pairs, pairs + 16 * 15);
  std::multiset<std::int32_t> seen;
  for (std::int32_t lora = 0; lora < 3; ++lora) {
    const std::int32_t used = r.num_tokens_post_padded[static_cast<std::size_t>(lora)];
    EXPECT_EQ(used % 16, 0);
    const std::int32_t* row = r.sorted_token_ids.data() + lora * r.padded_pairs;
    const std::int32_t* experts = r.expert_ids.data() + lora * (r.padded_pairs / 16);
    std::int32_t previous_expert = -1;
    for (std::int64_t i = 0; i < r.padded_pairs; ++i) {
      const std::int32_t pair = row[i];
      if (i >= used) {
        EXPECT_EQ(pair, pairs) << "past the padded length only the sentinel";
        continue;
      }
      const std::int32_t expert = experts[i / 16];
      ASSERT_GE(expert, 0);
      if (i % 16 == 0) {
        EXPECT_GE(expert, previous_expert) << "one run of blocks per expert, experts ascending";
        previous_expert = expert;
      }
      if (pair == pairs) {
        continue;  // padding of the expert's last block
      }
      EXPECT_EQ(r.topk_ids[static_cast<std::size_t>(pair)], expert);
      EXPECT_EQ(p.lora_of[static_cast<std::size_t>(pair / 4)], lora);
      seen.insert(pair);
    }
    for (std::int64_t b = used / 16; b < r.padded_pairs / 16; ++b) {
      EXPECT_EQ(experts[b], -1);
    }
  }
  // Exactly the pairs of tokens with an adapter, each once; the groups hold the same.
  std::multiset<std::int32_t> live;
  for (std::int64_t q = 0; q < pairs; ++q) {
    if (p.lora_of[static_cast<std::size_t>(q / 4)] >= 0) {
      live.insert(static_cast<std::int32_t>(q));
    }
  }
  EXPECT_EQ(seen, live);
  EXPECT_EQ(std::multiset<std::int32_t>(r.group_pairs.begin(), r.group_pairs.end()), live);
  EXPECT_EQ(r.live_pairs(), static_cast<std::int64_t>(live.size()));
}

TEST(MoeRouting, EachTokenGetsTopKDistinctExpertsAndWeightsInRange) {
  const Problem p = moe_problem(500, 1, 256, 8, 64, true);
  const MoeRouting r = make_moe_routing(p);
  std::map<std::int32_t, int> per_expert;
  for (std::int64_t t = 0; t < p.num_tokens; ++t) {
    std::set<std::int32_t> experts;
    for (int j = 0; j < 8; ++j) {
      const auto q = static_cast<std::size_t>(t * 8 + j);
      experts.insert(r.topk_ids[q]);
      ++per_expert[r.topk_ids[q]];
      EXPECT_GE(r.topk_weights[q], 0.0625f);
      EXPECT_LE(r.topk_weights[q], 1.0f);
    }
    EXPECT_EQ(experts.size(), 8U) << "token " << t;
  }
  // 4000 pairs over 256 experts: most experts are used (a routing that collapsed onto
  // a few would leave most of the kernel's expert ids untested).
  EXPECT_GT(per_expert.size(), 240U);
}

TEST(MoeRouting, IsAFunctionOfTheSeed) {
  const MoeRouting a = make_moe_routing(moe_problem(200, 2, 32, 8, 64, false, 11));
  const MoeRouting b = make_moe_routing(moe_problem(200, 2, 32, 8, 64, false, 11));
  const MoeRouting c = make_moe_routing(moe_problem(200, 2, 32, 8, 64, false, 12));
  EXPECT_EQ(a.topk_ids, b.topk_ids);
  EXPECT_EQ(a.topk_weights, b.topk_weights);
  EXPECT_EQ(a.sorted_token_ids, b.sorted_token_ids);
  EXPECT_NE(a.topk_ids, c.topk_ids);
}

TEST(MoeRouting, FewerPairsThanExpertsPadsOneBlockPerPair) {
  // vLLM's max_num_tokens_padded when topk_ids has fewer entries than there are experts.
  const MoeRouting r = make_moe_routing(moe_problem(3, 1, 256, 8, 64, false));
  EXPECT_EQ(r.padded_pairs, 24 * 64);
}

TEST(MoeRouting, RefusesOtherOpsAndBadShapes) {
  Problem p = moe_problem(10, 1, 8, 2, 16, false);
  p.moe.top_k = 9;  // more experts per token than there are
  EXPECT_THROW(validate(p), Error);
  p = moe_problem(10, 1, 8, 2, 16, false);
  p.slice_hidden = {512, 256};
  EXPECT_THROW(validate(p), Error);
  p = moe_problem(10, 1, 8, 2, 16, false);
  p.op = Op::expand;
  p.hidden_in = 0;
  p.input_dtype = DType::f32;
  EXPECT_THROW(validate(p), Error) << "an expand problem with a routing is refused";
  p.moe = ExpertRouting{};
  EXPECT_NO_THROW(validate(p));
  EXPECT_THROW((void)make_moe_routing(p), Error);
}

TEST(MoeRouting, PairRowsAndXRows) {
  const Problem up = moe_problem(10, 1, 8, 2, 16, false);
  EXPECT_EQ(output_rows(up), 20);
  EXPECT_EQ(x_rows(up), 10);
  const Problem down = moe_problem(10, 1, 8, 2, 16, true);
  EXPECT_EQ(x_rows(down), 20);
  EXPECT_EQ(parse_op("fused_moe"), Op::fused_moe);
  EXPECT_EQ(op_name(Op::fused_moe), "fused_moe");
}

}  // namespace
}  // namespace lp
