// loraprobe report: a sweep report or an inspect document in another format, for
// people (summary) and CI systems (JUnit XML).

#include <functional>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "formats/document.hpp"
#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "formats/summary.hpp"
#include "report/verdict.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::cli {

namespace {

struct ReportOptions {
  std::string path;
  std::string format = "summary";
  std::string out;
  std::vector<std::string> fail_on;
  std::string detail = "compact";
};

int run_report(const ReportOptions& o) {
  formats::Document doc = formats::read_document(o.path);
  // Each format is written as it is made (a compact report's rows, JUnit's test cases,
  // the HTML verdict map, one at a time), to stdout or atomically to --out.
  std::function<void(const TextSink&)> produce;
  std::optional<report::Report> rewritten;
  if (o.format == "json") {
    rewritten = formats::as_report(std::move(doc));
    rewritten->detail = *report::parse_detail(o.detail);
    produce = [&](const TextSink& sink) { rewritten->dump(sink); };
  } else if (o.format == "html") {
    produce = [&](const TextSink& sink) { formats::shape_checked(doc.path, [&] { formats::html_of(doc, sink); }); };
  } else if (o.format == "md") {
    produce = [&](const TextSink& sink) { formats::shape_checked(doc.path, [&] { sink(formats::markdown_of(doc)); }); };
  } else if (o.format == "junit") {
    formats::JunitOptions options;
    if (!o.fail_on.empty()) {
      options.latent_fails = failing_verdicts(o.fail_on).count(report::Verdict::latent) > 0;
    }
    produce = [&doc, options](const TextSink& sink) { formats::shape_checked(doc.path, [&] { formats::junit_of(doc, options, sink); }); };
  } else {
    produce = [&](const TextSink& sink) { formats::shape_checked(doc.path, [&] { sink(formats::summary_of(doc)); }); };
  }
  if (o.out.empty() || o.out == "-") {
    produce([](std::string_view piece) { fmt::print("{}", piece); });
  } else {
    write_file_atomic(o.out, produce);
  }
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Convert a sweep report or an inspect --json document: a one-screen summary, or JUnit XML for CI");
  sub->add_option("file", o->path, "A report (loraprobe sweep --out) or an inspect --json document")->required();
  sub->add_option("-f,--format", o->format,
                  "summary (default), md (Markdown for an issue, under 64 KB), html (one self-contained page), junit, "
                  "or json (the report again in the current schema, --detail compact or full)")
      ->check(CLI::IsMember({"summary", "junit", "json", "md", "html"}));
  sub->add_option("--detail", o->detail, "json: compact (default) or full case records, as sweep --detail")
      ->check(CLI::IsMember({"compact", "full"}));
  sub->add_option("-o,--out", o->out, "Write here instead of stdout (atomically; - is stdout)")->check(non_empty());
  sub->add_option("--fail-on", o->fail_on,
                  "JUnit: the verdicts that fail, as sweep's --fail-on (LATENT is a <failure> with latent, a "
                  "<skipped> without); default: the report's own")
      ->delimiter(',');
  sub->footer(
      "Examples:\n"
      "  loraprobe report loraprobe-report-20261201T120000Z.json\n"
      "  loraprobe report report.json --format junit -o loraprobe-junit.xml --fail-on latent\n"
      "  loraprobe inspect --json > inspect.json && loraprobe report inspect.json --format junit\n"
      "  loraprobe report old-3.0.0-report.json --format json -o compact.json   (a 3.x report, compact)\n"
      "Exit codes: 0 written, 2 a file that is no loraprobe document (or of a major schema version this loraprobe "
      "does not read).");
  return {sub, [o] { return run_report(*o); }};
}

}  // namespace lp::cli
