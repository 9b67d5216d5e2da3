#pragma once
// sweep --remedies, run: the known remedies of each hazardous case (sweep/remedies.hpp)
// as neighbour cases, built, inspected and run like the plan's, after them.

#include <cstddef>
#include <map>
#include <string>

#include "kernels/kernel_sets.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "report/journal.hpp"
#include "report/report.hpp"
#include "sweep/entry_runner.hpp"
#include "sweep/images.hpp"
#include "sweep/remedies.hpp"
#include "sweep/runner.hpp"

namespace lp::sweep {

class RemedyRun {
 public:
  RemedyRun(const plan::SweepConfig& config, const SweepRequest& request, ImageSet& images, EntryRunner& runner)
      : m_config(config), m_request(request), m_images(images), m_runner(runner) {}

  /// The neighbours' first index: past the plan's cases and the controls'.
  void set_first_index(std::size_t index) { m_first_index = index; }

  /// The remedies block of `cases` (the plan's records; `plan` has their cases): the
  /// neighbours not measured yet (`measured`: by a resumed journal) are run over every
  /// GPU and journaled.
  report::Remedies run(const plan::Plan& plan, const report::CaseStore& cases, const kernels::KernelSets& sets,
                       report::Journal& journal, const std::map<std::string, report::CaseRecord>& measured);

 private:
  /// The neighbours to run now, into m_cases: one run per distinct neighbour, none the
  /// plan has or `measured` holds. Returns each one's index in m_cases by id.
  std::map<std::string, std::size_t> add_neighbours(const RemedyPlan& rp,
                                                    const std::map<std::string, report::CaseRecord>& measured);

  const plan::SweepConfig& m_config;
  const SweepRequest& m_request;
  ImageSet& m_images;
  EntryRunner& m_runner;
  std::size_t m_first_index = 0;
  plan::Plan m_cases;  ///< the neighbour cases run after the plan's (their entries point into it)
};

}  // namespace lp::sweep
