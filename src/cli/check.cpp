// loraprobe check: is the Python stack vLLM runs in affected? The probe reads the stack,
// the embedded generator builds the LoRA kernels that vLLM launches with its Triton and
// the ptxas Triton picks, inspect checks their SASS, and the remedies are verified by
// compiling the same kernels with them (src/stack/ has the parts, docs/check.md the story).

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/gpu_probe.hpp"
#include "cli/plan_options.hpp"
#include "cli/validators.hpp"
#include "compile/compiler.hpp"
#include "inspect/cache.hpp"
#include "inspect/work.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/embedded_configs.hpp"
#include "plan/plan.hpp"
#include "report/verdict.hpp"
#include "sass/nvdisasm.hpp"
#include "stack/answer.hpp"
#include "stack/build.hpp"
#include "stack/probe.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"
#include "util/interrupt.hpp"
#include "util/release.hpp"
#include "util/subprocess.hpp"
#include "formats/document.hpp"

namespace lp::cli {

namespace {

namespace fs = std::filesystem;

struct CheckOptions {
  std::string python;            ///< --python; empty: stack::default_python()
  std::string kernels = "auto";  ///< --kernels auto|vllm|loraprobe
  PlanOptions plan;              ///< --config (default: the embedded check.json), --model, axes, --vllm-*
  bool json = false;
  std::string output;    ///< -o/--output: the JSON document
  std::string markdown;  ///< --markdown
  std::string junit;     ///< --junit
  std::string keep;      ///< --keep DIR: the built kernel dir stays there
  unsigned jobs = 0;
  std::optional<std::string> nvdisasm;
  bool no_cache = false;
  bool run = false;                  ///< --run: sweep the built images on this host's GPU
  std::string run_report = "loraprobe-check-run.json";  ///< --run-report
  std::vector<std::string> devices;  ///< --devices, for --run
  /// The plan's options as bound (add_plan_options), so --run hands the sweep what was given.
  std::vector<const CLI::Option*> plan_flags;
};

constexpr std::string_view k_check_config = "check.json";

/// The plan: --config (or the embedded check.json) with the flags, and what the stack's
/// environment says vLLM would do where the command line is silent; planned against the
/// widest embedded set, whose ids every set shares.
plan::Plan plan_of(const CheckOptions& o, const stack::PythonStack& s, const kernels::KernelSets& sets,
                   std::vector<std::string>& notes) {
  PlanOptions p = o.plan;
  if (s.use_gdc() && !p.flags.vllm_dual_stream) {
    p.flags.vllm_dual_stream = true;
    notes.push_back("planned as vLLM's dual-stream LoRA (VLLM_LORA_ENABLE_DUAL_STREAM is on, PDL not disabled)");
  }
  const bool tuned_from_env = s.tuned_folder && !p.flags.vllm_configs;
  if (tuned_from_env) {
    std::error_code ec;
    if (s.batch_invariant.on) {
      notes.push_back("VLLM_TUNED_CONFIG_FOLDER is ignored: VLLM_BATCH_INVARIANT is on, and vLLM then skips the tuned files");
    } else if (!fs::is_directory(*s.tuned_folder, ec)) {
      // vLLM only warns ("No LoRA kernel configs found") and launches its defaults.
      notes.push_back(fmt::format("VLLM_TUNED_CONFIG_FOLDER={} is no folder: vLLM warns and launches its defaults",
                                  *s.tuned_folder));
    } else {
      p.flags.vllm_configs = *s.tuned_folder;
      notes.push_back(fmt::format("knobs from vLLM's tuned files in {} (VLLM_TUNED_CONFIG_FOLDER)", *s.tuned_folder));
    }
  }
  if (s.batch_invariant.on) {
    p.flags.vllm_batch_invariant = true;
  }
  if (s.vllm_dir && p.flags.model && !p.flags.vllm_moe_configs) {
    // Where the installed vLLM keeps its per-GPU MoE configs, which set a model plan's
    // fused-MoE BLOCK_M.
    const fs::path moe = fs::path(*s.vllm_dir) / "model_executor" / "layers" / "fused_moe" / "configs";
    std::error_code ec;
    if (fs::is_directory(moe, ec)) {
      p.flags.vllm_moe_configs = moe.string();
    }
  }
  const auto widest = std::max_element(sets.all().begin(), sets.all().end(), [](const auto& a, const auto& b) {
    return a.variants().size() < b.variants().size();
  });
  p.flags.axes[plan::AxisId::triton] = {widest->triton()};
  p.flags.axes[plan::AxisId::compiler] = {"prebuilt"};
  plan::SweepConfig config =
      p.config_path.empty()
          ? plan::parse_config(plan::embedded_config(k_check_config),
                               std::string(plan::k_embedded_prefix) + std::string(k_check_config))
          : plan::load_config(p.config_path);
  try {
    plan::apply_flags(config, p.flags);
    print_notes(config.notes);
    return plan::expand_plan(config, sets.versions());
  } catch (const Fatal& e) {
    if (!tuned_from_env || p.flags.vllm_configs != s.tuned_folder) {
      throw;
    }
    // The environment's folder, not a flag the user gave: vLLM itself would fail on it.
    throw EnvironmentError(fmt::format("VLLM_TUNED_CONFIG_FOLDER={}: {}", *s.tuned_folder, e.what()));
  }
}

/// The ptxas binaries the remedies are compiled with: the other one Triton's wheel
/// carries, and the newest installed report::k_fixing_ptxas or later (the first release that keeps the
/// fragment copies, triton #9433).
std::vector<stack::RemedyPtxas> remedy_ptxas(const stack::PythonStack& s) {
  std::vector<stack::RemedyPtxas> out;
  const std::string own = s.ptxas.sm90 ? s.ptxas.sm90->sha256 : std::string();
  std::set<std::string> seen{own};
  for (const auto* p : {&s.ptxas.bundled_blackwell, &s.ptxas.bundled}) {
    if (*p && seen.insert((*p)->sha256).second) {
      out.push_back({compile::Compiler::with_ptxas((*p)->path).to_string(), **p, "beside Triton's ptxas"});
    }
  }
  std::optional<compile::PtxasInfo> newest;
  for (const compile::PtxasInfo& p : compile::discover_ptxas()) {
    const std::optional<Release> v = parse_release(p.version, ReleaseParts::two_or_three);
    if (v && *v >= report::k_fixing_ptxas && !seen.count(p.sha256)) {
      newest = p;  // discover_ptxas lists the installed versions in order
    }
  }
  if (newest) {
    tools::allow_found_program(newest->path);
    const std::string spec = newest->spec.find('/') == std::string::npos ? newest->spec : newest->path;
    out.push_back({compile::Compiler::with_ptxas(spec).to_string(), *newest, fmt::format("installed: {}", newest->path)});
  }
  return out;
}

/// What inspecting a set's variants under some compilers gave.
std::vector<inspect::InspectResult> inspect_variants(const inspect::Inspector& inspector,
                                                     const std::shared_ptr<const kernels::KernelSets>& sets,
                                                     const kernels::KernelSet& set, const std::vector<std::string>& ids,
                                                     const std::vector<compile::Compiler>& compilers) {
  inspect::InspectRequest r;
  r.sets = sets;
  for (const std::string& id : ids) {
    if (const kernels::Variant* v = set.find(id); v != nullptr && v->ok()) {
      r.config_variants.push_back({&set, v});
    }
  }
  if (r.config_variants.empty()) {
    return {};
  }
  r.config_compilers = compilers;
  r.config_path = "check";
  const inspect::Work w = inspect::plan_work(r);
  return inspector.inspect_all(w.items);
}

std::string kernels_source(const stack::PythonStack& s, bool vllm) {
  if (vllm) {
    return fmt::format("vLLM {}'s own, lifted from {}", s.vllm_version.value_or("?"), s.vllm_ops_dir.value_or("?"));
  }
  return "loraprobe's vLLM-shaped sources (kernels/triton), embedded";
}

/// Whose sources to build: vLLM's own when it is installed (or asked for), else ours.
bool use_vllm_kernels(const CheckOptions& o, const stack::PythonStack& s) {
  if (o.kernels == "loraprobe") {
    return false;
  }
  if (o.kernels == "vllm" && !s.vllm_ops_dir) {
    throw EnvironmentError(fmt::format("--kernels vllm, but {} has no vLLM with LoRA ops "
                                       "(vllm/lora/ops/triton_ops); --kernels loraprobe builds loraprobe's own",
                                       s.python));
  }
  return s.vllm_ops_dir.has_value();
}

/// The set the generator wrote (the one not embedded), held to the version the probe read.
const kernels::KernelSet* built_set(const kernels::KernelSets& sets, const std::string& probed) {
  for (const kernels::KernelSet& set : sets.all()) {
    if (!set.is_embedded()) {
      if (set.triton() != probed) {
        throw EnvironmentError(fmt::format("the probe read Triton {}, but Triton {} built the kernels", probed,
                                           set.triton()));
      }
      return &set;
    }
  }
  throw EnvironmentError("the generator wrote no kernel set");
}

/// The embedded set that stands for "upgrade Triton": the newest, when the user's is older.
const kernels::KernelSet* upgrade_set(const kernels::KernelSets& embedded, const stack::PythonStack& s) {
  const std::optional<Release> mine = parse_release(s.triton_version.value_or(""));
  const kernels::KernelSet& newest = embedded.newest();
  const std::optional<Release> theirs = parse_release(newest.triton());
  return mine && theirs && *mine < *theirs ? &newest : nullptr;
}

/// What --run hands the sweep besides the plan's flags.
struct RunTarget {
  std::string kernel_dir;
  std::string triton;
  bool dual_stream = false;
  std::optional<std::string> tuned_folder;
};

/// The sweep's command line: this executable's `sweep` over the built set alone, with the
/// plan's flags as given to check (and what the environment made of the plan).
std::vector<std::string> sweep_argv(const CheckOptions& o, const RunTarget& t, const std::string& config) {
  const std::optional<std::string> self = tools::executable_path();
  if (!self) {
    throw EnvironmentError("--run: /proc/self/exe cannot be read, so the sweep cannot be started");
  }
  std::vector<std::string> argv = {*self, "sweep", "--kernel-dir", t.kernel_dir, "--triton", t.triton,
                                   "--compiler", "prebuilt", "--out", o.run_report, "--force"};
  bool config_given = false;
  for (const CLI::Option* opt : o.plan_flags) {
    if (opt->count() == 0) {
      continue;
    }
    const std::string name = "--" + opt->get_lnames().front();
    config_given = config_given || name == "--config";
    if (opt->get_type_size() == 0) {
      argv.push_back(name);
      continue;
    }
    for (const std::string& value : opt->results()) {
      argv.insert(argv.end(), {name, value});
    }
  }
  if (!config_given) {
    argv.insert(argv.end(), {"--config", config});
  }
  if (t.dual_stream && std::find(argv.begin(), argv.end(), "--vllm-dual-stream") == argv.end()) {
    argv.push_back("--vllm-dual-stream");
  }
  if (t.tuned_folder && std::find(argv.begin(), argv.end(), "--vllm-configs") == argv.end()) {
    argv.insert(argv.end(), {"--vllm-configs", *t.tuned_folder});
  }
  for (const std::string& d : o.devices) {
    argv.insert(argv.end(), {"--devices", d});
  }
  return argv;
}

/// --run: the sweep of the built images on this host's GPU (its output passes through),
/// then each kernel's cases from its report folded into the answer.
void run_sweep(const CheckOptions& o, const RunTarget& t, stack::CheckAnswer& answer) {
  const TempDir scratch("loraprobe-check-run-");
  const std::string config = scratch.write("check.json", std::string(plan::embedded_config(k_check_config)));
  const std::vector<std::string> argv = sweep_argv(o, t, config);
  fmt::print(stderr, "check: --run: {}\n", escape::terminal_line(fmt::format("{}", fmt::join(argv, " "))));
  ProcessOptions options;
  options.timeout = std::chrono::hours(6);
  options.max_output = std::size_t{16} << 20;
  const ProcessResult r = run_process(argv, options);
  fmt::print(stderr, "{}", escape::terminal(r.err));
  fmt::print(stderr, "{}", escape::terminal(r.out));
  if (r.term_signal != 0 || r.timed_out || r.exit_code >= 2) {
    answer.notes.push_back(fmt::format("--run: the sweep did not finish ({}): see its output above", r.describe()));
    if (answer.verdict == stack::Verdict::clean) {
      answer.verdict = stack::Verdict::cannot_tell;
      answer.sentence = "the static check is clean, but the sweep of --run did not finish";
    }
    return;
  }
  stack::fold_run(answer, formats::read_document(o.run_report), o.run_report);
}

stack::CheckAnswer check_stack(const CheckOptions& o, stack::PythonStack s) {
  if (!s.has_triton()) {
    return stack::cannot_tell(std::move(s), "no Triton is installed for this Python, so it builds no LoRA kernel "
                                            "(give the interpreter vLLM runs with --python PATH)");
  }
  if (!s.ptxas.sm90) {
    const std::string why = s.ptxas.error.empty() ? std::string("the probe named none") : s.ptxas.error;
    return stack::cannot_tell(std::move(s), fmt::format("Triton could not say which ptxas it runs for sm_90: {}", why));
  }
  const auto embedded = std::make_shared<const kernels::KernelSets>(kernels::KernelSets::load());
  std::vector<std::string> notes;
  const plan::Plan plan = plan_of(o, s, *embedded, notes);
  stack::CheckInputs in;
  in.selection = stack::select_variants(plan, *embedded);
  std::vector<std::string> ids = in.selection.ids();
  if (o.run) {
    // A sweep runs its controls: the positive control must fail, the negative pass.
    for (const char* role : {"positive_control", "negative_control"}) {
      if (const kernels::Variant* v = embedded->newest().with_role(role)) {
        ids.push_back(v->id);
      }
    }
  }
  const bool vllm = use_vllm_kernels(o, s);
  std::optional<TempDir> scratch;
  // Absolute: the generator runs in its own folder.
  std::string out_dir = o.keep.empty() ? std::string() : fs::absolute(o.keep).lexically_normal().string();
  if (out_dir.empty()) {
    scratch.emplace("loraprobe-check-");
    out_dir = scratch->path() + "/kernels";
  }
  const stack::BuildOutcome built = stack::build_kernels(
      {s.python, ids, out_dir, o.jobs == 0 ? 2U : o.jobs, vllm ? s.vllm_ops_dir : std::nullopt});
  const auto sets = std::make_shared<const kernels::KernelSets>(kernels::KernelSets::load({built.dir}));
  in.built = built_set(*sets, *s.triton_version);
  in.kernels_source = kernels_source(s, vllm);
  in.ptxas = remedy_ptxas(s);
  sass::NvdisasmSearch search;
  search.path = o.nvdisasm;
  search.python = s.python;
  inspect::InspectorOptions options{sass::find_nvdisasm(search), {}, o.jobs, o.no_cache ? std::nullopt
                                                                                        : inspect::default_cache_root(),
                                    {}, true};
  const inspect::Inspector inspector(std::move(options));
  std::vector<compile::Compiler> compilers = {compile::Compiler::prebuilt()};
  for (const stack::RemedyPtxas& p : in.ptxas) {
    compilers.push_back(*compile::Compiler::parse(p.label));
  }
  in.results = inspect_variants(inspector, sets, *in.built, in.selection.ids(), compilers);
  if (inspector.interrupted_by() != 0) {
    throw Interrupted(inspector.interrupted_by());  // 128 + the signal; a partial answer would mislead
  }
  if (const kernels::KernelSet* up = upgrade_set(*embedded, s)) {
    in.upgrade_triton = up->triton();
    const std::string& banner = up->manifest().ptxas.version;
    const std::optional<tools::ToolVersion> version = tools::parse_tool_version(banner);
    in.upgrade_ptxas = version ? version->version : banner;
    in.upgrade_results = inspect_variants(inspector, embedded, *up, in.selection.launched, {compile::Compiler::prebuilt()});
    if (inspector.interrupted_by() != 0) {
      throw Interrupted(inspector.interrupted_by());
    }
  }
  const RunTarget target{built.dir, *s.triton_version, s.use_gdc(), s.tuned_folder};
  in.stack = std::move(s);
  stack::CheckAnswer answer = stack::decide(in);
  answer.build_seconds = built.seconds;
  answer.notes.insert(answer.notes.begin(), notes.begin(), notes.end());
  if (o.run) {
    run_sweep(o, target, answer);
  }
  return answer;
}

int run_check(const CheckOptions& o) {
  if (!o.run && o.plan.flags.axes.count(plan::AxisId::amplify) > 0) {
    // Amplified images are run, not inspected: without --run the flag would change nothing.
    throw UsageError("--amplify queues wgmma pairs in the images a sweep runs: give --run too (on a Hopper GPU)");
  }
  for (const std::string* path : {&o.output, &o.markdown, &o.junit}) {
    // Refused before minutes of work, not after (the writer checks again when it writes).
    std::error_code ec;
    if (!path->empty() && fs::exists(*path, ec) && !fs::is_regular_file(*path, ec)) {
      throw UsageError(fmt::format("{}: not a regular file; name a file to write the answer to", *path));
    }
  }
  for (const char* knob : {"TRITON_PTXAS_PATH", "TRITON_PTXAS_BLACKWELL_PATH"}) {
    // The probe and the generator run in folders of their own: a relative path means what
    // it means here, where vLLM would have been started.
    if (const char* value = std::getenv(knob); value != nullptr && *value != '\0' && value[0] != '/') {
      ::setenv(knob, fs::absolute(value).lexically_normal().c_str(), 1);
    }
  }
  const std::string python = o.python.empty() ? stack::default_python() : o.python;
  stack::PythonStack probed;
  probed.python = python;
  stack::CheckAnswer answer;
  try {
    probed = stack::probe_stack(python);
    answer = check_stack(o, probed);
  } catch (const EnvironmentError& e) {
    // The environment cannot answer (a Python that does not run, a build that fails):
    // that is the answer, with the stack as far as it was read.
    answer = stack::cannot_tell(std::move(probed), e.what());
  }
  std::string no_gpu;
  if (const std::optional<protocol::GpuRecord> gpu = probe_gpu(0, false, no_gpu)) {
    answer.gpu = fmt::format("{}, compute capability {}, driver {}", gpu->name, gpu->compute_capability,
                             gpu->driver_version);
  } else {
    answer.gpu = fmt::format("none ({})", no_gpu);
  }
  // The answer first: a file that cannot be written must not lose it.
  if (o.json) {
    fmt::print("{}\n", stack::answer_json(answer, command_line()).pretty());
  } else {
    fmt::print("{}", escape::terminal(stack::answer_text(answer)));
  }
  std::fflush(stdout);
  if (answer.verdict == stack::Verdict::cannot_tell) {
    // One line: the reason's first (a failed build's own lines are in the output above).
    fmt::print(stderr, "loraprobe check: cannot tell: {}\n",
               escape::terminal_line(answer.sentence.substr(0, answer.sentence.find('\n'))));
  }
  if (!o.output.empty()) {
    write_file_atomic(o.output, stack::answer_json(answer, command_line()).pretty() + "\n");
  }
  if (!o.markdown.empty()) {
    write_file_atomic(o.markdown, stack::answer_markdown(answer));
  }
  if (!o.junit.empty()) {
    write_file_atomic(o.junit, stack::answer_junit(answer));
  }
  return answer.exit_code();
}

}  // namespace

Command add_check_command(CLI::App& app) {
  auto o = std::make_shared<CheckOptions>();
  CLI::App* sub = app.add_subcommand(
      "check", "Is the stack this Python runs affected? Builds the LoRA kernels vLLM launches with its Triton and "
               "the ptxas Triton picks (no GPU), checks their SASS, and verifies each remedy by compiling");
  sub->add_option("--python", o->python,
                  "The interpreter vLLM runs with (default: the python3 beside loraprobe, else the one on PATH)")
      ->check(non_empty());
  sub->add_option("--kernels", o->kernels,
                  "Whose kernel sources: vllm (the installed vLLM's own, lifted from its files), loraprobe (ours, "
                  "vLLM-shaped), auto (vllm when installed; default)")
      ->check(CLI::IsMember({"auto", "vllm", "loraprobe"}));
  const std::size_t before = sub->get_options().size();
  add_plan_options(*sub, o->plan, {plan::AxisId::triton, plan::AxisId::compiler});
  const std::vector<CLI::Option*> all = sub->get_options();
  o->plan_flags.assign(all.begin() + static_cast<std::ptrdiff_t>(before), all.end());
  sub->add_flag("--json", o->json, "Print the JSON document (configs/schema/check.schema.json) instead of text");
  sub->add_option("-o,--output", o->output, "Also write the JSON document here")->check(non_empty());
  sub->add_option("--markdown", o->markdown, "Also write Markdown for a bug report here")->check(non_empty());
  sub->add_option("--junit", o->junit, "Also write JUnit XML here: one testcase per kernel, a hazard a failure")
      ->check(non_empty());
  sub->add_option("--keep", o->keep, "Build the kernels into DIR and keep them (a --kernel-dir set)")
      ->check(non_empty());
  sub->add_option("-j,--jobs", o->jobs, "Compile and inspect processes at once (default 2 for Triton, all cores "
                                        "for inspection)")
      ->check(CLI::Range(0U, k_max_jobs));
  sub->add_flag("--run", o->run,
                "On a Hopper GPU, also sweep the built images (the sweep of exactly these kernels, with cuBLAS as the "
                "reference; its report goes to --run-report)");
  sub->add_option("--run-report", o->run_report, "With --run: the sweep's report (default loraprobe-check-run.json)")
      ->check(non_empty());
  sub->add_option("--devices", o->devices, "With --run: the GPUs, as sweep --devices takes them");
  sub->add_option("--nvdisasm", o->nvdisasm, "Use this nvdisasm (default: CUDA toolkit, .tools, then Triton's)")
      ->check(non_empty());
  sub->add_flag("--no-cache", o->no_cache, "Neither read nor write the inspect report cache");
  sub->footer(
      "Examples:\n"
      "  loraprobe check                                   # the python3 beside loraprobe (a pip install), or on PATH\n"
      "  loraprobe check --python /opt/vllm/bin/python     # the environment vLLM serves from\n"
      "  loraprobe check --model qwen3.6-35b-a3b --tokens 384 --markdown check.md\n"
      "  loraprobe check --kernels loraprobe --json\n"
      "Exit codes: 0 clean, 1 affected, 2 bad input, 3 cannot tell (no Triton, a build that failed: the\n"
      "reason on stderr), 4 internal error.");
  return {sub, [o] { return run_check(*o); }};
}

}  // namespace lp::cli
