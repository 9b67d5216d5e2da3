#pragma once
// The files a sweep writes and what it prints at the end: where the report and the
// journal go, the earlier ones a sweep keeps aside (or refuses to touch), and the
// closing summary lines.

#include <string>

#include <nlohmann/json_fwd.hpp>

#include "plan/plan.hpp"
#include "report/journal.hpp"
#include "report/report.hpp"
#include "sweep/runner.hpp"

namespace lp::sweep {

/// The journal next to a report: <stem>.jsonl.
std::string journal_path_for(const std::string& report_path);

/// A sweep never mixes its cases into another sweep's journal, nor overwrites a
/// report silently: without --resume, an existing journal or report is refused
/// (--force keeps each as <name>.bak and starts afresh); with --resume, the earlier
/// report is kept as <name>.bak before the continued one replaces it. With `act`
/// false it only refuses (before any work); with `act` true it also moves them aside.
/// Throws lp::UsageError naming the file.
void keep_earlier_files(const SweepRequest& request, const std::string& out, const std::string& journal_path,
                        bool act);

/// The journal's header: what a --resume must match (config and plan sha256) and
/// what the run is (versions, kernel sets, --fail-on, argv, shard). `meta` is the
/// report's meta block.
report::JournalHeader journal_header(const plan::Plan& plan, const report::Meta& meta, const SweepRequest& request);

/// The summary lines on stdout: the counts per verdict, the first and minimal
/// failures, the first latent case, and the report's path.
void print_summary(const report::Report& report, const std::string& out);

}  // namespace lp::sweep
