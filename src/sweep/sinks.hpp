#pragma once
// Where a sweep's finished cases go: the progress line, the report and the verdict
// table each receive every case through one interface, in plan order, as nvbench's
// printers receive its states. The runner does not know what its sinks do with a case.
// The journal is not a sink: a case is journaled the moment its GPU finishes it, in
// the order the GPUs finish, and a resumed case is never journaled again.

#include <cstddef>
#include <memory>
#include <set>
#include <vector>

#include "plan/plan.hpp"
#include "report/report.hpp"
#include "sweep/progress.hpp"

namespace lp::sweep {

class CaseSink {
 public:
  virtual ~CaseSink() = default;
  /// A case finished: it ran now or was read back from the journal.
  virtual void add(const plan::Case& c, const report::CaseRecord& record) = 0;
  /// The run is over: every case went through add(), or a signal stopped it.
  virtual void finish() {}
};

/// The progress line on stderr: cases done, failing (by --fail-on) and latent so far.
class ProgressSink final : public CaseSink {
 public:
  ProgressSink(std::size_t total, bool enabled, std::set<report::Verdict> fail_on)
      : m_progress(total, enabled), m_fail_on(std::move(fail_on)) {}
  void add(const plan::Case& c, const report::CaseRecord& record) override;
  void finish() override { m_progress.finish(); }

 private:
  Progress m_progress;
  std::set<report::Verdict> m_fail_on;
  std::size_t m_done = 0;
  std::size_t m_failing = 0;
  std::size_t m_latent = 0;
};

/// The report's cases.
class ReportSink final : public CaseSink {
 public:
  explicit ReportSink(report::Report& report) : m_report(report) {}
  void add(const plan::Case& c, const report::CaseRecord& record) override;

 private:
  report::Report& m_report;
};

/// The verdict table (sweep/table.hpp), printed on stdout when the run is over.
class TableSink final : public CaseSink {
 public:
  void add(const plan::Case& c, const report::CaseRecord& record) override;
  void finish() override;

 private:
  report::CaseStore m_cells;  ///< axes and verdict of each case
};

/// Fans every call out to its sinks, in the order they were added.
class Sinks final : public CaseSink {
 public:
  void push(std::unique_ptr<CaseSink> sink) { m_sinks.push_back(std::move(sink)); }
  void add(const plan::Case& c, const report::CaseRecord& record) override;
  void finish() override;

 private:
  std::vector<std::unique_ptr<CaseSink>> m_sinks;
};

}  // namespace lp::sweep
