#include "sweep/runner.hpp"

#include <chrono>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "kernels/case_variants.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"
#include "report/environment.hpp"
#include "report/report.hpp"
#include "sweep/decide.hpp"
#include "sweep/images.hpp"
#include "sweep/job.hpp"
#include "report/journal.hpp"
#include "sweep/progress.hpp"
#include "sweep/race_control.hpp"
#include "sweep/table.hpp"
#include "sweep/worker_client.hpp"
#include "compile/ptxas.hpp"
#include "compile/toolchain.hpp"
#include "sass/analyze.hpp"
#include "util/base64.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "verify/tolerance.hpp"
#include "util/sha256.hpp"
#include "version.hpp"

namespace lp::sweep {

using nlohmann::json;
using report::CaseRecord;
using report::Verdict;

namespace {

/// Shrink's scaling in every case: vLLM passes lora_alpha / rank; 0.25 is exact in
/// binary, so it adds no rounding of its own to the comparison.
constexpr float k_shrink_scale = 0.25F;

/// Sizes of the controls: long enough a prompt (512 tokens) that the positive
/// control's garbage reaches every tile, rank 64 as in the field report.
constexpr std::int64_t k_control_tokens = 512;
constexpr std::int64_t k_control_rank = 64;
constexpr std::int64_t k_control_hidden = 4096;

/// One planned case and what running it takes.
struct Entry {
  const plan::Case* plan_case = nullptr;
  Job job;
  std::vector<std::string> image_keys;  ///< shrink first, then expand
  std::string variant_label;            ///< the variant id(s) for the report
  std::string skip_reason;              ///< set when it cannot run (no variant)
};

DType to_dtype(plan::Dtype d) {
  switch (d) {
    case plan::Dtype::fp32:
      return DType::f32;
    case plan::Dtype::bf16:
      return DType::bf16;
    case plan::Dtype::fp16:
      return DType::f16;
  }
  return DType::f32;
}

/// A case's inputs differ per case but not per run: the config seed mixed with the id.
std::uint64_t case_seed(std::uint64_t config_seed, const std::string& id) {
  std::uint64_t z = config_seed ^ std::stoull(id, nullptr, 16);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Problem problem_of(const plan::Case& c, std::uint64_t seed) {
  Problem p;
  p.op = c.op == plan::Op::expand ? Op::expand : (c.op == plan::Op::shrink ? Op::shrink : Op::lora_linear);
  p.num_tokens = c.tokens;
  p.rank = c.rank;
  p.slice_hidden = c.hidden;
  p.hidden_in = c.op == plan::Op::expand ? 0 : c.hidden.at(0);
  p.num_loras = c.num_loras;
  p.input_dtype = to_dtype(c.op == plan::Op::expand ? c.input_dtype : c.weight_dtype);
  p.weight_dtype = to_dtype(c.weight_dtype);
  p.add_inputs = c.op != plan::Op::shrink && c.add_inputs;
  p.scale = c.op == plan::Op::expand ? 1.0F : k_shrink_scale;
  p.seed = seed;
  p.split_k = c.shrink ? c.shrink->split_k : 1;
  return p;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string default_report_path() {
  std::string stamp = report::utc_now_iso8601();
  std::erase(stamp, ':');
  std::erase(stamp, '-');
  return fmt::format("loraprobe-report-{}.json", stamp);
}

std::string journal_path_for(const std::string& report_path) {
  const std::filesystem::path p(report_path);
  return (p.parent_path() / (p.stem().string() + ".jsonl")).string();
}

/// The verdict of a case that ran, from its dynamic result and its static findings.
CaseRecord record_of(const Entry& e, const JobResult& r, const ImageSet& images) {
  CaseRecord c;
  c.index = e.plan_case != nullptr ? e.plan_case->index : r.index;
  c.id = r.case_id;
  c.axes = e.plan_case != nullptr ? e.plan_case->axes : json::object();
  c.variant = e.variant_label;
  c.runs = r.runs;
  c.failed_runs = r.failed_runs;
  c.metrics = r.metrics;
  c.timing = r.timing;
  int findings = 0;
  bool inspected = true;
  std::string not_inspected;
  std::set<std::string> made_by;  // of the case's images (lora_linear has two)
  for (const std::string& key : e.image_keys) {
    const Image& image = images.at(key);
    if (image.findings) {
      findings += *image.findings;
    } else {
      inspected = false;
      not_inspected = image.sass_error;
    }
    made_by.insert(image.attribution);
  }
  if (inspected) {
    c.static_findings = findings;
  }
  if (!made_by.empty() && made_by.count("") == 0) {
    c.attribution = made_by.count("ptx") > 0 ? "ptx" : made_by.count("ptxas") > 0 ? "ptxas" : "none";
  }
  const Decision d = decide(r, c.static_findings, not_inspected);
  c.verdict = d.verdict;
  c.reason = d.reason;
  if (c.attribution && *c.attribution != "none" && (c.verdict == Verdict::latent || c.verdict == Verdict::fail)) {
    c.reason += *c.attribution == "ptx"
                    ? "; the PTX itself writes registers of the pending wgmma (fix in the PTX producer; no ptxas can "
                      "be relied on)"
                    : "; the PTX is clean: ptxas made the hazard (a newer ptxas can fix it)";
  }
  return c;
}

CaseRecord not_run(const Entry& e, Verdict verdict, std::string reason) {
  CaseRecord c;
  c.index = e.plan_case->index;
  c.id = e.plan_case->id;
  c.axes = e.plan_case->axes;
  if (!e.variant_label.empty()) {
    c.variant = e.variant_label;
  }
  c.verdict = verdict;
  c.reason = std::move(reason);
  c.metrics = nullptr;
  c.timing = nullptr;
  return c;
}

class Sweep {
 public:
  Sweep(const plan::SweepConfig& config, const SweepRequest& request)
      : m_config(config),
        m_request(request),
        m_sets(kernels::KernelSets::load(request.kernel_dirs)),
        m_tritons(plan::resolve_tritons(config, m_sets.versions())) {}

  int run() {
    const auto t_start = std::chrono::steady_clock::now();
    json phases = json::object();
    const std::string out = m_request.out.empty()
                                ? (m_request.resume.empty() ? default_report_path()
                                                            : std::filesystem::path(m_request.resume).replace_extension(".json").string())
                                : m_request.out;
    const std::string journal_path = m_request.resume.empty() ? journal_path_for(out) : m_request.resume;
    keep_earlier_files(out, journal_path, /*act=*/false);  // refuse before any work
    // The GPU first, before the plan is built (a large plan takes a while): without
    // one nothing is written, and the error says so.
    auto t = std::chrono::steady_clock::now();
    start_worker();
    phases["worker_start"] = seconds_since(t);
    t = std::chrono::steady_clock::now();
    m_plan = plan::expand_plan(m_config, m_sets.versions());
    phases["plan"] = seconds_since(t);
    m_report.meta = {{"tool", "loraprobe"},
                     {"version", k_version},
                     {"git_sha", k_git_sha},
                     {"argv", m_request.argv},
                     {"started_at", report::utc_now_iso8601()},
                     {"config", m_config.to_json()},
                     {"config_sha256", sha256_hex(m_config.to_json().dump())},
                     {"seed", m_config.seed.value},
                     {"repeats", m_config.repeats.value},
                     {"kernel_sets", kernel_sets_record()},
                     {"plan", {{"cases", m_plan.cases.size()}, {"combinations", m_plan.combinations},
                               {"excluded_by_rule", m_plan.excluded_by_rule}, {"duplicates", m_plan.duplicates}}},
                     {"interrupted", nullptr}};
    m_report.fail_on = m_request.fail_on;
    if (m_plan.cases.empty()) {
      throw UsageError(fmt::format("{}: the plan has no case: every combination is excluded or not applicable "
                                   "(sweep --dry-run shows the counts)",
                                   m_config.source.empty() ? m_config.name : m_config.source));
    }
    prepare_entries();
    std::map<std::string, CaseRecord> done;
    std::optional<json> done_controls;
    const json header = journal_header();
    if (!m_request.resume.empty()) {
      report::JournalContents previous = report::read_journal(m_request.resume);
      for (const char* key : {"config_sha256", "plan_sha256"}) {
        if (previous.header.value(key, json()) != header[key]) {
          throw UsageError(fmt::format("{}: written for another {} than this sweep's; resume with the same config "
                                       "and flags",
                                       m_request.resume, key == std::string("config_sha256") ? "config" : "plan"));
        }
      }
      done = std::move(previous.cases);
      done_controls = previous.controls;
    }
    t = std::chrono::steady_clock::now();
    m_images.build_on_cpu(m_sets, m_request.jobs);
    phases["images"] = seconds_since(t);
    keep_earlier_files(out, journal_path, /*act=*/true);  // the GPU is there: now move them aside
    report::Journal journal(journal_path, header);
    fmt::print(stderr, "sweep: {} cases ({} already journaled), report {}, journal {}\n", m_plan.cases.size(),
               done.size(), out, journal_path);
    // Ctrl-C or SIGTERM from here on: the waits kill and reap their children and throw
    // lp::Interrupted; the cases that finished are in the journal and go into a partial
    // report marked interrupted, and the message says how to resume.
    Progress progress(m_entries.size(), m_request.progress);
    std::size_t finished = 0;
    int interrupted_by = 0;
    try {
      inspect_and_run(journal, done, done_controls, phases, progress, finished);
    } catch (const Interrupted& e) {
      interrupted_by = e.signal();
      m_report.meta["interrupted"] =
          fmt::format("{} after {} of {} cases", signal_name(interrupted_by), finished, m_entries.size());
      m_worker.reset();  // killed and reaped by the wait that noticed the signal
    }
    progress.finish();
    if (interrupted_by == 0) {
      stop_worker();
    }
    fill_variants();
    m_report.meta["finished_at"] = report::utc_now_iso8601();
    phases["total"] = seconds_since(t_start);
    m_report.meta["phases_s"] = phases;
    auto phase = [&phases](const char* name) { return phases.value(name, 0.0); };
    fmt::print(stderr, "sweep: time: images {:.1f} s, worker start {:.1f} s, static inspection {:.1f} s, controls {:.1f} s, "
                       "cases {:.1f} s ({:.1f} ms per case), total {:.1f} s\n",
               phase("images"), phase("worker_start"), phase("static_inspection"), phase("controls"), phase("cases"),
               m_entries.empty() ? 0.0 : 1000.0 * phase("cases") / static_cast<double>(m_entries.size()),
               phase("total"));
    m_report.write(out);
    print_summary(out);
    if (interrupted_by != 0) {
      fmt::print(stderr,
                 "sweep: interrupted by {} after {} of {} cases; the journal {} keeps them and the report {} shows "
                 "them (marked interrupted): 'loraprobe sweep --resume {}' runs the rest\n",
                 signal_name(interrupted_by), finished, m_entries.size(), journal_path, out, journal_path);
      throw Interrupted(interrupted_by);
    }
    return m_report.summary().exit_code;
  }

 private:
  /// Static inspection, the controls and the cases, each finished case journaled and
  /// counted in `finished`; lp::Interrupted (Ctrl-C, SIGTERM) propagates out of it.
  void inspect_and_run(report::Journal& journal, const std::map<std::string, CaseRecord>& done,
                       const std::optional<json>& done_controls, json& phases, Progress& progress,
                       std::size_t& finished) {
    auto t = std::chrono::steady_clock::now();
    // The cases' time counts whether they all ran or a signal stopped them.
    struct CasesTimer {
      json& phases;
      std::optional<std::chrono::steady_clock::time_point> start;
      ~CasesTimer() {
        if (start) {
          phases["cases"] = seconds_since(*start);
        }
      }
    } cases_timer{phases, std::nullopt};
    jit_driver_images();
    const std::string inspect_problem = m_images.inspect(m_request.nvdisasm, m_request.jobs);
    phases["static_inspection"] = seconds_since(t);
    if (!inspect_problem.empty()) {
      fmt::print(stderr, "sweep: warning: static inspection unavailable ({}); no case can be LATENT\n", inspect_problem);
    }
    fill_environment();

    bool controls_valid = true;
    t = std::chrono::steady_clock::now();
    if (m_request.controls) {
      const json controls = done_controls ? *done_controls : run_controls();
      if (!done_controls) {
        journal.append("controls", {{"controls", controls}});
      }
      m_report.controls = controls;
      controls_valid = controls.value("valid", false);
    } else {
      m_report.controls = {{"ran", false}, {"valid", nullptr}, {"reason", "--no-controls"}};
    }

    phases["controls"] = seconds_since(t);
    cases_timer.start = std::chrono::steady_clock::now();
    std::size_t failing = 0;
    std::size_t latent = 0;
    if (controls_valid) {
      for (const Entry& e : m_entries) {
        CaseRecord record;
        if (const auto it = done.find(e.plan_case->id); it != done.end()) {
          record = it->second;
        } else {
          record = run_entry(e);
          journal.append("case", {{"record", record.to_json()}});
        }
        failing += m_request.fail_on.count(record.verdict);
        latent += record.verdict == Verdict::latent ? 1 : 0;
        const bool stop = m_request.stop_on_first_failure && m_request.fail_on.count(record.verdict) > 0;
        m_report.cases.push_back(std::move(record));
        progress.update(++finished, failing, latent, row_label(e.plan_case->axes));
        if (stop) {
          m_report.meta["interrupted"] = fmt::format("--stop-on-first-failure after case {}", e.plan_case->id);
          break;
        }
      }
    } else {
      m_report.meta["interrupted"] = "the controls did not behave; no case was run";
    }
  }

  /// A sweep never mixes its cases into another sweep's journal, nor overwrites a
  /// report silently: without --resume, an existing journal or report is refused
  /// (--force keeps each as <name>.bak and starts afresh); with --resume, the earlier
  /// report is kept as <name>.bak before the continued one replaces it.
  void keep_earlier_files(const std::string& out, const std::string& journal_path, bool act) const {
    std::error_code ec;
    auto keep = [&](const std::string& path) {
      if (!act) {
        return;
      }
      const std::string bak = path + ".bak";
      std::filesystem::rename(path, bak, ec);
      if (ec) {
        throw UsageError(fmt::format("{}: cannot keep it as {}: {}", path, bak, ec.message()));
      }
      fmt::print(stderr, "sweep: kept the earlier {} as {}\n", path, bak);
    };
    if (!m_request.resume.empty()) {
      if (std::filesystem::exists(out, ec)) {
        keep(out);
      }
      return;
    }
    for (const std::string& path : {journal_path, out}) {
      if (!std::filesystem::exists(path, ec)) {
        continue;
      }
      if (!m_request.force) {
        throw UsageError(fmt::format("{}: exists, from an earlier sweep; continue that sweep with --resume {}, or "
                                     "pass --force to start afresh (the earlier files are kept as .bak)",
                                     path, journal_path));
      }
      keep(path);
    }
  }

  json journal_header() const {
    std::string ids;
    for (const plan::Case& c : m_plan.cases) {
      ids += c.id;
    }
    return {{"schema_version", report::schema_version()},
            {"config_sha256", sha256_hex(m_config.to_json().dump())},
            {"plan_sha256", sha256_hex(ids)},
            {"argv", m_request.argv},
            {"started_at", report::utc_now_iso8601()},
            {"cases", m_plan.cases.size()}};
  }

  /// Looks up each case's variant(s) and registers the images it needs.
  void prepare_entries() {
    for (const plan::Case& c : m_plan.cases) {
      Entry e;
      e.plan_case = &c;
      e.job.index = c.index;
      e.job.case_id = c.id;
      e.job.problem = problem_of(c, case_seed(m_config.seed.value, c.id));
      e.job.repeats = static_cast<int>(m_config.repeats.value);
      const plan::KernelKnobs& tile = c.expand ? *c.expand : *c.shrink;
      e.job.block_m = tile.block_m;
      e.job.block_n = tile.block_n;
      const plan::Dtype out = c.op == plan::Op::shrink ? plan::Dtype::fp32 : c.weight_dtype;
      if (const auto tol = m_config.tolerance.find(out); tol != m_config.tolerance.end()) {
        e.job.atol = tol->second.value.atol;
        e.job.rtol = tol->second.value.rtol;
      }
      std::vector<std::string> labels;
      const kernels::KernelSet& set = m_sets.at(c.triton);
      auto use = [&](const nlohmann::json& wanted, std::optional<ImageRef>& slot) {
        const kernels::Lookup found = set.lookup(wanted);
        if (found.variant == nullptr) {
          e.skip_reason = found.problem;
          return;
        }
        const std::string key = m_images.add(c.triton, found.variant->id, c.compiler);
        slot = ImageRef{key, c.triton, found.variant->id, c.compiler};
        e.image_keys.push_back(key);
        labels.push_back(found.variant->id);
      };
      if (c.shrink) {
        use(kernels::wanted_shrink_axes(c), e.job.shrink);
      }
      if (c.expand && e.skip_reason.empty()) {
        use(kernels::wanted_expand_axes(c), e.job.expand);
      }
      if (const auto hook = m_request.test_hooks.find(c.index); hook != m_request.test_hooks.end() && e.skip_reason.empty()) {
        const kernels::Variant* v = set.with_role(hook->second);
        if (v == nullptr) {
          throw UsageError(fmt::format("--test-hook {}={}: the kernel set of Triton {} has no variant of role {}",
                                       c.index, hook->second, c.triton, hook->second));
        }
        const std::string key = m_images.add(c.triton, v->id, c.compiler);
        e.job.expand = ImageRef{key, c.triton, v->id, c.compiler};
        e.image_keys.back() = key;
        labels.back() = v->id;
      }
      for (const std::string& l : labels) {
        e.variant_label += (e.variant_label.empty() ? "" : "+") + l;
      }
      m_entries.push_back(std::move(e));
    }
  }

  void start_worker() {
    const std::string exe = m_request.worker_exe.empty() ? std::filesystem::read_symlink("/proc/self/exe").string()
                                                         : m_request.worker_exe;
    std::vector<std::string> argv = {exe, "__worker", "--device", std::to_string(m_request.device)};
    for (const std::string& dir : m_request.kernel_dirs) {
      argv.push_back("--kernel-dir");
      argv.push_back(dir);
    }
    if (m_request.allow_jit_cache) {
      argv.push_back("--allow-jit-cache");
    }
    m_worker.emplace(argv, m_request.worker_start_timeout);
    if (m_gpu.is_null()) {
      m_gpu = m_worker->gpu();
    }
  }

  void stop_worker() {
    if (m_worker) {
      m_worker->quit();
      m_worker.reset();
    }
  }

  /// The driver compile path: the worker JITs each variant's PTX once (in parallel)
  /// and hands the cubin back for inspection and for later workers.
  void jit_driver_images() {
    json items = json::array();
    for (const auto& [key, image] : m_images.all()) {
      if (image.compiler == "driver" && image.cubin.empty() && image.error.empty()) {
        items.push_back({{"key", key}, {"triton", image.triton}, {"variant", image.variant_id}, {"compiler", "driver"}});
      }
    }
    if (items.empty()) {
      return;
    }
    for (const json& r : m_worker->load(items, m_request.case_timeout)) {
      Image& image = m_images.at(r.at("key").get<std::string>());
      if (r.contains("cubin")) {
        image.cubin = base64_decode(r.at("cubin").get<std::string>());
        image.compile = {{"kind", "driver"},
                         {"tool", "cuLinkCreate/cuLinkAddData/cuLinkComplete"},
                         {"version", m_worker->gpu().value("driver_version", "")},
                         {"ms", r.value("ms", 0.0)},
                         {"log", r.value("jit_log", "")}};
      }
      if (!r.value("ok", false)) {
        image.error = r.value("error", std::string("the driver JIT failed"));
      }
    }
  }

  void fill_environment() {
    json toolkit = compile::toolkit_record();
    m_report.environment = {{"host", report::host_record()},
                            {"toolkit", toolkit},
                            {"compilers", m_images.compilers_record()},
                            {"gpu", m_gpu},
                            {"jit_cache_disabled", m_gpu.value("jit_cache_disabled", !m_request.allow_jit_cache)},
                            {"module_loading", m_gpu.value("module_loading", "")},
                            {"kernel_sets", kernel_sets_record()}};
  }

  /// The kernel sets the plan uses: where each came from, its Triton, its bundled ptxas.
  json kernel_sets_record() const {
    json sets = json::array();
    for (const std::string& triton : m_tritons) {
      const kernels::KernelSet& set = m_sets.at(triton);
      sets.push_back({{"triton_version", triton},
                      {"origin", set.origin()},
                      {"variants", set.variants().size()},
                      {"ptxas", set.manifest().ptxas},
                      {"ptxas_options", set.manifest().ptxas_options}});
    }
    return sets;
  }

  /// Runs one job on the worker (starting one if needed, loading its images), with
  /// the case timeout as the deadline. A worker that dies or hangs is replaced.
  JobResult run_job(const Job& job, const std::vector<std::string>& keys) {
    if (!m_worker || !m_worker->alive()) {
      start_worker();
    }
    json items = json::array();
    for (const std::string& key : keys) {
      const Image& image = m_images.at(key);
      if (m_worker->has_loaded(key)) {
        continue;
      }
      json item = {{"key", key}, {"triton", image.triton}, {"variant", image.variant_id}, {"compiler", image.compiler}};
      if (image.compiler != "prebuilt") {
        item["cubin"] = base64_encode(image.cubin);
      }
      items.push_back(std::move(item));
    }
    if (!items.empty()) {
      for (const json& r : m_worker->load(items, m_request.case_timeout)) {
        if (!r.value("ok", false)) {
          JobResult failed;
          failed.index = job.index;
          failed.case_id = job.case_id;
          failed.status = "incomplete";
          failed.reason = fmt::format("loading {} failed: {}", r.value("key", ""), r.value("error", ""));
          failed.metrics = nullptr;
          failed.timing = nullptr;
          return failed;
        }
      }
    }
    return m_worker->run(job, m_request.case_timeout);
  }

  CaseRecord run_entry(const Entry& e) {
    if (!e.skip_reason.empty()) {
      return not_run(e, Verdict::skipped, e.skip_reason);
    }
    for (const std::string& key : e.image_keys) {
      const Image& image = m_images.at(key);
      if (!image.error.empty()) {
        return not_run(e, Verdict::compile_error, fmt::format("{}: {}", key, image.error));
      }
    }
    return record_of(e, run_job(e.job, e.image_keys), m_images);
  }

  /// The positive control must FAIL (it feeds raw fp32 bits to the dot as bf16
  /// pairs) and the negative control (bf16 input, vLLM default) must PASS; if not,
  /// the detector is broken and no verdict of this run can be trusted.
  json run_controls() {
    std::size_t next_index = m_plan.cases.size();
    auto control = [&](const kernels::KernelSet& set, const std::string& role, DType input) -> CaseRecord {
      const kernels::Variant* v = set.with_role(role);
      Entry e;
      plan::Case c;
      c.index = next_index++;
      c.id = sha256_hex(role + "@" + set.triton()).substr(0, 12);
      c.axes = {{"op", "expand"}, {"tokens", k_control_tokens}, {"rank", k_control_rank},
                {"hidden", {k_control_hidden}}, {"input_dtype", input == DType::f32 ? "fp32" : "bf16"},
                {"weight_dtype", "bf16"}, {"compiler", "prebuilt"}, {"triton", set.triton()}, {"control", role}};
      if (v == nullptr || !v->ok()) {
        e.plan_case = &c;
        return not_run(e, Verdict::skipped, fmt::format("the kernel set of Triton {} has no ok {} variant",
                                                        set.triton(), role));
      }
      c.axes["variant"] = v->id;
      e.plan_case = &c;
      e.variant_label = v->id;
      e.job.index = c.index;
      e.job.case_id = c.id;
      Problem& p = e.job.problem;
      p.op = Op::expand;
      p.num_tokens = k_control_tokens;
      p.rank = k_control_rank;
      p.slice_hidden = {k_control_hidden};
      p.input_dtype = input;
      p.weight_dtype = DType::bf16;
      p.add_inputs = v->constexprs.value("ADD_INPUTS", false);
      p.seed = case_seed(m_config.seed.value, c.id);
      e.job.block_m = v->constexprs.value("BLOCK_M", 64);
      e.job.block_n = v->constexprs.value("BLOCK_N", 128);
      e.job.repeats = 1;
      const std::string key = m_images.add(set.triton(), v->id, "prebuilt");
      e.image_keys = {key};
      e.job.expand = ImageRef{key, set.triton(), v->id, "prebuilt"};
      m_images.build_on_cpu(m_sets, m_request.jobs);
      m_images.inspect(m_request.nvdisasm, m_request.jobs);
      return run_entry(e);
    };
    // The controls of every Triton set the plan uses: each set's detector must work.
    json per_set = json::array();
    bool all_valid = true;
    std::string all_reasons;
    for (const std::string& triton : m_tritons) {
      const kernels::KernelSet& set = m_sets.at(triton);
      const CaseRecord positive = control(set, "positive_control", DType::f32);
      const CaseRecord negative = control(set, "negative_control", DType::bf16);
      const bool positive_ok = positive.verdict == Verdict::fail;
      const bool negative_ok = negative.verdict == Verdict::pass || negative.verdict == Verdict::latent;
      std::string reason;
      if (!positive_ok) {
        reason += fmt::format("the positive control ({}) must FAIL but is {}{}; ", positive.variant.value_or("?"),
                              report::to_string(positive.verdict), positive.reason.empty() ? "" : ": " + positive.reason);
      }
      if (!negative_ok) {
        reason += fmt::format("the negative control ({}) must PASS but is {}{}; ", negative.variant.value_or("?"),
                              report::to_string(negative.verdict), negative.reason.empty() ? "" : ": " + negative.reason);
      }
      json entry = {{"triton", triton}, {"valid", positive_ok && negative_ok},
                    {"positive", positive.to_json()}, {"negative", negative.to_json()}};
      if (!reason.empty()) {
        reason.resize(reason.size() - 2);
        fmt::print(stderr, "sweep: INVALID RUN: Triton {} set: {}\n", triton, reason);
        entry["reason"] = reason;
        all_reasons += fmt::format("{}Triton {}: {}", all_reasons.empty() ? "" : "; ", triton, reason);
        all_valid = false;
      } else {
        fmt::print(stderr, "sweep: controls of the Triton {} set behave: positive FAIL ({}), negative PASS ({})\n",
                   triton, positive.metrics.is_null() ? "" : positive.metrics.value("summary", ""),
                   negative.metrics.is_null() ? "" : negative.metrics.value("summary", ""));
      }
      per_set.push_back(std::move(entry));
    }
    // The race control says whether this GPU shows the hazard at run time; it never
    // makes a run invalid (a GPU that does not show it is a finding, not a broken detector).
    json race = run_race_control();
    fmt::print(stderr, "sweep: race control: {}\n", race.value("summary", ""));
    json controls = {{"ran", true}, {"valid", all_valid}, {"sets", std::move(per_set)}, {"race", std::move(race)}};
    if (!all_reasons.empty()) {
      controls["reason"] = all_reasons;
    }
    return controls;
  }

  /// The race control (sweep/race_control.hpp): compiled here with the toolkit's
  /// ptxas, its SASS checked for the hazard, then run on the worker.
  json run_race_control() {
    std::string compiler = "ptxas=toolkit";
    std::string cubin;
    std::optional<std::size_t> findings;
    try {
      const compile::PtxasInfo ptxas = compile::resolve_ptxas("toolkit");
      compiler = fmt::format("ptxas=toolkit ({})", ptxas.version);
      cubin = compile::compile_with_ptxas(ptxas, race_control_ptx(), "race-control").cubin;
    } catch (const std::exception& e) {
      return race_outcome(compiler, std::nullopt, std::nullopt, e.what());
    }
    try {
      sass::NvdisasmSearch search;
      search.path = m_request.nvdisasm;
      findings = sass::analyze_cubin(cubin, sass::find_nvdisasm(search), {}, "race-control.cubin").finding_count();
    } catch (const std::exception& e) {
      fmt::print(stderr, "sweep: warning: the race control's SASS could not be inspected: {}\n", e.what());
    }
    if (!m_worker || !m_worker->alive()) {
      start_worker();
    }
    std::string error;
    const std::optional<json> answer = m_worker->race(cubin, k_race_ctas, k_race_launches, m_request.case_timeout, error);
    std::optional<RaceResult> result;
    if (answer) {
      result = RaceResult::from_json(*answer);
    }
    return race_outcome(compiler, findings, result, error);
  }

  void fill_variants() {
    std::map<std::string, std::vector<const CaseRecord*>> by_key;
    std::map<std::string, const Entry*> entry_by_id;
    for (const Entry& e : m_entries) {
      entry_by_id[e.plan_case->id] = &e;
    }
    for (const CaseRecord& c : m_report.cases) {
      if (const auto it = entry_by_id.find(c.id); it != entry_by_id.end()) {
        for (const std::string& key : it->second->image_keys) {
          by_key[key].push_back(&c);
        }
      }
    }
    json variants = json::array();
    for (const auto& [key, image] : m_images.all()) {
      std::map<std::string, int> verdicts;
      for (const CaseRecord* c : by_key[key]) {
        ++verdicts[std::string(report::to_string(c->verdict))];
      }
      variants.push_back({{"variant", image.variant_id},
                          {"triton", image.triton},
                          {"compiler", image.compiler},
                          {"compile", image.compile},
                          {"compile_error", image.error.empty() ? json() : json(image.error)},
                          {"cubin_sha256", image.cubin.empty() ? json() : json(sha256_hex(image.cubin))},
                          {"static_findings", image.findings ? json(*image.findings) : json()},
                          {"ptx_findings", image.ptx_findings ? json(*image.ptx_findings) : json()},
                          {"attribution", image.attribution.empty() ? json() : json(image.attribution)},
                          {"sass", image.sass},
                          {"sass_error", image.sass_error.empty() ? json() : json(image.sass_error)},
                          {"case_verdicts", verdicts}});
    }
    m_report.variants = std::move(variants);
    m_report.tolerances = tolerance_record();
  }

  /// The tolerance model and table (verify/tolerance.hpp) and the config's overrides.
  json tolerance_record() const {
    json table = json::array();
    for (const ToleranceRow& row : tolerance_table()) {
      table.push_back({{"op", op_name(row.op)},
                       {"output_dtype", dtype_name(row.output)},
                       {"k", row.k},
                       {"add_inputs", row.add_inputs},
                       {"hidden_in", row.hidden_in},
                       {"atol", row.tolerance.atol},
                       {"rtol", row.tolerance.rtol},
                       {"why", row.tolerance.describe()}});
    }
    json overrides = json::object();
    for (const auto& [dtype, setting] : m_config.tolerance) {
      overrides[std::string(plan::to_string(dtype))] = {
          {"atol", setting.value.atol}, {"rtol", setting.value.rtol}, {"origin", setting.origin.describe()}};
    }
    return {{"model",
             "|actual - expected| <= atol + rtol * |expected|, atol and rtol computed per case from the op, output "
             "dtype, K and ADD_INPUTS (src/verify/tolerance.hpp); each case's metrics carry the atol and rtol it "
             "was judged with; a config override replaces both for every case of that output dtype"},
            {"table", std::move(table)},
            {"overrides", std::move(overrides)}};
  }

  void print_summary(const std::string& out) const {
    const report::Summary s = m_report.summary();
    fmt::print("{}", format_verdict_table(m_report.cases));
    std::string counts;
    for (const auto& [verdict, n] : s.counts) {
      counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, report::to_string(verdict));
    }
    fmt::print("cases: {}\n", counts.empty() ? "none" : counts);
    if (s.first_failure) {
      const CaseRecord& c = m_report.cases[*s.first_failure];
      fmt::print("first failure: case {} ({}, {} tokens): {} {}\n", c.id, row_label(c.axes),
                 c.axes.value("tokens", 0), report::to_string(c.verdict), c.reason);
    }
    if (s.minimal_failure) {
      const CaseRecord& c = m_report.cases[*s.minimal_failure];
      fmt::print("minimal failure: case {} ({}, {} tokens)\n", c.id, row_label(c.axes), c.axes.value("tokens", 0));
    }
    if (s.first_latent) {
      const CaseRecord& c = m_report.cases[*s.first_latent];
      fmt::print("first latent: case {} ({}, {} tokens): {}\n", c.id, row_label(c.axes), c.axes.value("tokens", 0),
                 c.reason);
    }
    fmt::print("report: {}\n", out);
  }

  const plan::SweepConfig& m_config;
  const SweepRequest& m_request;
  kernels::KernelSets m_sets;
  std::vector<std::string> m_tritons;  ///< the Triton sets the plan uses, in order
  plan::Plan m_plan;  ///< expanded by run() once the GPU answered
  ImageSet m_images;
  std::vector<Entry> m_entries;
  std::optional<WorkerClient> m_worker;
  json m_gpu;
  report::Report m_report;
};

}  // namespace

int run_sweep(const plan::SweepConfig& config, const SweepRequest& request) {
  Sweep sweep(config, request);
  return sweep.run();
}

}  // namespace lp::sweep
