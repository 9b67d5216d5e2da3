#pragma once
// A sweep's controls (sweep/controls.hpp says what they must show): their entries,
// made beside the plan's; their runs on the first GPU, each Triton set's pair, the
// amplified controls and the race control (compiled and inspected in a thread from
// the start); and their record, made once the static inspection is in.

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"
#include "protocol/protocol.hpp"
#include "report/report.hpp"
#include "sweep/controls.hpp"
#include "sweep/entries.hpp"
#include "sweep/entry_runner.hpp"
#include "sweep/images.hpp"
#include "sweep/race_control.hpp"
#include "sweep/runner.hpp"
#include "sweep/workers.hpp"

namespace lp::sweep {

class ControlRun {
 public:
  explicit ControlRun(const SweepRequest& request) : m_request(request) {}

  /// The race control, compiled here with the toolkit's ptxas (all the worker needs),
  /// then its SASS checked for the hazard (needed only for the record), in a thread;
  /// once, and only when the sweep runs its controls.
  void start_race();
  /// The entries of each Triton set's pair and of the amplified controls, their images
  /// registered in `images`, indexed from `first_index` on. Returns the index past them.
  std::size_t make_entries(const plan::Plan& plan, const kernels::KernelSets& sets,
                           const std::vector<std::string>& tritons, std::uint64_t seed, std::size_t first_index,
                           ImageSet& images);
  /// The amplified controls' entries settled once their images are built.
  void settle(const ImageSet& images);
  /// Runs the controls on the first GPU: every Triton set's pair, the amplified
  /// controls, then the race control. True when every pair and amplified control
  /// behaves (the race control only informs).
  bool run(EntryRunner& runner, Workers& workers);
  /// The controls that ran, with their static part: once, the first call after run().
  std::optional<report::Controls> take_record(EntryRunner& runner);

 private:
  /// A control pair that ran, to be recorded with its static part; an amplified
  /// control is one entry of its own, its record in pair.positive.
  struct Pending {
    const ControlEntries* entries = nullptr;
    ControlPair pair;  ///< the provisional records
    std::optional<protocol::JobResult> positive;
    std::optional<protocol::JobResult> negative;
    Entry entry;       ///< an amplified control's
    std::string role;  ///< an amplified control's: "block_n_32" or "fixed_default"
  };

  /// Runs the race control on the first GPU's worker once its cubin is compiled.
  void run_race(Workers& workers);
  /// The controls.race block: the run with the inspection of its SASS (waited for).
  report::RaceRecord race_record();

  const SweepRequest& m_request;
  std::vector<std::unique_ptr<plan::Case>> m_cases;  ///< the controls' synthesised cases
  std::vector<ControlEntries> m_pairs;               ///< one pair per Triton set
  std::vector<Pending> m_ran;                        ///< the pairs that ran
  std::vector<Pending> m_amplified;                  ///< amplify D > 0: per D, sweep/controls.hpp
  std::vector<std::string> m_amplified_notes;        ///< the amplified controls that could not be made
  bool m_pending = false;                            ///< ran and not yet recorded
  std::future<RaceCubin> m_race_cubin;               ///< the race control's cubin, compiled beside the rest
  std::future<RaceCubin> m_race_inspected;           ///< and inspected
  std::optional<protocol::RaceResult> m_race_result;  ///< the race control's run
  std::string m_race_error;                           ///< why it did not run
};

}  // namespace lp::sweep
