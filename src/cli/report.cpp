// loraprobe report: a sweep report or an inspect document in another format, for
// people (summary) and CI systems (JUnit XML).

#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output_options.hpp"
#include "cli/validators.hpp"
#include "formats/document.hpp"
#include "formats/outputs.hpp"
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
  OutputFlags outputs;
  bool stdout_asked = false;  ///< --format or --out given: that one is written as well as --output's
};

int run_report(const ReportOptions& o) {
  const formats::Document doc = formats::read_document(o.path);
  formats::OutputOptions options;
  options.detail = *report::parse_detail(o.detail);
  if (!o.fail_on.empty()) {
    options.latent_fails = failing_verdicts(o.fail_on).count(report::Verdict::latent) > 0;
  }
  const formats::ExtraOutputs outputs = extra_outputs(o.outputs, options);
  // Each format is written as it is made (a compact report's rows, JUnit's test cases,
  // the HTML verdict map, one at a time), to stdout or atomically to --out. With only
  // --output, nothing goes to stdout.
  if (o.stdout_asked || !outputs.any()) {
    const formats::OutputFormat& format = *formats::find_output_format(o.format);
    const auto produce = [&](const TextSink& sink) { format.write(doc, options, sink); };
    if (o.out.empty() || o.out == "-") {
      produce([](std::string_view piece) { fmt::print("{}", piece); });
    } else {
      write_file_atomic(o.out, produce);
    }
  }
  formats::write_outputs(doc, outputs);
  return 0;
}

}  // namespace

Command add_report_command(CLI::App& app) {
  auto o = std::make_shared<ReportOptions>();
  CLI::App* sub = app.add_subcommand(
      "report", "Convert a sweep report or an inspect --json document: a one-screen summary, or JUnit XML for CI");
  sub->add_option("file", o->path, "A report (loraprobe sweep --out) or an inspect --json document")->required();
  std::vector<std::string> names;
  for (const formats::OutputFormat& f : formats::output_formats()) {
    names.emplace_back(f.name);
  }
  sub->add_option("-f,--format", o->format,
                  "summary (default), md (Markdown for an issue, under 64 KB), html (one self-contained page), junit, "
                  "or json (the report again in the current schema, --detail compact or full)")
      ->check(CLI::IsMember(names));
  sub->add_option("--detail", o->detail, "json: compact (default) or full case records, as sweep --detail")
      ->check(CLI::IsMember({"compact", "full"}));
  sub->add_option("-o,--out", o->out, "Write here instead of stdout (atomically; - is stdout)")->check(non_empty());
  add_output_options(*sub, o->outputs, "the document");
  sub->add_option("--fail-on", o->fail_on,
                  "JUnit: the verdicts that fail, as sweep's --fail-on (LATENT is a <failure> with latent, a "
                  "<skipped> without); default: the report's own")
      ->delimiter(',');
  sub->footer(
      "Examples:\n"
      "  loraprobe report loraprobe-report-20261201T120000Z.json\n"
      "  loraprobe report report.json --format junit -o loraprobe-junit.xml --fail-on latent\n"
      "  loraprobe report report.json --output md=report.md --output html=report.html\n"
      "  loraprobe inspect --json > inspect.json && loraprobe report inspect.json --format junit\n"
      "  loraprobe report old-3.0.0-report.json --format json -o compact.json   (a 3.x report, compact)\n"
      "Exit codes: 0 written, 2 a file that is no loraprobe document (or of a major schema version this loraprobe "
      "does not read).");
  sub->final_callback([o, sub] { o->stdout_asked = sub->count("--format") > 0 || sub->count("--out") > 0; });
  return {sub, [o] { return run_report(*o); }};
}

}  // namespace lp::cli
