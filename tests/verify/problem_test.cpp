// Problem validation, the token -> LoRA mapping and the metadata of docs/problem.md.

#include "model/problem.hpp"
#include "families/family.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "util/error.hpp"

namespace lp {
namespace {

using Ints = std::vector<std::int32_t>;

TEST(LoraMetadata, DocsExampleWithMinusOne) {
  // Tokens 0..6 -> LoRA 1, -1, 0, 1, -1, 0, 1.
  const Ints lora_of = {1, -1, 0, 1, -1, 0, 1};
  const LoraMetadata m = build_lora_metadata(lora_of, 2);
  EXPECT_EQ(m.lora_ids, (Ints{-1, 0, 1}));
  EXPECT_EQ(m.num_tokens_per_lora, (Ints{2, 2, 3}));
  EXPECT_EQ(m.lora_token_start_loc, (Ints{0, 2, 4, 7}));
  // Stable: the tokens of each LoRA keep their order.
  EXPECT_EQ(m.token_indices_sorted_by_lora_ids, (Ints{1, 4, 2, 5, 0, 3, 6}));
  EXPECT_EQ(m.num_active(), 3);
  EXPECT_EQ(m.live_tokens(), 5);
  EXPECT_EQ(m.used_loras(), 2);
}

TEST(LoraMetadata, SingleLoraIsTheIdentity) {
  const Ints lora_of(5, 0);
  const LoraMetadata m = build_lora_metadata(lora_of, 1);
  EXPECT_EQ(m.lora_ids, (Ints{0}));
  EXPECT_EQ(m.num_tokens_per_lora, (Ints{5}));
  EXPECT_EQ(m.lora_token_start_loc, (Ints{0, 5}));
  EXPECT_EQ(m.token_indices_sorted_by_lora_ids, (Ints{0, 1, 2, 3, 4}));
}

TEST(LoraMetadata, UnusedLorasAreAbsent) {
  const LoraMetadata m = build_lora_metadata(Ints{3, 3, 1}, 5);
  EXPECT_EQ(m.lora_ids, (Ints{1, 3}));
  EXPECT_EQ(m.num_tokens_per_lora, (Ints{1, 2}));
  EXPECT_EQ(m.lora_token_start_loc, (Ints{0, 1, 3}));
  EXPECT_EQ(m.token_indices_sorted_by_lora_ids, (Ints{2, 0, 1}));
}

TEST(LoraMetadata, AllTokensWithoutLora) {
  const LoraMetadata m = build_lora_metadata(Ints{-1, -1}, 1);
  EXPECT_EQ(m.lora_ids, (Ints{-1}));
  EXPECT_EQ(m.live_tokens(), 0);
  EXPECT_EQ(m.used_loras(), 0);
}

TEST(LoraMetadata, OutOfRangeEntryIsNamed) {
  try {
    static_cast<void>(build_lora_metadata(Ints{0, 2}, 2));
    FAIL() << "lora 2 of 2 accepted";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "lora_of[1] = 2 is outside -1..1");
  }
  EXPECT_THROW(static_cast<void>(build_lora_metadata(Ints{-2}, 2)), Error);
}

TEST(TokenMapping, OneLoraMapsEveryTokenToIt) {
  EXPECT_EQ(make_token_mapping(4, 1, 99), (Ints{0, 0, 0, 0}));
}

TEST(TokenMapping, SeveralLorasAreShuffledWithMinusOneAndEveryAdapter) {
  const Ints mapping = make_token_mapping(1000, 4, 7);
  std::map<std::int32_t, int> count;
  for (const std::int32_t id : mapping) {
    ++count[id];
  }
  // Dealt round robin over {-1, 0, 1, 2, 3}: 200 each.
  EXPECT_EQ(count, (std::map<std::int32_t, int>{{-1, 200}, {0, 200}, {1, 200}, {2, 200}, {3, 200}}));
  // Shuffled: not the round-robin order.
  Ints round_robin(1000);
  for (int t = 0; t < 1000; ++t) {
    round_robin[static_cast<std::size_t>(t)] = t % 5 - 1;
  }
  EXPECT_NE(mapping, round_robin);
}

TEST(TokenMapping, DependsOnlyOnTheSeed) {
  EXPECT_EQ(make_token_mapping(257, 3, 42), make_token_mapping(257, 3, 42));
  EXPECT_NE(make_token_mapping(257, 3, 42), make_token_mapping(257, 3, 43));
  // Pinned: the same on every platform and standard library (our own SplitMix64).
  EXPECT_EQ(make_token_mapping(8, 2, 1), (Ints{-1, 0, 1, -1, -1, 0, 1, 0}));
}

TEST(TokenMapping, RejectsBadSizes) {
  EXPECT_THROW(static_cast<void>(make_token_mapping(-1, 2, 0)), Error);
  EXPECT_THROW(static_cast<void>(make_token_mapping(4, 0, 0)), Error);
  EXPECT_TRUE(make_token_mapping(0, 3, 0).empty());
}

Problem expand_problem() {
  Problem p;
  p.op = Op::expand;
  p.num_tokens = 4;
  p.rank = 16;
  p.slice_hidden = {64, 32};
  p.num_loras = 2;
  p.input_dtype = DType::f32;
  p.weight_dtype = DType::bf16;
  p.lora_of = {0, -1, 1, 0};
  return p;
}

std::string validation_error(const Problem& p) {
  try {
    validate(p);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Problem, DerivedSizes) {
  const Problem p = expand_problem();
  EXPECT_EQ(validation_error(p), "");
  EXPECT_EQ(p.num_slices(), 2);
  EXPECT_EQ(p.hidden_total(), 96);
  EXPECT_EQ(p.slice_offsets(), (std::vector<std::int64_t>{0, 64}));
  EXPECT_EQ(output_dtype(p), DType::bf16);
  EXPECT_EQ(a_operand_dtype(p), DType::f32);
  EXPECT_EQ(describe(p), "expand T=4 R=16 H=[64,32] L=2 fp32->bf16 seed=0");
}

TEST(Problem, ValidationNamesTheField) {
  Problem p = expand_problem();
  p.scale = 0.5f;
  EXPECT_EQ(validation_error(p), "invalid problem (expand): scale 0.5 given, but expand has no scale (shrink applies it)");
  p = expand_problem();
  p.weight_dtype = DType::f32;
  EXPECT_EQ(validation_error(p), "invalid problem (expand): weight dtype fp32 is not bf16 or fp16");
  p = expand_problem();
  p.slice_hidden = {1, 2, 3, 4};
  EXPECT_EQ(validation_error(p), "invalid problem (expand): 4 slices; docs/problem.md allows 1 to 3");
  p = expand_problem();
  p.lora_of = {0, 0, 0};
  EXPECT_EQ(validation_error(p), "invalid problem (expand): lora_of has 3 entries for 4 tokens");
  p = expand_problem();
  p.lora_of[2] = 2;
  EXPECT_EQ(validation_error(p), "invalid problem (expand): lora_of[2] = 2 is outside -1..1");
}

TEST(Problem, ShrinkRules) {
  Problem p = expand_problem();
  p.op = Op::shrink;
  p.input_dtype = DType::bf16;
  p.hidden_in = 64;
  p.slice_hidden = {64, 64};
  p.scale = 0.25f;
  p.split_k = 4;
  EXPECT_EQ(validation_error(p), "");
  EXPECT_EQ(output_dtype(p), DType::f32);
  EXPECT_EQ(describe(p), "shrink T=4 R=16 H=[64,64] H_in=64 L=2 bf16->fp32 scale=0.25 split_k=4 seed=0");
  p.slice_hidden = {64, 32};
  EXPECT_EQ(validation_error(p),
            "invalid problem (shrink): slice_hidden[1] = 32 differs from hidden_in 64: every shrink slice reads the same x");
  p.slice_hidden = {64, 64};
  p.add_inputs = true;
  EXPECT_EQ(validation_error(p), "invalid problem (shrink): add_inputs given, but shrink writes buf, it does not add into y");
  p.add_inputs = false;
  p.input_dtype = DType::f16;
  EXPECT_EQ(validation_error(p),
            "invalid problem (shrink): x dtype fp16 differs from the weight dtype bf16; docs/problem.md has X = W here");
}

TEST(Problem, LoraLinear) {
  Problem p = expand_problem();
  p.op = Op::lora_linear;
  p.input_dtype = DType::bf16;
  p.hidden_in = 128;
  p.add_inputs = true;
  EXPECT_EQ(validation_error(p), "");
  EXPECT_EQ(a_operand_dtype(p), DType::f32);
  EXPECT_EQ(output_dtype(p), DType::bf16);
  EXPECT_EQ(describe(p), "lora_linear T=4 R=16 H=[64,32] H_in=128 L=2 bf16->fp32->bf16 add_inputs scale=1 split_k=1 seed=0");
}

TEST(Names, RoundTrip) {
  for (const Op op : {Op::expand, Op::shrink, Op::lora_linear}) {
    EXPECT_EQ(parse_op(op_name(op)), op);
  }
  for (const DType t : {DType::f32, DType::bf16, DType::f16}) {
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  }
  EXPECT_EQ(parse_op("Expand"), std::nullopt);
  EXPECT_EQ(parse_dtype("float32"), std::nullopt);
}

}  // namespace
}  // namespace lp
