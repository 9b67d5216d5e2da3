#include "support/error_of.hpp"
#include "plan/config.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "plan/embedded_configs.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::plan {
namespace {

/// The one-line message a bad config produces (what main prints after "loraprobe: ").
std::string error_of(const std::string& text) {
  return test_support::error_of<InputError>([&] { (void)parse_config(text, "bad.json"); }, "(accepted)");
}

struct BadInput {
  const char* name;
  const char* text;
  const char* message;
};

class BadConfig : public ::testing::TestWithParam<BadInput> {};

TEST_P(BadConfig, IsRejectedWithAPinnedMessage) {
  EXPECT_EQ(error_of(GetParam().text), GetParam().message);
}

// Every message names the file, the JSON pointer and the offending value.
INSTANTIATE_TEST_SUITE_P(
    Messages, BadConfig,
    ::testing::Values(
        BadInput{"malformed", R"({"axes": {)",
                 "bad.json: invalid JSON: parse error at line 1, column 11: syntax error while parsing object key - "
                 "unexpected end of input; expected string literal"},
        BadInput{"not_an_object", "[1, 2]", "bad.json: a config is a JSON object, got array"},
        // Found by fuzz/config_fuzzer: a number too large for a double threw out_of_range, not parse_error.
        BadInput{"number_overflow", "33333333333333333e333eJ",
                 "bad.json: invalid JSON: number overflow parsing '33333333333333333e333'"},
        BadInput{"unknown_top_key", R"({"axis": {}})", R"(bad.json:/axis: unknown key "axis" (did you mean "axes"?))"},
        // Too far from every key for a guess: all of them, but $schema (which a config may carry).
        BadInput{"unknown_key_without_a_guess", R"({"zzzzzzzzzz": 1})",
                 R"(bad.json:/zzzzzzzzzz: unknown key "zzzzzzzzzz" (known: name, description, axes, repeats, seed, )"
                 "tolerance, exclude, model, remedies)"},
        BadInput{"axis_outside_axes", R"({"tokens": [16]})",
                 R"(bad.json:/tokens: unknown key "tokens": axes go inside "axes")"},
        BadInput{"mistyped_axis", R"({"axes": {"tokes": [16]}})",
                 R"(bad.json:/axes/tokes: unknown axis "tokes" (did you mean "tokens"?))"},
        BadInput{"wrong_type", R"({"axes": {"ranks": "64"}})",
                 R"(bad.json:/axes/ranks: expected a whole number, got "64")"},
        BadInput{"empty_axis", R"({"axes": {"tokens": []}})",
                 "bad.json:/axes/tokens: empty axis: tokens needs at least one value"},
        BadInput{"tokens_zero", R"({"axes": {"tokens": [0, 16]}})",
                 "bad.json:/axes/tokens/0: 0 is out of range [1, 1048576]"},
        BadInput{"rank_zero", R"({"axes": {"ranks": [16, 0]}})", "bad.json:/axes/ranks/1: 0 is out of range [1, 4096]"},
        BadInput{"rank_too_big", R"({"axes": {"ranks": 8192}})", "bad.json:/axes/ranks: 8192 is out of range [1, 4096]"},
        BadInput{"hidden_too_big", R"({"axes": {"hidden": [4096, [4096, 200000]]}})",
                 "bad.json:/axes/hidden/1: 200000 is out of range [1, 131072]"},
        BadInput{"amplify_too_big", R"({"axes": {"amplify": [0, 65]}})",
                 "bad.json:/axes/amplify/1: 65 is out of range [0, 64]"},
        BadInput{"amplify_negative", R"({"axes": {"amplify": -1}})",
                 "bad.json:/axes/amplify: -1 is out of range [0, 64]"},
        BadInput{"num_stages_zero", R"({"axes": {"num_stages": [0]}})",
                 "bad.json:/axes/num_stages/0: 0 is out of range [1, 8]"},
        BadInput{"block_not_pow2", R"({"axes": {"block_n": [32, 48]}})",
                 "bad.json:/axes/block_n/1: 48 is not a power of two"},
        BadInput{"bad_dtype", R"({"axes": {"input_dtype": ["fp64"]}})",
                 R"(bad.json:/axes/input_dtype/0: expected one of fp32, bf16, fp16, got "fp64")"},
        BadInput{"fp32_weights", R"({"axes": {"weight_dtype": "fp32"}})",
                 "bad.json:/axes/weight_dtype: weight_dtype fp32 is not a LoRA configuration (weights are bf16 or fp16)"},
        BadInput{"bad_op", R"({"axes": {"op": ["expnad"]}})",
                 R"(bad.json:/axes/op/0: expected one of expand, shrink, lora_linear, shrink_fp8, expand_fp8, got "expnad")"},
        BadInput{"bad_bool", R"({"axes": {"add_inputs": ["yes"]}})",
                 R"(bad.json:/axes/add_inputs/0: expected true or false, got "yes")"},
        BadInput{"bad_compiler", R"({"axes": {"compilers": ["nvcc"]}})",
                 R"(bad.json:/axes/compilers/0: expected prebuilt, driver or ptxas=<path|version|toolkit|triton>, got "nvcc")"},
        BadInput{"range_backwards", R"({"axes": {"tokens": {"from": 64, "to": 16, "mul": 2}}})",
                 "bad.json:/axes/tokens: range from 64 is above to 16"},
        BadInput{"range_both_steps", R"({"axes": {"tokens": {"from": 16, "to": 64, "mul": 2, "step": 16}}})",
                 R"(bad.json:/axes/tokens: a range needs exactly one of "mul" (geometric) or "step" (arithmetic))"},
        BadInput{"range_mul_one", R"({"axes": {"tokens": {"from": 16, "to": 64, "mul": 1}}})",
                 "bad.json:/axes/tokens/mul: mul must be at least 2, got 1"},
        BadInput{"range_unknown_key", R"({"axes": {"tokens": {"from": 16, "to": 64, "by": 2}}})",
                 R"(bad.json:/axes/tokens/by: unknown key "by" in a range (from, to, and mul or step))"},
        BadInput{"range_on_dtype", R"({"axes": {"input_dtype": {"from": 1, "to": 2, "step": 1}}})",
                 "bad.json:/axes/input_dtype: input_dtype takes no ranges, only values"},
        BadInput{"range_too_long", R"({"axes": {"tokens": {"from": 1, "to": 100000, "step": 1}}})",
                 "bad.json:/axes/tokens: range gives more than 4096 values"},
        // Found by fuzz/config_fuzzer (fuzz/corpus/config/regression-mul-from-negative.json): doubling a
        // negative "from" ran away from "to" until int64 overflowed.
        BadInput{"range_mul_from_negative", R"({"axes": {"tokens": {"from": -6, "to": 8191, "mul": 2}}})",
                 R"(bad.json:/axes/tokens/from: a range with "mul" starts at 1 or more, got -6)"},
        BadInput{"range_mul_from_zero", R"({"axes": {"tokens": {"from": 0, "to": 8, "mul": 2}}})",
                 R"(bad.json:/axes/tokens/from: a range with "mul" starts at 1 or more, got 0)"},
        // The step past 2^62 + 1 overflows: the range is those 2 values, and the second is out of range.
        BadInput{"range_step_to_int64_max",
                 R"({"axes": {"tokens": {"from": 1, "to": 9223372036854775807, "step": 4611686018427387904}}})",
                 "bad.json:/axes/tokens: 4611686018427387905 is out of range [1, 1048576]"},
        BadInput{"range_mul_to_int64_max", R"({"axes": {"tokens": {"from": 1, "to": 9223372036854775807, "mul": 2}}})",
                 "bad.json:/axes/tokens: 2097152 is out of range [1, 1048576]"},
        BadInput{"range_mul_from_int64_max",
                 R"({"axes": {"ranks": {"from": 9223372036854775807, "to": 9223372036854775807, "mul": 2}}})",
                 "bad.json:/axes/ranks: 9223372036854775807 is out of range [1, 4096]"},
        BadInput{"range_step_from_int64_min",
                 R"({"axes": {"ranks": {"from": -9223372036854775808, "to": 9223372036854775807, "step": 9223372036854775807}}})",
                 "bad.json:/axes/ranks: -9223372036854775808 is out of range [1, 4096]"},
        BadInput{"range_to_above_int64", R"({"axes": {"tokens": {"from": 16, "to": 18446744073709551615, "mul": 2}}})",
                 "bad.json:/axes/tokens/to: 18446744073709551615 is above the largest whole number a range takes, "
                 "9223372036854775807"},
        BadInput{"range_step_above_int64", R"({"axes": {"tokens": {"from": 16, "to": 64, "step": 9223372036854775808}}})",
                 "bad.json:/axes/tokens/step: 9223372036854775808 is above the largest whole number a range takes, "
                 "9223372036854775807"},
        BadInput{"value_above_int64", R"({"axes": {"ranks": 18446744073709551615}})",
                 "bad.json:/axes/ranks: 18446744073709551615 is out of range [1, 4096]"},
        BadInput{"value_int64_min", R"({"axes": {"block_n": [-9223372036854775808]}})",
                 "bad.json:/axes/block_n/0: -9223372036854775808 is out of range [16, 256]"},
        BadInput{"duplicate", R"({"axes": {"tokens": [16, {"from": 8, "to": 32, "mul": 2}]}})",
                 "bad.json:/axes/tokens/1: duplicate value 16"},
        BadInput{"repeats_zero", R"({"repeats": 0})", "bad.json:/repeats: expected a whole number in [1, 100000], got 0"},
        BadInput{"seed_negative", R"({"seed": -1})", "bad.json:/seed: expected a whole number from 0 to 18446744073709551615, got -1"},
        BadInput{"key_twice", R"({"seed": 1, "seed": 2})", "bad.json:/seed: this key is written twice in its object; keep one"},
        BadInput{"tolerance_dtype", R"({"tolerance": {"fp64": {"atol": 0.1, "rtol": 0.1}}})",
                 R"(bad.json:/tolerance/fp64: unknown dtype "fp64" (fp32, bf16, fp16))"},
        BadInput{"tolerance_negative", R"({"tolerance": {"bf16": {"atol": -0.1, "rtol": 0.1}}})",
                 "bad.json:/tolerance/bf16/atol: atol must be within [0, 1], got -0.1"},
        BadInput{"tolerance_half", R"({"tolerance": {"bf16": {"atol": 0.1}}})",
                 "bad.json:/tolerance/bf16: a tolerance needs both atol and rtol"},
        BadInput{"exclude_unknown_axis", R"({"exclude": [{"blockn": 32}]})",
                 R"(bad.json:/exclude/0/blockn: unknown axis "blockn" (did you mean "block_n"?))"},
        BadInput{"exclude_empty_rule", R"({"exclude": [{}]})",
                 "bad.json:/exclude/0: an empty rule would exclude every case"},
        BadInput{"exclude_vllm", R"({"exclude": [{"block_n": "vllm"}]})",
                 R"(bad.json:/exclude/0/block_n: "vllm" cannot be matched here: name the resolved value)"},
        BadInput{"too_deep", "{\"description\": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]}",
                 "bad.json: nesting deeper than 16 levels"}),
    [](const ::testing::TestParamInfo<BadInput>& param_info) { return std::string(param_info.param.name); });

TEST(Config, ValuesRememberTheirOrigin) {
  const SweepConfig c = parse_config(R"({"axes": {"ranks": [16, 64]}, "repeats": 7})", "mine.json");
  EXPECT_EQ(c.axes.at(AxisId::rank).origin.describe(), "file mine.json");
  EXPECT_EQ(c.axes.at(AxisId::tokens).origin.describe(), "default");
  EXPECT_EQ(c.repeats.value, 7);
  EXPECT_EQ(c.repeats.origin.describe(), "file mine.json");
  EXPECT_EQ(c.seed.origin.describe(), "default");

  SweepConfig flagged = c;
  override_axis(flagged, AxisId::rank, parse_flag_values(axis_info(AxisId::rank), "32"), "--ranks");
  EXPECT_EQ(flagged.axes.at(AxisId::rank).origin.describe(), "flag --ranks");
  EXPECT_EQ(to_json_values(flagged.values(AxisId::rank)), std::vector<nlohmann::json>{32});
}

TEST(Config, OldAxisSpellingsStillReadWithANoteAndNeverTwice) {
  const SweepConfig old = parse_config(R"({"axes": {"ranks": [16], "compilers": ["driver"]},
                                          "exclude": [{"ranks": 16, "tokens": 16}]})",
                                       "old.json");
  EXPECT_EQ(to_json_values(old.values(AxisId::rank)), std::vector<nlohmann::json>{16});
  EXPECT_EQ(to_json_values(old.values(AxisId::compiler)), std::vector<nlohmann::json>{"driver"});
  // In key order (a JSON object is read sorted).
  EXPECT_EQ(old.notes, (std::vector<std::string>{"old.json:/axes/compilers: write compiler (compilers is deprecated)",
                                                 "old.json:/axes/ranks: write rank (ranks is deprecated)",
                                                 "old.json:/exclude/0/ranks: write rank (ranks is deprecated)"}));
  EXPECT_TRUE(parse_config(R"({"axes": {"rank": [16], "compiler": ["driver"]}})", "new.json").notes.empty());
  try {
    (void)parse_config(R"({"axes": {"rank": [16], "ranks": [32]}})", "both.json");
    ADD_FAILURE() << "both spellings of one axis were accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "both.json:/axes/ranks: axis rank is given twice (as rank and ranks)");
  }
}

TEST(Config, FlagsApplyInThePlanLayer) {
  SweepConfig c = parse_config(R"({"axes": {"compiler": ["prebuilt"]}})", "mine.json");
  FlagOverrides flags;
  flags.axes[AxisId::tokens] = {"16,32", "64"};
  flags.ptxas = {"13.3", "13.3"};
  flags.repeats = 3;
  flags.seed = "7";
  apply_flags(c, flags);
  EXPECT_EQ(to_json_values(c.values(AxisId::tokens)), (std::vector<nlohmann::json>{16, 32, 64}));
  EXPECT_EQ(to_json_values(c.values(AxisId::compiler)), (std::vector<nlohmann::json>{"prebuilt", "ptxas=13.3"}));
  EXPECT_EQ(c.axes.at(AxisId::compiler).origin.describe(), "flag --ptxas");
  EXPECT_EQ(c.repeats.value, 3);
  EXPECT_EQ(c.seed.value, 7U);
  flags = {};
  flags.repeats = k_max_repeats + 1;
  EXPECT_THROW(apply_flags(c, flags), UsageError);
}

TEST(Config, RangesExpand) {
  const SweepConfig c = parse_config(
      R"({"axes": {"tokens": {"from": 16, "to": 8192, "mul": 2}, "ranks": [{"from": 16, "to": 64, "step": 16}, 128]}})",
      "r.json");
  EXPECT_EQ(c.values(AxisId::tokens).size(), 10U);
  EXPECT_EQ(c.values(AxisId::tokens).front().integer(), 16);
  EXPECT_EQ(c.values(AxisId::tokens).back().integer(), 8192);
  EXPECT_EQ(to_json_values(c.values(AxisId::rank)), (std::vector<nlohmann::json>{16, 32, 48, 64, 128}));
}

TEST(Config, FlagSyntax) {
  EXPECT_EQ(to_json_values(parse_flag_values(axis_info(AxisId::tokens), "256,384")), (std::vector<nlohmann::json>{256, 384}));
  EXPECT_EQ(to_json_values(parse_flag_values(axis_info(AxisId::tokens), "16..64*2")), (std::vector<nlohmann::json>{16, 32, 64}));
  EXPECT_EQ(to_json_values(parse_flag_values(axis_info(AxisId::rank), "16..48+16,128")),
            (std::vector<nlohmann::json>{16, 32, 48, 128}));
  EXPECT_EQ(to_json_values(parse_flag_values(axis_info(AxisId::hidden), "4096,4096/1024/1024")),
            (std::vector<nlohmann::json>{4096, nlohmann::json::array({4096, 1024, 1024})}));
  EXPECT_EQ(to_json_values(parse_flag_values(axis_info(AxisId::block_n), "vllm,32")),
            (std::vector<nlohmann::json>{"vllm", 32}));
  EXPECT_EQ(to_json_values(parse_flag_values(axis_info(AxisId::compiler), "ptxas=/opt/my dir,x/ptxas")),
            (std::vector<nlohmann::json>{"ptxas=/opt/my dir,x/ptxas"}));
}

TEST(Config, BadFlagsNameTheFlagAndValue) {
  auto message = [](AxisId id, const char* text) -> std::string {
    try {
      parse_flag_values(axis_info(id), text);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(accepted)";
  };
  EXPECT_EQ(message(AxisId::tokens, "0"), "--tokens 0: 0 is out of range [1, 1048576]");
  EXPECT_EQ(message(AxisId::block_n, "32,48"), "--block-n 32,48: 48 is not a power of two");
  EXPECT_EQ(message(AxisId::num_stages, "two"), "--num-stages two: \"two\" is not a whole number");
  EXPECT_EQ(message(AxisId::tokens, "16,,32"), "--tokens 16,,32: empty value between commas");
  EXPECT_EQ(message(AxisId::tokens, "64..16*2"), "--tokens 64..16*2: range from 64 is above to 16");
  EXPECT_EQ(message(AxisId::input_dtype, "fp8"), "--input-dtype fp8: expected one of fp32, bf16, fp16, got \"fp8\"");
  EXPECT_EQ(message(AxisId::rank, "16,16"), "--rank 16,16: duplicate value 16");
  // Extreme numbers in flag ranges: checked arithmetic, and the value quoted as written.
  EXPECT_EQ(message(AxisId::tokens, "-6..8191*2"), R"(--tokens -6..8191*2: a range with "mul" starts at 1 or more, got -6)");
  EXPECT_EQ(message(AxisId::tokens, "1..9223372036854775807*2"),
            "--tokens 1..9223372036854775807*2: 2097152 is out of range [1, 1048576]");
  EXPECT_EQ(message(AxisId::tokens, "1..9223372036854775807+4611686018427387904"),
            "--tokens 1..9223372036854775807+4611686018427387904: 4611686018427387905 is out of range [1, 1048576]");
  EXPECT_EQ(message(AxisId::tokens, "16..99999999999999999999*2"),
            "--tokens 16..99999999999999999999*2: 99999999999999999999 does not fit in a whole number (at most "
            "9223372036854775807)");
  EXPECT_EQ(message(AxisId::rank, "-9223372036854775808..9223372036854775807+9223372036854775807"),
            "--rank -9223372036854775808..9223372036854775807+9223372036854775807: -9223372036854775808 is out of "
            "range [1, 4096]");
  EXPECT_EQ(message(AxisId::tokens, "1..1048576+1"), "--tokens 1..1048576+1: range gives more than 4096 values");
}

TEST(Config, EveryShippedConfigParses) {
  for (std::string_view name : embedded_config_names()) {
    SCOPED_TRACE(std::string(name));
    const SweepConfig c = parse_config(embedded_config(name), std::string(name));
    EXPECT_FALSE(c.description.empty());
    EXPECT_EQ(c.source_sha256.size(), 64U);
  }
  EXPECT_EQ(load_default_config().name, "default");
  EXPECT_THROW(embedded_config("nope.json"), UsageError);
}

/// The message load_config throws for `value` (what main prints after "loraprobe: ").
std::string config_error(const std::string& value) {
  try {
    load_config(value);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(Config, ANameIsTheEmbeddedConfigOfThatName) {
  EXPECT_EQ(embedded_config_stems(),
            (std::vector<std::string>{"check", "ci-gate", "default", "fp8", "full", "seed-48590", "upgrade-gate"}));
  for (const std::string& name : embedded_config_stems()) {
    SCOPED_TRACE(name);
    const SweepConfig c = load_config(name);
    EXPECT_EQ(c.name, name);
    // Named as the default always was, so a report says which embedded config it ran.
    EXPECT_EQ(c.source, "<embedded>/configs/" + name + ".json");
    EXPECT_EQ(c.source_sha256, parse_config(embedded_config(name + ".json"), "x").source_sha256);
  }
  EXPECT_EQ(load_config("default").source, load_default_config().source);
}

TEST(Config, AValueWithASlashOrDotJsonIsAFile) {
  EXPECT_TRUE(names_config_file("configs/seed-48590.json"));
  EXPECT_TRUE(names_config_file("seed-48590.json"));
  EXPECT_TRUE(names_config_file("./seed-48590"));
  EXPECT_FALSE(names_config_file("seed-48590"));
  const TempDir dir("lp-config-test-");
  const std::string path = dir.write("seed-48590.json", R"({"name": "mine", "axes": {"tokens": [256]}})");
  const SweepConfig mine = load_config(path);
  EXPECT_EQ(mine.name, "mine");
  EXPECT_EQ(mine.source, path);
}

TEST(Config, AnUnknownNameOrAMissingFileSaysWhatThereIs) {
  EXPECT_EQ(config_error("seed-4859"),
            "--config seed-4859: no such file or embedded config (embedded: check, ci-gate, default, fp8, full, "
            "seed-48590, upgrade-gate)");
  // The README's old spelling outside a checkout: the file is not there, the name is.
  EXPECT_EQ(config_error("/nonexistent/configs/seed-48590.json"),
            "/nonexistent/configs/seed-48590.json: cannot read: no such file; the embedded config of that name is "
            "--config seed-48590");
  EXPECT_EQ(config_error("/nonexistent/mine.json"), "/nonexistent/mine.json: cannot read: No such file or directory");
}

}  // namespace
}  // namespace lp::plan
