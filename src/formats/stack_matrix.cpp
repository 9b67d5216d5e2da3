#include "formats/stack_matrix.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/verdict.hpp"
#include "util/escape.hpp"

namespace lp::formats {

using report::Verdict;

namespace {

std::size_t index_of(std::vector<std::string>& list, const std::string& value) {
  const auto it = std::find(list.begin(), list.end(), value);
  if (it != list.end()) {
    return static_cast<std::size_t>(it - list.begin());
  }
  list.push_back(value);
  return list.size() - 1;
}

/// How bad a verdict is for its pairing; lower is worse (StackOutcome's order).
StackOutcome outcome_of(Verdict v) {
  switch (v) {
    case Verdict::fail:
      return StackOutcome::fail;
    case Verdict::fault:
    case Verdict::timeout:
    case Verdict::compile_error:
    case Verdict::incomplete:
      return StackOutcome::error;
    case Verdict::latent:
      return StackOutcome::hazard;
    case Verdict::pass:
      return StackOutcome::clean;
    case Verdict::incompatible:
      return StackOutcome::incompatible;
    case Verdict::skipped:
      return StackOutcome::not_run;
  }
  return StackOutcome::not_run;
}

/// The version of the ptxas a compiler record names for (name, triton), "" when none.
std::string compiler_version(const std::vector<CompilerView>& compilers, const std::string& name,
                             const std::string& triton) {
  for (const CompilerView& c : compilers) {
    if (c.name == name && (triton.empty() || c.triton == triton)) {
      return c.version;
    }
  }
  return "";
}

/// Per remedy of one row: in how many hazardous cases it was measured, in how many clean,
/// and the range of its cost.
struct RemedyTally {
  std::size_t measured = 0;
  std::size_t clean = 0;
  double min_cost = std::numeric_limits<double>::infinity();
  double max_cost = 0.0;
};

std::string remedy_sentence(const Document& doc, const std::string& triton) {
  if (!doc.remedies) {
    return "no remedy measured: run the sweep with --remedies to measure them";
  }
  // The Triton set of each hazardous case (of those only: a report may hold a million cases).
  std::map<std::string, std::string> triton_of_case;
  for (const report::HazardRemedies& h : doc.remedies->hazards) {
    triton_of_case.emplace(h.case_id, "");
  }
  std::set<std::string> found;
  for (const report::CaseRecord& c : doc.cases) {
    if (const auto it = triton_of_case.find(c.id); it != triton_of_case.end() && found.insert(c.id).second) {
      it->second = c.axes.text("triton").value_or("");
    }
  }
  std::erase_if(triton_of_case, [&](const auto& entry) { return found.count(entry.first) == 0; });
  std::map<std::string, RemedyTally> tally;
  std::vector<std::string> order;
  for (const report::HazardRemedies& h : doc.remedies->hazards) {
    const auto it = triton_of_case.find(h.case_id);
    if (it == triton_of_case.end() || it->second != triton) {
      continue;
    }
    for (const report::RemedyRecord& r : h.remedies) {
      if (tally.count(r.remedy) == 0) {
        order.push_back(r.remedy);
      }
      RemedyTally& t = tally[r.remedy];
      ++t.measured;
      if (r.verdict == report::Verdict::pass && r.static_findings == 0) {
        ++t.clean;
        if (r.cost) {
          t.min_cost = std::min(t.min_cost, *r.cost);
          t.max_cost = std::max(t.max_cost, *r.cost);
        }
      }
    }
  }
  const std::string* best = nullptr;
  for (const std::string& name : order) {
    const RemedyTally& t = tally[name];
    if (t.measured == 0 || t.clean != t.measured) {
      continue;
    }
    if (best == nullptr || t.max_cost < tally[*best].max_cost) {
      best = &name;
    }
  }
  if (best == nullptr) {
    return "no remedy measured clean in this run";
  }
  const RemedyTally& t = tally[*best];
  const std::string cost = std::isfinite(t.min_cost)
                               ? fmt::format(", {:.2g}-{:.2g}x the kernel time", t.min_cost, t.max_cost)
                               : std::string(", kernel time not measured");
  return fmt::format("cheapest remedy measured clean: {} (in {} of {} hazardous case(s){})", *best, t.clean,
                     t.measured, cost);
}

}  // namespace

std::string StackCell::text() const {
  switch (outcome) {
    case StackOutcome::fail:
      return "FAIL";
    case StackOutcome::error:
      return "error";
    case StackOutcome::hazard:
      return attribution == "ptx" ? "hazard (PTX)" : attribution == "ptxas" ? "hazard (ptxas)" : "hazard";
    case StackOutcome::clean:
      return "clean";
    case StackOutcome::incompatible:
      return "incompatible";
    case StackOutcome::not_run:
      return "not run";
  }
  return "?";
}

namespace {

/// One case or inspected cubin: its pairing and what it came to.
struct Observation {
  std::string triton;
  std::string compiler;
  StackOutcome outcome = StackOutcome::not_run;
  std::string attribution;
};

/// Calls f(observation) for each case or inspected cubin of `doc`, in its order, one at
/// a time (a million-case report's observations are never all held).
template <class F>
void for_each_observation(const Document& doc, F&& f) {
  if (doc.kind == DocumentKind::report) {
    for (const report::CaseRecord& c : doc.cases) {
      f(Observation{c.axes.text("triton").value_or("?"), c.axes.text("compiler").value_or("?"), outcome_of(c.verdict),
                    c.attribution.value_or("")});
    }
    return;
  }
  // An inspect document of the kernel sets: each cubin's static outcome (files have no Triton set).
  for (const InspectItem& item : doc.inspect.items) {
    const std::string triton = item.triton.value_or("");
    if (triton.empty()) {
      continue;
    }
    const std::string status = item.status.value_or("");
    const StackOutcome o = status == "hazard"         ? StackOutcome::hazard
                           : status == "clean"        ? StackOutcome::clean
                           : status == "incompatible" ? StackOutcome::incompatible
                                                      : StackOutcome::error;
    f(Observation{triton, item.compiler.value_or(""), o, item.attribution.value_or("")});
  }
}

/// The worst outcome per pairing; a hazard's fault: the PTX's when any of its cases says so.
void fill_cells(const Document& doc, std::vector<std::string>& tritons, StackMatrix& m) {
  for_each_observation(doc, [&](const Observation& o) {
    StackCell& cell = m.rows[index_of(tritons, o.triton)].cells[index_of(m.compilers, o.compiler)];
    ++cell.cases;
    if (o.outcome < cell.outcome) {
      cell.outcome = o.outcome;
      cell.attribution.clear();
    }
    if (o.outcome == StackOutcome::hazard && cell.outcome == StackOutcome::hazard && !o.attribution.empty() &&
        cell.attribution != "ptx") {
      cell.attribution = o.attribution;
    }
  });
}

/// The answer's three lists, each pairing in the first it belongs to.
struct Answer {
  std::vector<std::string> failing;
  std::vector<std::string> fixed;
  std::vector<std::string> hazardous;

  [[nodiscard]] std::string sentence() const {
    std::vector<std::string> parts;
    if (!failing.empty()) {
      parts.push_back(fmt::format("Wrong or no results: {}.", fmt::join(failing, "; ")));
    }
    parts.push_back(fixed.empty() ? std::string("Fixed: no pairing this run covered.")
                                  : fmt::format("Fixed: {}.", fmt::join(fixed, "; ")));
    if (!hazardous.empty()) {
      parts.push_back(fmt::format("Hazardous: {}.", fmt::join(hazardous, "; ")));
    }
    return fmt::format("{}", fmt::join(parts, " "));
  }
};

/// One row's part of the answer; whether it has a hazard or a failure.
bool answer_row(const StackMatrix& m, const StackRow& row, Answer& answer) {
  std::vector<std::string> bad;
  std::vector<std::string> good;
  std::set<std::string> faults;
  bool hazard_or_fail = false;
  for (std::size_t i = 0; i < row.cells.size(); ++i) {
    const StackCell& cell = row.cells[i];
    const std::string with = m.compilers[i] == "prebuilt"
                                 ? (row.own_ptxas.empty() ? std::string("its own ptxas")
                                                          : "its own ptxas " + row.own_ptxas)
                                 : m.labels[i];
    if (cell.outcome == StackOutcome::fail || cell.outcome == StackOutcome::error) {
      answer.failing.push_back(fmt::format("Triton {} with {} ({})", row.triton, with, cell.text()));
      hazard_or_fail = true;
    } else if (cell.outcome == StackOutcome::hazard) {
      bad.push_back(with);
      faults.insert(cell.attribution);
      hazard_or_fail = true;
    } else if (cell.outcome == StackOutcome::clean) {
      good.push_back(with);
    }
  }
  if (!good.empty()) {
    answer.fixed.push_back(fmt::format("Triton {} with {}", row.triton, fmt::join(good, " or ")));
  }
  if (!bad.empty()) {
    // Whose fault, and so what fixes it: the version is report::k_fixing_ptxas's, written once.
    const std::string fault = faults == std::set<std::string>{"ptx"}     ? "made by the PTX: no ptxas fixes it"
                              : faults == std::set<std::string>{"ptxas"} ? "made by ptxas: " + report::ptxas_fix_text()
                                                                         : "made by the PTX or ptxas";
    answer.hazardous.push_back(fmt::format("Triton {} with {}, {}", row.triton, fmt::join(bad, " or "), fault));
  }
  return hazard_or_fail;
}

}  // namespace

StackMatrix stack_matrix(const Document& doc) {
  StackMatrix m;
  std::vector<std::string> tritons;
  for_each_observation(doc, [&](const Observation& o) {
    (void)index_of(tritons, o.triton);
    (void)index_of(m.compilers, o.compiler);
  });
  if (tritons.empty()) {
    return m;
  }
  const std::vector<CompilerView>& compilers = doc.compilers;
  for (const std::string& name : m.compilers) {
    const std::string version = compiler_version(compilers, name, "");
    m.labels.push_back(name == "prebuilt" ? std::string("Triton's own ptxas")
                                          : version.empty() ? name : fmt::format("{} ({})", name, version));
  }
  for (const std::string& t : tritons) {
    StackRow row;
    row.triton = t;
    row.own_ptxas = compiler_version(compilers, "prebuilt", t);
    row.cells.resize(m.compilers.size());
    m.rows.push_back(std::move(row));
  }
  fill_cells(doc, tritons, m);
  // The answer: failures first, then what is fixed, then what is hazardous and whose fault.
  Answer answer;
  for (StackRow& row : m.rows) {
    if (answer_row(m, row, answer) && doc.kind == DocumentKind::report) {
      row.remedy = remedy_sentence(doc, row.triton);
    }
  }
  m.answer = answer.sentence();
  return m;
}

std::string StackMatrix::text() const {
  if (empty()) {
    return "";
  }
  // Every value may come from a document or a flag: one line each, nothing a terminal obeys.
  const auto t = [](const std::string& s) { return escape::terminal_line(s); };
  std::vector<std::string> row_labels;
  std::size_t first = std::string("Triton").size();
  for (const StackRow& row : rows) {
    row_labels.push_back(t(row.own_ptxas.empty() ? row.triton : fmt::format("{} (own ptxas {})", row.triton, row.own_ptxas)));
    first = std::max(first, row_labels.back().size());
  }
  std::vector<std::size_t> widths;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    std::size_t w = t(labels[i]).size();
    for (const StackRow& row : rows) {
      w = std::max(w, row.cells[i].text().size());
    }
    widths.push_back(w);
  }
  const auto line = [&](const std::string& head, auto cell) {
    std::string out = fmt::format("{:<{}}", head, first);
    for (std::size_t i = 0; i < labels.size(); ++i) {
      out += i + 1 < labels.size() ? fmt::format("  {:<{}}", cell(i), widths[i]) : "  " + cell(i);
    }
    return out + "\n";
  };
  std::string out = line("Triton", [&](std::size_t i) { return t(labels[i]); });
  for (std::size_t r = 0; r < rows.size(); ++r) {
    out += line(row_labels[r], [&](std::size_t i) { return rows[r].cells[i].text(); });
  }
  out += t(answer) + "\n";
  for (const StackRow& row : rows) {
    if (!row.remedy.empty()) {
      out += fmt::format("  Triton {}: {}\n", t(row.triton), t(row.remedy));
    }
  }
  return out;
}

}  // namespace lp::formats
