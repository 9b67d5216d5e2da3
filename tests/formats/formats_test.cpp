// The Markdown and HTML reports (formats/markdown.hpp, formats/html.hpp) on the
// committed H200 seed report, on its compact rewrite, and on made-up documents.

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "formats/case_index.hpp"
#include "formats/document.hpp"
#include "formats/diff.hpp"
#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "formats/stack_matrix.hpp"
#include "formats/summary.hpp"
#include "formats/view.hpp"
#include "model/metrics_json.hpp"
#include "report/compact.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"
#include "util/json_in.hpp"

namespace lp::formats {
namespace {

using nlohmann::json;

const std::string k_seed = std::string(LP_SOURCE_DIR) + "/tests/report/fixtures/seed-h200-3.0.0.json";

Document seed() { return read_document(k_seed); }

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

TEST(Markdown, SeedReportHasEverySection) {
  const std::string md = markdown_of(seed());
  EXPECT_LT(md.size(), k_markdown_budget);
  EXPECT_EQ(md.rfind("# loraprobe: LATENT: the SASS that ran has the wgmma register hazard in 30 case(s)", 0), 0U) << md;
  for (const char* section : {"## Environment", "## Command", "## Verdict map", "## Cases to read first",
                              "## Static findings in the SASS that ran", "## What this means"}) {
    EXPECT_NE(md.find(section), std::string::npos) << section;
  }
  EXPECT_NE(md.find("| GPU | NVIDIA H200 (sm 9.0, 132 SMs, 140 GiB), UUID sha256 "), std::string::npos);
  EXPECT_EQ(md.find("GPU-"), std::string::npos) << "the GPU's UUID is hashed, never printed";
  EXPECT_NE(md.find("loraprobe sweep --quiet --config configs/seed-48590.json"), std::string::npos);
  EXPECT_NE(md.find("| Compilers | prebuilt (Triton 3.6.0): ptxas 12.8.93 c960a4f238b1, -lineinfo -v"), std::string::npos);
  // The map: 8 configurations (2 block_n x 4 Tritons), 10 token columns.
  EXPECT_EQ(count(md, "\n| `t3."), 8U);
  EXPECT_EQ(count(md, "| **L** |"), 30U);
  EXPECT_NE(md.find("### First latent case: case `9efe288f6599`"), std::string::npos);
  EXPECT_NE(md.find("| runs | 30 (0 wrong) |"), std::string::npos);
  // SASS excerpts: the in-flight MMA and the marked overwriting loads, with addresses.
  EXPECT_NE(md.find("  /*2380*/ HGMMA.64x128x16.F32.BF16 R24, R88, gdesc[UR8], R24, gsb0"), std::string::npos);
  EXPECT_NE(md.find("> /*2200*/ LDS.64 R90, [R4+UR6+0x4400]"), std::string::npos);
  EXPECT_NE(md.find("Triton 3.8.0 under prebuilt: 1 hazardous variant(s); ptxas made the hazard: ptxas \\>= 13.3 "
                    "fixes it (the PTX is clean, ptxas up to 13.2 re-creates the hazard)."),
            std::string::npos);
  // Only the variants the plan's cases ran: the controls' kernels are the controls block's.
  EXPECT_EQ(md.find("rawbits"), std::string::npos);
  // The bound and the remedies this run measured.
  EXPECT_NE(md.find("3/n (the rule of three): 0.1 here."), std::string::npos);
  EXPECT_NE(md.find("- **block\\_n 32**, the field workaround (vLLM PR \\#48638): PASS in 30 of the 30 hazardous cases"),
            std::string::npos);
  EXPECT_NE(md.find("- **Triton 3.9.0**, that Triton's kernel set: PASS in 30 of the 30 hazardous cases"),
            std::string::npos);
}

TEST(Markdown, CompactAndFullReportsReadTheSame) {
  // The 3.0.0 report rewritten as a 4.x compact one: the same Markdown but for the
  // schema row and the footer's file name.
  const Document full = seed();
  report::Report r = as_report(full);
  const TempDir scratch("lp-formats-test-");
  const std::string compact_path = scratch.path() + "/seed-compact.json";
  write_file_atomic(compact_path, r.dump());
  const Document compact = read_document(compact_path);
  auto strip = [](std::string md) {
    std::string out;
    std::size_t start = 0;
    while (start < md.size()) {
      const std::size_t end = md.find('\n', start);
      const std::string line = md.substr(start, end - start);
      if (line.rfind("| loraprobe |", 0) != 0 && line.rfind("<sub>Written by", 0) != 0) {
        out += line + "\n";
      }
      start = end == std::string::npos ? md.size() : end + 1;
    }
    return out;
  };
  EXPECT_EQ(strip(markdown_of(full)), strip(markdown_of(compact)));
}

TEST(Document, ACompactTablesRowsReadTheSameWhateverTheOrderOfItsKeys) {
  // read_document parses the blocks first and the rows in a second pass, so a table
  // whose rows come before its columns and groups (a file from another writer) reads
  // as one in loraprobe's own order.
  const Document full = seed();
  const std::string text = as_report(full).dump();
  nlohmann::ordered_json reordered = nlohmann::ordered_json::parse(text);
  nlohmann::ordered_json table = nlohmann::ordered_json::object();
  table["rows"] = reordered["cases"]["rows"];
  for (const auto& [key, value] : reordered["cases"].items()) {
    if (key != "rows") {
      table[key] = value;
    }
  }
  reordered.erase("cases");
  reordered["cases"] = std::move(table);  // after every other block, rows first
  const TempDir scratch("lp-order-test-");
  const Document own = read_document(scratch.write("own.json", text));
  const Document other = read_document(scratch.write("reordered.json", reordered.dump()));
  ASSERT_EQ(own.cases.size(), full.cases.size());
  ASSERT_EQ(other.cases.size(), own.cases.size());
  for (std::size_t i = 0; i < own.cases.size(); ++i) {
    EXPECT_EQ(other.cases[i].to_json(), own.cases[i].to_json()) << own.cases[i].id;
  }
  EXPECT_EQ(summary_of(other), summary_of(own));
}

/// The message of the InputError that read_document throws for `j` (written to a
/// scratch file named `name`), "" when it reads.
std::string read_refusal(const json& j, const std::string& name) {
  const TempDir scratch("lp-read-refusal-");
  const std::string path = scratch.path() + "/" + name;
  write_file_atomic(path, j.dump());
  try {
    (void)read_document(path);
  } catch (const InputError& e) {
    return std::string(e.what()).substr(scratch.path().size() + 1);
  }
  return "";
}

TEST(Document, AConfigurationHeldTwiceIsRefusedWhenTheReportIsRead) {
  // Issue 53: diff refused a report that holds a configuration twice, while report read
  // it (45 s over 317k such rows). The reader refuses it, once, for every command.
  json full = json::parse(read_file(k_seed));
  ASSERT_EQ(read_refusal(full, "full.json"), "");
  json copy = full["cases"][2];
  copy["index"] = full["cases"].size();
  full["cases"].push_back(copy);
  const std::string why = read_refusal(full, "full.json");
  EXPECT_EQ(why.rfind(fmt::format("full.json:/cases/{}: the configuration ", full["cases"].size() - 1), 0), 0U) << why;
  EXPECT_NE(why.find(fmt::format("(id {}) is also /cases/2: a report holds each configuration once",
                                 copy["id"].dump())),
            std::string::npos)
      << why;
  json compact = json::parse(read_file(std::string(LP_SOURCE_DIR) + "/tests/stack/fixtures/h100-check-run-amplify2.json"));
  ASSERT_EQ(read_refusal(compact, "compact.json"), "");
  json& rows = compact["cases"]["rows"];
  json row = rows[1];
  row[0] = rows.size();  // the index column
  rows.push_back(row);
  const std::string compact_why = read_refusal(compact, "compact.json");
  EXPECT_EQ(compact_why.rfind(fmt::format("compact.json:/cases/rows/{}: the configuration ", rows.size() - 1), 0), 0U)
      << compact_why;
  EXPECT_NE(compact_why.find("is also /cases/rows/1: a report holds each configuration once"), std::string::npos)
      << compact_why;
}

TEST(Document, ANulInAValueDoesNotCutTheMessage) {
  // Issue 53: what() is a C string; a NUL from the document ended the message there,
  // and "is not loraprobe: not a loraprobe report" was lost.
  json j = json::parse(read_file(k_seed));
  j["meta"]["tool"] = std::string("lora\0probe", 10);
  const std::string why = read_refusal(j, "nul.json");
  EXPECT_EQ(why, "nul.json:/meta/tool: \"lora\\x00probe\" is not loraprobe: not a loraprobe report") << why;
}

TEST(CaseIndex, FindsTheLastCaseOfAKeyAndTheFirstRepeatInStoreOrder) {
  report::CaseStore cases;
  for (const auto& [id, key] : std::vector<std::pair<std::string, std::string>>{
           {"a", "x"}, {"b", "y"}, {"c", "z"}, {"d", "y"}, {"e", "x"}, {"f", "y"}}) {
    report::CaseRecord c;
    c.id = id;
    c.axes.set("key", key);
    cases.push_back(c);
  }
  const CaseIndex index(cases, [](const report::CaseRecord& c) { return *c.axes.text("key"); });
  EXPECT_EQ(index.find("x"), 4U);
  EXPECT_EQ(index.find("y"), 5U);
  EXPECT_EQ(index.find("z"), 2U);
  EXPECT_FALSE(index.find("w").has_value());
  EXPECT_EQ(index.key(3), "y");
  // "y" is repeated at 3 (first seen at 1) before "x" is at 4.
  const auto repeat = index.first_repeat();
  ASSERT_TRUE(repeat.has_value());
  EXPECT_EQ(*repeat, std::make_pair(std::size_t{3}, std::size_t{1}));
  report::CaseStore once;
  once.push_back(cases[0]);
  once.push_back(cases[1]);
  EXPECT_FALSE(CaseIndex(once, [](const report::CaseRecord& c) { return c.id; }).first_repeat().has_value());
}

/// A report of `rows` configurations, every one LATENT at every token count.
Document many_latent_rows(std::size_t rows) {
  json r = {{"schema_version", "3.0.0"},
            {"environment", json::object()},
            {"summary", {{"counts", {{"LATENT", rows * 10}}}, {"exit_code", 0}, {"outcome", "clean"}}},
            {"cases", json::array()}};
  for (std::size_t i = 0; i < rows; ++i) {
    for (int t = 0; t < 10; ++t) {
      r["cases"].push_back({{"index", r["cases"].size()},
                            {"id", fmt::format("{:012x}", r["cases"].size())},
                            {"axes", {{"op", "expand"}, {"rank", 16 + i}, {"tokens", 16 << t}, {"triton", "3.6.0"}}},
                            {"variant", nullptr},
                            {"verdict", "LATENT"},
                            {"reason", "hazard"},
                            {"runs", 3},
                            {"failed_runs", 0},
                            {"metrics", nullptr},
                            {"timing", nullptr},
                            {"static_findings", 2}});
    }
  }
  // As read_document leaves a report: meta and the cases typed, out of the JSON.
  Document doc;
  doc.path = "many.json";
  doc.meta.argv = {"loraprobe", "sweep"};
  doc.meta.repeats = 3;
  doc.meta.plan.cases = rows * 10;
  for (const json& c : r["cases"]) {
    doc.cases.push_back(report::CaseRecord::from_json(c));
  }
  r.erase("cases");
  doc.schema_version = "3.0.0";
  doc.summary.counts = {{"LATENT", rows * 10}};
  doc.summary.exit_code = 0;
  doc.summary.outcome = "clean";
  doc.json = std::make_shared<const json>(std::move(r));
  return doc;
}

TEST(Markdown, AMapTooBigForAnIssueIsCutAndSaysSo) {
  const std::string md = markdown_of(many_latent_rows(2000));
  EXPECT_LE(md.size(), k_markdown_budget);
  EXPECT_NE(md.find("**Cut at 63 KB**"), std::string::npos);
  // Small enough: not cut.
  EXPECT_EQ(markdown_of(many_latent_rows(20)).find("Cut at"), std::string::npos);
}

TEST(View, AVariantsEarlyReadsAreItsOwnLinesInMarkdownAndHtml) {
  // A dual-stream expand's sass record with one gdc-early-read: its excerpt says so in
  // both formats, beside (not inside) the wgmma lines, with the parameter and the wait.
  Document doc = seed();
  report::VariantRecord* hazardous = nullptr;
  for (report::VariantRecord& v : doc.variants) {
    if (hazardous == nullptr && v.static_findings.value_or(0) > 0 && v.case_verdicts && !v.case_verdicts->empty()) {
      hazardous = &v;  // the first variant the findings section draws (a control's kernel is not one)
    }
  }
  ASSERT_NE(hazardous, nullptr);
  json sass = hazardous->sass.json_text().value();
  ASSERT_TRUE(sass.is_object());
  sass["kernels"][0]["early_reads"] = json::parse(
      R"([{"check": "gdc-early-read", "kernel": "_lora_expand_kernel", "address": "0x1800",
           "instruction": "LDGSTS.E.BYPASS.128 [R5+0x4000], desc[UR12][R18.64], P2", "param": "input_ptr",
           "wait": {"address": "0x22e0", "instruction": "ACQBULK"}}])");
  hazardous->sass = JsonText::of(sass);
  const std::vector<std::string> lines = early_read_lines_of(*hazardous->sass.record());
  ASSERT_EQ(lines.size(), 1U);
  EXPECT_EQ(lines[0], "/*1800*/ LDGSTS.E.BYPASS.128 [R5+0x4000], desc[UR12][R18.64], P2  // reads input_ptr before "
                      "ACQBULK at 0x22e0");
  EXPECT_NE(markdown_of(doc).find("gdc-early-read: 1 load(s) of a buffer the previous grid produces, before "
                                  "`griddepcontrol.wait`."),
            std::string::npos);
  EXPECT_NE(html_of(doc).find("<mark>/*1800*/ LDGSTS.E.BYPASS.128"), std::string::npos);
  EXPECT_EQ(markdown_of(seed()).find("gdc-early-read"), std::string::npos);
}

TEST(View, AModelSweepSaysWhatItDidNotSweepInEveryFormat) {
  // sweep --model of a MoE preset records the routed experts in meta.plan.not_swept.
  Document doc = seed();
  doc.meta.plan.not_swept = {{"experts.gate_up_proj", "no <fused> kernel"}, {"experts.down_proj", "no <fused> kernel"}};
  const std::string sentence =
      "Not swept: experts.gate_up_proj, experts.down_proj (no <fused> kernel); this report says nothing about them.";
  EXPECT_EQ(view_of(doc).not_swept, sentence);
  EXPECT_NE(summary_of(doc).find(sentence), std::string::npos);
  const std::string md = markdown_of(doc);
  // Right under the headline and the counts, escaped for Markdown.
  EXPECT_LT(md.find("Not swept: experts.gate\\_up\\_proj"), md.find("## Environment")) << md.substr(0, 600);
  EXPECT_NE(html_of(doc).find("<p class=\"note\">Not swept: experts.gate_up_proj, experts.down_proj (no &lt;fused&gt; "
                              "kernel)"),
            std::string::npos);
  // Without the key: no sentence.
  EXPECT_EQ(view_of(seed()).not_swept, "");
  EXPECT_EQ(markdown_of(seed()).find("Not swept"), std::string::npos);
}

// Issue 53: the summary showed a multi-line reason (a ptxas log) as literal "\n", and
// a remedy's reason was cut at byte 160, mid-word ("...writes registers of )").
TEST(View, LongAndMultiLineReasonsReadAsText) {
  Document doc = read_document(LP_SOURCE_DIR "/tests/stack/fixtures/h100-check-run-amplify2.json");
  ASSERT_TRUE(doc.summary.first_failure);
  for (std::size_t i = 0; i < doc.cases.size(); ++i) {
    report::CaseRecord c = doc.cases[i];
    if (static_cast<std::int64_t>(c.index) == doc.summary.first_failure->index) {
      c.reason = "ptxas fatal: first line\nsecond line";
      doc.cases.set(i, c);
    }
  }
  const std::string summary = summary_of(doc);
  EXPECT_EQ(summary.find("\\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("ptxas fatal: first line\n    second line\n"), std::string::npos) << summary;
  ASSERT_TRUE(doc.remedies && !doc.remedies->hazards.empty());
  report::RemedyRecord& r = doc.remedies->hazards.front().remedies.front();
  r.verdict = report::Verdict::fail;
  r.reason = std::string(150, 'x') + "; the PTX itself writes registers of the pending wgmma (fix in the PTX producer)";
  const std::vector<std::string> lines = remedy_lines(doc.remedies->hazards.front());
  EXPECT_NE(lines.front().find(" (" + std::string(150, 'x') + " ...)"), std::string::npos) << lines.front();
  r.reason = "short; reason";
  EXPECT_NE(remedy_lines(doc.remedies->hazards.front()).front().find(" (short; reason)"), std::string::npos);
}

// Issue 54: the remedies are built once in the view; Markdown and HTML lay out the same
// lines, each in its own markup.
TEST(View, TheRemediesSectionIsBuiltOnceAndEveryWriterLaysItOut) {
  Document doc = read_document(LP_SOURCE_DIR "/tests/stack/fixtures/h100-check-run-amplify2.json");
  ASSERT_TRUE(doc.remedies && !doc.remedies->hazards.empty());
  doc.remedies->notes = {"no bf16 <input> variant"};
  const RemediesSection r = view_of(doc).remedies;
  ASSERT_FALSE(r.measured_intro.empty());
  ASSERT_EQ(r.measured.size(), doc.remedies->hazards.size() + 1) << "each hazard, then the note";
  const report::HazardRemedies& h = doc.remedies->hazards.front();
  const ListItem& first = r.measured.front();
  ASSERT_EQ(first.line.size(), 4U);
  EXPECT_EQ(first.line[0].style, Span::Style::code);
  EXPECT_EQ(first.line[0].text, h.configuration);
  EXPECT_EQ(first.line[2].text, h.case_id);
  ASSERT_TRUE(first.children);
  const std::vector<std::string> lines = remedy_lines(h);
  ASSERT_EQ(first.children->size(), lines.size());
  EXPECT_FALSE(r.measured.back().children) << "a note has no list under it";
  const std::string md = markdown_of(doc);
  const std::string html = html_of(doc);
  EXPECT_NE(md.find(r.measured_intro), std::string::npos);
  EXPECT_NE(html.find("<p>" + r.measured_intro + "</p>"), std::string::npos);
  EXPECT_NE(md.find("- `" + h.configuration + "`, " + std::to_string(h.tokens) + " tokens ("), std::string::npos) << md;
  EXPECT_NE(html.find("<li><code>" + escape::xml(h.configuration) + "</code>, " + std::to_string(h.tokens) + " tokens ("),
            std::string::npos);
  // The note's data is escaped for each language by its writer.
  EXPECT_NE(md.find("- Note: no bf16 \\<input\\> variant.\n"), std::string::npos) << md;
  EXPECT_NE(html.find("<li>Note: no bf16 &lt;input&gt; variant.</li>\n"), std::string::npos);
}

// Issue 53 re-test: the text summary and Markdown read the stored summary block, so a
// stale or forged one ("10 PASS, exit 0") was believed while JUnit, from the rows, failed.
TEST(View, EveryFormatAnswersFromTheCasesNotAStoredSummary) {
  json forged = json::parse(read_file(LP_SOURCE_DIR "/tests/stack/fixtures/h100-check-run-amplify2.json"));
  forged["summary"] = {{"counts", {{"PASS", 10}}}, {"first_failure", nullptr}, {"minimal_failure", nullptr},
                       {"first_latent", nullptr}, {"exit_code", 0}, {"outcome", "clean"}};
  const TempDir dir("lp-forged-summary-");
  const std::string path = dir.write("forged.json", forged.dump());
  const Document doc = read_document(path);
  EXPECT_EQ(doc.summary.exit_code, 1);
  EXPECT_EQ(doc.summary.counts.at("FAIL"), 1U);
  ASSERT_TRUE(doc.summary.minimal_failure);
  EXPECT_EQ(doc.summary.minimal_failure->id, "3adf242cc0f2");
  EXPECT_NE(summary_of(doc).find("exit code 1 (failures)"), std::string::npos) << summary_of(doc);
  EXPECT_EQ(markdown_of(doc).find("exit code 0"), std::string::npos);
  EXPECT_NE(junit_of(doc).find("failures=\"1\""), std::string::npos);
}

// Issue 53 re-test: a merge --allow-partial (or a sweep stopped by a signal) read as
// clean in JUnit and Markdown when the cases it holds passed: a gate went green on a
// fraction of its plan. Both now say it stopped, JUnit as an error.
TEST(View, AReportThatStoppedShortOfItsPlanSaysSoInEveryFormat) {
  Document doc = read_document(LP_SOURCE_DIR "/tests/stack/fixtures/h100-check-run-amplify2.json");
  const std::string junit_whole = junit_of(doc);
  EXPECT_EQ(junit_whole.find("loraprobe run"), std::string::npos);
  doc.interrupted = "merged with --allow-partial: 10 of 20 cases, 1 shard(s) missing";
  const std::string junit = junit_of(doc);
  EXPECT_NE(junit.find("<testcase name=\"the whole plan ran\" classname=\"loraprobe.run\""), std::string::npos)
      << junit;
  EXPECT_NE(junit.find("<error message=\"10 of 10 planned case(s) are here; stopped: merged with --allow-partial: 10 "
                       "of 20 cases, 1 shard(s) missing\" type=\"incomplete\">"),
            std::string::npos)
      << junit;
  EXPECT_EQ(markdown_of(doc).rfind("# loraprobe: INCOMPLETE: 10 of 10 planned case(s) are here (stopped: merged with "
                                   "--allow-partial: 10 of 20 cases, 1 shard(s) missing). Of those: ",
                                   0),
            0U)
      << markdown_of(doc).substr(0, 300);
}

TEST(StackMatrix, TheSeedReportAnswersWhichStackIsFixedAndWhoseFaultTheRestIs) {
  const StackMatrix m = stack_matrix(seed());
  ASSERT_EQ(m.rows.size(), 4U);
  EXPECT_EQ(m.compilers, std::vector<std::string>{"prebuilt"});
  EXPECT_EQ(m.labels, std::vector<std::string>{"Triton's own ptxas"});
  std::vector<std::string> cells;
  for (const StackRow& row : m.rows) {
    cells.push_back(row.triton + " " + row.own_ptxas + ": " + row.cells[0].text());
  }
  EXPECT_EQ(cells, (std::vector<std::string>{"3.6.0 12.8.93: hazard (PTX)", "3.7.1 12.8.93: hazard (PTX)",
                                             "3.8.0 12.9.86: hazard (ptxas)", "3.9.0 13.4.59: clean"}));
  // A hazard ptxas made names the ptxas that fixes it, and the ones that do not.
  EXPECT_EQ(m.answer,
            "Fixed: Triton 3.9.0 with its own ptxas 13.4.59. Hazardous: Triton 3.6.0 with its own ptxas 12.8.93, made "
            "by the PTX: no ptxas fixes it; Triton 3.7.1 with its own ptxas 12.8.93, made by the PTX: no ptxas fixes "
            "it; Triton 3.8.0 with its own ptxas 12.9.86, made by ptxas: ptxas >= 13.3 fixes it (the PTX is clean, "
            "ptxas up to 13.2 re-creates the hazard).");
  // A 3.0.0 report has no remedies block: the rows say how to measure them.
  EXPECT_EQ(m.rows[0].remedy, "no remedy measured: run the sweep with --remedies to measure them");
  EXPECT_TRUE(m.rows[3].remedy.empty());
  // First in the Markdown after the outcome, and first in the summary after its title.
  const std::string md = markdown_of(seed());
  EXPECT_LT(md.find("## Is my stack fixed?"), md.find("## Environment"));
  EXPECT_NE(md.find("| 3.8.0 (own ptxas 12.9.86) | **hazard (ptxas)** |"), std::string::npos) << md.substr(0, 1500);
  EXPECT_NE(md.find("The PTX: no ptxas fixes it. ptxas: ptxas \\>= 13.3 fixes it (the PTX is clean, ptxas up to 13.2 "
                    "re-creates the hazard).\n"),
            std::string::npos)
      << md.substr(0, 1500);
  const std::string summary = summary_of(seed());
  EXPECT_EQ(summary.find("is my stack fixed?"), summary.find('\n') + 1) << summary.substr(0, 400);
  // One screen: no line past k_summary_width but the command, which must stay copyable.
  std::size_t lines = 0;
  for (std::size_t at = 0; at < summary.size(); ++lines) {
    const std::size_t end = summary.find('\n', at);
    const std::string line = summary.substr(at, end - at);
    EXPECT_TRUE(line.size() <= k_summary_width || line.rfind("command: ", 0) == 0) << line;
    at = end + 1;
  }
  EXPECT_LE(lines, 40U) << summary;
  EXPECT_NE(html_of(seed()).find("<td class=\"L\" title=\"20 case(s)\">hazard (PTX)</td>"), std::string::npos);
  // JUnit: each suite of a (Triton set, compiler) carries its cell and the answer as properties.
  const std::string xml = junit_of(seed());
  EXPECT_NE(xml.find("Triton 3.8.0\" tests=\"20\""), std::string::npos) << xml.substr(0, 600);
  EXPECT_NE(xml.find("<property name=\"loraprobe.stack\" value=\"hazard (ptxas)\"/>"), std::string::npos);
  EXPECT_EQ(count(xml, "<property name=\"loraprobe.answer\" value=\"Fixed: Triton 3.9.0 with its own ptxas 13.4.59."),
            4U);
}

TEST(StackMatrix, CleanFailingAndIncompatibleRuns) {
  auto with = [](std::vector<std::pair<report::Verdict, std::string>> cells) {
    Document doc = many_latent_rows(1);
    std::vector<report::CaseRecord> cases = doc.cases.records();
    cases.resize(cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      cases[i].verdict = cells[i].first;
      cases[i].axes.set("compiler", cells[i].second);
      cases[i].attribution = "ptx";
    }
    doc.cases = cases;
    return stack_matrix(doc);
  };
  // Everything clean: one sentence, no hazard, no remedy line.
  StackMatrix m = with({{report::Verdict::pass, "prebuilt"}, {report::Verdict::pass, "prebuilt"}});
  EXPECT_EQ(m.answer, "Fixed: Triton 3.6.0 with its own ptxas.");
  EXPECT_TRUE(m.rows[0].remedy.empty());
  // A FAIL leads, and is the cell whatever else the pairing saw.
  m = with({{report::Verdict::latent, "prebuilt"}, {report::Verdict::fail, "prebuilt"},
            {report::Verdict::pass, "ptxas=13.3"}});
  EXPECT_EQ(m.rows[0].cells[0].text(), "FAIL");
  EXPECT_EQ(m.rows[0].cells[1].text(), "clean");
  EXPECT_EQ(m.answer.rfind("Wrong or no results: Triton 3.6.0 with its own ptxas (FAIL). Fixed: Triton 3.6.0 with "
                           "ptxas=13.3.",
                           0),
            0U)
      << m.answer;
  // Every case incompatible: nothing is fixed, nothing is hazardous.
  m = with({{report::Verdict::incompatible, "ptxas=toolkit"}, {report::Verdict::incompatible, "ptxas=toolkit"}});
  EXPECT_EQ(m.rows[0].cells[0].text(), "incompatible");
  EXPECT_EQ(m.answer, "Fixed: no pairing this run covered.");
  // An inspect document of files has no Triton set: no matrix.
  const Document files = inspect_document_of(
      "i.json", std::make_shared<const json>(json{{"items", json::array({{{"triton", nullptr}, {"status", "hazard"}}})}}));
  EXPECT_TRUE(stack_matrix(files).empty());
}

TEST(Junit, ACaseWhoseTimesWereLostStillGetsItsTestCase) {
  // A worker reports a case that ended just before the next one faulted with its
  // metrics and null times (worker/execute.hpp, landed_result); every format reads it.
  Document doc = many_latent_rows(1);
  report::CaseRecord c = doc.cases[0];
  c.verdict = report::Verdict::pass;
  c.timing = CaseTiming{std::nullopt, std::nullopt, 4096, std::nullopt};
  doc.cases.set(0, c);
  report::CaseRecord d = doc.cases[1];
  d.timing = CaseTiming{2.0, 1.0, 4096, std::nullopt};
  doc.cases.set(1, d);
  const std::string xml = junit_of(doc);
  EXPECT_NE(xml.find(fmt::format("[{}]\" classname=\"loraprobe.3.6.0.expand.\" time=\"0", c.id)),
            std::string::npos)
      << xml.substr(0, 2000);
  EXPECT_NE(xml.find("time=\"0.007"), std::string::npos) << xml.substr(0, 2000);  // 3 runs x 2 ms + 1 ms
  EXPECT_NO_THROW((void)markdown_of(doc));
  EXPECT_NO_THROW((void)html_of(doc));
}

TEST(Html, SelfContainedWithHoverTipsAndMarkedLines) {
  const std::string html = html_of(seed());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0U);
  for (const char* outside : {"src=", "href=", "url(", "@import", "<script"}) {
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  }
  EXPECT_NE(html.find("title=\"16 tokens: LATENT (case 9efe288f6599), worst deviation 0 of tolerance\""),
            std::string::npos);
  EXPECT_NE(html.find("<mark>/*2200*/ LDS.64 R90, [R4+UR6+0x4400]"), std::string::npos);
  EXPECT_NE(html.find("<h2 id=\"margin\">Margin of the clean cases</h2>"), std::string::npos);
  EXPECT_NE(html.find("50 PASS case(s) with a measured deviation"), std::string::npos);
  EXPECT_EQ(count(html, "<td class=\"cell L\""), 30U);
  // The compilers are a table of their own, one row each, not one cell of the environment.
  EXPECT_EQ(html.find("<tr><td>Compilers</td>"), std::string::npos);
  EXPECT_NE(html.find("<tr><td>3.8.0</td><td>prebuilt</td><td>12.9.86</td><td>983b0e928385</td><td>-lineinfo -v "
                      "--regAllocOptLevel=2 --gpu-name=sm_90a</td></tr>"),
            std::string::npos);
  // One header row per group of the verdict map: the seed report's four Triton groups
  // each hold a LATENT (or PASS) row and the PASS row of block_n 32 (issue 33 saw the
  // header repeated above every row).
  EXPECT_EQ(count(html, "<h3>Triton "), 4U);
  EXPECT_EQ(count(html, "<th class=\"label\">configuration</th>"), 4U);
}

TEST(Html, MarginBinsAreExactThenTenthsOfTheTolerance) {
  const std::vector<std::size_t> bins = margin_histogram({0.0, 0.0, 0.05, 0.1, 0.1000001, 0.95, 1.0, 3.0});
  ASSERT_EQ(bins.size(), 11U);
  EXPECT_EQ(bins[0], 2U);   // exact
  EXPECT_EQ(bins[1], 2U);   // (0, 0.1]
  EXPECT_EQ(bins[2], 1U);   // (0.1, 0.2]
  EXPECT_EQ(bins[10], 3U);  // (0.9, 1], and a PASS past 1 (an override) lands in the last bin
}

TEST(View, InspectDocumentsGetTheirHazardousCubins) {
  const json sass = {{"kernels",
                      {{{"findings",
                         {{{"address", "0x0010"},
                           {"instruction", "LDS.64 R88, [R1]"},
                           {"access", "write"},
                           {"registers", {"R88", "R89"}},
                           {"over_back_edge", true},
                           {"wgmma", {{"address", "0x0060"}, {"instruction", "HGMMA.64x128x16.F32.BF16 R24, R88"}}},
                           {"wait", {{"address", "0x0070"}, {"instruction", "WARPGROUP.DEPBAR.LE gsb0, 0x1"}}}}}}}}}};
  const json d = {{"schema_version", "3.1.0"},
                  {"meta", {{"command", "inspect"}, {"argv", {"loraprobe", "inspect"}}}},
                  {"summary", {{"items", 2}, {"hazard", 1}, {"findings", 1}, {"exit_code", 1}}},
                  {"items",
                   {{{"name", "expand-a"}, {"status", "hazard"}, {"finding_count", 1}, {"triton", "3.6.0"},
                     {"compiler", "prebuilt"}, {"attribution", "ptx"}, {"sass", sass}},
                    {{"name", "expand-b"}, {"status", "clean"}}}}};
  const Document doc = inspect_document_of("inspect.json", std::make_shared<const json>(d));
  const std::string md = markdown_of(doc);
  EXPECT_NE(md.find("# loraprobe inspect: 2 cubins, 1 with a hazard, 1 findings"), std::string::npos) << md;
  EXPECT_NE(md.find("  /*0070*/ WARPGROUP.DEPBAR.LE gsb0, 0x1"), std::string::npos) << md;
  EXPECT_NE(md.find("> /*0010*/ LDS.64 R88, [R1]"), std::string::npos) << md;
  EXPECT_EQ(md.find("expand-b"), std::string::npos);
  EXPECT_NE(html_of(doc).find("<mark>/*0010*/ LDS.64 R88, [R1]"), std::string::npos);
}

/// The message of the InputError that reading `d` as an inspect document throws, "" when none.
std::string inspect_refusal(const json& d) {
  try {
    (void)inspect_document_of("t.json", std::make_shared<const json>(d));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(View, AnInspectItemOfTheWrongTypeIsRefusedAtItsPointer) {
  // Issue 53, defect 3: a status of 5 used to read as no status, so a document with a
  // hazard passed JUnit with failures="0"; /items as "str", 5 or null read as no items.
  const json good = json::parse(R"({
    "schema_version": "3.5.0",
    "meta": {"command": "inspect"},
    "summary": {"items": 1, "hazard": 1, "exit_code": 1},
    "items": [
      {"status": "hazard", "name": "b", "compiler": "prebuilt", "ms": 1500, "finding_count": 1,
       "sass": {"kernels": [{"findings": [{"address": "0x0010", "registers": ["R88"], "wgmma": {"address": "0x0060"}}]}]}}]})");
  ASSERT_EQ(inspect_refusal(good), "");
  EXPECT_NE(junit_of(inspect_document_of("t.json", std::make_shared<const json>(good)), {}).find("failures=\"1\""),
            std::string::npos);
  const std::vector<std::pair<std::string, json>> wrong = {
      {"/items/0/status", 5},
      {"/items/0/status", "hazardous"},
      {"/items", "str"},
      {"/items", 5},
      {"/items", nullptr},
      {"/items/0/name", 7},
      {"/items/0/finding_count", "3"},
      {"/items/0/sass", "not a report"},
      {"/items/0/sass/kernels/0/findings/0/address", 16},
      {"/items/0/sass/kernels/0/findings/0/address", "x"},
      {"/items/0/sass/kernels/0/findings/0/registers/0", 88},
      {"/items/0/sass/kernels/0/findings/0/wgmma", "HGMMA"},
      {"/summary/items", "2"},
      {"/meta/command", nullptr},
  };
  const TempDir scratch("lp-inspect-types-");
  for (const auto& [pointer, value] : wrong) {
    json d = good;
    d[json::json_pointer(pointer)] = value;
    if (pointer == "/meta/command") {
      // No command: not an inspect document, but a report whose blocks are missing.
      write_file_atomic(scratch.path() + "/no-command.json", d.dump());
      EXPECT_THROW((void)read_document(scratch.path() + "/no-command.json"), InputError);
      continue;
    }
    const std::string why = inspect_refusal(d);
    EXPECT_EQ(why.rfind("t.json:" + pointer + ": expected ", 0), 0U) << pointer << " = " << value.dump() << ": " << why;
  }
}

}  // namespace
}  // namespace lp::formats

namespace lp::formats {
namespace {

TEST(Diff, AmplifiedCasesAreConfigurationsOfTheirOwnWithTheirLabel) {
  // A FAIL under amplification that a fix turns into PASS is "fixed", matched by its
  // axes (amplify among them), never with the unamplified case of the same knobs.
  Document before = read_document(std::string(LP_SOURCE_DIR) + "/tests/report/fixtures/seed-h200-3.0.0.json");
  report::CaseRecord amplified = before.cases[0];
  amplified.axes.set("amplify", 2);
  amplified.id = "00000000a0a0";
  amplified.verdict = report::Verdict::fail;
  amplified.reason = "under amplification (2 queued wgmma pairs): 30 of 30 runs wrong";
  before.cases.push_back(amplified);
  Document after = before;
  report::CaseRecord fixed = after.cases.back();
  fixed.verdict = report::Verdict::pass;
  fixed.reason.clear();
  after.cases.set(after.cases.size() - 1, fixed);
  const Diff d = diff_reports(before, after, {});
  EXPECT_FALSE(d.regressed);
  ASSERT_EQ(d.to_json()["fixed"].size(), 1U) << d.to_json().dump();
  EXPECT_EQ(d.to_json()["fixed"][0]["old"]["id"], "00000000a0a0");
  EXPECT_NE(d.to_json()["fixed"][0]["old"]["label"].get<std::string>().find(" amp2"), std::string::npos)
      << d.to_json()["fixed"][0].dump();
  EXPECT_EQ(d.to_json()["matched"], before.cases.size());
}

// Issue 53: a --match-compiler that maps one compiler of the old report onto another it
// also ran makes two of its cases one configuration; that was blamed on the report file
// ("a report holds each configuration once"). It is the flag's doing, and said so.
TEST(Diff, AMatchCompilerThatMergesTwoOfTheOldCompilersBlamesTheFlag) {
  Document before = read_document(std::string(LP_SOURCE_DIR) + "/tests/report/fixtures/seed-h200-3.0.0.json");
  report::CaseRecord twin = before.cases[0];
  twin.axes.set("compiler", "ptxas=13.0.88");
  twin.id = "00000000b0b0";
  before.cases.push_back(twin);
  DiffOptions options;
  options.match_compiler["prebuilt"] = "ptxas=13.0.88";
  try {
    (void)diff_reports(before, before, options);
    ADD_FAILURE() << "diff accepted a mapping that merges two cases of the old report";
  } catch (const InputError& e) {
    ADD_FAILURE() << "blamed the report: " << e.what();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--match-compiler prebuilt=ptxas=13.0.88: cases " + before.cases[0].id +
                  " (prebuilt) and 00000000b0b0 (ptxas=13.0.88) of " + before.path +
                  " are then one configuration, both matched as ptxas=13.0.88: map each compiler onto one the old "
                  "report does not run too");
  }
}

TEST(Diff, IncompatibleIsARegressionFromPassAndNowCompilableBackToPass) {
  const Document seed_report = read_document(std::string(LP_SOURCE_DIR) + "/tests/report/fixtures/seed-h200-3.0.0.json");
  std::size_t pass = 0;
  while (seed_report.cases[pass].verdict != report::Verdict::pass) {
    ++pass;
  }
  Document broken = seed_report;
  report::CaseRecord incompatible = broken.cases[pass];
  incompatible.verdict = report::Verdict::incompatible;
  incompatible.reason = "the PTX is .version 9.4; ptxas 13.0.88 reads up to 9.0";
  broken.cases.set(pass, incompatible);
  const Diff upgrade = diff_reports(seed_report, broken, {});
  EXPECT_TRUE(upgrade.regressed);
  ASSERT_EQ(upgrade.to_json()["newly_incompatible"].size(), 1U) << upgrade.to_json().dump();
  EXPECT_TRUE(upgrade.to_json()["newly_failing"].empty());
  EXPECT_NE(upgrade.text().find("newly incompatible (the compiler no longer reads the PTX): 1\n  PASS -> "
                                "incompatible"),
            std::string::npos)
      << upgrade.text();
  const Diff fixed = diff_reports(broken, seed_report, {});
  EXPECT_FALSE(fixed.regressed);
  ASSERT_EQ(fixed.to_json()["now_compilable"].size(), 1U) << fixed.to_json().dump();
  EXPECT_TRUE(fixed.to_json()["other_changes"].empty());
}

TEST(View, EveryCaseIncompatibleSaysTheRunJudgedNothing) {
  Document doc = many_latent_rows(3);
  std::vector<report::CaseRecord> cases = doc.cases.records();
  for (report::CaseRecord& c : cases) {
    c.verdict = report::Verdict::incompatible;
    c.reason = "3.9.0/v|ptxas=13.0: the PTX is .version 9.4; ptxas 13.0.88 reads up to 9.0";
    c.metrics.reset();
    c.timing.reset();
  }
  doc.cases = cases;
  doc.summary.counts = {{"incompatible", doc.cases.size()}};
  doc.summary.outcome = "nothing_compatible";
  doc.summary.exit_code = 3;
  const ReportView v = view_of(doc);
  EXPECT_EQ(v.headline.rfind("INCOMPATIBLE: none of the ", 0), 0U) << v.headline;
  // JUnit: not run, not failed.
  const std::string xml = junit_of(doc);
  EXPECT_EQ(xml.find("<failure"), std::string::npos);
  EXPECT_EQ(xml.find("<error"), std::string::npos);
  EXPECT_NE(xml.find("<skipped"), std::string::npos);
}

}  // namespace
}  // namespace lp::formats

namespace lp::formats {
namespace {

TEST(MetricsLine, ACompactRowSaysWhatTheWorkersSentenceSaid) {
  // The H200 seed report kept each case's sentence (--detail full); a compact row keeps
  // only the numbers. The sentence rebuilt from them is the worker's, word for word.
  const nlohmann::json report =
      nlohmann::json::parse(read_file(LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json"));
  std::size_t compared = 0;
  for (const nlohmann::json& c : report.at("cases")) {
    const nlohmann::json& metrics = c.at("metrics");
    if (!metrics.is_object()) {
      continue;
    }
    nlohmann::json numbers = metrics;
    numbers.erase("summary");
    EXPECT_EQ(metrics_from_json(JsonIn(numbers, "seed-h200-3.0.0.json")).summary(), metrics.at("summary").get<std::string>())
        << c.at("id");
    ++compared;
  }
  EXPECT_GT(compared, 20U);
}

}  // namespace
}  // namespace lp::formats
