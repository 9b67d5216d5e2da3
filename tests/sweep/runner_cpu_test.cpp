// The sweep's parent end to end on a CPU: the runner drives a scripted fake worker
// (tests/sweep/fake_worker.py) through SweepRequest::worker_exe, so verdicts, the
// controls, a fault, a timeout, worker replacement, the journal and --resume are
// checked without a GPU.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "plan/config.hpp"
#include "report/journal.hpp"
#include "sass/nvdisasm.hpp"
#include "sweep/runner.hpp"
#include "formats/document.hpp"
#include "util/files.hpp"

namespace lp::sweep {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

/// Six cases: block_n 128 (a hazard in its SASS) and 32 (clean), 16/32/64 tokens.
constexpr const char* k_config = R"({
  "name": "fake-worker",
  "axes": {"triton": ["3.6.0"], "op": ["expand"], "input_dtype": ["fp32"], "weight_dtype": ["bf16"],
           "num_slices": [1], "hidden": [4096], "ranks": [64], "num_loras": [1], "add_inputs": [true],
           "block_m": [64], "block_n": [128, 32], "block_k": [32], "num_warps": [4], "num_stages": [2],
           "compilers": ["prebuilt"], "tokens": [16, 32, 64]},
  "repeats": 2, "seed": 48590})";

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    out.push_back(line);
  }
  return out;
}

class RunnerWithFakeWorker : public ::testing::Test {
 protected:
  void SetUp() override {
    write_file_atomic(m_dir.path() + "/config.json", k_config);
    write_file_atomic(m_dir.path() + "/script.json",
                      json{{"by_index", {{"1", "fail"}, {"2", "fault"}, {"4", "hang"}}},
                           {"log", m_dir.path() + "/worker.log"}}
                          .dump());
    ::setenv("LP_FAKE_WORKER_SCRIPT", (m_dir.path() + "/script.json").c_str(), 1);
  }
  void TearDown() override { ::unsetenv("LP_FAKE_WORKER_SCRIPT"); }

  SweepRequest request() const {
    SweepRequest r;
    r.argv = {"loraprobe", "sweep", "--config", m_dir.path() + "/config.json"};
    r.out = m_dir.path() + "/report.json";
    r.worker_exe = std::string(LP_SOURCE_DIR) + "/tests/sweep/fake_worker.py";
    r.case_timeout = std::chrono::seconds(2);
    r.worker_start_timeout = std::chrono::seconds(30);
    r.progress = false;
    r.jobs = 2;
    return r;
  }

  TempDir m_dir{"lp-runner-test-"};
};

TEST_F(RunnerWithFakeWorker, VerdictsControlsFaultTimeoutJournalAndResume) {
  const plan::SweepConfig config = plan::load_config_file(m_dir.path() + "/config.json");
  SweepRequest first = request();
  first.junit = m_dir.path() + "/report.xml";
  EXPECT_EQ(run_sweep(config, first), 1);  // a FAIL (and a fault, a timeout) among the cases
  // --junit: the same run for a CI system (tests/report/validate_junit.py reads it with real parsers).
  const std::string xml = read_file(first.junit, 1 << 20);
  EXPECT_NE(xml.find(R"(<testsuites name="loraprobe sweep" tests="6" failures="1" errors="2")"), std::string::npos)
      << xml;

  // Written compact (the default), read back as records by the converters' reader.
  const json raw = json::parse(read_file(m_dir.path() + "/report.json", 1 << 26));
  EXPECT_EQ(raw["meta"]["detail"], "compact");
  EXPECT_EQ(raw["cases"]["rows"].size(), 6U);
  const json report = formats::read_document(m_dir.path() + "/report.json").json;
  EXPECT_EQ(report["controls"]["valid"], true) << report["controls"].dump();
  EXPECT_EQ(report["controls"]["sets"].size(), 1U);
  EXPECT_EQ(report["controls"]["sets"][0]["positive"]["verdict"], "FAIL");
  EXPECT_EQ(report["controls"]["race"]["ran"], false);
  ASSERT_EQ(report["cases"].size(), 6U);
  std::map<std::size_t, std::string> verdicts;
  for (const json& c : report["cases"]) {
    verdicts[c["index"].get<std::size_t>()] = c["verdict"].get<std::string>();
  }
  // With nvdisasm the block_n 128 SASS shows its hazard: LATENT; without it the case passes, and says so.
  bool have_nvdisasm = true;
  try {
    (void)sass::find_nvdisasm({});
  } catch (const std::exception&) {
    have_nvdisasm = false;
  }
  EXPECT_EQ(verdicts[0], have_nvdisasm ? "LATENT" : "PASS");
  EXPECT_EQ(verdicts[1], "FAIL");
  EXPECT_EQ(verdicts[2], "fault");
  EXPECT_EQ(verdicts[3], "PASS");
  EXPECT_EQ(verdicts[4], "timeout");
  EXPECT_EQ(verdicts[5], "PASS");
  EXPECT_EQ(report["summary"]["exit_code"], 1);
  // A worker was started for the run, and again after the fault and after the timeout.
  const std::vector<std::string> log = lines_of(m_dir.path() + "/worker.log");
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& l) { return l.rfind("start", 0) == 0; }), 3)
      << fmt::format("{}", fmt::join(log, "\n"));
  // Two controls and six cases ran.
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& l) { return l.rfind("run", 0) == 0; }), 8);

  // The journal holds the controls and every case; --resume runs none of them again.
  const report::JournalContents journal = report::read_journal(m_dir.path() + "/report.jsonl");
  EXPECT_EQ(journal.cases.size(), 6U);
  ASSERT_TRUE(journal.controls.has_value());
  fs::remove(m_dir.path() + "/worker.log");
  SweepRequest resume = request();
  resume.out.clear();
  resume.resume = m_dir.path() + "/report.jsonl";
  EXPECT_EQ(run_sweep(config, resume), 1);
  const std::vector<std::string> again = lines_of(m_dir.path() + "/worker.log");
  EXPECT_EQ(std::count_if(again.begin(), again.end(), [](const std::string& l) { return l.rfind("run", 0) == 0; }),
            0);
  const json resumed = formats::read_document(m_dir.path() + "/report.json").json;
  EXPECT_EQ(resumed["summary"], report["summary"]);
  EXPECT_TRUE(fs::exists(m_dir.path() + "/report.json.bak"));
}

}  // namespace
}  // namespace lp::sweep
