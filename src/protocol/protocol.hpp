#pragma once
// The messages between a sweep's parent and its GPU worker, one JSON object per
// line. The parent never touches CUDA; a worker never decides a verdict (it does
// not see the static analysis). Every message has a type and a struct here, with
// its to_json and a from_json that throws lp::Error on a malformed message.
//
//   worker -> parent   ready {pid, gpu} | fatal {error, exit_code}
//   parent -> worker   load_batch {items: [LoadItem]}   -> loaded_batch {results: [LoadResult]}
//                      run {job: Job}                   -> result {result: JobResult}
//                      race {RaceRequest}               -> race_result {result: RaceResult | error, fault}
//                      quit

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/compiler.hpp"
#include "model/metrics.hpp"
#include "model/problem.hpp"
#include "util/json_text.hpp"

namespace lp::protocol {

/// A compiled kernel a worker can load: which variant, how it was compiled.
struct ImageRef {
  std::string triton;      ///< which of the worker's kernel sets
  std::string variant_id;  ///< in that kernel set
  compile::Compiler compiler;
  /// Dependent wgmma pairs before each register-A wgmma (src/ptx/amplify.hpp), the
  /// plan's `amplify`; 0: the variant as built.
  int amplify = 0;
  /// "<triton>/<variant id>|<compiler>", then "|amplify=<N>" when amplified: the
  /// image's name, unique per run (the worker's table, logs).
  [[nodiscard]] std::string key() const;
};

/// One image to load: prebuilt from the worker's own kernel set, the cubin the
/// parent sends, or (compiler driver, no cubin) the driver's JIT of the PTX: the
/// PTX the parent sends (an amplified one), else the variant's own.
struct LoadItem {
  ImageRef image;
  std::optional<std::string> cubin;  ///< ELF bytes (base64 on the wire)
  std::optional<std::string> ptx;    ///< driver only: the PTX to JIT instead of the variant's
};

/// How loading one item went; a JIT carries its cubin back so the parent can
/// inspect exactly what ran.
struct LoadResult {
  std::string key;
  bool ok = false;
  std::string error;
  std::optional<std::string> jit_cubin;  ///< ELF bytes the driver built (base64 on the wire)
  std::string jit_log;
  double ms = 0.0;
};

/// One case for a worker to run.
struct Job {
  std::size_t index = 0;  ///< plan index (controls use indices past the plan)
  std::string case_id;
  Problem problem;        ///< sizes, dtypes, seed; lora_of is rebuilt from the seed by the worker
  std::int64_t block_m = 64;  ///< tile shape for counting failing tiles
  std::int64_t block_n = 128;
  std::optional<ImageRef> expand;  ///< the kernel that writes y: the expand kernel (expand, lora_linear), fused_moe's one
  std::optional<ImageRef> shrink;  ///< the shrink kernel (shrink, lora_linear)
  /// lora_linear: launch the expand with programmatic dependent launch after the shrink
  /// (vLLM's dual-stream chain, launch_pdl=True), on the one stream.
  bool pdl = false;
  int repeats = 1;
  std::optional<double> atol;  ///< config overrides of the computed tolerance
  std::optional<double> rtol;
};

/// How far a job got, as the worker (or, for a worker that died or hung, the
/// parent) saw it. The verdict is decided from this and the static analysis.
enum class RunOutcome {
  ran,         ///< every repeat ran; metrics are valid
  refused,     ///< refused before launching (the case breaks the variant's specialisation)
  incomplete,  ///< started, could not be judged
  fault,       ///< sticky CUDA error or a worker that died; the worker is gone
  timeout,     ///< over --case-timeout; the parent killed the worker
};

std::string_view to_string(RunOutcome outcome);
std::optional<RunOutcome> parse_run_outcome(std::string_view text);

/// What a worker reports for a job.
struct JobResult {
  std::size_t index = 0;
  std::string case_id;
  RunOutcome outcome = RunOutcome::incomplete;
  std::string reason;
  int runs = 0;
  int failed_runs = 0;
  std::optional<CompareMetrics> metrics;  ///< the worst run's, when every repeat ran
  std::optional<CaseTiming> timing;       ///< kernel/reference ms, bytes, when every repeat ran
  /// Wall time the worker spent on the job, for the sweep's own phases (meta.phases_s);
  /// not part of the case record.
  double worker_ms = 0.0;

  /// A result without metrics: a job that never got to run, or whose worker was lost.
  static JobResult lost(std::size_t index, std::string case_id, RunOutcome outcome, std::string reason);
};

/// The race control's launch (sweep/race_control.hpp).
struct RaceRequest {
  std::string cubin;  ///< ELF bytes (base64 on the wire)
  unsigned ctas = 0;
  unsigned launches = 0;
};

/// What the race-control kernel produced over `launches` launches of `ctas` tiles.
struct RaceResult {
  unsigned ctas = 0;
  unsigned launches = 0;
  std::uint64_t tiles = 0;               ///< ctas * launches
  std::uint64_t late_tiles = 0;          ///< tiles with any element other than the clean value
  std::uint64_t late_elements = 0;
  std::uint64_t launches_with_late = 0;  ///< launches in which at least one tile was late
  std::uint64_t unwritten = 0;           ///< elements still NaN poison after the launch
  std::map<float, std::uint64_t> values; ///< every written value, with its count
};

/// The GPU a worker runs on, as its first message ("ready") says: the report's
/// environment.gpu (and environment.gpus with --devices), written as it came.
struct GpuRecord {
  int ordinal = 0;
  int device_count = 1;
  std::string name;                ///< "NVIDIA H200"
  std::string uuid;
  std::string pci_bus_id;
  std::string compute_capability;  ///< "9.0"
  int sm_count = 0;
  int sm_clock_mhz = 0;
  int memory_clock_mhz = 0;
  int memory_bus_width_bits = 0;
  double peak_bandwidth_gb_s = 0.0;
  std::uint64_t total_memory_bytes = 0;
  std::uint64_t free_memory_bytes = 0;
  bool ecc_enabled = false;
  std::string driver_version;       ///< the kernel driver's ("580.159"), else the CUDA version it supports
  std::string driver_cuda_version;  ///< "13.0"
  std::string runtime_version;
  std::string cublas_version;
  std::string driver_library;
  bool jit_cache_disabled = true;
  std::string cuda_cache_disable_env;
  std::string module_loading_env;
  std::string module_loading;  ///< "lazy" or "eager"
};

/// The launch the sweep's race control uses: 132 SMs x 32 tiles, 20 launches.
inline constexpr unsigned k_race_ctas = 132 * 32;
inline constexpr unsigned k_race_launches = 20;
/// The value of every element of a race-control tile that read the A it was issued with.
inline constexpr float k_race_clean_value = 64.0F;


// The messages themselves, one JSON object per line: the only place either end turns
// a message into text or text into a message (the worker and sweep/worker_client.cpp
// never see JSON).

/// parent -> worker: load these images.
struct LoadBatch {
  std::vector<LoadItem> items;
};
/// parent -> worker: run this case.
struct RunJob {
  Job job;
};
/// parent -> worker: answer what is pending and exit.
struct Quit {};
/// A request line a worker could not take: not JSON, or a type it does not know.
struct BadRequest {
  std::string error;  ///< "worker: unreadable request: ..." or "worker: unknown request type \"x\""
};
using Request = std::variant<LoadBatch, RunJob, RaceRequest, Quit, BadRequest>;

/// worker -> parent: started, on this GPU.
struct Ready {
  int pid = 0;
  GpuRecord gpu;
};
/// worker -> parent: could not start (no GPU, not a Hopper, ...).
struct StartFailure {
  std::string error;  ///< empty when the message had none
  int exit_code = 3;
};
/// worker -> parent: how each item of a LoadBatch went, in its order.
struct LoadedBatch {
  std::vector<LoadResult> results;
};
/// worker -> parent: a RunJob's answer.
struct JobAnswer {
  JobResult result;
};
/// worker -> parent: a RaceRequest's answer, its result or why there is none.
struct RaceAnswer {
  std::optional<RaceResult> result;
  std::string error;   ///< when there is no result
  bool fault = false;  ///< a sticky CUDA error: the worker exits after this answer
};
/// worker -> parent: a BadRequest's answer.
struct WorkerError {
  std::string error;
};
/// A JSON object of a type the parent does not expect from a worker; `line` as it came.
struct UnknownReply {
  std::string line;
};
using Reply = std::variant<Ready, StartFailure, LoadedBatch, JobAnswer, RaceAnswer, WorkerError, UnknownReply>;

/// The message as one line of JSON, without its newline. A BadRequest or UnknownReply
/// is never sent (lp::Error).
std::string to_line(const Request& request);
std::string to_line(const Reply& reply);
/// A request line. Not JSON, nested deeper than any message, not an object, or of an
/// unknown type: BadRequest. A known type with a field missing, mistyped or out of its
/// range throws lp::Error ("malformed <what>: <pointer>: ..."); nothing is converted
/// regardless.
Request parse_request(std::string_view line);
/// A reply line; nullopt for a line that is not a JSON object or nests deeper than any
/// message (a library, or a kernel's printf, writing on the worker's stdout). Throws
/// lp::Error as parse_request does.
std::optional<Reply> parse_reply(std::string_view line);

nlohmann::json to_json(const ImageRef& image);
ImageRef image_from_json(const nlohmann::json& j);
nlohmann::json to_json(const LoadItem& item);
LoadItem load_item_from_json(const nlohmann::json& j);
nlohmann::json to_json(const LoadResult& result);
LoadResult load_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const Job& job);
Job job_from_json(const nlohmann::json& j);
nlohmann::json to_json(const JobResult& result);
JobResult result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RaceRequest& request);
RaceRequest race_request_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RaceResult& result);
RaceResult race_result_from_json(const nlohmann::json& j);
nlohmann::json to_json(const GpuRecord& gpu);
GpuRecord gpu_record_from_json(const nlohmann::json& j);
/// to_json's value as the text a report carries (util/json_text.hpp).
JsonText to_json_text(const RaceResult& result);
JsonText to_json_text(const GpuRecord& gpu);

}  // namespace lp::protocol
