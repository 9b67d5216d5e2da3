// The sweep's host-side logic: verdicts, the worker protocol, the journal, the table.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "sweep/decide.hpp"
#include "sweep/execute.hpp"
#include "sweep/job.hpp"
#include "sweep/journal.hpp"
#include "sweep/table.hpp"
#include "util/error.hpp"

namespace lp::sweep {
namespace {

using report::Verdict;

JobResult ran(int runs, int failed) {
  JobResult r;
  r.status = "ran";
  r.runs = runs;
  r.failed_runs = failed;
  r.reason = failed > 0 ? "FAIL 3 mismatches" : "";
  return r;
}

TEST(Decide, ObservedFailureBeatsEverything) {
  EXPECT_EQ(decide(ran(5, 1), 0, "").verdict, Verdict::fail);
  EXPECT_EQ(decide(ran(5, 5), 6, "").verdict, Verdict::fail);
  EXPECT_EQ(decide(ran(5, 1), 6, "").reason, "1 of 5 runs wrong: FAIL 3 mismatches");
}

TEST(Decide, StaticHazardWithoutObservationIsLatentWithTheBound) {
  const Decision d = decide(ran(100, 0), 6, "");
  EXPECT_EQ(d.verdict, Verdict::latent);
  EXPECT_EQ(d.reason,
            "the SASS has 6 wgmma register hazard finding(s); not observed in 100 runs (95% upper bound on the per-run "
            "failure rate: 0.03)");
}

TEST(Decide, CleanIsPassAndUninspectedSaysSo) {
  EXPECT_EQ(decide(ran(3, 0), 0, "").verdict, Verdict::pass);
  EXPECT_TRUE(decide(ran(3, 0), 0, "").reason.empty());
  const Decision d = decide(ran(3, 0), std::nullopt, "no nvdisasm");
  EXPECT_EQ(d.verdict, Verdict::pass);
  EXPECT_EQ(d.reason, "SASS not inspected: no nvdisasm");
}

TEST(Decide, WorkerStatusesPassThrough) {
  for (const auto& [status, verdict] : std::vector<std::pair<std::string, Verdict>>{
           {"skipped", Verdict::skipped}, {"incomplete", Verdict::incomplete}, {"fault", Verdict::fault},
           {"timeout", Verdict::timeout}, {"garbled", Verdict::incomplete}}) {
    JobResult r;
    r.status = status;
    r.reason = "why";
    EXPECT_EQ(decide(r, 6, "").verdict, verdict) << status;
  }
}

TEST(Estimate, TheLargestCaseTheAxesAllowIsCountedExactly) {
  // Every axis at its maximum (tokens 2^20, hidden 131072 x 3 slices, rank 4096, 1024 adapters):
  // the estimate must be of the order of its largest tensor, not a wrapped small number.
  Problem p;
  p.op = lp::Op::lora_linear;
  p.num_tokens = std::int64_t{1} << 20;
  p.rank = 4096;
  p.slice_hidden = {131072, 131072, 131072};
  p.hidden_in = 131072;
  p.num_loras = 1024;
  p.input_dtype = lp::DType::f16;
  p.weight_dtype = lp::DType::f16;
  const std::uint64_t bytes = estimate_device_bytes(p);
  const long double y_bytes = 3.0L * (1 << 20) * 3 * 131072 * 2;  // y, y_in and the reference
  EXPECT_GT(static_cast<long double>(bytes), y_bytes);
  EXPECT_LT(bytes, std::uint64_t{1} << 50);
}

TEST(Estimate, SizesBeyondTheAxesSaturateInsteadOfWrapping) {
  // A hand-edited job could carry any int64: 2^40 tokens x 2^40 x 3 slices wraps a plain uint64 product.
  Problem p;
  p.op = lp::Op::expand;
  p.num_tokens = std::int64_t{1} << 40;
  p.rank = std::int64_t{1} << 40;
  p.slice_hidden = {std::int64_t{1} << 40, std::int64_t{1} << 40, std::int64_t{1} << 40};
  p.weight_dtype = lp::DType::bf16;
  EXPECT_EQ(estimate_device_bytes(p), std::numeric_limits<std::uint64_t>::max());
}

TEST(Job, RoundTripsThroughJson) {
  Job job;
  job.index = 7;
  job.case_id = "0123456789ab";
  job.problem.op = Op::lora_linear;
  job.problem.num_tokens = 384;
  job.problem.rank = 64;
  job.problem.slice_hidden = {4096, 1024};
  job.problem.hidden_in = 4096;
  job.problem.num_loras = 4;
  job.problem.input_dtype = DType::bf16;
  job.problem.weight_dtype = DType::bf16;
  job.problem.add_inputs = true;
  job.problem.scale = 0.25F;
  job.problem.seed = 0xfedcba9876543210ULL;
  job.problem.split_k = 8;
  job.repeats = 5;
  job.atol = 1e-3;
  job.expand = ImageRef{"e|prebuilt", "e", "prebuilt"};
  job.shrink = ImageRef{"s|ptxas=13.0", "s", "ptxas=13.0"};
  const Job back = job_from_json(nlohmann::json::parse(to_json(job).dump()));
  EXPECT_EQ(to_json(back), to_json(job));
  EXPECT_EQ(back.problem.seed, 0xfedcba9876543210ULL);
  EXPECT_FALSE(back.rtol.has_value());
  EXPECT_THROW(job_from_json(nlohmann::json{{"index", 1}}), Error);
}

report::CaseRecord record(const std::string& id, std::int64_t tokens, int block_n, Verdict v) {
  report::CaseRecord c;
  c.index = static_cast<std::size_t>(tokens);
  c.id = id;
  c.axes = {{"op", "expand"}, {"input_dtype", "fp32"}, {"weight_dtype", "bf16"}, {"rank", 64}, {"hidden", {4096}},
            {"block_m", 64}, {"block_n", block_n}, {"block_k", 32}, {"num_warps", 4}, {"num_stages", 2},
            {"add_inputs", true}, {"compiler", "prebuilt"}, {"tokens", tokens}};
  c.verdict = v;
  c.metrics = nullptr;
  c.timing = nullptr;
  return c;
}

TEST(Journal, AppendsReadsBackAndSurvivesATornLastLine) {
  const std::string path = (std::filesystem::temp_directory_path() / "lp-journal-test.jsonl").string();
  std::filesystem::remove(path);
  {
    Journal j(path, {{"config_sha256", "c"}, {"plan_sha256", "p"}});
    j.append("controls", {{"controls", {{"valid", true}}}});
    j.append("case", {{"record", record("aaaaaaaaaaaa", 256, 128, Verdict::latent).to_json()}});
  }
  {
    std::ofstream torn(path, std::ios::app);
    torn << R"({"type":"case","record":{"index":)";  // killed mid-write
  }
  JournalContents c = read_journal(path);
  EXPECT_EQ(c.header["plan_sha256"], "p");
  ASSERT_TRUE(c.controls.has_value());
  ASSERT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.cases.at("aaaaaaaaaaaa").verdict, Verdict::latent);
  {
    // Reopening drops the torn line before appending.
    Journal j(path, {{"ignored", true}});
    j.append("case", {{"record", record("bbbbbbbbbbbb", 512, 128, Verdict::pass).to_json()}});
  }
  c = read_journal(path);
  EXPECT_EQ(c.cases.size(), 2U);
  EXPECT_EQ(c.header.count("ignored"), 0U);
  std::filesystem::remove(path);
}

TEST(Journal, CorruptionInTheMiddleIsAnError) {
  const std::string path = (std::filesystem::temp_directory_path() / "lp-journal-bad.jsonl").string();
  std::ofstream(path) << R"({"type":"header"})" "\n" "garbage\n" R"({"type":"controls","controls":{}})" "\n";
  EXPECT_THROW(read_journal(path), InputError);
  std::filesystem::remove(path);
}

TEST(Table, RowsPerConfigurationColumnsPerTokenCount) {
  const std::vector<report::CaseRecord> cases = {
      record("a", 256, 128, Verdict::latent), record("b", 1024, 128, Verdict::fail),
      record("c", 256, 32, Verdict::pass), record("d", 1024, 32, Verdict::timeout)};
  const std::string table = format_verdict_table(cases);
  EXPECT_NE(table.find("expand fp32>bf16 r64 h4096 m64n128k32 w4s2 add prebuilt     L     F"), std::string::npos)
      << table;
  EXPECT_NE(table.find("expand fp32>bf16 r64 h4096 m64n32k32 w4s2 add prebuilt      P     t"), std::string::npos)
      << table;
}

}  // namespace
}  // namespace lp::sweep
