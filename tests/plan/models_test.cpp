// Model presets (configs/models.json, plan/models.hpp): each preset's shapes against
// the numbers of its model's config.json, tensor parallelism as vLLM shards, and the
// plan --model makes.

#include <gtest/gtest.h>

#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "plan/config.hpp"
#include "plan/models.hpp"
#include "plan/plan.hpp"
#include "util/error.hpp"

namespace lp::plan {
namespace {

std::map<std::string, Projection> by_name(const std::string& model, std::int64_t tp) {
  std::map<std::string, Projection> out;
  for (const Projection& p : projections(find_model(model), tp)) {
    out[p.name] = p;
  }
  return out;
}

using Sizes = std::vector<std::int64_t>;

TEST(Models, ShapesAreTheModelsOwnNumbers) {
  // meta-llama/Llama-3.1-8B: hidden 4096, intermediate 14336, 32 heads, 8 KV heads, head_dim 128.
  auto llama = by_name("llama-3.1-8b", 1);
  EXPECT_EQ(llama["qkv_proj"].out, (Sizes{4096, 1024, 1024}));
  EXPECT_EQ(llama["qkv_proj"].in, 4096);
  EXPECT_EQ(llama["o_proj"].out, (Sizes{4096}));
  EXPECT_EQ(llama["o_proj"].in, 4096);
  EXPECT_EQ(llama["gate_up_proj"].out, (Sizes{14336, 14336}));
  EXPECT_EQ(llama["down_proj"].out, (Sizes{4096}));
  EXPECT_EQ(llama["down_proj"].in, 14336);
  // Qwen/Qwen3-8B and the text model of Qwen/Qwen3-VL-8B: intermediate 12288.
  for (const char* name : {"qwen3-8b", "qwen3-vl-8b"}) {
    auto q = by_name(name, 1);
    EXPECT_EQ(q["qkv_proj"].out, (Sizes{4096, 1024, 1024})) << name;
    EXPECT_EQ(q["gate_up_proj"].out, (Sizes{12288, 12288})) << name;
    EXPECT_EQ(q["down_proj"].in, 12288) << name;
  }
  // Qwen/Qwen3-30B-A3B: hidden 2048 but 32 x 128 query width; 4 KV heads; 128 experts of 768, no shared expert.
  auto moe = by_name("qwen3-30b-a3b", 1);
  ASSERT_EQ(moe.size(), 5U);  // attention 2, the router, the routed experts 2
  EXPECT_EQ(moe["experts.gate_up_proj"].kernel, LoraKernel::fused_moe);
  EXPECT_EQ(moe["experts.gate_up_proj"].out, (Sizes{768, 768}));
  EXPECT_EQ(moe["experts.down_proj"].in, 768);
  EXPECT_EQ(moe["experts.down_proj"].num_experts, 128);
  EXPECT_EQ(moe["experts.down_proj"].top_k, 8);
  EXPECT_EQ(moe["qkv_proj"].out, (Sizes{4096, 512, 512}));
  EXPECT_EQ(moe["qkv_proj"].in, 2048);
  EXPECT_EQ(moe["o_proj"].out, (Sizes{2048}));
  EXPECT_EQ(moe["o_proj"].in, 4096);
}

TEST(Models, TheHybridQwenModelsHaveEveryProjectionVllmWraps) {
  // Qwen/Qwen3.6-35B-A3B text_config: hidden 2048; 16 heads x 256 with an output gate, 2 KV heads;
  // delta-net 16 key heads and 32 value heads of 128; 256 experts (top 8) of 512, a shared expert of 512.
  for (const std::int64_t tp : {1, 2, 4}) {
    auto q = by_name("qwen3.6-35b-a3b", tp);
    ASSERT_EQ(q.size(), 12U) << tp;
    const std::int64_t kv = 2 >= tp ? 2 / tp : 1;  // 2 KV heads over 4 ranks: one replicated head each
    EXPECT_EQ(q["qkv_proj"].out, (Sizes{16 / tp * 256 * 2, kv * 256, kv * 256})) << tp;  // query and gate
    EXPECT_EQ(q["qkv_proj"].in, 2048);
    EXPECT_EQ(q["o_proj"].out, (Sizes{2048}));
    EXPECT_EQ(q["o_proj"].in, 16 / tp * 256) << tp;  // the gate does not reach o_proj
    // in_proj_qkv: key, key, value, unequal: each slice has its own width.
    EXPECT_EQ(q["in_proj_qkv"].out, (Sizes{2048 / tp, 2048 / tp, 4096 / tp})) << tp;
    EXPECT_EQ(q["in_proj_qkv"].layer, "linear_attention");
    EXPECT_EQ(q["in_proj_z"].out, (Sizes{4096 / tp})) << tp;
    EXPECT_EQ(q["in_proj_ba"].out, (Sizes{32 / tp, 32 / tp})) << tp;  // narrower than any block_n
    EXPECT_EQ(q["in_proj_ba"].in, 2048);
    EXPECT_EQ(q["out_proj"].out, (Sizes{2048}));  // the layer of the report's first NaN: a single-slice expand
    EXPECT_EQ(q["out_proj"].in, 4096 / tp) << tp;
    EXPECT_EQ(q["shared_expert.gate_up_proj"].out, (Sizes{512 / tp, 512 / tp})) << tp;
    EXPECT_EQ(q["shared_expert.down_proj"].in, 512 / tp) << tp;
    EXPECT_EQ(q["shared_expert.down_proj"].kernel, LoraKernel::expand_shrink);
    EXPECT_EQ(q["experts.gate_up_proj"].out, (Sizes{512 / tp, 512 / tp})) << tp;
    EXPECT_EQ(q["experts.gate_up_proj"].kernel, LoraKernel::fused_moe);
    EXPECT_EQ(q["experts.down_proj"].num_experts, 256);
    // The router and the shared expert's gate are ReplicatedLinear layers, wrapped
    // with LoRA and never sharded.
    EXPECT_EQ(q["gate"].out, (Sizes{256}));
    EXPECT_EQ(q["gate"].in, 2048);
    EXPECT_EQ(q["gate"].layer, "router");
    EXPECT_EQ(q["shared_expert_gate"].out, (Sizes{1}));
    EXPECT_EQ(q["shared_expert_gate"].in, 2048);
    EXPECT_NE(q["shared_expert_gate"].source.find("qwen3_next.py at v0.34.0"), std::string::npos);
  }
  // Qwen3-30B-A3B has a router and no shared expert, so no shared expert gate.
  auto moe = by_name("qwen3-30b-a3b", 1);
  EXPECT_EQ(moe["gate"].out, (Sizes{128}));
  EXPECT_EQ(moe.count("shared_expert_gate"), 0U);
  // Qwen/Qwen3.5-9B: a dense hybrid. hidden 4096, intermediate 12288; 16 heads x 256 gated, 4 KV heads.
  auto d = by_name("qwen3.5-9b", 2);
  ASSERT_EQ(d.size(), 8U);
  EXPECT_EQ(d["qkv_proj"].out, (Sizes{4096, 512, 512}));
  EXPECT_EQ(d["in_proj_qkv"].out, (Sizes{1024, 1024, 2048}));
  EXPECT_EQ(d["in_proj_ba"].out, (Sizes{16, 16}));
  EXPECT_EQ(d["gate_up_proj"].out, (Sizes{6144, 6144}));
  EXPECT_EQ(d["down_proj"].in, 6144);
  EXPECT_EQ(d.count("experts.down_proj"), 0U);
  // 32 value heads do not divide by 64 ranks; 16 query heads already stop at 32.
  try {
    (void)projections(find_model("qwen3.6-35b-a3b"), 32);
    FAIL() << "16 heads do not divide by 32";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--model qwen3.6-35b-a3b --tp 32: num_attention_heads (16) does not divide by 32");
  }
  // The new dense presets add widths the others lack.
  EXPECT_EQ(by_name("llama-3.3-70b", 1)["gate_up_proj"].out, (Sizes{28672, 28672}));
  EXPECT_EQ(by_name("gemma-3-27b", 1)["qkv_proj"].out, (Sizes{4096, 2048, 2048}));
  EXPECT_EQ(by_name("gemma-3-27b", 1)["o_proj"].out, (Sizes{5376}));
}

TEST(Models, TheDualStreamChainCoversTheSquareProjectionsAndNamesTheOthers) {
  // --model with --vllm-dual-stream: the chain's host model has one width for x and y,
  // so Qwen3-8B's o_proj (4096 -> 4096) is a lora_linear gdc case; qkv_proj, gate_up_proj
  // and down_proj are not swept, each with the reason.
  SweepConfig config = parse_config(
      R"({"name": "m", "model": {"name": "qwen3-8b"}, "axes": {"triton": ["3.6.0"], "rank": [64], "tokens": [256],
          "weight_dtype": ["bf16"], "block_n": ["vllm"], "num_stages": ["vllm"], "compiler": ["prebuilt"]}})",
      "m.json");
  FlagOverrides flags;
  flags.vllm_dual_stream = true;
  apply_flags(config, flags);
  const Plan p = expand_plan(config, {"3.6.0"});
  ASSERT_EQ(p.cases.size(), 1U);
  EXPECT_EQ(p.cases[0].op, Op::lora_linear);
  EXPECT_TRUE(p.cases[0].gdc);
  EXPECT_EQ(p.cases[0].projection(), "o_proj");
  EXPECT_EQ(p.cases[0].hidden, (std::vector<std::int64_t>{4096}));
  std::set<std::string> not_swept;
  for (const NotSwept& n : p.not_swept) {
    not_swept.insert(n.projection);
    EXPECT_NE(n.why.find("input and output widths are equal"), std::string::npos) << n.why;
  }
  EXPECT_EQ(not_swept, (std::set<std::string>{"qkv_proj", "gate_up_proj", "down_proj"}));
}

TEST(Models, AMoePlanSweepsTheRoutedExpertsAsFusedMoeCases) {
  const std::string axes = R"("triton": ["3.6.0"], "rank": [64], "tokens": [256, 4], "input_dtype": ["fp32"],
          "weight_dtype": ["bf16"], "add_inputs": [true], "block_n": ["vllm"], "num_stages": ["vllm"],
          "compiler": ["prebuilt"])";
  const SweepConfig config = parse_config(
      R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, "axes": {"op": ["expand"], )" + axes + "}}", "m.json");
  const Plan p = expand_plan(config, {"3.6.0"});
  std::set<std::string> projections;
  std::map<std::string, const Case*> fused;
  for (const Case& c : p.cases) {
    projections.insert(c.projection());
    if (c.op == Op::fused_moe) {
      fused[c.projection()] = &c;
    }
  }
  // out_proj and shared_expert.down_proj both expand into 2048: one case, labelled with both.
  EXPECT_EQ(projections, (std::set<std::string>{"qkv_proj", "o_proj,out_proj,shared_expert.down_proj", "in_proj_qkv",
                                                "in_proj_z", "in_proj_ba", "shared_expert.gate_up_proj", "gate",
                                                "shared_expert_gate", "experts.gate_up_proj", "experts.down_proj"}));
  EXPECT_TRUE(p.not_swept.empty());
  // The routed experts, as vLLM's fast path launches them (configs/vllm/defaults.json
  // "fused_moe"): 256 experts, top-8, gate/up 2 x 512 from K 2048, down 2048 from K 512
  // with the routing weights; block_k 128 (K >= 256), 4 warps, 3 stages, NPID_FACTOR 1.
  ASSERT_EQ(fused.size(), 2U);
  const Case& up = *fused.at("experts.gate_up_proj");
  EXPECT_EQ(up.hidden, (Sizes{512, 512}));
  ASSERT_TRUE(up.fused_moe());
  EXPECT_EQ(*up.fused_moe(), (FusedMoeCase{2048, 256, 8, false, 1}));
  EXPECT_EQ(up.input_dtype, DType::bf16);
  EXPECT_FALSE(up.shrink);
  ASSERT_TRUE(up.expand);
  EXPECT_EQ(*up.expand, (KernelKnobs{64, 128, 128, 4, 3, 1, true}));
  const Case& down = *fused.at("experts.down_proj");
  EXPECT_EQ(down.hidden, (Sizes{2048}));
  EXPECT_EQ(*down.fused_moe(), (FusedMoeCase{512, 256, 8, true, 1}));
  EXPECT_EQ(down.axes().boolean("mul_routed_weight"), std::optional<bool>(true));
  // 4 tokens: vLLM 0.34.0's two-kernel path (at most 64 tokens), which a sweep does not launch.
  EXPECT_EQ(fused.at("experts.down_proj")->tokens, 256);
  const auto reason_count = [](const Plan& plan, const std::string& what) {
    std::size_t n = 0;
    for (const Dropped& d : plan.not_applicable) {
      n += d.reason.find(what) != std::string::npos ? d.count : 0;
    }
    return n;
  };
  EXPECT_EQ(reason_count(p, "FUSED_MOE_LORA_TWO_KERNEL_MAX_TOKENS"), 2U) << not_applicable_json(p.not_applicable).dump();
  // 96 tokens x top-8 x 8 <= 256 experts x --max-loras 24: vLLM's naive routing, keyed by
  // the engine's max_loras, not by the batch's adapters.
  SweepConfig many = parse_config(
      R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, "axes": {"op": ["expand"], "triton": ["3.6.0"],
          "rank": [64], "tokens": [96], "weight_dtype": ["bf16"], "compiler": ["prebuilt"]}})",
      "m.json");
  EXPECT_EQ(reason_count(expand_plan(many, {"3.6.0"}), "naively"), 0U);
  FlagOverrides max_loras;
  max_loras.vllm_max_loras = 24;
  apply_flags(many, max_loras);
  EXPECT_EQ(reason_count(expand_plan(many, {"3.6.0"}), "naively"), 2U);
  // Without the expand op the experts are named as not swept, never silently left out.
  const SweepConfig shrink_only = parse_config(
      R"({"name": "m", "model": {"name": "qwen3.6-35b-a3b"}, "axes": {"op": ["shrink"], )" + axes + "}}", "m.json");
  const Plan s = expand_plan(shrink_only, {"3.6.0"});
  ASSERT_EQ(s.not_swept.size(), 2U);
  EXPECT_EQ(s.not_swept[0].projection, "experts.gate_up_proj");
  EXPECT_EQ(s.not_swept[1].projection, "experts.down_proj");
  EXPECT_NE(s.not_swept[0].why.find("with --op expand"), std::string::npos) << s.not_swept[0].why;
  EXPECT_EQ(not_swept_json(s.not_swept).dump(), nlohmann::json::parse(R"([{"projection": "experts.gate_up_proj", "why": ")" +
                                                            s.not_swept[0].why + R"("}, {"projection":
                                                            "experts.down_proj", "why": ")" +
                                                            s.not_swept[0].why + R"("}])")
                                          .dump());
  // A dense model leaves nothing out.
  const SweepConfig dense = parse_config(
      R"({"name": "m", "model": "qwen3.5-9b", "axes": {"triton": ["3.6.0"], "op": ["expand"], "rank": [64],
          "tokens": [256], "input_dtype": ["fp32"], "weight_dtype": ["bf16"], "add_inputs": [true],
          "block_n": ["vllm"], "num_stages": ["vllm"], "compiler": ["prebuilt"]}})",
      "m.json");
  EXPECT_TRUE(expand_plan(dense, {"3.6.0"}).not_swept.empty());
}

TEST(Models, AModelPlanRunsTheKnobsVllmLaunchesForEachProjection) {
  // The default config's knob neighbours (block_n 32/64/256, num_stages 1/3) are left out,
  // counted, with the reason; every expand and shrink runs vLLM's default for its shape.
  SweepConfig config = load_embedded_config("default");
  FlagOverrides model;
  model.model = "qwen3.6-35b-a3b";
  apply_flags(config, model);
  const Plan p = expand_plan(config, {"3.6.0"});
  // Every combination is accounted for: planned, not applicable (the knobs vLLM does not
  // launch among them), excluded, collapsed, or one case of two projections.
  const auto accounted = [](const Plan& plan) {
    std::size_t n = plan.cases.size() + plan.duplicates + plan.shared_by_projections;
    for (const Dropped& d : plan.not_applicable) {
      n += d.count;
    }
    for (const std::size_t e : plan.excluded_by_rule) {
      n += e;
    }
    return n;
  };
  std::size_t knob_reason = 0;
  for (const Dropped& d : p.not_applicable) {
    knob_reason += d.reason.find("a model plan runs the knobs vLLM 0.34.0 launches") != std::string::npos ? d.count : 0;
  }
  // 4 block_n x 3 num_stages: the default config's other 11 of every 12 expand cases.
  EXPECT_GT(knob_reason, p.cases.size());
  EXPECT_EQ(p.added_by_vllm, 0U) << "the default config names \"vllm\" on every knob";
  EXPECT_EQ(accounted(p), p.combinations);
  // A config that names vLLM's one-slice knobs (block_n 128 and 32, not "vllm") gets
  // vLLM's multi-slice ones too, counted as added.
  SweepConfig seed = load_embedded_config("seed-48590");
  apply_flags(seed, model);
  const Plan s = expand_plan(seed, {"3.6.0"});
  EXPECT_GT(s.added_by_vllm, 0U);
  EXPECT_EQ(accounted(s), s.combinations + s.added_by_vllm);
  // A knob flag beside --model asks for what the plan does not run.
  FlagOverrides block_n;
  block_n.axes[AxisId::block_n] = {"32"};
  SweepConfig flagged = load_embedded_config("default");
  apply_flags(flagged, model);
  apply_flags(flagged, block_n);
  try {
    (void)expand_plan(flagged, {"3.6.0"});
    ADD_FAILURE() << "planned";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--block-n with --model: a model plan runs the knobs vLLM 0.34.0", 0), 0U)
        << e.what();
  }
  std::map<std::int64_t, int> fused_block_m;  // tokens -> block_m
  for (const Case& c : p.cases) {
    ASSERT_TRUE(c.expand || c.shrink) << c.id;
    if (c.op == Op::expand) {
      EXPECT_EQ(c.expand->block_n, c.num_slices == 1 ? 128 : 64) << c.id;
      EXPECT_EQ(c.expand->num_stages, 2) << c.id;
    } else if (c.op == Op::shrink) {
      EXPECT_EQ(c.shrink->block_n, 16) << c.id;
      EXPECT_EQ(c.shrink->num_stages, 2) << c.id;
    } else if (c.op == Op::fused_moe) {
      EXPECT_GT(c.tokens, 64) << "vLLM 0.34.0 takes the two-kernel path at 64 tokens and fewer";
      fused_block_m[c.tokens] = c.expand->block_m;
    }
  }
  // BLOCK_M follows vLLM's get_default_config by the batch (no tuned folder).
  EXPECT_EQ(fused_block_m, (std::map<std::int64_t, int>{{128, 64}, {256, 64}, {512, 64}, {1024, 128}, {2048, 128},
                                                          {4096, 128}, {8192, 128}}));
}

TEST(Models, TheSmCountSizesTheFusedMoeNSplit) {
  // Qwen3-30B-A3B down at 1024 tokens: 191 M blocks of 128 rows, times vLLM's 2 adapter
  // programs (max_loras + 1): 382, past 1.5 x 132 SMs, so NPID_FACTOR 1; on 256 SMs
  // (--sm-count) it is short of 384, so cdiv(512, 382) = 2. With --max-loras 3 the
  // grid is 4 x 191 = 764: 1 again.
  SweepConfig config = parse_config(
      R"({"name": "m", "model": {"name": "qwen3-30b-a3b"}, "axes": {"op": ["expand"], "triton": ["3.6.0"],
          "rank": [64], "tokens": [1024], "weight_dtype": ["bf16"], "compiler": ["prebuilt"]}})",
      "m.json");
  const auto npid_of_down = [](const Plan& p) {
    for (const Case& c : p.cases) {
      if (c.projection() == "experts.down_proj") {
        return c.fused_moe()->npid_factor;
      }
    }
    return 0;
  };
  EXPECT_EQ(npid_of_down(expand_plan(config, {"3.6.0"})), 1);
  FlagOverrides more_sms;
  more_sms.sm_count = 256;
  apply_flags(config, more_sms);
  EXPECT_EQ(config.sm_count.value, 256);
  EXPECT_EQ(npid_of_down(expand_plan(config, {"3.6.0"})), 2);
  FlagOverrides max_loras;
  max_loras.vllm_max_loras = 3;
  apply_flags(config, max_loras);
  EXPECT_EQ(npid_of_down(expand_plan(config, {"3.6.0"})), 1);
  FlagOverrides bad;
  bad.sm_count = 0;
  EXPECT_THROW(apply_flags(config, bad), UsageError);
}

TEST(Models, TensorParallelismShardsWhatVllmShards) {
  auto q2 = by_name("qwen3-8b", 2);
  EXPECT_EQ(q2["qkv_proj"].out, (Sizes{2048, 512, 512}));  // column parallel: outputs divided
  EXPECT_EQ(q2["qkv_proj"].in, 4096);
  EXPECT_EQ(q2["o_proj"].out, (Sizes{4096}));  // row parallel: the input divided, the output whole
  EXPECT_EQ(q2["o_proj"].in, 2048);
  EXPECT_EQ(q2["gate_up_proj"].out, (Sizes{6144, 6144}));
  EXPECT_EQ(q2["down_proj"].in, 6144);
  // 8 KV heads over 16 ranks: one replicated head each.
  EXPECT_EQ(by_name("qwen3-8b", 16)["qkv_proj"].out, (Sizes{256, 128, 128}));
  try {
    (void)projections(find_model("qwen3-8b"), 3);
    FAIL() << "32 heads do not divide by 3";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--model qwen3-8b --tp 3: num_attention_heads (32) does not divide by 3");
  }
  try {
    (void)find_model("llama-9");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--model llama-9: no such preset (there are llama-3.1-8b, llama-3.3-70b, "
                           "qwen3-8b, qwen3-vl-8b, qwen3-30b-a3b, qwen3.5-9b, qwen3.6-35b-a3b, gemma-3-27b; loraprobe "
                           "list --models)");
  }
}

TEST(Models, ThePlanSweepsEachProjectionOnce) {
  const SweepConfig config = parse_config(
      R"({"name": "m", "model": {"name": "qwen3-8b"}, "axes": {"triton": ["3.6.0"], "op": ["expand", "shrink"],
          "rank": [64], "tokens": [256], "input_dtype": ["bf16"], "weight_dtype": ["bf16"], "add_inputs": [true],
          "block_n": ["vllm"], "num_stages": ["vllm"], "compiler": ["prebuilt"]}})",
      "m.json");
  const Plan p = expand_plan(config, {"3.6.0"});
  std::map<std::string, std::string> shapes;  // "<op> <hidden>" -> projection
  for (const Case& c : p.cases) {
    const nlohmann::json a = c.axes().to_json();
    shapes[fmt::format("{} {}", a["op"].get<std::string>(), a["hidden"].dump())] = a["projection"];
  }
  const std::map<std::string, std::string> want = {
      {"expand [4096,1024,1024]", "qkv_proj"},  {"expand [4096]", "o_proj,down_proj"},
      {"expand [12288,12288]", "gate_up_proj"}, {"shrink [4096,4096,4096]", "qkv_proj"},
      {"shrink [4096]", "o_proj"},              {"shrink [4096,4096]", "gate_up_proj"},
      {"shrink [12288]", "down_proj"}};
  EXPECT_EQ(shapes, want);
  EXPECT_EQ(p.cases.size(), 7U);
  // The projection names the shape; the id is the kernel problem's, the same without --model.
  const SweepConfig plain = parse_config(
      R"({"name": "m", "axes": {"triton": ["3.6.0"], "op": ["expand"], "num_slices": [1], "hidden": [4096],
          "rank": [64], "tokens": [256], "input_dtype": ["bf16"], "weight_dtype": ["bf16"], "add_inputs": [true],
          "block_n": ["vllm"], "num_stages": ["vllm"], "compiler": ["prebuilt"]}})",
      "plain.json");
  const Plan q = expand_plan(plain, {"3.6.0"});
  ASSERT_EQ(q.cases.size(), 1U);
  bool found = false;
  for (const Case& c : p.cases) {
    found = found || (c.id == q.cases.front().id && c.projection() == "o_proj,down_proj");
  }
  EXPECT_TRUE(found);
}

TEST(Models, BadModelSettingsNameTheFileAndKey) {
  auto message = [](const char* model) {
    try {
      (void)parse_config(fmt::format(R"({{"name": "m", "model": {}}})", model), "m.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("parsed");
  };
  EXPECT_EQ(message(R"("gpt-5")"), "m.json:/model: --model gpt-5: no such preset (there are llama-3.1-8b, llama-3.3-70b, "
                                   "qwen3-8b, qwen3-vl-8b, qwen3-30b-a3b, qwen3.5-9b, qwen3.6-35b-a3b, gemma-3-27b; "
                                   "loraprobe list --models)");
  EXPECT_EQ(message(R"({"name": "qwen3-8b", "tp": 0})"), "m.json:/model/tp: expected a whole number in [1, 64], got 0");
  EXPECT_EQ(message(R"({"name": "qwen3-8b", "pp": 2})"), "m.json:/model/pp: unknown key \"pp\" (name, tp)");
  EXPECT_EQ(message(R"({"name": "qwen3-30b-a3b", "tp": 64})"),
            "m.json:/model: --model qwen3-30b-a3b --tp 64: num_attention_heads (32) does not divide by 64");
  EXPECT_EQ(message(R"({"name": "qwen3-30b-a3b", "tp": 8})"), "parsed");  // 4 KV heads over 8 ranks: replicated
  EXPECT_EQ(message("7"), "m.json:/model: expected a preset name or {\"name\", \"tp\"}, got 7");
}

}  // namespace
}  // namespace lp::plan
