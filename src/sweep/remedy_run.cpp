#include "sweep/remedy_run.hpp"

#include <fmt/format.h>

#include "compile/toolchain.hpp"
#include "util/release.hpp"

namespace lp::sweep {

using report::CaseRecord;

namespace {

/// A ptxas the run already compiles with that keeps Triton 3.8+'s copies
/// (report::k_fixing_ptxas, 13.3), for the Triton-and-ptxas remedy; empty if none.
std::string fixing_ptxas_of(const ImageSet& images) {
  std::string fixing;
  for (const auto& [key, image] : images.all()) {
    if (image.compiler.kind != compile::CompilerKind::ptxas || !image.compile) {
      continue;
    }
    const std::optional<Release> v = parse_release(image.compile->version, ReleaseParts::two_or_three);
    if (v && *v >= report::k_fixing_ptxas) {
      fixing = image.compiler.to_string();
    }
  }
  return fixing;
}

}  // namespace

std::map<std::string, std::size_t> RemedyRun::add_neighbours(const RemedyPlan& rp,
                                                             const std::map<std::string, CaseRecord>& measured) {
  std::size_t next_index = m_first_index;
  std::map<std::string, std::size_t> index_of_id;
  for (const RemedyCase& rc : rp.remedies) {
    if (rc.existing || index_of_id.count(rc.neighbour.id) > 0 || measured.count(rc.neighbour.id) > 0) {
      continue;  // the plan's own case, a neighbour met before, or one a resumed journal measured
    }
    plan::Case c = rc.neighbour;
    c.index = next_index++;
    index_of_id[c.id] = m_cases.cases.size();
    m_cases.cases.push_back(std::move(c));
  }
  return index_of_id;
}

report::Remedies RemedyRun::run(const plan::Plan& plan, const report::CaseStore& cases,
                                const kernels::KernelSets& sets, report::Journal& journal,
                                const std::map<std::string, CaseRecord>& measured) {
  std::map<std::string, const plan::Case*> by_id;
  for (const plan::Case& c : plan.cases) {
    by_id[c.id] = &c;
  }
  const RemedyPlan rp = plan_remedies(cases, by_id, sets.versions(), fixing_ptxas_of(m_images));
  if (rp.hazards.empty()) {
    return remedies_record(rp, {});
  }
  const std::map<std::string, std::size_t> index_of_id = add_neighbours(rp, measured);
  std::vector<Entry> entries = plan_entries(m_cases, m_config, sets, m_images, {});
  m_images.build_on_cpu(sets, m_request.jobs);
  settle_amplification(entries, m_images);
  const std::string problem = m_images.inspect(m_request.nvdisasm, m_request.jobs);
  if (!problem.empty()) {
    fmt::print(stderr, "sweep: warning: the remedies' SASS could not be inspected: {}\n", problem);
  }
  std::vector<const Entry*> to_run;
  for (const Entry& e : entries) {
    to_run.push_back(&e);
  }
  std::vector<CaseRecord> ran(entries.size());
  m_runner.run_all(to_run, [&](std::size_t task, const CaseRecord& provisional,
                               const std::optional<protocol::JobResult>& result) {
    ran[task] = m_runner.final_record(entries[task], provisional, result);
    journal.append_remedy(ran[task]);
    return true;
  });
  report::Remedies record = remedies_record(rp, remedy_results(rp, cases, measured, ran, index_of_id));
  fmt::print(stderr, "sweep: remedies: {} neighbour case(s) of {} hazardous case(s), {} run now{}\n",
             rp.remedies.size(), rp.hazards.size(), entries.size(),
             measured.empty() ? std::string() : fmt::format(" ({} measured before, from the journal)", measured.size()));
  return record;
}

}  // namespace lp::sweep
