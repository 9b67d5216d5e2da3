#pragma once
// The sweep's parent process: plans, builds and inspects the images on the CPU,
// supervises a GPU worker (started as `loraprobe __worker`), runs the controls and
// the cases, journals every finished case, and writes the report. It never
// creates a CUDA context itself, so a kernel that kills a context kills a worker.

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "plan/config.hpp"
#include "plan/shard.hpp"
#include "report/report.hpp"
#include "report/verdict.hpp"

namespace lp::sweep {

/// Everything `loraprobe sweep` needs beyond the config.
struct SweepRequest {
  std::vector<std::string> argv;              ///< as typed, for the report
  std::string out;                            ///< report path; empty: timestamped file in the working directory
  std::string resume;                         ///< journal to resume; empty: a fresh sweep
  std::vector<std::string> kernel_dirs;       ///< --kernel-dir sets besides (or replacing) the embedded ones
  std::set<report::Verdict> fail_on = report::default_fail_on();
  bool controls = true;
  bool force = false;                         ///< replace an earlier report and journal (kept as .bak)
  bool stop_on_first_failure = false;
  bool allow_jit_cache = false;
  bool progress = true;
  std::chrono::seconds case_timeout{600};     ///< per case, all repeats
  std::chrono::seconds worker_start_timeout{180};
  std::optional<std::string> nvdisasm;        ///< path; otherwise searched
  std::size_t jobs = 0;                       ///< CPU threads for ptxas/nvdisasm; 0: all cores
  int device = 0;
  std::string devices;                        ///< --devices "0,1,3" or "all": one worker per GPU; empty: `device` alone
  std::map<std::size_t, std::string> test_hooks;  ///< plan index -> hook role (tests only)
  std::string worker_exe;                     ///< this binary; empty: /proc/self/exe
  report::Detail detail = report::Detail::compact;  ///< the case records' form (report/compact.hpp)
  std::vector<std::string> only_cases;        ///< --case: run only these ids of the plan
  std::optional<plan::Shard> shard;           ///< --shard I/N: run only that part of the plan
};

/// What a sweep wrote, for the caller to write the other outputs from (cli/sweep.cpp:
/// JUnit, Markdown, HTML, repro bundles).
struct SweepOutcome {
  int exit_code = 0;  ///< DESIGN.md: 0 clean, 1 failures, 3 environment or invalid controls
  std::string report_path;
  std::string journal_path;
  int interrupted_by = 0;  ///< the signal that stopped the run (its report is partial), or 0
};

/// Where the sweep writes its report: --out, else the resumed journal's report, else
/// loraprobe-report-<UTC time>.json in the working directory.
std::string report_path_for(const SweepRequest& request);

/// Runs the sweep, journals every case and writes the report (partial when a signal
/// stopped it: then interrupted_by says which, and the caller throws lp::Interrupted
/// once it wrote what it must). Throws lp::Fatal for bad input or a machine that
/// cannot run it, and lp::Interrupted after a second signal (no report then).
SweepOutcome run_sweep(const plan::SweepConfig& config, const SweepRequest& request);

}  // namespace lp::sweep
