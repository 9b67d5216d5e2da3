#include "formats/summary.hpp"

#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "plan/axes.hpp"
#include "report/verdict_table.hpp"
#include "formats/stack_matrix.hpp"
#include "formats/view.hpp"
#include "util/escape.hpp"

namespace lp::formats {


namespace {

/// A text field for the terminal: one line, no control character that a terminal would
/// obey; `fallback` when the document has none.
std::string line_of(const Text& t, const char* fallback = "?") { return escape::terminal_line(t.value_or(fallback)); }

std::string counts_text(const std::map<std::string, std::size_t>& counts) {
  const std::string out = report::counts_text(counts);
  return out.empty() ? "none" : out;
}

std::string case_line(const char* what, const std::optional<CaseRef>& ref, const report::CaseStore& cases) {
  if (!ref) {
    return {};
  }
  const std::string id = line_of(ref->id, "");
  for (const report::CaseRecord& c : cases) {
    if (static_cast<std::int64_t>(c.index) == ref->index && escape::terminal_line(c.id) == id) {
      // A reason of several lines (a ptxas log) goes on as indented lines, not as "\n".
      std::string reason = escape::terminal(c.reason);
      for (std::size_t at = reason.find('\n'); at != std::string::npos; at = reason.find('\n', at + 5)) {
        reason.replace(at, 1, "\n    ");
      }
      return fmt::format("{}: case {} ({}, {} tokens): {} {}\n", what, escape::terminal_line(c.id),
                         plan::row_label(c.axes), c.axes.integer("tokens").value_or(0),
                         report::to_string(c.verdict), reason);
    }
  }
  return fmt::format("{}: case {}\n", what, line_of(ref->id));
}

/// "Triton sets: ...; compilers: ...".
std::string stack_line(const Document& doc) {
  std::vector<std::string> set_names;
  for (const report::KernelSetRecord& s : doc.environment.kernel_sets.value_or(std::vector<report::KernelSetRecord>{})) {
    set_names.push_back(escape::terminal_line(s.triton_version));
  }
  const std::string sets = fmt::format("{}", fmt::join(set_names, ", "));
  std::set<std::string> compilers;
  for (const CompilerView& c : doc.compilers) {
    std::string label = line_of(c.name);
    if (c.version_text) {
      // Reports before 3.0 recorded a prebuilt compiler's version in ptxas's own words.
      label += fmt::format(" {}", c.version);
    }
    compilers.insert(std::move(label));
  }
  const std::string compiler_list = fmt::format("{}", fmt::join(compilers, ", "));
  return fmt::format("Triton sets: {}; compilers: {}\n", sets.empty() ? "?" : sets,
                     compiler_list.empty() ? "?" : compiler_list);
}

/// Whether the controls ran and held, and the race control's summary.
std::string controls_lines(const report::Controls& controls) {
  if (!controls.ran) {
    return fmt::format("controls: not run ({})\n",
                       escape::terminal_line(controls.reason.value_or("no reason recorded")));
  }
  std::string out = fmt::format("controls: {}\n", controls.valid.value_or(false)
                                                    ? "valid (positive FAIL, negative PASS in every set)"
                                                    : "INVALID: " + escape::terminal_line(controls.reason.value_or("?")));
  if (controls.race) {
    out += fmt::format("race control: {}\n", escape::terminal_line(controls.race->summary));
  }
  return out;
}

/// The counts per (Triton, compiler, op), in first-seen order, one line each.
std::string group_lines(const report::CaseStore& cases) {
  std::vector<std::string> order;
  std::map<std::string, std::map<std::string, std::size_t>> groups;
  for (const report::CaseRecord& c : cases) {
    const auto axis = [&](const char* key) { return escape::terminal_line(c.axes.text(key).value_or("?")); };
    const std::string key = fmt::format("Triton {} {} {}", axis("triton"), axis("compiler"), axis("op"));
    if (groups.count(key) == 0) {
      order.push_back(key);
    }
    ++groups[key][std::string(report::to_string(c.verdict))];
  }
  std::string out;
  for (const std::string& key : order) {
    out += fmt::format("  {}: {}\n", key, counts_text(groups[key]));
  }
  return out;
}

std::string report_summary(const Document& doc) {
  const report::Meta& meta = doc.meta;
  const report::Environment& env = doc.environment;
  const std::optional<report::ReportedGpu>& gpu = env.gpu.record();
  const std::string argv = command_text(meta.argv);
  std::string out = fmt::format("loraprobe {} (git {}) sweep, report schema {}\n", escape::terminal_line(meta.version),
                                escape::terminal_line(meta.git_sha), line_of(doc.schema_version));
  // The answer first: with this Triton and this ptxas, is it fixed?
  if (const StackMatrix m = stack_matrix(doc); !m.empty()) {
    out += "is my stack fixed? (Triton set x compiler; each cell the worst this run saw)\n";
    const std::string text = m.text();  // escaped for a terminal
    for (std::size_t at = 0; at < text.size();) {
      const std::size_t end = text.find('\n', at);
      out += "  " + text.substr(at, end - at) + "\n";
      at = end + 1;
    }
  }
  out += fmt::format("command: {}\n", argv.empty() ? "?" : argv);
  out += gpu ? fmt::format("GPU: {} (sm {}), driver {}, loraprobe built with CUDA {}, cuBLAS {}\n", line_of(gpu->name),
                           line_of(gpu->compute_capability), line_of(gpu->driver_version),
                           line_of(gpu->runtime_version), line_of(gpu->cublas_version))
             : std::string("GPU: none recorded\n");
  out += stack_line(doc) + controls_lines(doc.controls) + group_lines(doc.cases);
  const report::CaseStore& cases = doc.cases;
  const SummaryView& s = doc.summary;
  out += fmt::format("cases: {} of {} planned{}\n", counts_text(s.counts), meta.plan.cases,
                     doc.interrupted ? "; stopped: " + escape::terminal_line(*doc.interrupted) : std::string());
  if (const std::string n = not_swept_sentence(meta.plan.not_swept); !n.empty()) {
    out += escape::terminal_line(n) + "\n";
  }
  out += case_line("first failure", s.first_failure, cases);
  out += case_line("minimal failure", s.minimal_failure, cases);
  out += case_line("first latent", s.first_latent, cases);
  // Each row's cheapest clean remedy is in the stack matrix above; every remedy of every
  // hazardous case would not fit a screen (the Markdown, HTML and JUnit list them).
  if (doc.remedies && !doc.remedies->hazards.empty()) {
    std::size_t measured = 0;
    for (const report::HazardRemedies& h : doc.remedies->hazards) {
      measured += h.remedies.size();
    }
    out += fmt::format("remedies: {} measured for {} hazardous case(s); each one: loraprobe report --format md\n",
                       measured, doc.remedies->hazards.size());
  }
  out += fmt::format("exit code {} ({})\n", s.exit_code, line_of(s.outcome));
  return out;
}

std::string inspect_summary(const InspectDocument& d) {
  std::string out = fmt::format("loraprobe {} (git {}) inspect ({}), schema {}\n", line_of(d.version),
                                line_of(d.git_sha), line_of(d.mode), line_of(d.schema_version));
  const InspectSummary& s = d.summary;
  out += fmt::format("cubins: {} ({} with a hazard, {} clean, {} error(s)); {} findings; {} gdc-early-read\n", s.items,
                     s.hazard, s.clean, s.error, s.findings, s.early_reads);
  std::size_t listed = 0;
  std::size_t hazards = 0;
  for (const InspectItem& item : d.items) {
    if (line_of(item.status) != "hazard") {
      continue;
    }
    ++hazards;
    if (listed < 10) {
      ++listed;
      const std::string triton = line_of(item.triton, "");
      const std::string attribution = line_of(item.attribution, "");
      out += fmt::format("  hazard: {}{} ({}): {} finding(s){}{}\n", triton.empty() ? "" : "Triton " + triton + " ",
                         line_of(item.name), line_of(item.compiler), item.finding_count,
                         attribution.empty() || attribution == "none" ? std::string()
                                                                      : fmt::format(", made by the {}", attribution),
                         item.early_read_count == 0
                             ? std::string()
                             : fmt::format("; {} gdc-early-read, made by the {}", item.early_read_count,
                                           line_of(item.early_read_attribution)));
    }
  }
  if (hazards > listed) {
    out += fmt::format("  ... and {} more\n", hazards - listed);
  }
  out += fmt::format("exit code {}\n", s.exit_code);
  return out;
}

}  // namespace

namespace {

/// Lines longer than a terminal's `width` broken at spaces, continued with an indent:
/// the summary is one screen, not one line of 350 columns. The command line is left whole.
std::string wrapped(const std::string& text, std::size_t width) {
  std::string out;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    end = end == std::string::npos ? text.size() : end;
    std::string line = text.substr(at, end - at);
    const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
    const std::string continuation(indent + 4, ' ');
    // The command stays one line: copied, it must run as recorded.
    while (line.size() > width && line.rfind("command: ", 0) != 0) {
      const std::size_t cut = line.rfind(' ', width);
      if (cut == std::string::npos || cut <= continuation.size()) {
        break;  // one word longer than the line: left whole
      }
      out += line.substr(0, cut) + "\n";
      line = continuation + line.substr(cut + 1);
    }
    out += line + "\n";
    at = end + 1;
  }
  return out;
}

}  // namespace

std::string summary_of(const Document& doc) {
  // A summary goes to a terminal: whatever a document holds is shown, never obeyed.
  return wrapped(escape::terminal(doc.kind == DocumentKind::inspect ? inspect_summary(doc.inspect) : report_summary(doc)),
                 k_summary_width);
}

}  // namespace lp::formats
