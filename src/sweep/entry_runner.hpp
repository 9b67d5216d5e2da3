#pragma once
// Runs entries (the plan's cases, the controls, the remedies' neighbours) on the GPUs'
// workers and makes their records: provisional while the static inspection may still
// run (record_of without the static part), final once it is in.

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "protocol/protocol.hpp"
#include "report/case_record.hpp"
#include "sweep/background_inspection.hpp"
#include "sweep/entries.hpp"
#include "sweep/images.hpp"
#include "sweep/workers.hpp"

namespace lp::sweep {

/// The jobs' time, summed over jobs (meta.phases_s).
struct JobTime {
  double round_trip_s = 0.0;  ///< sent to answered
  double worker_s = 0.0;      ///< the worker's own time on them
  double recording_s = 0.0;   ///< journaling them and handing them to the sinks
};

class EntryRunner {
 public:
  EntryRunner(Workers& workers, const ImageSet& images, BackgroundInspection& inspection,
              std::chrono::seconds case_timeout)
      : m_workers(workers), m_images(images), m_inspection(inspection), m_case_timeout(case_timeout) {}

  /// Runs `e` on `slot`'s worker (`ahead`: the entries that slot runs next, whose jobs
  /// may be sent before `e`'s answer is awaited): its provisional record, and its job's
  /// result in `ran` when the worker ran it, for final_record. An entry to skip, or one
  /// of whose images is incompatible or did not compile, is not sent.
  report::CaseRecord run(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& ahead,
                         std::optional<protocol::JobResult>& ran);
  /// A record as the sinks and the journal get it: made again from the job's result
  /// with the static part (waiting for the inspection); an entry that never ran keeps
  /// its provisional record.
  report::CaseRecord final_record(const Entry& e, const report::CaseRecord& provisional,
                                  const std::optional<protocol::JobResult>& ran);

  /// What a caller of run_all is handed as each entry finishes, in the order they
  /// finish: the index into its entries, the provisional record and the job's result.
  /// False stops the run (--stop-on-first-failure).
  using Finished = std::function<bool(std::size_t task, const report::CaseRecord& provisional,
                                      const std::optional<protocol::JobResult>& ran)>;
  /// Runs `entries` over every GPU's worker (device_pool.hpp).
  void run_all(const std::vector<const Entry*>& entries, const Finished& finished);

  /// The time spent making final records and handing them on (the calling thread's).
  void add_recording_time(double seconds) { m_job_time.recording_s += seconds; }
  const JobTime& job_time() const { return m_job_time; }

 private:
  Workers& m_workers;
  const ImageSet& m_images;
  BackgroundInspection& m_inspection;
  const std::chrono::seconds m_case_timeout;
  JobTime m_job_time;
  std::mutex m_job_time_mutex;  ///< run() is called from every GPU's thread
  std::vector<std::string> m_preload;  ///< run_all's images_to_preload, read by every GPU's thread
};

}  // namespace lp::sweep
