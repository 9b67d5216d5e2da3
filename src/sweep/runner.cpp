#include "sweep/runner.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <numeric>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "families/family.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"
#include "report/journal.hpp"
#include "report/report.hpp"
#include "report/verdict.hpp"
#include "sweep/background_inspection.hpp"
#include "sweep/control_run.hpp"
#include "sweep/entries.hpp"
#include "sweep/entry_runner.hpp"
#include "sweep/images.hpp"
#include "sweep/output_files.hpp"
#include "sweep/phases.hpp"
#include "sweep/remedy_run.hpp"
#include "sweep/report_builder.hpp"
#include "sweep/sinks.hpp"
#include "sweep/workers.hpp"
#include "util/error.hpp"
#include "util/elapsed.hpp"
#include "util/interrupt.hpp"
#include "util/parallel.hpp"

namespace lp::sweep {

using report::CaseRecord;

namespace {

/// The cases already journaled by the sweep --resume continues.
struct Resumed {
  std::map<std::string, CaseRecord> cases;
  std::optional<report::Controls> controls;
  std::map<std::string, CaseRecord> remedies;  ///< sweep --remedies: neighbours already measured
};

/// What the journal of --resume holds, checked to be this sweep's (`header`).
Resumed read_resumed(const std::string& resume, const report::JournalHeader& header) {
  Resumed r;
  if (resume.empty()) {
    return r;
  }
  report::JournalContents previous = report::read_journal(resume);
  for (const auto& [what, mine, theirs] : {std::tuple("config", &header.config_sha256, &previous.header.config_sha256),
                                           std::tuple("plan", &header.plan_sha256, &previous.header.plan_sha256)}) {
    if (*mine != *theirs) {
      throw UsageError(fmt::format("{}: written for another {} than this sweep's; resume with the same config "
                                   "and flags",
                                   resume, what));
    }
  }
  r.cases = std::move(previous.cases);
  r.controls = previous.controls;
  r.remedies = std::move(previous.remedies);
  return r;
}

/// The sweep's time line on stderr.
void print_times(const Phases& phases, std::size_t entries) {
  auto phase = [](const std::optional<double>& seconds) { return seconds.value_or(0.0); };
  fmt::print(stderr, "sweep: time: images {:.1f} s, worker start {:.1f} s, static inspection {:.1f} s (beside the GPU "
                     "work; waited {:.1f} s), controls {:.1f} s, cases {:.1f} s ({:.1f} ms per case), total {:.1f} s\n",
             phase(phases.images), phase(phases.worker_start), phase(phases.static_inspection),
             phase(phases.static_inspection_wait), phase(phases.controls), phase(phases.cases),
             entries == 0 ? 0.0 : 1000.0 * phase(phases.cases) / static_cast<double>(entries), phase(phases.total));
  if (phases.gpu_kernels) {
    fmt::print(stderr, "sweep: GPU floor {:.2f} s: kernels {:.2f} s, references {:.2f} s\n",
               phase(phases.gpu_kernels) + phase(phases.gpu_references), phase(phases.gpu_kernels),
               phase(phases.gpu_references));
  }
}

/// The finished cases handed to the sinks in plan order, whichever GPU finished them
/// first (each was journaled as it finished); `finished` counts those handed on.
class PlanOrder {
 public:
  PlanOrder(const std::vector<Entry>& entries, CaseSink& sinks, std::size_t& finished)
      : m_entries(entries), m_sinks(sinks), m_finished(finished), m_results(entries.size()) {}

  void add(std::size_t index, const CaseRecord& record) {
    m_results[index] = record;
    while (m_next < m_results.size() && m_results[m_next]) {
      m_sinks.add(*m_entries[m_next].plan_case, *m_results[m_next]);
      ++m_finished;
      ++m_next;
    }
  }
  /// A run stopped early (--stop-on-first-failure): what the other GPUs finished
  /// meanwhile, in plan order, past the gaps.
  void add_the_rest() {
    for (std::size_t i = m_next; i < m_results.size(); ++i) {
      if (m_results[i]) {
        m_sinks.add(*m_entries[i].plan_case, *m_results[i]);
        ++m_finished;
      }
    }
  }

 private:
  const std::vector<Entry>& m_entries;
  CaseSink& m_sinks;
  std::size_t& m_finished;
  std::vector<std::optional<CaseRecord>> m_results;
  std::size_t m_next = 0;  ///< the first entry not yet handed to the sinks
};

/// The cases' phase: from start() to the end of the scope, whether they all ran or a
/// signal stopped them.
struct CasesTimer {
  Phases& phases;
  std::optional<std::chrono::steady_clock::time_point> start_time;
  void start() { start_time = std::chrono::steady_clock::now(); }
  ~CasesTimer() {
    if (start_time) {
      phases.cases = seconds_since(*start_time);
    }
  }
};

/// How the controls and cases ended: the signal that stopped them (0: none) and how
/// many cases were handed to the sinks by then.
struct Stopped {
  int by = 0;
  std::size_t finished = 0;
};

/// What the sweep is about to run, on stderr.
void announce(const plan::Plan& plan, std::size_t journaled, const std::string& report, const std::string& journal) {
  fmt::print(stderr, "sweep: {} cases ({} already journaled), report {}, journal {}\n", plan.cases.size(), journaled,
             report, journal);
  for (const plan::NotSwept& n : plan.not_swept) {
    fmt::print(stderr, "sweep: not swept: {}: {}\n", n.projection, n.why);
  }
}

/// Whether the plan depends on the GPU present: vLLM's tuned files are read for its
/// name (unless --vllm-gpu names one), and a model plan sizes the fused-MoE LoRA's N
/// split by its SM count (unless --sm-count gives one).
bool plans_for_gpu(const plan::SweepConfig& config) {
  return (config.vllm_configs.value && config.vllm_configs.value->gpu.empty()) ||
         (config.vllm_moe_configs.value && config.vllm_moe_configs.value->gpu.empty()) ||
         (config.model.value && config.sm_count.value == 0);
}

/// `config` as vLLM would see it on `gpu` (plans_for_gpu).
plan::SweepConfig config_for_gpu(const plan::SweepConfig& config, const std::optional<protocol::GpuRecord>& gpu) {
  plan::SweepConfig out = config;
  for (std::optional<plan::VllmConfigs>* v : {&out.vllm_configs.value, &out.vllm_moe_configs.value}) {
    if (*v && (*v)->gpu.empty()) {
      (*v)->gpu = gpu ? gpu->name : std::string(plan::k_default_vllm_gpu);
    }
  }
  if (out.model.value && out.sm_count.value == 0 && gpu && gpu->sm_count > 0) {
    out.sm_count = {gpu->sm_count, {plan::Origin::Kind::builtin, ""}};
  }
  return out;
}

/// phases.gpu_kernels and gpu_references from the cases that ran: each case's median
/// launch times its runs, and the references its worker computed (null where it shared one).
void add_gpu_floor(Phases& phases, const report::CaseStore& cases) {
  double kernels_ms = 0.0;
  double references_ms = 0.0;
  for (const CaseRecord c : cases) {  // the store decodes each record: a copy
    if (c.timing) {
      kernels_ms += c.timing->kernel_ms.value_or(0.0) * c.runs;
      references_ms += c.timing->reference_ms.value_or(0.0);
    }
  }
  phases.gpu_kernels = kernels_ms / 1000.0;
  phases.gpu_references = references_ms / 1000.0;
}

/// The distinct problems of the entries that run (group_by_problem sends each one's
/// cases back to back), for meta.problems.
std::size_t count_problems(const std::vector<Entry>& entries) {
  std::unordered_set<std::string> keys;
  for (const Entry& e : entries) {
    if (e.skip_reason.empty()) {
      keys.insert(reference_key(e.job.problem));
    }
  }
  return keys.size();
}

/// Puts the cases of one problem (reference_key) back to back, the problems in the
/// order of their first case and each one's cases in plan order: a worker then
/// generates a problem's inputs and computes its reference once (worker/execute.hpp
/// ProblemCache). The report keeps plan order; --stop-on-first-failure stops at the
/// first failure in this order.
void group_by_problem(std::vector<std::size_t>& todo, std::vector<const Entry*>& to_run) {
  std::unordered_map<std::string, std::size_t> rank;  // key -> the order of its first case
  std::vector<std::size_t> rank_of(to_run.size());
  for (std::size_t i = 0; i < to_run.size(); ++i) {
    rank_of[i] = rank.try_emplace(reference_key(to_run[i]->job.problem), rank.size()).first->second;
  }
  std::vector<std::size_t> order(to_run.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return rank_of[a] < rank_of[b]; });
  std::vector<std::size_t> todo_sorted;
  std::vector<const Entry*> run_sorted;
  for (const std::size_t i : order) {
    todo_sorted.push_back(todo[i]);
    run_sorted.push_back(to_run[i]);
  }
  todo = std::move(todo_sorted);
  to_run = std::move(run_sorted);
}

/// One sweep, phase by phase: the plan, the entries and their images, the static
/// inspection beside the GPU work, the controls, the cases, the remedies, the report.
/// Its parts: the GPUs' workers (workers.hpp), running entries on them
/// (entry_runner.hpp), the controls (control_run.hpp), the remedies (remedy_run.hpp).
class Sweep {
 public:
  Sweep(const plan::SweepConfig& config, const SweepRequest& request)
      : m_config(config), m_request(request), m_workers(request),
        m_inspection(m_images, [this] { record_environment(); }),
        m_runner(m_workers, m_images, m_inspection, request.case_timeout), m_controls(request),
        m_remedies(config, request, m_images, m_runner) {}

  /// The whole sweep; what cli/sweep.cpp needs to write the other outputs.
  SweepOutcome run() {
    const auto t_start = std::chrono::steady_clock::now();
    m_out = report_path_for(m_request);
    m_journal_path = m_request.resume.empty() ? journal_path_for(m_out) : m_request.resume;
    keep_earlier_files(m_request, m_out, m_journal_path, /*act=*/false);  // refuse before any work
    // The worker first: it starts CUDA and cuBLAS while the kernel sets, the plan, the
    // images and the static inspection are prepared here. Without a GPU it says so
    // within milliseconds, and the sweep stops before the long steps; nothing is
    // written before it is ready.
    m_workers.start();
    if (m_request.resume.empty()) {
      m_controls.start_race();  // a resumed sweep may have its controls in the journal already
    }
    const std::size_t controls_index = plan_and_describe();
    const report::JournalHeader header = journal_header(m_plan, m_report.meta, m_request);
    const Resumed resumed = read_resumed(m_request.resume, header);
    make_entries(controls_index, resumed.controls.has_value());
    build_images();
    start_inspection();
    wait_for_worker();
    auto t = std::chrono::steady_clock::now();
    keep_earlier_files(m_request, m_out, m_journal_path, /*act=*/true);  // the GPU is there: now move them aside
    report::Journal journal(m_journal_path, header);
    m_phases.journal = seconds_since(t);
    announce(m_plan, resumed.cases.size(), m_out, m_journal_path);
    Sinks sinks;
    sinks.push(std::make_unique<ProgressSink>(m_entries.size(), m_request.progress, m_request.fail_on));
    sinks.push(std::make_unique<ReportSink>(m_report));
    sinks.push(std::make_unique<TableSink>());
    const Stopped stopped = run_guarded(journal, sinks, resumed);
    t = std::chrono::steady_clock::now();
    if (stopped.by == 0) {
      m_workers.stop();
    }
    m_phases.worker_stop = seconds_since(t);
    t = std::chrono::steady_clock::now();
    record_run_blocks();
    m_phases.records = seconds_since(t);  // the variants and tolerances blocks
    m_phases.total = seconds_since(t_start);
    add_gpu_floor(m_phases, m_report.cases);
    m_report.meta.phases_s = m_phases.seconds();
    return write_report(sinks, stopped);
  }

 private:
  /// The kernel sets, the plan (config_for_gpu), and the report's meta. Returns the
  /// controls' first index.
  std::size_t plan_and_describe() {
    auto t = std::chrono::steady_clock::now();
    m_sets = kernels::KernelSets::load(m_request.kernel_dirs);
    m_tritons = plan::resolve_tritons(m_config, m_sets.versions());
    m_phases.kernel_sets = seconds_since(t);
    m_workers.first().client->poll_ready();
    t = std::chrono::steady_clock::now();
    if (plans_for_gpu(m_config)) {
      wait_for_worker();
    }
    plan::PlannedRun planned =
        plan::plan_for(config_for_gpu(m_config, m_workers.gpu()), m_sets.versions(), m_request.only_cases, m_request.shard);
    m_plan = std::move(planned.plan);
    m_remedies.set_first_index(planned.next_index + 2 * m_tritons.size());
    m_phases.plan = seconds_since(t);
    m_report.meta = meta_record(m_config, m_plan, m_request.argv, kernel_sets_record(m_sets, m_tritons));
    m_report.fail_on = m_request.fail_on;
    m_report.detail = m_request.detail;
    if (!m_request.only_cases.empty()) {
      m_report.meta.plan.only_cases = m_request.only_cases;
    }
    // What every shard of this plan shares, for `loraprobe merge` to check.
    m_report.meta.shard = planned.shard;
    plan::require_cases(m_plan, m_config);
    return planned.next_index;
  }

  /// The plan's cases and the controls are entries alike: their images are built and
  /// inspected together, once.
  void make_entries(std::size_t controls_index, bool controls_journaled) {
    const auto t = std::chrono::steady_clock::now();
    m_entries = plan_entries(m_plan, m_config, m_sets, m_images, m_request.test_hooks);
    m_report.meta.problems = count_problems(m_entries);
    if (m_request.controls && !controls_journaled) {
      m_remedies.set_first_index(
          m_controls.make_entries(m_plan, m_sets, m_tritons, m_config.seed.value, controls_index, m_images));
    }
    m_phases.entries = seconds_since(t);
    m_workers.first().client->poll_ready();
  }

  /// Every image on the CPU (ptxas, the amplifier), then the amplified entries settled.
  void build_images() {
    const auto t = std::chrono::steady_clock::now();
    m_images.build_on_cpu(m_sets, m_request.jobs);
    settle_amplification(m_entries, m_images);
    m_controls.settle(m_images);
    m_phases.images = seconds_since(t);
    m_workers.first().client->poll_ready();
  }

  /// The driver JIT of the driver-compiled images (on the worker, which is waited
  /// for then), then the static inspection of every image in a thread, on half the
  /// CPU: the other half stays with the worker and the GPUs' threads, which the
  /// inspection would otherwise slow down (every nvdisasm run costs about 0.5 s of
  /// CPU whatever its size; it has the time of the controls and the cases).
  void start_inspection() {
    m_workers.jit_driver_images(m_images);
    const std::size_t all = m_request.jobs == 0 ? hardware_threads() : m_request.jobs;
    m_inspection.start(m_request.nvdisasm, std::max<std::size_t>(1, all / 2));
  }

  /// Waits for the first GPU's worker, which started at the beginning (the time
  /// not hidden behind the preparation is the phase "worker_start").
  void wait_for_worker() {
    m_phases.worker_start = m_phases.worker_start.value_or(0.0) + m_workers.wait_for_first();
  }

  /// inspect_and_run, with Ctrl-C or SIGTERM: the waits kill and reap their children
  /// and throw lp::Interrupted; the cases that finished are in the journal and go into
  /// a partial report marked interrupted, and the message says how to resume.
  Stopped run_guarded(report::Journal& journal, CaseSink& sinks, const Resumed& resumed) {
    Stopped stopped;
    try {
      inspect_and_run(journal, sinks, resumed, stopped.finished);
    } catch (const Interrupted& e) {
      stopped.by = e.signal();
      m_report.stop(fmt::format("{} after {} of {} cases", signal_name(stopped.by), stopped.finished, m_entries.size()),
                    /*by_signal=*/true);
      m_workers.forget();
      // What ran is kept: the inspection (stopped by the same signal) is joined, and
      // controls that ran are recorded.
      try {
        record_controls(journal);
        m_inspection.await();
      } catch (const Interrupted&) {
        record_environment();
      }
    }
    return stopped;
  }

  /// The controls and the cases, each finished case handed to
  /// `sinks` and counted in `finished`; lp::Interrupted (Ctrl-C, SIGTERM) propagates out of it.
  void inspect_and_run(report::Journal& journal, CaseSink& sinks, const Resumed& resumed, std::size_t& finished) {
    CasesTimer cases_timer{m_phases, std::nullopt};
    bool controls_valid = true;
    const auto t = std::chrono::steady_clock::now();
    if (!m_request.controls) {
      m_report.controls = {};
      m_report.controls.reason = "--no-controls";
    } else if (resumed.controls) {
      m_report.controls = *resumed.controls;
      controls_valid = resumed.controls->valid.value_or(false);
    } else {
      controls_valid = m_controls.run(m_runner, m_workers);
    }
    m_phases.controls = seconds_since(t);
    cases_timer.start();
    if (!controls_valid) {
      record_controls(journal);
      m_inspection.await();
      m_report.stop("the controls did not behave; no case was run");
      return;
    }
    run_cases(journal, sinks, resumed.cases, finished);
    record_controls(journal);  // when no case was recorded
    m_inspection.await();
    if (m_config.remedies.value && !m_report.stopped) {
      m_report.remedies = m_remedies.run(m_plan, m_report.cases, m_sets, journal, resumed.remedies);
    }
  }

  /// The cases over the GPUs' workers (device_pool.hpp): each finished case is
  /// journaled as it finishes, and handed to the sinks in plan order.
  void run_cases(report::Journal& journal, CaseSink& sinks, const std::map<std::string, CaseRecord>& done,
                 std::size_t& finished) {
    PlanOrder in_order(m_entries, sinks, finished);
    std::vector<std::size_t> todo;
    std::vector<const Entry*> to_run;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
      const auto it = done.find(m_entries[i].plan_case->id);
      if (it != done.end()) {
        in_order.add(i, it->second);
      } else {
        todo.push_back(i);
        to_run.push_back(&m_entries[i]);
      }
    }
    group_by_problem(todo, to_run);
    bool stopped = false;
    m_runner.run_all(to_run, [&](std::size_t task, const CaseRecord& provisional,
                                 const std::optional<protocol::JobResult>& ran) {
      record_controls(journal);  // the controls' record comes before the first case's
      const auto start = std::chrono::steady_clock::now();
      const CaseRecord record = m_runner.final_record(m_entries[todo[task]], provisional, ran);
      journal.append_case(record);
      in_order.add(todo[task], record);
      m_runner.add_recording_time(seconds_since(start));
      if (m_request.stop_on_first_failure && m_request.fail_on.count(record.verdict) > 0) {
        m_report.stop(fmt::format("--stop-on-first-failure after case {}", record.id));
        stopped = true;
        return false;
      }
      return true;
    });
    if (stopped) {
      in_order.add_the_rest();
    }
  }

  /// The controls that ran, recorded (once) into the report and the journal with
  /// their static part.
  void record_controls(report::Journal& journal) {
    if (std::optional<report::Controls> controls = m_controls.take_record(m_runner)) {
      m_report.controls = std::move(*controls);
      journal.append_controls(m_report.controls);
    }
  }

  /// The report's environment block (it names the inspection cache, so it is made
  /// once the inspection ended).
  void record_environment() {
    m_report.environment = environment_record(m_images, m_workers.gpu(), m_request.allow_jit_cache,
                                              kernel_sets_record(m_sets, m_tritons));
  }

  /// The report's blocks that describe the whole run: phases, GPUs, variants, tolerances.
  void record_run_blocks() {
    const JobTime& jobs = m_runner.job_time();
    m_phases.jobs_round_trip = jobs.round_trip_s;
    m_phases.jobs_in_worker = jobs.worker_s;
    m_phases.jobs_recording = jobs.recording_s;
    m_phases.static_inspection = m_inspection.seconds();
    m_phases.static_inspection_wait = m_inspection.wait_seconds();
    m_workers.record_devices(m_report);
    std::map<std::string, std::vector<std::string>> keys_by_case;
    for (const Entry& e : m_entries) {
      keys_by_case[e.plan_case->id] = e.image_keys;
    }
    m_report.variants = variants_record(m_images, m_report.cases, keys_by_case);
    m_report.tolerances = tolerance_record(m_config);
    m_report.meta.finished_at = report::utc_now_iso8601();
  }

  /// The report (partial when a signal stopped the run; none after a second signal),
  /// the verdict table, the time line and the summary.
  SweepOutcome write_report(CaseSink& sinks, const Stopped& stopped) {
    // A second signal: the journal keeps every finished case, the partial report is not written.
    if (stopped.by != 0 && interrupt_urgent()) {
      fmt::print(stderr, "sweep: second signal: no partial report written; the journal {} keeps the {} finished "
                         "case(s): 'loraprobe sweep --resume {}' runs the rest\n",
                 m_journal_path, stopped.finished, m_journal_path);
      m_workers.reap();
      throw Interrupted(stopped.by);
    }
    m_report.write(m_out);
    sinks.finish();  // ends the progress line, prints the verdict table
    print_times(m_phases, m_entries.size());
    print_summary(m_report, m_out);
    m_workers.reap();  // asked to quit before the report was written: their exit overlapped it
    if (stopped.by != 0) {
      fmt::print(stderr,
                 "sweep: interrupted by {} after {} of {} cases; the journal {} keeps them and the report {} shows "
                 "them (marked interrupted): 'loraprobe sweep --resume {}' runs the rest\n",
                 signal_name(stopped.by), stopped.finished, m_entries.size(), m_journal_path, m_out, m_journal_path);
    }
    return {m_report.summary().exit_code, m_out, m_journal_path, stopped.by};
  }

  const plan::SweepConfig& m_config;
  const SweepRequest& m_request;
  kernels::KernelSets m_sets;
  std::vector<std::string> m_tritons;  ///< the Triton sets the plan uses, in order
  plan::Plan m_plan;                   ///< expanded by run() once the GPU answered
  ImageSet m_images;
  std::vector<Entry> m_entries;
  Workers m_workers;
  BackgroundInspection m_inspection;  ///< the static inspection, beside the GPU work
  EntryRunner m_runner;
  ControlRun m_controls;
  RemedyRun m_remedies;
  report::Report m_report;
  std::string m_out;           ///< the report's path
  std::string m_journal_path;  ///< the journal's (the resumed one, or beside the report)
  Phases m_phases;             ///< meta.phases_s
};

}  // namespace

SweepOutcome run_sweep(const plan::SweepConfig& config, const SweepRequest& request) {
  Sweep sweep(config, request);
  return sweep.run();
}

}  // namespace lp::sweep
