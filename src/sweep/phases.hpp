#pragma once
// Where a sweep's wall time went (the report's meta.phases_s), one field per phase: the
// runner times each as it ends, and the report and the closing time line read them.

#include <map>
#include <optional>
#include <string>

namespace lp::sweep {

/// Seconds per phase; a phase the run did not reach (a signal, bad controls) is nullopt
/// and absent from the report.
struct Phases {
  std::optional<double> kernel_sets;
  std::optional<double> plan;
  std::optional<double> entries;
  std::optional<double> images;
  std::optional<double> worker_start;  ///< summed over the workers started (--devices, restarts)
  std::optional<double> journal;
  std::optional<double> controls;
  std::optional<double> cases;
  std::optional<double> worker_stop;
  std::optional<double> records;  ///< the variants and tolerances blocks
  std::optional<double> total;
  /// Of the cases' time: the jobs' round trips to the worker, and the worker's own part
  /// (summed per job from its start to its answer: the worker overlaps one case's start
  /// with the one before on the GPU, so this sum may exceed the cases' time).
  std::optional<double> jobs_round_trip;
  std::optional<double> jobs_in_worker;
  std::optional<double> jobs_recording;
  /// The static inspection runs beside the controls and the cases; what the sweep
  /// waited for it is static_inspection_wait.
  std::optional<double> static_inspection;
  std::optional<double> static_inspection_wait;
  /// Not wall time: the GPU time the cases' work needs at the least, from the cases'
  /// own events: their kernels (each case's median launch times its runs) and the
  /// references computed (once per problem and worker). The sweep's floor is their sum.
  std::optional<double> gpu_kernels;
  std::optional<double> gpu_references;

  /// meta.phases_s: each phase reached, by its member's name.
  [[nodiscard]] std::map<std::string, double> seconds() const;
};

}  // namespace lp::sweep
