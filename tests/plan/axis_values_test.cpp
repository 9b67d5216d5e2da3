#include "model/axis_values.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/axes.hpp"

namespace lp {
namespace {

using nlohmann::json;

const char* const k_axes = R"({"add_inputs": true, "block_n": 128, "compiler": "ptxas=13.3.73", "hidden": [4096, 1024],
  "num_loras": 1, "op": "expand", "rank": 64, "shrink": {"block_k": 256, "split_k": 64}, "tokens": 18446744073709551615,
  "tuned": null, "weight": 1.5, "zz": -3})";

TEST(AxisValues, WritesBackWhatItReadByteForByte) {
  const json original = json::parse(k_axes);
  const AxisValues axes = AxisValues::from_json(original);
  EXPECT_EQ(axes.dump(), original.dump()) << "2^64-1 (no int64), a fraction, a list, an object and null all kept";
  EXPECT_EQ(axes.size(), original.size());
  EXPECT_EQ(axes.integer("block_n"), 128);
  EXPECT_EQ(axes.integer("zz"), -3);
  EXPECT_EQ(axes.integer("tokens"), std::nullopt) << "does not fit int64: not read as a wrapped number";
  EXPECT_EQ(axes.integer("op"), std::nullopt);
  EXPECT_EQ(axes.text("op"), "expand");
  EXPECT_EQ(axes.text("block_n"), std::nullopt);
  EXPECT_EQ(axes.boolean("add_inputs"), true);
  EXPECT_TRUE(axes.contains("tuned"));
  EXPECT_TRUE(axes.value("tuned").is_null());
  EXPECT_FALSE(axes.contains("absent"));
  EXPECT_TRUE(axes.value("absent").is_null());
  EXPECT_EQ(axes.value("shrink")["split_k"], 64);
}

TEST(AxisValues, KeepsKeysInTheOrderAJsonObjectWritesThem) {
  AxisValues axes;
  axes.set("triton", "3.8.0");
  axes.set("block_m", 64);
  axes.set("tokens", 16);
  axes.set("block_m", 32);  // replaces
  EXPECT_EQ(axes.dump(), R"({"block_m":32,"tokens":16,"triton":"3.8.0"})");
  axes.erase("tokens");
  axes.erase("never_there");
  EXPECT_EQ(axes.dump(), R"({"block_m":32,"triton":"3.8.0"})");
}

TEST(AxisValues, ASharedCopyIsChangedAloneAndEqualsItsPlainTwin) {
  const AxisValues group = AxisValues::from_json(json::parse(k_axes)).shared();
  EXPECT_EQ(group.dump(), json::parse(k_axes).dump());
  AxisValues a = group;
  AxisValues b = group;
  a.set("tokens", 16);
  a.set("rank", 8);
  b.erase("rank");
  b.set("new_key", "x");
  EXPECT_EQ(group.integer("rank"), 64) << "the shared values never change";
  EXPECT_EQ(a.integer("rank"), 8);
  EXPECT_EQ(a.integer("tokens"), 16);
  EXPECT_FALSE(b.contains("rank"));
  EXPECT_TRUE(b.value("rank").is_null());
  EXPECT_EQ(b.size(), group.size()) << "one key hidden, one added";
  json expected = json::parse(k_axes);
  expected.erase("rank");
  expected["new_key"] = "x";
  EXPECT_EQ(b.dump(), expected.dump());
  EXPECT_EQ(b, AxisValues::from_json(expected)) << "equal values are equal however they are held";
  EXPECT_NE(a, b);
  EXPECT_NE(a, group);
  b.set("rank", 64);
  b.erase("new_key");
  EXPECT_EQ(b, group) << "a hidden key set again is the shared value again";
}

TEST(AxisValues, TheLabelsReadThem) {
  const AxisValues axes = AxisValues::from_json(json::parse(
      R"({"triton": "3.8.0", "op": "expand", "input_dtype": "fp32", "weight_dtype": "bf16", "rank": 64, "hidden": [4096],
          "num_loras": 4, "block_m": 64, "block_n": 128, "block_k": 32, "num_warps": 4, "num_stages": 2, "add_inputs": false,
          "compiler": "prebuilt", "even_k": true})"));
  EXPECT_EQ(plan::row_label(axes), "t3.8.0 expand fp32>bf16 r64 h4096 L4 m64n128k32 w4s2 noadd prebuilt");
  EXPECT_EQ(plan::format_cell(axes, "even_k"), "y");
  EXPECT_EQ(plan::format_cell(axes, "split_k"), "-");
  EXPECT_EQ(plan::axis_text(axes, "split_k"), "?");
  // A fused-MoE case names its K, experts x top_k, the routing weight and a split N.
  const AxisValues moe = AxisValues::from_json(json::parse(
      R"({"triton": "3.6.0", "op": "fused_moe", "weight_dtype": "bf16", "rank": 64, "hidden": [2048], "hidden_in": 768,
          "num_experts": 128, "top_k": 8, "mul_routed_weight": true, "npid_factor": 2, "block_m": 64, "block_n": 128,
          "block_k": 128, "num_warps": 8, "num_stages": 3, "add_inputs": true, "compiler": "prebuilt"})"));
  EXPECT_EQ(plan::row_label(moe), "t3.6.0 fused_moe bf16 r64 h2048 k768 e128x8 rw p2 m64n128k128 w8s3 add prebuilt");
  // vLLM's dual-stream chain is its own row beside the plain chain of the same config.
  const AxisValues chain = AxisValues::from_json(json::parse(
      R"({"triton": "3.6.0", "op": "lora_linear", "weight_dtype": "bf16", "rank": 64, "hidden": [4096], "block_m": 64,
          "block_n": 128, "block_k": 32, "num_warps": 4, "num_stages": 2, "split_k": 8, "add_inputs": false,
          "compiler": "prebuilt"})"));
  AxisValues dual = chain;
  dual.set("gdc", true);
  EXPECT_EQ(plan::row_label(chain), "t3.6.0 lora_linear bf16 r64 h4096 m64n128k32 w4s2 sk8 noadd prebuilt");
  EXPECT_EQ(plan::row_label(dual), "t3.6.0 lora_linear bf16 r64 h4096 m64n128k32 w4s2 sk8 noadd gdc prebuilt");
}

}  // namespace
}  // namespace lp
