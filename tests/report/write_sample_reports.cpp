// Writes reports covering every verdict and outcome into the folder argv[1], for
// validate_reports.py to check against configs/schema/report.schema.json.

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "report/environment.hpp"
#include "report/report.hpp"

using lp::report::CaseRecord;
using lp::report::Report;
using lp::report::Verdict;

namespace {

CaseRecord sample_case(std::size_t index, Verdict verdict) {
  CaseRecord c;
  c.index = index;
  c.id = fmt::format("{:012x}", 0xabc000 + index);
  c.axes = {{"op", "expand"}, {"tokens", 256 * (index + 1)}, {"rank", 64}, {"block_n", 128}};
  c.variant = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1";
  c.verdict = verdict;
  if (verdict != Verdict::pass) {
    c.reason = fmt::format("sample {}", lp::report::to_string(verdict));
  }
  if (verdict == Verdict::pass || verdict == Verdict::fail || verdict == Verdict::latent) {
    c.runs = 5;
    c.failed_runs = verdict == Verdict::fail ? 5 : 0;
    c.metrics = {{"elements", 1048576},
                 {"nan", verdict == Verdict::fail ? 12 : 0},
                 {"inf", 0},
                 {"unwritten", nullptr},
                 {"untouched_rows_written", 0},
                 {"mismatches", verdict == Verdict::fail ? 40 : 0},
                 {"max_abs_dev", 0.0019},
                 {"max_rel_dev", 0.004},
                 {"worst_dev_over_tolerance", 0.2},
                 {"first_bad", verdict == Verdict::fail
                                   ? nlohmann::json{{"token", 300}, {"column", 17}, {"expected", 0.25}, {"actual", "nan"}}
                                   : nlohmann::json()},
                 {"failing_tiles", verdict == Verdict::fail ? 3 : 0}};
    c.timing = {{"kernel_ms", 0.05}, {"reference_ms", 0.04}, {"bytes", 8 << 20}, {"bandwidth_gb_s", 160.0}};
    c.static_findings = verdict == Verdict::latent ? 4 : 0;
  }
  return c;
}

Report base_report() {
  Report r;
  r.meta = {{"tool", "loraprobe"},
            {"version", "0.1.0"},
            {"git_sha", "0123456789ab"},
            {"argv", {"loraprobe", "sweep"}},
            {"started_at", lp::report::utc_now_iso8601()},
            {"finished_at", lp::report::utc_now_iso8601()},
            {"config", {{"name", "sample"}}},
            {"config_sha256", std::string(64, 'a')},
            {"seed", 48590},
            {"repeats", 5},
            {"plan", {{"cases", 8}, {"combinations", 8}}}};
  r.environment = {{"host", lp::report::host_record()},
                   {"toolkit", {{"version", "13.0"}}},
                   {"compilers", {{{"name", "prebuilt"}, {"kind", "prebuilt"}, {"version", "12.8.93"}}}},
                   {"gpu", nullptr},
                   {"no_gpu_reason", "sample"}};
  r.tolerances = {{"model", "|a - e| <= atol + rtol * |e|"},
                  {"table", {{{"op", "expand"}, {"output_dtype", "bf16"}, {"k", 64}, {"atol", 2.4e-5}, {"rtol", 0.0156}}}},
                  {"overrides", {{"bf16", {{"atol", 0.004}, {"rtol", 0.016}, {"origin", "file sample.json"}}}}}};
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  Report all = base_report();
  std::size_t i = 0;
  for (Verdict v : {Verdict::pass, Verdict::fail, Verdict::latent, Verdict::incomplete, Verdict::fault, Verdict::timeout,
                    Verdict::compile_error, Verdict::skipped}) {
    all.cases.push_back(sample_case(i++, v));
  }
  all.controls = {{"ran", true},
                  {"valid", true},
                  {"sets", {{{"triton", "3.6.0"}, {"valid", true}, {"positive", sample_case(100, Verdict::fail).to_json()},
                             {"negative", sample_case(101, Verdict::pass).to_json()}}}}};
  all.variants = {{{"variant", "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1"}, {"triton", "3.6.0"},
                   {"compiler", "prebuilt"}, {"sass", nullptr}}};
  all.write(dir + "/all-verdicts.json");

  Report clean = base_report();
  clean.cases = {sample_case(0, Verdict::pass)};
  clean.write(dir + "/clean.json");

  Report invalid = base_report();
  invalid.controls = {{"ran", true},
                      {"valid", false},
                      {"sets", {{{"triton", "3.6.0"}, {"valid", false},
                                 {"positive", sample_case(100, Verdict::pass).to_json()}, {"negative", nullptr},
                                 {"reason", "the positive control passed"}}}},
                      {"reason", "Triton 3.6.0: the positive control passed"}};
  invalid.write(dir + "/invalid-controls.json");

  Report empty = base_report();
  empty.write(dir + "/empty.json");
  return 0;
}
