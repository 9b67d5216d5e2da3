#include "formats/markdown.hpp"

#include <map>

#include <fmt/format.h>

#include "formats/view.hpp"

namespace lp::formats {

using nlohmann::json;

namespace {

/// Rows of the map drawn in full when the map has at most this many rows.
constexpr std::size_t k_full_map_rows = 40;
/// Hazardous variants drawn with their SASS; the rest are a table row each.
constexpr std::size_t k_drawn_excerpts = 6;

/// A table cell: no pipes or newlines.
std::string cell(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    if (ch == '|') {
      out += "\\|";
    } else if (ch == '\n') {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out;
}

std::string table(const std::vector<EnvRow>& rows) {
  std::string out = "| | |\n|---|---|\n";
  for (const EnvRow& r : rows) {
    out += fmt::format("| {} | {} |\n", cell(r.label), cell(r.value));
  }
  return out;
}

std::string verdict_map_section(const VerdictMap& map) {
  std::string out = "## Verdict map\n\nOne row per configuration, one column per token count. `";
  out += k_verdict_legend;
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
  for (const MapRow& row : map.rows) {
    if (!all_rows && row.all_pass) {
      if (hidden.count(row.group) == 0) {
        hidden_order.push_back(row.group);
      }
      ++hidden[row.group];
      continue;
    }
    out += fmt::format("| `{}` |", cell(row.label));
    for (char c : row.cells) {
      out += c == 'P' || c == '.' ? fmt::format(" {} |", c) : fmt::format(" **{}** |", c);
    }
    out += "\n";
  }
  if (!hidden_order.empty()) {
    out += "\nNot drawn, PASS at every token count:";
    for (const std::string& group : hidden_order) {
      out += fmt::format(" {} configurations of {};", hidden[group], group);
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
    const json& axes = member(n.record, "axes");
    out += fmt::format("### {}: case `{}`\n\n", n.title, text(n.record, "id", "?"));
    std::vector<EnvRow> rows = {
        {"configuration", fmt::format("`{}`, {} tokens", row_label(axes), integer(axes, "tokens"))}};
    for (EnvRow& r : case_numbers(n.record)) {
      rows.push_back(std::move(r));
    }
    out += table(rows) + "\n";
  }
  return out;
}

std::string excerpt_block(const Excerpt& e) {
  std::string out = fmt::format("#### `{}` (Triton {}, {}): {} finding(s)\n\nMade by: {}.\n\n```\n", e.variant, e.triton,
                                e.compiler, e.findings, e.attribution_text);
  std::size_t width = 0;
  for (const ExcerptLine& l : e.lines) {
    width = std::max(width, l.instruction.size());
  }
  for (const ExcerptLine& l : e.lines) {
    if (l.address.empty()) {
      out += fmt::format("  {}\n", l.note);
      continue;
    }
    out += fmt::format("{} /*{}*/ {:<{}}  // {}\n", l.marked ? ">" : " ", l.address.substr(2), l.instruction, width,
                       l.note);
  }
  return out + "```\n\n";
}

std::string findings_section(const ReportView& v) {
  if (v.excerpts.empty()) {
    return "## Static findings\n\nNo variant that ran has a wgmma register hazard in its SASS.\n\n";
  }
  std::string out = "## Static findings in the SASS that ran\n\n";
  for (const std::string& a : v.attributions) {
    out += "- " + a + "\n";
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
      out += fmt::format("| `{}` | {} | {} | {} | {} |\n", e.variant, e.triton, cell(e.compiler), e.findings,
                         e.attribution.empty() ? "?" : e.attribution);
    }
    out += "\n";
  }
  return out;
}

std::string meaning_section(const ReportView& v) {
  std::string out = "## What this means\n\n";
  if (!v.bound.empty()) {
    out += v.bound + "\n\n";
  }
  if (!v.race.empty()) {
    out += "Race control: " + v.race + ".\n\n";
  }
  if (!v.measured.empty()) {
    out += "Remedies run for each hazardous case (sweep --remedies: the case with one thing changed, in the same "
           "run):\n\n";
    for (const MeasuredRemedies& m : v.measured) {
      out += fmt::format("- `{}`, {} tokens ({}, case `{}`):\n", m.configuration, m.tokens, m.verdict, m.case_id);
      for (const std::string& line : m.lines) {
        out += "  - " + line + "\n";
      }
    }
    for (const std::string& n : v.remedy_notes) {
      out += "- Note: " + n + ".\n";
    }
    out += "\n";
  }
  if (!v.remedies.empty()) {
    out += "Neighbours in this run's cases (the same case with one thing changed):\n\n";
    for (const Remedy& r : v.remedies) {
      out += fmt::format("- **{}**, {}: PASS in {} of the {} hazardous cases whose neighbour ran.\n", r.name, r.why,
                         r.clean, r.measured);
    }
    out += "\n";
  } else if (!v.excerpts.empty()) {
    out += "This run measured no remedy. Add `--block-n 32`, `--num-stages 1`, or a newer `--ptxas` to the sweep to "
           "measure them.\n\n";
  }
  return out;
}

std::string report_markdown(const Document& doc) {
  const ReportView v = view_of(doc);
  std::string out = fmt::format("# loraprobe: {}\n\n{}; exit code {} ({}).\n\n", v.headline, v.counts, v.exit_code,
                                v.outcome);
  out += "## Environment\n\n" + table(v.environment) + "\n";
  out += fmt::format("## Command\n\n```sh\n{}\n```\n\n", v.command.empty() ? "(not recorded)" : v.command);
  out += verdict_map_section(v.map);
  out += notable_section(v.notable);
  out += findings_section(v);
  out += meaning_section(v);
  out += fmt::format("<sub>Written by `loraprobe report --format md` from `{}`.</sub>\n", doc.path);
  return out;
}

std::string inspect_markdown(const Document& doc) {
  const json& d = doc.json;
  const json& s = member(d, "summary");
  std::string out = fmt::format("# loraprobe inspect: {} cubins, {} with a hazard, {} findings\n\n",
                                integer(s, "items"), integer(s, "hazard"), integer(s, "findings"));
  std::string argv;
  for (const json& a : member(member(d, "meta"), "argv")) {
    argv += (argv.empty() ? "" : " ") + (a.is_string() ? a.get<std::string>() : a.dump());
  }
  out += fmt::format("```sh\n{}\n```\n\n", argv.empty() ? "(not recorded)" : argv);
  const json& nvdisasm = member(d, "nvdisasm");
  out += fmt::format("nvdisasm {} ({}); exit code {}.\n\n", text(nvdisasm, "version", "?"),
                     text(nvdisasm, "origin", "?"), integer(s, "exit_code", -1));
  std::size_t drawn = 0;
  std::string rest;
  for (const json& item : member(d, "items")) {
    if (text(item, "status") != "hazard") {
      continue;
    }
    const Excerpt e = excerpt_of_item(item);
    if (drawn < k_drawn_excerpts) {
      out += excerpt_block(e);
      ++drawn;
    } else {
      rest += fmt::format("| `{}` | {} | {} | {} | {} |\n", e.variant, e.triton, cell(e.compiler), e.findings,
                          e.attribution_text);
    }
  }
  if (!rest.empty()) {
    out += "| cubin | Triton | compiler | findings | made by |\n|---|---|---|--:|---|\n" + rest + "\n";
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
