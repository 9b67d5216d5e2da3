#include "plan/plan.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <set>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "plan/axes.hpp"
#include "plan/embedded_configs.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::plan {
namespace {

Plan plan_of(const std::string& text) { return expand_plan(parse_config(text, "t.json"), {"3.6.0"}); }

TEST(Plan, CartesianProductInDeterministicOrderTokensFastest) {
  const Plan p = plan_of(R"({"axes": {"op": "expand", "ranks": [16, 64], "block_n": [32, 128], "tokens": [16, 256]}})");
  ASSERT_EQ(p.cases.size(), 8U);
  EXPECT_EQ(p.combinations, 8U);
  const std::vector<std::tuple<std::int64_t, int, std::int64_t>> expected = {
      {16, 32, 16}, {16, 32, 256}, {16, 128, 16}, {16, 128, 256}, {64, 32, 16}, {64, 32, 256}, {64, 128, 16}, {64, 128, 256}};
  for (std::size_t i = 0; i < p.cases.size(); ++i) {
    EXPECT_EQ(p.cases[i].index, i);
    EXPECT_EQ(std::make_tuple(p.cases[i].rank, p.cases[i].expand->block_n, p.cases[i].tokens), expected[i]) << i;
  }
}

TEST(Plan, CaseIdsAreStableAndUnique) {
  const Plan a = plan_of(R"({"axes": {"ranks": [16, 64], "tokens": [256, 384]}})");
  const Plan b = plan_of(R"({"axes": {"ranks": [64, 16, 32], "tokens": [384, 256]}, "seed": 1})");
  std::set<std::string> ids;
  for (const Case& c : a.cases) {
    ids.insert(c.id);
    EXPECT_EQ(c.id.size(), 12U);
  }
  EXPECT_EQ(ids.size(), a.cases.size());
  // The same axis values give the same id whatever else the config holds or its order.
  for (const Case& c : a.cases) {
    const auto it = std::find_if(b.cases.begin(), b.cases.end(), [&](const Case& o) { return o.axes() == c.axes(); });
    ASSERT_NE(it, b.cases.end());
    EXPECT_EQ(it->id, c.id);
  }
}

TEST(Plan, IdOfTheReportedConfigurationIsPinned) {
  // Changing how ids are computed breaks --resume and comparisons across reports:
  // this pin makes that a deliberate decision.
  const Plan p = expand_plan(parse_config(embedded_config("seed-48590.json"), "seed-48590.json"), {"3.6.0"});
  const auto it = std::find_if(p.cases.begin(), p.cases.end(),
                               [](const Case& c) { return c.tokens == 256 && c.expand->block_n == 128; });
  ASSERT_NE(it, p.cases.end());
  EXPECT_EQ(it->axes().dump(),
            R"({"add_inputs":true,"block_k":32,"block_m":64,"block_n":128,"compiler":"prebuilt","even_k":true,)"
            R"("hidden":[4096],"input_dtype":"fp32","num_loras":1,"num_slices":1,"num_stages":2,"num_warps":4,)"
            R"("op":"expand","rank":64,"tokens":256,"triton":"3.6.0","weight_dtype":"bf16"})");
  EXPECT_EQ(it->id, "e34956fe4061");
}

TEST(Plan, AmplifyIsAnAxisThatOnlyAmplifiedCasesCarryInTheirIdsAndAxes) {
  // The default is 0: every case of every config ever written keeps its id.
  const Plan plain = expand_plan(parse_config(embedded_config("seed-48590.json"), "seed-48590.json"), {"3.6.0"});
  SweepConfig config = parse_config(embedded_config("seed-48590.json"), "seed-48590.json");
  FlagOverrides flags;
  flags.axes[AxisId::amplify] = {"0,2,4"};
  apply_flags(config, flags);
  EXPECT_EQ(config.axes.at(AxisId::amplify).origin.describe(), "flag --amplify");
  const Plan amplified = expand_plan(config, {"3.6.0"});
  ASSERT_EQ(amplified.cases.size(), 3 * plain.cases.size());
  std::set<std::string> ids;
  for (const Case& c : amplified.cases) {
    ids.insert(c.id);
    const AxisValues axes = c.axes();
    if (c.amplify == 0) {
      EXPECT_FALSE(axes.contains("amplify"));
      const auto same = std::find_if(plain.cases.begin(), plain.cases.end(), [&](const Case& p) { return p.axes() == axes; });
      ASSERT_NE(same, plain.cases.end());
      EXPECT_EQ(same->id, c.id);
    } else {
      EXPECT_EQ(axes.value("amplify"), c.amplify);
    }
  }
  EXPECT_EQ(ids.size(), amplified.cases.size()) << "each D is a case of its own";
  // Plan order: amplify after the compiler, before tokens (tokens stay fastest).
  EXPECT_EQ(amplified.cases[0].amplify, 0);
  EXPECT_EQ(amplified.cases[10].amplify, 2);
  EXPECT_EQ(amplified.cases[10].tokens, 16);
  // An exclude rule names it like any axis.
  const Plan excluded = plan_of(R"({"axes": {"amplify": [0, 2], "block_n": [32, 128], "tokens": [256]},
                                   "exclude": [{"amplify": 2, "block_n": 32}]})");
  ASSERT_EQ(excluded.cases.size(), 3U);
  EXPECT_EQ(excluded.excluded_by_rule, std::vector<std::size_t>{1});
}

TEST(Plan, TritonAllRunsEverySetAndNamedVersionsMustHaveOne) {
  const std::vector<std::string> sets = {"3.6.0", "3.8.0", "3.9.0"};
  // No triton key: every set, outermost, so a report reads set by set.
  const Plan all = expand_plan(parse_config(R"({"axes": {"tokens": [256]}})", "t.json"), sets);
  ASSERT_EQ(all.cases.size(), 3U);
  EXPECT_EQ(all.cases[0].triton, "3.6.0");
  EXPECT_EQ(all.cases[2].triton, "3.9.0");
  EXPECT_NE(all.cases[0].id, all.cases[1].id);  // the same configuration under two Tritons is two cases
  const Plan two = expand_plan(parse_config(R"({"axes": {"triton": ["3.9.0", "all"], "tokens": [256]}})", "t.json"),
                               sets);
  ASSERT_EQ(two.cases.size(), 3U);
  EXPECT_EQ(two.cases[0].triton, "3.9.0");  // as written, then the rest of "all" without repeats
  try {
    (void)expand_plan(parse_config(R"({"axes": {"triton": ["3.5.0"]}})", "t.json"), sets);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.json:/axes/triton/0: Triton 3.5.0 has no kernel set here (sets: 3.6.0, 3.8.0, 3.9.0; "
                           "add one with --kernel-dir, made by scripts/gen_kernels.py --triton 3.5.0 --out DIR)");
  }
  SweepConfig flagged = parse_config(R"({"axes": {"tokens": [256]}})", "t.json");
  override_axis(flagged, AxisId::triton, parse_flag_values(axis_info(AxisId::triton), "3.9.0,3.7.1"), "--triton");
  try {
    (void)expand_plan(flagged, sets);
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--triton 3.7.1: Triton 3.7.1 has no kernel set here (sets: 3.6.0, 3.8.0, 3.9.0; add one "
                           "with --kernel-dir, made by scripts/gen_kernels.py --triton 3.7.1 --out DIR)");
  }
  try {
    (void)parse_flag_values(axis_info(AxisId::triton), "3.9");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--triton 3.9: expected a Triton version such as 3.8.0, or all, got \"3.9\"");
  }
  // An exclude rule matches the triton axis like any other.
  const Plan excluded = expand_plan(
      parse_config(R"({"axes": {"tokens": [256]}, "exclude": [{"triton": "3.6.0"}]})", "t.json"), sets);
  ASSERT_EQ(excluded.cases.size(), 2U);
  EXPECT_EQ(excluded.cases[0].triton, "3.8.0");
}

TEST(Plan, VllmDefaultsResolvePerOpSlicesAndTokens) {
  const Plan p = plan_of(R"({"axes": {"op": ["expand", "shrink"], "input_dtype": "bf16", "num_slices": [1, 3],
                                       "tokens": [127, 128]}})");
  for (const Case& c : p.cases) {
    if (c.op == Op::expand) {
      EXPECT_EQ(c.expand->block_m, 64);
      EXPECT_EQ(c.expand->block_n, c.num_slices == 1 ? 128 : 64);
      EXPECT_EQ(c.expand->block_k, 32);
      EXPECT_EQ(c.expand->num_warps, 4);
      EXPECT_EQ(c.expand->num_stages, 2);
      EXPECT_FALSE(c.shrink.has_value());
    } else {
      EXPECT_EQ(c.shrink->block_m, 32);
      EXPECT_EQ(c.shrink->block_n, 16);
      EXPECT_EQ(c.shrink->block_k, c.tokens < 128 ? 256 : 32);
      EXPECT_EQ(c.shrink->split_k, c.tokens < 128 ? 64 : 8);
      EXPECT_FALSE(c.expand.has_value());
    }
  }
  EXPECT_EQ(p.cases.size(), 8U);
}

TEST(Plan, ResolvedDuplicatesCollapse) {
  // "vllm" is 128 for one slice: the two spellings give one case per token count.
  const Plan p = plan_of(R"({"axes": {"op": "expand", "block_n": ["vllm", 128, 32], "tokens": [16, 32]}})");
  EXPECT_EQ(p.cases.size(), 4U);
  EXPECT_EQ(p.duplicates, 2U);
}

TEST(Plan, AxesThatDoNotApplyCollapseAndMismatchesAreCounted) {
  const Plan p = plan_of(R"({"axes": {"op": ["expand", "shrink"], "input_dtype": ["fp32", "bf16"],
                                       "add_inputs": [true, false], "split_k": [8, 64], "tokens": [256]}})");
  std::size_t expand = 0;
  std::size_t shrink = 0;
  for (const Case& c : p.cases) {
    (c.op == Op::expand ? expand : shrink)++;
    if (c.op == Op::shrink) {
      EXPECT_FALSE(c.axes().contains("add_inputs"));
      EXPECT_EQ(c.input_dtype, DType::bf16);
    } else {
      EXPECT_FALSE(c.axes().contains("split_k"));
    }
  }
  EXPECT_EQ(expand, 4U);  // 2 input dtypes x 2 add_inputs; split_k collapses
  EXPECT_EQ(shrink, 2U);  // bf16 only, 2 split_k; add_inputs collapses
  ASSERT_EQ(p.not_applicable.size(), 1U);
  EXPECT_EQ(p.not_applicable[0].count, 4U);  // shrink with fp32 input: 2 add_inputs x 2 split_k
}

TEST(Plan, PerSliceHiddenMustMatchNumSlices) {
  const Plan p = plan_of(R"({"axes": {"num_slices": [2, 3], "hidden": [[4096, 1024, 1024]], "tokens": [256]}})");
  ASSERT_EQ(p.cases.size(), 1U);
  EXPECT_EQ(p.cases[0].hidden, (std::vector<std::int64_t>{4096, 1024, 1024}));
  ASSERT_EQ(p.not_applicable.size(), 1U);
  EXPECT_EQ(p.not_applicable[0].reason, "hidden lists 3 sizes but num_slices is 2");
}

TEST(Plan, ExcludeRulesMatchResolvedValuesAndAreCounted) {
  const Plan p = plan_of(R"({"axes": {"block_n": ["vllm", 32], "tokens": [16, 32, 64]},
                             "exclude": [{"block_n": 128, "tokens": {"from": 32, "to": 64, "mul": 2}}, {"tokens": 16, "block_n": 32}]})");
  EXPECT_EQ(p.cases.size(), 3U);
  EXPECT_EQ(p.excluded_by_rule, (std::vector<std::size_t>{2, 1}));
}

TEST(Plan, ManyExcludeRulesMatchByValueNotApplicableAxesAndTheFirstRuleCounts) {
  // 253 rules no case meets, then two that the same cases meet (the first of them counts),
  // then one naming an axis that does not apply: 256, the cap.
  std::string rules;
  for (int i = 0; i < 253; ++i) {
    rules += fmt::format(R"({{"tokens": {}, "rank": 16}},)", 1000 + i);
  }
  const Plan p = plan_of(R"({"axes": {"op": ["expand", "lora_linear"], "hidden": [[4096, 4096], 1024], "num_slices": [2],
                             "rank": [16, 64], "tokens": [16, 32]},
                             "exclude": [)" + rules + R"({"hidden": 4096, "rank": 64}, {"rank": 64},
                                         {"input_dtype": "fp32", "op": "lora_linear"}]})");
  ASSERT_EQ(p.excluded_by_rule.size(), 256U);
  EXPECT_EQ(std::accumulate(p.excluded_by_rule.begin(), p.excluded_by_rule.begin() + 253, std::size_t{0}), 0U);
  // hidden 4096 matches the per-slice [4096, 4096]; for rank 64 that is 2 ops x 2 tokens.
  EXPECT_EQ(p.excluded_by_rule[253], 4U);
  // rank 64 with hidden 1024: the next rule, which also matches those above but comes second.
  EXPECT_EQ(p.excluded_by_rule[254], 4U);
  // lora_linear has no input_dtype axis: a rule naming it never matches lora_linear.
  EXPECT_EQ(p.excluded_by_rule[255], 0U);
  EXPECT_EQ(p.cases.size(), 8U);
  for (const Case& c : p.cases) {
    EXPECT_EQ(c.rank, 16);
  }
}

TEST(Plan, APlannedCaseKeepsNoJsonAndComputesItsAxes) {
  const Plan p = plan_of(R"({"axes": {"tokens": [16, 32]}})");
  ASSERT_EQ(p.cases.size(), 2U);
  for (const Case& c : p.cases) {
    EXPECT_EQ(c.own_axes, nullptr);
    EXPECT_EQ(c.axes().value("tokens"), c.tokens);
    EXPECT_EQ(c.id, sha256_hex(c.axes().dump()).substr(0, 12));
  }
}

TEST(Plan, EvenKFollowsRankForExpandAndHiddenTimesSplitForShrink) {
  const Plan p = plan_of(R"({"axes": {"op": ["expand", "shrink"], "input_dtype": "bf16", "ranks": [16, 64],
                                       "hidden": [4096, 4000], "split_k": [8], "block_k": [32], "tokens": [256]}})");
  for (const Case& c : p.cases) {
    if (c.op == Op::expand) {
      EXPECT_EQ(c.expand->even_k, c.rank % 32 == 0);
    } else {
      EXPECT_EQ(c.shrink->even_k, c.hidden[0] % 256 == 0);
    }
  }
}

TEST(Plan, LoraLinearCarriesBothKernels) {
  const Plan p = plan_of(R"({"axes": {"op": "lora_linear", "input_dtype": ["fp32", "bf16"], "tokens": [64]}})");
  ASSERT_EQ(p.cases.size(), 1U);  // input_dtype does not apply: x is in the weight dtype
  const Case& c = p.cases[0];
  ASSERT_TRUE(c.expand && c.shrink);
  EXPECT_EQ(c.expand->block_n, 128);
  EXPECT_EQ(c.shrink->split_k, 64);
  EXPECT_EQ(c.axes().value("shrink").at("block_k"), 256);
}

TEST(Plan, TooLargeIsAUsageError) {
  EXPECT_THROW(plan_of(R"({"axes": {"tokens": {"from": 1, "to": 4000, "step": 1}, "ranks": {"from": 1, "to": 4000, "step": 1}}})"),
               UsageError);
}

TEST(Plan, TheLargestProductIsRefusedWithAPinnedMessage) {
  // 4096 tokens x 4096 ranks x 1024 adapters: 2^34 combinations, refused without building any of them.
  try {
    plan_of(R"({"axes": {"tokens": {"from": 1, "to": 4096, "step": 1}, "ranks": {"from": 1, "to": 4096, "step": 1},
                "num_loras": {"from": 1, "to": 1024, "step": 1}}})");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "t.json: the sweep has more than 5000000 combinations; narrow an axis or add excludes");
  }
}

TEST(Plan, ShippedConfigsExpandOverEveryEmbeddedTriton) {
  // Every shipped config plans within the caps when "triton" means all four sets
  // (full.json once passed 5 million combinations that way: it names 3.6.0).
  for (std::string_view name : embedded_config_names()) {
    SCOPED_TRACE(std::string(name));
    const Plan p =
        expand_plan(parse_config(embedded_config(name), std::string(name)), {"3.6.0", "3.7.1", "3.8.0", "3.9.0"});
    EXPECT_GT(p.cases.size(), 0U);
  }
}

TEST(Config, AKeyWrittenTwiceIsAnErrorNamingIt) {
  try {
    (void)parse_config(R"({"axes": {"tokens": [256], "ranks": [64], "tokens": [512]}})", "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.json:/axes/tokens: this key is written twice in its object; keep one");
  }
  try {
    (void)parse_config(R"({"exclude": [{"op": "expand"}, {"op": "shrink", "op": "expand"}]})", "t.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "t.json:/exclude/1/op: this key is written twice in its object; keep one");
  }
  // The same key in two objects is fine.
  EXPECT_NO_THROW((void)parse_config(R"({"exclude": [{"op": "expand"}, {"op": "shrink"}]})", "t.json"));
}

}  // namespace
}  // namespace lp::plan

namespace lp::plan {
namespace {

// A report's cases and an exclude rule may name any family; only a sweep's op axis
// is limited to the families it can plan (fused_moe comes from a model's experts).
TEST(Axes, TheOpAxisPlansWhatItCanButEveryFamilyIsAnOp) {
  const AxisInfo& op = axis_info(AxisId::op);
  EXPECT_EQ(check_value(op, "fused_moe"), std::nullopt) << "a report with fused_moe cases must read";
  EXPECT_EQ(check_value(op, "lora_linear"), std::nullopt);
  const std::optional<std::string> planned = check_sweep_value(op, "fused_moe");
  ASSERT_TRUE(planned.has_value());
  EXPECT_NE(planned->find("--model"), std::string::npos) << *planned;
  EXPECT_EQ(check_value(op, "foo"), std::optional<std::string>("expected one of expand, shrink, lora_linear, shrink_fp8, expand_fp8, got \"foo\""));
  EXPECT_TRUE(check_value(op, 3).has_value());
}

}  // namespace
}  // namespace lp::plan

namespace lp::plan {
namespace {

// The FP8 families: their dtypes are theirs (the dtype axes collapse, and a sweep may
// not ask for fp8e4m3), scale_group is theirs alone, and it is in their ids and axes.
TEST(Plan, Fp8FamiliesFixTheirDtypesAndOwnTheScaleGroup) {
  const Plan p = plan_of(R"({"axes": {"op": ["expand", "expand_fp8", "shrink_fp8"], "input_dtype": ["fp32", "bf16"],
                                      "weight_dtype": ["bf16", "fp16"], "scale_group": [0, 128], "tokens": [256]}})");
  std::size_t expand_fp8 = 0;
  std::size_t shrink_fp8 = 0;
  std::set<std::string> ids;
  for (const Case& c : p.cases) {
    const AxisValues a = c.axes();
    EXPECT_TRUE(ids.insert(c.id).second);
    if (c.op == Op::expand) {
      EXPECT_EQ(c.scale_group, 0);
      EXPECT_FALSE(a.contains("scale_group")) << "an expand case keeps the id it always had";
      continue;
    }
    EXPECT_EQ(c.input_dtype, DType::e4m3);
    EXPECT_FALSE(a.contains("input_dtype")) << "not an axis of the FP8 families";
    ASSERT_TRUE(a.integer("scale_group").has_value());
    if (c.op == Op::expand_fp8) {
      ++expand_fp8;
      EXPECT_NE(c.weight_dtype, DType::e4m3) << "W is y's dtype";
    } else {
      ++shrink_fp8;
      EXPECT_EQ(c.weight_dtype, DType::e4m3);
    }
  }
  EXPECT_EQ(expand_fp8, 4U) << "W 2 x scale_group 2";
  EXPECT_EQ(shrink_fp8, 2U) << "one per scale_group: its dtypes collapse";
  bool refused = false;
  for (const Dropped& d : p.not_applicable) {
    refused = refused || d.reason.find("scale_group is the FP8 families'") != std::string::npos;
  }
  EXPECT_TRUE(refused) << "expand with scale_group 128 is not a configuration";
  const std::optional<std::string> fp8 = check_sweep_value(axis_info(AxisId::input_dtype), "fp8e4m3");
  ASSERT_TRUE(fp8.has_value());
  EXPECT_NE(fp8->find("fix their operands' dtypes"), std::string::npos) << *fp8;
  EXPECT_EQ(check_value(axis_info(AxisId::weight_dtype), "fp8e4m3"), std::nullopt) << "a report's shrink_fp8 case";
}

}  // namespace
}  // namespace lp::plan
