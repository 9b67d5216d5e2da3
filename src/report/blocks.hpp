#pragma once
// The blocks of a report that describe the run rather than its cases, typed: meta,
// environment, controls, tolerances, remedies and the variants
// (configs/schema/report.schema.json). The sweep fills them,
// a document is read into them (formats/document.hpp: every field checked for its type
// and range and named by its JSON pointer, reports of 2.x to 4.x alike), and each is
// written by its to_json() and read by its from_json(), both in blocks.cpp.
//
// The records another library writes (the host, toolkit, compiler and GPU records, a
// set's bundled ptxas, the resolved config, the race kernel's tally, how an image was
// built, its SASS analysis) are typed too (report/records.hpp) and carried as
// Carried<T> (report/carried.hpp): read once, typed, and written back as they were
// read. A key the sweep always writes, null or not, is always written; one it writes
// only sometimes is written when present.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/compiler.hpp"
#include "plan/plan.hpp"
#include "plan/shard.hpp"
#include "report/carried.hpp"
#include "report/case_record.hpp"
#include "report/records.hpp"
#include "util/json_in.hpp"
#include "util/json_text.hpp"

namespace lp::report {

/// A kernel set the plan used (meta.kernel_sets, environment.kernel_sets).
struct KernelSetRecord {
  std::string triton_version;
  std::string origin;  ///< <embedded>/kernels/sets/triton-<version> or a --kernel-dir
  std::size_t variants = 0;
  Carried<ReportedPtxas> ptxas;  ///< the set's bundled ptxas, as its manifest records it
  std::vector<std::string> ptxas_options;

  [[nodiscard]] nlohmann::json to_json() const;
  [[nodiscard]] JsonText to_json_text() const;  ///< to_json() as env prints it
  static KernelSetRecord from_json(const JsonIn& j);
};

/// The plan's counts (meta.plan).
struct PlanRecord {
  std::size_t cases = 0;
  std::size_t combinations = 0;
  std::optional<std::vector<std::size_t>> excluded_by_rule;  ///< per exclude rule
  std::optional<std::size_t> duplicates;
  std::vector<plan::Dropped> not_applicable;  ///< written only when there are any
  std::vector<plan::NotSwept> not_swept;      ///< --model: written only when there are any
  std::optional<std::vector<std::string>> only_cases;  ///< sweep --case

  [[nodiscard]] nlohmann::json to_json() const;
  static PlanRecord from_json(const JsonIn& j);
};

/// sweep --shard I/N: which part of which plan a report holds (meta.shard): the plan's
/// record, with its JSON form here. Read, its index is below its count.
using plan::ShardRecord;
[[nodiscard]] nlohmann::json shard_to_json(const ShardRecord& s);
ShardRecord shard_from_json(const JsonIn& j);

/// One GPU of --devices (meta.devices).
struct DeviceRecord {
  int device = 0;
  std::size_t cases = 0;
  std::optional<std::string> retired;  ///< why it left the rotation

  [[nodiscard]] nlohmann::json to_json() const;
  static DeviceRecord from_json(const JsonIn& j);
};

/// The race control (controls.race): informational, never makes a run invalid.
struct RaceRecord {
  bool ran = false;
  std::string compiler;  ///< what compiled the embedded PTX, with its version
  std::optional<std::size_t> static_findings;
  Carried<RaceTally> result;  ///< the worker's tally, or null
  std::optional<bool> shows;  ///< a tile read the overwritten A; nullopt: the control could not say
  std::string summary;

  [[nodiscard]] nlohmann::json to_json() const;
  static RaceRecord from_json(const JsonIn& j);
};

/// environment: where the run ran.
struct Environment {
  Carried<ReportedHost> host;        ///< report/environment.hpp host_record()
  Carried<ReportedToolkit> toolkit;  ///< compile::toolkit_record()
  /// compile::CompilerRecord, one per compiler and Triton set (2.x: older shape)
  std::vector<Carried<ReportedCompiler>> compilers;
  std::optional<std::vector<KernelSetRecord>> kernel_sets;
  Carried<ReportedGpu> gpu;  ///< the worker's GPU record (protocol::GpuRecord), or null
  /// --devices: every GPU's record, or null for one that never started
  std::optional<std::vector<Carried<ReportedGpu>>> gpus;
  std::optional<std::string> no_gpu_reason;
  std::optional<bool> jit_cache_disabled;
  std::optional<std::string> module_loading;
  /// The static inspection's cache (inspect::CacheStats): the sweep writes it, null when
  /// nothing was inspected; nullopt when the report does not have the key (before 4.0.0).
  std::optional<Carried<ReportedCache>> inspection_cache;

  [[nodiscard]] nlohmann::json to_json() const;
  static Environment from_json(const JsonIn& j);
};

/// One image the sweep ran (variants[]): how it was built, what the static inspection
/// found, and the verdicts of the cases that used it.
struct VariantRecord {
  std::string variant;
  std::string triton;
  std::string compiler;
  std::optional<int> amplify;  ///< D wgmma pairs of an amplified image (written when present)
  Carried<compile::BuildRecord> compile;  ///< how it was built; null (or {}): written as {}
  std::optional<std::string> compile_error;
  std::optional<std::string> cubin_sha256;
  std::optional<int> static_findings;
  std::optional<int> ptx_findings;
  std::optional<std::string> attribution;  ///< "ptx", "ptxas" or "none"
  Carried<ReportedSass> sass;              ///< sass::CubinReport's JSON form, or null
  std::optional<std::string> sass_error;
  /// Verdict name -> cases that ran the image; the sweep writes it, empty for a control's
  /// image (no case of the plan ran it); nullopt for a record without the key.
  std::optional<std::map<std::string, std::size_t>> case_verdicts;

  [[nodiscard]] nlohmann::json to_json() const;
  static VariantRecord from_json(const JsonIn& j);
};

/// One Triton set's control pair (controls.sets).
struct SetControlsRecord {
  std::string triton;
  bool valid = false;
  std::optional<CaseRecord> positive;
  std::optional<CaseRecord> negative;
  std::optional<std::string> reason;

  [[nodiscard]] nlohmann::json to_json() const;
  static SetControlsRecord from_json(const JsonIn& j);
};

/// One amplified control (controls.amplified).
struct AmplifiedControlRecord {
  std::string triton;
  std::string role;  ///< "block_n_32" or "fixed_default"
  int amplify = 0;   ///< key "amplify" (before report schema 5.0.0: "pairs")
  bool valid = false;
  std::optional<std::string> reason;
  CaseRecord record;

  [[nodiscard]] nlohmann::json to_json() const;
  static AmplifiedControlRecord from_json(const JsonIn& j);
};

/// controls: whether the detector is trusted.
struct Controls {
  bool ran = false;
  std::optional<bool> valid;  ///< nullopt when the controls did not run
  std::optional<std::vector<SetControlsRecord>> sets;
  std::optional<RaceRecord> race;
  std::optional<std::vector<AmplifiedControlRecord>> amplified;
  std::optional<std::vector<std::string>> amplified_notes;
  std::optional<std::string> reason;

  /// Whether the run's verdicts can be trusted: not when the controls ran and failed.
  [[nodiscard]] bool trusted() const noexcept { return !valid || *valid; }
  [[nodiscard]] nlohmann::json to_json() const;
  static Controls from_json(const JsonIn& j);
};

/// One part of a merge (meta.merged.parts[]).
struct MergedPart {
  std::string path;
  std::string kind;  ///< "report" or "journal"
  ShardRecord shard;
  std::size_t cases = 0;
  std::optional<Environment> environment;  ///< a report's; null for a journal
  std::optional<Controls> controls;        ///< a report's, when it has them
};

/// What loraprobe merge merged (meta.merged).
struct MergedRecord {
  std::vector<MergedPart> parts;
  std::vector<std::size_t> missing_shards;
  std::vector<std::string> short_parts;
  std::optional<std::string> not_the_plan;
  bool incomplete = false;

  [[nodiscard]] JsonText to_json_text() const;
  static MergedRecord from_json(const JsonIn& j);
};

/// meta, less what the Report owns (detail, fail_on, interrupted).
struct Meta {
  std::string version;
  std::string git_sha;
  std::vector<std::string> argv;
  std::string started_at;
  std::optional<std::string> finished_at;
  Carried<ReportedConfig> config;  ///< the resolved config, each setting with its origin
  std::string config_sha256;
  std::uint64_t seed = 0;
  int repeats = 1;
  std::optional<std::vector<KernelSetRecord>> kernel_sets;
  PlanRecord plan;
  std::optional<ShardRecord> shard;
  std::optional<std::vector<DeviceRecord>> devices;
  Carried<MergedRecord> merged;  ///< loraprobe merge's parts, or null
  std::optional<std::map<std::string, double>> phases_s;
  /// Like phases_s, of this run only (a merge does not carry it): the distinct problems
  /// of the cases it ran (families/family.hpp reference_key), whose inputs its workers
  /// generated and whose references they computed once each.
  std::optional<std::size_t> problems;

  /// Without detail, fail_on and interrupted: Report::to_json adds its own.
  [[nodiscard]] nlohmann::json to_json() const;
  /// Reads everything but detail, fail_on and interrupted (the reader takes those).
  static Meta from_json(const JsonIn& j);
};

/// One row of the documented tolerance table (tolerances.table).
struct ToleranceTableRow {
  std::string op;
  std::string output_dtype;
  std::int64_t k = 0;
  std::optional<bool> add_inputs;
  std::optional<std::int64_t> hidden_in;
  double atol = 0.0;
  double rtol = 0.0;
  std::optional<std::string> why;
};

/// A config's override for one output dtype (tolerances.overrides).
struct ToleranceOverride {
  double atol = 0.0;
  double rtol = 0.0;
  std::string origin;
};

/// tolerances: how the cases were judged.
struct Tolerances {
  std::string model;
  std::vector<ToleranceTableRow> table;
  std::map<std::string, ToleranceOverride> overrides;  ///< by output dtype

  [[nodiscard]] nlohmann::json to_json() const;
  static Tolerances from_json(const JsonIn& j);
};

/// One remedy of a hazardous case, run as a neighbour case (remedies.hazards[].remedies).
struct RemedyRecord {
  std::string remedy;  ///< its name: "block_n=32", "bf16 input", ...
  std::string why;
  std::string case_id;  ///< "case"
  Verdict verdict = Verdict::skipped;
  std::optional<int> static_findings;
  std::optional<double> kernel_ms;
  std::optional<double> cost;  ///< kernel time over the hazardous case's
  bool in_plan = false;        ///< the neighbour was a case of the plan itself
  std::optional<std::string> reason;

  [[nodiscard]] nlohmann::json to_json() const;
  static RemedyRecord from_json(const JsonIn& j);
};

/// A hazardous case (a LATENT or FAIL configuration at its fewest and most tokens) and
/// its remedies (remedies.hazards).
struct HazardRemedies {
  std::string configuration;  ///< plan::row_label of its axes
  std::string case_id;        ///< "case"
  std::int64_t tokens = 0;
  Verdict verdict = Verdict::skipped;
  std::optional<double> kernel_ms;
  std::vector<RemedyRecord> remedies;

  [[nodiscard]] nlohmann::json to_json() const;
  static HazardRemedies from_json(const JsonIn& j);
};

/// sweep --remedies (sweep/remedies.hpp): the remedies block.
struct Remedies {
  std::vector<HazardRemedies> hazards;
  std::vector<std::string> notes;  ///< what could not be measured

  [[nodiscard]] nlohmann::json to_json() const;
  static Remedies from_json(const JsonIn& j);
};

}  // namespace lp::report
