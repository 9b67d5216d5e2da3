// vLLM's defaults come from configs/vllm/defaults.json: the plan's "vllm" values and
// the ptxas matrix's answers agree with it, and its numbers are vLLM's
// (vllm/lora/ops/triton_ops/utils.py, get_lora_op_configs). The kernel side is
// tests/kernels/test_vllm_defaults.py.

#include <gtest/gtest.h>

#include <set>

#include <nlohmann/json.hpp>

#include "plan/plan.hpp"
#include "plan/vllm_defaults.hpp"
#include "util/error.hpp"

namespace lp::plan {
namespace {

TEST(VllmDefaults, TheBuiltInFileHoldsVllmsNumbers) {
  const VllmDefaults& d = vllm_defaults();
  // block_m, block_n, block_k, num_warps, num_stages, split_k, even_k, num_ctas, group_size_m
  EXPECT_EQ(d.expand_one_slice, (KernelKnobs{64, 128, 32, 4, 2, 1, false}));
  EXPECT_EQ(d.expand_more_slices, (KernelKnobs{64, 64, 32, 4, 2, 1, false}));
  EXPECT_EQ(d.expand_block_k_newer, 16);
  EXPECT_EQ(d.shrink_small_batch_below, 128);
  EXPECT_EQ(d.shrink_small_batch, (KernelKnobs{32, 16, 256, 4, 2, 64, false, 1, 8}));
  EXPECT_EQ(d.shrink_large_batch, (KernelKnobs{32, 16, 32, 4, 2, 8, false, 1, 8}));
  EXPECT_EQ(d.shrink_group_size_m, 8);
}

TEST(VllmDefaults, ThePlanResolvesVllmFromTheFile) {
  const VllmDefaults& d = vllm_defaults();
  EXPECT_EQ(vllm_expand_defaults(1), d.expand_one_slice);
  EXPECT_EQ(vllm_expand_defaults(3), d.expand_more_slices);
  EXPECT_EQ(vllm_shrink_defaults(d.shrink_small_batch_below - 1), d.shrink_small_batch);
  EXPECT_EQ(vllm_shrink_defaults(d.shrink_small_batch_below), d.shrink_large_batch);
  // A planned case with every knob "vllm" (the default config's) carries the file's numbers.
  const Plan p = expand_plan(parse_config(R"({"axes": {"triton": ["3.6.0"], "op": ["expand"], "num_slices": [1],
                                              "hidden": [4096], "tokens": [64]}})",
                                          "t.json"),
                             {"3.6.0"});
  ASSERT_EQ(p.cases.size(), 1U);
  ASSERT_TRUE(p.cases[0].expand);
  EXPECT_EQ(p.cases[0].expand->block_n, d.expand_one_slice.block_n);
  EXPECT_EQ(p.cases[0].expand->block_k, d.expand_one_slice.block_k);
  EXPECT_EQ(p.cases[0].expand->num_stages, d.expand_one_slice.num_stages);
}

TEST(VllmDefaults, ThePtxasMatrixAnswersAreTheDefaultsAndItsRowsHoldThem) {
  const VllmDefaults& d = vllm_defaults();
  ASSERT_EQ(d.matrix_answers.size(), 3U);
  auto only = [](const std::vector<AxisValue>& values) {
    return values.size() == 1 ? values[0].integer().value_or(-1) : std::int64_t{-1};
  };
  const auto& one = d.matrix_answers[0].match;
  EXPECT_EQ(only(one.at("block_n")), d.expand_one_slice.block_n);
  EXPECT_EQ(only(one.at("block_k")), d.expand_one_slice.block_k);
  EXPECT_EQ(only(one.at("num_stages")), d.expand_one_slice.num_stages);
  const auto& more = d.matrix_answers[1].match;
  EXPECT_EQ(only(more.at("block_n")), d.expand_more_slices.block_n);
  EXPECT_EQ(to_json_values(more.at("block_k")),
            (std::vector<nlohmann::json>{d.expand_more_slices.block_k, d.expand_block_k_newer}));
  EXPECT_EQ(only(d.matrix_answers[2].match.at("block_k")), d.expand_block_k_newer);
  // Every variant an answer names is one of the default rows, so the matrix reports it.
  for (const MatrixAnswer& a : d.matrix_answers) {
    std::size_t rows = 0;
    for (const AxisValues& row : d.matrix_rows) {
      bool all = row.text("input_dtype") == "fp32";
      for (const auto& [key, values] : a.match) {
        all = all && std::find(values.begin(), values.end(), row.at(key)) != values.end();
      }
      rows += all ? 1 : 0;
    }
    std::size_t combinations = 1;
    for (const auto& [key, values] : a.match) {
      combinations *= values.size();
    }
    EXPECT_EQ(rows, combinations) << a.what;
  }
  EXPECT_EQ(d.matrix_rows.size(), 4U * 4 + 2 * 2 + 1 + 1);
  EXPECT_EQ(d.matrix_rows[0].integer("block_m"), d.expand_one_slice.block_m);  // the common axes reach every row
}

TEST(VllmDefaults, TheFusedMoeFastPathIsVllmsArithmetic) {
  const FusedMoeDefaults& f = vllm_defaults().fused_moe;
  EXPECT_EQ(f.block_n, 128);
  EXPECT_EQ(f.num_stages, 3);
  EXPECT_EQ(f.max_npid_factor, 16);
  // Qwen3.6-35B-A3B gate/up at 4096 tokens: 256 experts pad the routing to >= 252 M
  // blocks, past 1.5 x 132 SMs, so one program per block, 4 warps; K 2048 >= 256: block_k 128.
  FusedMoeLaunch up = vllm_fused_moe_launch(4096, 8, 256, 2048, 512, 2, 1, 64, 132);
  EXPECT_EQ(up.npid_factor, 1);
  EXPECT_EQ(up.knobs, (KernelKnobs{64, 128, 128, 4, 3, 1, true}));
  // Qwen3-30B-A3B down at 256 tokens: 2048 pairs + 128 x 63 padding = 158 blocks. With one
  // adapter program that is < 198: cdiv(264, 158) = 2 programs per block (the shrink
  // budget allows 6, N / 128 16), 8 warps; with vLLM's default two (max_loras + 1) the
  // 316 programs fill the GPU: 1, 4 warps.
  FusedMoeLaunch down = vllm_fused_moe_launch(256, 8, 128, 768, 2048, 1, 1, 64, 132);
  EXPECT_EQ(down.npid_factor, 2);
  EXPECT_EQ(down.knobs.num_warps, 8);
  EXPECT_EQ(vllm_fused_moe_launch(256, 8, 128, 768, 2048, 1, 2, 64, 132).npid_factor, 1);
  EXPECT_EQ(vllm_fused_moe_launch(256, 8, 128, 768, 2048, 1, 2, 64, 132).knobs.num_warps, 4);
  // Few experts, few tokens: capped at 16, then by N / 128.
  EXPECT_EQ(vllm_fused_moe_launch(16, 2, 8, 4096, 4096, 1, 1, 64, 132).npid_factor, 4)
      << "the shrink budget: K / (K + N) = 0.5 allows int(1.5 / 0.5) + 1 = 4, occupancy wants 16, N / 128 = 32";
  EXPECT_EQ(vllm_fused_moe_launch(16, 2, 8, 128, 256, 1, 1, 64, 132).npid_factor, 2) << "N / 128 = 2";
  // A narrow K with few pairs per expert takes block_k 64; K not a multiple of it is masked.
  const FusedMoeLaunch narrow = vllm_fused_moe_launch(64, 2, 64, 192, 1024, 1, 1, 64, 132);
  EXPECT_EQ(narrow.knobs.block_k, 64);
  EXPECT_TRUE(narrow.knobs.even_k);
  EXPECT_FALSE(vllm_fused_moe_launch(64, 2, 64, 200, 1024, 1, 1, 64, 132).knobs.even_k);
}

TEST(VllmDefaults, TheFusedMoeBlockMIsGetDefaultConfigsRuleByTheBatch) {
  const FusedMoeDefaults& f = vllm_defaults().fused_moe;
  EXPECT_EQ(f.two_kernel_max_tokens, 64);
  EXPECT_EQ(f.block_m_for(1), 16);
  EXPECT_EQ(f.block_m_for(32), 16);
  EXPECT_EQ(f.block_m_for(33), 32);
  EXPECT_EQ(f.block_m_for(96), 32);
  EXPECT_EQ(f.block_m_for(97), 64);
  EXPECT_EQ(f.block_m_for(512), 64);
  EXPECT_EQ(f.block_m_for(513), 128);
  EXPECT_EQ(f.block_m_for(8192), 128);
  // A bigger BLOCK_M pads the routing into fewer M blocks: Qwen3-30B-A3B down at 1024
  // tokens is 8192 pairs + 128 x 127 = 191 blocks of 128 (< 198), so 2 programs each,
  // where 64-row blocks (255) keep one.
  EXPECT_EQ(vllm_fused_moe_launch(1024, 8, 128, 768, 2048, 1, 1, 128, 132).npid_factor, 2);
  EXPECT_EQ(vllm_fused_moe_launch(1024, 8, 128, 768, 2048, 1, 1, 64, 132).npid_factor, 1);
  // Fewer SMs (an H20's 78): the same grid is past 1.5 x 78 = 117.
  EXPECT_EQ(vllm_fused_moe_launch(1024, 8, 128, 768, 2048, 1, 1, 128, 78).npid_factor, 1);
}

TEST(VllmDefaults, AMalformedFileNamesTheKey) {
  try {
    (void)parse_vllm_defaults(R"({"expand": {"one_slice": {"block_m": 64}}})", "d.json");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "d.json:/expand/one_slice: missing \"block_n\"");
  }
  EXPECT_THROW((void)parse_vllm_defaults("[", "d.json"), InputError);
}

}  // namespace
}  // namespace lp::plan
