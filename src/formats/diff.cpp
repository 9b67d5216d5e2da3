#include "formats/diff.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "formats/case_index.hpp"
#include "plan/axes.hpp"
#include "report/verdict_table.hpp"
#include "report/report.hpp"
#include "report/verdict.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/json_in.hpp"
#include "util/json_out.hpp"

namespace lp::formats {

using nlohmann::json;

namespace {

/// The verdicts that fail a sweep whatever --fail-on says (FAIL, fault, timeout,
/// compile_error): one of them appearing is a regression. A kernel that stops
/// compiling after an upgrade fails the gate as surely as one that computes wrong.
const std::set<std::string>& failing() {
  static const std::set<std::string> names = [] {
    std::set<std::string> out;
    for (report::Verdict v : report::default_fail_on()) {
      out.insert(std::string(report::to_string(v)));
    }
    return out;
  }();
  return names;
}

/// A case's configuration as the key it is matched by: its axes, the compiler mapped.
std::string key_of(const report::CaseRecord& c, const std::map<std::string, std::string>* mapping) {
  AxisValues axes = c.axes;
  if (mapping != nullptr) {
    if (const auto it = mapping->find(c.axes.text("compiler").value_or("")); it != mapping->end()) {
      axes.set("compiler", it->second);
    }
  }
  return axes.dump();
}

/// The cases of `doc` by configuration (the compiler mapped). The reader refused a
/// report that holds a configuration twice; a repeat here is the mapping's making (two
/// compilers of the old report mapped onto one), refused as the flag's fault: which
/// copy would the other report be compared with?
CaseIndex index(const Document& doc, const std::map<std::string, std::string>* mapping) {
  CaseIndex out(doc.cases, [mapping](const report::CaseRecord& c) { return key_of(c, mapping); });
  if (const auto repeat = out.first_repeat()) {
    const report::CaseRecord again = doc.cases[repeat->first];
    const report::CaseRecord first = doc.cases[repeat->second];
    const std::string compiler = again.axes.text("compiler").value_or("?");
    const std::string mapped = mapping != nullptr && mapping->count(compiler) > 0 ? mapping->at(compiler) : compiler;
    std::vector<std::string> pairs;
    if (mapping != nullptr) {
      for (const auto& [from, to] : *mapping) {
        pairs.push_back(from + "=" + to);
      }
    }
    throw UsageError(fmt::format("--match-compiler {}: cases {} ({}) and {} ({}) of {} are then one configuration, "
                                 "both matched as {}: map each compiler onto one the old report does not run too",
                                 fmt::join(pairs, ","), first.id,
                                 escape::terminal_line(first.axes.text("compiler").value_or("?")), again.id,
                                 escape::terminal_line(compiler), doc.path, escape::terminal_line(mapped)));
  }
  return out;
}

/// Items of one list of a diff with the key they sort by: the lists are in the order of
/// the configurations' keys, whatever order the cases were matched in.
template <class T>
using Keyed = std::vector<std::pair<std::string, T>>;

template <class T>
std::vector<T> by_key(Keyed<T>&& items) {
  std::sort(items.begin(), items.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<T> out;
  out.reserve(items.size());
  for (auto& [key, item] : items) {
    out.push_back(std::move(item));
  }
  return out;
}

DiffCase ref(const report::CaseRecord& c) {
  return {c.id, plan::row_label(c.axes), c.axes.integer("tokens").value_or(0), c.verdict, c.reason};
}

json case_json(const DiffCase& c) {
  return {{"id", c.id}, {"label", c.label}, {"tokens", c.tokens}, {"verdict", report::to_string(c.verdict)},
          {"reason", c.reason}};
}

/// A case's worst deviation over tolerance; NaN for a non-finite one (never within the tolerance).
std::optional<double> deviation(const report::CaseRecord& c) {
  if (!c.metrics) {
    return std::nullopt;
  }
  const double v = c.metrics->worst_dev_over_tolerance;
  return std::isfinite(v) ? v : std::nan("");
}

std::vector<EnvironmentChange> environment_differences(const report::Environment& a, const report::Environment& b) {
  std::vector<EnvironmentChange> out;
  auto compare = [&](const std::string& what, const json& x, const json& y) {
    if (x != y) {
      out.push_back({what, JsonText::of(x), JsonText::of(y)});
    }
  };
  const report::ReportedGpu ga = a.gpu.record().value_or(report::ReportedGpu{});
  const report::ReportedGpu gb = b.gpu.record().value_or(report::ReportedGpu{});
  using GpuText = report::Text report::ReportedGpu::*;
  for (const auto& [key, field] : {std::pair<const char*, GpuText>{"name", &report::ReportedGpu::name},
                                   {"driver_version", &report::ReportedGpu::driver_version},
                                   {"runtime_version", &report::ReportedGpu::runtime_version},
                                   {"cublas_version", &report::ReportedGpu::cublas_version}}) {
    compare(fmt::format("gpu.{}", key), null_if_absent(ga.*field), null_if_absent(gb.*field));
  }
  auto compilers = [](const report::Environment& env) {
    std::set<std::string> names;
    for (const report::Carried<report::ReportedCompiler>& record : env.compilers) {
      const report::ReportedCompiler c = record.record().value_or(report::ReportedCompiler{});
      // 2.x kept sha256 on the record and the version in ptxas's words; 3.x under ptxas, as a version.
      const std::string words = c.version.value_or("?");
      const std::optional<tools::ToolVersion> v = tools::parse_tool_version(words);
      const std::string sha = c.ptxas_sha256().value_or("?");
      names.insert(fmt::format("{} (Triton {}) {} sha256 {}", c.name.value_or(""), c.triton.value_or("-"),
                               v ? v->version : words, sha.substr(0, 12)));
    }
    return names;
  };
  compare("compilers", json(compilers(a)), json(compilers(b)));
  auto tritons = [](const report::Environment& env) {
    std::set<std::string> versions;
    for (const report::KernelSetRecord& s : env.kernel_sets.value_or(std::vector<report::KernelSetRecord>{})) {
      versions.insert(s.triton_version);
    }
    return versions;
  };
  compare("kernel sets (Triton)", json(tritons(a)), json(tritons(b)));
  return out;
}

/// The changes of the matched cases and the cases in one report only, as found, each
/// under its configuration's key.
struct Changes {
  Keyed<VerdictChange> newly_failing;
  Keyed<VerdictChange> newly_latent;
  Keyed<VerdictChange> newly_incompatible;
  Keyed<VerdictChange> fixed;
  Keyed<VerdictChange> now_compilable;
  Keyed<VerdictChange> other_changes;
  Keyed<DeviationChange> deviations;
  Keyed<DiffCase> only_old;
  Keyed<DiffCase> only_new;

  /// Into `d`, each list in its key's order.
  void sort_into(Diff& d) && {
    d.newly_failing = by_key(std::move(newly_failing));
    d.newly_latent = by_key(std::move(newly_latent));
    d.newly_incompatible = by_key(std::move(newly_incompatible));
    d.fixed = by_key(std::move(fixed));
    d.now_compilable = by_key(std::move(now_compilable));
    d.other_changes = by_key(std::move(other_changes));
    d.deviations = by_key(std::move(deviations));
    d.only_old = by_key(std::move(only_old));
    d.only_new = by_key(std::move(only_new));
  }
};

/// What changed between one configuration's old case `o` and its new case `n`.
void compare_cases(const std::string& key, const report::CaseRecord& o, const report::CaseRecord& n, Changes& c) {
  const std::string vo(report::to_string(o.verdict));
  const std::string vn(report::to_string(n.verdict));
  VerdictChange change{ref(o), ref(n)};
  if (vo != vn) {
    if (n.verdict == report::Verdict::incompatible && o.verdict != report::Verdict::skipped &&
        failing().count(vo) == 0) {
      // PASS or LATENT before, and now the compiler cannot read the PTX: the upgrade broke the pairing.
      c.newly_incompatible.emplace_back(key, std::move(change));
    } else if (o.verdict == report::Verdict::incompatible && n.verdict == report::Verdict::pass) {
      c.now_compilable.emplace_back(key, std::move(change));  // judged again: the verdict itself is in the new report
    } else if (failing().count(vn) > 0 && failing().count(vo) == 0) {
      c.newly_failing.emplace_back(key, std::move(change));
    } else if (vn == "LATENT" && vo != "LATENT" && failing().count(vo) == 0) {
      c.newly_latent.emplace_back(key, std::move(change));
    } else if (vn == "PASS" && (vo == "LATENT" || failing().count(vo) > 0)) {
      c.fixed.emplace_back(key, std::move(change));
    } else {
      c.other_changes.emplace_back(key, std::move(change));
    }
  }
  const std::optional<double> dv_old = deviation(o);
  const std::optional<double> dv_new = deviation(n);
  if (dv_old && dv_new && !(std::fabs(*dv_new - *dv_old) <= k_deviation_change)) {
    c.deviations.emplace_back(key, DeviationChange{ref(n), *dv_old, *dv_new});
  }
}

}  // namespace

Diff diff_reports(const Document& a, const Document& b, const DiffOptions& options) {
  for (const Document* d : {&a, &b}) {
    if (d->kind != DocumentKind::report) {
      throw InputError(d->path, "/meta/command", "an inspect document: diff compares two sweep reports");
    }
  }
  // The old report is checked for a repeated configuration first, so that it is the
  // one named when both repeat one; its cases are then matched in file order.
  (void)index(a, &options.match_compiler);
  const CaseIndex news = index(b, nullptr);
  Diff d;
  d.old_path = a.path;
  d.new_path = b.path;
  Changes changes;
  std::vector<bool> matched_new(b.cases.size(), false);
  for (const report::CaseRecord& old : a.cases) {
    std::string key = key_of(old, &options.match_compiler);
    const std::optional<std::size_t> at = news.find(key);
    if (!at) {
      changes.only_old.emplace_back(std::move(key), ref(old));
      continue;
    }
    ++d.matched;
    matched_new[*at] = true;
    compare_cases(key, old, b.cases[*at], changes);
  }
  std::size_t j = 0;
  for (const report::CaseRecord& n : b.cases) {
    if (!matched_new[j++]) {
      changes.only_new.emplace_back(key_of(n, nullptr), ref(n));
    }
  }
  std::move(changes).sort_into(d);
  if (d.matched == 0) {
    throw InputError(b.path, "/cases",
                     fmt::format("no case in common with {} (different plans; --match-compiler OLD=NEW pairs "
                                 "compilers that differ by name)",
                                 a.path));
  }
  d.environment = environment_differences(a.environment, b.environment);
  d.regressed = !d.newly_failing.empty() || !d.newly_incompatible.empty() ||
                (options.latent_fails && !d.newly_latent.empty());
  return d;
}

std::string Diff::json_text() const { return escape::json_c1(to_json().dump(2)) + "\n"; }

json Diff::to_json() const {
  auto changes = [](const std::vector<VerdictChange>& list) {
    json out = json::array();
    for (const VerdictChange& c : list) {
      out.push_back({{"old", case_json(c.before)}, {"new", case_json(c.after)}});
    }
    return out;
  };
  auto cases = [](const std::vector<DiffCase>& list) {
    json out = json::array();
    for (const DiffCase& c : list) {
      out.push_back(case_json(c));
    }
    return out;
  };
  auto dev = [](double v) { return std::isfinite(v) ? json(v) : json("nan/inf"); };
  json moved = json::array();
  for (const DeviationChange& m : deviations) {
    moved.push_back({{"case", case_json(m.after)}, {"old", dev(m.before)}, {"new", dev(m.now)}});
  }
  json env = json::array();
  for (const EnvironmentChange& e : environment) {
    env.push_back({{"what", e.what}, {"old", e.before.value()}, {"new", e.now.value()}});
  }
  return {{"matched", matched},
          {"newly_failing", changes(newly_failing)},
          {"newly_latent", changes(newly_latent)},
          {"newly_incompatible", changes(newly_incompatible)},
          {"fixed", changes(fixed)},
          {"now_compilable", changes(now_compilable)},
          {"other_changes", changes(other_changes)},
          {"deviations", std::move(moved)},
          {"only_old", cases(only_old)},
          {"only_new", cases(only_new)},
          {"environment", std::move(env)},
          {"regressed", regressed},
          {"old", old_path},
          {"new", new_path}};
}

namespace {

/// ": <the reason's first line>" (a compiler's log has many), or "" for none.
std::string one_line(const std::string& reason) {
  if (reason.empty()) {
    return "";
  }
  const std::size_t end = reason.find('\n');
  return ": " + (end == std::string::npos ? reason : reason.substr(0, end) + " [...]");
}

}  // namespace

std::string Diff::text() const {
  std::string out = fmt::format("diff: {} case(s) matched between {} and {}\n", matched, old_path, new_path);
  auto changes = [&](const std::vector<VerdictChange>& list, const std::string& title) {
    out += fmt::format("{}: {}\n", title, list.size());
    for (const VerdictChange& c : list) {
      out += fmt::format("  {} -> {}  case {} ({}, {} tokens){}\n", report::to_string(c.before.verdict),
                         report::to_string(c.after.verdict), c.after.id, c.after.label, c.after.tokens,
                         one_line(c.after.reason));
    }
  };
  auto cases = [&](const std::vector<DiffCase>& list, const std::string& title) {
    out += fmt::format("{}: {}\n", title, list.size());
    for (const DiffCase& c : list) {
      out += fmt::format("  case {} ({}, {} tokens): {}\n", c.id, c.label, c.tokens, report::to_string(c.verdict));
    }
  };
  auto dev = [](double v) { return std::isfinite(v) ? nlohmann::json(v).dump() : std::string("\"nan/inf\""); };
  changes(newly_failing, "newly failing (FAIL, fault, timeout, compile_error)");
  changes(newly_latent, "newly LATENT");
  changes(newly_incompatible, "newly incompatible (the compiler no longer reads the PTX)");
  changes(fixed, "fixed (now PASS)");
  changes(now_compilable, "now compilable (incompatible before)");
  changes(other_changes, "other verdict changes");
  out += fmt::format("deviations that moved by more than {} of the tolerance: {}\n", k_deviation_change,
                     deviations.size());
  for (const DeviationChange& m : deviations) {
    out += fmt::format("  case {} ({}, {} tokens): worst deviation over tolerance {} -> {}\n", m.after.id,
                       m.after.label, m.after.tokens, dev(m.before), dev(m.now));
  }
  cases(only_old, "only in the old report");
  cases(only_new, "only in the new report");
  out += fmt::format("environment differences: {}\n", environment.size());
  for (const EnvironmentChange& e : environment) {
    out += fmt::format("  {}: {} -> {}\n", e.what, e.before.text(), e.now.text());
  }
  out += regressed ? "regressed: yes (exit 1)\n" : "regressed: no\n";
  return out;
}

}  // namespace lp::formats
