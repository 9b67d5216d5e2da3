// loraprobe inspect: the static wgmma register-hazard analysis of SASS, with no
// GPU. Three modes: the kernel set (every variant, or --filter, under prebuilt,
// the toolkit's ptxas and each --ptxas), the user's own PTX and cubins (paths),
// and the ptxas version matrix (--ptxas-matrix).

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/compiler_flags.hpp"
#include "cli/inspect_table.hpp"
#include "cli/kernel_options.hpp"
#include "cli/validators.hpp"
#include "compile/toolchain.hpp"
#include "inspect/inputs.hpp"
#include "formats/document.hpp"
#include "cli/output_options.hpp"
#include "formats/outputs.hpp"
#include "inspect/document.hpp"
#include "inspect/inspector.hpp"
#include "cli/plan_options.hpp"
#include "formats/stack_matrix.hpp"
#include "inspect/matrix.hpp"
#include "inspect/work.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "sweep/case_variants.hpp"
#include "report/report.hpp"
#include "sass/checks.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"
#include "util/interrupt.hpp"

namespace lp::cli {

namespace {

using Clock = std::chrono::steady_clock;

/// Everything `loraprobe inspect` takes.
struct InspectOptions {
  KernelSetOptions kernels;
  std::vector<std::string> paths;
  std::string filter;
  std::vector<std::string> produced;   ///< --produced
  std::vector<std::string> ptxas;
  std::vector<std::string> compilers;  ///< --compiler (and the deprecated --compilers)
  std::optional<std::string> nvdisasm;
  std::vector<std::string> checks;
  std::string matrix_dir;
  bool matrix = false;
  unsigned jobs = 0;
  bool json = false;
  bool list_checks = false;
  bool no_cache = false;
  bool trust_cache = false;
  bool no_shipped = false;
  std::size_t verify_cache = 0;
  bool no_skip = false;
  PlanOptions plan;  ///< --config and the axis, --model and --vllm-* flags over it, as sweep takes them
  bool hazards_only = false;
  OutputFlags outputs;  ///< --output FORMAT=PATH, --junit, --markdown, --html
};

/// Progress on stderr every 10 s, so a cold run of the whole set on a small
/// machine does not look hung; short runs print nothing.
inspect::ProgressFunction progress_printer() {
  const auto start = Clock::now();
  auto last = std::make_shared<Clock::time_point>(start);
  return [start, last](std::string_view stage, std::size_t done, std::size_t total) {
    const auto now = Clock::now();
    if (now - *last < std::chrono::seconds(10) || done == total) {
      return;
    }
    *last = now;
    const double s = std::chrono::duration<double>(now - start).count();
    fmt::print(stderr, "inspect: {} {}/{} ({:.0f}%), {:.0f} s\n", stage, done, total,
               100.0 * double(done) / double(total), s);
    std::fflush(stderr);
  };
}

std::string list_checks_text() {
  std::size_t width = sass::k_early_read_id.size();
  for (const sass::Check& c : sass::all_checks()) {
    width = std::max(width, c.id.size());
  }
  std::string out = fmt::format("{:<{}}  {}\n", "id", width, "description");
  for (const sass::Check& c : sass::all_checks()) {
    out += fmt::format("{:<{}}  {}\n", c.id, width, c.description);
  }
  out += fmt::format("{:<{}}  {}\n", sass::k_early_read_id, width, sass::k_early_read_description);
  return out;
}

std::string summary_line(const inspect::Work& w, const inspect::InspectTotals& t, const sass::Nvdisasm& tool,
                         const inspect::CacheStats& cache, bool cache_on, double seconds, unsigned jobs) {
  std::string what;
  if (w.mode == inspect::Mode::files) {
    what = fmt::format("{} file(s)", w.files.size());
  } else {
    what = fmt::format("{} variant(s) x {} compiler(s)", w.variants.size(), w.compilers.size());
  }
  const std::size_t lookups = cache.sass_hits + cache.sass_misses;
  const std::string shipped =
      cache.shipped_sass_hits + cache.shipped_compile_hits == 0
          ? std::string()
          : fmt::format(", {} of them and {} compile(s) shipped with loraprobe", cache.shipped_sass_hits,
                        cache.shipped_compile_hits);
  const std::string cache_text =
      !cache_on ? "cache off"
                : fmt::format("{} of {} reports from the cache{}{}{}{}", cache.sass_hits, lookups, shipped,
                              cache.rejected > 0 ? fmt::format(" ({} {} not whole: redone and rewritten)", cache.rejected,
                                                               cache.rejected == 1 ? "entry" : "entries")
                                                 : std::string(),
                              cache.verified > 0 ? fmt::format(", {} re-checked ({} differ)", cache.verified,
                                                               cache.differences)
                                                 : std::string(),
                              cache.write_errors > 0 ? fmt::format(" ({} not written: {})", cache.write_errors,
                                                                   cache.first_write_error)
                                                     : std::string());
  // Who made the hazards, when there are some: the PTX (fix Triton) or ptxas (report::k_fixing_ptxas fixes it).
  const std::size_t wgmma_hazards = t.made_by_ptx + t.made_by_ptxas;
  const std::size_t unattributed = t.findings == 0 ? 0 : t.hazard - std::min(t.hazard, wgmma_hazards + t.with_early_reads);
  const std::string made_by =
      t.findings == 0 ? std::string()
                      : fmt::format("; made by the PTX: {}, by ptxas: {}{}", t.made_by_ptx, t.made_by_ptxas,
                                    unattributed > 0 ? fmt::format(", without PTX to tell: {}", unattributed) : "");
  // The dual-stream hazard (triton #11905), its own count: which cubins read a produced buffer before their wait.
  const std::string early =
      (t.early_reads == 0 ? std::string()
                          : fmt::format(", {} with gdc-early-read ({} loads before griddepcontrol.wait; made by the "
                                        "PTX: {}, by ptxas: {})",
                                        t.with_early_reads, t.early_reads, t.early_by_ptx, t.early_by_ptxas)) +
      (t.early_not_checked == 0
               ? std::string()
               : fmt::format(", {} waiting kernel(s) not checked for gdc-early-read (no produced parameters known: "
                             "give --produced)",
                             t.early_not_checked));
  const std::string skipped =
      t.skipped == 0 ? std::string()
                     : fmt::format(" ({} without wgmma or griddepcontrol.wait in their PTX, not disassembled)", t.skipped);
  const std::string incompatible =
      t.incompatible == 0 ? std::string()
                          : fmt::format(", {} incompatible (the compiler cannot read the PTX; not failures)",
                                        t.incompatible);
  return fmt::format("inspect: {} cubin(s) ({}): {} with a hazard ({} findings{}){}, {} clean{}, {} error(s){}; "
                     "nvdisasm {} ({}); {}; {:.1f} s with -j {}\n",
                     t.items, what, t.hazard, t.findings, made_by, early, t.clean, skipped, t.error, incompatible,
                     tool.version, tool.origin, cache_text, seconds, jobs);
}

/// After Ctrl-C or SIGTERM: what was kept and how to go on, and the exit code
/// (128 + signal); nullopt when the run was not interrupted.
std::optional<int> finish_interrupted(int signal, const std::vector<inspect::InspectResult>& results,
                                      const std::optional<std::string>& cache_root) {
  if (signal == 0) {
    return std::nullopt;
  }
  const std::size_t done = static_cast<std::size_t>(std::count_if(
      results.begin(), results.end(),
      [](const inspect::InspectResult& r) { return r.error.rfind("not inspected: interrupted", 0) != 0; }));
  fmt::print(stderr, "inspect: interrupted by {} after {} of {} cubins; {}\n", signal_name(signal), done,
             results.size(),
             cache_root ? fmt::format("their reports are in the cache ({}): the same command again redoes only the "
                                      "rest",
                                      *cache_root)
                        : std::string("--no-cache kept nothing: run again to redo them all"));
  return 128 + signal;
}

/// The exit code, after the output: 128 + signal when the run was interrupted, else the
/// totals' (inspect/document.hpp). A run whose every pairing is incompatible throws
/// EnvironmentError (exit 3) with the line that says which pairings and why, as every
/// exit 3 says why on stderr.
int exit_code_of(const std::vector<inspect::InspectResult>& results, int interrupted_by,
                 const std::optional<std::string>& cache_root) {
  if (const std::optional<int> code = finish_interrupted(interrupted_by, results, cache_root)) {
    return *code;
  }
  if (std::string why = inspect::all_incompatible_line(results); !why.empty()) {
    throw EnvironmentError(std::move(why));
  }
  return inspect::total(results).exit_code();
}

/// The request of the command line: the kernel sets loaded (unless files are
/// inspected), --config expanded into the variants and compilers its sweep loads.
inspect::InspectRequest request_of(const InspectOptions& o) {
  inspect::InspectRequest r;
  r.paths = o.paths;
  r.filter = o.filter;
  r.produced = o.produced;
  if (!o.produced.empty() && o.paths.empty()) {
    throw UsageError("--produced names the parameters of your own kernels; a kernel set's manifest records its "
                     "variants' own (give files or folders, or leave --produced out)");
  }
  r.compilers = o.compilers;
  r.ptxas = o.ptxas;
  r.matrix = o.matrix;
  r.matrix_dir = o.matrix_dir;
  r.kernel_sets_named = !o.kernels.kernel_dirs.empty() || !o.kernels.tritons.empty();
  if (!o.matrix && !o.plan.given() && !o.paths.empty()) {
    return r;  // files: no kernel set
  }
  if (o.plan.given() && o.matrix) {
    // The matrix rows are vLLM's default expand configs (or --filter) as built: a plan's
    // flags (--amplify among them) would be silently ignored.
    throw UsageError("--ptxas-matrix compiles vLLM's default expand configs (or --filter) as built with every ptxas; "
                     "--config and the plan's flags (--amplify, --model, --tokens, ...) do not apply to it");
  }
  if (o.plan.given() && !o.matrix) {
    if (!o.paths.empty() || !o.filter.empty()) {
      throw UsageError("--config and the plan's flags (--amplify, --model, --tokens, ...) pick the variants a sweep "
                       "loads; they take no files or --filter");
    }
    PlanOptions plan_options = o.plan;
    if (!o.kernels.tritons.empty()) {
      plan_options.flags.axes[plan::AxisId::triton] = o.kernels.tritons;
    }
    const plan::SweepConfig config = plan_options.resolve();
    r.sets = o.kernels.load();
    const plan::Plan plan = plan::expand_plan(config, r.sets->versions());
    for (const plan::NotSwept& n : plan.not_swept) {
      fmt::print(stderr, "inspect: not inspected: {}: {}\n", n.projection, n.why);
    }
    const sweep::PlannedVariants planned = sweep::planned_variants(plan, *r.sets);
    for (const std::string& line : planned.unavailable) {
      fmt::print(stderr, "inspect: {} (a sweep records those cases as skipped)\n", line);
    }
    for (const sweep::PlannedVariant& v : planned.variants) {
      r.config_variants.push_back({v.set, v.variant, v.amplify});
    }
    r.config_compilers = planned.compilers;
    r.config_path = config.source;
    return r;
  }
  r.sets = o.kernels.load();
  r.selected = o.kernels.selected(*r.sets);
  return r;
}

/// --verify-cache: lp::EnvironmentError (exit 3) when a re-derived entry differs,
/// naming what was wrong: a shipped entry (the binary's) or the disk cache.
void throw_if_verification_failed(const inspect::CacheStats& stats, const std::optional<std::string>& cache_root) {
  if (stats.shipped_differences > 0) {
    throw EnvironmentError(fmt::format(
        "--verify-cache: {} of {} entries differ from a fresh result, {} of them shipped with loraprobe "
        "(first: {}); the results above are the fresh ones. The shipped results do not hold for this "
        "machine's tools (a build defect, or a tool that is not deterministic): --no-shipped-results "
        "computes everything",
        stats.differences, stats.verified, stats.shipped_differences, stats.first_difference));
  }
  if (stats.differences > 0) {
    throw EnvironmentError(fmt::format(
        "--verify-cache: {} of {} cache entries differ from a fresh result (first: {}); the results above "
        "are the fresh ones. Someone or something changed the cache under {}: remove it",
        stats.differences, stats.verified, stats.first_difference, cache_root.value_or("?")));
  }
}

int run_inspect(const InspectOptions& o) {
  if (o.list_checks) {
    fmt::print("{}", list_checks_text());
    return 0;
  }
  const std::string started_at = report::utc_now_iso8601();
  const auto start = Clock::now();
  // Bad input (exit 2) is reported before a missing nvdisasm (exit 3).
  const formats::ExtraOutputs outputs = extra_outputs(o.outputs, {}, formats::DocumentKind::inspect);
  const inspect::Work w = inspect::plan_work(request_of(o));
  sass::NvdisasmSearch search;
  search.path = o.nvdisasm;
  const sass::Nvdisasm tool = sass::find_nvdisasm(search);
  std::optional<std::string> cache_root = o.no_cache ? std::nullopt : inspect::default_cache_root();
  inspect::InspectorOptions options{tool, {o.checks, {}}, o.jobs, cache_root, progress_printer(), !o.no_skip};
  options.verify_compile_hits = !o.trust_cache;
  options.verify_sample = o.verify_cache;
  // Only the kernel sets' own cubins and PTX can be answered by what the sets ship.
  if (!o.no_cache && !o.no_shipped && w.mode != inspect::Mode::files) {
    options.shipped = inspect::ShippedResults::embedded();
  }
  const inspect::Inspector inspector(std::move(options));
  // --verify-cache: a cached report a fresh analysis contradicts fails the run, after
  // its output (which holds the fresh reports).
  const auto verified_exit = [&](int code) {
    throw_if_verification_failed(inspector.cache_stats(), cache_root);
    return code;
  };
  const std::vector<inspect::InspectResult> results = inspector.inspect_all(w.items);
  const int interrupted_by = inspector.interrupted_by();
  const inspect::InspectTotals totals = inspect::total(results);
  const std::vector<inspect::PtxasMatrix> matrices = inspect::build_matrices(w, results);
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (interrupted_by != 0 && interrupt_urgent()) {
    // A second signal: children are reaped and temporary folders gone; no partial output.
    fmt::print(stderr, "inspect: second signal: no partial output written\n");
    return 128 + interrupted_by;
  }
  const inspect::RunInfo run{command_line(), started_at, report::utc_now_iso8601(), wall_ms, interrupted_by,
                             cache_root};
  const formats::Document doc =
      formats::inspect_document_of("(this inspect run)", inspect::inspect_document(w, results, matrices, inspector, run));
  if (o.json || outputs.any()) {
    formats::write_outputs(doc, outputs);
    if (o.json) {
      fmt::print("{}", formats::full_json_text(doc));
      return verified_exit(exit_code_of(results, interrupted_by, cache_root));
    }
  }
  if (o.matrix) {
    for (const inspect::PtxasMatrix& m : matrices) {
      fmt::print("== Triton {} ==\n{}\n", m.triton_version, m.format());
    }
    for (const inspect::InspectResult& r : results) {
      if (r.status == inspect::StaticOutcome::error || r.status == inspect::StaticOutcome::incompatible) {
        fmt::print("{}", escape::terminal(fmt::format("{}: {} ({}): {}\n", to_string(r.status), r.name, r.compiler,
                                                      r.error.substr(0, r.error.find('\n')))));
      }
    }
  } else {
    // File names, compiler labels and ptxas's words come from the user's files and tools: shown, never obeyed.
    fmt::print("{}", escape::terminal(format_inspect_table(results, o.hazards_only)));
  }
  fmt::print("{}", escape::terminal(summary_line(w, totals, tool, inspector.cache_stats(), cache_root.has_value(),
                                                 wall_ms / 1000.0, inspector.options().jobs)));
  if (!o.matrix) {
    // The answer last: the kernel sets' pairings of Triton and compiler, as a sweep report opens with them;
    // one pairing (one --triton, one --compiler) is the question a user asks most, so it is answered too.
    if (const formats::StackMatrix m = formats::stack_matrix(doc); !m.empty()) {
      fmt::print("is my stack fixed? (Triton set x compiler, statically; a sweep on a GPU adds what runs show)\n{}",
                 m.text());
    }
  }
  return verified_exit(exit_code_of(results, interrupted_by, cache_root));
}

/// inspect --help's examples, cache note and exit codes.
constexpr std::string_view k_inspect_footer =
    "Examples:\n"
    "  loraprobe inspect --filter op=expand,block_n=128,num_stages=2,input_dtype=fp32\n"
    "  loraprobe inspect --compiler prebuilt --hazards-only             # every Triton-built cubin\n"
    "  loraprobe inspect --filter role=negative_control --ptxas 13.5 --json\n"
    "  loraprobe inspect ~/.triton/cache                                # your own Triton kernels (the .ptx beside each .cubin)\n"
    "  loraprobe inspect tests/ptx/fixtures --ptxas toolkit             # PTX files (in a checkout), compiled by your ptxas\n"
    "  loraprobe inspect --ptxas-matrix                                 # every Triton set x every ptxas in .tools/ptxas\n"
    "  loraprobe inspect --triton 3.8.0 --filter op=expand,input_dtype=fp32,block_n=128 --ptxas 13.3\n"
    "  loraprobe inspect --ptxas-matrix=/opt/ptxas --filter op=expand,input_dtype=fp32,block_n=128\n"
    "  loraprobe inspect --config seed-48590 --ptxas toolkit              # what the seed sweep loads, every Triton\n"
    "  loraprobe inspect --model qwen3.6-35b-a3b --rank 64 --tokens 256   # what sweep plans with the same flags\n"
    "  loraprobe inspect --list-checks\n"
    "Reports are cached under $XDG_CACHE_HOME/loraprobe (else ~/.cache/loraprobe) by cubin, nvdisasm and\n"
    "analysis version; --no-cache bypasses it.\n"
    "Exit codes: 0 no hazard, 1 a hazard (or a cubin that could not be built or analysed), 2 bad input (also a\n"
    "corrupt --kernel-dir set), 3 no nvdisasm, or every cubin incompatible (its compiler cannot read the PTX),\n"
    "4 internal error (a bug: please report it).";

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand(
      "inspect", "Statically inspect SASS for the wgmma register hazard (no GPU): the kernel set, your files, "
                 "or the ptxas version matrix");
  sub->add_option("paths", o->paths,
                  "PTX files (compiled with --ptxas, default the toolkit's), cubins, or folders searched recursively "
                  "for *.ptx and *.cubin (a Triton cache directory works); none: the kernel set");
  o->kernels.add_to(*sub);
  sub->add_option("--filter", o->filter,
                  "Only variants whose fields equal every key=value, as 'loraprobe list --filter' (op, role, id, "
                  "or an axis)");
  sub->add_option("--produced", o->produced,
                  "Files: the parameters (names, or ordinals from 0) that the previous grid of a programmatic "
                  "dependent launch writes, for the gdc-early-read check (default: the names of the .ttir beside "
                  "each file, for a kernel named like one of the kernel sets': _lora_expand_kernel reads input_ptr)")
      ->delimiter(',')
      ->allow_extra_args(false);
  add_compiler_flags(*sub, o->compilers, o->ptxas,
                     "default: prebuilt and, when there is a CUDA toolkit, ptxas=toolkit; driver: only in a sweep, whose GPU worker runs the JIT");
  sub->add_option("--nvdisasm", o->nvdisasm, "Use this nvdisasm (default: CUDA toolkit, .tools, then Triton's)")
      ->check(non_empty());
  sub->add_option("--checks", o->checks, "Run only these check ids (comma-separated; --list-checks shows them)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--ptxas-matrix", o->matrix_dir,
                  "Print the ptxas version matrix: vLLM's default expand configs (or --filter) compiled by every "
                  "ptxas in DIR (default: the tools folder's ptxas/) and Triton's, x findings")
      ->expected(0, 1)
      ->each([o](const std::string&) { o->matrix = true; });
  sub->add_option("-j,--jobs", o->jobs, "Inputs inspected at once (ptxas and nvdisasm processes); 0: one per "
                                        "hardware thread (default)")
      ->check(CLI::Range(0U, k_max_jobs));
  sub->add_flag("--json", o->json, "Print JSON (configs/schema/inspect.schema.json) instead of a table");
  sub->add_flag("--list-checks", o->list_checks, "Print the check table (id, description) and exit");
  // The plan's flags, as sweep takes them; --triton and --compiler are bound above (they also pick sets and
  // compilers without a plan).
  add_plan_options(*sub, o->plan, {plan::AxisId::triton, plan::AxisId::compiler});
  sub->add_flag("--no-skip", o->no_skip,
                "Disassemble every cubin, also those whose PTX has no wgmma.mma_async (which cannot have a finding "
                "and are otherwise reported clean without nvdisasm)");
  sub->add_flag("--no-cache", o->no_cache,
                "Neither read nor write the report cache ($XDG_CACHE_HOME/loraprobe, else ~/.cache/loraprobe)");
  sub->add_flag("--no-shipped-results", o->no_shipped,
                "Compute every result, also those shipped with loraprobe (kernels/inspected.jsonl.xz: each embedded "
                "variant's report and toolkit compile, used only for the same nvdisasm and ptxas binaries, by "
                "sha256); --no-cache implies it");
  sub->add_flag("--trust-cache", o->trust_cache,
                "Take the cache's word for what a PTX compiles to (saves the ptxas runs; by default ptxas runs again "
                "and the report is looked up by the cubin it really made). Only for a cache only you write: a forged "
                "compile record is believed (--verify-cache runs its ptxas again)");
  sub->add_option("--verify-cache", o->verify_cache,
                  "Re-check up to N cache entries, the results shipped with loraprobe included (reports by nvdisasm; "
                  "shipped compile records, and with --trust-cache the cache's, by their ptxas) and fail (exit 3) if "
                  "any differs from the fresh result")
      ->expected(0, 1)
      ->default_str("16")
      ->check(count_from_one());
  // JUnit: one testcase per cubin, a hazard a failure; Markdown and HTML: the hazardous
  // cubins with their SASS excerpts.
  add_output_options(*sub, o->outputs, "the inspect document");
  sub->add_flag("--hazards-only", o->hazards_only, "Leave the clean rows out of the table (the summary counts all)");
  sub->final_callback([o, sub] {
    // --ptxas-matrix without a value: each() is not called for an empty value list.
    if (sub->count("--ptxas-matrix") > 0) {
      o->matrix = true;
    }
  });
  sub->footer(std::string(k_inspect_footer));
  return {sub, [o] { return run_inspect(*o); }};
}

}  // namespace lp::cli
