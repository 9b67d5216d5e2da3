// vLLM's per-GPU fused-MoE configs (plan/moe_configs.hpp), read as vLLM reads them, and
// a model plan's fused-MoE BLOCK_M taken from them (--vllm-moe-configs).
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <string>

#include "plan/config.hpp"
#include "plan/moe_configs.hpp"
#include "plan/plan.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::plan {
namespace {

namespace fs = std::filesystem;

TEST(MoeConfigs, TheFileNameIsVllmsForTheGpu) {
  EXPECT_EQ(moe_config_file_name(256, 512, "NVIDIA H100 80GB HBM3"), "E=256,N=512,device_name=NVIDIA_H100_80GB_HBM3.json");
  // Runs of spaces and slashes are one underscore; dashes stay.
  EXPECT_EQ(moe_config_file_name(128, 768, "NVIDIA  H20-3e"), "E=128,N=768,device_name=NVIDIA_H20-3e.json");
  // Every H200 is NVIDIA_H200; a name that only contains the letters is not.
  EXPECT_EQ(moe_config_file_name(128, 768, "NVIDIA H200 NVL"), "E=128,N=768,device_name=NVIDIA_H200.json");
  EXPECT_EQ(moe_config_file_name(128, 768, "NVIDIA GH200 480GB"), "E=128,N=768,device_name=NVIDIA_GH200_480GB.json");
}

TEST(MoeConfigs, TheClosestBatchSizeDecidesTheSmallerOnATie) {
  const TempDir dir("lp-moe-configs-");
  // Keys in the file's order, as vLLM writes them; entries hold more than BLOCK_SIZE_M.
  dir.write("E=256,N=512,device_name=NVIDIA_H100_80GB_HBM3.json",
        R"({"1": {"BLOCK_SIZE_M": 16, "BLOCK_SIZE_N": 64}, "96": {"BLOCK_SIZE_M": 32},
            "128": {"BLOCK_SIZE_M": 16}, "256": {"BLOCK_SIZE_M": 64}, "1024": {"BLOCK_SIZE_M": 128}})");
  const auto block_m = [&](std::int64_t tokens) {
    const auto c = moe_config_block_m(dir.path(), 256, 512, "NVIDIA H100 80GB HBM3", tokens);
    return c ? c->block_m : 0;
  };
  EXPECT_EQ(block_m(128), 16);
  EXPECT_EQ(block_m(112), 32) << "96 and 128 are 16 away: the smaller key";
  EXPECT_EQ(block_m(200), 64);
  EXPECT_EQ(block_m(8192), 128);
  const auto c = moe_config_block_m(dir.path(), 256, 512, "NVIDIA H100 80GB HBM3", 300);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->key, "256");
  EXPECT_EQ(c->file, "E=256,N=512,device_name=NVIDIA_H100_80GB_HBM3.json");
  // No file for this GPU or shape: vLLM's get_default_config decides.
  EXPECT_FALSE(moe_config_block_m(dir.path(), 256, 256, "NVIDIA H100 80GB HBM3", 128));
  EXPECT_FALSE(moe_config_block_m(dir.path(), 256, 512, "NVIDIA H200", 128));
}

TEST(MoeConfigs, AMalformedFileNamesTheFileAndKey) {
  const TempDir dir("lp-moe-configs-");
  const std::string file = (fs::path(dir.path()) / "E=8,N=64,device_name=G.json").string();
  const auto error_of = [&](const std::string& text) {
    dir.write("E=8,N=64,device_name=G.json", text);
    try {
      (void)moe_config_block_m(dir.path(), 8, 64, "G", 16);
    } catch (const InputError& e) {
      return std::string(e.what()).substr(file.size());
    }
    return std::string("read");
  };
  EXPECT_EQ(error_of(R"({"many": {"BLOCK_SIZE_M": 16}})"), ":/many: a key is a batch size, a whole number of at least 1");
  EXPECT_EQ(error_of(R"({"16": {"BLOCK_SIZE_N": 16}})"), ":/16: missing \"BLOCK_SIZE_M\"");
  EXPECT_EQ(error_of(R"({"16": {"BLOCK_SIZE_M": 48}})"), ":/16/BLOCK_SIZE_M: 48 is not a power of two (vLLM asserts one)");
  EXPECT_EQ(error_of(R"({"16": {"BLOCK_SIZE_M": 8}})").rfind(":/16/BLOCK_SIZE_M: expected a whole number in [16, 1024]", 0),
            0U);
  EXPECT_EQ(error_of("{}"), ": no batch sizes (vLLM takes the closest of them)");
  EXPECT_EQ(error_of("[1]").rfind(": expected an object", 0), 0U) << error_of("[1]");
}

TEST(MoeConfigs, AModelPlanTakesItsFusedMoeBlockMFromTheGpusFile) {
  const TempDir dir("lp-moe-configs-");
  // Qwen3.6-35B-A3B at --tp 1: 256 experts of 512 per rank.
  dir.write("E=256,N=512,device_name=NVIDIA_H100_80GB_HBM3.json",
        R"({"128": {"BLOCK_SIZE_M": 16}, "1024": {"BLOCK_SIZE_M": 64}})");
  SweepConfig config = parse_config(
      R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, "axes": {"op": ["expand"], "triton": ["3.6.0"],
          "rank": [64], "tokens": [128, 2048], "weight_dtype": ["bf16"], "compiler": ["prebuilt"]}})",
      "m.json");
  FlagOverrides flags;
  flags.vllm_moe_configs = dir.path();
  apply_flags(config, flags);
  std::map<std::int64_t, std::pair<int, std::string>> fused;  // tokens -> block_m, tuned
  for (const Case& c : expand_plan(config, {"3.6.0"}).cases) {
    if (c.op == Op::fused_moe) {
      fused[c.tokens] = {c.expand->block_m, c.tuned()};
    }
  }
  ASSERT_EQ(fused.size(), 2U);
  EXPECT_EQ(fused[128].first, 16);
  EXPECT_EQ(fused[128].second, "block_m 16: E=256,N=512,device_name=NVIDIA_H100_80GB_HBM3.json[128]");
  EXPECT_EQ(fused[2048].first, 64);
  // Another GPU has no file there: get_default_config's 128 for 2048 tokens, and the case says so.
  flags.vllm_gpu = "NVIDIA H20";
  apply_flags(config, flags);
  for (const Case& c : expand_plan(config, {"3.6.0"}).cases) {
    if (c.op == Op::fused_moe && c.tokens == 2048) {
      EXPECT_EQ(c.expand->block_m, 128);
      EXPECT_EQ(c.tuned(), "block_m 128: vLLM's get_default_config for 2048 tokens (no "
                           "E=256,N=512,device_name=NVIDIA_H20.json in --vllm-moe-configs)");
    }
  }
  FlagOverrides missing;
  missing.vllm_moe_configs = (fs::path(dir.path()) / "nowhere").string();
  EXPECT_THROW(apply_flags(config, missing), UsageError);
}

TEST(MoeConfigs, ATunedFolderGivesBlockMFromItsFusedMoeFilesOrTheLoraDefault) {
  // VLLM_TUNED_CONFIG_FOLDER set: vLLM reads get_lora_op_configs' fused_moe_lora config
  // (block_m 64 without a fused-MoE LoRA file) and no MoE layer file.
  const TempDir tuned("lp-moe-configs-");
  fs::copy(fs::path(LP_SOURCE_DIR) / "tests/plan/fixtures/vllm-tuned", tuned.path(), fs::copy_options::recursive);
  const std::string axes = R"("axes": {"op": ["expand"], "triton": ["3.6.0"], "rank": [64], "tokens": [2048],
      "weight_dtype": ["bf16"], "compiler": ["prebuilt"]})";
  const auto fused_of = [](const Plan& p) {
    for (const Case& c : p.cases) {
      if (c.op == Op::fused_moe) {
        return std::make_pair(c.expand->block_m, c.tuned());
      }
    }
    return std::make_pair(0, std::string());
  };
  SweepConfig config = parse_config(R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, )" + axes + "}", "m.json");
  EXPECT_EQ(fused_of(expand_plan(config, {"3.6.0"})).first, 128) << "get_default_config at 2048 tokens";
  FlagOverrides with_tuned;
  with_tuned.vllm_configs = tuned.path();
  with_tuned.vllm_gpu = "NVIDIA H200";
  apply_flags(config, with_tuned);
  EXPECT_EQ(fused_of(expand_plan(config, {"3.6.0"})), std::make_pair(64, std::string("block_m 64: vLLM's fused_moe_lora default")));
  // The gate/up file (keys [max_loras][num_slices][m][rank][hidden][intermediate]) is keyed
  // by the engine's max_loras itself: 1 by default, 4 with --max-loras 4 (not 5, as the
  // expand's and shrink's lora_ids-sized key would be).
  tuned.write("NVIDIA_H200_FUSED_MOE_LORA_W13_SHRINK.json",
              R"({"1": {"2": {"2048": {"64": {"2048": {"512": {"block_m": 32, "block_n": 64}}}}}},
                  "5": {"2": {"2048": {"64": {"2048": {"512": {"block_m": 16}}}}}},
                  "4": {"2": {"2048": {"64": {"2048": {"512": {"block_m": 128}}}}}}})");
  // The down file: BLOCK_SIZE_M spelt as vLLM normalises it; m 1024 is the nearest key.
  tuned.write("NVIDIA_H200_FUSED_MOE_LORA_W2_SHRINK.json",
              R"({"1": {"1": {"1024": {"64": {"2048": {"512": {"BLOCK_SIZE_M": 16}}}}}},
                  "4": {"1": {"1024": {"64": {"2048": {"512": {"block_m": null}}}}}}})");
  const auto by_projection = [](const Plan& p, bool down) {
    for (const Case& c : p.cases) {
      if (c.op == Op::fused_moe && c.fused_moe()->mul_routed_weight == down) {
        return std::make_pair(c.expand->block_m, c.tuned());
      }
    }
    return std::make_pair(0, std::string());
  };
  const Plan read = expand_plan(config, {"3.6.0"});
  EXPECT_EQ(by_projection(read, false),
            std::make_pair(32, std::string("block_m 32: NVIDIA_H200_FUSED_MOE_LORA_W13_SHRINK.json[1][2][2048][64][2048][512]")));
  EXPECT_EQ(by_projection(read, true),
            std::make_pair(16, std::string("block_m 16: NVIDIA_H200_FUSED_MOE_LORA_W2_SHRINK.json[1][1][1024][64][2048][512]")));
  FlagOverrides four;
  four.vllm_max_loras = 4;
  apply_flags(config, four);
  const Plan at_four = expand_plan(config, {"3.6.0"});
  EXPECT_EQ(by_projection(at_four, false).first, 128) << by_projection(at_four, false).second;
  EXPECT_EQ(by_projection(at_four, true).first, 64) << "null: vLLM's `or 64`";
  // A BLOCK_SIZE_M the fast path asserts against: no case, and vLLM's failure named.
  tuned.write("NVIDIA_H200_FUSED_MOE_LORA_W2_SHRINK.json",
              R"({"4": {"1": {"1024": {"64": {"2048": {"512": {"block_m": 48}}}}}}})");
  const Plan refused = expand_plan(config, {"3.6.0"});
  EXPECT_EQ(by_projection(refused, true).first, 0);
  bool named = false;
  for (const Dropped& d : refused.not_applicable) {
    named = named || d.reason.find("power of 2 and >= 16; NVIDIA_H200_FUSED_MOE_LORA_W2_SHRINK.json[4][1][1024][64][2048][512] "
                                   "gives 48") != std::string::npos;
  }
  EXPECT_TRUE(named) << not_applicable_json(refused.not_applicable).dump();
  SweepConfig invariant = parse_config(R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, )" + axes + "}", "m.json");
  FlagOverrides batch_invariant;
  batch_invariant.vllm_batch_invariant = true;
  apply_flags(invariant, batch_invariant);
  EXPECT_EQ(fused_of(expand_plan(invariant, {"3.6.0"})).first, 64);
}

}  // namespace
}  // namespace lp::plan
