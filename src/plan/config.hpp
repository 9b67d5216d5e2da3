#pragma once
// A sweep config: the axes' value lists plus repeats, seed, tolerance overrides
// and exclude rules. Three layers fill it, each value remembering its origin:
// built-in defaults, a config file (or the embedded configs/default.json), and
// CLI flags.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/axis_values.hpp"

#include "plan/axes.hpp"
#include "util/json_text.hpp"

namespace lp::plan {

/// Where a setting's value came from.
struct Origin {
  enum class Kind { builtin, file, flag };
  Kind kind = Kind::builtin;
  std::string where;  ///< file path, or the flag as typed; empty for builtin
  /// "default", "file configs/x.json", "flag --tokens".
  [[nodiscard]] std::string describe() const;
};

/// A value and where it came from.
template <typename T>
struct Setting {
  T value{};
  Origin origin{};
};

/// --model NAME --tp N (plan/models.hpp): the shapes come from a model's projections.
struct ModelChoice {
  std::string name;
  std::int64_t tp = 1;
};

/// --vllm-configs DIR --vllm-gpu NAME (plan/tuned.hpp): the knobs "vllm" stands for
/// come from vLLM's tuned config files in DIR, for the GPU NAME.
struct VllmConfigs {
  std::string dir;
  std::string gpu;  ///< empty: the GPU present (a sweep), else an H100 (a dry run)
};

/// The GPU name tuned configs are read for when none is given and none is present.
inline constexpr const char* k_default_vllm_gpu = "NVIDIA H100 80GB HBM3";
/// The SM count a dry run plans NPID_FACTOR for when --sm-count is not given (H100 SXM
/// and H200: 132); a run takes its GPU's, as vLLM does (current_platform.num_compute_units).
inline constexpr std::int64_t k_default_sm_count = 132;
/// The most SMs --sm-count takes (a B200 has 148; room for what comes next).
inline constexpr std::int64_t k_max_sm_count = 1024;

/// Absolute and relative tolerance: |actual - expected| <= atol + rtol * |expected|.
struct Tolerance {
  double atol = 0.0;
  double rtol = 0.0;
};

/// Cases matching every key of a rule are left out of the plan.
struct ExcludeRule {
  std::map<AxisId, std::vector<AxisValue>> match;  ///< axis -> values (ranges expanded)
  std::string pointer;                                  ///< where it was written, for messages
};

/// The resolved sweep configuration.
struct SweepConfig {
  std::string name;
  std::string description;
  std::string source;         ///< path of the file layer ("<embedded>/configs/default.json" for the default)
  std::string source_sha256;  ///< sha256 of that file's bytes
  std::map<AxisId, Setting<std::vector<AxisValue>>> axes;  ///< every axis, ranges expanded
  Setting<std::int64_t> repeats;
  Setting<std::uint64_t> seed;
  std::map<DType, Setting<Tolerance>> tolerance;  ///< overrides of the built-in table only
  Setting<std::vector<ExcludeRule>> exclude;
  /// A model preset: when set, its projections replace the num_slices and hidden axes.
  Setting<std::optional<ModelChoice>> model;
  /// vLLM's tuned config files: they decide the "vllm" knobs of every case.
  Setting<std::optional<VllmConfigs>> vllm_configs;
  /// VLLM_BATCH_INVARIANT=1 (--vllm-batch-invariant): vLLM skips the tuned files and its
  /// default shrink has split_k 1.
  Setting<bool> vllm_batch_invariant;
  /// vLLM's --max-loras (--max-loras): its tuned lookup is keyed by max_loras + 1, and a
  /// batch holds at most max_loras adapters. 0 when not given: each case's num_loras, at
  /// least vLLM's default 1.
  Setting<std::int64_t> vllm_max_loras;
  /// vLLM's per-GPU fused-MoE configs (--vllm-moe-configs: its
  /// model_executor/layers/fused_moe/configs): the routing's BLOCK_SIZE_M of a model
  /// plan's fused-MoE cases (plan/moe_configs.hpp). gpu as vllm_configs'.
  Setting<std::optional<VllmConfigs>> vllm_moe_configs;
  /// The GPU's SM count vLLM's fused-MoE LoRA sizes its NPID_FACTOR by (--sm-count). 0
  /// when not given: a run takes its GPU's, a dry run k_default_sm_count's.
  Setting<std::int64_t> sm_count;
  /// Run the known remedies of every LATENT or FAIL configuration as neighbour cases
  /// (sweep/remedies.hpp); on in the seed and upgrade-gate configs.
  Setting<bool> remedies;
  /// What the input says that still works but should be written otherwise
  /// ("<file>:/axes/ranks: write rank (ranks is deprecated)"); the CLI prints them.
  std::vector<std::string> notes;

  /// The values of `id`.
  [[nodiscard]] const std::vector<AxisValue>& values(AxisId id) const { return axes.at(id).value; }
  /// The config as JSON, with each setting's origin ({"value": ..., "origin": ...}).
  [[nodiscard]] nlohmann::json to_json() const;
  /// to_json() as a report's meta.config carries it (compact: what config_sha256 hashes).
  [[nodiscard]] JsonText to_json_text() const;
  /// to_json() as text, indented by 2, with a final newline.
  [[nodiscard]] std::string json_text() const;
};

/// Limits on config files: parsing refuses more.
inline constexpr std::size_t k_max_config_bytes = std::size_t{4} << 20;
inline constexpr std::size_t k_max_config_depth = 16;
/// Most values one axis may expand to (a range typo must not allocate gigabytes).
inline constexpr std::size_t k_max_axis_values = 4096;
/// Most exclude rules a config may have: each case is matched against each rule.
inline constexpr std::size_t k_max_exclude_rules = 256;
/// Runs per case, config and --repeats alike: [1, k_max_repeats].
inline constexpr std::int64_t k_max_repeats = 100000;

/// The built-in layer alone: vLLM defaults for every knob, tokens 16..8192 doubling.
SweepConfig builtin_config();

/// Parses a config file's text over the built-in layer. `file` names it in errors,
/// which are lp::InputError "<file>:<json pointer>: <message>".
SweepConfig parse_config(std::string_view text, const std::string& file);

/// Reads and parses a config file (lp::UsageError when it cannot be read).
SweepConfig load_config_file(const std::string& path);

/// The embedded configs/default.json, parsed.
SweepConfig load_default_config();

/// The names `--config NAME` takes: the embedded configs/*.json without ".json"
/// ("ci-gate", "default", "full", "seed-48590", "upgrade-gate"), sorted.
std::vector<std::string> embedded_config_stems();

/// The embedded config `name` ("seed-48590"), parsed; its source (report meta, --show-config)
/// is "<embedded>/configs/seed-48590.json", as the default's is. lp::UsageError
/// "--config NAME: no such file or embedded config (embedded: ci-gate, default, ...)"
/// when there is none of that name.
SweepConfig load_embedded_config(std::string_view name);

/// Whether a --config value names a file rather than an embedded config: it holds a
/// '/', ends in ".json", or is an existing file.
bool names_config_file(const std::string& value);

/// What --config VALUE says: the config file (load_config_file) when names_config_file,
/// else the embedded config of that name (load_embedded_config). A file that is not there
/// but whose name is an embedded config's ("configs/seed-48590.json" outside a checkout)
/// throws lp::UsageError "<path>: cannot read: no such file; the embedded config of that
/// name is --config seed-48590".
SweepConfig load_config(const std::string& value);

/// One row of `loraprobe list --configs`.
struct ConfigListing {
  std::string name;         ///< what --config takes ("seed-48590")
  std::string description;  ///< the config's description field
  std::size_t cases = 0;    ///< the cases it plans over the kernel sets of the run
};

/// The rows of `loraprobe list --configs --json`: an array of {name, description, cases}.
JsonText configs_listing_json(const std::vector<ConfigListing>& rows);

/// Parses a flag's text ("256,384", "16..8192*2", "16..128+16", "4096/1024/1024")
/// into the values of `axis`; throws lp::UsageError "<flag>: <message>".
std::vector<AxisValue> parse_flag_values(const AxisInfo& axis, std::string_view text);

/// A seed as written on the command line: a whole number from 0 to 2^64-1, the one
/// seed type of configs, flags and reports. Throws lp::UsageError "<flag> <text>:
/// expected a whole number from 0 to 18446744073709551615", quoting the value as written.
std::uint64_t parse_seed(std::string_view text, std::string_view flag);

/// Replaces an axis's values with a flag's, recording the flag as origin.
void override_axis(SweepConfig& config, AxisId id, std::vector<AxisValue> values, std::string flag);

/// The command line's layer over a config: what sweep's (and inspect --config's) flags say.
struct FlagOverrides {
  std::map<AxisId, std::vector<std::string>> axes;  ///< each axis flag's texts, as typed (repeatable)
  std::optional<std::int64_t> repeats;               ///< --repeats
  std::optional<std::string> seed;                   ///< --seed, as typed
  std::vector<std::string> ptxas;                    ///< --ptxas SPEC: adds ptxas=SPEC to the compiler axis
  std::optional<std::string> model;                  ///< --model NAME
  std::optional<std::int64_t> tp;                    ///< --tp N (with --model, or the config's model)
  std::optional<std::string> vllm_configs;           ///< --vllm-configs DIR
  std::optional<std::string> vllm_gpu;               ///< --vllm-gpu NAME
  std::optional<std::string> vllm_moe_configs;       ///< --vllm-moe-configs DIR
  bool vllm_batch_invariant = false;                 ///< --vllm-batch-invariant
  std::optional<std::int64_t> vllm_max_loras;        ///< --max-loras N
  std::optional<std::int64_t> sm_count;              ///< --sm-count N
  /// --vllm-dual-stream: op lora_linear, gdc true, add_inputs false (over those axes).
  bool vllm_dual_stream = false;
  std::optional<bool> remedies;                      ///< --remedies / --no-remedies
};

/// Expands a range object {"from", "to", "mul"|"step"} of an integer axis into its
/// values (a config file's range, and a flag's FROM..TO*MUL made into one). Throws
/// lp::InputError naming `file` and `ptr` for a malformed range or one too long.
std::vector<nlohmann::json> expand_range(const AxisInfo& axis, const nlohmann::json& range, const std::string& file,
                                         const std::string& ptr);

/// Applies `flags` to `config`: each axis flag replaces the axis (a value given twice
/// is an error), --ptxas adds to the compilers, --repeats and --seed replace theirs.
/// Throws lp::UsageError naming the flag and the value.
void apply_flags(SweepConfig& config, const FlagOverrides& flags);

/// The table `sweep --show-config` prints: setting, values, origin.
std::string format_config(const SweepConfig& config);

}  // namespace lp::plan
