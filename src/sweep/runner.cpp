#include "sweep/runner.hpp"

#include <chrono>
#include <future>
#include <mutex>
#include <thread>
#include <filesystem>

#include <fmt/format.h>

#include "compile/ptxas.hpp"
#include "compile/toolchain.hpp"
#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"
#include "report/journal.hpp"
#include "report/report.hpp"
#include "report/verdict.hpp"
#include "sass/analyze.hpp"
#include "sweep/controls.hpp"
#include "sweep/device_pool.hpp"
#include "sweep/entries.hpp"
#include "sweep/images.hpp"
#include "sweep/output_files.hpp"
#include "sweep/phases.hpp"
#include "sweep/race_control.hpp"
#include "sweep/remedies.hpp"
#include "sweep/report_builder.hpp"
#include "sweep/send_jobs.hpp"
#include "sweep/sinks.hpp"
#include "sweep/worker_client.hpp"
#include "tools/tools.hpp"
#include "util/files.hpp"
#include "util/error.hpp"
#include "util/elapsed.hpp"
#include "util/interrupt.hpp"
#include "util/release.hpp"

namespace lp::sweep {

using report::CaseRecord;
using report::Verdict;

namespace {

class Sweep {
 public:
  Sweep(const plan::SweepConfig& config, const SweepRequest& request)
      : m_config(config), m_request(request) {}

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
    start_slots();
    if (m_request.resume.empty()) {
      start_race_control();  // a resumed sweep may have its controls in the journal already
    }
    const std::size_t controls_index = plan_and_describe();
    const report::JournalHeader header = journal_header(m_plan, m_report.meta, m_request);
    const Resumed resumed = read_resumed(header);
    make_entries(controls_index, resumed.controls.has_value());
    build_images();
    start_inspection();
    wait_for_worker();
    auto t = std::chrono::steady_clock::now();
    keep_earlier_files(m_request, m_out, m_journal_path, /*act=*/true);  // the GPU is there: now move them aside
    report::Journal journal(m_journal_path, header);
    m_phases.journal = seconds_since(t);
    fmt::print(stderr, "sweep: {} cases ({} already journaled), report {}, journal {}\n", m_plan.cases.size(),
               resumed.cases.size(), m_out, m_journal_path);
    for (const plan::NotSwept& n : m_plan.not_swept) {
      fmt::print(stderr, "sweep: not swept: {}: {}\n", n.projection, n.why);
    }
    Sinks sinks;
    sinks.push(std::make_unique<ProgressSink>(m_entries.size(), m_request.progress, m_request.fail_on));
    sinks.push(std::make_unique<ReportSink>(m_report));
    sinks.push(std::make_unique<TableSink>());
    const Stopped stopped = run_guarded(journal, sinks, resumed);
    t = std::chrono::steady_clock::now();
    if (stopped.by == 0) {
      stop_workers();
    }
    m_phases.worker_stop = seconds_since(t);
    t = std::chrono::steady_clock::now();
    record_run_blocks();
    m_phases.records = seconds_since(t);  // the variants and tolerances blocks
    m_phases.total = seconds_since(t_start);
    m_report.meta.phases_s = m_phases.seconds();
    return write_report(sinks, stopped);
  }

 private:
  /// The cases already journaled by the sweep --resume continues.
  struct Resumed {
    std::map<std::string, CaseRecord> cases;
    std::optional<report::Controls> controls;
    std::map<std::string, CaseRecord> remedies;  ///< sweep --remedies: neighbours already measured
  };
  /// How the controls and cases ended: the signal that stopped them (0: none) and how
  /// many cases were handed to the sinks by then.
  struct Stopped {
    int by = 0;
    std::size_t finished = 0;
  };

  /// The kernel sets, the plan (for the GPU present when vLLM's tuned files are read
  /// for it), and the report's meta. Returns the controls' first index.
  std::size_t plan_and_describe() {
    auto t = std::chrono::steady_clock::now();
    m_sets = kernels::KernelSets::load(m_request.kernel_dirs);
    m_tritons = plan::resolve_tritons(m_config, m_sets.versions());
    m_phases.kernel_sets = seconds_since(t);
    main_slot().client->poll_ready();
    t = std::chrono::steady_clock::now();
    plan::PlannedRun planned;
    if (m_config.vllm_configs.value && m_config.vllm_configs.value->gpu.empty()) {
      wait_for_worker();  // the tuned configs are those of the GPU present, as vLLM reads them
      plan::SweepConfig with_gpu = m_config;
      with_gpu.vllm_configs.value->gpu = m_gpu ? m_gpu->name : std::string(plan::k_default_vllm_gpu);
      planned = plan::plan_for(with_gpu, m_sets.versions(), m_request.only_cases, m_request.shard);
    } else {
      planned = plan::plan_for(m_config, m_sets.versions(), m_request.only_cases, m_request.shard);
    }
    m_plan = std::move(planned.plan);
    m_remedy_base = planned.next_index + 2 * m_tritons.size();
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

  /// What the journal of --resume holds, checked to be this sweep's.
  Resumed read_resumed(const report::JournalHeader& header) const {
    Resumed r;
    if (m_request.resume.empty()) {
      return r;
    }
    report::JournalContents previous = report::read_journal(m_request.resume);
    for (const auto& [what, mine, theirs] : {std::tuple("config", &header.config_sha256, &previous.header.config_sha256),
                                             std::tuple("plan", &header.plan_sha256, &previous.header.plan_sha256)}) {
      if (*mine != *theirs) {
        throw UsageError(fmt::format("{}: written for another {} than this sweep's; resume with the same config "
                                     "and flags",
                                     m_request.resume, what));
      }
    }
    r.cases = std::move(previous.cases);
    r.controls = previous.controls;
    r.remedies = std::move(previous.remedies);
    return r;
  }

  /// The plan's cases and the controls are entries alike: their images are built and
  /// inspected together, once.
  void make_entries(std::size_t controls_index, bool controls_journaled) {
    const auto t = std::chrono::steady_clock::now();
    m_entries = plan_entries(m_plan, m_config, m_sets, m_images, m_request.test_hooks);
    if (m_request.controls && !controls_journaled) {
      std::size_t next_index = controls_index;
      for (const std::string& triton : m_tritons) {
        m_controls.push_back(control_entries(m_sets.at(triton), m_config.seed.value, next_index, m_control_cases,
                                             m_images));
        next_index += 2;
      }
      for (AmplifiedControlEntry& a :
           amplified_control_entries(m_plan, m_sets, m_tritons, m_config.seed.value, next_index, m_control_cases,
                                     m_images, m_amplified_notes)) {
        PendingControl& pending = m_amplified_controls.emplace_back();
        pending.pair.triton = a.triton;
        pending.role = a.role;
        pending.entry = std::move(a.entry);
      }
      m_remedy_base = next_index;
    }
    m_phases.entries = seconds_since(t);
    main_slot().client->poll_ready();
  }

  /// Every image on the CPU (ptxas, the amplifier), then the amplified entries settled.
  void build_images() {
    const auto t = std::chrono::steady_clock::now();
    m_images.build_on_cpu(m_sets, m_request.jobs);
    settle_amplification(m_entries, m_images);
    for (PendingControl& a : m_amplified_controls) {
      std::vector<Entry> one = {a.entry};
      settle_amplification(one, m_images);
      a.entry = std::move(one.front());
    }
    m_phases.images = seconds_since(t);
    main_slot().client->poll_ready();
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
      for (DeviceSlot& slot : m_slots) {
        slot.client.reset();  // killed and reaped by the wait that noticed the signal
      }
      // What ran is kept: the inspection (stopped by the same signal) is joined, and
      // controls that ran are recorded.
      try {
        record_controls(journal);
        await_inspection();
      } catch (const Interrupted&) {
        record_environment();
      }
    }
    return stopped;
  }

  /// The report's blocks that describe the whole run: phases, GPUs, variants, tolerances.
  void record_run_blocks() {
    m_phases.jobs_round_trip = m_job_time.round_trip_s;
    m_phases.jobs_in_worker = m_job_time.worker_s;
    m_phases.jobs_recording = m_job_time.recording_s;
    m_phases.static_inspection = m_inspection_s;
    m_phases.static_inspection_wait = m_inspection_wait_s;
    if (m_slots.size() > 1) {
      std::vector<report::DeviceRecord> devices;
      std::vector<JsonText> gpus;
      for (const DeviceSlot& slot : m_slots) {
        gpus.push_back(slot.gpu ? protocol::to_json_text(*slot.gpu) : JsonText());
        devices.push_back({slot.device, slot.cases,
                           slot.retired.empty() ? std::nullopt : std::optional<std::string>(slot.retired)});
        if (!slot.retired.empty()) {
          fmt::print(stderr, "sweep: GPU {} left the rotation: {}\n", slot.device, slot.retired);
        }
      }
      m_report.meta.devices = std::move(devices);
      m_report.environment.gpus = std::move(gpus);  // every GPU of --devices; "gpu" is the first
    }
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
    auto phase = [](const std::optional<double>& seconds) { return seconds.value_or(0.0); };
    // A second signal: the journal keeps every finished case, the partial report is not written.
    if (stopped.by != 0 && interrupt_urgent()) {
      fmt::print(stderr, "sweep: second signal: no partial report written; the journal {} keeps the {} finished "
                         "case(s): 'loraprobe sweep --resume {}' runs the rest\n",
                 m_journal_path, stopped.finished, m_journal_path);
      reap_workers();
      throw Interrupted(stopped.by);
    }
    m_report.write(m_out);
    sinks.finish();  // ends the progress line, prints the verdict table
    fmt::print(stderr, "sweep: time: images {:.1f} s, worker start {:.1f} s, static inspection {:.1f} s (beside the GPU "
                       "work; waited {:.1f} s), controls {:.1f} s, cases {:.1f} s ({:.1f} ms per case), total {:.1f} s\n",
               phase(m_phases.images), phase(m_phases.worker_start), phase(m_phases.static_inspection),
               phase(m_phases.static_inspection_wait), phase(m_phases.controls), phase(m_phases.cases),
               m_entries.empty() ? 0.0 : 1000.0 * phase(m_phases.cases) / static_cast<double>(m_entries.size()),
               phase(m_phases.total));
    print_summary(m_report, m_out);
    reap_workers();  // asked to quit before the report was written: their exit overlapped it
    if (stopped.by != 0) {
      fmt::print(stderr,
                 "sweep: interrupted by {} after {} of {} cases; the journal {} keeps them and the report {} shows "
                 "them (marked interrupted): 'loraprobe sweep --resume {}' runs the rest\n",
                 signal_name(stopped.by), stopped.finished, m_entries.size(), m_journal_path, m_out, m_journal_path);
    }
    return {m_report.summary().exit_code, m_out, m_journal_path, stopped.by};
  }

  /// The controls and the cases, each finished case handed to
  /// `sinks` and counted in `finished`; lp::Interrupted (Ctrl-C, SIGTERM) propagates out of it.
  void inspect_and_run(report::Journal& journal, CaseSink& sinks, const Resumed& resumed, std::size_t& finished) {
    const std::map<std::string, CaseRecord>& done = resumed.cases;
    const std::optional<report::Controls>& done_controls = resumed.controls;
    // The cases' time counts whether they all ran or a signal stopped them.
    struct CasesTimer {
      Phases& phases;
      std::optional<std::chrono::steady_clock::time_point> start;
      ~CasesTimer() {
        if (start) {
          phases.cases = seconds_since(*start);
        }
      }
    } cases_timer{m_phases, std::nullopt};
    bool controls_valid = true;
    const auto t = std::chrono::steady_clock::now();
    if (!m_request.controls) {
      m_report.controls = {};
      m_report.controls.reason = "--no-controls";
    } else if (done_controls) {
      m_report.controls = *done_controls;
      controls_valid = done_controls->valid.value_or(false);
    } else {
      controls_valid = run_controls();
    }
    m_phases.controls = seconds_since(t);
    cases_timer.start = std::chrono::steady_clock::now();
    if (!controls_valid) {
      record_controls(journal);
      await_inspection();
      m_report.stop("the controls did not behave; no case was run");
      return;
    }
    run_cases(journal, sinks, done, finished);
    record_controls(journal);  // when no case was recorded
    await_inspection();
    if (m_config.remedies.value && !m_report.stopped) {
      run_remedies(journal, resumed.remedies);
    }
  }

  /// The driver JIT of the driver-compiled images (on the worker, which is waited
  /// for then), then the static inspection of every image, batched (sass/batch.hpp),
  /// in a thread: it needs only the CPU and the cubins, so the controls and the cases
  /// run beside it, and their records wait for it (await_inspection).
  void start_inspection() {
    jit_driver_images();
    // Half the CPU: the other half stays with the worker and the GPUs' threads, which
    // the inspection would otherwise slow down (every nvdisasm run costs about 0.5 s
    // of CPU whatever its size; it has the time of the controls and the cases).
    const std::size_t all = m_request.jobs == 0 ? std::max(1U, std::thread::hardware_concurrency()) : m_request.jobs;
    const std::size_t threads = std::max<std::size_t>(1, all / 2);
    m_inspection = std::async(std::launch::async, [this, threads] {
      const auto t = std::chrono::steady_clock::now();
      std::string problem = m_images.inspect(m_request.nvdisasm, threads);
      m_inspection_s = seconds_since(t);
      return problem;
    });
  }

  /// Joins the static inspection (once): from here on the images' findings may be
  /// read, and the report's environment (which names the inspection cache) is made.
  /// Rethrows what the inspection threw (lp::Interrupted).
  void await_inspection() {
    if (!m_inspection.valid()) {
      return;
    }
    const auto t = std::chrono::steady_clock::now();
    std::future<std::string> inspection = std::move(m_inspection);
    const std::string problem = inspection.get();
    m_inspection_wait_s = seconds_since(t);
    record_environment();
    if (!problem.empty()) {
      fmt::print(stderr, "sweep: warning: static inspection unavailable ({}); no case can be LATENT\n", problem);
    }
  }

  /// The report's environment block (it names the inspection cache, so it is made
  /// once the inspection ended).
  void record_environment() {
    m_report.environment = environment_record(m_images, m_gpu, m_request.allow_jit_cache,
                                              kernel_sets_record(m_sets, m_tritons));
  }

  /// A case's record as the sinks get it: a job's provisional record (made while the
  /// inspection may still run) is made again from the job's result with the static
  /// part; a case that never ran keeps its record.
  CaseRecord final_record(const Entry& e, const CaseRecord& provisional, const std::optional<protocol::JobResult>& ran) {
    if (!ran) {
      return provisional;
    }
    await_inspection();
    CaseRecord record = record_of(e, *ran, &m_images);
    record.device = provisional.device;
    return record;
  }

  /// Waits for the first GPU's worker, which started at the beginning (the time
  /// not hidden behind the preparation is the phase "worker_start").
  void wait_for_worker() {
    const auto t = std::chrono::steady_clock::now();
    DeviceSlot& slot = main_slot();
    slot.client->wait_ready();
    slot.gpu = slot.client->gpu();
    if (!m_gpu) {
      m_gpu = slot.gpu;
    }
    m_phases.worker_start = m_phases.worker_start.value_or(0.0) + seconds_since(t);
  }

  /// sweep --remedies: the known remedies of each hazardous configuration as
  /// neighbour cases, built, inspected and run like the plan's (sweep/remedies.hpp).
  void run_remedies(report::Journal& journal, const std::map<std::string, CaseRecord>& measured) {
    std::map<std::string, const plan::Case*> by_id;
    for (const plan::Case& c : m_plan.cases) {
      by_id[c.id] = &c;
    }
    // A ptxas the run already compiles with that keeps Triton 3.8+'s copies (report::k_fixing_ptxas, 13.3),
    // for the Triton-and-ptxas remedy.
    std::string ptxas_13_3;
    for (const auto& [key, image] : m_images.all()) {
      if (image.compiler.kind != compile::CompilerKind::ptxas || !image.compile) {
        continue;
      }
      const std::optional<Release> v = parse_release(image.compile->version, ReleaseParts::two_or_three);
      if (v && *v >= report::k_fixing_ptxas) {
        ptxas_13_3 = image.compiler.to_string();
      }
    }
    RemedyPlan rp = plan_remedies(m_report.cases, by_id, m_sets.versions(), ptxas_13_3);
    if (rp.hazards.empty()) {
      m_report.remedies = remedies_record(rp, {});
      return;
    }
    std::size_t next_index = m_remedy_base;
    std::map<std::string, std::size_t> index_of_id;  // one run per distinct neighbour
    for (const RemedyCase& rc : rp.remedies) {
      if (rc.existing || index_of_id.count(rc.neighbour.id) > 0 || measured.count(rc.neighbour.id) > 0) {
        continue;  // the plan's own case, a neighbour met before, or one a resumed journal measured
      }
      plan::Case c = rc.neighbour;
      c.index = next_index++;
      index_of_id[c.id] = m_remedy_cases.cases.size();
      m_remedy_cases.cases.push_back(std::move(c));
    }
    std::vector<Entry> entries = plan_entries(m_remedy_cases, m_config, m_sets, m_images, {});
    m_images.build_on_cpu(m_sets, m_request.jobs);
    settle_amplification(entries, m_images);
    const std::string problem = m_images.inspect(m_request.nvdisasm, m_request.jobs);
    if (!problem.empty()) {
      fmt::print(stderr, "sweep: warning: the remedies' SASS could not be inspected: {}\n", problem);
    }
    std::vector<CaseRecord> ran(entries.size());
    std::vector<std::optional<protocol::JobResult>> results_of(entries.size());
    PoolCallbacks callbacks;
    callbacks.run = [&](DeviceSlot& slot, std::size_t task, const std::vector<std::size_t>& ahead) {
      std::vector<const Entry*> behind;
      for (const std::size_t a : ahead) {
        behind.push_back(&entries[a]);
      }
      return run_entry(slot, entries[task], behind, results_of[task]);
    };
    callbacks.lost = [&](std::size_t task, const std::string& why) {
      return not_run(entries[task], Verdict::incomplete, why);
    };
    callbacks.done = [&](std::size_t task, const CaseRecord& record) {
      ran[task] = final_record(entries[task], record, results_of[task]);
      journal.append_remedy(ran[task]);
      return true;
    };
    run_on_devices(m_slots, entries.size(), callbacks);
    m_report.remedies = remedies_record(rp, remedy_results(rp, m_report.cases, measured, ran, index_of_id));
    fmt::print(stderr, "sweep: remedies: {} neighbour case(s) of {} hazardous case(s), {} run now{}\n",
               rp.remedies.size(), rp.hazards.size(), entries.size(),
               measured.empty() ? std::string() : fmt::format(" ({} measured before, from the journal)", measured.size()));
  }

  /// The cases over the GPUs' workers (device_pool.hpp): each finished case is
  /// journaled as it finishes, and handed to the sinks in plan order.
  void run_cases(report::Journal& journal, CaseSink& sinks, const std::map<std::string, CaseRecord>& done,
                 std::size_t& finished) {
    std::vector<std::optional<CaseRecord>> results(m_entries.size());
    std::vector<std::size_t> todo;
    for (std::size_t i = 0; i < m_entries.size(); ++i) {
      const auto it = done.find(m_entries[i].plan_case->id);
      if (it != done.end()) {
        results[i] = it->second;
      } else {
        todo.push_back(i);
      }
    }
    std::size_t next = 0;  // the first entry not yet handed to the sinks
    auto hand_on = [&] {
      while (next < results.size() && results[next]) {
        sinks.add(*m_entries[next].plan_case, *results[next]);  // journaled already, as it finished
        ++finished;
        ++next;
      }
    };
    hand_on();
    bool stopped = false;
    // Each job's result, written by its GPU's thread before the pool hands the task on.
    std::vector<std::optional<protocol::JobResult>> ran(todo.size());
    PoolCallbacks callbacks;
    callbacks.run = [&](DeviceSlot& slot, std::size_t task, const std::vector<std::size_t>& ahead) {
      std::vector<const Entry*> behind;
      for (const std::size_t a : ahead) {
        behind.push_back(&m_entries[todo[a]]);
      }
      return run_entry(slot, m_entries[todo[task]], behind, ran[task]);
    };
    callbacks.lost = [&](std::size_t task, const std::string& why) {
      return not_run(m_entries[todo[task]], Verdict::incomplete, why);
    };
    callbacks.done = [&](std::size_t task, const CaseRecord& provisional) {
      record_controls(journal);  // the controls' record comes before the first case's
      const auto start = std::chrono::steady_clock::now();
      const CaseRecord record = final_record(m_entries[todo[task]], provisional, ran[task]);
      journal.append_case(record);
      results[todo[task]] = record;
      hand_on();
      m_job_time.recording_s += seconds_since(start);
      if (m_request.stop_on_first_failure && m_request.fail_on.count(record.verdict) > 0) {
        m_report.stop(fmt::format("--stop-on-first-failure after case {}", record.id));
        stopped = true;
        return false;
      }
      return true;
    };
    run_on_devices(m_slots, todo.size(), callbacks);
    if (stopped) {
      // What the other GPUs finished meanwhile is journaled; the report gets it too, in plan order.
      for (std::size_t i = next; i < results.size(); ++i) {
        if (results[i]) {
          sinks.add(*m_entries[i].plan_case, *results[i]);
          ++finished;
        }
      }
    }
  }

  /// The first GPU's worker, then the others of --devices (started by their threads).
  void start_slots() {
    m_slots.clear();
    m_slots.emplace_back();
    m_slots.front().device = m_request.device;
    if (m_request.devices.empty()) {
      start_worker(m_slots.front(), WorkerStart::later);  // wait_for_worker() waits for it
      return;
    }
    // "all" and the list are read against the GPUs the first worker sees.
    m_slots.front().device = m_request.devices == "all" ? 0 : parse_devices(m_request.devices, 1 << 20).front();
    start_worker(m_slots.front());
    const int count = m_gpu ? m_gpu->device_count : 1;
    const std::vector<int> devices = parse_devices(m_request.devices, count);
    for (std::size_t i = 1; i < devices.size(); ++i) {
      m_slots.emplace_back();
      m_slots.back().device = devices[i];
    }
  }

  void start_worker(DeviceSlot& slot, WorkerStart start = WorkerStart::wait) {
    const std::string exe = m_request.worker_exe.empty() ? tools::executable_path().value_or("/proc/self/exe")
                                                         : m_request.worker_exe;
    std::vector<std::string> argv = {exe, "__worker", "--device", std::to_string(slot.device)};
    for (const std::string& dir : m_request.kernel_dirs) {
      argv.push_back("--kernel-dir");
      argv.push_back(dir);
    }
    if (m_request.allow_jit_cache) {
      argv.push_back("--allow-jit-cache");
    }
    slot.client.emplace(argv, m_request.worker_start_timeout, start);
    if (start == WorkerStart::later) {
      return;
    }
    slot.gpu = slot.client->gpu();
    if (!m_gpu) {
      m_gpu = slot.gpu;
    }
  }

  /// Asks every worker to quit; reap_workers() waits for them, once the report is out.
  void stop_workers() {
    for (DeviceSlot& slot : m_slots) {
      if (slot.client) {
        slot.client->ask_to_quit();
      }
    }
  }

  void reap_workers() {
    for (DeviceSlot& slot : m_slots) {
      if (slot.client) {
        slot.client->quit();
        slot.client.reset();
      }
    }
  }

  DeviceSlot& main_slot() { return m_slots.front(); }

  /// The driver compile path: the worker JITs each variant's PTX once (in parallel)
  /// and hands the cubin back for inspection and for later workers.
  void jit_driver_images() {
    const std::vector<protocol::LoadItem> items = m_images.driver_items();
    if (items.empty()) {
      return;
    }
    DeviceSlot& slot = main_slot();
    if (!slot.client || !slot.client->alive()) {
      start_worker(slot);
    }
    m_images.take_jit(slot.client->load(items, m_request.case_timeout),
                      slot.client->gpu().driver_version);
  }

  /// Runs one job on `slot`'s worker (sweep/send_jobs.hpp), starting a fresh worker
  /// when the slot has none or its old one is unusable.
  protocol::JobResult run_job(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& ahead) {
    return send_and_await(slot, e, ahead, m_images, m_request.case_timeout,
                          [this](DeviceSlot& s) { start_worker(s); });
  }

  /// Runs an entry on `slot`'s worker: its provisional record (record_of without the
  /// static part: the inspection may still run), and its job's result in `ran` when
  /// the worker ran it, for final_record.
  CaseRecord run_entry(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& ahead,
                       std::optional<protocol::JobResult>& ran) {
    if (!e.skip_reason.empty()) {
      return not_run(e, Verdict::skipped, e.skip_reason);
    }
    for (const std::string& key : e.image_keys) {
      const Image& image = m_images.at(key);
      if (!image.incompatible.empty()) {
        return not_run(e, Verdict::incompatible,
                       fmt::format("{}: {} (a pairing that cannot compile, not a failure)", key, image.incompatible));
      }
      if (!image.error.empty()) {
        return not_run(e, Verdict::compile_error, fmt::format("{}: {}", key, image.error));
      }
    }
    const auto start = std::chrono::steady_clock::now();
    const protocol::JobResult result = run_job(slot, e, ahead);
    {
      const std::lock_guard lock(m_job_time_mutex);
      m_job_time.round_trip_s += seconds_since(start);
      m_job_time.worker_s += result.worker_ms / 1000.0;
    }
    CaseRecord record = record_of(e, result, nullptr);
    record.device = slot.device;
    ran = result;
    return record;
  }

  /// The controls (sweep/controls.hpp) run on the first GPU: every Triton set's pair,
  /// then the race control. True when every pair behaves; recorded by
  /// record_controls once the static inspection is in.
  bool run_controls() {
    bool valid = true;
    for (const ControlEntries& pair : m_controls) {
      PendingControl& run = m_pending_controls.emplace_back();
      run.entries = &pair;
      run.pair.triton = pair.triton;
      run.pair.positive = run_entry(main_slot(), pair.positive, {}, run.positive);
      run.pair.negative = run_entry(main_slot(), pair.negative, {}, run.negative);
      valid = valid && control_problem(run.pair).empty();
    }
    for (PendingControl& a : m_amplified_controls) {
      a.pair.positive = run_entry(main_slot(), a.entry, {}, a.positive);
      valid = valid && a.pair.positive.verdict == Verdict::pass;
    }
    // The race control says whether this GPU shows the hazard at run time; it never
    // makes a run invalid (a GPU that does not show it is a finding, not a broken detector).
    run_race_control();
    m_controls_pending = true;
    return valid;
  }

  /// The controls that ran, recorded (once) into the report and the journal with
  /// their static part.
  void record_controls(report::Journal& journal) {
    if (!m_controls_pending) {
      return;
    }
    m_controls_pending = false;
    std::vector<ControlPair> pairs;
    for (PendingControl& run : m_pending_controls) {
      ControlPair& pair = pairs.emplace_back(run.pair);
      pair.positive = final_record(run.entries->positive, run.pair.positive, run.positive);
      pair.negative = final_record(run.entries->negative, run.pair.negative, run.negative);
    }
    std::vector<AmplifiedControl> amplified;
    for (PendingControl& a : m_amplified_controls) {
      amplified.push_back({a.pair.triton, a.role, a.entry.amplify, final_record(a.entry, a.pair.positive, a.positive)});
    }
    m_report.controls = controls_record(pairs, amplified, m_amplified_notes, race_record());
    journal.append_controls(m_report.controls);
  }

  /// The race control (sweep/race_control.hpp), in a thread from the start: compiled
  /// here with the toolkit's ptxas (m_race_cubin, all the worker needs), then its SASS
  /// checked for the hazard (m_race_inspected, needed only for the record).
  void start_race_control() {
    if (!m_request.controls || m_race_inspected.valid()) {
      return;
    }
    auto compiled = std::make_shared<std::promise<RaceCubin>>();
    m_race_cubin = compiled->get_future();
    m_race_inspected = std::async(std::launch::async, [compiled, nvdisasm = m_request.nvdisasm] {
      RaceCubin cubin = compile_race_control();
      compiled->set_value(cubin);
      return inspect_race_control(std::move(cubin), nvdisasm);
    });
  }

  /// Runs the race control on the first GPU's worker once its cubin is compiled.
  void run_race_control() {
    start_race_control();
    const RaceCubin compiled = m_race_cubin.get();
    if (!compiled.error.empty()) {
      m_race_error = compiled.error;
      return;
    }
    DeviceSlot& slot = main_slot();
    if (!slot.client || !slot.client->alive()) {
      start_worker(slot);
    }
    m_race_result = slot.client->race({compiled.cubin, protocol::k_race_ctas, protocol::k_race_launches},
                                      m_request.case_timeout, m_race_error);
  }

  /// The controls.race block: the run with the inspection of its SASS (waited for).
  report::RaceRecord race_record() {
    const RaceCubin inspected = m_race_inspected.get();
    if (!inspected.inspect_error.empty()) {
      fmt::print(stderr, "sweep: warning: the race control's SASS could not be inspected: {}\n",
                 inspected.inspect_error);
    }
    return race_outcome(inspected.compiler, inspected.findings, m_race_result, m_race_error);
  }

  const plan::SweepConfig& m_config;
  const SweepRequest& m_request;
  kernels::KernelSets m_sets;
  std::vector<std::string> m_tritons;  ///< the Triton sets the plan uses, in order
  plan::Plan m_plan;  ///< expanded by run() once the GPU answered
  plan::Plan m_remedy_cases;      ///< --remedies: the neighbour cases run after the plan's
  std::size_t m_remedy_base = 0;  ///< their first index: past the plan's and the controls' 
  ImageSet m_images;
  std::vector<Entry> m_entries;
  std::vector<std::unique_ptr<plan::Case>> m_control_cases;  ///< the controls' synthesised cases
  std::vector<ControlEntries> m_controls;  ///< one pair per Triton set, when the controls run
  std::vector<DeviceSlot> m_slots;  ///< one worker per GPU (--devices); the first runs the controls
  std::future<RaceCubin> m_race_cubin;      ///< the race control's cubin, compiled beside the rest
  std::future<RaceCubin> m_race_inspected;  ///< and inspected
  std::optional<protocol::RaceResult> m_race_result;  ///< the race control's run
  std::string m_race_error;                           ///< why it did not run
  std::future<std::string> m_inspection;  ///< the static inspection, beside the GPU work; its problem
  double m_inspection_s = 0.0;            ///< how long it took (in its thread)
  double m_inspection_wait_s = 0.0;       ///< how long the sweep waited for it
  /// A control pair that ran, to be recorded with its static part; an amplified
  /// control is one entry of its own, its record in pair.positive.
  struct PendingControl {
    const ControlEntries* entries = nullptr;
    ControlPair pair;  ///< the provisional records
    std::optional<protocol::JobResult> positive;
    std::optional<protocol::JobResult> negative;
    Entry entry;       ///< an amplified control's
    std::string role;  ///< an amplified control's: "block_n_32" or "fixed_default"
  };
  std::vector<PendingControl> m_pending_controls;
  std::vector<PendingControl> m_amplified_controls;  ///< amplify D > 0: per D, sweep/controls.hpp
  std::vector<std::string> m_amplified_notes;        ///< the amplified controls that could not be made
  bool m_controls_pending = false; ///< ran and not yet recorded
  struct JobTime {
    double round_trip_s = 0.0;  ///< sent to answered, summed over jobs
    double worker_s = 0.0;      ///< the worker's own time on them
    double recording_s = 0.0;   ///< journaling them and handing them to the sinks
  } m_job_time;
  std::mutex m_job_time_mutex;
  std::optional<protocol::GpuRecord> m_gpu;  ///< the first worker's
  report::Report m_report;
  std::string m_out;           ///< the report's path
  std::string m_journal_path;  ///< the journal's (the resumed one, or beside the report)
  Phases m_phases;  ///< meta.phases_s
};

}  // namespace

SweepOutcome run_sweep(const plan::SweepConfig& config, const SweepRequest& request) {
  Sweep sweep(config, request);
  return sweep.run();
}

}  // namespace lp::sweep
