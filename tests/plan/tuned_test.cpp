// vLLM's tuned LoRA configs (plan/tuned.hpp): the lookup rule, nearest-key ties,
// the plan they make, and the messages for bad files.

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "plan/tuned.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::plan {
namespace {

const std::string k_fixtures = std::string(LP_SOURCE_DIR) + "/tests/plan/fixtures/vllm-tuned";

TEST(Tuned, ExactKeysWinAndOtherwiseTheNearest) {
  const TunedConfigs t = TunedConfigs::load(k_fixtures, "NVIDIA H200");
  EXPECT_EQ(t.prefix(), "NVIDIA_H200");
  EXPECT_EQ(TunedConfigs::file_prefix("NVIDIA H100 80GB HBM3"), "NVIDIA_H100_80GB_HBM3");
  EXPECT_EQ(TunedConfigs::file_prefix("NVIDIA H20-3e"), "NVIDIA_H20_3e");
  // 256 tokens, rank 64, 4096 wide: the exact entry, the hazardous one.
  std::optional<TunedChoice> c = t.expand(true, 1, 1, 256, 64, 4096);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->knobs.block_n, 128);
  EXPECT_EQ(c->knobs.num_stages, 2);
  EXPECT_EQ(c->describe(), "NVIDIA_H200_EXPAND_TRUE.json[1][1][256][64][4096]");
  // 2048 tokens: 256 is 1792 away, 4096 is 2048 away.
  EXPECT_EQ(t.expand(true, 1, 1, 2048, 64, 4096)->describe(), "NVIDIA_H200_EXPAND_TRUE.json[1][1][256][64][4096]");
  // max_loras 4 and rank 100: the nearest at every level (1, then 128 of 64 and 128).
  EXPECT_EQ(t.expand(true, 4, 1, 256, 100, 8192)->describe(), "NVIDIA_H200_EXPAND_TRUE.json[1][1][256][128][4096]");
  EXPECT_EQ(t.expand(true, 4, 1, 256, 100, 8192)->knobs.num_stages, 3);
  // A tie (136 is 120 from 16 and from 256) takes the first key in the file, as Python's min() does.
  EXPECT_EQ(t.expand(true, 1, 1, 136, 64, 4096)->describe(), "NVIDIA_H200_EXPAND_TRUE.json[1][1][16][64][4096]");
  const TempDir reversed_dir("lp-tuned-test-");
  const std::string reversed = reversed_dir.path();
  write_file_atomic(reversed + "/X_EXPAND_TRUE.json", R"({"1": {"1": {"256": {"64": {"4096": {"block_m": 64,
    "block_n": 128, "block_k": 32, "num_warps": 4, "num_ctas": 1, "num_stages": 2}}}, "16": {"64": {"4096": {
    "block_m": 64, "block_n": 32, "block_k": 32, "num_warps": 4, "num_ctas": 1, "num_stages": 2}}}}}})");
  EXPECT_EQ(TunedConfigs::load(reversed, "X").expand(true, 1, 1, 136, 64, 4096)->describe(),
            "X_EXPAND_TRUE.json[1][1][256][64][4096]");
  // Shrink: k is the input width, n the rank; split_k comes from the file.
  c = t.shrink(1, 1, 1000, 4096, 64);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->knobs.split_k, 8);
  EXPECT_EQ(c->knobs.block_k, 32);
  // No file for an op: none chosen (vLLM's defaults).
  EXPECT_FALSE(TunedConfigs::load(reversed, "X").shrink(1, 1, 16, 4096, 64));
}

TEST(Tuned, ThePlanTakesTheKnobsVllmWouldLaunch) {
  SweepConfig config = parse_config(
      R"({"name": "t", "axes": {"triton": ["3.6.0"], "op": ["expand"], "input_dtype": ["fp32"], "weight_dtype": ["bf16"],
          "num_slices": [1], "hidden": [4096], "rank": [64], "add_inputs": [true, false], "tokens": [16, 256, 2048],
          "block_m": ["vllm"], "block_n": ["vllm"], "block_k": ["vllm"], "num_warps": ["vllm"], "num_stages": ["vllm"],
          "compiler": ["prebuilt"]}})",
      "t.json");
  FlagOverrides flags;
  flags.vllm_configs = k_fixtures;
  flags.vllm_gpu = "NVIDIA H200";
  apply_flags(config, flags);
  const Plan p = expand_plan(config, {"3.6.0"});
  ASSERT_EQ(p.cases.size(), 6U);
  std::vector<std::string> got;
  for (const Case& c : p.cases) {
    got.push_back(fmt::format("{} {} bn{} ns{} {}", c.add_inputs ? "add" : "noadd", c.tokens, c.expand->block_n,
                              c.expand->num_stages, c.axes().text("tuned").value_or("")));
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "add 16 bn32 ns2 NVIDIA_H200_EXPAND_TRUE.json[1][1][16][64][4096]",
                     "add 256 bn128 ns2 NVIDIA_H200_EXPAND_TRUE.json[1][1][256][64][4096]",
                     "add 2048 bn128 ns2 NVIDIA_H200_EXPAND_TRUE.json[1][1][256][64][4096]",
                     "noadd 16 bn32 ns2 NVIDIA_H200_EXPAND_FALSE.json[1][1][64][64][4096]",
                     "noadd 256 bn32 ns2 NVIDIA_H200_EXPAND_FALSE.json[1][1][64][64][4096]",
                     "noadd 2048 bn128 ns1 NVIDIA_H200_EXPAND_FALSE.json[1][1][1024][64][4096]"}));
}

TEST(Tuned, BadFilesNameTheFileAndThePointer) {
  const TempDir bad_dir("lp-tuned-test-");
  const std::string dir = bad_dir.path();
  auto message = [&](const std::string& text) {
    write_file_atomic(dir + "/G_SHRINK.json", text);
    try {
      (void)TunedConfigs::load(dir, "G");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("loaded");
  };
  const std::string file = dir + "/G_SHRINK.json";
  EXPECT_EQ(message(R"({"1": {"1": {"16": {"4096": {"64": {"block_m": 32, "block_n": 16, "block_k": 256,
    "num_warps": 4, "num_ctas": 1, "num_stages": 2}}}}}})"),
            file + ":/1/1/16/4096/64: missing \"split_k\"");
  EXPECT_EQ(message(R"({"1": {"one": {}}})"), file + ":/1/one: \"one\" is not a num_slices (a whole number)");
  EXPECT_EQ(message(R"({"1": {"1": {"16": {"4096": {"64": {"block_m": 32, "block_n": 0, "block_k": 256,
    "num_warps": 4, "num_ctas": 1, "num_stages": 2, "split_k": 8}}}}}})"),
            file + ":/1/1/16/4096/64/block_n: expected a whole number in [1, 1024], got 0");
  EXPECT_EQ(message(R"({"1": {"1": {"16": []}}})"), file + ":/1/1/16: expected an object keyed by k, got []");
  EXPECT_EQ(message("{"), file + ": not JSON: " +
                              std::string("parse error at line 1, column 2: syntax error while parsing object key - "
                                          "unexpected end of input; expected string literal"));
  // Nesting is refused before the parse (the tree check and its messages recurse).
  EXPECT_EQ(message(std::string(100000, '[') + std::string(100000, ']')), file + ": nesting deeper than 16 levels");
  EXPECT_EQ(message(R"({"1": {"1": {"16": {"4096": {"64": {"block_m": 32, "block_n": 16, "block_k": 256,
    "num_warps": 4, "num_ctas": 1, "num_stages": 2, "split_k": 8}}}}}})"),
            "loaded");
  try {
    (void)TunedConfigs::load(dir, "NVIDIA H200");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--vllm-configs " + dir + ": no NVIDIA_H200_EXPAND_TRUE.json, _EXPAND_FALSE.json "
                                     "or _SHRINK.json there (the GPU name: --vllm-gpu)");
  }
}

}  // namespace
}  // namespace lp::plan
