#include "plan/config.hpp"

// The command line's side of a sweep config: axis flags parsed with the axis table's
// rules, and every flag applied over the config (config.cpp reads the files).

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "plan/models.hpp"
#include "util/error.hpp"
#include "util/text.hpp"

namespace lp::plan {

using nlohmann::json;

namespace {

/// The values of one axis flag as parse_flag_values reads them: each checked by the
/// axis table's rules, none twice, at most k_max_axis_values; every error names the
/// flag and its text.
class FlagValues {
 public:
  FlagValues(const AxisInfo& axis, std::string_view text) : m_axis(axis), m_flag(axis.flag), m_text(text) {}

  [[nodiscard]] UsageError fail(const std::string& message) const {
    return UsageError(fmt::format("{} {}: {}", m_flag, m_text, message));
  }

  std::int64_t parse_int(std::string_view s) const {
    std::int64_t v = 0;
    const auto* end = s.data() + s.size();
    const auto [ptr, ec] = std::from_chars(s.data(), end, v);
    if (ec == std::errc::result_out_of_range && ptr == end) {
      throw fail(fmt::format("{} does not fit in a whole number (at most {})", s,
                             std::numeric_limits<std::int64_t>::max()));
    }
    if (ec != std::errc() || ptr != end || s.empty()) {
      throw fail(fmt::format("\"{}\" is not a whole number", s));
    }
    return v;
  }

  void push(json value) {
    if (auto bad = check_sweep_value(m_axis, value)) {
      throw fail(*bad);
    }
    if (std::find(m_values.begin(), m_values.end(), value) != m_values.end()) {
      throw fail(fmt::format("duplicate value {}", format_value(value)));
    }
    if (m_values.size() >= k_max_axis_values) {
      throw fail(fmt::format("more than {} values", k_max_axis_values));
    }
    m_values.push_back(std::move(value));
  }

  /// One comma-separated item, read by the axis's kind.
  void add(std::string_view item) {
    switch (m_axis.kind) {
      case AxisKind::integer:
        if (m_axis.allows_vllm && item == k_vllm_default) {
          push(json(std::string(item)));
        } else if (item.find("..") == std::string_view::npos) {
          push(json(parse_int(item)));
        } else {
          add_range(item);
        }
        break;
      case AxisKind::hidden:
        add_hidden(item);
        break;
      case AxisKind::boolean:
        if (item == "true") {
          push(json(true));
        } else if (item == "false") {
          push(json(false));
        } else {
          throw fail(fmt::format("expected true or false, got \"{}\"", item));
        }
        break;
      case AxisKind::op:
      case AxisKind::dtype:
      case AxisKind::compiler:
      case AxisKind::release:
        push(json(std::string(item)));
        break;
    }
  }

  [[nodiscard]] std::vector<AxisValue> values() const { return to_axis_values(m_values); }

 private:
  /// FROM..TO*MUL or FROM..TO+STEP.
  void add_range(std::string_view item) {
    const std::size_t dots = item.find("..");
    const std::string_view rest = item.substr(dots + 2);
    const std::size_t op = rest.find_first_of("*+");
    if (op == std::string_view::npos) {
      throw fail("a range is FROM..TO*MUL or FROM..TO+STEP");
    }
    json range = {{"from", parse_int(item.substr(0, dots))},
                  {"to", parse_int(rest.substr(0, op))},
                  {rest[op] == '*' ? "mul" : "step", parse_int(rest.substr(op + 1))}};
    try {
      for (json& v : expand_range(m_axis, range, m_flag, "")) {
        push(std::move(v));
      }
    } catch (const InputError& e) {
      throw fail(e.message());
    }
  }

  /// A hidden size, or a list of sizes written with '/' between them.
  void add_hidden(std::string_view item) {
    if (item.find('/') == std::string_view::npos) {
      push(json(parse_int(item)));
      return;
    }
    json sizes = json::array();
    std::size_t s = 0;
    while (s <= item.size()) {
      const std::size_t slash = std::min(item.find('/', s), item.size());
      sizes.push_back(parse_int(item.substr(s, slash - s)));
      s = slash + 1;
    }
    push(std::move(sizes));
  }

  const AxisInfo& m_axis;
  const std::string m_flag;
  const std::string_view m_text;
  std::vector<json> m_values;
};

}  // namespace

std::vector<AxisValue> parse_flag_values(const AxisInfo& axis, std::string_view text) {
  FlagValues values(axis, text);
  if (axis.kind == AxisKind::compiler) {
    values.push(json(std::string(text)));
    return values.values();
  }
  if (text.empty()) {
    throw values.fail("empty axis: give at least one value");
  }
  for (const std::string_view item : split(text)) {
    if (item.empty()) {
      throw values.fail("empty value between commas");
    }
    values.add(item);
  }
  return values.values();
}

std::uint64_t parse_seed(std::string_view text, std::string_view flag) {
  std::uint64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    throw UsageError(fmt::format("{} \"{}\": expected a whole number from 0 to {}", flag, text,
                                 std::numeric_limits<std::uint64_t>::max()));
  }
  return value;
}

void override_axis(SweepConfig& config, AxisId id, std::vector<AxisValue> values, std::string flag) {
  config.axes[id] = {std::move(values), Origin{Origin::Kind::flag, std::move(flag)}};
}

namespace {

/// The flags that say how the user's vLLM runs: its tuned files, VLLM_BATCH_INVARIANT,
/// --max-loras and the dual-stream chain.
void apply_vllm_flags(SweepConfig& config, const FlagOverrides& flags) {
  if (flags.vllm_configs) {
    config.vllm_configs = {VllmConfigs{*flags.vllm_configs, flags.vllm_gpu.value_or("")},
                           {Origin::Kind::flag, "--vllm-configs"}};
  }
  if (flags.vllm_moe_configs) {
    std::error_code ec;
    if (!std::filesystem::is_directory(*flags.vllm_moe_configs, ec)) {
      throw UsageError(fmt::format("--vllm-moe-configs {}: not a folder", *flags.vllm_moe_configs));
    }
    config.vllm_moe_configs = {VllmConfigs{*flags.vllm_moe_configs, flags.vllm_gpu.value_or("")},
                               {Origin::Kind::flag, "--vllm-moe-configs"}};
  }
  if (flags.vllm_gpu && !flags.vllm_configs && !flags.vllm_moe_configs) {
    throw UsageError("--vllm-gpu: goes with --vllm-configs DIR or --vllm-moe-configs DIR");
  }
  if (flags.vllm_batch_invariant) {
    config.vllm_batch_invariant = {true, {Origin::Kind::flag, "--vllm-batch-invariant"}};
  }
  if (flags.vllm_max_loras) {
    const AxisInfo& loras = axis_info(AxisId::num_loras);
    if (*flags.vllm_max_loras < loras.min || *flags.vllm_max_loras > loras.max) {
      throw UsageError(fmt::format("--max-loras {}: expected {} to {}", *flags.vllm_max_loras, loras.min, loras.max));
    }
    config.vllm_max_loras = {*flags.vllm_max_loras, {Origin::Kind::flag, "--max-loras"}};
  }
  for (const auto& [given, flag] : {std::pair{flags.sm_count.has_value(), "--sm-count"},
                                    std::pair{flags.vllm_moe_configs.has_value(), "--vllm-moe-configs"}}) {
    if (given && !config.model.value) {
      throw UsageError(fmt::format("{}: goes with --model (it sets the routed experts' fused-MoE launch)", flag));
    }
  }
  if (flags.sm_count) {
    if (*flags.sm_count < 1 || *flags.sm_count > k_max_sm_count) {
      throw UsageError(fmt::format("--sm-count {}: expected 1 to {}", *flags.sm_count, k_max_sm_count));
    }
    config.sm_count = {*flags.sm_count, {Origin::Kind::flag, "--sm-count"}};
  }
  if (flags.vllm_dual_stream) {
    // VLLM_LORA_ENABLE_DUAL_STREAM on sm_90: every LoRA layer's shrink and expand as one
    // chain, both with USE_GDC, the expand with launch_pdl and without ADD_INPUTS.
    for (const auto id : {AxisId::op, AxisId::gdc, AxisId::add_inputs}) {
      if (flags.axes.count(id) > 0) {
        throw UsageError(fmt::format("--vllm-dual-stream sets {} itself; leave {} out", axis_info(id).key,
                                     axis_info(id).flag));
      }
    }
    override_axis(config, AxisId::op, {AxisValue::from_json("lora_linear")}, "--vllm-dual-stream");
    override_axis(config, AxisId::gdc, {AxisValue::from_json(true)}, "--vllm-dual-stream");
    override_axis(config, AxisId::add_inputs, {AxisValue::from_json(false)}, "--vllm-dual-stream");
  }
}

}  // namespace

void apply_flags(SweepConfig& config, const FlagOverrides& flags) {
  for (const auto& [id, texts] : flags.axes) {
    const AxisInfo& axis = axis_info(id);
    std::vector<AxisValue> values;
    for (const std::string& text : texts) {
      for (const AxisValue& v : parse_flag_values(axis, text)) {
        if (std::find(values.begin(), values.end(), v) != values.end()) {
          throw UsageError(fmt::format("{} {}: duplicate value {}", axis.flag, text, format_value(v.to_json())));
        }
        values.push_back(v);
      }
    }
    override_axis(config, id, std::move(values), std::string(axis.flag));
  }
  if (!flags.ptxas.empty()) {
    // --ptxas adds to the compilers (the config's, or --compiler's), as in inspect.
    std::vector<AxisValue> values = config.values(AxisId::compiler);
    for (const std::string& spec : flags.ptxas) {
      const AxisValue value = AxisValue::from_json(compile::Compiler::with_ptxas(spec).to_string());
      if (std::find(values.begin(), values.end(), value) == values.end()) {
        values.push_back(value);
      }
    }
    override_axis(config, AxisId::compiler, std::move(values), "--ptxas");
  }
  if (flags.model || flags.tp) {
    ModelChoice m = config.model.value.value_or(ModelChoice{});
    if (flags.model) {
      m.name = *flags.model;
    }
    if (flags.tp) {
      if (*flags.tp < 1 || *flags.tp > 64) {
        throw UsageError(fmt::format("--tp {}: expected a whole number in [1, 64]", *flags.tp));
      }
      m.tp = *flags.tp;
    }
    if (m.name.empty()) {
      throw UsageError("--tp: needs a model (--model NAME, or the config's \"model\")");
    }
    (void)projections(find_model(m.name), m.tp);  // refuses an unknown name or a tp that does not divide
    config.model = {m, {Origin::Kind::flag, flags.model ? "--model" : "--tp"}};
  }
  if (flags.remedies) {
    config.remedies = {*flags.remedies, {Origin::Kind::flag, *flags.remedies ? "--remedies" : "--no-remedies"}};
  }
  apply_vllm_flags(config, flags);
  if (flags.repeats) {
    if (*flags.repeats < 1 || *flags.repeats > k_max_repeats) {
      throw UsageError(fmt::format("--repeats {}: expected a whole number in [1, {}]", *flags.repeats, k_max_repeats));
    }
    config.repeats = {*flags.repeats, {Origin::Kind::flag, "--repeats"}};
  }
  if (flags.seed) {
    config.seed = {parse_seed(*flags.seed, "--seed"), {Origin::Kind::flag, "--seed"}};
  }
}

}  // namespace lp::plan
