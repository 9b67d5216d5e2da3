// loraprobe sweep: expand a config into cases and, on a Hopper GPU, run them.

#include <fmt/format.h>

#include <filesystem>
#include <map>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "plan/shard.hpp"
#include "formats/document.hpp"
#include "cli/output_options.hpp"
#include "formats/outputs.hpp"
#include "formats/stack_matrix.hpp"
#include "cli/compiler_flags.hpp"
#include "cli/plan_options.hpp"
#include "cli/plan_table.hpp"
#include "cli/validators.hpp"
#include "compile/compiler.hpp"
#include "compile/toolchain.hpp"
#include "sass/nvdisasm.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "report/verdict.hpp"
#include "report/journal.hpp"
#include "sweep/case_variants.hpp"
#include "sweep/device_pool.hpp"
#include "sweep/entries.hpp"
#include "sweep/runner.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/text.hpp"

namespace lp::cli {

namespace {

/// Everything `loraprobe sweep` takes; JSON config and flags fill the same struct.
struct SweepOptions {
  PlanOptions plan;  ///< --config and the flags over it (shared with inspect), --ptxas, --repeats, --seed
  bool dry_run = false;
  bool json = false;
  bool show_config = false;
  std::string out;
  std::string resume;
  std::vector<std::string> kernel_dirs;
  std::vector<std::string> fail_on;
  bool no_controls = false;
  bool force = false;
  bool stop_on_first_failure = false;
  bool allow_jit_cache = false;
  bool quiet = false;
  double case_timeout_s = 600;
  std::string nvdisasm;
  unsigned jobs = 0;
  int device = 0;
  std::vector<std::string> test_hooks;
  OutputFlags outputs;  ///< --output FORMAT=PATH, --junit, --markdown, --html
  std::string detail = "compact";
  std::vector<std::string> only_cases;
  std::string save_repro;
  std::string shard;
  std::string devices;
};

/// The plan's flags and what a sweep prints instead of running (--dry-run, --show-config).
void add_plan_flags(CLI::App& sub, SweepOptions& o) {
  add_plan_options(sub, o.plan);
  sub.add_option("--repeats", o.plan.flags.repeats, "Runs per case (fresh poison each time)");
  sub.add_option("--seed", o.plan.flags.seed, "Seed of all generated inputs: a whole number from 0 to 2^64-1");
  // A callback, not a variable: the config's own "remedies" stands unless a flag is given.
  sub.add_flag_function(
      "--remedies,!--no-remedies", [&o](std::int64_t count) { o.plan.flags.remedies = count > 0; },
               fmt::format("Also run the known remedies of every LATENT or FAIL configuration (block_n 32, "
                           "num_stages 1, bf16 input, the newest Triton set, with a {}+ ptxas when the run has "
                           "one) and report their cost in kernel time; on in the seed and upgrade-gate configs",
                           report::fixing_ptxas_version()));
  sub.add_flag("--dry-run", o.dry_run, "Print the plan (case count and table) without running anything");
  sub.add_flag("--json", o.json, "With --dry-run or --show-config: print JSON instead of a table");
  sub.add_flag("--show-config", o.show_config, "Print every setting with its origin (default, file, flag)");
}

/// How the cases run on the GPUs: the controls, the stop, the worker's flags, the
/// static inspection's tools, the devices.
void add_running_flags(CLI::App& sub, CLI::Option_group* run, SweepOptions& o) {
  run->add_flag("--no-controls", o.no_controls, "Skip the positive and negative controls");
  run->add_flag("--stop-on-first-failure", o.stop_on_first_failure, "Stop at the first failing case (bisecting)");
  run->add_flag("--allow-jit-cache", o.allow_jit_cache,
                "Leave the driver's JIT cache on (default: CUDA_CACHE_DISABLE=1, so no old JIT result is reused)");
  run->add_option("--case-timeout", o.case_timeout_s, "Seconds one case (all repeats) may take before its worker "
                                                      "is killed and the case recorded as timeout")
      ->check(finite_number() & CLI::Range(1.0, 86400.0));
  run->add_option("--nvdisasm", o.nvdisasm, "nvdisasm for the static inspection (default: searched)")
      ->check(non_empty());
  run->add_option("-j,--jobs", o.jobs, "CPU threads for ptxas and nvdisasm; 0: one per hardware thread (default)")
      ->check(CLI::Range(0U, k_max_jobs));
  run->add_option("--device", o.device, "CUDA device ordinal")->check(CLI::Range(0, k_max_device));
  run->add_option("--devices", o.devices,
                  "Several GPUs of this host, 0,1,3 or all: one worker per GPU, cases from one queue, one journal and "
                  "report (each case says its GPU); a GPU that faults 3 times in a row leaves the rotation")
      ->check(non_empty())
      ->excludes("--device");
  run->add_flag("-q,--quiet", o.quiet, "No progress line on stderr");
  add_ptxas_flag(sub, o.plan.flags.ptxas);
  // Tests only: replace a case's expand kernel by a kernel that misbehaves on purpose.
  sub.add_option("--test-hook", o.test_hooks, "INDEX=trap|spin|oob_write|skip_tile|pdl_no_wait")->group("");
}

void add_options(CLI::App& sub, SweepOptions& o) {
  add_plan_flags(sub, o);
  auto* run = sub.add_option_group("Running");
  run->add_option("-o,--out", o.out, "Report path (default: loraprobe-report-<UTC time>.json here); the journal "
                                     "is the same path with .jsonl")
      ->check(non_empty());
  run->add_option("--resume", o.resume, "Continue the sweep journaled in FILE.jsonl: runs only the missing cases "
                                        "(an earlier report of it is kept as <report>.bak)")
      ->check(non_empty());
  run->add_flag("--force", o.force, "Start afresh where --out's report or journal exists (the earlier ones are kept as "
                                    "<name>.bak); without it such a sweep is refused, so two plans never share a journal");
  sub.add_option("--kernel-dir", o.kernel_dirs,
                 "Add the kernel set in DIR (made by scripts/gen_kernels.py --out DIR) to the triton axis, under the "
                 "Triton version its manifest records; it replaces an embedded set of that version. Repeatable")
      ->check(non_empty());
  run->add_option("--fail-on", o.fail_on,
                  "Also exit 1 on these verdicts (latent, skipped, incomplete); FAIL, fault, timeout and "
                  "compile_error always fail")
      ->delimiter(',');
  add_output_options(*run, o.outputs, "the report");
  run->add_option("--case", o.only_cases,
                  "Run only these case ids of the plan (from a report or sweep --dry-run --json), each with the "
                  "index, id and inputs it has in the whole plan")
      ->delimiter(',')
      ->check(CLI::Validator(
          [](std::string& id) {
            return id.size() == 12 && id.find_first_not_of("0123456789abcdef") == std::string::npos
                       ? std::string()
                       : "a case id is 12 lowercase hex digits";
          },
          "ID", "case id"));
  run->add_option("--shard", o.shard,
                  "Run part I of N of the plan (0 <= I < N), balanced by estimated cost; the same partition on every "
                  "machine. auto/N or auto take I (and N) from a Slurm array job or a Kubernetes Indexed Job "
                  "(SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT, JOB_COMPLETION_INDEX); loraprobe merge joins the parts")
      ->check(non_empty());
  run->add_option("--save-repro", o.save_repro,
                  "Write a repro bundle for every FAIL or LATENT variant into DIR (PTX, the cubin that ran, the "
                  "marked SASS, the ptxas command, the case and a README with the command that re-runs it)")
      ->check(non_empty());
  run->add_option("--detail", o.detail,
                  "compact (default): each case's numbers, said once per kernel variant; full: one object per case "
                  "with its prose (metrics summary, tolerance derivation, reason), as reports before schema 4")
      ->check(CLI::IsMember({"compact", "full"}));
  add_running_flags(sub, run, o);
}

sweep::SweepRequest request_of(const SweepOptions& o, std::vector<std::string> argv) {
  sweep::SweepRequest r;
  r.argv = std::move(argv);
  r.out = o.out;
  r.resume = o.resume;
  r.kernel_dirs = o.kernel_dirs;
  for (const report::Verdict v : failing_verdicts(o.fail_on)) {
    r.fail_on.insert(v);
  }
  r.controls = !o.no_controls;
  r.only_cases = o.only_cases;
  r.devices = o.devices;
  if (!o.shard.empty()) {
    r.shard = plan::parse_shard(o.shard, plan::process_env());
  }
  r.detail = *report::parse_detail(o.detail);
  r.force = o.force;
  r.stop_on_first_failure = o.stop_on_first_failure;
  r.allow_jit_cache = o.allow_jit_cache;
  r.progress = !o.quiet;
  r.case_timeout = std::chrono::seconds(static_cast<long>(o.case_timeout_s));
  if (!o.nvdisasm.empty()) {
    r.nvdisasm = o.nvdisasm;
  }
  r.jobs = o.jobs;
  r.device = o.device;
  for (const std::string& hook : o.test_hooks) {
    const std::size_t eq = hook.find('=');
    const std::string name = eq == std::string::npos ? "" : hook.substr(eq + 1);
    // pdl_no_wait is a launch, not a kernel role: plan_entries knows it by its name.
    const std::string role = name == sweep::k_hook_pdl_no_wait ? name : "test_" + name;
    const std::optional<std::size_t> index =
        eq == std::string::npos ? std::nullopt : parse_number<std::size_t>(std::string_view(hook).substr(0, eq));
    if (!index || role == "test_") {
      throw UsageError(fmt::format("--test-hook {}: expected INDEX=trap|spin|oob_write|skip_tile|pdl_no_wait", hook));
    }
    r.test_hooks[*index] = role;
  }
  return r;
}

/// What a dry run checks that request_of does not: the tools a run would use, resolved
/// as the run resolves them (each ptxas= of the compilers axis by its --version;
/// ptxas=triton is per set and checked by the run; --nvdisasm when given), and
/// --devices as the run reads it (the run checks the ordinals against the GPUs it finds).
void validate_run_flags(const plan::SweepConfig& config, const sweep::SweepRequest& request) {
  if (!request.devices.empty()) {
    sweep::check_devices_text(request.devices);
  }
  for (const AxisValue& value : config.values(plan::AxisId::compiler)) {
    const std::optional<compile::Compiler> c = compile::Compiler::parse(value.text().value_or(""));
    if (c && c->is_ptxas() && !c->is_bundled_ptxas()) {
      (void)compile::resolve_ptxas(c->ptxas);
    }
  }
  if (request.nvdisasm) {
    sass::NvdisasmSearch search;
    search.path = request.nvdisasm;
    (void)sass::find_nvdisasm(search);
  }
}

/// With --resume alone, the sweep continues exactly as journaled: its options are
/// the ones in the journal's header, re-parsed.
SweepOptions options_from_journal(const std::string& journal, const report::JournalHeader& header) {
  const std::vector<std::string>& argv = header.argv;
  if (argv.size() < 2) {
    throw InputError(journal, "/argv", "the journal does not record the command that started it");
  }
  SweepOptions o;
  CLI::App app;
  CLI::App* sub = app.add_subcommand("sweep");
  add_options(*sub, o);
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  std::reverse(args.begin(), args.end());
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw InputError(journal, "/argv", fmt::format("cannot re-parse the journaled command: {}", e.what()));
  }
  o.resume = journal;
  return o;
}

/// The outputs besides the report and the journal, each from the report as written (so
/// they say what it says): JUnit, Markdown and HTML (of a partial report too), and the
/// repro bundles of a finished run, as `loraprobe repro` makes them.
/// Reports up to this size are read back at the end of a sweep to print the stack
/// matrix; reading costs several times the file, so a larger one only says where it is.
constexpr std::uintmax_t k_max_matrix_report_bytes = std::uintmax_t{64} << 20;

/// The answer a sweep ends with: the stack matrix of its report (formats/stack_matrix.hpp).
void print_stack_matrix(const formats::Document& doc) {
  if (const formats::StackMatrix m = formats::stack_matrix(doc); !m.empty()) {
    fmt::print("is my stack fixed? (Triton set x compiler; each cell the worst this run saw)\n{}", m.text());
  }
}

void write_other_outputs(const SweepOptions& o, const sweep::SweepRequest& request,
                         const sweep::SweepOutcome& outcome) {
  formats::OutputOptions format_options;
  format_options.latent_fails = request.fail_on.count(report::Verdict::latent) > 0;
  format_options.detail = *report::parse_detail(o.detail);
  const formats::ExtraOutputs outputs = extra_outputs(o.outputs, format_options);
  std::error_code ec;
  const std::uintmax_t bytes = std::filesystem::file_size(outcome.report_path, ec);
  const bool matrix = outcome.interrupted_by == 0 && !ec;
  if (matrix && bytes > k_max_matrix_report_bytes) {
    fmt::print("is my stack fixed? loraprobe report {} opens with the answer\n", outcome.report_path);
  }
  const bool print_matrix = matrix && bytes <= k_max_matrix_report_bytes;
  if (!outputs.any() && !print_matrix && (o.save_repro.empty() || outcome.interrupted_by != 0)) {
    return;
  }
  const formats::Document doc = formats::read_document(outcome.report_path);
  if (print_matrix) {
    print_stack_matrix(doc);
  }
  if (outputs.any()) {
    formats::write_outputs(doc, outputs);
  }
  if (o.save_repro.empty() || outcome.interrupted_by != 0) {
    return;
  }
  repro::BundleOptions options;
  options.kernel_dirs = o.kernel_dirs;
  if (!o.nvdisasm.empty()) {
    options.nvdisasm = o.nvdisasm;
  }
  const std::vector<repro::Bundle> bundles = repro::save_bundles(doc, o.save_repro, options);
  print_bundles(bundles);
  fmt::print(stderr, "sweep: {} repro bundle(s) in {}\n", bundles.size(), o.save_repro);
}

int run_sweep(SweepOptions o, const std::vector<std::string>& argv) {
  std::vector<std::string> recorded_argv = argv;
  if (!o.resume.empty() && !o.plan.given()) {
    const std::string out = o.out;
    const report::JournalHeader header = report::read_journal_header(o.resume);
    o = options_from_journal(o.resume, header);
    if (!out.empty()) {
      o.out = out;
    }
    recorded_argv = header.argv;  // options_from_journal refused a header without one
  }
  const plan::SweepConfig config = o.plan.resolve();
  if (o.show_config) {
    fmt::print("{}", o.json ? config.json_text() : plan::format_config(config));
    if (!o.dry_run) {
      return 0;
    }
  }
  // Everything a run would refuse is refused here too: a dry run is how a command is
  // checked before it is queued on a GPU box.
  const sweep::SweepRequest request = request_of(o, recorded_argv);
  (void)extra_outputs(o.outputs, {});  // a --output the end of the run would refuse is refused now
  if (o.dry_run) {
    validate_run_flags(config, request);
    const kernels::KernelSets sets = kernels::KernelSets::load(o.kernel_dirs);
    plan::PlannedRun run = plan::plan_for(config, sets.versions(), request.only_cases, request.shard);
    run.plan.without_variant = sweep::cases_without_variant(run.plan, sets);
    if (o.json) {
      plan::write_plan_json(stdout, config, run.plan);
    } else {
      print_plan(stdout, config, run.plan);
    }
    plan::require_cases(run.plan, config);
    return 0;
  }
  const sweep::SweepOutcome outcome = sweep::run_sweep(config, request);
  write_other_outputs(o, request, outcome);
  if (outcome.interrupted_by != 0) {
    throw Interrupted(outcome.interrupted_by);  // main exits 128 + the signal, after the partial outputs
  }
  return outcome.exit_code;
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "Run a sweep of LoRA kernel configurations and compare each with cuBLAS");
  add_options(*sub, *o);
  sub->footer(
      "Examples:\n"
      "  loraprobe sweep --dry-run                                  # the embedded default plan\n"
      "  loraprobe sweep --config seed-48590                        # the reported conditions, on a Hopper GPU\n"
      "  loraprobe sweep --config ci-gate --triton 3.8.0 --compiler ptxas=/opt/cuda-13.3/bin/ptxas "
      "--fail-on latent   # Triton 3.8's PTX needs ptxas >= 13.3\n"
      "  loraprobe sweep --model qwen3.6-35b-a3b --rank 64 --tokens 128..8192*2   # the bug report's model\n"
      "  loraprobe sweep --config upgrade-gate                      # the vLLM defaults under every Triton set\n"
      "  loraprobe sweep --triton 3.8.0 --compiler prebuilt --compiler ptxas=13.3 --dry-run\n"
      "  loraprobe sweep --tokens 256,384 --block-n 32,128 --num-stages 2 --out bug.json\n"
      "  loraprobe sweep --resume bug.jsonl                         # after a crash: only the missing cases\n"
      "Exit codes: 0 clean, 1 failures, 2 bad input (flags, config, journal, --kernel-dir), 3 environment (no GPU,\n"
      "driver or tool) or invalid controls, 4 internal error (a bug: please report it).");
  return {sub, [o] { return run_sweep(*o, command_line()); }};
}

}  // namespace lp::cli
