#include "sweep/output_files.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "plan/axes.hpp"
#include "report/verdict_table.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::sweep {

using nlohmann::json;
using report::CaseRecord;

namespace {

std::string default_report_path() {
  std::string stamp = report::utc_now_iso8601();
  std::erase(stamp, ':');
  std::erase(stamp, '-');
  return fmt::format("loraprobe-report-{}.json", stamp);
}

}  // namespace

std::string report_path_for(const SweepRequest& request) {
  if (!request.out.empty()) {
    return request.out;
  }
  return request.resume.empty() ? default_report_path()
                                : std::filesystem::path(request.resume).replace_extension(".json").string();
}

std::string journal_path_for(const std::string& report_path) {
  const std::filesystem::path p(report_path);
  return (p.parent_path() / (p.stem().string() + ".jsonl")).string();
}

void keep_earlier_files(const SweepRequest& request, const std::string& out, const std::string& journal_path,
                        bool act) {
  std::error_code ec;
  auto keep = [&](const std::string& path) {
    if (!act) {
      return;
    }
    const std::string bak = path + ".bak";
    std::filesystem::rename(path, bak, ec);
    if (ec) {
      throw UsageError(fmt::format("{}: cannot keep it as {}: {}", path, bak, ec.message()));
    }
    fmt::print(stderr, "sweep: kept the earlier {} as {}\n", path, bak);
  };
  if (!request.resume.empty()) {
    if (std::filesystem::exists(out, ec)) {
      keep(out);
    }
    return;
  }
  for (const std::string& path : {journal_path, out}) {
    if (!std::filesystem::exists(path, ec)) {
      continue;
    }
    if (!request.force) {
      throw UsageError(fmt::format("{}: exists, from an earlier sweep; continue that sweep with --resume {}, or "
                                   "pass --force to start afresh (the earlier files are kept as .bak)",
                                   path, journal_path));
    }
    keep(path);
  }
}

report::JournalHeader journal_header(const plan::Plan& plan, const report::Meta& meta, const SweepRequest& request) {
  std::string ids;
  for (const plan::Case& c : plan.cases) {
    ids += c.id;
  }
  report::JournalHeader h;
  h.schema_version = report::schema_version();
  h.version = meta.version;
  h.git_sha = meta.git_sha;
  h.kernel_sets = meta.kernel_sets.value_or(std::vector<report::KernelSetRecord>{});
  for (const report::Verdict v : request.fail_on) {
    h.fail_on.emplace_back(report::to_string(v));
  }
  h.config_sha256 = meta.config_sha256;  // sha256 of the resolved config (meta_record)
  h.plan_sha256 = sha256_hex(ids);
  h.argv = request.argv;
  h.started_at = report::utc_now_iso8601();
  h.cases = plan.cases.size();
  h.shard = meta.shard;
  return h;
}

void print_summary(const report::Report& report, const std::string& out) {
  const report::Summary s = report.summary();
  const std::string counts = report::counts_text(s.counts);
  fmt::print("cases: {}\n", counts.empty() ? "none" : counts);
  if (s.first_failure) {
    const CaseRecord& c = report.cases[*s.first_failure];
    fmt::print("first failure: case {} ({}, {} tokens): {} {}\n", c.id, plan::row_label(c.axes),
               c.axes.integer("tokens").value_or(0), report::to_string(c.verdict), c.reason);
  }
  if (s.minimal_failure) {
    const CaseRecord& c = report.cases[*s.minimal_failure];
    fmt::print("minimal failure: case {} ({}, {} tokens)\n", c.id, plan::row_label(c.axes), c.axes.integer("tokens").value_or(0));
  }
  if (s.first_latent) {
    const CaseRecord& c = report.cases[*s.first_latent];
    fmt::print("first latent: case {} ({}, {} tokens): {}\n", c.id, plan::row_label(c.axes), c.axes.integer("tokens").value_or(0),
               c.reason);
  }
  fmt::print("report: {}\n", out);
}

}  // namespace lp::sweep
