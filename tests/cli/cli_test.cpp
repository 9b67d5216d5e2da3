// End-to-end checks of the loraprobe binary: exit codes (the CI contract) and
// one-line error messages naming the file, key and value.

#include <gtest/gtest.h>

#include <tuple>

#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp {
namespace {

using test_support::loraprobe;
using test_support::scratch;

/// A file in scratch().
std::string write_temp(const std::string& name, const std::string& text) { return scratch().write(name, text); }

TEST(Cli, VersionExitsZero) {
  const ProcessResult r = loraprobe({"version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out.rfind("loraprobe ", 0), 0U) << r.out;
}

TEST(Cli, EverySubcommandHelpHasExamples) {
  for (const char* sub : {"sweep", "list", "inspect", "env", "version"}) {
    const ProcessResult r = loraprobe({sub, "--help"});
    EXPECT_EQ(r.exit_code, 0) << sub;
    EXPECT_NE(r.out.find("Examples:"), std::string::npos) << sub << ": " << r.out;
  }
}

TEST(Cli, DryRunChecksEveryOptionAsARunWould) {
  // One line, exit 2, quoting the value as written; nothing falls back to a default.
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--seed", ""}, "loraprobe: --seed \"\": expected a whole number from 0 to 18446744073709551615\n"},
      {{"--seed", "-1"}, "loraprobe: --seed \"-1\": expected a whole number from 0 to 18446744073709551615\n"},
      {{"--seed", "18446744073709551616"},
       "loraprobe: --seed \"18446744073709551616\": expected a whole number from 0 to 18446744073709551615\n"},
      {{"--config", ""}, "loraprobe: --config: an empty value: give one, or leave the option out\n"},
      {{"--model", ""}, "loraprobe: --model: an empty value: give one, or leave the option out\n"},  // was "--tp: needs a model"
      {{"--out", ""}, "loraprobe: --out: an empty value: give one, or leave the option out\n"},
      {{"--case-timeout", "nan"}, "loraprobe: --case-timeout: \"nan\" is not a finite number\n"},
      {{"--device", "-1"}, "loraprobe: --device: Value -1 not in range 0 to 1023\n"},
      {{"-j", "-1"}, "loraprobe: --jobs: Value -1 not in range 0 to 1024\n"},
      {{"--fail-on", "junk"},
       "loraprobe: --fail-on junk: not a failing verdict (latent, skipped, incomplete, FAIL, fault, timeout, "
       "compile_error)\n"},
      {{"--compiler", "ptxas=/bin/sh"},
       "loraprobe: ptxas=/bin/sh: `/bin/sh --version` does not print a CUDA tool version: not a ptxas\n"},
      {{"--compiler", "ptxas=/nonexistent"}, "loraprobe: ptxas=/nonexistent: no executable file at that path\n"},
      {{"--kernel-dir", "/nonexistent"}, "loraprobe: --kernel-dir /nonexistent: not a folder\n"},
      // Issue 53 defect 4: --devices was checked by a run only.
      {{"--devices", "abc"}, "loraprobe: --devices abc: write GPU ordinals (0,1,3) or all\n"},
      {{"--devices=-5"}, "loraprobe: --devices -5: write GPU ordinals (0,1,3) or all\n"},
      {{"--devices", "0,1024"}, "loraprobe: --devices 0,1024: GPU ordinals are 0 to 1023\n"},
      {{"--tokens", "256", "--hidden", "4096/1024/1024"}, ""},  // 0 cases: checked below
  };
  for (const auto& [flags, message] : cases) {
    std::vector<std::string> args = {"sweep", "--dry-run"};
    args.insert(args.end(), flags.begin(), flags.end());
    const ProcessResult r = loraprobe(args);
    EXPECT_EQ(r.exit_code, 2) << flags.front() << " " << r.err;
    if (!message.empty()) {
      EXPECT_EQ(r.err, message) << flags.front();
    } else {
      EXPECT_NE(r.err.find("the plan has no case: every combination is excluded or not applicable"), std::string::npos)
          << r.err;
      EXPECT_NE(r.out.find("not applicable: 768 (hidden lists 3 sizes but num_slices is 1)"), std::string::npos)
          << r.out;
    }
  }
  // The largest seed a report can record is accepted, from a flag and from a config.
  EXPECT_EQ(loraprobe({"sweep", "--dry-run", "--seed", "18446744073709551615"}).exit_code, 0);
  EXPECT_EQ(loraprobe({"sweep", "--dry-run", "--devices", "0,1,3"}).exit_code, 0);
  EXPECT_EQ(loraprobe({"sweep", "--dry-run", "--devices", "all"}).exit_code, 0);
  const std::string big = write_temp("big-seed.json", R"({"seed": 18446744073709551615})");
  EXPECT_EQ(loraprobe({"sweep", "--dry-run", "--config", big}).exit_code, 0);
  const std::string neg = write_temp("neg-seed.json", R"({"seed": -3})");
  EXPECT_EQ(loraprobe({"sweep", "--dry-run", "--config", neg}).err,
            "loraprobe: " + neg + ":/seed: expected a whole number from 0 to 18446744073709551615, got -3\n");
  // Control characters in a name never reach the terminal.
  const std::string esc = write_temp("esc.json", "{\"name\": \"x\\u001b[31mred\"}");
  const ProcessResult r = loraprobe({"sweep", "--dry-run", "--config", esc});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + esc +
                       ":/name: contains the control character U+001B; a name is printed on terminals\n");
  // list and inspect: a filter that matches nothing is exit 2, one rule.
  EXPECT_EQ(loraprobe({"list", "--filter", "block_n=abc"}).exit_code, 2);
  EXPECT_EQ(loraprobe({"list", "--filter", "triton=3.9.0,op=shrink"}).exit_code, 0);
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

// Issue 53: 'loraprobe bogus', '--version' and 'help' all said "A subcommand is
// required"; '--confg' got no suggestion; 'diff a.json' said only "new is required";
// '--verify-cache 0' was "not in range 0.000000 to 1797693...".
TEST(Cli, MistypedCommandsGetTheNearestWord) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> refused = {
      {{"swep"},
       "loraprobe: 'swep' is not a subcommand (did you mean 'sweep'?); the subcommands: sweep, list, inspect, env, "
       "check, report, diff, repro, merge, version\n"},
      {{"bogus"},
       "loraprobe: 'bogus' is not a subcommand; the subcommands: sweep, list, inspect, env, check, report, diff, "
       "repro, merge, version\n"},
      {{"help", "repot"},
       "loraprobe: 'repot' is not a subcommand (did you mean 'report'?); the subcommands: sweep, list, inspect, env, "
       "check, report, diff, repro, merge, version\n"},
      {{"sweep", "--confg", "x"},
       "loraprobe: sweep: unknown option --confg (did you mean --config?); 'loraprobe sweep --help' lists them\n"},
      {{"sweep", "--dry-run", "--tokns=16"},
       "loraprobe: sweep: unknown option --tokns (did you mean --tokens?); 'loraprobe sweep --help' lists them\n"},
      {{"diff", "a.json"},
       "loraprobe: diff: NEW is missing (The report after); usage: loraprobe diff OLD NEW [OPTIONS]\n"},
      {{"inspect", "--verify-cache", "0"},
       "loraprobe: --verify-cache: \"0\": expected a whole number from 1 to 18446744073709551615\n"},
      {{"inspect", "--verify-cache", "99999999999999999999"},
       "loraprobe: --verify-cache: \"99999999999999999999\": expected a whole number from 1 to 18446744073709551615\n"},
  };
  for (const auto& [args, message] : refused) {
    const ProcessResult r = loraprobe(args);
    EXPECT_EQ(r.exit_code, 2) << args.front();
    EXPECT_EQ(r.err, message);
  }
  const ProcessResult version = loraprobe({"--version"});
  EXPECT_EQ(version.exit_code, 0) << version.err;
  EXPECT_EQ(version.out, loraprobe({"version"}).out);
  const ProcessResult help = loraprobe({"help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_EQ(help.out, loraprobe({"--help"}).out);
  EXPECT_EQ(loraprobe({"help", "help"}).out, help.out);
  EXPECT_NE(help.out.find("Usage: loraprobe [OPTIONS] SUBCOMMAND"), std::string::npos) << help.out;
  const ProcessResult sweep_help = loraprobe({"help", "sweep"});
  EXPECT_EQ(sweep_help.exit_code, 0);
  EXPECT_EQ(sweep_help.out, loraprobe({"sweep", "--help"}).out);
}

// Issue 53 re-test: a second --match-compiler for the same old compiler silently
// replaced the first, and a pair naming a compiler the old report never ran matched
// nothing without a word; the refusal then blamed the report file.
TEST(Cli, MatchCompilerPairsAreCheckedAgainstTheOldReport) {
  const std::string f = LP_SOURCE_DIR "/tests/stack/fixtures/h100-check-run-amplify2.json";
  ProcessResult r = loraprobe({"diff", f, f, "--match-compiler", "prebuilt=ptxas=toolkit", "--match-compiler",
                               "prebuilt=ptxas=12.8.93"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: --match-compiler prebuilt=ptxas=12.8.93: prebuilt is already matched with "
                   "ptxas=toolkit; give each old compiler once\n");
  r = loraprobe({"diff", f, f, "--match-compiler", "ptxas=13.0.88=prebuilt"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: --match-compiler ptxas=13.0.88=prebuilt: " + f +
                       " has no case of compiler ptxas=13.0.88 (its compilers: prebuilt)\n");
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

TEST(Cli, EveryDocumentedExitCodeIsWhatMainReturns) {
  // README "Exit codes" and --help: 2 bad input, 3 environment, each reached through a
  // real condition (4, a bug, has none: tests/util/guard_test runs main's guard).
  EXPECT_EQ(loraprobe({"version"}).exit_code, 0);
  const ProcessResult usage = loraprobe({"list", "--no-such-flag"});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_EQ(usage.err, "loraprobe: list: unknown option --no-such-flag; 'loraprobe list --help' lists them\n")
      << usage.err;
  // A ptxas version that is not installed is the machine's gap, as a missing nvdisasm is;
  // a misspelt spec is the user's.
  const ProcessResult env = loraprobe({"inspect", "--ptxas", "99.9", "--triton", "3.8.0"});
  EXPECT_EQ(env.exit_code, 3) << env.err;
  EXPECT_EQ(env.err.rfind("loraprobe: ptxas=99.9: not a path, 'toolkit', 'triton', or a version installed under ", 0),
            0U)
      << env.err;
  EXPECT_EQ(loraprobe({"inspect", "--ptxas", "newest", "--triton", "3.8.0"}).exit_code, 2);
  // A mistyped test hook is bad input, not a bug.
  const ProcessResult hook = loraprobe({"sweep", "--dry-run", "--test-hook", "x=trap"});
  EXPECT_EQ(hook.exit_code, 2) << hook.err;
  EXPECT_EQ(hook.err, "loraprobe: --test-hook x=trap: expected INDEX=trap|spin|oob_write|skip_tile|pdl_no_wait\n");
  // The old hidden __raise subcommand is gone from the product: it is not a subcommand.
  const ProcessResult raise = loraprobe({"__raise", "usage"});
  EXPECT_EQ(raise.exit_code, 2);
  EXPECT_EQ(raise.err.find("internal"), std::string::npos) << raise.err;
  const ProcessResult help = loraprobe({"--help"});
  EXPECT_NE(help.out.find("4 internal error (a bug)"), std::string::npos) << help.out;
  // A corrupt --kernel-dir set is the user's input: exit 2, naming the folder.
  const std::filesystem::path set = std::filesystem::path(scratch().path()) / "corrupt-set";
  std::filesystem::create_directories(set);
  std::filesystem::copy_file(LP_SOURCE_DIR "/kernels/sets/triton-3.8.0/manifest.json.xz", set / "manifest.json.xz",
                             std::filesystem::copy_options::overwrite_existing);
  std::ofstream(set / "set.pack.xz") << "not xz";
  const ProcessResult corrupt = loraprobe({"inspect", "--kernel-dir", set.string(), "--triton", "3.8.0", "--filter",
                                           "id=expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1"});
  EXPECT_EQ(corrupt.exit_code, 2) << corrupt.err;
  EXPECT_EQ(corrupt.err.rfind("loraprobe: --kernel-dir " + set.string() + ": " + set.string() + "/set.pack.xz: ", 0), 0U)
      << corrupt.err;
}

TEST(Cli, ASecondSweepNeverMixesJournalsOrOverwritesAReport) {
  // Refused before anything runs, GPU or not: exit 2, one line, both ways out named.
  const std::string report = write_temp("earlier.json", "{}");
  const std::string journal = report.substr(0, report.size() - 5) + ".jsonl";
  std::ofstream(journal) << R"({"type":"header","config_sha256":"c","plan_sha256":"p"})" "\n";
  const ProcessResult r = loraprobe({"sweep", "--out", report, "--tokens", "256"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(r.err, "loraprobe: " + journal + ": exists, from an earlier sweep; continue that sweep with --resume " +
                       journal + ", or pass --force to start afresh (the earlier files are kept as .bak)\n");
  // --force without a GPU stops at the GPU (exit 3) and has moved nothing yet.
  const ProcessResult forced = loraprobe({"sweep", "--out", report, "--tokens", "256", "--force"});
  if (forced.exit_code == 3) {
    EXPECT_TRUE(std::filesystem::exists(report));
    EXPECT_TRUE(std::filesystem::exists(journal));
    EXPECT_FALSE(std::filesystem::exists(report + ".bak"));
  }
  // A journal that is no journal: one line naming the file and line, exit 2.
  const std::string junk = write_temp("junk.jsonl", "not a journal\n");
  const ProcessResult resumed = loraprobe({"sweep", "--resume", junk});
  EXPECT_EQ(resumed.exit_code, 2);
  EXPECT_EQ(resumed.err, "loraprobe: " + junk + ":1: not JSON: not a loraprobe journal\n");
  const ProcessResult zero = loraprobe({"sweep", "--dry-run", "--config", "/dev/zero"});
  EXPECT_EQ(zero.exit_code, 2);
  EXPECT_EQ(zero.err, "loraprobe: /dev/zero: cannot read: it is a character device, not a regular file\n");
}

TEST(Cli, WithoutAGpuASweepSaysSoBeforeBuildingItsPlan) {
  // 4 million cases (under the cap) once took minutes and gigabytes to plan before the
  // sweep found no GPU; the GPU is asked first now. Only where there is none.
  if (loraprobe({"env"}).out.find("\nGPU: no CUDA device: ") == std::string::npos) {
    GTEST_SKIP() << "skipped: a GPU is present (this test is about a host without one)";
  }
  const std::string big = write_temp("big-plan.json", R"({"axes": {"triton": ["3.6.0"],
      "tokens": {"from": 1, "to": 4096, "step": 1}, "rank": {"from": 1, "to": 1000, "step": 1}}})");
  const ProcessResult r = loraprobe({"sweep", "--config", big, "--out", write_temp("big-plan-report.json", "") + ".new"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.rfind("loraprobe: running a sweep needs a Hopper (sm_90) GPU: ", 0), 0U) << r.err;
  // Exclude rules are capped: every case meets every rule.
  std::string rules = R"({"exclude": [)";
  for (int i = 0; i < 257; ++i) {
    rules += (i > 0 ? "," : "") + std::string(R"({"tokens": )") + std::to_string(i + 1) + "}";
  }
  const std::string many = write_temp("many-rules.json", rules + "]}");
  const ProcessResult capped = loraprobe({"sweep", "--dry-run", "--config", many});
  EXPECT_EQ(capped.exit_code, 2);
  EXPECT_EQ(capped.err, "loraprobe: " + many + ":/exclude: 257 rules, more than the 256 a config may have; narrow the "
                        "axes instead, or split the sweep\n");
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
  // Written as it goes: each case is one line of its own, in plan order.
  std::size_t case_lines = 0;
  std::size_t start = 0;
  while (start < r.out.size()) {
    const std::size_t end = std::min(r.out.find('\n', start), r.out.size());
    const std::string line = r.out.substr(start, end - start);
    if (line.rfind("    {\"axes\"", 0) == 0) {
      std::string text = line.substr(4);
      if (!text.empty() && text.back() == ',') {
        text.pop_back();
      }
      EXPECT_EQ(nlohmann::json::parse(text), plan["cases"][case_lines]);
      ++case_lines;
    }
    start = end + 1;
  }
  EXPECT_EQ(case_lines, 80U);
}

TEST(Cli, AConfigNameIsTheEmbeddedConfigFromAnyFolder) {
  // From a folder with no configs/ in it, as after pip install: the name is enough.
  ProcessOptions options;
  options.timeout = std::chrono::seconds(120);
  options.working_directory = scratch().path();
  const ProcessResult plan =
      run_process({LP_LORAPROBE, "sweep", "--dry-run", "--json", "--config", "seed-48590"}, options);
  ASSERT_EQ(plan.exit_code, 0) << plan.err;
  EXPECT_EQ(nlohmann::json::parse(plan.out)["count"], 80);  // as the file gives it
  const ProcessResult shown =
      run_process({LP_LORAPROBE, "sweep", "--show-config", "--json", "--config", "seed-48590"}, options);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  const nlohmann::json config = nlohmann::json::parse(shown.out);
  EXPECT_EQ(config["source"], "<embedded>/configs/seed-48590.json");
  EXPECT_EQ(config["axes"]["rank"]["origin"], "file <embedded>/configs/seed-48590.json");
  // The path the README used to give, outside a checkout: no such file, and the name that works.
  const ProcessResult old =
      run_process({LP_LORAPROBE, "inspect", "--config", "configs/seed-48590.json", "--ptxas", "toolkit"}, options);
  EXPECT_EQ(old.exit_code, 2);
  EXPECT_EQ(old.err, "loraprobe: configs/seed-48590.json: cannot read: no such file; the embedded config of that "
                     "name is --config seed-48590\n");
  for (const char* sub : {"sweep", "inspect"}) {
    const ProcessResult unknown = loraprobe({sub, "--config", "seed-4859"});
    EXPECT_EQ(unknown.exit_code, 2) << sub;
    EXPECT_EQ(unknown.err, "loraprobe: --config seed-4859: no such file or embedded config (embedded: check, "
                           "ci-gate, default, fp8, full, seed-48590, upgrade-gate)\n")
        << sub;
  }
}

TEST(Cli, ListConfigsShowsEachEmbeddedConfigWithItsCases) {
  const ProcessResult r = loraprobe({"list", "--configs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("config          cases  description\n", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("\nseed-48590         80  The reported conditions: vLLM LoRA expand reading an fp32 input into "
                       "bf16 weights, rank 64, one...\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\ndefault          5280  "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n7 embedded configs; cases over the Triton sets 3.6.0, 3.7.1, 3.8.0, 3.9.0;"),
            std::string::npos)
      << r.out;
  const ProcessResult json = loraprobe({"list", "--configs", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json rows = nlohmann::json::parse(json.out);
  ASSERT_EQ(rows.size(), 7U);
  for (const nlohmann::json& row : rows) {
    // Each row's cases are what a dry run of that name plans.
    const ProcessResult plan =
        loraprobe({"sweep", "--dry-run", "--json", "--config", row["name"].get<std::string>()});
    ASSERT_EQ(plan.exit_code, 0) << plan.err;
    EXPECT_EQ(nlohmann::json::parse(plan.out)["count"], row["cases"]) << row["name"];
    EXPECT_FALSE(row["description"].get<std::string>().empty());
  }
  EXPECT_EQ(loraprobe({"list", "--configs", "--models"}).exit_code, 2);
}

TEST(Cli, FlagsOverrideTheConfigAndShowTheirOrigin) {
  const ProcessResult r = loraprobe({"sweep", "--show-config", "--json", "--config",
                                     LP_SOURCE_DIR "/configs/seed-48590.json", "--tokens", "256,384", "--block-n",
                                     "32,128", "--num-stages", "2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json config = nlohmann::json::parse(r.out);
  EXPECT_EQ(config["axes"]["tokens"]["values"], nlohmann::json::array({256, 384}));
  EXPECT_EQ(config["axes"]["tokens"]["origin"], "flag --tokens");
  EXPECT_EQ(config["axes"]["rank"]["origin"], "file " LP_SOURCE_DIR "/configs/seed-48590.json");
  EXPECT_EQ(config["axes"]["split_k"]["origin"], "default");
}

TEST(Cli, TheConfigTableShowsEverySettingThatChangesWhatRuns) {
  const ProcessResult r = loraprobe({"sweep", "--show-config", "--config", LP_SOURCE_DIR "/configs/seed-48590.json",
                                     "--model", "qwen3-8b", "--tp", "2", "--vllm-batch-invariant"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\nremedies       on "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nmodel          qwen3-8b tp 2 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("flag --model\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nvllm_configs   none (vLLM's defaults) "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nbatch_invariant on (VLLM_BATCH_INVARIANT)"), std::string::npos) << r.out;
}

TEST(Cli, TheOldRanksFlagStillWorksWithANote) {
  const ProcessResult r = loraprobe({"sweep", "--show-config", "--json", "--ranks", "16,32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "loraprobe: note: --ranks: write --rank (--ranks is deprecated)\n");
  const nlohmann::json config = nlohmann::json::parse(r.out);
  EXPECT_EQ(config["axes"]["rank"]["values"], nlohmann::json::array({16, 32}));
  EXPECT_EQ(config["axes"]["rank"]["origin"], "flag --rank");
}

TEST(Cli, RepeatedCompilerFlagsKeepPathsWhole) {
  const ProcessResult r = loraprobe({"sweep", "--show-config", "--json", "--compiler", "prebuilt", "--compiler",
                                     "ptxas=/opt/a dir,with comma/ptxas"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json config = nlohmann::json::parse(r.out);
  EXPECT_EQ(config["axes"]["compiler"]["values"],
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
  EXPECT_EQ(env["kernel_sets"][0]["variants"], 2035);
  EXPECT_EQ(env["kernel_sets"][3]["triton_version"], "3.9.0");
  EXPECT_NE(text.out.find("kernel set: Triton 3.9.0, 661 variants, bundled ptxas Cuda compilation tools, release 13.4, "
                          "V13.4.59"),
            std::string::npos)
      << text.out;
  EXPECT_EQ(env["gpu"].is_null(), !has_gpu);
}

/// A minimal 3.x sweep report: the cases (compiler, tokens, verdict, worst deviation over tolerance).
std::string report_text(const std::vector<std::tuple<std::string, int, std::string, double>>& cases,
                        const std::string& driver) {
  nlohmann::json r = {{"schema_version", "3.0.0"},
                      {"meta", {{"tool", "loraprobe"}, {"version", "0.1.0"}, {"git_sha", "0123456789ab"},
                                {"argv", {"loraprobe", "sweep"}}, {"started_at", "2026-12-01T10:00:00Z"},
                                {"config", {{"name", "diff"}}}, {"config_sha256", std::string(64, 'a')},
                                {"seed", 1}, {"repeats", 3}, {"plan", {{"cases", cases.size()}, {"combinations", cases.size()}}},
                                {"fail_on", {"FAIL"}}}},
                      {"controls", {{"ran", false}, {"valid", nullptr}}},
                      {"tolerances", {{"model", ""}, {"table", nlohmann::json::array()}, {"overrides", nlohmann::json::object()}}},
                      {"environment", {{"host", nlohmann::json::object()}, {"toolkit", nlohmann::json::object()},
                                       {"compilers", nlohmann::json::array()},
                                       {"gpu", {{"name", "NVIDIA H200"}, {"driver_version", driver}}}}},
                      {"variants", nlohmann::json::array()},
                      {"cases", nlohmann::json::array()}};
  for (const auto& [compiler, tokens, verdict, dev] : cases) {
    r["cases"].push_back({{"id", fmt::format("{:012x}", tokens)},
                          {"index", r["cases"].size()},
                          {"axes", {{"op", "expand"}, {"tokens", tokens}, {"rank", 64}, {"block_n", 128},
                                    {"compiler", compiler}, {"triton", "3.8.0"}}},
                          {"variant", nullptr},
                          {"verdict", verdict},
                          {"reason", verdict == "PASS" ? "" : "why"},
                          {"runs", 3},
                          {"failed_runs", verdict == "FAIL" ? 1 : 0},
                          {"static_findings", nullptr},
                          {"timing", nullptr},
                          {"metrics", {{"elements", 4096}, {"nan", 0}, {"inf", 0}, {"unwritten", nullptr},
                                       {"mismatches", verdict == "FAIL" ? 1 : 0}, {"max_abs_dev", 0.001},
                                       {"max_rel_dev", 0.002}, {"first_bad", nullptr}, {"failing_tiles", 0},
                                       {"worst_dev_over_tolerance", dev}}}});
  }
  return r.dump();
}

TEST(Cli, DiffGroupsVerdictChangesAndExitsOneOnARegression) {
  const std::string before = write_temp(
      "diff-old.json", report_text({{"ptxas=13.0.88", 16, "PASS", 0.2}, {"ptxas=13.0.88", 32, "LATENT", 0.2},
                                    {"ptxas=13.0.88", 64, "FAIL", 9.0}, {"ptxas=13.0.88", 128, "PASS", 0.1}},
                                   "570.1"));
  const std::string after = write_temp(
      "diff-new.json", report_text({{"ptxas=13.3.73", 16, "FAIL", 7.0}, {"ptxas=13.3.73", 32, "PASS", 0.2},
                                    {"ptxas=13.3.73", 64, "PASS", 0.3}, {"ptxas=13.3.73", 128, "LATENT", 0.1},
                                    {"ptxas=13.3.73", 256, "PASS", 0.1}},
                                   "580.2"));
  // Different compiler names: no case in common until they are paired.
  ProcessResult r = loraprobe({"diff", before, after});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find("no case in common"), std::string::npos) << r.err;
  r = loraprobe({"diff", before, after, "--match-compiler", "ptxas=13.0.88=ptxas=13.3.73", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // 16 tokens: PASS -> FAIL
  const nlohmann::json d = nlohmann::json::parse(r.out);
  EXPECT_EQ(d["matched"], 4);
  ASSERT_EQ(d["newly_failing"].size(), 1U);
  EXPECT_EQ(d["newly_failing"][0]["new"]["tokens"], 16);
  ASSERT_EQ(d["newly_latent"].size(), 1U);
  EXPECT_EQ(d["newly_latent"][0]["new"]["tokens"], 128);
  EXPECT_EQ(d["fixed"].size(), 2U);  // LATENT -> PASS and FAIL -> PASS
  EXPECT_EQ(d["only_new"].size(), 1U);
  EXPECT_EQ(d["only_old"].size(), 0U);
  EXPECT_EQ(d["deviations"].size(), 2U);  // 0.2 -> 7.0 and 9.0 -> 0.3; 0.2 -> 0.2 stays out
  ASSERT_EQ(d["environment"].size(), 1U);
  EXPECT_EQ(d["environment"][0]["what"], "gpu.driver_version");
  // Only a new LATENT: a regression with --fail-on latent, not without.
  const std::string latent_only = write_temp(
      "diff-latent.json", report_text({{"ptxas=13.0.88", 16, "PASS", 0.2}, {"ptxas=13.0.88", 128, "LATENT", 0.1}},
                                      "570.1"));
  EXPECT_EQ(loraprobe({"diff", before, latent_only}).exit_code, 0);
  EXPECT_EQ(loraprobe({"diff", before, latent_only, "--fail-on", "latent"}).exit_code, 1);
  // A kernel that stops compiling is a regression; one that compiles again is fixed
  // (Triton 3.9.0's PTX under ptxas 13.0 and under its own 13.4, on the H200).
  const std::string compiles = write_temp(
      "diff-compiles.json", report_text({{"ptxas=triton", 16, "PASS", 0.1}}, "570.1"));
  const std::string refuses = write_temp(
      "diff-refuses.json", report_text({{"ptxas=toolkit", 16, "compile_error", 0.0}}, "570.1"));
  r = loraprobe({"diff", compiles, refuses, "--match-compiler", "ptxas=triton=ptxas=toolkit", "--json"});
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["newly_failing"].size(), 1U);
  r = loraprobe({"diff", refuses, compiles, "--match-compiler", "ptxas=toolkit=ptxas=triton", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["fixed"].size(), 1U);
  // An inspect document, or an unreadable schema, cannot be compared.
  const std::string inspect_doc = write_temp("diff-inspect.json", R"({"schema_version": "3.0.0", "meta": {"command": "inspect"}})");
  EXPECT_EQ(loraprobe({"diff", before, inspect_doc}).exit_code, 2);
  const std::string ancient = write_temp("diff-ancient.json", R"({"schema_version": "1.0.0", "meta": {}})");
  r = loraprobe({"diff", ancient, after});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + ancient + ":/schema_version: report 1.0.0: this loraprobe reads 2.x to 5.x\n");
}

TEST(Cli, ReportAndDiffReadAnOlderSchemaReportAndRefuseWhatIsNone) {
  const std::string old = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-2.0.0.json";
  ProcessResult r = loraprobe({"report", old});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("report schema 2.0.0"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GPU: NVIDIA H200 (sm 9.0)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  Triton 3.6.0 prebuilt expand: 2 LATENT, 2 PASS\n"), std::string::npos) << r.out;
  r = loraprobe({"report", old, "--format", "junit"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"(<testsuites name="loraprobe sweep" tests="8" failures="0" errors="0" skipped="4")"),
            std::string::npos)
      << r.out;
  r = loraprobe({"report", old, "--format", "junit", "--fail-on", "latent"});
  EXPECT_NE(r.out.find(R"(tests="8" failures="4" errors="0" skipped="0")"), std::string::npos) << r.out;
  r = loraprobe({"diff", old, old});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("diff: 8 case(s) matched", 0), 0U) << r.out;
  // Markdown and HTML read the old schema too.
  r = loraprobe({"report", old, "--format", "md"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| loraprobe | 0.1.0 (git d0e8967118fa), report schema 2.0.0 |"), std::string::npos) << r.out;
  r = loraprobe({"report", old, "--format", "html"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("<td class=\"cell L\" title=\"16 tokens: LATENT"), std::string::npos);
  // Rewriting in the current schema is for 3.x to 5.x reports only: 2.x differs in more than its cases.
  r = loraprobe({"report", old, "--format", "json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + old + ":/schema_version: report 2.0.0: only 3.x to 5.x reports can be written "
                   "again (older ones differ in more than the form of their cases); the other formats read it as it "
                   "is\n");
  const std::string three = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";
  const std::string compact = scratch().path() + "/seed-compact-cli.json";
  r = loraprobe({"report", three, "--format", "json", "-o", compact});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json rewritten = nlohmann::json::parse(read_file(compact));
  EXPECT_EQ(rewritten["schema_version"], "5.0.0");
  EXPECT_EQ(rewritten["meta"]["detail"], "compact");
  EXPECT_EQ(rewritten["cases"]["rows"].size(), 80U);
  r = loraprobe({"diff", three, compact});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("diff: 80 case(s) matched", 0), 0U) << r.out;
  // A 4.x report named the amplify count "pairs": it reads, and is written again as "amplify".
  const std::string amplified = LP_SOURCE_DIR "/tests/stack/fixtures/h100-check-run-amplify2.json";
  ASSERT_NE(read_file(amplified).find("\"pairs\":2"), std::string::npos) << "the fixture is no longer a 4.x report";
  const std::string renamed = scratch().path() + "/amplified-5.json";
  r = loraprobe({"report", amplified, "--format", "json", "-o", renamed});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string renamed_text = read_file(renamed);
  EXPECT_EQ(renamed_text.find("\"pairs\""), std::string::npos);
  EXPECT_NE(renamed_text.find("\"amplify\": 2"), std::string::npos);
  r = loraprobe({"diff", amplified, renamed});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const std::string junk = write_temp("report-junk.json", "[1, 2");
  r = loraprobe({"report", junk});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("loraprobe: " + junk + ": not JSON: ", 0), 0U) << r.err;
}

}  // namespace
}  // namespace lp

namespace lp {
namespace {

TEST(Cli, MergeRefusesReportsThatAreNotShards) {
  const std::string three = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";
  ProcessResult r = loraprobe({"merge", three, "-o", scratch().path() + "/merged.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + three + ":/schema_version: report 3.0.0: shards are reports of schema 5.0.0 "
                   "(sweep --shard)\n");
  const std::string four = scratch().path() + "/seed-4.json";
  ASSERT_EQ(loraprobe({"report", three, "--format", "json", "-o", four}).exit_code, 0);
  r = loraprobe({"merge", four, "-o", scratch().path() + "/merged.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + four + ":/meta/shard: missing: not a shard of a sweep (sweep --shard I/N writes "
                   "one)\n");
  r = loraprobe({"sweep", "--dry-run", "--shard", "auto/4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("neither SLURM_ARRAY_TASK_ID"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lp

namespace lp {
namespace {

TEST(Cli, RemediesAreTheConfigsUnlessAFlagSaysOtherwise) {
  const std::string seed = LP_SOURCE_DIR "/configs/seed-48590.json";
  auto remedies = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"sweep", "--config", seed, "--show-config", "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const ProcessResult r = loraprobe(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const nlohmann::json c = nlohmann::json::parse(r.out);
    return c.contains("remedies") ? c["remedies"]["origin"].get<std::string>() : std::string("off");
  };
  EXPECT_EQ(remedies({}), "file " + seed);
  EXPECT_EQ(remedies({"--no-remedies"}), "off");
  EXPECT_EQ(remedies({"--remedies"}), "flag --remedies");
}

}  // namespace
}  // namespace lp
