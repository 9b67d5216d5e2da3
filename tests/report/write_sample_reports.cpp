// Writes reports covering every verdict and outcome into the folder argv[1], for
// validate_reports.py to check against configs/schema/report.schema.json.

#include <cstdio>
#include <string>

#include <fmt/format.h>

#include <limits>
#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "report/environment.hpp"
#include "report/report.hpp"
#include "verify/compare.hpp"

using lp::report::CaseRecord;
using lp::report::Report;
using lp::report::Verdict;

namespace {

CaseRecord sample_case(std::size_t index, Verdict verdict) {
  CaseRecord c;
  c.index = index;
  c.id = fmt::format("{:012x}", 0xabc000 + index);
  c.axes = lp::AxisValues::from_json(nlohmann::json{{"op", "expand"}, {"tokens", 256 * (index + 1)}, {"rank", 64}, {"block_n", 128}});
  c.variant = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1";
  c.verdict = verdict;
  if (verdict != Verdict::pass) {
    c.reason = fmt::format("sample {}", lp::report::to_string(verdict));
  }
  if (verdict == Verdict::pass || verdict == Verdict::fail || verdict == Verdict::latent) {
    c.runs = 5;
    c.failed_runs = verdict == Verdict::fail ? 5 : 0;
    // The metrics as the worker measures them (model/metrics_json.hpp writes them).
    lp::CompareMetrics m;
    m.elements = 1048576;
    m.nan = verdict == Verdict::fail ? 12 : 0;
    m.mismatches = verdict == Verdict::fail ? 40 : 0;
    m.max_abs_dev = 0.0019;
    m.max_rel_dev = 0.004;
    m.worst_dev_over_tolerance = verdict == Verdict::fail ? std::numeric_limits<double>::infinity() : 0.2;
    if (verdict == Verdict::fail) {
      lp::BadElement bad;
      bad.token = 300;
      bad.column = 17;
      bad.expected = 0.25;
      bad.actual = std::numeric_limits<double>::quiet_NaN();
      bad.expected_bits = 0x3e80;
      bad.actual_bits = 0x7fff;
      bad.dtype = lp::DType::bf16;
      m.first_bad = bad;
    }
    m.failing_tiles = verdict == Verdict::fail ? 3 : 0;
    m.total_tiles = 64;
    m.atol = 2.4e-5;
    m.rtol = 0.0156;
    m.tolerance_why = "sample";
    c.metrics = m;
    lp::CaseTiming timing;
    timing.kernel_ms = 0.05;
    timing.reference_ms = 0.04;
    timing.bytes = 8 << 20;
    c.timing = timing;
    c.static_findings = verdict == Verdict::latent ? 4 : 0;
  }
  return c;
}

Report base_report() {
  Report r;
  r.meta.version = "0.1.0";
  r.meta.git_sha = "0123456789ab";
  r.meta.argv = {"loraprobe", "sweep"};
  r.meta.started_at = lp::report::utc_now_iso8601();
  r.meta.finished_at = lp::report::utc_now_iso8601();
  r.meta.config = lp::JsonText::of({{"name", "sample"}});
  r.meta.config_sha256 = std::string(64, 'a');
  r.meta.seed = 48590;
  r.meta.repeats = 5;
  r.meta.plan.cases = 8;
  r.meta.plan.combinations = 8;
  // The compiler records as a sweep writes them (compile::CompilerRecord::to_json).
  std::vector<lp::report::Carried<lp::report::ReportedCompiler>> compilers;
  lp::compile::CompilerRecord prebuilt;
  prebuilt.compiler = lp::compile::Compiler::prebuilt();
  prebuilt.triton = "3.6.0";
  prebuilt.ptxas = lp::compile::PtxasInfo{"triton", "", "12.8.93", std::string(64, 'a')};
  prebuilt.version = "12.8.93";
  prebuilt.options = std::vector<std::string>{"-lineinfo", "-v", "--gpu-name=sm_90a"};
  compilers.push_back(lp::JsonText::of(prebuilt.to_json()));
  lp::compile::CompilerRecord missing;
  missing.compiler = lp::compile::Compiler::with_ptxas("13.9");
  missing.triton = "3.6.0";
  missing.error = "ptxas=13.9: not installed";
  compilers.push_back(lp::JsonText::of(missing.to_json()));
  r.environment.host = lp::JsonText::of(lp::report::host_record().to_json());
  r.environment.toolkit = lp::JsonText::of({{"version", "13.0"}});
  r.environment.compilers = compilers;
  r.environment.no_gpu_reason = "sample";
  r.tolerances.model = "|a - e| <= atol + rtol * |e|";
  lp::report::ToleranceTableRow row;
  row.op = "expand";
  row.output_dtype = "bf16";
  row.k = 64;
  row.atol = 2.4e-5;
  row.rtol = 0.0156;
  r.tolerances.table = {row};
  r.tolerances.overrides["bf16"] = {0.004, 0.016, "file sample.json"};
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
  all.controls.ran = true;
  all.controls.valid = true;
  all.controls.sets = {{"3.6.0", true, sample_case(100, Verdict::fail), sample_case(101, Verdict::pass), std::nullopt}};
  lp::report::VariantRecord variant;
  variant.variant = "expand-fp32-bf16-m64n128k32-w4s2-evenk-add-s1";
  variant.triton = "3.6.0";
  variant.compiler = "prebuilt";
  all.variants = {variant};
  all.write(dir + "/all-verdicts.json");
  all.detail = lp::report::Detail::full;  // the same report with one record per case
  all.write(dir + "/all-verdicts-full.json");

  Report clean = base_report();
  clean.cases = {sample_case(0, Verdict::pass)};
  clean.write(dir + "/clean.json");

  Report invalid = base_report();
  invalid.controls.ran = true;
  invalid.controls.valid = false;
  invalid.controls.sets = {
      {"3.6.0", false, sample_case(100, Verdict::pass), std::nullopt, "the positive control passed"}};
  invalid.controls.reason = "Triton 3.6.0: the positive control passed";
  invalid.write(dir + "/invalid-controls.json");

  Report empty = base_report();
  empty.write(dir + "/empty.json");
  return 0;
}
