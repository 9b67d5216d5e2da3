#include "report/report.hpp"

#include <chrono>
#include <ctime>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/metrics_json.hpp"
#include "report/compact.hpp"
#include "report_schema_version.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"

namespace lp::report {

using nlohmann::json;

std::string_view schema_version() { return k_report_schema_version; }

std::string_view to_string(Detail detail) { return detail == Detail::compact ? "compact" : "full"; }

std::optional<Detail> parse_detail(std::string_view text) {
  if (text == "compact") {
    return Detail::compact;
  }
  if (text == "full") {
    return Detail::full;
  }
  return std::nullopt;
}

namespace {

/// How much a failing verdict says about the kernel, for the minimal failure: wrong
/// numbers first, then a kernel that ran and broke, then a hazard not yet seen, then
/// what was not judged, and a case that was not even built last (issue 53: a
/// compile_error at 16 tokens was picked over a FAIL at 384).
int evidence_rank(Verdict v) {
  switch (v) {
    case Verdict::fail:
      return 0;
    case Verdict::fault:
    case Verdict::timeout:
      return 1;
    case Verdict::latent:
      return 2;
    case Verdict::incomplete:
      return 3;
    case Verdict::skipped:
      return 4;
    case Verdict::compile_error:
      return 5;
    case Verdict::pass:
    case Verdict::incompatible:
      break;
  }
  return 6;
}

}  // namespace

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::clean:
      break;
    case Outcome::failures:
      return "failures";
    case Outcome::invalid_controls:
      return "invalid_controls";
    case Outcome::interrupted:
      return "interrupted";
    case Outcome::nothing_compatible:
      return "nothing_compatible";
  }
  return "clean";
}

Summary summarize(const CaseStore& cases, const std::set<Verdict>& fail_on, bool controls_valid) {
  Summary s;
  auto axis_int = [](const AxisValues& axes, const char* key) { return axes.integer(key).value_or(0); };
  std::tuple<int, std::int64_t, std::int64_t> best_key;  // the minimal failure's (evidence, tokens, rank)
  std::size_t i = 0;
  for (const CaseRecord& c : cases) {
    const std::size_t at = i++;
    ++s.counts[c.verdict];
    if (c.verdict == Verdict::latent && !s.first_latent) {
      s.first_latent = at;
    }
    if (fail_on.count(c.verdict) == 0) {
      continue;
    }
    if (!s.first_failure) {
      s.first_failure = at;
    }
    const auto key = std::make_tuple(evidence_rank(c.verdict), axis_int(c.axes, "tokens"), axis_int(c.axes, "rank"));
    if (!s.minimal_failure || key < best_key) {
      s.minimal_failure = at;
      best_key = key;
    }
  }
  if (!controls_valid) {
    s.outcome = Outcome::invalid_controls;
    s.exit_code = 3;
  } else if (const auto x = s.counts.find(Verdict::incompatible); x != s.counts.end() && x->second == cases.size()) {
    s.outcome = Outcome::nothing_compatible;
    s.exit_code = 3;
  } else if (s.first_failure) {
    s.outcome = Outcome::failures;
    s.exit_code = 1;
  }
  return s;
}

Summary Report::summary() const {
  Summary s = summarize(cases, fail_on, controls.trusted());
  if (stopped_by_signal) {
    s.outcome = Outcome::interrupted;  // the exit code stays the cases' (main's is 128 + the signal)
  }
  return s;
}

void Report::stop(std::string why, bool by_signal) {
  if (!stopped) {
    stopped = std::move(why);
    stopped_by_signal = by_signal;
  }
}

namespace {

/// The report as JSON, its cases block given (full records, or a compact table whole or
/// without its rows).
json report_json(const Report& r, json case_list) {
  const Summary s = r.summary();
  const CaseStore& cases = r.cases;
  json counts = json::object();
  for (const auto& [verdict, n] : s.counts) {
    counts[std::string(to_string(verdict))] = n;
  }
  auto ref = [&](const std::optional<std::size_t>& i) { return i ? cases[*i].to_ref() : json(); };
  const std::string outcome(to_string(s.outcome));
  const Detail detail = r.detail;
  json m = r.meta.to_json();
  m["detail"] = to_string(detail);
  m["interrupted"] = r.stopped ? json(*r.stopped) : json();
  json fail_on_list = json::array();
  for (Verdict v : r.fail_on) {
    fail_on_list.push_back(to_string(v));
  }
  m["fail_on"] = std::move(fail_on_list);
  json variant_list = json::array();
  for (const VariantRecord& v : r.variants) {
    variant_list.push_back(v.to_json());
  }
  json interned;
  if (detail == Detail::compact) {
    interned = intern_variants(variant_list);
  }
  json j = {{"schema_version", schema_version()},
          {"meta", std::move(m)},
          {"environment", r.environment.to_json()},
          {"tolerances", r.tolerances.to_json()},
          {"controls", r.controls.to_json()},
          {"cases", std::move(case_list)},
          {"variants", std::move(variant_list)},
          {"summary",
           {{"counts", std::move(counts)},
            {"first_failure", ref(s.first_failure)},
            {"minimal_failure", ref(s.minimal_failure)},
            {"first_latent", ref(s.first_latent)},
            {"exit_code", s.exit_code},
            {"outcome", outcome}}}};
  if (detail == Detail::compact) {
    j["interned"] = std::move(interned);
  }
  if (r.remedies) {
    j["remedies"] = r.remedies->to_json();
  }
  return j;
}

}  // namespace

json Report::to_json() const {
  if (detail == Detail::compact) {
    return report_json(*this, compact_cases(cases));
  }
  json list = json::array();
  for (const CaseRecord& c : cases) {
    list.push_back(c.to_json());
  }
  return report_json(*this, std::move(list));
}

std::string Report::dump() const {
  std::string out;
  dump([&](std::string_view piece) { out.append(piece); });
  return out;
}

void Report::dump(const TextSink& to) const {
  const TextSink sink = escape::json_c1_sink(to);  // C1 controls as \u escapes: inert on a terminal
  if (detail == Detail::full) {
    dump_full_report(report_json(*this, json::array()), cases, sink);
    return;
  }
  // The rows are written one at a time, never a JSON tree of them all.
  const CompactCases table(cases);
  dump_compact_report(report_json(*this, table.header()), table, sink);
}

void Report::write(const std::string& path) const {
  try {
    write_file_atomic(path, [&](const TextSink& sink) { dump(sink); });
  } catch (const EnvironmentError& e) {  // a full disk, a read-only folder, a device
    throw EnvironmentError(fmt::format("the report could not be written: {}", e.what()));
  }
}

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

}  // namespace lp::report
