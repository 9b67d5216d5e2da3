// sweep --shard I/N and loraprobe merge on a CPU, through the scripted fake worker
// (tests/sweep/fake_worker.py): merged shards are the unsharded report, merge refuses
// what is not one whole plan, and one problem's cases share their seed and run back to back.

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "fake_worker_config.hpp"
#include "formats/document.hpp"
#include "formats/merge.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "sweep/entries.hpp"
#include "sweep/runner.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::sweep {
namespace {

using nlohmann::json;
using fake_worker::k_config;
using fake_worker::lines_of;

/// A report as the converters read it, without what differs between runs of one
/// plan on different machines or at different times.
json comparable(const std::string& path) {
  json j = formats::full_json(formats::read_document(path));
  for (const char* key : {"started_at", "finished_at", "argv", "phases_s", "problems", "merged", "shard"}) {
    j["meta"].erase(key);
  }
  j.erase("environment");
  return j;
}

class ShardsWithFakeWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file_atomic(m_dir.path() + "/config.json", k_config);
    write_file_atomic(m_dir.path() + "/script.json",
                      json{{"by_index", {{"1", "fail"}, {"4", "fail"}}}, {"log", m_dir.path() + "/worker.log"}}.dump());
    ::setenv("LP_FAKE_WORKER_SCRIPT", (m_dir.path() + "/script.json").c_str(), 1);
  }
  void TearDown() override { ::unsetenv("LP_FAKE_WORKER_SCRIPT"); }

  int sweep(const std::string& out, std::optional<plan::Shard> shard, const std::string& config_path = "") {
    SweepRequest r = fake_worker::request(m_dir.path() + "/" + out);
    r.shard = shard;
    return run_sweep(plan::load_config_file(config_path.empty() ? m_dir.path() + "/config.json" : config_path), r).exit_code;
  }
  std::string path(const std::string& name) const { return m_dir.path() + "/" + name; }

  TempDir m_dir{"lp-shard-test-"};
};

TEST_F(ShardsWithFakeWorker, MergedShardsAreTheUnshardedReport) {
  ASSERT_EQ(sweep("all.json", std::nullopt), 1);  // two FAIL cases
  for (std::size_t i = 0; i < 3; ++i) {
    sweep(fmt::format("shard-{}.json", i), plan::Shard{i, 3});
  }
  const json s0 = json::parse(read_file(path("shard-0.json"), 1 << 24));
  EXPECT_EQ(s0["meta"]["shard"]["count"], 3);
  EXPECT_EQ(s0["meta"]["shard"]["plan_cases"], 6);
  EXPECT_EQ(s0["cases"]["rows"].size(), 2U);  // 6 cases of equal cost per token count: 2 each
  const report::Report merged = formats::merge_reports({path("shard-2.json"), path("shard-0.json"), path("shard-1.json")}, {});
  merged.write(path("merged.json"));
  EXPECT_EQ(comparable(path("merged.json")), comparable(path("all.json")));
  // The summary is the whole sweep's: first and minimal failure across the parts.
  const json m = json::parse(read_file(path("merged.json"), 1 << 24));
  EXPECT_EQ(m["summary"]["first_failure"]["index"], 1);
  EXPECT_EQ(m["summary"]["exit_code"], 1);
  EXPECT_EQ(m["meta"]["merged"]["parts"].size(), 3U);
  EXPECT_EQ(m["meta"]["merged"]["incomplete"], false);
}

TEST_F(ShardsWithFakeWorker, OneProblemsCasesShareTheirSeedAndRunBackToBack) {
  // The config's 6 cases are 3 problems (tokens) times 2 block_n: each problem's two
  // variants get the same seed, another problem another, and the worker is sent one
  // problem's cases back to back (plan order 0..5 is block_n-major).
  const plan::SweepConfig config = plan::load_config_file(path("config.json"));
  const plan::Plan p = plan::expand_plan(config, {"3.6.0"});
  ASSERT_EQ(p.cases.size(), 6U);
  std::map<std::int64_t, std::set<std::uint64_t>> seeds;  // tokens -> the seeds its cases got
  for (const plan::Case& c : p.cases) {
    seeds[c.tokens].insert(problem_of(c, config.seed.value).seed);
  }
  ASSERT_EQ(seeds.size(), 3U);
  std::set<std::uint64_t> all;
  for (const auto& [tokens, of_tokens] : seeds) {
    EXPECT_EQ(of_tokens.size(), 1U) << tokens << " tokens: one seed for both variants";
    all.insert(*of_tokens.begin());
  }
  EXPECT_EQ(all.size(), 3U) << "three problems, three seeds";
  ASSERT_EQ(sweep("all.json", std::nullopt), 1);
  std::vector<std::string> order;
  for (const std::string& line : lines_of(path("worker.log"))) {
    std::istringstream in(line);
    std::string word;
    std::size_t index = 0;
    if (in >> word >> index && word == "run" && index < 6) {
      order.push_back(p.cases[index].id);
    }
  }
  std::vector<std::string> expected;
  for (const std::size_t i : {0, 3, 1, 4, 2, 5}) {
    expected.push_back(p.cases[i].id);
  }
  EXPECT_EQ(order, expected);
  const json report = json::parse(read_file(path("all.json"), 1 << 24));
  EXPECT_EQ(report["meta"]["problems"], 3);
  EXPECT_EQ(report["cases"]["rows"].size(), 6U) << "the report keeps plan order";
}

TEST_F(ShardsWithFakeWorker, MergeRefusesWhatIsNotOneWholePlan) {
  for (std::size_t i = 0; i < 3; ++i) {
    sweep(fmt::format("shard-{}.json", i), plan::Shard{i, 3});
  }
  auto refusal = [](const std::vector<std::string>& parts, const formats::MergeOptions& o = {}) {
    try {
      (void)formats::merge_reports(parts, o);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("merged");
  };
  const std::string plan_sha = json::parse(read_file(path("shard-0.json"), 1 << 24))["meta"]["shard"]["plan_sha256"];
  EXPECT_EQ(refusal({path("shard-0.json"), path("shard-2.json")}),
            fmt::format("merge: shard(s) 1 of 3 missing (plan sha256 {}); give every shard's report or journal, or "
                        "--allow-partial",
                        plan_sha.substr(0, 12)));
  EXPECT_EQ(refusal({path("shard-0.json"), path("shard-1.json"), path("shard-0.json")}),
            path("shard-0.json") + ":/meta/shard/index: shard 0 of 3 again (also " + path("shard-0.json") +
                "): give each shard once, its report or its journal");
  // A shard of another plan (one token count fewer).
  json other = json::parse(k_config);
  other["axes"]["tokens"] = {16, 32};
  write_file_atomic(path("other.json"), other.dump());
  sweep("other-0.json", plan::Shard{0, 3}, path("other.json"));
  const std::string other_sha = json::parse(read_file(path("other-0.json"), 1 << 24))["meta"]["shard"]["plan_sha256"];
  EXPECT_EQ(refusal({path("shard-0.json"), path("other-0.json")}),
            path("other-0.json") + ":/meta/shard/plan_sha256: \"" + other_sha + "\", but " + path("shard-0.json") +
                " has \"" + plan_sha + "\": shards of different plans");
  EXPECT_EQ(refusal({path("shard-0.json"), path("all-missing.json")}).rfind(path("all-missing.json") + ": ", 0), 0U);
  // A shard that died: its journal, short of its last case.
  std::vector<std::string> lines = lines_of(path("shard-1.jsonl"));
  ASSERT_GE(lines.size(), 3U);  // header, controls, cases
  lines.pop_back();
  std::string torn;
  for (const std::string& l : lines) {
    torn += l + "\n";
  }
  write_file_atomic(path("died-1.jsonl"), torn);
  EXPECT_EQ(refusal({path("shard-0.json"), path("died-1.jsonl"), path("shard-2.json")}),
            "merge: " + path("died-1.jsonl") + ": holds 1 of the 2 cases of shard 1 of 3 (a shard that stopped: "
            "sweep --resume its journal, or merge --allow-partial)");
  formats::MergeOptions partial;
  partial.allow_partial = true;
  const report::Report r = formats::merge_reports({path("shard-0.json"), path("died-1.jsonl"), path("shard-2.json")},
                                                  partial);
  EXPECT_EQ(r.cases.size(), 5U);
  EXPECT_TRUE(r.meta.merged.record()->incomplete);
  EXPECT_EQ(r.to_json()["meta"]["interrupted"], "merged with --allow-partial: 5 of 6 cases, 0 shard(s) missing");
  // The whole journal of a shard merges like its report.
  const report::Report from_journal =
      formats::merge_reports({path("shard-0.json"), path("shard-1.jsonl"), path("shard-2.json")}, {});
  EXPECT_EQ(from_journal.cases.size(), 6U);
  EXPECT_EQ(from_journal.meta.merged.record()->parts[1].kind, "journal");
}

// Issue 53 defect 2: shard records rewritten to agree with too few cases used to merge
// as complete ("10 of 240 planned ... exit code 0"). The parts' ids must be the plan's.
TEST_F(ShardsWithFakeWorker, MergeRefusesForgedShardRecords) {
  for (std::size_t i = 0; i < 3; ++i) {
    sweep(fmt::format("shard-{}.json", i), plan::Shard{i, 3});
  }
  const auto forge = [&](const std::string& from, const std::string& to, std::size_t index, std::size_t count,
                         std::size_t plan_cases, const std::string& sha) {
    json j = json::parse(read_file(path(from), 1 << 24));
    j["meta"]["shard"] = {{"index", index}, {"count", count}, {"plan_sha256", sha}, {"plan_cases", plan_cases}};
    j["meta"]["plan"]["cases"] = j["cases"]["rows"].size();
    write_file_atomic(path(to), j.dump());
  };
  auto refusal = [](const std::vector<std::string>& parts) {
    try {
      (void)formats::merge_reports(parts, {});
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("merged");
  };
  const std::string sha = json::parse(read_file(path("shard-0.json"), 1 << 24))["meta"]["shard"]["plan_sha256"];
  const std::string a64(64, 'a');
  // One shard of one, claiming the plan is its 2 cases (plan_cases must match the rows).
  forge("shard-0.json", "one.json", 0, 1, 6, a64);
  EXPECT_EQ(refusal({path("one.json")}),
            "merge: the parts hold 2 case(s), the plan 6 (plan sha256 aaaaaaaaaaaa); give every shard's report or "
            "journal, or --allow-partial");
  forge("shard-0.json", "one-small.json", 0, 1, 2, a64);
  EXPECT_EQ(refusal({path("one-small.json")}).rfind("merge: the parts' 2 case ids are not the plan's: they hash to ", 0),
            0U);
  // Two shards whose counts add up to a plan of 4, with the real plan's sha256.
  forge("shard-0.json", "two-0.json", 0, 2, 4, sha);
  forge("shard-1.json", "two-1.json", 1, 2, 4, sha);
  const std::string two = refusal({path("two-0.json"), path("two-1.json")});
  EXPECT_EQ(two.rfind("merge: the parts' 4 case ids are not the plan's: they hash to ", 0), 0U) << two;
  EXPECT_NE(two.find(", the plan to " + sha.substr(0, 12)), std::string::npos) << two;
  // --allow-partial merges it, marked incomplete with the reason.
  formats::MergeOptions partial;
  partial.allow_partial = true;
  const report::Report r = formats::merge_reports({path("two-0.json"), path("two-1.json")}, partial);
  EXPECT_TRUE(r.meta.merged.record()->incomplete);
  EXPECT_EQ(r.to_json()["meta"]["interrupted"].get<std::string>().rfind(
                "merged with --allow-partial: 4 of 4 cases, 0 shard(s) missing; the parts' 4 case ids are not the "
                "plan's",
                0),
            0U);
}

}  // namespace
}  // namespace lp::sweep
