#include "formats/markdown.hpp"

#include "formats/stack_matrix.hpp"

#include <map>

#include <fmt/format.h>

#include "formats/view.hpp"
#include "report/verdict.hpp"
#include "util/escape.hpp"

namespace lp::formats {


namespace {

/// Rows of the map drawn in full when the map has at most this many rows.
constexpr std::size_t k_full_map_rows = 40;
/// Hazardous variants drawn with their SASS; the rest are a table row each.
constexpr std::size_t k_drawn_excerpts = 6;

// Every value from the document is data, never Markdown: prose and table cells go
// through md() (no HTML, links, emphasis or cell breaks; controls shown escaped),
// names through code() (a span nothing inside can close), commands and SASS through
// escape::markdown_fence (a fence longer than any backtick run inside).
std::string md(const std::string& text) { return escape::markdown_text(text); }
std::string code(const std::string& text) { return escape::markdown_code(text); }

/// A two-column table of data rows, after `markdown_rows` (rows this writer drew itself).
std::string table(const std::vector<EnvRow>& rows, const std::string& markdown_rows = {}) {
  std::string out = "| | |\n|---|---|\n" + markdown_rows;
  for (const EnvRow& r : rows) {
    out += fmt::format("| {} | {} |\n", md(r.label), md(r.value));
  }
  return out;
}

std::string verdict_map_section(const report::VerdictMap& map) {
  std::string out = "## Verdict map\n\nOne row per configuration, one column per token count. `";
  out += report::k_verdict_legend;
  out += "`\n\n";
  if (map.rows.empty()) {
    return out + "No case ran.\n\n";
  }
  const bool all_rows = map.rows.size() <= k_full_map_rows;
  out += "| configuration |";
  std::string rule = "|---|";
  for (std::int64_t t : map.tokens) {
    out += fmt::format(" {} |", t);
    rule += ":-:|";
  }
  out += "\n" + rule + "\n";
  std::map<std::string, std::size_t> hidden;  // all-PASS rows per group, when not drawn
  std::vector<std::string> hidden_order;
  for (const report::MapRow& row : map.rows) {
    if (!all_rows && row.all_pass) {
      if (hidden.count(row.group) == 0) {
        hidden_order.push_back(row.group);
      }
      ++hidden[row.group];
      continue;
    }
    out += fmt::format("| {} |", code(row.label));
    for (char c : row.cells) {
      out += c == 'P' || c == '.' ? fmt::format(" {} |", c) : fmt::format(" **{}** |", c);
    }
    out += "\n";
  }
  if (!hidden_order.empty()) {
    out += "\nNot drawn, PASS at every token count:";
    for (const std::string& group : hidden_order) {
      out += fmt::format(" {} configurations of {};", hidden[group], md(group));
    }
    out.back() = '.';
    out += " The report has each one.\n";
  }
  return out + "\n";
}

std::string notable_section(const std::vector<NotableCase>& notable) {
  if (notable.empty()) {
    return "";
  }
  std::string out = "## Cases to read first\n\n";
  for (const NotableCase& n : notable) {
    const AxisValues& axes = n.record.axes;
    out += fmt::format("### {}: case {}\n\n", md(n.title), code(n.record.id));
    out += table(case_numbers(n.record), fmt::format("| configuration | {}, {} tokens |\n", code(plan::row_label(axes)),
                                                     axes.integer("tokens").value_or(0))) +
           "\n";
  }
  return out;
}

std::string excerpt_block(const Excerpt& e) {
  std::string out = fmt::format("#### {} (Triton {}, {}): {} finding(s)\n\nMade by: {}.\n\n", code(e.variant),
                                md(e.triton), md(e.compiler), e.findings, md(e.attribution_text));
  if (e.early_reads > 0) {
    // The dual-stream hazard, its own check and its own lines.
    std::string loads;
    for (const std::string& l : e.early_lines) {
      loads += l + "\n";
    }
    out += fmt::format("gdc-early-read: {} load(s) of a buffer the previous grid produces, before "
                       "`griddepcontrol.wait`{}.\n\n",
                       e.early_reads, e.early_attribution.empty() ? std::string() : fmt::format(" (made by: {})", md(e.early_attribution))) +
           escape::markdown_fence(loads) + "\n";
  }
  if (e.findings == 0 && e.early_reads > 0) {
    return out;
  }
  std::string block;
  std::size_t width = 0;
  for (const ExcerptLine& l : e.lines) {
    width = std::max(width, l.instruction.size());
  }
  for (const ExcerptLine& l : e.lines) {
    if (l.address.empty()) {
      block += fmt::format("  {}\n", l.note);
      continue;
    }
    block += fmt::format("{} /*{}*/ {:<{}}  // {}\n", l.marked ? ">" : " ", l.address.substr(2), l.instruction, width,
                         l.note);
  }
  return out + escape::markdown_fence(block) + "\n";
}

std::string findings_section(const ReportView& v) {
  if (v.excerpts.empty()) {
    return "## Static findings\n\nNo variant that ran has a wgmma register hazard in its SASS.\n\n";
  }
  std::string out = "## Static findings in the SASS that ran\n\n";
  for (const std::string& a : v.attributions) {
    out += "- " + md(a) + "\n";
  }
  out += "\n";
  for (std::size_t i = 0; i < v.excerpts.size() && i < k_drawn_excerpts; ++i) {
    out += excerpt_block(v.excerpts[i]);
  }
  if (v.excerpts.size() > k_drawn_excerpts) {
    out += "The other hazardous variants (their findings are in the report):\n\n"
           "| variant | Triton | compiler | findings | made by |\n|---|---|---|--:|---|\n";
    for (std::size_t i = k_drawn_excerpts; i < v.excerpts.size(); ++i) {
      const Excerpt& e = v.excerpts[i];
      out += fmt::format("| {} | {} | {} | {} | {} |\n", code(e.variant), md(e.triton), md(e.compiler), e.findings,
                         e.attribution.empty() ? "?" : md(e.attribution));
    }
    out += "\n";
  }
  return out;
}

/// A line of the view's prose in Markdown.
std::string line_markdown(const Line& line) {
  std::string out;
  for (const Span& s : line) {
    out += s.style == Span::Style::code     ? code(s.text)
           : s.style == Span::Style::strong ? "**" + md(s.text) + "**"
                                            : md(s.text);
  }
  return out;
}

/// The view's remedies section as Markdown lists.
std::string remedies_markdown(const RemediesSection& r) {
  std::string out;
  if (!r.measured_intro.empty()) {
    out += r.measured_intro + "\n\n";
    for (const ListItem& item : r.measured) {
      out += "- " + line_markdown(item.line) + (item.children ? ":\n" : "\n");
      for (const Line& child : item.children.value_or(std::vector<Line>{})) {
        out += "  - " + line_markdown(child) + "\n";
      }
    }
    out += "\n";
  }
  if (!r.neighbours_intro.empty()) {
    out += r.neighbours_intro + "\n\n";
    for (const Line& line : r.neighbours) {
      out += "- " + line_markdown(line) + "\n";
    }
    out += "\n";
  } else if (!r.no_remedy.empty()) {
    out += line_markdown(r.no_remedy) + "\n\n";
  }
  return out;
}

std::string meaning_section(const ReportView& v) {
  std::string out = "## What this means\n\n";
  if (!v.bound.empty()) {
    out += md(v.bound) + "\n\n";
  }
  if (!v.race.empty()) {
    out += "Race control: " + md(v.race) + ".\n\n";
  }
  return out + remedies_markdown(v.remedies);
}

/// "Is my stack fixed?": the stack matrix as a table, its answer and each hazardous row's remedy.
std::string stack_section(const StackMatrix& m) {
  if (m.empty()) {
    return "";
  }
  std::string out = "## Is my stack fixed?\n\n" + md(m.answer) + "\n\n| Triton |";
  std::string rule = "|---|";
  for (const std::string& label : m.labels) {
    out += fmt::format(" {} |", md(label));
    rule += "---|";
  }
  out += "\n" + rule + "\n";
  for (const StackRow& row : m.rows) {
    out += "| " + md(row.own_ptxas.empty() ? row.triton : row.triton + " (own ptxas " + row.own_ptxas + ")") + " |";
    for (const StackCell& cell : row.cells) {
      const std::string t = md(cell.text());
      out += " " + (cell.outcome == StackOutcome::fail || cell.outcome == StackOutcome::hazard ? "**" + t + "**" : t) +
             " |";
    }
    out += "\n";
  }
  out += "\nEach cell is the worst outcome this run saw for that pairing; a hazard says whose fault it is. The PTX: "
         "no ptxas fixes it. ptxas: " +
         md(report::ptxas_fix_text()) + ".\n";
  for (const StackRow& row : m.rows) {
    if (!row.remedy.empty()) {
      out += "- Triton " + md(row.triton) + ": " + md(row.remedy) + "\n";
    }
  }
  return out + "\n";
}

std::string report_markdown(const Document& doc) {
  const ReportView v = view_of(doc);
  std::string out = fmt::format("# loraprobe: {}\n\n{}; exit code {} ({}).\n\n", md(v.headline), md(v.counts),
                                v.exit_code, md(v.outcome));
  if (!v.not_swept.empty()) {
    out += md(v.not_swept) + "\n\n";
  }
  out += stack_section(stack_matrix(doc));
  out += "## Environment\n\n" + table(v.environment) + "\n";
  out += "## Command\n\n" + escape::markdown_fence(v.command.empty() ? "(not recorded)" : v.command, "sh") + "\n";
  out += verdict_map_section(v.map);
  out += notable_section(v.notable);
  out += findings_section(v);
  out += meaning_section(v);
  out += fmt::format("<sub>Written by `loraprobe report --format md` from {}.</sub>\n", code(doc.path));
  return out;
}

std::string inspect_markdown(const Document& doc) {
  const InspectDocument& d = doc.inspect;
  const InspectSummary& s = d.summary;
  std::string out = fmt::format("# loraprobe inspect: {} cubins, {} with a hazard, {} findings{}\n\n", s.items,
                                s.hazard, s.findings,
                                s.early_reads > 0 ? fmt::format(", {} gdc-early-read", s.early_reads) : std::string());
  const std::string argv = command_text(d.argv);
  out += escape::markdown_fence(argv.empty() ? "(not recorded)" : argv, "sh") + "\n";
  out += fmt::format("nvdisasm {} ({}); exit code {}.\n\n", md(d.nvdisasm_version.value_or("?")),
                     md(d.nvdisasm_origin.value_or("?")), s.exit_code);
  std::size_t drawn = 0;
  std::string rest;
  for (const InspectItem& item : d.items) {
    if (item.status != "hazard") {
      continue;
    }
    const Excerpt e = excerpt_of_item(item);
    if (drawn < k_drawn_excerpts) {
      out += excerpt_block(e);
      ++drawn;
    } else {
      rest += fmt::format("| {} | {} | {} | {} | {} | {} |\n", code(e.variant), md(e.triton), md(e.compiler),
                          e.findings, md(e.attribution_text), e.early_reads);
    }
  }
  if (!rest.empty()) {
    out += "| cubin | Triton | compiler | findings | made by | gdc-early-read |\n|---|---|---|--:|---|--:|\n" + rest +
           "\n";
  }
  return out;
}

}  // namespace

std::string markdown_of(const Document& doc) {
  std::string out = doc.kind == DocumentKind::inspect ? inspect_markdown(doc) : report_markdown(doc);
  if (out.size() > k_markdown_budget) {
    // Only a map of many non-PASS rows gets here; say so rather than be cut off by the forge.
    const std::string note = fmt::format(
        "\n\n**Cut at {} KB** (GitHub takes {} characters): the rest is in the report and in `loraprobe report "
        "--format html`.\n",
        k_markdown_budget / 1024 - 1, k_markdown_budget);
    out.resize(k_markdown_budget - note.size() - 1);
    out.resize(out.rfind('\n') + 1);
    out += note;
  }
  return out;
}

}  // namespace lp::formats
