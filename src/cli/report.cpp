// loraprobe report: a sweep report or an inspect document in another format, for
// people (summary) and CI systems (JUnit XML).

#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.hpp"
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

/// A document that is loraprobe's by its schema version but not by its shape is bad
/// input, not a crash.
template <class F>
std::string convert(const formats::Document& doc, F&& f) {
  try {
    return f();
  } catch (const nlohmann::json::exception& e) {
    throw InputError(doc.path, "", fmt::format("not the shape its schema version promises: {}", e.what()));
  }
}

int run_report(const ReportOptions& o) {
  formats::Document doc = formats::read_document(o.path);
  const bool to_stdout = o.out.empty() || o.out == "-";
  std::string text;
  if (o.format == "json") {
    // Written as it is made: a compact report's rows one at a time.
    report::Report r = formats::as_report(std::move(doc));
    r.detail = *report::parse_detail(o.detail);
    if (to_stdout) {
      r.dump([](std::string_view piece) { fmt::print("{}", piece); });
    } else {
      write_file_atomic(o.out, [&](const TextSink& sink) { r.dump(sink); });
    }
    return 0;
  }
  if (o.format == "html") {
    text = convert(doc, [&] { return formats::html_of(doc); });
  } else if (o.format == "md") {
    text = convert(doc, [&] { return formats::markdown_of(doc); });
  } else if (o.format == "junit") {
    formats::JunitOptions options;
    if (!o.fail_on.empty()) {
      bool latent = false;
      for (const std::string& name : o.fail_on) {
        const std::optional<report::Verdict> v = report::parse_verdict(name);
        if (!v || *v == report::Verdict::pass) {
          throw UsageError(fmt::format("--fail-on {}: not a failing verdict (latent, skipped, incomplete, FAIL, "
                                       "fault, timeout, compile_error)",
                                       name));
        }
        latent = latent || *v == report::Verdict::latent;
      }
      options.latent_fails = latent;
    }
    // Written as it is made: a report's test cases one at a time.
    const auto produce = [&](const TextSink& sink) {
      convert(doc, [&] {
        formats::junit_of(doc, options, sink);
        return std::string();
      });
    };
    if (to_stdout) {
      produce([](std::string_view piece) { fmt::print("{}", piece); });
    } else {
      write_file_atomic(o.out, produce);
    }
    return 0;
  } else {
    text = convert(doc, [&] { return formats::summary_of(doc); });
  }
  if (to_stdout) {
    fmt::print("{}", text);
  } else {
    write_file_atomic(o.out, text);
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
  sub->add_option("-o,--out", o->out, "Write here instead of stdout (atomically)");
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
