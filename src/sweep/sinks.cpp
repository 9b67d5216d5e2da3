#include "sweep/sinks.hpp"

#include <fmt/format.h>

#include "plan/axes.hpp"
#include "report/verdict_table.hpp"

namespace lp::sweep {

void ProgressSink::add(const plan::Case& c, const report::CaseRecord& record) {
  m_failing += m_fail_on.count(record.verdict);
  m_latent += record.verdict == report::Verdict::latent ? 1 : 0;
  m_progress.update(++m_done, m_failing, m_latent, plan::row_label(c.axes()));
}

void ReportSink::add(const plan::Case&, const report::CaseRecord& record) { m_report.cases.push_back(record); }

void TableSink::add(const plan::Case&, const report::CaseRecord& record) {
  report::CaseRecord cell;
  cell.index = record.index;
  cell.id = record.id;
  cell.axes = record.axes;
  cell.verdict = record.verdict;
  m_cells.push_back(std::move(cell));
}

void TableSink::finish() { fmt::print("{}", report::format_verdict_table(m_cells)); }

void Sinks::add(const plan::Case& c, const report::CaseRecord& record) {
  for (const auto& sink : m_sinks) {
    sink->add(c, record);
  }
}

void Sinks::finish() {
  for (const auto& sink : m_sinks) {
    sink->finish();
  }
}

}  // namespace lp::sweep
