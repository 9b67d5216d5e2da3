#pragma once
// The sweep axes: one table drives config parsing, CLI flags, validation,
// excludes, --show-config and the case JSON, so an axis is described once.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "model/dtype.hpp"
#include "model/problem.hpp"
#include "model/axis_values.hpp"

namespace lp::plan {

// The op and the element types are the host model's (model/problem.hpp, model/dtype.hpp):
// lp::Op with op_name/parse_op, lp::DType with dtype_name/parse_dtype.

/// Every axis a sweep can vary, in plan-expansion order (outermost first).
enum class AxisId {
  triton,
  op,
  input_dtype,
  weight_dtype,
  num_slices,
  hidden,
  rank,
  num_loras,
  add_inputs,
  gdc,
  scale_group,
  block_m,
  block_n,
  block_k,
  num_warps,
  num_stages,
  split_k,
  compiler,
  amplify,
  tokens,
};

/// How an axis's values are spelled and checked.
enum class AxisKind {
  integer,   ///< whole numbers within [min, max], optionally powers of two; ranges allowed
  hidden,    ///< a whole number, or a list of one per slice
  op,        ///< expand | shrink | lora_linear
  dtype,     ///< fp32 | bf16 | fp16
  boolean,   ///< true | false
  compiler,  ///< prebuilt | driver | ptxas=<path, version or toolkit/triton>
  release,   ///< a Triton release "3.8.0", or "all" (every kernel set of the run)
};

/// One row of the axis table.
struct AxisInfo {
  AxisId id;
  std::string_view key;          ///< JSON key in configs and reports
  std::string_view flag;         ///< CLI flag that overrides it
  AxisKind kind;
  std::int64_t min = 0;          ///< integer axes: smallest valid value
  std::int64_t max = 0;          ///< integer axes: largest valid value
  bool power_of_two = false;     ///< integer axes: values must be powers of two
  bool allows_vllm = false;      ///< accepts "vllm": vLLM's default for the op and token count
  std::string_view description;  ///< one line for --help and the schema
  std::string_view old_key = {};   ///< the deprecated spelling still read in configs ("ranks"), or empty
  std::string_view old_flag = {};  ///< the deprecated flag still read ("--ranks"), or empty
};

/// All axes, in AxisId order.
const std::vector<AxisInfo>& axis_table();
/// The row of `id`.
const AxisInfo& axis_info(AxisId id);
/// The row whose key is `key`, or nullptr. With `deprecated`, an old spelling
/// (AxisInfo::old_key) also finds its row, and *deprecated says that it did.
const AxisInfo* find_axis(std::string_view key, bool* deprecated = nullptr);

/// The value spelled "vllm" in configs: resolved per case to vLLM's default.
inline constexpr std::string_view k_vllm_default = "vllm";
/// The `triton` value meaning every kernel set of the run (the default: the question is
/// always "which stack?").
inline constexpr std::string_view k_all_tritons = "all";

/// A JSON whole number as int64, or nullopt when it is not one or does not fit
/// (nlohmann keeps 2^63..2^64-1 as unsigned; reading those as int64 would wrap).
std::optional<std::int64_t> as_int64(const nlohmann::json& value);

/// Checks one already-expanded value (no ranges) of `axis`; returns the message
/// naming the value when it is invalid, nullopt when valid.
std::optional<std::string> check_value(const AxisInfo& axis, const nlohmann::json& value);
/// check_value for a value a sweep is asked to run (a config's or a flag's axis list),
/// which also refuses op fused_moe: its cases need a model's experts (--model). A
/// report's cases and exclude rules may name it.
std::optional<std::string> check_sweep_value(const AxisInfo& axis, const nlohmann::json& value);

/// Spells a value as the CLI and tables print it (4096/1024/1024 for per-slice hidden).
std::string format_value(const nlohmann::json& value);

/// One table cell: axes[key] as format_value spells it, "y"/"n" for booleans, and
/// "-" when the key is absent or null (an axis that does not apply).
std::string format_cell(const AxisValues& axes, std::string_view key);

/// axes[key] as format_value spells it, "?" when the key is absent or null.
std::string axis_text(const AxisValues& axes, std::string_view key);

/// A short label of a case's configuration, its axes but tokens:
/// "t3.8.0 expand fp32>bf16 r64 h4096 m64n128k32 w4s2 add prebuilt".
std::string row_label(const AxisValues& axes);

}  // namespace lp::plan
