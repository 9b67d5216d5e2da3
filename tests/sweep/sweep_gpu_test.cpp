// The sweep end to end on a Hopper GPU, through the loraprobe binary: verdicts,
// controls, the comparison's margins, faults, timeouts, kill -9 and --resume.

#include <gtest/gtest.h>

#include <signal.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "support/gpu.hpp"
#include "cuda/driver.hpp"
#include "formats/document.hpp"
#include "util/child_process.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

class SweepOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    LP_REQUIRE_GPU();
    m_dir = fs::temp_directory_path() / fmt::format("lp-sweep-gpu-{}", ::testing::UnitTest::GetInstance()->random_seed());
    fs::create_directories(m_dir);
  }

  /// Runs loraprobe sweep with `args` plus --out <dir>/<name>.json; returns the result
  /// and the report (null when none was written).
  std::pair<ProcessResult, json> sweep(const std::string& name, std::vector<std::string> args) {
    const std::string out = (m_dir / (name + ".json")).string();
    args.insert(args.begin(), {LP_LORAPROBE, "sweep", "--quiet", "--out", out});
    ProcessOptions options;
    options.timeout = std::chrono::minutes(8);
    const ProcessResult r = run_process(args, options);
    fmt::print("{}", r.out);
    json report;
    if (fs::exists(out)) {
      report = formats::full_json(formats::read_document(out));
    }
    return {r, report};
  }

  static const json& case_with(const json& report, std::int64_t tokens, int block_n,
                               const std::string& triton = "3.6.0") {
    for (const json& c : report["cases"]) {
      if (c["axes"]["tokens"] == tokens && c["axes"]["block_n"] == block_n && c["axes"]["triton"] == triton) {
        return c;
      }
    }
    throw std::runtime_error(fmt::format("no case with {} tokens, block_n {}, Triton {}", tokens, block_n, triton));
  }

  fs::path m_dir;
};

const std::string k_seed_config = LP_SOURCE_DIR "/configs/seed-48590.json";

TEST_F(SweepOnGpu, SeedConfigIsLatentForBlockN128AndPassForBlockN32WithMargin) {
  const auto [r, report] = sweep("seed", {"--config", k_seed_config, "--tokens", "256,2048", "--triton", "3.6.0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // LATENT does not fail without --fail-on latent
  ASSERT_TRUE(report["controls"]["valid"].get<bool>()) << report["controls"].dump();
  // The positive control fails with NaN or Inf counted; the negative control passes.
  ASSERT_EQ(report["controls"]["sets"].size(), 1U);
  const json& positive = report["controls"]["sets"][0]["positive"];
  EXPECT_EQ(positive["verdict"], "FAIL");
  EXPECT_GT(positive["metrics"]["nan"].get<std::uint64_t>() + positive["metrics"]["inf"].get<std::uint64_t>(), 0U)
      << positive.dump();
  EXPECT_EQ(report["controls"]["sets"][0]["negative"]["verdict"], "PASS");
  // The race control: on the H200 every tile of every launch read the overwritten A
  // (docs/race-control.md); it is informational and never invalidates the run.
  const json& race = report["controls"]["race"];
  EXPECT_EQ(race["shows"], true) << race.dump();
  EXPECT_GT(race["static_findings"].get<int>(), 0) << race.dump();
  EXPECT_EQ(race["result"]["unwritten"], 0) << race.dump();
  for (std::int64_t tokens : {256, 2048}) {
    const json& hazard = case_with(report, tokens, 128);
    EXPECT_EQ(hazard["verdict"], "LATENT") << hazard.dump();
    EXPECT_GT(hazard["static_findings"].get<int>(), 0);
    const json& workaround = case_with(report, tokens, 32);
    EXPECT_EQ(workaround["verdict"], "PASS") << workaround.dump();
    EXPECT_EQ(workaround["static_findings"], 0);
    for (const json* c : {&hazard, &workaround}) {
      // Clean numbers with margin: the largest deviation is at most half the tolerance.
      EXPECT_LE((*c)["metrics"]["worst_dev_over_tolerance"].get<double>(), 0.5) << c->dump();
      EXPECT_EQ((*c)["metrics"]["nan"], 0);
      EXPECT_EQ((*c)["failed_runs"], 0);
      EXPECT_EQ((*c)["runs"], 30);  // configs/seed-48590.json repeats
    }
  }
  EXPECT_EQ(report["summary"]["first_latent"]["axes"]["block_n"], 128);
  const auto [gate, gated] = sweep("seed-gate", {"--config", k_seed_config, "--tokens", "256", "--fail-on", "latent",
                                                 "--triton", "3.6.0"});
  EXPECT_EQ(gate.exit_code, 1) << gate.err;
  EXPECT_EQ(gated["summary"]["first_failure"]["verdict"], "LATENT");
}

TEST_F(SweepOnGpu, EachTritonSetGivesTheVerdictTheMatrixPredicts) {
  // Issue 11: 3.6/3.7 PTX writes the pending registers (LATENT whatever compiles it);
  // 3.8's PTX is clean but its bundled CUDA 12.9 ptxas and the toolkit's 13.0 fold the
  // copies (LATENT); 3.9 with its bundled 13.4 ptxas is clean (PASS), and its PTX
  // .version 9.4 is more than ptxas 13.0 takes (incompatible, with both versions: no stack pairs them).
  const auto [r, report] = sweep("per-triton", {"--config", k_seed_config, "--tokens", "2048", "--repeats", "3",
                                                "--compiler", "prebuilt", "--compiler", "ptxas=toolkit"});
  ASSERT_TRUE(report["controls"]["valid"].get<bool>()) << report["controls"].dump();
  ASSERT_EQ(report["controls"]["sets"].size(), 4U);
  for (const json& set : report["controls"]["sets"]) {
    EXPECT_TRUE(set["valid"].get<bool>()) << set.dump();
  }
  auto verdict = [&](const std::string& triton, const std::string& compiler, int block_n) {
    for (const json& c : report["cases"]) {
      if (c["axes"]["triton"] == triton && c["axes"]["compiler"] == compiler && c["axes"]["block_n"] == block_n) {
        return c;
      }
    }
    throw std::runtime_error("no such case");
  };
  for (const char* triton : {"3.6.0", "3.7.1"}) {
    for (const char* compiler : {"prebuilt", "ptxas=toolkit"}) {
      const json c = verdict(triton, compiler, 128);
      EXPECT_EQ(c["verdict"], "LATENT") << c.dump();
      EXPECT_EQ(c["attribution"], "ptx") << c.dump();
    }
  }
  for (const char* compiler : {"prebuilt", "ptxas=toolkit"}) {
    const json c = verdict("3.8.0", compiler, 128);
    EXPECT_EQ(c["verdict"], "LATENT") << c.dump();
    EXPECT_EQ(c["attribution"], "ptxas") << c.dump();
  }
  EXPECT_EQ(verdict("3.9.0", "prebuilt", 128)["verdict"], "PASS");
  const json too_new = verdict("3.9.0", "ptxas=toolkit", 128);
  EXPECT_EQ(too_new["verdict"], "incompatible") << too_new.dump();
  EXPECT_NE(too_new["reason"].get<std::string>().find("9.4"), std::string::npos) << too_new.dump();
  for (const char* triton : {"3.6.0", "3.7.1", "3.8.0", "3.9.0"}) {
    EXPECT_EQ(verdict(triton, "prebuilt", 32)["verdict"], "PASS") << triton;
  }
}

TEST_F(SweepOnGpu, AmplifiedSeedCaseFailsWithTheBugsNanAndAmplifiedBlockN32Passes) {
  // docs/amplify.md: two dependent wgmma pairs queued before each register-A wgmma make
  // the H200 read the pending A registers late, as an H20 does: the seed configuration
  // gives the bug report's NaN and values near 1e37; block_n 32 (ptxas serialises it)
  // stays exact under the same amplification.
  const auto [r, report] = sweep("amplified", {"--config", k_seed_config, "--tokens", "1024", "--triton", "3.6.0",
                                               "--amplify", "2", "--repeats", "5", "--no-remedies"});
  EXPECT_EQ(r.exit_code, 1) << r.err;  // FAIL
  ASSERT_TRUE(report["controls"]["valid"].get<bool>()) << report["controls"].dump();
  // The amplified controls: block_n 32 of the run's set and Triton 3.9.0's default, both PASS.
  ASSERT_EQ(report["controls"]["amplified"].size(), 2U) << report["controls"].dump();
  for (const json& a : report["controls"]["amplified"]) {
    EXPECT_TRUE(a["valid"].get<bool>()) << a.dump();
    EXPECT_EQ(a["record"]["verdict"], "PASS") << a.dump();
    EXPECT_EQ(a["amplify"], 2);
  }
  const json& hazard = case_with(report, 1024, 128);
  EXPECT_EQ(hazard["verdict"], "FAIL") << hazard.dump();
  EXPECT_EQ(hazard["reason"].get<std::string>().rfind("under amplification (2 queued wgmma pairs): ", 0), 0U)
      << hazard.dump();
  EXPECT_EQ(hazard["axes"]["amplify"], 2);
  EXPECT_EQ(hazard["amplification"]["amplify"], 2);
  EXPECT_EQ(hazard["amplification"]["sites"], 2);
  EXPECT_GT(hazard["amplification"]["unamplified_findings"].get<int>(), 0);
  EXPECT_GT(hazard["static_findings"].get<int>(), 0);  // the findings survived the amplification
  EXPECT_TRUE(hazard["amplification"]["void_reason"].is_null()) << hazard.dump();
  // The symptom of the report: NaN or values above 1e30, not only plain mismatches.
  const json& m = hazard["metrics"];
  EXPECT_GT(m["nan"].get<std::uint64_t>() + m["huge"].get<std::uint64_t>(), 0U) << m.dump();
  const json& workaround = case_with(report, 1024, 32);
  EXPECT_EQ(workaround["verdict"], "PASS") << workaround.dump();
  EXPECT_EQ(workaround["amplification"]["sites"], 2);
  // The pairs' rounding stays inside today's tolerance with the margin clean cases keep.
  EXPECT_LE(workaround["metrics"]["worst_dev_over_tolerance"].get<double>(), 0.5) << workaround.dump();
  EXPECT_EQ(report["summary"]["first_failure"]["id"], hazard["id"]);
}

TEST_F(SweepOnGpu, UnwrittenOutputIsCaught) {
  // bf16 expand without ADD_INPUTS, so the output is poisoned and unwritten elements count.
  const auto [r, report] = sweep("skip", {"--input-dtype", "bf16", "--op", "expand", "--ranks", "64", "--block-n", "vllm",
                                          "--num-stages", "vllm", "--add-inputs", "false", "--tokens", "256",
                                          "--no-controls", "--test-hook", "0=skip_tile", "--triton", "3.6.0"});
  ASSERT_EQ(report["cases"].size(), 1U);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const json& c = report["cases"][0];
  EXPECT_EQ(c["verdict"], "FAIL") << c.dump();
  EXPECT_GT(c["metrics"]["unwritten"].get<std::uint64_t>(), 0U);
  EXPECT_GE(c["metrics"]["failing_tiles"].get<std::uint64_t>(), 1U);
}

TEST_F(SweepOnGpu, TheDualStreamChainWithoutItsWaitReadsTheUnwrittenBufferAndOneStageIsRight) {
  // vLLM's dual-stream chain: the USE_GDC expand launched with programmatic dependent
  // launch after a shrink whose tail spins 100 us between launch_dependents and its
  // (split-K, atomic) store into a zeroed buffer. Without the wait (the test hook runs
  // the gdc-off expand with the same launch) the expand reads the buffer unwritten and
  // its output is wrong; at 1 stage every load follows the wait and the chain is right.
  const std::vector<std::string> dual = {"--vllm-dual-stream", "--weight-dtype", "bf16", "--rank", "64", "--hidden",
                                         "4096", "--num-slices", "1", "--num-loras", "1", "--tokens", "256",
                                         "--block-n", "128", "--block-k", "32", "--no-controls", "--triton",
                                         "3.6.0"};
  std::vector<std::string> args = dual;
  args.insert(args.end(), {"--num-stages", "2", "--test-hook", "0=pdl_no_wait"});
  const auto [r, report] = sweep("pdl-no-wait", args);
  ASSERT_EQ(report["cases"].size(), 1U) << r.err;
  const json& c = report["cases"][0];
  EXPECT_EQ(c["verdict"], "FAIL") << c.dump();
  EXPECT_NE(c["reason"].get<std::string>().find("dual-stream chain"), std::string::npos) << c.dump();
  EXPECT_NE(c["variant"].get<std::string>().find("(launched with PDL: no wait)"), std::string::npos) << c.dump();

  args = dual;
  args.insert(args.end(), {"--num-stages", "1"});
  const auto [r1, one_stage] = sweep("pdl-one-stage", args);
  ASSERT_EQ(one_stage["cases"].size(), 1U) << r1.err;
  EXPECT_EQ(one_stage["cases"][0]["verdict"], "PASS") << one_stage["cases"][0].dump();
  EXPECT_EQ(one_stage["cases"][0]["static_findings"], 0) << one_stage["cases"][0].dump();
}

/// Verdict and max deviation of every case, by id.
std::map<std::string, std::pair<std::string, json>> outcomes(const json& report) {
  std::map<std::string, std::pair<std::string, json>> out;
  for (const json& c : report["cases"]) {
    out[c["id"]] = {c["verdict"], c["metrics"].is_null() ? json() : c["metrics"]["max_abs_dev"]};
  }
  return out;
}

/// Five bf16 expands at vLLM's default config: every axis pinned, whatever the default config holds.
const std::vector<std::string> k_small = {"--op", "expand", "--input-dtype", "bf16", "--weight-dtype", "bf16",
                                          "--ranks", "64", "--hidden", "4096", "--block-n", "vllm", "--num-stages",
                                          "vllm", "--add-inputs", "true", "--tokens", "128..2048*2", "--no-controls",
                                          "--triton", "3.6.0"};

TEST_F(SweepOnGpu, FaultAndTimeoutAreRecordedAndTheOtherCasesMatchACleanRun) {
  const auto [clean_r, clean] = sweep("clean", k_small);
  ASSERT_EQ(clean_r.exit_code, 0) << clean_r.err;
  std::vector<std::string> args = k_small;
  for (const char* a : {"--test-hook", "1=trap", "--test-hook", "2=oob_write", "--test-hook", "3=spin",
                        "--case-timeout", "20"}) {
    args.emplace_back(a);
  }
  const auto [r, report] = sweep("faults", args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_EQ(report["cases"].size(), 5U);
  const json& trap = report["cases"][1];
  EXPECT_EQ(trap["verdict"], "fault") << trap.dump();
  EXPECT_NE(trap["reason"].get<std::string>().find("fault: CUDA_ERROR_"), std::string::npos) << trap.dump();
  const json& oob = report["cases"][2];
  EXPECT_EQ(oob["verdict"], "fault") << oob.dump();
  EXPECT_NE(oob["reason"].get<std::string>().find("CUDA_ERROR_ILLEGAL_ADDRESS"), std::string::npos) << oob.dump();
  EXPECT_EQ(report["cases"][3]["verdict"], "timeout") << report["cases"][3].dump();
  // Case 0 was on the GPU when the trap behind it fired (the worker queues the next
  // case before it answers one): it keeps its own verdict and metrics.
  EXPECT_EQ(report["cases"][0]["runs"], clean["cases"][0]["runs"]) << report["cases"][0].dump();
  const auto expected = outcomes(clean);
  const auto got = outcomes(report);
  for (std::size_t i : {0U, 4U}) {
    const std::string id = report["cases"][i]["id"];
    EXPECT_EQ(got.at(id), expected.at(id)) << "case " << i;
  }
}

TEST_F(SweepOnGpu, KillNineThenResumeGivesTheSameReport) {
  const auto [full_r, full] = sweep("uninterrupted", k_small);
  ASSERT_EQ(full_r.exit_code, 0) << full_r.err;

  const std::string out = (m_dir / "killed.json").string();
  const std::string journal = (m_dir / "killed.jsonl").string();
  // 5000 repeats: each case takes about 0.2 s on an H200, so three are still to run when
  // the poll (every 10 ms) sees two journaled. At 40 the sweep, now that the worker
  // overlaps cases, could end before the kill.
  std::vector<std::string> args = {LP_LORAPROBE, "sweep", "--quiet", "--out", out, "--repeats", "5000"};
  args.insert(args.end(), k_small.begin(), k_small.end());
  {
    ChildProcess parent(args);
    // Kill the parent once two cases are journaled.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
    std::size_t lines = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      std::ifstream in(journal);
      std::string line;
      lines = 0;
      while (std::getline(in, line)) {
        lines += line.find(R"("type":"case")") != std::string::npos ? 1 : 0;
      }
      if (lines >= 2) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_GE(lines, 2U);
    ::kill(parent.pid(), SIGKILL);
    parent.wait_for(std::chrono::seconds(10));
  }
  ASSERT_FALSE(fs::exists(out)) << "the killed sweep must not have written its report";
  ProcessOptions options;
  options.timeout = std::chrono::minutes(8);
  const ProcessResult resumed = run_process({LP_LORAPROBE, "sweep", "--quiet", "--resume", journal}, options);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("already journaled"), std::string::npos) << resumed.err;
  const json report = formats::full_json(formats::read_document(out));
  ASSERT_EQ(report["cases"].size(), full["cases"].size());
  for (std::size_t i = 0; i < report["cases"].size(); ++i) {
    EXPECT_EQ(report["cases"][i]["id"], full["cases"][i]["id"]);
    EXPECT_EQ(report["cases"][i]["verdict"], full["cases"][i]["verdict"]);
  }
}

TEST_F(SweepOnGpu, ACaseLargerThanFreeMemoryIsSkippedBeforeAllocating) {
  // 1M tokens x 131072 columns of bf16 is 256 GiB for y alone: more than any H200 has.
  const auto [r, report] = sweep("oom", {"--op", "expand", "--input-dtype", "bf16", "--ranks", "64", "--block-n", "vllm",
                                         "--num-stages", "vllm", "--hidden", "131072", "--tokens", "1048576,256",
                                         "--no-controls", "--triton", "3.6.0"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(report["cases"].size(), 2U);
  // Plan order follows the axis as written: the huge case first, then the one that runs.
  const json& huge = report["cases"][0];
  ASSERT_EQ(huge["axes"]["tokens"], 1048576);
  EXPECT_EQ(huge["verdict"], "skipped") << huge.dump();
  EXPECT_EQ(huge["reason"].get<std::string>().rfind("out of memory: case " + huge["id"].get<std::string>(), 0), 0U)
      << huge.dump();
  EXPECT_EQ(report["cases"][1]["verdict"], "PASS");  // the sweep went on
}

TEST_F(SweepOnGpu, ACaseBreakingTheVariantsSpecialisationIsRefusedWithTheReason) {
  // Every kernel set assumes K (the rank) divisible by 16, as vLLM's JIT sees typical
  // shapes; each set's own manifest says so, and each case is refused with the reason.
  const auto [r, report] = sweep("abi", {"--op", "expand", "--input-dtype", "bf16", "--ranks", "24", "--block-n", "vllm",
                                         "--num-stages", "vllm", "--tokens", "256", "--no-controls"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(report["cases"].size(), 4U);  // one per embedded Triton set
  for (const json& c : report["cases"]) {
    EXPECT_EQ(c["verdict"], "skipped") << c.dump();
    EXPECT_NE(c["reason"].get<std::string>().find("assumes K is divisible by 16; the case has K=24"), std::string::npos)
        << c.dump();
  }
}

TEST_F(SweepOnGpu, FusedMoeCasesOfTheReportedModelPassWithMarginAndWriteEveryLiveElement) {
  // The routed experts of Qwen3.6-35B-A3B: gate/up (2 slices, K 2048, top_k 8) and down
  // (1 slice, K 512, routing weights), at 2 adapters so some pairs have none; 512 tokens:
  // vLLM's BLOCK_M 64, where the sets carry the kernel without ADD_INPUTS too.
  const std::vector<std::string> fused = {"--model", "qwen3.6-35b-a3b", "--op", "expand", "--rank", "64",
                                          "--tokens", "512", "--num-loras", "2", "--input-dtype", "bf16",
                                          "--block-n", "vllm", "--num-stages", "vllm", "--no-controls",
                                          "--triton", "3.6.0"};
  for (const char* add : {"true", "false"}) {
    SCOPED_TRACE(std::string("add_inputs ") + add);
    std::vector<std::string> args = fused;
    args.insert(args.end(), {"--add-inputs", add});
    const auto [r, report] = sweep(std::string("fused-") + add, args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    int seen = 0;
    for (const json& c : report["cases"]) {
      if (c["axes"]["op"] != "fused_moe") {
        continue;
      }
      ++seen;
      EXPECT_EQ(c["verdict"], "PASS") << c.dump();
      EXPECT_EQ(c["static_findings"], 0) << c.dump();
      EXPECT_LE(c["metrics"]["worst_dev_over_tolerance"].get<double>(), 0.5) << c.dump();
      EXPECT_EQ(c["metrics"]["nan"], 0);
      EXPECT_EQ(c["metrics"]["untouched_rows_written"], 0) << c.dump();
      EXPECT_GT(c["metrics"]["elements"].get<std::uint64_t>(), 0U);
      if (std::string(add) == "false") {
        // The output started as poison: every live element was written by the kernel,
        // and with the value the reference wrote (a reference that skipped an element
        // would still hold the poison there, and mismatch).
        EXPECT_EQ(c["metrics"]["unwritten"], 0) << c.dump();
      }
    }
    EXPECT_EQ(seen, 2) << "gate_up and down";
  }
}

}  // namespace
}  // namespace lp
