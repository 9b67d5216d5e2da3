#include "formats/html.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "formats/stack_matrix.hpp"
#include "formats/view.hpp"
#include "util/escape.hpp"

namespace lp::formats {


namespace {

constexpr std::size_t k_margin_bins = 11;  // exact 0, then (0, 0.1], ..., (0.9, 1]

std::string esc(const std::string& s) { return escape::xml(s); }

constexpr const char* k_style = R"(
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px; color: #1b1f24; max-width: 1400px; }
h1 { font-size: 20px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; }
h3 { font-size: 14px; margin: 16px 0 6px; }
.outcome { font-size: 15px; padding: 8px 12px; border-radius: 6px; display: inline-block; }
.o-PASS { background: #dafbe1; } .o-LATENT { background: #fff1c2; } .o-FAIL, .o-ERROR, .o-INVALID { background: #ffd8d3; }
table { border-collapse: collapse; } td, th { padding: 2px 8px; text-align: left; vertical-align: top; }
table.env td:first-child { font-weight: 600; white-space: nowrap; }
table.map { font: 12px ui-monospace, SFMono-Regular, Menlo, monospace; }
table.map th { font-weight: 600; text-align: center; } table.map .label { width: 520px; text-align: left; }
table.stack .label { width: auto; padding-right: 24px; } table.stack td, table.stack th { padding: 3px 12px; }
details { margin: 4px 0 8px; } summary { cursor: pointer; color: #57606a; }
table.map td.cell { width: 34px; text-align: center; border: 1px solid #fff; }
td.P { background: #2da44e; color: #fff; } td.L { background: #d4a72c; color: #000; } td.F { background: #cf222e; color: #fff; }
td.f, td.t, td.c, td.i { background: #8250df; color: #fff; } td.s, td.x { background: #afb8c1; } td.dot { background: #f6f8fa; }
.legend span { display: inline-block; padding: 1px 8px; margin-right: 6px; border-radius: 3px; font-size: 12px; }
pre { background: #f6f8fa; padding: 8px 12px; overflow-x: auto; font: 12px/1.5 ui-monospace, SFMono-Regular, Menlo, monospace; }
pre.wrap { white-space: pre-wrap; word-break: break-all; } pre mark { background: #ffd8d3; } pre .mma { background: #ddf4ff; } pre .wait { background: #fff1c2; }
.note { color: #57606a; }
)";

std::string outcome_class(const std::string& headline) {
  // The first word: "FAIL under amplification (...)" is a FAIL.
  return "o-" + headline.substr(0, headline.find_first_of(": "));
}

std::string env_table(const std::vector<EnvRow>& rows) {
  std::string out = "<table class=\"env\">\n";
  for (const EnvRow& r : rows) {
    out += fmt::format("<tr><td>{}</td><td>{}</td></tr>\n", esc(r.label), esc(r.value));
  }
  return out + "</table>\n";
}

std::string legend() {
  return "<p class=\"legend\"><span class=\"cell P\" style=\"background:#2da44e;color:#fff\">P PASS</span>"
         "<span style=\"background:#d4a72c\">L LATENT</span><span style=\"background:#cf222e;color:#fff\">F FAIL</span>"
         "<span style=\"background:#8250df;color:#fff\">f t c i fault, timeout, compile_error, incomplete</span>"
         "<span style=\"background:#afb8c1\">s x skipped, incompatible</span><span style=\"background:#f6f8fa\">. not planned</span>"
         "</p>\n";
}

/// Appends the page made so far to `out`; `flush` passes it on when it has grown (a
/// report's verdict map is most of its page, and a large one is written as it is drawn).
using Flush = std::function<void()>;

void map_table(std::string& out, const report::VerdictMap& map, const std::vector<const report::MapRow*>& rows,
               const report::CaseStore& cases, const Flush& flush) {
  out += "<table class=\"map\">\n<tr><th class=\"label\">configuration</th>";
  for (std::int64_t t : map.tokens) {
    out += fmt::format("<th>{}</th>", t);
  }
  out += "</tr>\n";
  for (const report::MapRow* row : rows) {
    out += fmt::format("<tr><td class=\"label\">{}</td>", esc(row->label));
    for (std::size_t i = 0; i < row->cells.size(); ++i) {
      const char c = row->cells[i];
      out += c == '.' ? std::string("<td class=\"cell dot\">.</td>")
                      : fmt::format("<td class=\"cell {}\" title=\"{}\">{}</td>", c,
                                    esc(report::cell_tip(cases[row->cases[i]])), c);
    }
    out += "</tr>\n";
    flush();
  }
  out += "</table>\n";
}

/// Per (Triton, compiler, op): the rows with anything but PASS drawn, then the all-PASS
/// rows, folded (one click away, no script) when there are more than a dozen.
void heat_map(std::string& out, const report::VerdictMap& map, const report::CaseStore& cases, const Flush& flush) {
  constexpr std::size_t k_unfolded_pass_rows = 12;
  if (map.rows.empty()) {
    out += "<p>No case ran.</p>\n";
    return;
  }
  std::vector<std::string> groups;
  std::map<std::string, std::pair<std::vector<const report::MapRow*>, std::vector<const report::MapRow*>>> rows;  // (hazard, pass)
  for (const report::MapRow& row : map.rows) {
    if (rows.count(row.group) == 0) {
      groups.push_back(row.group);
    }
    (row.all_pass ? rows[row.group].second : rows[row.group].first).push_back(&row);
  }
  out += legend();
  for (const std::string& group : groups) {
    const auto& [other, pass] = rows[group];
    out += fmt::format("<h3>{}</h3>\n", esc(group));
    // One table, so one header row, per group; only a folded block of PASS rows has its own.
    const bool fold = pass.size() > k_unfolded_pass_rows;
    std::vector<const report::MapRow*> drawn = other;
    if (!fold) {
      drawn.insert(drawn.end(), pass.begin(), pass.end());
    }
    if (!drawn.empty()) {
      map_table(out, map, drawn, cases, flush);
    }
    if (fold) {
      out += fmt::format("<details><summary>{} configuration(s) PASS at every token count</summary>\n", pass.size());
      map_table(out, map, pass, cases, flush);
      out += "</details>\n";
    }
  }
}

std::string excerpt_html(const Excerpt& e) {
  std::string out = fmt::format("<h3><code>{}</code>, Triton {}, {}: {} finding(s)</h3>\n<p>Made by: {}.</p>\n",
                                esc(e.variant), esc(e.triton), esc(e.compiler), e.findings, esc(e.attribution_text));
  if (e.early_reads > 0) {
    // The dual-stream hazard, its own check and its own lines.
    out += fmt::format("<p>gdc-early-read: {} load(s) of a buffer the previous grid produces, before "
                       "<code>griddepcontrol.wait</code>{}.</p>\n<pre>",
                       e.early_reads, e.early_attribution.empty() ? std::string() : fmt::format(" (made by: {})", esc(e.early_attribution)));
    for (const std::string& l : e.early_lines) {
      out += "<mark>" + esc(l) + "</mark>\n";
    }
    out += "</pre>\n";
  }
  if (e.findings == 0 && e.early_reads > 0) {
    return out;
  }
  out += "<pre>";
  std::size_t width = 0;
  for (const ExcerptLine& l : e.lines) {
    width = std::max(width, l.instruction.size());
  }
  for (const ExcerptLine& l : e.lines) {
    if (l.address.empty()) {
      out += esc("  " + l.note) + "\n";
      continue;
    }
    const std::string line = fmt::format("/*{}*/ {:<{}}  // {}", l.address.substr(2), l.instruction, width, l.note);
    if (l.marked) {
      out += "<mark>" + esc(line) + "</mark>\n";
    } else {
      const bool mma = l.note.rfind("warpgroup MMA", 0) == 0;
      out += fmt::format("<span class=\"{}\">{}</span>\n", mma ? "mma" : "wait", esc(line));
    }
  }
  return out + "</pre>\n";
}

std::string histogram_svg(const std::vector<double>& margins) {
  const std::vector<std::size_t> bins = margin_histogram(margins);
  const std::size_t top = std::max<std::size_t>(1, *std::max_element(bins.begin(), bins.end()));
  constexpr int k_w = 56, k_h = 160, k_pad = 30, k_top = 20;  // k_top: room for the tallest bar's count
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"margin histogram\">\n",
      k_pad + static_cast<int>(bins.size()) * k_w, k_top + k_h + 50);
  for (std::size_t i = 0; i < bins.size(); ++i) {
    const double h = std::round(static_cast<double>(bins[i]) * k_h / static_cast<double>(top));
    const int x = k_pad + static_cast<int>(i) * k_w;
    const std::string label = i == 0 ? "0" : fmt::format("≤{:.1f}", static_cast<double>(i) / 10.0);
    out += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#2da44e\"><title>{}: {} case(s)</title></rect>\n",
                       x + 4, k_top + k_h - h, k_w - 8, h, i == 0 ? "exactly 0" : "up to " + label.substr(3), bins[i]);
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", x + k_w / 2,
                       k_top + k_h + 14, label);
    out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>\n", x + k_w / 2,
                       k_top + k_h - h - 5, bins[i]);
  }
  out += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"11\">worst deviation over tolerance (1 = at the tolerance)</text>\n",
                     k_pad, k_top + k_h + 34);
  return out + "</svg>\n";
}

/// The page around a body: what comes before it, and after.
std::string page_head(const std::string& title) {
  return fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
                     "<style>{}</style>\n</head>\n<body>\n",
                     esc(title), k_style);
}
constexpr const char* k_page_tail = "</body>\n</html>\n";

/// The stack matrix as the first heat map: a cell per (Triton set, compiler), coloured as
/// the verdict map's letters are, the answer above it and the remedies under it.
std::string stack_html(const StackMatrix& m) {
  if (m.empty()) {
    return "";
  }
  std::string out = fmt::format("<h2 id=\"stack\">Is my stack fixed?</h2>\n<p>{}</p>\n<table class=\"map stack\"><tr><th "
                                "class=\"label\">Triton</th>",
                                esc(m.answer));
  for (const std::string& label : m.labels) {
    out += "<th>" + esc(label) + "</th>";
  }
  out += "</tr>\n";
  for (const StackRow& row : m.rows) {
    out += "<tr><td class=\"label\">" +
           esc(row.own_ptxas.empty() ? row.triton : row.triton + " (own ptxas " + row.own_ptxas + ")") + "</td>";
    for (const StackCell& cell : row.cells) {
      const char* cls = cell.outcome == StackOutcome::fail           ? "F"
                        : cell.outcome == StackOutcome::error        ? "f"
                        : cell.outcome == StackOutcome::hazard       ? "L"
                        : cell.outcome == StackOutcome::clean        ? "P"
                        : cell.outcome == StackOutcome::incompatible ? "x"
                                                                     : "s";
      out += fmt::format("<td class=\"{}\" title=\"{} case(s)\">{}</td>", cls, cell.cases, esc(cell.text()));
    }
    out += "</tr>\n";
  }
  out += "</table>\n";
  std::string remedies;
  for (const StackRow& row : m.rows) {
    if (!row.remedy.empty()) {
      remedies += "<li>Triton " + esc(row.triton) + ": " + esc(row.remedy) + "</li>\n";
    }
  }
  return remedies.empty() ? out : out + "<ul>\n" + remedies + "</ul>\n";
}

/// A line of the view's prose in HTML.
std::string line_html(const Line& line) {
  std::string out;
  for (const Span& s : line) {
    out += s.style == Span::Style::code     ? "<code>" + esc(s.text) + "</code>"
           : s.style == Span::Style::strong ? "<b>" + esc(s.text) + "</b>"
                                            : esc(s.text);
  }
  return out;
}

/// The view's remedies section as HTML lists (its no-remedy line left out, as the page
/// always has: its stack matrix's rows say their remedies).
std::string remedies_html(const RemediesSection& r) {
  std::string out;
  if (!r.measured_intro.empty()) {
    out += "<p>" + r.measured_intro + "</p>\n<ul>\n";
    for (const ListItem& item : r.measured) {
      out += "<li>" + line_html(item.line);
      if (item.children) {
        out += "<ul>\n";
        for (const Line& child : *item.children) {
          out += "<li>" + line_html(child) + "</li>\n";
        }
        out += "</ul>";
      }
      out += "</li>\n";
    }
    out += "</ul>\n";
  }
  if (!r.neighbours_intro.empty()) {
    out += "<p>" + r.neighbours_intro + "</p>\n<ul>\n";
    for (const Line& line : r.neighbours) {
      out += "<li>" + line_html(line) + "</li>\n";
    }
    out += "</ul>\n";
  }
  return out;
}

/// The environment table, the compilers as a table of their own (as one cell they
/// were a paragraph of ~900 characters).
std::string environment_html(const ReportView& v) {
  std::vector<EnvRow> environment;
  for (const EnvRow& row : v.environment) {
    if (row.label != "Compilers" || v.compilers.empty()) {
      environment.push_back(row);
    }
  }
  std::string out = "<h2 id=\"environment\">Environment</h2>\n" + env_table(environment);
  if (!v.compilers.empty()) {
    out += "<h3>Compilers</h3>\n<table class=\"env\"><tr><th>Triton set</th><th>compiler</th><th>ptxas</th>"
           "<th>sha256</th><th>options</th></tr>\n";
    for (const std::vector<std::string>& row : v.compilers) {
      out += "<tr>";
      for (const std::string& cell : row) {
        out += "<td>" + esc(cell) + "</td>";
      }
      out += "</tr>\n";
    }
    out += "</table>\n";
  }
  return out;
}

/// "Cases to read first": each notable case's configuration and numbers.
std::string notable_html(const std::vector<NotableCase>& notable) {
  if (notable.empty()) {
    return "";
  }
  std::string out = "<h2>Cases to read first</h2>\n";
  for (const NotableCase& n : notable) {
    std::vector<EnvRow> rows = {{"configuration", fmt::format("{}, {} tokens", plan::row_label(n.record.axes),
                                                               n.record.axes.integer("tokens").value_or(0))}};
    for (EnvRow& r : case_numbers(n.record)) {
      rows.push_back(std::move(r));
    }
    out += fmt::format("<h3>{}: case <code>{}</code></h3>\n", esc(n.title), esc(n.record.id)) + env_table(rows);
  }
  return out;
}

/// "Static findings in the SASS that ran": who made them, and every excerpt.
std::string findings_html(const ReportView& v) {
  std::string out = "<h2 id=\"findings\">Static findings in the SASS that ran</h2>\n";
  if (v.excerpts.empty()) {
    return out + "<p>No variant that ran has a wgmma register hazard in its SASS.</p>\n";
  }
  out += "<ul>\n";
  for (const std::string& a : v.attributions) {
    out += "<li>" + esc(a) + "</li>\n";
  }
  out += "</ul>\n";
  for (const Excerpt& e : v.excerpts) {
    out += excerpt_html(e);
  }
  return out;
}

void report_html(const Document& doc, const TextSink& sink) {
  const ReportView v = view_of(doc);
  std::string body = page_head("loraprobe: " + v.headline);
  const Flush flush = [&] {
    constexpr std::size_t k_flush_bytes = std::size_t{1} << 20;
    if (body.size() >= k_flush_bytes) {
      sink(body);
      body.clear();
    }
  };
  body += fmt::format("<h1>loraprobe sweep</h1>\n<p class=\"outcome {}\">{}</p>\n<p>{}; exit code {} ({}).</p>\n",
                                 outcome_class(v.headline), esc(v.headline), esc(v.counts), v.exit_code,
                                 esc(v.outcome));
  if (!v.not_swept.empty()) {
    body += fmt::format("<p class=\"note\">{}</p>\n", esc(v.not_swept));
  }
  body += stack_html(stack_matrix(doc));
  if (!v.excerpts.empty()) {
    // The proof right under the answer: the first hazardous variant's SASS, the pending
    // wgmma and the instruction that overwrites its A registers (all of them are below).
    body += "<h3>The hazard in the SASS that ran (first hazardous variant)</h3>\n" + excerpt_html(v.excerpts.front());
  }
  body += environment_html(v);
  body += fmt::format("<h2>Command</h2>\n<pre class=\"wrap\">{}</pre>\n", esc(v.command.empty() ? "(not recorded)" : v.command));
  body += "<h2 id=\"map\">Verdict map</h2>\n<p class=\"note\">One row per configuration, one column per token count; hover a "
          "cell for the case and its worst deviation over tolerance.</p>\n";
  heat_map(body, v.map, doc.cases, flush);
  body += notable_html(v.notable) + findings_html(v);
  body += "<h2 id=\"meaning\">What this means</h2>\n";
  if (!v.bound.empty()) {
    body += "<p>" + esc(v.bound) + "</p>\n";
  }
  if (!v.race.empty()) {
    body += "<p>Race control: " + esc(v.race) + ".</p>\n";
  }
  body += remedies_html(v.remedies);
  body += fmt::format("<h2 id=\"margin\">Margin of the clean cases</h2>\n<p class=\"note\">{} PASS case(s) with a measured deviation: "
                      "how close each came to its tolerance.</p>\n",
                      v.clean_margins.size());
  body += histogram_svg(v.clean_margins);
  body += fmt::format("<p class=\"note\">Written by <code>loraprobe report --format html</code> from <code>{}</code>.</p>\n",
                      esc(doc.path));
  body += k_page_tail;
  sink(body);
}

std::string inspect_html(const Document& doc) {
  const InspectSummary& s = doc.inspect.summary;
  std::string body = fmt::format(
      "<h1>loraprobe inspect</h1>\n<p>{} cubins, {} with a hazard, {} findings, {} gdc-early-read; exit code {}.</p>\n",
      s.items, s.hazard, s.findings, s.early_reads, s.exit_code);
  for (const InspectItem& item : doc.inspect.items) {
    if (item.status != "hazard") {
      continue;
    }
    body += excerpt_html(excerpt_of_item(item));
  }
  return page_head("loraprobe inspect") + body + k_page_tail;
}

}  // namespace

std::vector<std::size_t> margin_histogram(const std::vector<double>& margins) {
  std::vector<std::size_t> bins(k_margin_bins, 0);
  for (const double m : margins) {
    if (!(m > 0.0)) {
      ++bins[0];  // exact (and, defensively, anything not positive)
      continue;
    }
    const std::size_t b = static_cast<std::size_t>(std::ceil(std::min(m, 1.0) * 10.0));
    ++bins[std::clamp<std::size_t>(b, 1, k_margin_bins - 1)];
  }
  return bins;
}

void html_of(const Document& doc, const TextSink& sink) {
  if (doc.kind == DocumentKind::inspect) {
    sink(inspect_html(doc));
  } else {
    report_html(doc, sink);
  }
}

std::string html_of(const Document& doc) {
  std::string out;
  html_of(doc, [&](std::string_view piece) { out.append(piece); });
  return out;
}

}  // namespace lp::formats
