// The sweep's parent end to end on a CPU: the runner drives a scripted fake worker
// (tests/sweep/fake_worker.py) through SweepRequest::worker_exe, so verdicts, the
// controls, a fault, a timeout, worker replacement, the journal and --resume are
// checked without a GPU.

#include <gtest/gtest.h>

#include <csignal>

#include <cstdlib>
#include <filesystem>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "support/nvdisasm.hpp"
#include "fake_worker_config.hpp"
#include "plan/config.hpp"
#include "report/journal.hpp"
#include "sass/nvdisasm.hpp"
#include "sweep/entries.hpp"
#include "sweep/runner.hpp"
#include "formats/document.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "util/error.hpp"
#include "tools/tools.hpp"
#include "util/files.hpp"

namespace lp::sweep {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;
using fake_worker::k_config;
using fake_worker::lines_of;

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
    SweepRequest r = fake_worker::request(m_dir.path() + "/report.json");
    r.argv = {"loraprobe", "sweep", "--config", m_dir.path() + "/config.json"};
    r.case_timeout = std::chrono::seconds(2);
    r.worker_start_timeout = std::chrono::seconds(30);
    return r;
  }

  /// The fake-worker config with five block_n and one token count: five images, one case
  /// each, more than a window (k_tasks_in_flight) holds.
  plan::SweepConfig five_images_one_case_each() const {
    std::string text = k_config;
    const std::string block_n = R"("block_n": [128, 32])";
    text.replace(text.find(block_n), block_n.size(), R"("block_n": [16, 32, 64, 128, 256])");
    const std::string tokens = R"("tokens": [16, 32, 64])";
    text.replace(text.find(tokens), tokens.size(), R"("tokens": [64])");
    write_file_atomic(m_dir.path() + "/config.json", text);
    return plan::load_config_file(m_dir.path() + "/config.json");
  }

  TempDir m_dir{"lp-runner-test-"};
};

TEST_F(RunnerWithFakeWorker, VerdictsControlsFaultTimeoutJournalAndResume) {
  const plan::SweepConfig config = plan::load_config_file(m_dir.path() + "/config.json");
  SweepRequest first = request();
  const SweepOutcome outcome = run_sweep(config, first);
  EXPECT_EQ(outcome.exit_code, 1);  // a FAIL (and a fault, a timeout) among the cases
  EXPECT_EQ(outcome.report_path, first.out);
  EXPECT_EQ(outcome.journal_path, first.out.substr(0, first.out.size() - 5) + ".jsonl");
  EXPECT_EQ(outcome.interrupted_by, 0);
  // The same run for a CI system, as sweep --junit writes it from the report
  // (tests/report/validate_junit.py reads it with real parsers).
  const std::string xml = formats::junit_of(formats::read_document(outcome.report_path));
  EXPECT_NE(xml.find(R"(<testsuites name="loraprobe sweep" tests="6" failures="1" errors="2")"), std::string::npos)
      << xml;

  // Written compact (the default), read back as records by the converters' reader.
  const json raw = json::parse(read_file(m_dir.path() + "/report.json", 1 << 26));
  EXPECT_EQ(raw["meta"]["detail"], "compact");
  EXPECT_EQ(raw["cases"]["rows"].size(), 6U);
  const json report = formats::full_json(formats::read_document(m_dir.path() + "/report.json"));
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
  const bool have_nvdisasm = test_support::find_any_nvdisasm().tool.has_value();
  EXPECT_EQ(verdicts[0], have_nvdisasm ? "LATENT" : "PASS");
  // The controls ran before the static inspection was in; their records still carry its part.
  const json& negative = report["controls"]["sets"][0]["negative"];
  if (have_nvdisasm) {
    EXPECT_EQ(negative.value("static_findings", -1), 0) << negative.dump();
  } else {
    EXPECT_EQ(negative.value("reason", "").rfind("SASS not inspected: ", 0), 0U) << negative.dump();
  }
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
  EXPECT_EQ(run_sweep(config, resume).exit_code, 1);
  const std::vector<std::string> again = lines_of(m_dir.path() + "/worker.log");
  EXPECT_EQ(std::count_if(again.begin(), again.end(), [](const std::string& l) { return l.rfind("run", 0) == 0; }),
            0);
  const json resumed = formats::full_json(formats::read_document(m_dir.path() + "/report.json"));
  EXPECT_EQ(resumed["summary"], report["summary"]);
  EXPECT_TRUE(fs::exists(m_dir.path() + "/report.json.bak"));
}

}  // namespace
}  // namespace lp::sweep

namespace lp::sweep {
namespace {

/// Ten cases: block_n 128 and 32, five token counts.
json ten_cases() {
  json config = json::parse(k_config);
  config["axes"]["tokens"] = {16, 32, 64, 128, 256};
  return config;
}

class DevicesWithFakeWorker : public ::testing::Test {
 protected:
  void script(const json& s) {
    json full = s;
    full["log"] = m_dir.path() + "/worker.log";
    write_file_atomic(m_dir.path() + "/script.json", full.dump());
    ::setenv("LP_FAKE_WORKER_SCRIPT", (m_dir.path() + "/script.json").c_str(), 1);
  }
  void TearDown() override { ::unsetenv("LP_FAKE_WORKER_SCRIPT"); }

  json sweep(const std::string& out, const std::string& devices, bool controls = true) {
    write_file_atomic(m_dir.path() + "/config.json", ten_cases().dump());
    SweepRequest r = fake_worker::request(m_dir.path() + "/" + out);
    r.devices = devices;
    r.controls = controls;
    m_exit = run_sweep(plan::load_config_file(m_dir.path() + "/config.json"), r).exit_code;
    return formats::full_json(formats::read_document(r.out));
  }

  TempDir m_dir{"lp-devices-test-"};
  int m_exit = -1;
};

TEST_F(DevicesWithFakeWorker, TwoGpusShareTheQueueAndGiveTheSameReport) {
  script({{"device_count", 2}, {"by_index", {{"3", "fail"}}}});
  const json one = sweep("one.json", "", /*controls=*/false);
  // GPU 0 answers its first case once GPU 1 has run one: both take part, whatever the timing.
  script({{"device_count", 2}, {"by_index", {{"3", "fail"}}}, {"by_device", {{"0", "after_device:1:1"}}}});
  const json two = sweep("two.json", "all", /*controls=*/false);
  ASSERT_EQ(two["cases"].size(), 10U);
  std::map<int, int> per_device;
  for (std::size_t i = 0; i < 10; ++i) {
    EXPECT_EQ(two["cases"][i]["id"], one["cases"][i]["id"]);  // plan order kept
    EXPECT_EQ(two["cases"][i]["verdict"], one["cases"][i]["verdict"]);
    ++per_device[two["cases"][i]["device"].get<int>()];
  }
  EXPECT_EQ(one["cases"][0]["device"], 0);
  EXPECT_EQ(per_device.size(), 2U) << "both GPUs ran cases";
  EXPECT_EQ(per_device[0] + per_device[1], 10);
  EXPECT_EQ(two["summary"], one["summary"]);
  ASSERT_EQ(two["meta"]["devices"].size(), 2U);
  EXPECT_EQ(two["meta"]["devices"][1]["device"], 1);
  EXPECT_TRUE(two["meta"]["devices"][1]["retired"].is_null());
  EXPECT_EQ(two["environment"]["gpus"].size(), 2U);
  EXPECT_FALSE(one["meta"].contains("devices"));
  // The journal holds every case once, whichever GPU finished first.
  std::size_t journaled = 0;
  for (const std::string& line : lines_of(m_dir.path() + "/two.jsonl")) {
    journaled += line.find("\"type\":\"case\"") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(journaled, 10U);
}

TEST_F(DevicesWithFakeWorker, AGpuThatKeepsFaultingLeavesTheRotation) {
  // GPU 0 answers its first case only once GPU 1 has faulted three times.
  script({{"device_count", 2}, {"by_device", {{"1", "fault"}, {"0", "after_device:1:3"}}}});
  const json r = sweep("faulty.json", "0,1", /*controls=*/false);
  ASSERT_EQ(r["cases"].size(), 10U);
  std::size_t faults = 0;
  for (const json& c : r["cases"]) {
    if (c["verdict"] == "fault") {
      ++faults;
      EXPECT_EQ(c["device"], 1);
    } else {
      EXPECT_EQ(c["device"], 0);  // GPU 0 carried on
      EXPECT_EQ(c["verdict"] == "PASS" || c["verdict"] == "LATENT", true) << c.dump();
    }
  }
  EXPECT_EQ(faults, 3U);  // three in a row, then out
  EXPECT_EQ(r["meta"]["devices"][1]["cases"], 3);
  EXPECT_EQ(r["meta"]["devices"][1]["retired"].get<std::string>().rfind("3 faults or timeouts in a row", 0), 0U);
  // Each fault replaced GPU 1's worker: 1 start for GPU 0, 3 for GPU 1.
  std::size_t starts_1 = 0;
  for (const std::string& line : lines_of(m_dir.path() + "/worker.log")) {
    starts_1 += line.rfind("start", 0) == 0 && line.find("device 1") != std::string::npos ? 1 : 0;
  }
  EXPECT_EQ(starts_1, 3U);
}

TEST_F(DevicesWithFakeWorker, WhenEveryGpuLeavesTheRestIsRecordedNotDropped) {
  script({{"device_count", 2}, {"by_device", {{"0", "fault"}, {"1", "fault"}}}});
  const json r = sweep("all-faulty.json", "all", /*controls=*/false);
  ASSERT_EQ(r["cases"].size(), 10U);
  std::size_t incomplete = 0;
  for (const json& c : r["cases"]) {
    if (c["verdict"] == "incomplete") {
      ++incomplete;
      EXPECT_EQ(c["reason"].get<std::string>().rfind("not run: every GPU of --devices left the rotation (GPU 0: 3 "
                                                     "faults or timeouts in a row",
                                                     0),
                0U)
          << c.dump();
    }
  }
  EXPECT_EQ(incomplete, 4U);  // 3 faults on each GPU, the 4 cases left not run
  EXPECT_EQ(m_exit, 1);
}

}  // namespace
}  // namespace lp::sweep

namespace lp::sweep {
namespace {

TEST_F(DevicesWithFakeWorker, RemediesRunAsNeighboursOfEachHazardousCase) {
  // Case 1 (block_n 128, 32 tokens) fails; with --remedies its neighbours run too.
  script({{"by_index", {{"1", "fail"}}}});
  json config = json::parse(k_config);
  config["remedies"] = true;
  write_file_atomic(m_dir.path() + "/remedies.json", config.dump());
  SweepRequest r = fake_worker::request(m_dir.path() + "/remedies-report.json");
  r.controls = false;
  EXPECT_EQ(run_sweep(plan::load_config_file(m_dir.path() + "/remedies.json"), r).exit_code, 1);
  const json report = formats::full_json(formats::read_document(r.out));
  ASSERT_TRUE(report.contains("remedies")) << report.dump().substr(0, 500);
  const json& hazards = report["remedies"]["hazards"];
  // Without nvdisasm only the FAIL is hazardous; with it the block_n 128 row is LATENT too (16 and 64 tokens).
  ASSERT_GE(hazards.size(), 1U);
  const json* fail = nullptr;
  for (const json& h : hazards) {
    if (h["verdict"] == "FAIL") {
      fail = &h;
    }
  }
  ASSERT_NE(fail, nullptr);
  EXPECT_EQ((*fail)["tokens"], 32);
  std::map<std::string, json> by_name;
  for (const json& x : (*fail)["remedies"]) {
    by_name[x["remedy"]] = x;
  }
  ASSERT_TRUE(by_name.count("block_n 32"));
  EXPECT_EQ(by_name["block_n 32"]["in_plan"], true);  // the plan's own block_n 32 case, not run again
  EXPECT_EQ(by_name["block_n 32"]["verdict"], "PASS");
  ASSERT_TRUE(by_name.count("num_stages 1"));
  EXPECT_EQ(by_name["num_stages 1"]["in_plan"], false);
  ASSERT_TRUE(by_name.count("bf16 input"));
  ASSERT_TRUE(by_name.count("Triton 3.9.0"));
  EXPECT_EQ(by_name["Triton 3.9.0"]["verdict"], "PASS");
  EXPECT_EQ(report["remedies"]["notes"][0].get<std::string>().rfind("no ptxas 13.3 or newer in this run", 0), 0U);
  // The remedies are not cases of the plan: the summary counts the plan's six.
  std::size_t counted = 0;
  for (const auto& [verdict, n] : report["summary"]["counts"].items()) {
    counted += n.get<std::size_t>();
  }
  EXPECT_EQ(counted, 6U);
  // Every format says it: the hazardous case's JUnit testcase carries its remedies.
  const std::string xml = formats::junit_of(formats::read_document(r.out));
  EXPECT_NE(xml.find("<system-out>remedies measured in this run:\n  block_n 32: PASS, static clean, "), std::string::npos)
      << xml;
  // The remedies are journaled like cases: --resume measures none of them again.
  const std::string journal = r.out.substr(0, r.out.size() - 5) + ".jsonl";
  std::size_t remedy_lines = 0;
  for (const std::string& line : lines_of(journal)) {
    remedy_lines += line.rfind(R"({"record":)", 0) == 0 && line.find(R"("type":"remedy")") != std::string::npos ? 1 : 0;
  }
  EXPECT_GE(remedy_lines, 3U);  // num_stages 1, bf16 input, Triton 3.9.0 of the FAIL at least
  const auto runs = [&] {
    std::size_t n = 0;
    for (const std::string& line : lines_of(m_dir.path() + "/worker.log")) {
      n += line.rfind("run ", 0) == 0 ? 1 : 0;
    }
    return n;
  };
  const std::size_t before = runs();
  SweepRequest resumed = r;
  resumed.resume = journal;
  EXPECT_EQ(run_sweep(plan::load_config_file(m_dir.path() + "/remedies.json"), resumed).exit_code, 1);
  EXPECT_EQ(runs(), before) << "a resumed sweep ran a case or a remedy again";
  const json again = formats::full_json(formats::read_document(r.out));
  EXPECT_EQ(again["remedies"]["hazards"], report["remedies"]["hazards"]);
}

// A load is sent only while nothing is queued on the worker, so it drains the GPU:
// the cases' images all go with the worker's first load for them, not window by window.
TEST_F(RunnerWithFakeWorker, TheCasesImagesGoWithOneLoad) {
  write_file_atomic(m_dir.path() + "/script.json", json{{"log", m_dir.path() + "/worker.log"}}.dump());
  const plan::SweepConfig config = five_images_one_case_each();
  SweepRequest r = request();
  r.controls = false;
  EXPECT_EQ(run_sweep(config, r).exit_code, 0);
  std::vector<std::string> loads;
  for (const std::string& line : lines_of(m_dir.path() + "/worker.log")) {
    if (line.rfind("load ", 0) == 0) {
      loads.push_back(line);
    }
  }
  ASSERT_EQ(loads.size(), 1U) << fmt::format("{}", fmt::join(loads, "\n"));
  for (const char* tile : {"m64n16k32", "m64n32k32", "m64n64k32", "m64n128k32", "m64n256k32"}) {
    EXPECT_NE(loads[0].find(tile), std::string::npos) << tile << ": " << loads[0];
  }
}

// The preload must not spread one image's fault: an image whose load kills the worker
// costs only the cases that use it (a worker started after a fault loads window by
// window, and a load that carried other cases' images and killed its worker is made
// again for the case's own). Found by review: every restarted worker preloaded it again,
// and all five cases were incomplete.
TEST_F(RunnerWithFakeWorker, AnImageWhoseLoadKillsTheWorkerCostsOnlyItsCases) {
  write_file_atomic(m_dir.path() + "/script.json",
                    json{{"log", m_dir.path() + "/worker.log"}, {"die_loading", "m64n256k32"}}.dump());
  const plan::SweepConfig config = five_images_one_case_each();
  SweepRequest r = request();
  r.controls = false;
  (void)run_sweep(config, r);
  const json report = formats::full_json(formats::read_document(m_dir.path() + "/report.json"));
  ASSERT_EQ(report["cases"].size(), 5U);
  for (const json& c : report["cases"]) {
    const bool dies = c["axes"]["block_n"] == 256;
    EXPECT_EQ(c["verdict"] == "incomplete", dies) << c.dump();  // PASS or LATENT for the others
  }
}

TEST_F(RunnerWithFakeWorker, DualStreamCasesAskForProgrammaticDependentLaunchOfTheirGdcExpand) {
  // vLLM's dual-stream chain (--vllm-dual-stream): the job carries the launch attribute,
  // with the USE_GDC expand after the slow-tailed producer; the test hook swaps in the
  // expand without its wait and keeps the attribute.
  write_file_atomic(m_dir.path() + "/dual.json", R"({
    "name": "dual-stream",
    "axes": {"triton": ["3.6.0"], "op": ["lora_linear"], "weight_dtype": ["bf16"], "num_slices": [1],
             "hidden": [4096], "rank": [64], "num_loras": [1], "add_inputs": [false], "gdc": [true],
             "block_m": [64], "block_n": [128], "block_k": [32], "num_warps": [4], "num_stages": [2],
             "compiler": ["prebuilt"], "tokens": [256]},
    "repeats": 1, "seed": 48590})");
  // Every job passes: the controls come right after the one case.
  write_file_atomic(m_dir.path() + "/script.json", json{{"log", m_dir.path() + "/worker.log"}}.dump());
  SweepRequest r = request();
  r.out = m_dir.path() + "/dual-report.json";
  r.test_hooks[0] = std::string(k_hook_pdl_no_wait);
  run_sweep(plan::load_config_file(m_dir.path() + "/dual.json"), r);
  const json report = formats::full_json(formats::read_document(r.out));
  std::vector<std::string> runs;
  for (const std::string& line : lines_of(m_dir.path() + "/worker.log")) {
    if (line.rfind("run 0 ", 0) == 0) {
      runs.push_back(line);
    }
  }
  ASSERT_EQ(runs.size(), 1U) << report["cases"].dump();
  EXPECT_EQ(runs[0], "run 0 pass pdl expand=expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1 device 0");
  const json& c = report["cases"][0];
  EXPECT_EQ(c["axes"]["gdc"], true) << c.dump();
  EXPECT_NE(c["variant"].get<std::string>().find("shrink-bf16-m32n16k32-w4s2-sk8-g8-evenk-s1-gdc-tail100us+"),
            std::string::npos)
      << c.dump();
  EXPECT_NE(c["variant"].get<std::string>().find("(launched with PDL: no wait)"), std::string::npos) << c.dump();
  EXPECT_NE(c["reason"].get<std::string>().find("dual-stream chain: the expand launched with programmatic dependent "
                                                "launch after a shrink whose tail spins 100 us"),
            std::string::npos)
      << c.dump();

  // Without the hook: the gdc expand itself.
  SweepRequest plain = request();
  plain.out = m_dir.path() + "/dual-plain.json";
  std::filesystem::remove(m_dir.path() + "/worker.log");
  run_sweep(plan::load_config_file(m_dir.path() + "/dual.json"), plain);
  runs.clear();
  for (const std::string& line : lines_of(m_dir.path() + "/worker.log")) {
    if (line.rfind("run 0 ", 0) == 0) {
      runs.push_back(line);
    }
  }
  ASSERT_EQ(runs.size(), 1U);
  EXPECT_EQ(runs[0], "run 0 pass pdl expand=expand-fp32-bf16-m64n128k32-w4s2-evenk-noadd-s1-gdc device 0");

  // A failing chain's remedies include the path without dual-stream LoRA, measured.
  write_file_atomic(m_dir.path() + "/script.json",
                    json{{"by_index", {{"0", "fail"}}}, {"log", m_dir.path() + "/worker.log"}}.dump());
  json config = json::parse(read_file(m_dir.path() + "/dual.json", 1 << 20));
  config["remedies"] = true;
  write_file_atomic(m_dir.path() + "/dual-remedies.json", config.dump());
  SweepRequest remedied = request();
  remedied.out = m_dir.path() + "/dual-remedies-report.json";
  remedied.controls = false;
  run_sweep(plan::load_config_file(m_dir.path() + "/dual-remedies.json"), remedied);
  const json with_remedies = formats::full_json(formats::read_document(remedied.out));
  ASSERT_EQ(with_remedies["remedies"]["hazards"].size(), 1U) << with_remedies["remedies"].dump();
  std::map<std::string, json> by_name;
  for (const json& x : with_remedies["remedies"]["hazards"][0]["remedies"]) {
    by_name[x["remedy"]] = x;
  }
  ASSERT_TRUE(by_name.count("gdc off")) << with_remedies["remedies"].dump();
  // It ran (the fake worker passes it); with nvdisasm its SASS has the block_n 128 wgmma
  // hazard, which no dual-stream switch removes: LATENT, else PASS.
  EXPECT_EQ(by_name["gdc off"]["in_plan"], false);
  EXPECT_NE(by_name["gdc off"]["verdict"], "FAIL");
  EXPECT_TRUE(by_name.count("num_stages 1"));
}

TEST_F(RunnerWithFakeWorker, AmplifiedCasesAreJudgedOnTheirAmplifiedSassBesideTheAmplifiedControls) {
  LP_REQUIRE_NVDISASM(nvdisasm);
  // Plan order (amplify after block_n): 0 block_n 128 amplified by 2 pairs (the fake
  // worker makes it wrong), 1 block_n 128 unamplified, 2 block_n 32 amplified, 3 block_n 32.
  json config = json::parse(k_config);
  config["axes"]["tokens"] = {1024};
  config["axes"]["amplify"] = {2, 0};
  write_file_atomic(m_dir.path() + "/amplified.json", config.dump());
  write_file_atomic(m_dir.path() + "/script.json",
                    json{{"by_index", {{"0", "fail"}}}, {"log", m_dir.path() + "/worker.log"}}.dump());
  SweepRequest r = request();
  EXPECT_EQ(run_sweep(plan::load_config_file(m_dir.path() + "/amplified.json"), r).exit_code, 1);
  const json report = formats::full_json(formats::read_document(r.out));
  ASSERT_EQ(report["cases"].size(), 4U);
  const json& hazard = report["cases"][0];
  EXPECT_EQ(hazard["axes"]["amplify"], 2);
  EXPECT_EQ(hazard["axes"]["block_n"], 128);
  EXPECT_EQ(hazard["verdict"], "FAIL");
  EXPECT_EQ(hazard["reason"].get<std::string>().rfind("under amplification (2 queued wgmma pairs): 2 of 2 runs wrong", 0),
            0U)
      << hazard.dump();
  EXPECT_EQ(hazard["amplification"]["sites"], 2);
  EXPECT_EQ(hazard["amplification"]["pending_sites"], 2);
  EXPECT_GT(hazard["amplification"]["unamplified_findings"].get<int>(), 0);
  EXPECT_GT(hazard["static_findings"].get<int>(), 0);  // the hazard survived the pairs
  EXPECT_TRUE(hazard["amplification"]["void_reason"].is_null());
  EXPECT_EQ(hazard["attribution"], "ptx");
  const json& workaround = report["cases"][2];
  EXPECT_EQ(workaround["axes"]["block_n"], 32);
  EXPECT_EQ(workaround["verdict"], "PASS") << workaround.dump();
  EXPECT_EQ(workaround["static_findings"], 0);  // ptxas serialises block_n 32, amplified or not
  // The unamplified cases keep the ids (and axes) they always had: no amplify key.
  EXPECT_FALSE(report["cases"][1]["axes"].contains("amplify"));
  EXPECT_EQ(report["cases"][1]["id"], "a45a5419f480");  // as in every report before the axis existed
  EXPECT_EQ(report["cases"][1]["verdict"], "LATENT");
  EXPECT_FALSE(report["cases"][1].contains("amplification"));
  // The amplified controls ran: block_n 32 of the run's set and Triton 3.9.0's default.
  ASSERT_TRUE(report["controls"]["valid"].get<bool>()) << report["controls"].dump();
  ASSERT_EQ(report["controls"]["amplified"].size(), 2U) << report["controls"].dump();
  EXPECT_EQ(report["controls"]["amplified"][0]["role"], "block_n_32");
  EXPECT_EQ(report["controls"]["amplified"][1]["role"], "fixed_default");
  EXPECT_EQ(report["controls"]["amplified"][1]["triton"], "3.9.0");
  // Without Triton 3.9.0's bundled ptxas (scripts/install_tools.sh triton-ptxas) the fixed
  // control is compiled by the newest installed ptxas >= 13.4, and a note says so.
  const json& fixed_axes = report["controls"]["amplified"][1]["record"]["axes"];
  if (fixed_axes.value("compiler", "") != "prebuilt") {
    ASSERT_EQ(report["controls"]["amplified_notes"].size(), 1U) << report["controls"].dump();
    EXPECT_EQ(report["controls"]["amplified_notes"][0].get<std::string>().rfind(
                  "the amplified fixed_default control of Triton 3.9.0 is compiled by ptxas 13.", 0),
              0U);
  } else {
    EXPECT_TRUE(report["controls"]["amplified_notes"].empty());
  }
  for (const json& a : report["controls"]["amplified"]) {
    EXPECT_EQ(a["record"]["verdict"], "PASS") << a.dump();
    EXPECT_EQ(a["record"]["static_findings"], 0) << a.dump();
    EXPECT_EQ(a["record"]["amplification"]["sites"], 2) << a.dump();
  }
  // The headline never says a bare FAIL for an amplified one.
  const std::string md = formats::markdown_of(formats::read_document(r.out));
  EXPECT_EQ(md.rfind("# loraprobe: FAIL under amplification (2 queued wgmma pairs): wrong numbers in 1 case(s).", 0), 0U)
      << md.substr(0, 300);
}

TEST_F(RunnerWithFakeWorker, APairingThatCannotCompileIsIncompatibleAndAllOfThemExitThree) {
  // Triton 3.9.0's PTX is .version 9.4; the toolkit's ptxas 13.0 reads up to 9.0.
  if (!tools::toolkit_root()) {
    GTEST_SKIP() << "skipped: no CUDA toolkit ptxas";
  }
  auto config_with = [&](const char* compilers) {
    write_file_atomic(m_dir.path() + "/incompatible.json",
                      fmt::format(R"({{"name": "x", "axes": {{"triton": ["3.9.0"], "op": ["expand"],
                        "input_dtype": ["bf16"], "weight_dtype": ["bf16"], "num_slices": [1], "hidden": [4096],
                        "rank": [64], "add_inputs": [true], "block_m": [64], "block_n": [32], "block_k": [32],
                        "num_warps": [4], "num_stages": [2], "compiler": {}, "tokens": [16, 32]}}}})",
                                  compilers));
    return plan::load_config_file(m_dir.path() + "/incompatible.json");
  };
  write_file_atomic(m_dir.path() + "/clean.json", json{{"by_index", json::object()}}.dump());  // every run clean
  ::setenv("LP_FAKE_WORKER_SCRIPT", (m_dir.path() + "/clean.json").c_str(), 1);
  SweepRequest r = request();
  r.force = true;
  const SweepOutcome none = run_sweep(config_with(R"(["ptxas=toolkit"])"), r);
  EXPECT_EQ(none.exit_code, 3);  // nothing could be judged: a gate must not pass on it
  json report = formats::full_json(formats::read_document(none.report_path));
  EXPECT_EQ(report["summary"]["outcome"], "nothing_compatible");
  EXPECT_EQ(report["summary"]["counts"], json({{"incompatible", 2}}));
  EXPECT_TRUE(report["summary"]["first_failure"].is_null());
  const std::string reason = report["cases"][0]["reason"];
  EXPECT_NE(reason.find(": the PTX is .version 9.4; ptxas 13.0"), std::string::npos) << reason;
  EXPECT_NE(reason.find("(a pairing that cannot compile, not a failure)"), std::string::npos) << reason;
  // Beside a pairing that compiles, it is counted and is no failure.
  const SweepOutcome mixed = run_sweep(config_with(R"(["prebuilt", "ptxas=toolkit"])"), r);
  EXPECT_EQ(mixed.exit_code, 0);
  report = formats::full_json(formats::read_document(mixed.report_path));
  EXPECT_EQ(report["summary"]["outcome"], "clean");
  EXPECT_EQ(report["summary"]["counts"]["incompatible"], 2);
  EXPECT_EQ(report["summary"]["counts"]["PASS"], 2);
}

TEST_F(RunnerWithFakeWorker, WhatALibraryPrintsOnTheWorkersStdoutIsSkippedAndShownEscaped) {
  // The parent shares the worker's stdout with every library and every kernel's printf.
  // A line that is no message is skipped and shown on stderr, its controls escaped (it
  // once reached the terminal raw: an OSC sequence retitled the window); a line nested
  // deeper than any message is one of those, not built.
  write_file_atomic(m_dir.path() + "/script.json", json{{"by_index", {{"0", "chatter"}}}}.dump());
  const plan::SweepConfig config = plan::load_config_file(m_dir.path() + "/config.json");
  ::testing::internal::CaptureStderr();
  const SweepOutcome outcome = run_sweep(config, request());
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(outcome.exit_code, 0) << err;
  EXPECT_NE(err.find(": \\x1b]0;owned\\x07 cuBLAS says hi\n"), std::string::npos) << err;
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << "a raw escape reached stderr";
  EXPECT_NE(err.find(": " + std::string(300, '[') + "\n"), std::string::npos) << "the deep line, cut to 300 bytes";
  const json report = formats::full_json(formats::read_document(outcome.report_path));
  EXPECT_EQ(report["cases"].size(), 6U);
  EXPECT_EQ(report["summary"]["counts"].value("FAIL", 0), 0) << report["summary"].dump();
}

TEST_F(RunnerWithFakeWorker, AWorkerStoppedByCtrlCIsAnInterruptNotAFault) {
  // A terminal's Ctrl-C (and `timeout -s INT`) signals the process group: the worker dies
  // of SIGINT in the middle of case 3. That case did not fault: it is not journaled, the
  // sweep stops as interrupted, and --resume runs it (found on the H200: it was recorded
  // as a fault, and the resumed report said exit 1).
  write_file_atomic(m_dir.path() + "/script.json",
                    json{{"by_index", {{"3", "sigint"}}}, {"log", m_dir.path() + "/worker.log"}}.dump());
  const plan::SweepConfig config = plan::load_config_file(m_dir.path() + "/config.json");
  const SweepOutcome stopped = run_sweep(config, request());
  EXPECT_EQ(stopped.interrupted_by, SIGINT);
  const json partial = formats::full_json(formats::read_document(stopped.report_path));
  EXPECT_EQ(partial["meta"]["interrupted"].get<std::string>().rfind("SIGINT after ", 0), 0U) << partial["meta"].dump();
  EXPECT_EQ(partial["summary"]["outcome"], "interrupted") << "a partial report says so in its outcome too";
  EXPECT_EQ(formats::as_report(formats::read_document(stopped.report_path)).to_json()["summary"]["outcome"],
            "interrupted")
      << "and keeps saying it when written again";
  const report::JournalContents journal = report::read_journal(stopped.journal_path);
  for (const auto& [id, record] : journal.cases) {
    EXPECT_NE(record.verdict, report::Verdict::fault) << id;
    EXPECT_NE(record.index, 3U) << "the interrupted case was journaled";
  }
  write_file_atomic(m_dir.path() + "/script.json", json{{"log", m_dir.path() + "/worker.log"}}.dump());
  SweepRequest resume = request();
  resume.resume = stopped.journal_path;
  const SweepOutcome done = run_sweep(config, resume);
  EXPECT_EQ(done.interrupted_by, 0);
  EXPECT_EQ(done.exit_code, 0);
  const json report = formats::full_json(formats::read_document(done.report_path));
  EXPECT_EQ(report["cases"].size(), 6U);
  // As a run without the signal: block_n 128 LATENT (its static hazard), block_n 32 PASS.
  EXPECT_EQ(report["summary"]["counts"], json({{"LATENT", 3}, {"PASS", 3}})) << report["summary"].dump();
}

TEST_F(RunnerWithFakeWorker, ControlsThatMisbehaveStopTheSweepBeforeAnyCase) {
  // The negative control (index 7, after the six cases and the positive control) fails.
  write_file_atomic(m_dir.path() + "/script.json",
                    json{{"by_index", {{"7", "fail"}}}, {"log", m_dir.path() + "/worker.log"}}.dump());
  const plan::SweepConfig config = plan::load_config_file(m_dir.path() + "/config.json");
  EXPECT_EQ(run_sweep(config, request()).exit_code, 3);
  const json report = formats::full_json(formats::read_document(m_dir.path() + "/report.json"));
  EXPECT_EQ(report["controls"]["valid"], false);
  EXPECT_NE(report["controls"].value("reason", "").find("the negative control"), std::string::npos)
      << report["controls"].dump();
  EXPECT_EQ(report["controls"]["sets"][0]["negative"]["verdict"], "FAIL");
  EXPECT_EQ(report["meta"]["interrupted"], "the controls did not behave; no case was run");
  EXPECT_EQ(report["cases"].size(), 0U);
  const std::vector<std::string> log = lines_of(m_dir.path() + "/worker.log");
  EXPECT_EQ(std::count_if(log.begin(), log.end(), [](const std::string& l) { return l.rfind("run", 0) == 0; }), 2)
      << fmt::format("{}", fmt::join(log, "\n"));
  const report::JournalContents journal = report::read_journal(m_dir.path() + "/report.jsonl");
  ASSERT_TRUE(journal.controls.has_value());
  EXPECT_EQ(journal.controls->valid, false);
  EXPECT_TRUE(journal.cases.empty());
}

}  // namespace
}  // namespace lp::sweep
