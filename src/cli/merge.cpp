// loraprobe merge: the reports (or journals) of the shards of one plan, as one report.

#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/output_options.hpp"
#include "cli/validators.hpp"
#include "formats/document.hpp"
#include "formats/merge.hpp"
#include "formats/outputs.hpp"
#include "formats/summary.hpp"
#include "report/verdict.hpp"
#include "util/escape.hpp"

namespace lp::cli {

namespace {

struct MergeCliOptions {
  std::vector<std::string> parts;
  std::string out;
  bool allow_partial = false;
  std::string detail = "compact";
  OutputFlags outputs;  ///< --output FORMAT=PATH, --markdown, --html, --junit
};

int run_merge(const MergeCliOptions& o) {
  // The outputs are checked (a format, a path given twice) before anything is read.
  formats::ExtraOutputs outputs = extra_outputs(o.outputs, {});
  formats::MergeOptions options;
  options.allow_partial = o.allow_partial;
  report::Report merged = formats::merge_reports(o.parts, options);
  merged.detail = *report::parse_detail(o.detail);
  outputs.options.latent_fails = merged.fail_on.count(report::Verdict::latent) > 0;
  outputs.options.detail = merged.detail;
  merged.write(o.out);
  const report::Summary s = merged.summary();
  const formats::Document doc = formats::read_document(o.out);
  formats::write_outputs(doc, outputs);
  fmt::print("{}", formats::summary_of(doc));
  if (merged.stopped) {  // merge_reports stops the report only for an incomplete merge (--allow-partial)
    // An incomplete sweep is not a clean one: a gate must not pass on the cases that ran.
    fmt::print(stderr, "merge: warning: {}; exit {}\n", escape::terminal_line(merged.stopped.value_or("")),
               s.exit_code == 0 ? 3 : s.exit_code);
    return s.exit_code == 0 ? 3 : s.exit_code;
  }
  return s.exit_code;
}

}  // namespace

Command add_merge_command(CLI::App& app) {
  auto o = std::make_shared<MergeCliOptions>();
  CLI::App* sub = app.add_subcommand(
      "merge", "Join the reports of the shards of one plan (sweep --shard I/N) into the report of the whole sweep");
  sub->add_option("parts", o->parts,
                  "Each shard's report, or the journal (.jsonl) of a shard that died; every shard once")
      ->required();
  sub->add_option("-o,--out", o->out, "The merged report")->required()->check(non_empty());
  sub->add_flag("--allow-partial", o->allow_partial,
                "Merge what is there when shards are missing or stopped short; the report says it is incomplete");
  sub->add_option("--detail", o->detail, "compact (default) or full case records, as sweep --detail")
      ->check(CLI::IsMember({"compact", "full"}));
  add_output_options(*sub, o->outputs, "the merged report");
  sub->footer(
      "Examples:\n"
      "  loraprobe merge shard-*.json -o all.json\n"
      "  loraprobe merge shard-0.json shard-1.json shard-2.jsonl -o all.json --allow-partial\n"
      "docs/scale.md has a Slurm array job and a Kubernetes Indexed Job that end in a merge.\n"
      "Exit codes: as sweep's for the merged cases (0 clean, 1 failures, 3 invalid controls, or an incomplete merge "
      "with --allow-partial that found no failure); 2 parts that cannot "
      "be merged (another plan, loraprobe, schema, kernel set, config or --fail-on; a shard twice; a shard missing "
      "or stopped short without --allow-partial).");
  return {sub, [o] { return run_merge(*o); }};
}

}  // namespace lp::cli
