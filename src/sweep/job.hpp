#pragma once
// What the sweep's parent sends a GPU worker and what comes back, one JSON object
// per line. The parent never touches CUDA; a worker never decides a verdict (it
// does not see the static analysis).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "verify/problem.hpp"

namespace lp::sweep {

/// A compiled kernel a worker can load: which variant, how it was compiled.
struct ImageRef {
  std::string key;         ///< "<triton>/<variant id>|<compiler>"; unique per run
  std::string triton;      ///< which of the worker's kernel sets
  std::string variant_id;  ///< in that kernel set
  std::string compiler;    ///< prebuilt, driver, ptxas=<spec>
};

/// One case for a worker to run.
struct Job {
  std::size_t index = 0;  ///< plan index (controls use indices past the plan)
  std::string case_id;
  Problem problem;        ///< sizes, dtypes, seed; lora_of is rebuilt from the seed by the worker
  std::int64_t block_m = 64;  ///< tile shape for counting failing tiles
  std::int64_t block_n = 128;
  std::optional<ImageRef> expand;  ///< the expand kernel (expand, lora_linear)
  std::optional<ImageRef> shrink;  ///< the shrink kernel (shrink, lora_linear)
  int repeats = 1;
  std::optional<double> atol;  ///< config overrides of the computed tolerance
  std::optional<double> rtol;
};

/// What a worker reports for a job.
struct JobResult {
  std::size_t index = 0;
  std::string case_id;
  /// "ran" (metrics valid), "skipped" (refused before launching), "incomplete"
  /// (started, could not be judged), "fault" (sticky CUDA error; the worker exits).
  std::string status;
  std::string reason;
  int runs = 0;
  int failed_runs = 0;
  nlohmann::json metrics;  ///< report.schema.json#/$defs/metrics of the worst run, or null
  nlohmann::json timing;   ///< kernel/reference ms, bytes, bandwidth, or null
};

nlohmann::json to_json(const ImageRef& image);
ImageRef image_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Job& job);
/// Throws lp::Error on a malformed message.
Job job_from_json(const nlohmann::json& j);
nlohmann::json to_json(const JobResult& result);
JobResult result_from_json(const nlohmann::json& j);

}  // namespace lp::sweep
