// Model presets (configs/models.json, plan/models.hpp): each preset's shapes against
// the numbers of its model's config.json, tensor parallelism as vLLM shards, and the
// plan --model makes.

#include <gtest/gtest.h>

#include <map>

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
  // Qwen/Qwen3-30B-A3B: hidden 2048 but 32 x 128 query width; 4 KV heads; the experts are not covered.
  auto moe = by_name("qwen3-30b-a3b", 1);
  ASSERT_EQ(moe.size(), 2U);
  EXPECT_EQ(moe["qkv_proj"].out, (Sizes{4096, 512, 512}));
  EXPECT_EQ(moe["qkv_proj"].in, 2048);
  EXPECT_EQ(moe["o_proj"].out, (Sizes{2048}));
  EXPECT_EQ(moe["o_proj"].in, 4096);
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
    EXPECT_STREQ(e.what(), "--model llama-9: no such preset (there are llama-3.1-8b, qwen3-8b, qwen3-vl-8b, "
                           "qwen3-30b-a3b; loraprobe list --models)");
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
    found = found || (c.id == q.cases.front().id && c.projection == "o_proj,down_proj");
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
  EXPECT_EQ(message(R"("gpt-5")"), "m.json:/model: --model gpt-5: no such preset (there are llama-3.1-8b, qwen3-8b, "
                                   "qwen3-vl-8b, qwen3-30b-a3b; loraprobe list --models)");
  EXPECT_EQ(message(R"({"name": "qwen3-8b", "tp": 0})"), "m.json:/model/tp: expected a whole number in [1, 64], got 0");
  EXPECT_EQ(message(R"({"name": "qwen3-8b", "pp": 2})"), "m.json:/model/pp: unknown key \"pp\" (name, tp)");
  EXPECT_EQ(message(R"({"name": "qwen3-30b-a3b", "tp": 64})"),
            "m.json:/model: --model qwen3-30b-a3b --tp 64: num_attention_heads (32) does not divide by 64");
  EXPECT_EQ(message(R"({"name": "qwen3-30b-a3b", "tp": 8})"), "parsed");  // 4 KV heads over 8 ranks: replicated
  EXPECT_EQ(message("7"), "m.json:/model: expected a preset name or {\"name\", \"tp\"}, got 7");
}

}  // namespace
}  // namespace lp::plan
