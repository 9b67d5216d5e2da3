// loraprobe repro: a repro bundle of one case of a report, made without a GPU.

#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/validators.hpp"
#include "formats/document.hpp"
#include "repro/bundle.hpp"
#include "util/escape.hpp"

namespace lp::cli {

namespace {

struct ReproOptions {
  std::string report;
  std::string case_id;
  std::string out;
  std::vector<std::string> kernel_dirs;
  std::string nvdisasm;
  std::vector<std::string> ptxas;
};

void print_bundle(const repro::Bundle& b) {
  fmt::print("repro: {}: {}\n", escape::terminal_line(b.dir), fmt::join(b.files, ", "));
  for (const std::string& n : b.notes) {
    fmt::print("repro: note: {}\n", escape::terminal_line(n));
  }
}

int run_repro(const ReproOptions& o) {
  const formats::Document doc = formats::read_document(o.report);
  repro::BundleOptions options;
  options.kernel_dirs = o.kernel_dirs;
  options.ptxas = o.ptxas;
  if (!o.nvdisasm.empty()) {
    options.nvdisasm = o.nvdisasm;
  }
  print_bundle(repro::write_bundle(doc, o.case_id, o.out.empty() ? "repro-" + o.case_id : o.out, options));
  return 0;
}

}  // namespace

void print_bundles(const std::vector<repro::Bundle>& bundles) {
  for (const repro::Bundle& b : bundles) {
    print_bundle(b);
  }
}

Command add_repro_command(CLI::App& app) {
  auto o = std::make_shared<ReproOptions>();
  CLI::App* sub = app.add_subcommand(
      "repro", "Make a repro bundle of one case of a report (PTX, cubin, marked SASS, ptxas command, a config of "
               "exactly the case, a README for a bug report), without a GPU");
  sub->add_option("report", o->report, "A sweep report (loraprobe sweep --out)")->required();
  sub->add_option("case", o->case_id, "The case id (12 hex digits; the report's first latent case, for example)")
      ->required();
  sub->add_option("-o,--out", o->out, "The bundle's folder (default: repro-<case id>)")->check(non_empty());
  sub->add_option("--kernel-dir", o->kernel_dirs, "A kernel set the report used besides the embedded ones")
      ->check(non_empty());
  sub->add_option("--nvdisasm", o->nvdisasm, "nvdisasm for the marked SASS (default: searched)")->check(non_empty());
  sub->add_option("--ptxas", o->ptxas,
                  "A ptxas you trust (PATH, VERSION under .tools/ptxas, toolkit): a case compiled by a ptxas is "
                  "rebuilt with the one here whose sha256 the report recorded, never the path the report names "
                  "(repeatable)")
      ->check(non_empty())
      ->allow_extra_args(false);
  sub->footer(
      "Examples:\n"
      "  loraprobe repro report.json 9efe288f6599 --out bug-bundle\n"
      "  loraprobe sweep --config seed-48590 --save-repro bundles   (one per hazardous variant)\n"
      "Nothing a report names is run: its ptxas is matched by sha256 against --ptxas, the toolkit's and .tools'.\n"
      "Exit codes: 0 written, 2 no such case, a case without a kernel, or a ptxas not here by sha256 (pass --ptxas),\n"
      "3 its kernel set is not here or the folder cannot be written.");
  return {sub, [o] { return run_repro(*o); }};
}

}  // namespace lp::cli
