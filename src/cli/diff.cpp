// loraprobe diff: the upgrade gate's before/after of two sweep reports.

#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "formats/diff.hpp"
#include "report/verdict.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace lp::cli {

namespace {

struct DiffCliOptions {
  std::string old_path;
  std::string new_path;
  std::vector<std::string> match_compiler;
  std::vector<std::string> fail_on;
  bool json = false;
};

/// Each OLD of --match-compiler is a compiler the old report ran: a pair that matches
/// nothing is a typo, and was silently ignored.
void check_old_compilers(const std::map<std::string, std::string>& match, const formats::Document& old_doc) {
  std::set<std::string> ran;
  for (const report::CaseRecord& c : old_doc.cases) {
    ran.insert(c.axes.text("compiler").value_or(""));
  }
  for (const auto& [from, to] : match) {
    if (ran.count(from) == 0) {
      throw UsageError(fmt::format("--match-compiler {}={}: {} has no case of compiler {} (its compilers: {})", from,
                                   to, old_doc.path, from, fmt::join(ran, ", ")));
    }
  }
}

int run_diff(const DiffCliOptions& o) {
  formats::DiffOptions options;
  for (const std::string& pair : o.match_compiler) {
    // A compiler name holds '=' itself (ptxas=13.0): split at the '=' that starts a known compiler kind.
    std::size_t split = std::string::npos;
    for (const char* kind : {"=prebuilt", "=driver", "=ptxas="}) {
      const std::size_t at = pair.find(kind, 1);
      if (at != std::string::npos && (split == std::string::npos || at < split)) {
        split = at;
      }
    }
    if (split == std::string::npos) {
      throw UsageError(fmt::format("--match-compiler {}: expected OLD=NEW, each prebuilt, driver or ptxas=SPEC "
                                   "(ptxas=13.0.88=ptxas=13.3.73)",
                                   pair));
    }
    const auto [it, added] = options.match_compiler.emplace(pair.substr(0, split), pair.substr(split + 1));
    if (!added) {
      throw UsageError(fmt::format("--match-compiler {}: {} is already matched with {}; give each old compiler once",
                                   pair, it->first, it->second));
    }
  }
  options.latent_fails = failing_verdicts(o.fail_on).count(report::Verdict::latent) > 0;
  const formats::Document old_doc = formats::read_document(o.old_path);
  const formats::Document new_doc = formats::read_document(o.new_path);
  check_old_compilers(options.match_compiler, old_doc);
  formats::Diff d;
  // The records were read typed by their own files; what is left is the pair's.
  formats::shape_checked(fmt::format("{} and {}", o.old_path, o.new_path),
                         [&] { d = formats::diff_reports(old_doc, new_doc, options); }, true);
  // JSON escapes control characters itself; the text goes to a terminal.
  fmt::print("{}", o.json ? d.json_text() : escape::terminal(d.text()));
  return d.regressed ? 1 : 0;
}

}  // namespace

Command add_diff_command(CLI::App& app) {
  auto o = std::make_shared<DiffCliOptions>();
  CLI::App* sub = app.add_subcommand("diff", "Compare two sweep reports: what an upgrade changed, case by case");
  sub->add_option("old", o->old_path, "The report before (loraprobe sweep --out)")->required();
  sub->add_option("new", o->new_path, "The report after")->required();
  sub->add_option("--match-compiler", o->match_compiler,
                  "Pair an old compiler with a new one, OLD=NEW (ptxas=13.0.88=ptxas=13.3.73), so their cases meet "
                  "(repeatable)");
  sub->add_option("--fail-on", o->fail_on, "A new LATENT is a regression too with latent (default: FAIL, fault, timeout, compile_error)")
      ->delimiter(',');
  sub->add_flag("--json", o->json, "Print JSON instead of text");
  sub->footer(
      "Examples:\n"
      "  loraprobe diff before.json after.json\n"
      "  loraprobe diff toolkit.json triton.json --match-compiler ptxas=toolkit=ptxas=triton --fail-on latent\n"
      "Exit codes: 0 nothing regressed, 1 a case newly FAIL, fault, timeout or compile_error (or LATENT with --fail-on latent), 2 "
      "reports that cannot be compared (not reports, another schema major, no case in common).");
  return {sub, [o] { return run_diff(*o); }};
}

}  // namespace lp::cli
