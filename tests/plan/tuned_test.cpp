// vLLM's tuned LoRA configs (plan/tuned.hpp): the lookup rule, nearest-key ties,
// the plan they make, and the messages for bad files.

#include <cstdint>
#include <limits>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

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

TEST(Tuned, DualStreamReadsExpandFalseForTheExpandAndShrinkForTheShrink) {
  // VLLM_LORA_ENABLE_DUAL_STREAM: the chain's expand never adds into y, so it reads
  // _EXPAND_FALSE, whatever the config's add_inputs said; the shrink reads _SHRINK.
  SweepConfig config = parse_config(
      R"({"name": "t", "axes": {"triton": ["3.6.0"], "weight_dtype": ["bf16"], "num_slices": [1], "hidden": [4096],
          "rank": [64], "add_inputs": [true], "tokens": [16, 2048], "block_m": ["vllm"], "block_n": ["vllm"],
          "block_k": ["vllm"], "num_warps": ["vllm"], "num_stages": ["vllm"], "split_k": ["vllm"],
          "compiler": ["prebuilt"]}})",
      "t.json");
  FlagOverrides flags;
  flags.vllm_configs = k_fixtures;
  flags.vllm_gpu = "NVIDIA H200";
  flags.vllm_dual_stream = true;
  apply_flags(config, flags);
  const Plan p = expand_plan(config, {"3.6.0"});
  ASSERT_EQ(p.cases.size(), 2U);
  for (const Case& c : p.cases) {
    EXPECT_EQ(c.op, Op::lora_linear);
    EXPECT_TRUE(c.gdc);
    EXPECT_FALSE(c.add_inputs);
    const std::string tuned = c.axes().text("tuned").value_or("");
    EXPECT_EQ(tuned.rfind("NVIDIA_H200_SHRINK.json[1][1][", 0), 0U) << tuned;
    EXPECT_NE(tuned.find("; NVIDIA_H200_EXPAND_FALSE.json[1][1]["), std::string::npos) << tuned;
  }
  EXPECT_EQ(p.cases[1].expand->num_stages, 1);  // the fixture's EXPAND_FALSE entry from 1024 tokens on
  // It sets op, gdc and add_inputs itself: naming one of them too is a contradiction.
  FlagOverrides both = flags;
  both.axes[AxisId::op] = {"expand"};
  EXPECT_THROW(apply_flags(config, both), UsageError);
}

TEST(Tuned, KeysAreReadExactlyAsVllmReadsThem) {
  const TempDir dir_holder("lp-tuned-test-");
  const std::string dir = dir_holder.path();
  auto leaf = [](int block_n) {
    return R"({"block_m": 64, "block_n": )" + std::to_string(block_n) +
           R"(, "block_k": 32, "num_warps": 4, "num_ctas": 1, "num_stages": 2})";
  };
  // max_loras keys 1 and 2; num_slices 1 only.
  write_file_atomic(dir + "/G_EXPAND_TRUE.json", R"({"1": {"1": {"256": {"64": {"4096": )" + leaf(32) +
                                                     R"(}}}}, "2": {"1": {"256": {"64": {"4096": )" + leaf(128) +
                                                     "}}}}}");
  const TunedConfigs t = TunedConfigs::load(dir, "G");
  // vLLM looks max_loras up as lora_ids.size(0), the engine's max_loras + 1: one adapter reads key "2".
  EXPECT_EQ(t.expand(true, 1, 1, 256, 64, 4096)->describe(), "G_EXPAND_TRUE.json[2][1][256][64][4096]");
  EXPECT_EQ(t.expand(true, 1, 1, 256, 64, 4096)->knobs.block_n, 128);
  // num_slices has no nearest key: vLLM's config_data[str(num_slices)] raises.
  const std::optional<TunedChoice> missing = t.expand(true, 1, 3, 256, 64, 4096);
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->vllm_error, "vLLM raises KeyError: '3' here: G_EXPAND_TRUE.json[2] has no num_slices key \"3\" "
                                 "(it has 1); vLLM indexes num_slices exactly");
  // The plan records that combination as not applicable, with vLLM's error, and goes on.
  SweepConfig config = parse_config(
      R"({"name": "t", "axes": {"triton": ["3.6.0"], "op": ["expand"], "input_dtype": ["fp32"], "weight_dtype": ["bf16"],
          "num_slices": [1, 3], "hidden": [4096], "rank": [64], "add_inputs": [true], "tokens": [256],
          "compiler": ["prebuilt"]}})",
      "t.json");
  FlagOverrides flags;
  flags.vllm_configs = dir;
  flags.vllm_gpu = "G";
  apply_flags(config, flags);
  Plan p = expand_plan(config, {"3.6.0"});
  ASSERT_EQ(p.cases.size(), 1U);
  EXPECT_EQ(p.cases[0].num_slices, 1);
  ASSERT_EQ(p.not_applicable.size(), 1U);
  EXPECT_EQ(p.not_applicable[0].reason, missing->vllm_error);
  // --vllm-batch-invariant: vLLM skips the files (VLLM_BATCH_INVARIANT) and its default shrink has split_k 1.
  flags = {};
  flags.vllm_batch_invariant = true;
  apply_flags(config, flags);
  p = expand_plan(config, {"3.6.0"});
  // The 3-slice combination the file cannot serve is a case again: vLLM never reads the file.
  ASSERT_EQ(p.cases.size(), 2U);
  EXPECT_EQ(p.cases[1].expand->block_n, 64);  // vLLM's default for 3 slices
  EXPECT_EQ(p.cases[0].axes().text("tuned"), "vLLM defaults (VLLM_BATCH_INVARIANT skips the tuned files)");
  EXPECT_NE(config.to_json().dump().find(R"("vllm_batch_invariant":{"origin":"flag --vllm-batch-invariant","value":true})"),
            std::string::npos);
  EXPECT_EQ(vllm_shrink_defaults(16, true).split_k, 1);
  EXPECT_EQ(vllm_shrink_defaults(16, false).split_k, 64);
}

TEST(Tuned, NumCtasAndGroupSizeMGoWithTheCase) {
  const TempDir dir_holder("lp-tuned-test-");
  const std::string dir = dir_holder.path();
  write_file_atomic(dir + "/G_EXPAND_TRUE.json", R"({"2": {"1": {"256": {"64": {"4096": {"block_m": 64,
    "block_n": 128, "block_k": 32, "num_warps": 4, "num_ctas": 2, "num_stages": 2}}}}}})");
  write_file_atomic(dir + "/G_SHRINK.json", R"({"2": {"1": {"256": {"4096": {"64": {"block_m": 32,
    "block_n": 16, "block_k": 32, "num_warps": 4, "num_ctas": 1, "num_stages": 2, "split_k": 8,
    "group_size_m": 4}}}}}})");
  SweepConfig config = parse_config(
      R"({"name": "t", "axes": {"triton": ["3.6.0"], "op": ["expand", "shrink"], "input_dtype": ["bf16"],
          "weight_dtype": ["bf16"], "num_slices": [1], "hidden": [4096], "rank": [64], "add_inputs": [true],
          "tokens": [256], "compiler": ["prebuilt"]}})",
      "t.json");
  FlagOverrides flags;
  flags.vllm_configs = dir;
  flags.vllm_gpu = "G";
  apply_flags(config, flags);
  const Plan p = expand_plan(config, {"3.6.0"});
  ASSERT_EQ(p.cases.size(), 2U);
  // vLLM passes num_ctas to the launch: the case asks for it (and no embedded variant has it; see kernels_test).
  EXPECT_EQ(p.cases[0].expand->num_ctas, 2);
  EXPECT_EQ(p.cases[0].axes().integer("num_ctas"), 2);
  // The shrink's GROUP_SIZE_M is the file's.
  EXPECT_EQ(p.cases[1].shrink->group_size_m, 4);
  EXPECT_EQ(p.cases[1].axes().integer("group_size_m"), 4);
  // vLLM's defaults add neither key, so a plan without tuned files keeps its case ids.
  EXPECT_FALSE(vllm_shrink_defaults(256).group_size_m != 8);
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
  EXPECT_EQ(message(R"({"1": {"one": {}}})"), file + ":/1/one: num_slices key \"one\" is not a whole number");
  // A key is one token of the pointer (RFC 6901), so a "/" in it does not read as a level more.
  EXPECT_EQ(message(R"({"1": {"1": {"16": {"4096": {"6/4": {}}}}}})"),
            file + ":/1/1/16/4096/6~14: n key \"6/4\" is not a whole number");
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
    EXPECT_EQ(std::string(e.what()), "--vllm-configs " + dir + ": no NVIDIA_H200_EXPAND_TRUE.json, _EXPAND_FALSE.json, "
                                     "_SHRINK.json or _FUSED_MOE_LORA_{W13,W2}_SHRINK.json there (the GPU name: "
                                     "--vllm-gpu)");
  }
}

// Issue 53: the file is read by a linear parse now (nlohmann's ordered parse looked each
// key up in a list: 100,000 keys took 15 s); what it reads must be what that parse read:
// keys in file order (a tie goes to the first), a repeated key in its first place with
// its last value, as Python's json gives vLLM.
TEST(Tuned, FileOrderAndRepeatedKeysReadAsVllmReadsThem) {
  auto leaf = [](int block_n) {
    return R"({"block_m": 64, "block_n": )" + std::to_string(block_n) +
           R"(, "block_k": 32, "num_warps": 4, "num_ctas": 1, "num_stages": 2})";
  };
  auto entry = [&](const std::string& m, int block_n) {
    return "\"" + m + R"(": {"64": {"4096": )" + leaf(block_n) + "}}";
  };
  const std::string text = R"({"1": {"1": {)" + entry("48", 16) + ", " + entry("16", 32) + ", " + entry("48", 64) +
                           ", " + entry("016", 128) + "}}}";
  const TunedConfigs t = TunedConfigs::parse("G", "EXPAND_FALSE", text, "mine.json");
  // 32 is 16 from 48 and from 16 (and "016"): 48 comes first in the file, with its last value.
  EXPECT_EQ(t.expand(false, 0, 1, 32, 64, 4096)->describe(), "G_EXPAND_FALSE.json[1][1][48][64][4096]");
  EXPECT_EQ(t.expand(false, 0, 1, 32, 64, 4096)->knobs.block_n, 64);
  EXPECT_EQ(t.expand(false, 0, 1, 16, 64, 4096)->knobs.block_n, 32);  // the exact key "16", not "016"
  EXPECT_EQ(t.expand(false, 0, 1, 10, 64, 4096)->describe(), "G_EXPAND_FALSE.json[1][1][16][64][4096]");
  // A FIFO where a tuned file would be is refused at once (it blocked the run).
  const TempDir dir("lp-tuned-fifo-");
  ASSERT_EQ(::mkfifo((dir.path() + "/G_SHRINK.json").c_str(), 0600), 0);
  try {
    (void)TunedConfigs::load(dir.path(), "G");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + "/G_SHRINK.json: cannot read: it is a FIFO, not a regular file");
  }
}

TEST(Tuned, OneFilesTextIsReadAsTheFolderReadsIt) {
  const std::string text = R"({"1": {"1": {"1": {"64": {"4096": {"block_m": 64, "block_n": 32, "block_k": 32,
    "num_warps": 4, "num_ctas": 1, "num_stages": 2}}}, "999999999999": {"64": {"4096": {"block_m": 64,
    "block_n": 128, "block_k": 32, "num_warps": 4, "num_ctas": 1, "num_stages": 3}}}}}})";
  const TunedConfigs t = TunedConfigs::parse("NVIDIA H200", "EXPAND_FALSE", text, "mine.json");
  EXPECT_EQ(t.files(), std::vector<std::string>{"NVIDIA_H200_EXPAND_FALSE.json"});
  EXPECT_FALSE(t.expand(true, 0, 1, 16, 64, 4096));  // the other expand's file is not there
  EXPECT_EQ(t.expand(false, 0, 1, 16, 64, 4096)->describe(), "NVIDIA_H200_EXPAND_FALSE.json[1][1][1][64][4096]");
  // The nearest key is measured without overflow however far the wanted value lies:
  // |999999999999 - INT64_MIN| does not fit an int64, and wrapped it looked the nearer.
  EXPECT_EQ(t.expand(false, 0, 1, std::numeric_limits<std::int64_t>::min(), 64, 4096)->describe(),
            "NVIDIA_H200_EXPAND_FALSE.json[1][1][1][64][4096]");
  EXPECT_EQ(t.expand(false, 0, 1, std::numeric_limits<std::int64_t>::max(), 64, 4096)->describe(),
            "NVIDIA_H200_EXPAND_FALSE.json[1][1][999999999999][64][4096]");
  // The shrink file has split_k: the op decides the leaf's fields, as the file name does for load().
  try {
    (void)TunedConfigs::parse("G", "SHRINK", text, "mine.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "mine.json:/1/1/1/64/4096: missing \"split_k\"");
  }
  try {
    (void)TunedConfigs::parse("G", "EXPAND", text, "mine.json");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "mine.json: \"EXPAND\" is not a tuned-config op (EXPAND_TRUE, EXPAND_FALSE, "
                                     "SHRINK, FUSED_MOE_LORA_W13_SHRINK, FUSED_MOE_LORA_W2_SHRINK)");
  }
}

TEST(Tuned, FusedMoeFilesHaveSixLevelsAndAWholeBlockM) {
  const auto error_of = [](const std::string& text) {
    try {
      (void)TunedConfigs::parse("G", "FUSED_MOE_LORA_W13_SHRINK", text, "moe.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("read");
  };
  // The expand's five levels are one short: the experts' width is the sixth.
  EXPECT_EQ(error_of(R"({"1": {"2": {"256": {"64": {"2048": {"block_m": 32}}}}}})"),
            "moe.json:/1/2/256/64/2048/block_m: i key \"block_m\" is not a whole number");
  EXPECT_EQ(error_of(R"({"1": {"2": {"256": {"64": {"2048": {"512": {"block_m": "32"}}}}}}})"),
            "moe.json:/1/2/256/64/2048/512/block_m: expected a whole number in [1, 1024], got \"32\"");
  EXPECT_EQ(error_of(R"({"1": {"2": {"256": {"64": {"2048": {"512": {"BLOCK_SIZE_M": 2048}}}}}}})"),
            "moe.json:/1/2/256/64/2048/512/BLOCK_SIZE_M: expected a whole number in [1, 1024], got 2048");
  // Only BLOCK_SIZE_M is read: the other knobs may be anything vLLM's two-kernel path takes.
  const TunedConfigs t = TunedConfigs::parse(
      "G", "FUSED_MOE_LORA_W13_SHRINK", R"({"3": {"2": {"256": {"64": {"2048": {"512": {"block_m": 32, "num_warps": "x"}}}}}}})",
      "moe.json");
  const std::optional<TunedChoice> c = t.fused_moe_shrink(true, 3, 2, 300, 64, 2048, 512);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->knobs.block_m, 32);
  EXPECT_EQ(c->describe(), "G_FUSED_MOE_LORA_W13_SHRINK.json[3][2][256][64][2048][512]");
  EXPECT_FALSE(t.fused_moe_shrink(false, 3, 1, 300, 64, 2048, 512).has_value()) << "no down file";
  // num_slices is indexed exactly, as for the other ops.
  EXPECT_NE(t.fused_moe_shrink(true, 3, 1, 300, 64, 2048, 512)->vllm_error.find("KeyError: '1'"), std::string::npos);
}

}  // namespace
}  // namespace lp::plan

namespace lp::plan {
namespace {

// vLLM keys its tuned lookup by lora_ids.size(0), the engine's --max-loras + 1, not by the
// adapters a batch happens to hold (lora_kernel_metadata.py, lora_expand_op.py).
TEST(Tuned, MaxLorasKeysTheLookupAsVllmsLoraIdsDo) {
  const TempDir dir("lp-tuned-max-loras-");
  const auto entry = [](int block_n) {
    return fmt::format(R"({{"1": {{"256": {{"64": {{"4096": {{"block_m": 64, "block_n": {}, "block_k": 32,
      "num_warps": 4, "num_ctas": 1, "num_stages": 2}}}}}}}}}})",
                       block_n);
  };
  write_file_atomic(dir.path() + "/X_EXPAND_TRUE.json", fmt::format(R"({{"2": {}, "5": {}}})", entry(128), entry(32)));
  const auto plan_with = [&](std::optional<std::int64_t> max_loras, const char* num_loras) {
    SweepConfig config = parse_config(
        fmt::format(R"({{"axes": {{"triton": ["3.6.0"], "op": ["expand"], "num_loras": {}, "tokens": [256],
                     "rank": [64], "hidden": [4096]}}}})",
                    num_loras),
        "t.json");
    FlagOverrides flags;
    flags.vllm_configs = dir.path();
    flags.vllm_gpu = "X";
    flags.vllm_max_loras = max_loras;
    apply_flags(config, flags);
    return expand_plan(config, {"3.6.0"});
  };
  // One adapter in the batch of an engine started with --max-loras 4: key 5, vLLM's entry.
  Plan p = plan_with(4, "[1]");
  ASSERT_EQ(p.cases.size(), 1U);
  EXPECT_EQ(p.cases[0].expand->block_n, 32);
  EXPECT_EQ(p.cases[0].axes().text("tuned").value_or(""), "X_EXPAND_TRUE.json[5][1][256][64][4096]");
  // Without the flag: vLLM's default max_loras 1, key 2.
  p = plan_with(std::nullopt, "[1]");
  EXPECT_EQ(p.cases.at(0).expand->block_n, 128);
  EXPECT_EQ(p.cases.at(0).axes().text("tuned").value_or(""), "X_EXPAND_TRUE.json[2][1][256][64][4096]");
  // More adapters than the engine holds is no configuration of it.
  p = plan_with(4, "[1, 8]");
  ASSERT_EQ(p.cases.size(), 1U);
  ASSERT_EQ(p.not_applicable.size(), 1U);
  EXPECT_EQ(p.not_applicable[0].reason, "vLLM with --max-loras 4 holds at most that many adapters in a batch");
  FlagOverrides bad;
  bad.vllm_max_loras = 0;
  SweepConfig config = parse_config(R"({"axes": {}})", "t.json");
  EXPECT_THROW(apply_flags(config, bad), UsageError);
}

}  // namespace
}  // namespace lp::plan
