// End-to-end checks of the loraprobe binary: exit codes (the CI contract) and
// one-line error messages naming the file, key and value.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp {
namespace {

ProcessResult loraprobe(std::vector<std::string> args) {
  args.insert(args.begin(), LP_LORAPROBE);
  ProcessOptions options;
  options.timeout = std::chrono::seconds(120);
  return run_process(args, options);
}

std::string write_temp(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(Cli, VersionExitsZero) {
  const ProcessResult r = loraprobe({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("loraprobe ", 0), 0U) << r.out;
}

TEST(Cli, NoSubcommandIsUsageError) {
  const ProcessResult r = loraprobe({});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(Cli, UnknownFlagIsOneLineUsageError) {
  const ProcessResult r = loraprobe({"sweep", "--tokes", "16"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find("--tokes"), std::string::npos) << r.err;
}

TEST(Cli, HelpShowsExamples) {
  const ProcessResult r = loraprobe({"sweep", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("Examples:"), std::string::npos);
  EXPECT_NE(r.out.find("--block-n"), std::string::npos);
}

TEST(Cli, MissingConfigFile) {
  const ProcessResult r = loraprobe({"sweep", "--dry-run", "--config", "/nonexistent/sweep.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: /nonexistent/sweep.json: cannot read: No such file or directory\n");
}

TEST(Cli, BadConfigIsOneLineNamingFilePointerAndValue) {
  const std::string path = write_temp("lp-cli-bad.json", R"({"axes": {"block_n": [128, 96]}})");
  const ProcessResult r = loraprobe({"sweep", "--dry-run", "--config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + path + ":/axes/block_n/1: 96 is not a power of two\n");
  EXPECT_TRUE(r.out.empty());
}

TEST(Cli, ExtremeRangesAreRefusedWithOneLineAndExitTwo) {
  // Ranges whose arithmetic would overflow int64 (found by the config fuzzer): refused
  // before any plan is built, naming the file, the pointer and the value as written.
  const TempDir dir("lp-cli-test-");
  const std::string negative = dir.write("negative.json", R"({"axes": {"tokens": {"from": -6, "to": 8191, "mul": 2}}})");
  ProcessResult r = loraprobe({"sweep", "--dry-run", "--config", negative});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + negative + R"(:/axes/tokens/from: a range with "mul" starts at 1 or more, got -6)" "\n");
  const std::string huge = dir.write("huge.json", R"({"axes": {"tokens": {"from": 16, "to": 18446744073709551615, "mul": 2}}})");
  r = loraprobe({"sweep", "--dry-run", "--config", huge});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + huge +
                       ":/axes/tokens/to: 18446744073709551615 is above the largest whole number a range takes, "
                       "9223372036854775807\n");
  r = loraprobe({"sweep", "--dry-run", "--tokens", "16..8192*2"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = loraprobe({"sweep", "--dry-run", "--tokens", "1..9223372036854775807*2"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: --tokens 1..9223372036854775807*2: 2097152 is out of range [1, 1048576]\n");
}

TEST(Cli, BadFlagValue) {
  const ProcessResult r = loraprobe({"sweep", "--dry-run", "--tokens", "0"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: --tokens 0: 0 is out of range [1, 1048576]\n");
}

TEST(Cli, DryRunOfTheEmbeddedDefault) {
  const ProcessResult r = loraprobe({"sweep", "--dry-run"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Every embedded Triton set: 1320 cases each.
  EXPECT_EQ(r.out.rfind("plan: 5280 cases from 7680 combinations of default (<embedded>/configs/default.json)", 0), 0U)
      << r.out.substr(0, 200);
  const ProcessResult one = loraprobe({"sweep", "--dry-run", "--triton", "3.9.0"});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(one.out.rfind("plan: 1320 cases from 1920 combinations", 0), 0U) << one.out.substr(0, 200);
  EXPECT_NE(one.out.find(" 3.9.0   expand "), std::string::npos) << one.out.substr(0, 1000);
  const ProcessResult missing = loraprobe({"sweep", "--dry-run", "--triton", "3.5.0"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_EQ(missing.err, "loraprobe: --triton 3.5.0: Triton 3.5.0 has no kernel set here (sets: 3.6.0, 3.7.1, 3.8.0, "
                         "3.9.0; add one with --kernel-dir, made by scripts/gen_kernels.py --triton 3.5.0 --out DIR)\n");
}

TEST(Cli, DryRunJsonOfTheReportedConditions) {
  const ProcessResult r = loraprobe({"sweep", "--dry-run", "--json", "--config", LP_SOURCE_DIR "/configs/seed-48590.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json plan = nlohmann::json::parse(r.out);
  EXPECT_EQ(plan["count"], 80);  // 20 per Triton set
  EXPECT_EQ(plan["cases"][0]["axes"]["block_n"], 128);
  EXPECT_EQ(plan["cases"][0]["axes"]["triton"], "3.6.0");
  EXPECT_EQ(plan["cases"][10]["axes"]["block_n"], 32);
  EXPECT_EQ(plan["cases"][19]["axes"]["tokens"], 8192);
  EXPECT_EQ(plan["cases"][79]["axes"]["triton"], "3.9.0");
}

TEST(Cli, FlagsOverrideTheConfigAndShowTheirOrigin) {
  const ProcessResult r = loraprobe({"sweep", "--show-config", "--json", "--config",
                                     LP_SOURCE_DIR "/configs/seed-48590.json", "--tokens", "256,384", "--block-n",
                                     "32,128", "--num-stages", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json config = nlohmann::json::parse(r.out);
  EXPECT_EQ(config["axes"]["tokens"]["values"], nlohmann::json::array({256, 384}));
  EXPECT_EQ(config["axes"]["tokens"]["origin"], "flag --tokens");
  EXPECT_EQ(config["axes"]["ranks"]["origin"], "file " LP_SOURCE_DIR "/configs/seed-48590.json");
  EXPECT_EQ(config["axes"]["split_k"]["origin"], "default");
}

TEST(Cli, RepeatedCompilerFlagsKeepPathsWhole) {
  const ProcessResult r = loraprobe({"sweep", "--show-config", "--json", "--compiler", "prebuilt", "--compiler",
                                     "ptxas=/opt/a dir,with comma/ptxas"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json config = nlohmann::json::parse(r.out);
  EXPECT_EQ(config["axes"]["compilers"]["values"],
            nlohmann::json::array({"prebuilt", "ptxas=/opt/a dir,with comma/ptxas"}));
}

TEST(Cli, EnvReportsWhatItCanAndExitsZeroWithOrWithoutAGpu) {
  const ProcessResult text = loraprobe({"env"});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ptxas binaries found:"), std::string::npos) << text.out;
  const bool has_gpu = text.out.find("\nGPU 0: ") != std::string::npos;
  EXPECT_TRUE(has_gpu || text.out.find("\nGPU: no CUDA device: ") != std::string::npos) << text.out;
  const ProcessResult json_run = loraprobe({"env", "--json"});
  ASSERT_EQ(json_run.exit_code, 0) << json_run.err;
  const nlohmann::json env = nlohmann::json::parse(json_run.out);
  EXPECT_TRUE(env["ptxas"].is_array());
  EXPECT_EQ(env["toolkit"]["build_version"].get<std::string>().substr(0, 3), "13.");
  ASSERT_EQ(env["kernel_sets"].size(), 4U);
  EXPECT_EQ(env["kernel_sets"][0]["triton_version"], "3.6.0");
  EXPECT_EQ(env["kernel_sets"][0]["variants"], 1437);
  EXPECT_EQ(env["kernel_sets"][3]["triton_version"], "3.9.0");
  EXPECT_NE(text.out.find("kernel set: Triton 3.9.0, 165 variants, bundled ptxas Cuda compilation tools, release 13.4, "
                          "V13.4.59"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(env["gpu"].is_null(), !has_gpu);
}

}  // namespace
}  // namespace lp
