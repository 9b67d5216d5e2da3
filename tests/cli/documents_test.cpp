// Every kind of document a user hands loraprobe, nested 100,000 deep (200 KB): each
// reader refuses it before building anything, in one line with exit 2, within a
// 100 MB data limit (issue 30: such a file crashed report, diff, merge and repro with
// SIGSEGV, and a deep config grew memory with the square of its depth). And the typed
// readers: a wrong type or an out-of-range number is named by file and pointer (exit
// 2), and merge and diff refuse the forgeries that passed for complete or clean.

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/cli.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const char* const k_seed = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";

using test_support::scratch;

std::string write(const std::string& name, const std::string& text) {
  const std::string path = scratch().path() + "/" + name;
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

/// loraprobe with its data segment (heap and anonymous maps) capped at `mb` MB.
ProcessResult loraprobe_capped(const std::vector<std::string>& args, int mb = 100) {
  std::vector<std::string> argv = {"/bin/sh", "-c", fmt::format("ulimit -d {} && exec \"$0\" \"$@\"", mb * 1024),
                                   LP_LORAPROBE};
  argv.insert(argv.end(), args.begin(), args.end());
  ProcessOptions options;
  options.timeout = std::chrono::seconds(60);
  return run_process(argv, options);
}

using test_support::loraprobe;

std::string deep(std::size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

void expect_refused(const ProcessResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.err << " (signal " << r.term_signal << ")";
  EXPECT_EQ(r.err, "loraprobe: " + message + "\n");
}

TEST(Documents, EveryKindNestedDeepIsRefusedBeforeItIsParsed) {
  const std::string text = deep(100000);
  const std::string report = write("deep-report.json", text);
  const std::string config = write("deep-config.json", text);
  const std::string journal = write("deep.jsonl", text + "\n");
  write("vllm/NVIDIA_H200_SHRINK.json", text);
  const std::string nesting64 = ": nesting deeper than 64 levels";
  for (const char* format : {"summary", "json", "md", "html", "junit"}) {
    expect_refused(loraprobe_capped({"report", report, "--format", format}), report + nesting64);
  }
  expect_refused(loraprobe_capped({"diff", report, k_seed}), report + nesting64);
  expect_refused(loraprobe_capped({"diff", k_seed, report}), report + nesting64);
  expect_refused(loraprobe_capped({"merge", report, "--out", scratch().path() + "/merged.json"}), report + nesting64);
  expect_refused(loraprobe_capped({"repro", report, "9efe288f6599", "--out", scratch().path() + "/bundle"}),
                 report + nesting64);
  expect_refused(loraprobe_capped({"sweep", "--dry-run", "--config", config}),
                 config + ": nesting deeper than 16 levels");
  expect_refused(loraprobe_capped({"inspect", "--config", config}), config + ": nesting deeper than 16 levels");
  // The tuned files are read once the kernel sets are: their decoder reserves about
  // 300 MB of address space (a plain dry run's limit), and the deep file adds nothing.
  const ProcessResult tuned = loraprobe_capped(
      {"sweep", "--dry-run", "--vllm-configs", scratch().path() + "/vllm", "--vllm-gpu", "NVIDIA H200"}, 400);
  expect_refused(tuned, scratch().path() + "/vllm/NVIDIA_H200_SHRINK.json: nesting deeper than 16 levels");
  // A journal line is one document: merged or resumed, the deep line is refused.
  for (const ProcessResult& r : {loraprobe_capped({"merge", journal, "--out", scratch().path() + "/m2.json"}),
                                 loraprobe_capped({"sweep", "--resume", journal})}) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(r.err.rfind("loraprobe: " + journal + ":1: ", 0), 0U) << r.err;
  }
}

/// The seed report written again by this loraprobe (schema 3 -> the current one).
const json& current_seed() {
  static const json seed = [] {
    ProcessOptions options;
    options.timeout = std::chrono::seconds(60);
    const ProcessResult r = run_process({LP_LORAPROBE, "report", k_seed, "--format", "json"}, options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }();
  return seed;
}

/// The seed report with `edit` applied.
std::string edited(const std::string& name, const std::function<void(json&)>& edit, bool current = false) {
  json j = current ? current_seed() : json::parse(read_file(k_seed));
  edit(j);
  return write(name, j.dump(1));
}

TEST(Documents, WrongTypesAndRangesAreNamedByFileAndPointer) {
  struct Case {
    std::string name;
    std::function<void(json&)> edit;
    std::string message;  ///< after "<file>:"
  };
  const std::vector<Case> cases = {
      {"command-number", [](json& j) { j["meta"]["command"] = 7; }, "/meta/command: expected a string, got 7"},
      {"index-negative", [](json& j) { j["cases"][0]["index"] = -1; },
       "/cases/0/index: expected a whole number in [0, 9007199254740992], got -1"},
      {"findings-huge", [](json& j) { j["cases"][0]["static_findings"] = 4294967304LL; },
       "/cases/0/static_findings: expected a whole number in [0, 2147483647], got 4294967304"},
      {"detail-number", [](json& j) { j["cases"][0]["reason"] = 5; }, "/cases/0/reason: expected a string, got 5"},
      {"variants-string", [](json& j) { j["variants"] = "x"; }, "/variants: expected a list, got a string"},
      {"controls-null", [](json& j) { j["controls"] = nullptr; }, "/controls: expected an object, got null"},
      // meta, controls and tolerances are read typed (report/blocks.hpp), every field checked.
      {"tool-other", [](json& j) { j["meta"]["tool"] = "other"; },
       "/meta/tool: \"other\" is not loraprobe: not a loraprobe report"},
      {"seed-negative", [](json& j) { j["meta"]["seed"] = -3; },
       "/meta/seed: expected a whole number in [0, 18446744073709551615], got -3"},
      {"repeats-zero", [](json& j) { j["meta"]["repeats"] = 0; },
       "/meta/repeats: expected a whole number in [1, 100000], got 0"},
      {"plan-cases-text", [](json& j) { j["meta"]["plan"]["cases"] = "24"; },
       "/meta/plan/cases: expected a whole number in [0, 9007199254740992], got \"24\""},
      {"argv-number", [](json& j) { j["meta"]["argv"][1] = 1; }, "/meta/argv/1: expected a string, got 1"},
      {"fail-on-unknown", [](json& j) { j["meta"]["fail_on"] = {"NOPE"}; },
       "/meta/fail_on/0: \"NOPE\" is not a verdict"},
      {"phase-negative", [](json& j) { j["meta"]["phases_s"]["total"] = -1.5; },
       "/meta/phases_s/total: expected a number >= 0, got -1.5"},
      {"race-summary-number", [](json& j) { j["controls"]["race"]["summary"] = 3; },
       "/controls/race/summary: expected a string, got 3"},
      {"control-verdict", [](json& j) { j["controls"]["sets"][0]["positive"]["verdict"] = "MAYBE"; },
       "/controls/sets/0/positive/verdict: \"MAYBE\" is not a verdict"},
      {"valid-text", [](json& j) { j["controls"]["valid"] = "yes"; },
       "/controls/valid: expected true or false, got \"yes\""},
      {"atol-negative", [](json& j) { j["tolerances"]["table"][0]["atol"] = -0.5; },
       "/tolerances/table/0/atol: expected a number >= 0, got -0.5"},
      {"overrides-list", [](json& j) { j["tolerances"]["overrides"] = json::array(); },
       "/tolerances/overrides: expected an object, got a list"},
  };
  for (const Case& c : cases) {
    const std::string path = edited(c.name + ".json", c.edit);
    for (const char* format : {"summary", "md", "html", "junit", "json"}) {
      const ProcessResult r = loraprobe({"report", path, "--format", format});
      EXPECT_EQ(r.exit_code, 2) << c.name << " " << format << ": " << r.err;
      EXPECT_EQ(r.err, "loraprobe: " + path + ":" + c.message + "\n") << c.name << " " << format;
    }
  }
}

TEST(Documents, ASeedPastInt64ReadsBack) {
  // sweep --seed takes 0 to 2^64-1 (plan/flags.cpp), as a config's "seed" does, and the
  // report records it: reading that report back once refused every seed from 2^63 on.
  const std::uint64_t seed = 18446744073709551557ULL;
  const std::string path = edited("seed-high.json", [&](json& j) { j["meta"]["seed"] = seed; });
  const ProcessResult r = loraprobe({"report", path, "--format", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["meta"]["seed"].get<std::uint64_t>(), seed);
}

TEST(Documents, MergeRefusesForgedShardRecords) {
  // The seed is no shard; give it shard records a forger would write.
  auto shard = [](std::int64_t index, std::int64_t count, std::int64_t cases) {
    return [=](json& j) {
      j["meta"]["shard"] = {{"index", index}, {"count", count}, {"plan_cases", cases}, {"plan_sha256", "p"}};
    };
  };
  const std::string past = edited("shard-past.json", shard(2, 2, 24), true);
  const ProcessResult r1 = loraprobe({"merge", past, "--out", scratch().path() + "/x.json"});
  EXPECT_EQ(r1.exit_code, 2);
  EXPECT_EQ(r1.err, "loraprobe: " + past + ":/meta/shard/index: expected a whole number in [0, 1], got 2\n");
  const std::string negative = edited("shard-negative.json", shard(-1, 2, 24), true);
  const ProcessResult r2 = loraprobe({"merge", negative, "--out", scratch().path() + "/x.json"});
  EXPECT_EQ(r2.exit_code, 2);
  EXPECT_EQ(r2.err, "loraprobe: " + negative + ":/meta/shard/index: expected a whole number in [0, 1], got -1\n");
  const std::string many = edited("shard-many.json", shard(0, 1000000000000LL, 24), true);
  const ProcessResult r3 = loraprobe({"merge", many, "--out", scratch().path() + "/x.json", "--allow-partial"});
  EXPECT_EQ(r3.exit_code, 2);
  EXPECT_EQ(r3.err, "loraprobe: " + many + ":/meta/shard/count: expected a whole number in [1, 24], got 1000000000000\n");
}

TEST(Documents, DiffNamesTheMalformedFileAndRefusesAConfigurationHeldTwice) {
  const std::string broken = edited("old-broken.json", [](json& j) { j["cases"][3]["runs"] = "many"; });
  const ProcessResult r = loraprobe({"diff", broken, k_seed});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "loraprobe: " + broken + ":/cases/3/runs: expected a whole number in [0, 2147483647], got \"many\"\n");
  // A PASS copy of a configuration before its compile_error copy used to hide the error.
  const std::string twice = edited("new-twice.json", [](json& j) {
    json pass = j["cases"][0];
    pass["verdict"] = "PASS";
    pass["reason"] = nullptr;
    j["cases"].insert(j["cases"].begin(), pass);
  });
  const ProcessResult t = loraprobe({"diff", k_seed, twice});
  EXPECT_EQ(t.exit_code, 2) << t.err;
  EXPECT_NE(t.err.find(twice + ":/cases/1: the configuration "), std::string::npos) << t.err;
  EXPECT_NE(t.err.find(" is also /cases/0: a report holds each configuration once"), std::string::npos) << t.err;
}

}  // namespace
}  // namespace lp
