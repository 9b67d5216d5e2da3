#include "plan/axes.hpp"

#include "families/family.hpp"
#include "compile/compiler.hpp"
#include "util/release.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <limits>
#include <nlohmann/json.hpp>

namespace lp::plan {

namespace {

constexpr std::int64_t k_max_tokens = std::int64_t{1} << 20;

const std::vector<AxisInfo> k_axes = {
    {AxisId::triton, "triton", "--triton", AxisKind::release, 0, 0, false, false,
     "the Triton version whose kernel set a case runs (3.6.0, 3.9.0, ...), or all: every embedded and --kernel-dir set"},
    {AxisId::op, "op", "--op", AxisKind::op, 0, 0, false, false,
     "LoRA operation: expand (buf -> y), shrink (x -> buf), lora_linear (shrink then expand), expand_fp8 and "
     "shrink_fp8 (vLLM's FP8 w8a8 kernels)"},
    {AxisId::input_dtype, "input_dtype", "--input-dtype", AxisKind::dtype, 0, 0, false, false,
     "dtype of the kernel's input (expand: buf; shrink: x, which must equal weight_dtype)"},
    {AxisId::weight_dtype, "weight_dtype", "--weight-dtype", AxisKind::dtype, 0, 0, false, false,
     "dtype of the LoRA weights and of the expand output (bf16 or fp16)"},
    {AxisId::num_slices, "num_slices", "--num-slices", AxisKind::integer, 1, 3, false, false,
     "number of output slices (1; 2 or 3 for merged projections such as qkv)"},
    {AxisId::hidden, "hidden", "--hidden", AxisKind::hidden, 1, 131072, false, false,
     "hidden size per slice; a list gives one size per slice (GQA qkv has unequal slices)"},
    {AxisId::rank, "rank", "--rank", AxisKind::integer, 1, 4096, false, false, "LoRA rank", "ranks", "--ranks"},
    {AxisId::num_loras, "num_loras", "--num-loras", AxisKind::integer, 1, 1024, false, false,
     "adapters in the batch; above 1 tokens are shuffled over adapters, some with none (-1)"},
    {AxisId::add_inputs, "add_inputs", "--add-inputs", AxisKind::boolean, 0, 0, false, false,
     "expand adds into the base layer output (ADD_INPUTS)"},
    {AxisId::gdc, "gdc", "--gdc", AxisKind::boolean, 0, 0, false, false,
     "lora_linear: vLLM's dual-stream chain (VLLM_LORA_ENABLE_DUAL_STREAM): shrink and expand with USE_GDC, the "
     "expand launched with programmatic dependent launch after a shrink whose tail is slowed down"},
    {AxisId::scale_group, "scale_group", "--scale-group", AxisKind::integer, 0, 1024, false, false,
     "expand_fp8 and shrink_fp8: the block-wise scales' group (group_n = group_k), or 0 for per-tensor scales"},
    {AxisId::block_m, "block_m", "--block-m", AxisKind::integer, 16, 256, true, true, "BLOCK_M tile rows"},
    {AxisId::block_n, "block_n", "--block-n", AxisKind::integer, 16, 256, true, true, "BLOCK_N tile columns"},
    {AxisId::block_k, "block_k", "--block-k", AxisKind::integer, 16, 256, true, true, "BLOCK_K reduction step"},
    {AxisId::num_warps, "num_warps", "--num-warps", AxisKind::integer, 1, 16, true, true, "warps per program"},
    {AxisId::num_stages, "num_stages", "--num-stages", AxisKind::integer, 1, 8, false, true,
     "software-pipelining depth of the k-loop"},
    {AxisId::split_k, "split_k", "--split-k", AxisKind::integer, 1, 256, false, true,
     "shrink: K splits added with atomics"},
    {AxisId::compiler, "compiler", "--compiler", AxisKind::compiler, 0, 0, false, false,
     "how the PTX becomes SASS: prebuilt (Triton's cubin), driver (cuLink JIT), ptxas=PATH|VERSION|toolkit|triton",
     "compilers", ""},
    {AxisId::amplify, "amplify", "--amplify", AxisKind::integer, 0, k_max_amplify, false, false,
     "dependent wgmma pairs queued before each register-A wgmma of the expand kernel (0: none), so that an H100 "
     "or H200 shows a latent hazard (src/ptx/amplify.hpp, docs/amplify.md)"},
    {AxisId::tokens, "tokens", "--tokens", AxisKind::integer, 1, k_max_tokens, false, false,
     "number of tokens (rows) in the batch"},
};

bool is_power_of_two(std::int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

std::optional<std::string> check_integer(const AxisInfo& axis, const nlohmann::json& value) {
  if (value.is_string() && axis.allows_vllm && value.get<std::string>() == k_vllm_default) {
    return std::nullopt;
  }
  if (!value.is_number_integer()) {
    return fmt::format("expected {}, got {}", axis.allows_vllm ? "a whole number or \"vllm\"" : "a whole number",
                       value.dump());
  }
  const std::optional<std::int64_t> v = as_int64(value);
  if (!v || *v < axis.min || *v > axis.max) {
    return fmt::format("{} is out of range [{}, {}]", value.dump(), axis.min, axis.max);
  }
  if (axis.power_of_two && !is_power_of_two(*v)) {
    return fmt::format("{} is not a power of two", *v);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> as_int64(const nlohmann::json& value) {
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<std::int64_t>(u);
  }
  if (value.is_number_integer()) {
    return value.get<std::int64_t>();
  }
  return std::nullopt;
}

const std::vector<AxisInfo>& axis_table() { return k_axes; }

const AxisInfo& axis_info(AxisId id) { return k_axes.at(static_cast<std::size_t>(id)); }

const AxisInfo* find_axis(std::string_view key, bool* deprecated) {
  for (const AxisInfo& axis : k_axes) {
    if (axis.key == key) {
      return &axis;
    }
  }
  if (deprecated != nullptr) {
    for (const AxisInfo& axis : k_axes) {
      if (!axis.old_key.empty() && axis.old_key == key) {
        *deprecated = true;
        return &axis;
      }
    }
  }
  return nullptr;
}

std::optional<std::string> check_sweep_value(const AxisInfo& axis, const nlohmann::json& value) {
  if (const KernelFamily* f = axis.id == AxisId::op && value.is_string() ? family_named(value.get<std::string>())
                                                                          : nullptr;
      f != nullptr && !f->traits().off_op_axis_why.empty()) {
    return std::string(f->traits().off_op_axis_why);  // e.g. fused_moe: its cases need a model's experts
  }
  if (axis.kind == AxisKind::dtype && value.is_string() && parse_dtype(value.get<std::string>()) == DType::e4m3) {
    return "fp8e4m3 is not a dtype axis value: the FP8 families (op expand_fp8, shrink_fp8) fix their operands' dtypes";
  }
  return check_value(axis, value);
}

std::optional<std::string> check_value(const AxisInfo& axis, const nlohmann::json& value) {
  switch (axis.kind) {
    case AxisKind::integer:
      return check_integer(axis, value);
    case AxisKind::hidden: {
      if (value.is_array()) {
        if (value.empty() || value.size() > 3) {
          return fmt::format("a per-slice hidden list has 1 to 3 sizes, got {}", value.size());
        }
        for (const auto& item : value) {
          if (auto bad = check_integer(axis, item)) {
            return bad;
          }
        }
        return std::nullopt;
      }
      return check_integer(axis, value);
    }
    case AxisKind::op: {
      // Any family's name: a report's cases and an exclude rule may name fused_moe;
      // check_sweep_value refuses a family the op axis may not plan.
      if (!value.is_string() || !parse_op(value.get<std::string>())) {
        std::vector<std::string_view> names;
        for (const KernelFamily* f : families()) {
          if (f->traits().off_op_axis_why.empty()) {
            names.push_back(f->name());
          }
        }
        return fmt::format("expected one of {}, got {}", fmt::join(names, ", "), value.dump());
      }
      return std::nullopt;
    }
    case AxisKind::dtype:
      if (!value.is_string() || !parse_dtype(value.get<std::string>())) {
        return fmt::format("expected one of fp32, bf16, fp16, got {}", value.dump());
      }
      if (axis.id == AxisId::weight_dtype && value.get<std::string>() == "fp32") {
        return "weight_dtype fp32 is not a LoRA configuration (weights are bf16 or fp16)";
      }
      return std::nullopt;
    case AxisKind::boolean:
      if (!value.is_boolean()) {
        return fmt::format("expected true or false, got {}", value.dump());
      }
      return std::nullopt;
    case AxisKind::compiler:
      if (!value.is_string()) {
        return fmt::format("expected a compiler name, got {}", value.dump());
      }
      return compile::compiler_syntax_error(value.get<std::string>());
    case AxisKind::release:
      if (value.is_string() && (value.get<std::string>() == k_all_tritons || parse_release(value.get<std::string>()))) {
        return std::nullopt;
      }
      return fmt::format("expected a Triton version such as 3.8.0, or all, got {}", value.dump());
  }
  return "unknown axis kind";
}

std::string format_value(const nlohmann::json& value) {
  if (value.is_string()) {
    return value.get<std::string>();
  }
  if (value.is_array()) {
    std::string out;
    for (const auto& item : value) {
      if (!out.empty()) {
        out += '/';
      }
      out += format_value(item);
    }
    return out;
  }
  return value.dump();
}

std::string format_cell(const AxisValues& axes, std::string_view key) {
  const nlohmann::json value = axes.value(key);
  if (value.is_null()) {
    return "-";
  }
  if (value.is_boolean()) {
    return value.get<bool>() ? "y" : "n";
  }
  return format_value(value);
}

std::string axis_text(const AxisValues& axes, std::string_view key) {
  const nlohmann::json value = axes.value(key);
  return value.is_null() ? "?" : format_value(value);
}

std::string row_label(const AxisValues& axes) {
  // Triton first: the same configuration under two Tritons is two rows, and the
  // question a row answers is "this stack, this config".
  std::string label = axes.contains("triton") ? fmt::format("t{} ", axis_text(axes, "triton")) : std::string();
  label += axis_text(axes, "op");
  if (axes.contains("input_dtype")) {
    label += fmt::format(" {}>{}", axis_text(axes, "input_dtype"), axis_text(axes, "weight_dtype"));
  } else {
    label += fmt::format(" {}", axis_text(axes, "weight_dtype"));
  }
  label += fmt::format(" r{} h{}", axis_text(axes, "rank"), axis_text(axes, "hidden"));
  if (axes.contains("num_experts")) {
    // fused_moe: K, the experts and top_k, "rw" for the routing weight (the down
    // projection), and NPID_FACTOR when it splits N.
    label += fmt::format(" k{} e{}x{}{}", axis_text(axes, "hidden_in"), axis_text(axes, "num_experts"),
                         axis_text(axes, "top_k"), axes.boolean("mul_routed_weight").value_or(false) ? " rw" : "");
    if (axes.integer("npid_factor").value_or(1) > 1) {
      label += fmt::format(" p{}", axis_text(axes, "npid_factor"));
    }
  }
  if (axes.integer("num_loras").value_or(1) > 1) {
    label += fmt::format(" L{}", axis_text(axes, "num_loras"));
  }
  label += fmt::format(" m{}n{}k{} w{}s{}", axis_text(axes, "block_m"), axis_text(axes, "block_n"), axis_text(axes, "block_k"),
                       axis_text(axes, "num_warps"), axis_text(axes, "num_stages"));
  if (axes.contains("split_k")) {
    label += fmt::format(" sk{}", axis_text(axes, "split_k"));
  }
  if (axes.contains("add_inputs")) {
    label += axes.boolean("add_inputs").value_or(false) ? " add" : " noadd";
  }
  if (axes.boolean("gdc").value_or(false)) {
    label += " gdc";  // vLLM's dual-stream chain: not the same row as the plain one
  }
  if (const std::optional<std::int64_t> group = axes.integer("scale_group")) {
    label += *group > 0 ? fmt::format(" g{}", *group) : std::string(" per-tensor");  // the FP8 families' scales
  }
  label += fmt::format(" {}", axis_text(axes, "compiler"));
  if (axes.contains("amplify")) {
    label += fmt::format(" amp{}", axis_text(axes, "amplify"));  // D queued wgmma pairs (src/ptx/amplify.hpp)
  }
  return label;
}

}  // namespace lp::plan
