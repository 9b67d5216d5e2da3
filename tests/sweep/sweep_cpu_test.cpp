// The sweep's host-side logic: verdicts, the worker protocol, the journal, the table.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include <nlohmann/json.hpp>

#include "support/error_of.hpp"
#include "support/nvdisasm.hpp"
#include "compile/ptxas.hpp"
#include "compile/toolchain.hpp"
#include "sass/analyze.hpp"
#include "kernels/kernel_sets.hpp"
#include "sweep/case_variants.hpp"
#include "sweep/controls.hpp"
#include "sweep/decide.hpp"
#include "sweep/images.hpp"
#include "sweep/phases.hpp"
#include "protocol/protocol.hpp"
#include "report/journal.hpp"
#include "sweep/race_control.hpp"
#include "plan/axes.hpp"
#include "report/verdict_table.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/subprocess.hpp"

namespace lp::sweep {
namespace {

using report::Journal;
using report::JournalContents;
using report::read_journal;

using report::Verdict;
using protocol::ImageRef;
using protocol::Job;
using protocol::job_from_json;
using protocol::JobResult;
using protocol::to_json;
using protocol::RaceResult;
using protocol::RunOutcome;

JobResult ran(int runs, int failed) {
  JobResult r;
  r.outcome = RunOutcome::ran;
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

TEST(Decide, WorkerOutcomesPassThrough) {
  for (const auto& [outcome, verdict] : std::vector<std::pair<RunOutcome, Verdict>>{
           {RunOutcome::refused, Verdict::skipped}, {RunOutcome::incomplete, Verdict::incomplete},
           {RunOutcome::fault, Verdict::fault}, {RunOutcome::timeout, Verdict::timeout}}) {
    JobResult r;
    r.outcome = outcome;
    r.reason = "why";
    EXPECT_EQ(decide(r, 6, "").verdict, verdict) << protocol::to_string(outcome);
  }
  // An outcome the protocol does not know is a malformed message, never a verdict.
  nlohmann::json garbled = protocol::to_json(JobResult::lost(0, "abc", RunOutcome::fault, "why"));
  garbled["outcome"] = "garbled";
  EXPECT_THROW(protocol::result_from_json(garbled), Error);
}

RaceResult race_result(std::uint64_t late_tiles, std::uint64_t unwritten = 0) {
  RaceResult r;
  r.ctas = 4;
  r.launches = 5;
  r.tiles = 20;
  r.late_tiles = late_tiles;
  r.late_elements = late_tiles * 512;
  r.launches_with_late = late_tiles > 0 ? 5 : 0;
  r.unwritten = unwritten;
  r.values = {{64.0F, 20 * 512 - r.late_elements}, {96.0F, r.late_elements}};
  return r;
}

TEST(Controls, EveryControlThatMisbehavesIsInTheRunsReasonInOrder) {
  auto record = [](Verdict verdict, const char* variant, const char* reason) {
    report::CaseRecord r;
    r.verdict = verdict;
    r.variant = variant;
    r.reason = reason;
    return r;
  };
  const report::CaseRecord fail = record(Verdict::fail, "pos", "12 NaN");
  const report::CaseRecord pass = record(Verdict::pass, "neg", "");
  const std::vector<ControlPair> pairs = {
      {"3.6.0", pass, pass},                                       // the positive control passed
      {"3.7.0", fail, pass},                                       // behaves
      {"3.8.0", fail, record(Verdict::fail, "neg", "3 NaN")}};     // the negative control failed
  const std::vector<AmplifiedControl> amplified = {{"3.9.0", "block_n_32", 8, fail}};
  const report::Controls c = controls_record(pairs, amplified, {}, report::RaceRecord{});
  EXPECT_TRUE(c.ran);
  ASSERT_TRUE(c.valid.has_value());
  EXPECT_FALSE(*c.valid);
  ASSERT_TRUE(c.sets.has_value());
  ASSERT_EQ(c.sets->size(), 3U);
  EXPECT_EQ(c.reason.value_or(""),
            "Triton 3.6.0: the positive control (neg) must FAIL but is PASS; "
            "Triton 3.8.0: the negative control (neg) must PASS but is FAIL: 3 NaN; "
            "the amplified block_n_32 (8 pairs, Triton 3.9.0) control (pos) must PASS but is FAIL: 12 NaN");
  const report::Controls good = controls_record({pairs[1]}, {}, {}, report::RaceRecord{});
  EXPECT_TRUE(good.valid.value_or(false));
  EXPECT_FALSE(good.reason.has_value());
}

TEST(RaceControl, ResultRoundTripsThroughJson) {
  const RaceResult r = race_result(7);
  const RaceResult back = protocol::race_result_from_json(protocol::to_json(r));
  EXPECT_EQ(back.late_tiles, 7U);
  EXPECT_EQ(back.values, r.values);
  EXPECT_EQ(protocol::to_json(r)["values"]["96"], 7 * 512);
  EXPECT_THROW(protocol::race_result_from_json(nlohmann::json{{"ctas", 4}}), Error);
}

TEST(WorkerProtocol, TheGpuRecordRoundTripsAndAMalformedOneIsABugNotAReport) {
  protocol::GpuRecord g;
  g.ordinal = 1;
  g.device_count = 8;
  g.name = "NVIDIA H200";
  g.compute_capability = "9.0";
  g.total_memory_bytes = 150'000'000'000ULL;
  g.peak_bandwidth_gb_s = 4917.5;
  g.jit_cache_disabled = false;
  g.module_loading = "lazy";
  const nlohmann::json j = protocol::to_json(g);
  EXPECT_EQ(j.size(), 23U) << "every field of the report's environment.gpu";
  EXPECT_EQ(protocol::to_json(protocol::gpu_record_from_json(j)), j);
  nlohmann::json broken = j;
  broken["device_count"] = "8";
  try {
    (void)protocol::gpu_record_from_json(broken);
    ADD_FAILURE() << "a mistyped field was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "malformed worker ready message: /gpu/device_count: expected a whole number in [1, 2147483647], got "
              "\"8\"");
  }
  broken = j;
  broken.erase("uuid");
  EXPECT_THROW((void)protocol::gpu_record_from_json(broken), Error);
}

TEST(WorkerProtocol, EveryMessageIsOneLineThatReadsBackAsItself) {
  protocol::Job job;
  job.index = 3;
  job.case_id = "case-3";
  job.problem.num_tokens = 77;
  const protocol::Request run = protocol::RunJob{job};
  const std::string line = protocol::to_line(run);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const protocol::Request back = protocol::parse_request(line);
  ASSERT_TRUE(std::holds_alternative<protocol::RunJob>(back));
  EXPECT_EQ(std::get<protocol::RunJob>(back).job.case_id, "case-3");
  EXPECT_EQ(std::get<protocol::RunJob>(back).job.problem.num_tokens, 77);
  EXPECT_EQ(protocol::to_line(protocol::Quit{}), R"({"type":"quit"})");
  EXPECT_TRUE(std::holds_alternative<protocol::Quit>(protocol::parse_request(R"({"type":"quit"})")));
  const protocol::Request race = protocol::parse_request(protocol::to_line(protocol::RaceRequest{"\x7f" "ELF", 4, 5}));
  ASSERT_TRUE(std::holds_alternative<protocol::RaceRequest>(race));
  EXPECT_EQ(std::get<protocol::RaceRequest>(race).cubin, "\x7f" "ELF");
  EXPECT_EQ(std::get<protocol::RaceRequest>(race).launches, 5U);

  const std::optional<protocol::Reply> answer =
      protocol::parse_reply(protocol::to_line(protocol::JobAnswer{JobResult::lost(3, "case-3", RunOutcome::fault, "why")}));
  ASSERT_TRUE(answer && std::holds_alternative<protocol::JobAnswer>(*answer));
  EXPECT_EQ(std::get<protocol::JobAnswer>(*answer).result.reason, "why");
  const std::optional<protocol::Reply> raced = protocol::parse_reply(protocol::to_line(protocol::RaceAnswer{race_result(7), {}, false}));
  ASSERT_TRUE(raced && std::holds_alternative<protocol::RaceAnswer>(*raced));
  EXPECT_EQ(std::get<protocol::RaceAnswer>(*raced).result->late_tiles, 7U);
  EXPECT_EQ(protocol::to_line(protocol::RaceAnswer{std::nullopt, "sticky", true}),
            R"({"error":"sticky","fault":true,"type":"race_result"})");
  EXPECT_EQ(protocol::to_line(protocol::StartFailure{"no GPU", 3}), R"({"error":"no GPU","exit_code":3,"type":"fatal"})");
}

TEST(WorkerProtocol, WhatIsNotAMessageIsToldApartFromAMalformedOne) {
  // A worker answers an unreadable or unknown request and goes on.
  const protocol::Request unreadable = protocol::parse_request("{not json");
  ASSERT_TRUE(std::holds_alternative<protocol::BadRequest>(unreadable));
  EXPECT_TRUE(std::get<protocol::BadRequest>(unreadable).error.starts_with("worker: unreadable request: "));
  const protocol::Request unknown = protocol::parse_request(R"({"type":"dance"})");
  ASSERT_TRUE(std::holds_alternative<protocol::BadRequest>(unknown));
  EXPECT_EQ(std::get<protocol::BadRequest>(unknown).error, "worker: unknown request type \"dance\"");
  // A request of a known type with a field missing is this binary's bug.
  EXPECT_THROW((void)protocol::parse_request(R"({"type":"run"})"), Error);
  EXPECT_THROW((void)protocol::parse_request(R"({"type":"load_batch","items":[{"key":1}]})"), Error);
  // The parent skips a line some library printed, and quotes a JSON object it did not expect.
  EXPECT_FALSE(protocol::parse_reply("cuBLAS warning: something").has_value());
  EXPECT_FALSE(protocol::parse_reply("[1,2]").has_value());
  const std::optional<protocol::Reply> odd = protocol::parse_reply(R"({"type":"dance"})");
  ASSERT_TRUE(odd && std::holds_alternative<protocol::UnknownReply>(*odd));
  EXPECT_EQ(std::get<protocol::UnknownReply>(*odd).line, R"({"type":"dance"})");
  EXPECT_THROW((void)protocol::parse_reply(R"({"type":"result"})"), Error);
  EXPECT_THROW((void)protocol::parse_reply(R"({"type":"ready","gpu":{"ordinal":0}})"), Error);
}

TEST(WorkerProtocol, ANumberOutOfRangeOrALineTooDeepIsRefusedNotConverted) {
  // The parent shares the worker's stdout with every library and every kernel's printf,
  // so a reply line can be anything. fuzz/protocol_fuzzer found numbers converted
  // regardless: a seed of 1.84e102 cast to uint64_t (undefined behaviour).
  const std::string run = R"({"type":"run","job":{"index":1,"case_id":"c","op":"expand","num_tokens":16,"rank":16,)"
                          R"("slice_hidden":[64],"hidden_in":16,"num_loras":1,"input_dtype":"fp32","weight_dtype":"bf16",)"
                          R"("add_inputs":false,"scale":1.0,"seed":SEED,"split_k":1,"amplify":0,"moe":{"num_experts":0,)"
                          R"("top_k":0,"mul_routed_weight":false,"block_m":0},"block_m":64,"block_n":128,"pdl":false,)"
                          R"("repeats":1,"atol":null,"rtol":null,"expand":null,"shrink":null}})";
  auto with_seed = [&](const std::string& seed) { return std::string(run).replace(run.find("SEED"), 4, seed); };
  const protocol::Request ok = protocol::parse_request(with_seed("18446744073709551557"));
  ASSERT_TRUE(std::holds_alternative<protocol::RunJob>(ok));
  EXPECT_EQ(std::get<protocol::RunJob>(ok).job.problem.seed, 18446744073709551557ULL);
  // What a line is refused with, read as a request (parse_request) or as a reply (parse_reply).
  auto error_of = [](auto parse, const std::string& line) {
    return test_support::error_of([&] { (void)parse(line); }, "read");
  };
  auto error_of_request = [&](const std::string& line) { return error_of(protocol::parse_request, line); };
  auto error_of_reply = [&](const std::string& line) { return error_of(protocol::parse_reply, line); };
  EXPECT_EQ(error_of_request(with_seed("1.84e102")),
            "malformed run request: /job/seed: expected a whole number in [0, 18446744073709551615], got 1.84e+102");
  EXPECT_EQ(error_of_request(with_seed("-1")),
            "malformed run request: /job/seed: expected a whole number in [0, 18446744073709551615], got -1");
  EXPECT_EQ(error_of_reply(R"({"type":"fatal","error":"x","exit_code":1e300})"),
            "malformed worker reply: /exit_code: expected a whole number in [0, 255], got 1e+300");
  EXPECT_EQ(error_of_reply(R"({"type":"race_result","result":{"ctas":4294967296,"launches":1,"tiles":1,)"
                           R"("late_tiles":0,"late_elements":0,"launches_with_late":0,"unwritten":0,"values":{}}})"),
            "malformed worker reply: /result/ctas: expected a whole number in [0, 4294967295], got 4294967296");
  EXPECT_EQ(error_of_reply(R"({"type":"loaded_batch","results":[{"key":"k","ok":true,"cubin":"@@@@"}]})"),
            "malformed worker reply: /results/0/cubin: base64: malformed input");
  // A line nested deeper than any message is not one: the parent skips it as a
  // library's line, the worker answers it as unreadable; neither builds it.
  const std::string deep = "{\"type\":\"result\",\"result\":" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_FALSE(protocol::parse_reply(deep).has_value());
  const protocol::Request deep_request = protocol::parse_request(deep);
  ASSERT_TRUE(std::holds_alternative<protocol::BadRequest>(deep_request));
  EXPECT_EQ(std::get<protocol::BadRequest>(deep_request).error, "worker: unreadable request: nesting deeper than 16 levels");
  // The deepest message there is, a result with its first bad element and its grid, reads back.
  JobResult r = JobResult::lost(2, "c", RunOutcome::ran, "");
  r.metrics = CompareMetrics{};
  r.metrics->elements = 64;
  r.metrics->first_bad = BadElement{};
  r.metrics->first_bad->dtype = DType::bf16;  // a report tells the dtype by the bits' width (model/metrics_json.cpp)
  r.metrics->first_bad->expected_bits = 0x3ee0;
  r.metrics->first_bad->actual_bits = 0x7fff;
  r.metrics->first_bad->expected = 0.4375;
  r.metrics->first_bad->actual = std::numeric_limits<double>::quiet_NaN();
  r.timing = CaseTiming{1.5, 2.5, 4096, std::array<std::int64_t, 3>{1, 2, 3}};
  const std::string line = protocol::to_line(protocol::JobAnswer{r});
  const std::optional<protocol::Reply> back = protocol::parse_reply(line);
  ASSERT_TRUE(back && std::holds_alternative<protocol::JobAnswer>(*back));
  EXPECT_EQ(protocol::to_line(*back), line);
}

TEST(RaceControl, OutcomesArePinned) {
  const std::string c = "ptxas=toolkit (13.0.88)";
  nlohmann::json o = race_outcome(c, 5, race_result(20), "").to_json();
  EXPECT_EQ(o["shows"], true);
  EXPECT_EQ(o["summary"],
            "this GPU reads wgmma A registers late: 20 of 20 tiles (5 of 5 launches) read the A written after the "
            "wgmma; the LATENT cases are a real risk here");
  o = race_outcome(c, 5, race_result(0), "").to_json();
  EXPECT_EQ(o["shows"], false);
  EXPECT_EQ(o["summary"],
            "this GPU did not read wgmma A registers late in 20 tiles (5 launches) of the race control; LATENT "
            "remains a static proof without a run-time witness here");
  // Without the hazard in its own SASS the control proves nothing, whatever the GPU did.
  o = race_outcome(c, 0, race_result(0), "").to_json();
  EXPECT_TRUE(o["shows"].is_null());
  EXPECT_EQ(o["summary"], "the race control's SASS (ptxas=toolkit (13.0.88)) has no wgmma hazard (ptxas serialised "
                          "its wgmma): it cannot show the race here");
  o = race_outcome(c, std::nullopt, race_result(3), "").to_json();
  EXPECT_TRUE(o["shows"].is_null());
  o = race_outcome(c, 5, race_result(20, 1), "").to_json();
  EXPECT_TRUE(o["shows"].is_null());
  EXPECT_EQ(o["summary"], "the race control left 1 elements unwritten: its result says nothing");
  o = race_outcome(c, 5, std::nullopt, "exceeded --case-timeout 600 s").to_json();
  EXPECT_EQ(o["ran"], false);
  EXPECT_EQ(o["summary"], "the race control did not run: exceeded --case-timeout 600 s");
}

TEST(RaceControl, TheEmbeddedPtxIsWhatItsGeneratorWrites) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("lp-race-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "race-control.ptx").string();
  const ProcessResult r =
      run_process({"python3", LP_SOURCE_DIR "/kernels/race/gen_race_ptx.py", "--control", out}, ProcessOptions{});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(out);
  const std::string regenerated((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  EXPECT_EQ(regenerated, std::string(race_control_ptx()));
  EXPECT_EQ(std::string(race_control_ptx()).rfind(
                "// Generated by python3 kernels/race/gen_race_ptx.py --control kernels/race/race-control.ptx; do not "
                "edit.\n",
                0),
            0U);
}

TEST(RaceControl, ItsSassHasTheHazardUnderTheToolkitPtxasAndAnother) {
  // The control proves something only when ptxas did not serialise it: check the SASS.
  LP_REQUIRE_NVDISASM(found);
  const sass::Nvdisasm& nvdisasm = *found;
  std::vector<std::string> specs = {"toolkit"};
  if (std::filesystem::exists(LP_SOURCE_DIR "/.tools/ptxas/13.5.37/ptxas")) {
    specs.push_back("13.5.37");
  }
  for (const std::string& spec : specs) {
    SCOPED_TRACE(spec);
    const compile::PtxasInfo ptxas = compile::resolve_ptxas(spec);
    const std::string cubin = compile::compile_with_ptxas(ptxas, race_control_ptx(), "race-control").cubin;
    const sass::CubinReport report = sass::analyze_cubin(cubin, nvdisasm, {}, "race-control.cubin");
    ASSERT_EQ(report.kernels.size(), 1U);
    EXPECT_GE(report.finding_count(), 4U);  // the four A registers of the m64n8k16 wgmma
    EXPECT_EQ(report.kernels[0].stats.max_groups_in_flight, 2);
    EXPECT_EQ(report.kernels[0].stats.wgmma, 17);  // 16 queued + the register-A one
  }
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
  job.problem.amplify = 4;
  job.problem.scale_group = 128;
  job.repeats = 5;
  job.pdl = true;
  job.atol = 1e-3;
  job.expand = ImageRef{"3.6.0", "e", compile::Compiler::prebuilt(), 0};
  job.shrink = ImageRef{"3.6.0", "s", compile::Compiler::with_ptxas("13.0"), 0};
  const Job back = job_from_json(nlohmann::json::parse(to_json(job).dump()));
  EXPECT_EQ(to_json(back), to_json(job));
  EXPECT_EQ(back.problem.seed, 0xfedcba9876543210ULL);
  EXPECT_FALSE(back.rtol.has_value());
  EXPECT_THROW(job_from_json(nlohmann::json{{"index", 1}}), Error);
  EXPECT_EQ(back.problem.amplify, 4);
  EXPECT_EQ(back.problem.scale_group, 128);
  EXPECT_TRUE(back.pdl);
  EXPECT_EQ(to_json(job).at("pdl"), true);
}

TEST(DualStream, EverySetHasTheChainsProducerAndItsGdcExpand) {
  // A gdc case asks its set for the shrink with TAIL_NS = k_chain_tail_ns and the USE_GDC
  // expand: scripts/kernelgen/variants.py must keep building them (CHAIN_TAIL_NS).
  const kernels::KernelSets sets = kernels::KernelSets::load();
  for (const kernels::KernelSet& set : sets.all()) {
    std::size_t producers = 0;
    std::size_t expands = 0;
    for (const kernels::Variant& v : set.variants()) {
      if (v.ok() && v.axes.boolean("gdc").value_or(false)) {
        producers += v.op == "shrink" && v.axes.integer("tail_ns") == k_chain_tail_ns ? 1 : 0;
        expands += v.op == "expand" ? 1 : 0;
        EXPECT_EQ(v.constexprs.boolean("USE_GDC"), true) << v.id;
        EXPECT_EQ(v.constexprs.boolean("launch_pdl"), true) << v.id;
      }
    }
    EXPECT_GE(producers, 6U) << set.triton();  // both shrink defaults x 1-3 slices, bf16
    EXPECT_GE(expands, 20U) << set.triton();
  }
}

TEST(Job, ALoadItemCarriesTheAmplifiedPtxForTheDriversJit) {
  protocol::LoadItem item{ImageRef{"3.6.0", "e", compile::Compiler::driver(), 2}, std::nullopt,
                          std::string(".version 8.7\n// loraprobe amplify: ...\n")};
  const protocol::LoadItem back = protocol::load_item_from_json(nlohmann::json::parse(to_json(item).dump()));
  ASSERT_TRUE(back.ptx.has_value());
  EXPECT_EQ(*back.ptx, *item.ptx);
  EXPECT_FALSE(back.cubin.has_value());
  item.ptx.reset();
  EXPECT_FALSE(protocol::load_item_from_json(to_json(item)).ptx.has_value());
}

TEST(Decide, AnAmplifiedCaseIsJudgedOnItsAmplifiedSassAndSaysSo) {
  report::AmplificationRecord a;
  a.amplify = 2;
  a.sites = 2;
  a.pending_sites = 2;
  a.unamplified_findings = 8;
  Decision d = decide(ran(30, 27), 8, "", &a);
  EXPECT_EQ(d.verdict, Verdict::fail);
  EXPECT_EQ(d.reason, "under amplification (2 queued wgmma pairs): 27 of 30 runs wrong: FAIL 3 mismatches");
  d = decide(ran(30, 0), 8, "", &a);
  EXPECT_EQ(d.verdict, Verdict::latent);
  EXPECT_EQ(d.reason, "the SASS has 8 wgmma register hazard finding(s); not observed in 30 runs (95% upper bound on the "
                      "per-run failure rate: 0.1); not observed under amplification (2 queued wgmma pairs)");
  // Void: the pairs' SASS lost the hazard. The unamplified SASS's findings keep it LATENT, never PASS.
  a.void_reason = "the amplified SASS has no wgmma hazard while the unamplified SASS has 8 (...)";
  d = decide(ran(30, 0), 0, "", &a);
  EXPECT_EQ(d.verdict, Verdict::latent);
  EXPECT_EQ(d.reason.rfind("amplification void: the amplified SASS has no wgmma hazard", 0), 0U) << d.reason;
  // Void the other way: a hazard only the amplified SASS has is the amplifier's: incomplete.
  a.unamplified_findings = 0;
  a.void_reason = "the amplified SASS has 2 wgmma hazard(s) the unamplified SASS does not have: ...";
  EXPECT_EQ(decide(ran(30, 3), 2, "", &a).verdict, Verdict::incomplete);
  EXPECT_EQ(decide(ran(30, 0), 2, "", &a).verdict, Verdict::incomplete);
  // Clean with and without the pairs: PASS.
  a.void_reason.clear();
  EXPECT_EQ(decide(ran(30, 0), 0, "", &a).verdict, Verdict::pass);
  // No site amplified: judged as any case (the record carries why).
  a.sites = 0;
  EXPECT_EQ(decide(ran(30, 1), 0, "", &a).reason, "1 of 30 runs wrong: FAIL 3 mismatches");
}

TEST(Images, AnAmplifiedDriverImageSendsItsPtxAndAnUnchangedOneTakesItsBasesCubin) {
  const kernels::KernelSets sets = kernels::KernelSets::load();
  ImageSet images;
  const std::string hazard =
      images.add(protocol::ImageRef{"3.6.0", "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1", compile::Compiler::driver(), 2});
  const std::string bf16 =
      images.add(protocol::ImageRef{"3.6.0", "expand-bf16-bf16-m64n128k32-w4s2-evenk-add-s1", compile::Compiler::driver(), 2});
  EXPECT_EQ(images.all().size(), 4U) << "each amplified image brings its unamplified one";
  images.build_on_cpu(sets, 1);
  ASSERT_TRUE(images.at(hazard).amplification.has_value());
  EXPECT_EQ(images.at(hazard).amplification->sites, 2U);
  EXPECT_FALSE(images.at(bf16).amplification->changed());
  std::map<std::string, protocol::LoadItem> items;
  for (protocol::LoadItem& item : images.driver_items()) {
    items.emplace(item.image.key(), std::move(item));
  }
  ASSERT_EQ(items.size(), 3U) << "both unamplified images and the amplified one that changed";
  ASSERT_TRUE(items.at(hazard).ptx.has_value());
  EXPECT_NE(items.at(hazard).ptx->find("// loraprobe amplify: 2 dependent wgmma pair(s)"), std::string::npos);
  EXPECT_FALSE(items.at(images.at(hazard).base_key).ptx.has_value()) << "the worker JITs the variant's own PTX";
  EXPECT_EQ(items.count(bf16), 0U);
  // The worker's answers: every JIT'd cubin comes back; the unchanged image takes its base's.
  std::vector<protocol::LoadResult> results;
  for (const auto& [key, item] : items) {
    protocol::LoadResult r;
    r.key = key;
    r.ok = true;
    r.jit_cubin = "cubin of " + key;
    r.jit_log = key == hazard ? "info    : (C7515) Potential Performance Loss: serialized\n" : "";
    results.push_back(r);
  }
  images.take_jit(results, "580.159.04");
  EXPECT_EQ(images.at(hazard).cubin, "cubin of " + hazard);
  EXPECT_EQ(images.at(hazard).compile.value().amplified, 2);
  EXPECT_EQ(images.at(hazard).amplification->serialised, "(C7515) Potential Performance Loss: serialized");
  EXPECT_EQ(images.at(bf16).cubin, "cubin of " + images.at(bf16).base_key);
}

// Issue 53: an amplified prebuilt image whose set's bundled ptxas is not here was a
// compile_error (an 'error' cell in the stack matrix) where the amplified controls use
// the newest installed ptxas at least as new. Now the image does the same, and says so.
TEST(Images, AnAmplifiedPrebuiltImageWithoutItsBundledPtxasUsesTheNewestAsNew) {
  const kernels::KernelSets sets = kernels::KernelSets::load();
  const kernels::KernelSet& set = sets.at("3.9.0");
  const kernels::PtxasRecord& bundled = set.manifest().ptxas;
  if (error_of([&] {
        (void)compile::resolve_bundled_ptxas({set.triton(), bundled.path_hint, bundled.sha256, bundled.version});
      }).empty()) {
    GTEST_SKIP() << "skipped: Triton 3.9.0's bundled ptxas is installed here";
  }
  const std::optional<compile::PtxasInfo> stand_in = compile::ptxas_standing_in_for(bundled.version);
  ImageSet images;
  const std::string key =
      images.add(protocol::ImageRef{"3.9.0", "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1", compile::Compiler::prebuilt(), 2});
  images.build_on_cpu(sets, 1);
  const Image& image = images.at(key);
  if (!stand_in) {
    EXPECT_FALSE(image.error.empty());  // nothing to stand in: the case is compile_error, as before
    GTEST_SKIP() << "skipped: no ptxas 13.4.59 or newer here (scripts/install_tools.sh installs 13.5.37)";
  }
  EXPECT_TRUE(image.error.empty()) << image.error;
  EXPECT_FALSE(image.cubin.empty());
  EXPECT_EQ(image.compiler_note.rfind("compiled by ptxas " + stand_in->version + " (" + stand_in->path +
                                          "), the newest here at least as new as Triton 3.9.0's bundled ptxas, which "
                                          "is not here: ",
                                      0),
            0U)
      << image.compiler_note;
  ASSERT_TRUE(image.compile.has_value());
  EXPECT_EQ(image.compile->sha256, stand_in->sha256);
  EXPECT_NE(image.compile->tool.find("for Triton 3.9.0's bundled ptxas, which is not here"), std::string::npos);
  // The unamplified prebuilt image is the set's own cubin, whatever ptxas is here.
  EXPECT_TRUE(images.at(image.base_key).compiler_note.empty());
  EXPECT_FALSE(images.at(image.base_key).cubin.empty());
}

report::CaseRecord record(const std::string& id, std::int64_t tokens, int block_n, Verdict v) {
  report::CaseRecord c;
  c.index = static_cast<std::size_t>(tokens);
  c.id = id;
  c.axes = lp::AxisValues::from_json(nlohmann::json{{"op", "expand"}, {"input_dtype", "fp32"}, {"weight_dtype", "bf16"}, {"rank", 64}, {"hidden", {4096}},
            {"block_m", 64}, {"block_n", block_n}, {"block_k", 32}, {"num_warps", 4}, {"num_stages", 2},
            {"add_inputs", true}, {"compiler", "prebuilt"}, {"tokens", tokens}});
  c.verdict = v;
  return c;
}

TEST(Journal, AppendsReadsBackAndSurvivesATornLastLine) {
  const std::string path = (std::filesystem::temp_directory_path() / "lp-journal-test.jsonl").string();
  std::filesystem::remove(path);
  report::JournalHeader header;
  header.config_sha256 = "c";
  header.plan_sha256 = "p";
  header.argv = {"loraprobe", "sweep"};
  {
    Journal j(path, header);
    report::Controls controls;
    controls.ran = true;
    controls.valid = true;
    j.append_controls(controls);
    j.append_case(record("aaaaaaaaaaaa", 256, 128, Verdict::latent));
  }
  {
    std::ofstream torn(path, std::ios::app);
    torn << R"({"type":"case","record":{"index":)";  // killed mid-write
  }
  JournalContents c = read_journal(path);
  EXPECT_EQ(c.header.plan_sha256, "p");
  EXPECT_EQ(c.header.argv, header.argv);
  ASSERT_TRUE(c.controls.has_value());
  EXPECT_EQ(c.controls->valid, true);
  ASSERT_EQ(c.cases.size(), 1U);
  EXPECT_EQ(c.cases.at("aaaaaaaaaaaa").verdict, Verdict::latent);
  {
    // Reopening drops the torn line before appending, and keeps the first header.
    report::JournalHeader other;
    other.config_sha256 = "other";
    other.plan_sha256 = "other";
    Journal j(path, other);
    j.append_case(record("bbbbbbbbbbbb", 512, 128, Verdict::pass));
  }
  c = read_journal(path);
  EXPECT_EQ(c.cases.size(), 2U);
  EXPECT_EQ(c.header.config_sha256, "c");
  std::filesystem::remove(path);
}

TEST(Journal, CorruptionInTheMiddleIsAnError) {
  const TempDir dir("lp-journal-test-");
  const std::string path = dir.write("bad.jsonl", R"({"type":"header","config_sha256":"c","plan_sha256":"p"})"
                                                  "\n" "garbage\n" R"({"type":"controls","controls":{}})" "\n");
  EXPECT_THROW(read_journal(path), InputError);
  // sweep --resume takes its options from the header alone; the sweep reads the cases.
  EXPECT_EQ(report::read_journal_header(path).plan_sha256, "p");
  const std::string headless = dir.write("headless.jsonl", R"({"type":"case","record":{}})" "\n");
  EXPECT_THROW((void)report::read_journal_header(headless), InputError);
}

/// The one-line message read_journal throws for `text` ("" when it reads fine).
std::string journal_error(const TempDir& dir, const std::string& text) {
  const std::string path = dir.write("j.jsonl", text);
  try {
    (void)read_journal(path);
  } catch (const InputError& e) {
    return std::string(e.what()).substr(path.size());
  }
  return "";
}

TEST(Journal, EveryMalformedJournalIsFileLineMessage) {
  const TempDir dir("lp-journal-test-");
  const std::string header = R"({"type":"header","config_sha256":"c","plan_sha256":"p"})";
  EXPECT_EQ(journal_error(dir, R"({"type":"header","config_sha256":"c","plan_sha256":"p","argv":"sweep"})" "\n"),
            ":1: the header is malformed: /argv: expected a list, got a string");
  EXPECT_EQ(journal_error(dir, header + "\n" R"({"type":"controls"})" "\n"), ":2: missing \"controls\"");
  EXPECT_EQ(journal_error(dir, "[1, 2]\n"), ":1: a journal line is a JSON object, got array");
  EXPECT_EQ(journal_error(dir, "\x7f" "ELF garbage\n"), ":1: not JSON: not a loraprobe journal");
  EXPECT_EQ(journal_error(dir, R"({"type":"case"})" "\n"),
            ":1: the first line is a \"case\" entry, not a loraprobe journal header");
  EXPECT_EQ(journal_error(dir, R"({"type":"header","plan_sha256":"p"})" "\n"),
            ":1: the header is malformed: missing \"config_sha256\"");
  EXPECT_EQ(journal_error(dir, header + "\n" R"({"type":"controls","controls":{"ran":true,"valid":"yes"}})" "\n"),
            ":2: the controls record is malformed: /controls/valid: expected true or false, got \"yes\"");
  EXPECT_EQ(journal_error(dir, header + "\n" R"({"type":"case","record":{"id":5}})" "\n").rfind(
                ":2: the case record is malformed: ", 0),
            0U);
  EXPECT_EQ(journal_error(dir, header + "\n" R"({"type":7})" "\n"), ":2: \"type\" is number, expected a string");
  EXPECT_EQ(journal_error(dir, ""), ": empty: no journal header (not a loraprobe journal)");
  // A folder and a device are refused before they are read (util/files.hpp), and a
  // file without newlines after 16 MiB.
  try {
    (void)read_journal(dir.path());
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), dir.path() + ": cannot read: it is a folder, not a regular file");
  }
  try {
    (void)read_journal("/dev/zero");
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "/dev/zero: cannot read: it is a character device, not a regular file");
  }
  const std::string endless = dir.write("endless.jsonl", std::string((std::size_t{16} << 20) + 1, 'x'));
  try {
    (void)read_journal(endless);
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), endless + ":1: longer than 16777216 bytes without a newline: not a loraprobe journal");
  }
}

TEST(Table, RowsPerConfigurationColumnsPerTokenCount) {
  const std::vector<report::CaseRecord> cases = {
      record("a", 256, 128, Verdict::latent), record("b", 1024, 128, Verdict::fail),
      record("c", 256, 32, Verdict::pass), record("d", 1024, 32, Verdict::timeout)};
  const std::string table = report::format_verdict_table(cases);
  EXPECT_NE(table.find("expand fp32>bf16 r64 h4096 m64n128k32 w4s2 add prebuilt     L     F"), std::string::npos)
      << table;
  EXPECT_NE(table.find("expand fp32>bf16 r64 h4096 m64n32k32 w4s2 add prebuilt      P     t"), std::string::npos)
      << table;
}

TEST(Phases, APhaseTheRunReachedIsReportedByItsNameAndOneItDidNotIsAbsent) {
  Phases p;
  using Seconds = std::map<std::string, double>;
  EXPECT_EQ(p.seconds(), Seconds{});
  p.cases = 1.5;
  p.worker_start = 0.25;
  p.static_inspection_wait = 0.0;  // reached, waited for nothing: said, not dropped
  EXPECT_EQ(p.seconds(), (Seconds{{"cases", 1.5}, {"worker_start", 0.25}, {"static_inspection_wait", 0.0}}));
}

}  // namespace
}  // namespace lp::sweep
