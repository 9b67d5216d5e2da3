#include "plan/plan.hpp"

#include "families/family.hpp"
#include "plan/model_plan.hpp"
#include "plan/tuned.hpp"

#include "plan/vllm_defaults.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <map>
#include <bitset>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <fmt/ranges.h>

#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/sha256.hpp"

namespace lp::plan {

using nlohmann::json;

namespace {

int resolve(const json& value, int vllm_default) {
  return value.is_string() ? vllm_default : value.get<int>();
}

json knobs_json(const KernelKnobs& k, bool with_split_k) {
  json j = {{"block_m", k.block_m}, {"block_n", k.block_n}, {"block_k", k.block_k},
            {"num_warps", k.num_warps}, {"num_stages", k.num_stages}, {"even_k", k.even_k}};
  if (with_split_k) {
    j["split_k"] = k.split_k;
  }
  // Only when not vLLM's default: every case id of a plan without tuned files stays.
  if (k.num_ctas != 1) {
    j["num_ctas"] = k.num_ctas;
  }
  if (with_split_k && k.group_size_m != vllm_defaults().shrink_group_size_m) {
    j["group_size_m"] = k.group_size_m;
  }
  return j;
}

}  // namespace

void count_reason(std::vector<Dropped>& dropped, std::string reason, std::size_t count) {
  for (Dropped& d : dropped) {
    if (d.reason == reason) {
      d.count += count;
      return;
    }
  }
  dropped.push_back({std::move(reason), count});
}

namespace {

/// Does the case value `actual` of an axis match one of a rule's `wanted` values?
bool rule_value_matches(AxisId id, const json& actual, const std::vector<json>& wanted) {
  for (const json& w : wanted) {
    if (id == AxisId::hidden && w.is_number_integer() && actual.is_array()) {
      const bool all_equal = std::all_of(actual.begin(), actual.end(), [&](const json& h) { return h == w; });
      if (all_equal) {
        return true;
      }
      continue;
    }
    if (w == actual) {
      return true;
    }
  }
  return false;
}

/// The case's value of axis `id` for exclude matching; null when the axis does not apply.
json case_axis_value(const Case& c, AxisId id) {
  const KernelKnobs* knobs = c.expand ? &*c.expand : (c.shrink ? &*c.shrink : nullptr);
  switch (id) {
    case AxisId::op:
      return std::string(op_name(c.op));
    case AxisId::input_dtype:
      return family_of(c.op).traits().input_dtype_axis ? json(std::string(dtype_name(c.input_dtype))) : json();
    case AxisId::weight_dtype:
      return std::string(dtype_name(c.weight_dtype));
    case AxisId::num_slices:
      return c.num_slices;
    case AxisId::hidden:
      return c.hidden;
    case AxisId::rank:
      return c.rank;
    case AxisId::num_loras:
      return c.num_loras;
    case AxisId::add_inputs:
      return family_of(c.op).traits().add_inputs_axis ? json(c.add_inputs) : json();
    case AxisId::gdc:
      return family_of(c.op).traits().gdc_axis ? json(c.gdc) : json();
    case AxisId::scale_group:
      return family_of(c.op).traits().scale_group_axis ? json(c.scale_group) : json();
    case AxisId::block_m:
      return knobs->block_m;
    case AxisId::block_n:
      return knobs->block_n;
    case AxisId::block_k:
      return knobs->block_k;
    case AxisId::num_warps:
      return knobs->num_warps;
    case AxisId::num_stages:
      return knobs->num_stages;
    case AxisId::split_k:
      return c.shrink ? json(c.shrink->split_k) : json();
    case AxisId::compiler:
      return c.compiler.to_string();
    case AxisId::amplify:
      return c.amplify;
    case AxisId::triton:
      return c.triton;
    case AxisId::tokens:
      return c.tokens;
  }
  return {};
}

}  // namespace

KernelKnobs vllm_expand_defaults(int num_slices) {
  const VllmDefaults& d = vllm_defaults();
  return num_slices > 1 ? d.expand_more_slices : d.expand_one_slice;
}

KernelKnobs vllm_shrink_defaults(std::int64_t tokens, bool batch_invariant) {
  const VllmDefaults& d = vllm_defaults();
  KernelKnobs k = tokens < d.shrink_small_batch_below ? d.shrink_small_batch : d.shrink_large_batch;
  if (batch_invariant) {
    k.split_k = 1;
  }
  return k;
}

json case_to_json(const Case& c) { return {{"index", c.index}, {"id", c.id}, {"axes", c.axes().to_json()}}; }

std::vector<std::string> resolve_tritons(const SweepConfig& config, const std::vector<std::string>& available) {
  const Setting<std::vector<AxisValue>>& setting = config.axes.at(AxisId::triton);
  std::vector<std::string> out;
  auto add = [&out](const std::string& v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) {
      out.push_back(v);
    }
  };
  const std::string sets = fmt::format("{}", fmt::join(available, ", "));
  for (std::size_t i = 0; i < setting.value.size(); ++i) {
    const std::string v = setting.value[i].text().value_or("");  // the config's reader checked it is a string
    if (v == k_all_tritons) {
      for (const std::string& a : available) {
        add(a);
      }
      continue;
    }
    if (std::find(available.begin(), available.end(), v) == available.end()) {
      const std::string message =
          fmt::format("Triton {} has no kernel set here (sets: {}; add one with --kernel-dir, made by "
                      "scripts/gen_kernels.py --triton {} --out DIR)",
                      v, sets.empty() ? "none" : sets, v);
      if (setting.origin.kind == Origin::Kind::file) {
        throw InputError(setting.origin.where, fmt::format("/axes/triton/{}", i), message);
      }
      throw UsageError(setting.origin.kind == Origin::Kind::flag ? setting.origin.where + " " + v + ": " + message
                                                                 : message);
    }
    add(v);
  }
  return out;
}

namespace {

/// The values of every axis, in axis order (triton resolved against the run's sets),
/// and how many combinations they make; lp::UsageError beyond k_max_combinations.
std::vector<std::vector<json>> axis_lists(const SweepConfig& config, const std::vector<std::string>& available,
                                          std::size_t& combinations) {
  std::vector<std::vector<json>> lists;
  combinations = 1;
  for (const AxisInfo& axis : axis_table()) {
    std::vector<json> values;
    if (axis.id == AxisId::triton) {
      for (const std::string& v : resolve_tritons(config, available)) {
        values.emplace_back(v);
      }
    } else {
      values = to_json_values(config.values(axis.id));
    }
    const std::optional<std::size_t> product = checked_mul(combinations, values.size());
    if (!product || *product > k_max_combinations) {
      throw UsageError(fmt::format("{}: the sweep has more than {} combinations; narrow an axis or add excludes",
                                   config.source.empty() ? config.name : config.source, k_max_combinations));
    }
    combinations = *product;
    lists.push_back(std::move(values));
  }
  return lists;
}

/// The axes' values of one combination into `c` (`v` gives each axis's value);
/// false with `why` when they do not make a LoRA configuration.
template <class Pick>
bool read_case_axes(const Pick& v, Case& c, std::string& why) {
  c.op = *parse_op(v(AxisId::op).template get<std::string>());
  c.tokens = v(AxisId::tokens).template get<std::int64_t>();
  c.rank = v(AxisId::rank).template get<std::int64_t>();
  c.num_slices = v(AxisId::num_slices).template get<int>();
  c.num_loras = v(AxisId::num_loras).template get<int>();
  c.weight_dtype = *parse_dtype(v(AxisId::weight_dtype).template get<std::string>());
  c.input_dtype = *parse_dtype(v(AxisId::input_dtype).template get<std::string>());
  c.add_inputs = v(AxisId::add_inputs).template get<bool>();
  c.gdc = v(AxisId::gdc).template get<bool>();
  c.scale_group = v(AxisId::scale_group).template get<int>();
  if (c.scale_group != 0 && !family_of(c.op).traits().scale_group_axis) {
    why = "scale_group is the FP8 families' block-wise scales: op expand_fp8 or shrink_fp8";
    return false;
  }
  if (c.gdc && !family_of(c.op).traits().gdc_axis) {
    why = "gdc is vLLM's dual-stream chain, a shrink then a dependent expand: op lora_linear";
    return false;
  }
  if (c.gdc && c.add_inputs) {
    why = "vLLM's dual-stream expand never adds into y (its tuned file is _EXPAND_FALSE): gdc needs add_inputs false";
    return false;
  }
  c.compiler = *compile::Compiler::parse(v(AxisId::compiler).template get<std::string>());
  c.amplify = v(AxisId::amplify).template get<int>();
  c.triton = v(AxisId::triton).template get<std::string>();
  const json& hidden = v(AxisId::hidden);
  if (!hidden.is_array()) {
    c.hidden.assign(static_cast<std::size_t>(c.num_slices), hidden.template get<std::int64_t>());
    return true;
  }
  if (static_cast<int>(hidden.size()) != c.num_slices) {
    why = fmt::format("hidden lists {} sizes but num_slices is {}", hidden.size(), c.num_slices);
    return false;
  }
  c.hidden = hidden.template get<std::vector<std::int64_t>>();
  return true;
}

/// What the case's family makes of it (families/family.hpp FamilyTraits): x in the
/// weight dtype, one hidden size where one x is read, no add_inputs where it has none.
bool shape_by_family(Case& c, std::string& why) {
  const FamilyTraits& traits = family_of(c.op).traits();
  if (traits.fixed_input_dtype) {
    c.input_dtype = *traits.fixed_input_dtype;  // the FP8 families' operands
  }
  if (traits.fixed_weight_dtype) {
    c.weight_dtype = *traits.fixed_weight_dtype;
  }
  if (traits.input_is_weight_dtype) {
    if (traits.input_dtype_axis && c.input_dtype != c.weight_dtype) {
      why = fmt::format("{} reads x in the weight dtype (input_dtype must equal weight_dtype)", op_name(c.op));
      return false;
    }
    c.input_dtype = c.weight_dtype;  // x is in the weight dtype (lora_linear's buf is fp32 by construction)
  }
  const bool one_hidden = std::adjacent_find(c.hidden.begin(), c.hidden.end(), std::not_equal_to<>()) == c.hidden.end();
  if (!traits.one_hidden_why.empty() && !one_hidden) {
    why = traits.one_hidden_why;
    return false;
  }
  if (!traits.add_inputs_axis) {
    c.add_inputs = false;
  }
  return true;
}

/// The vLLM engine a plan models: its tuned files, VLLM_BATCH_INVARIANT and --max-loras.
struct VllmEngine {
  const TunedConfigs* tuned = nullptr;
  bool batch_invariant = false;
  /// vLLM's --max-loras; 0 when not given: each case's adapters, at least vLLM's default 1.
  std::int64_t max_loras = 0;
  /// The engine's max_loras for `c`, which keys vLLM's tuned lookup (its lora_ids holds
  /// max_loras + 1 entries, lora_kernel_metadata.py).
  [[nodiscard]] std::int64_t max_loras_of(const Case& c) const { return engine_max_loras(max_loras, c); }
};

/// What vLLM launches with the tuned files: the knobs "vllm" stands for, into
/// `expand` and `shrink`. A family with both knobs reads both files, as vLLM's shrink
/// and expand each do (the dual-stream expand, without ADD_INPUTS, reads
/// _EXPAND_FALSE). False with `why` when vLLM itself would fail on the files.
bool tuned_knobs(Case& c, const VllmEngine& engine, KernelKnobs& expand, KernelKnobs& shrink, std::string& why) {
  const TunedConfigs* tuned = engine.tuned;
  if (tuned == nullptr) {
    return true;
  }
  if (engine.batch_invariant) {
    c.set_tuned("vLLM defaults (VLLM_BATCH_INVARIANT skips the tuned files)");
    return true;
  }
  const FamilyTraits& traits = family_of(c.op).traits();
  const std::int64_t width = *std::max_element(c.hidden.begin(), c.hidden.end());
  std::vector<std::string> described;
  auto take = [&](const std::optional<TunedChoice>& t, KernelKnobs& knobs, const char* file) {
    if (t && !t->vllm_error.empty()) {
      why = t->vllm_error;
      return false;
    }
    if (t) {
      knobs = t->knobs;
      described.push_back(t->describe());
    } else {
      described.push_back(fmt::format("vLLM defaults (no {}_{}.json)", tuned->prefix(), file));
    }
    return true;
  };
  const std::int64_t max_loras = engine.max_loras_of(c);
  if (traits.shrink_knobs &&
      !take(tuned->shrink(max_loras, c.num_slices, c.tokens, c.hidden[0], c.rank), shrink, "SHRINK")) {
    return false;
  }
  if (traits.expand_knobs && !take(tuned->expand(c.add_inputs, max_loras, c.num_slices, c.tokens, c.rank, width),
                                   expand, c.add_inputs ? "EXPAND_TRUE" : "EXPAND_FALSE")) {
    return false;
  }
  c.set_tuned(fmt::format("{}", fmt::join(described, "; ")));
  return true;
}

/// The case's knobs: the axes' values, "vllm" resolved to `e_def` / `s_def`. A
/// family with expand knobs takes its tile from the axes (and a chain's shrink its
/// SPLIT_K); a shrink alone takes its own.
template <class Pick>
void set_knobs(const Pick& v, Case& c, const KernelKnobs& e_def, const KernelKnobs& s_def) {
  const FamilyTraits& traits = family_of(c.op).traits();
  if (!traits.expand_knobs) {
    KernelKnobs k{resolve(v(AxisId::block_m), s_def.block_m),     resolve(v(AxisId::block_n), s_def.block_n),
                  resolve(v(AxisId::block_k), s_def.block_k),     resolve(v(AxisId::num_warps), s_def.num_warps),
                  resolve(v(AxisId::num_stages), s_def.num_stages), resolve(v(AxisId::split_k), s_def.split_k),
                  false};
    k.even_k = c.hidden[0] % (static_cast<std::int64_t>(k.block_k) * k.split_k) == 0;
    k.num_ctas = s_def.num_ctas;  // not axes: what vLLM's defaults or the tuned entry say
    k.group_size_m = s_def.group_size_m;
    c.shrink = k;
    return;
  }
  KernelKnobs k{resolve(v(AxisId::block_m), e_def.block_m),     resolve(v(AxisId::block_n), e_def.block_n),
                resolve(v(AxisId::block_k), e_def.block_k),     resolve(v(AxisId::num_warps), e_def.num_warps),
                resolve(v(AxisId::num_stages), e_def.num_stages), 1, false};
  k.even_k = c.rank % k.block_k == 0;
  k.num_ctas = e_def.num_ctas;
  c.expand = k;
  if (traits.shrink_knobs) {
    KernelKnobs s = s_def;
    s.split_k = resolve(v(AxisId::split_k), s_def.split_k);
    s.even_k = c.hidden[0] % (static_cast<std::int64_t>(s.block_k) * s.split_k) == 0;
    c.shrink = s;
  }
}

/// The case of one combination (`v` gives each axis's value), or nullopt with
/// `why` saying why the combination is not a LoRA configuration.
template <class Pick>
std::optional<Case> case_of(const Pick& v, std::string& why, const VllmEngine& engine) {
  Case c;
  if (!read_case_axes(v, c, why) || !shape_by_family(c, why)) {
    return std::nullopt;
  }
  if (engine.max_loras > 0 && c.num_loras > engine.max_loras) {
    why = fmt::format("vLLM with --max-loras {} holds at most that many adapters in a batch", engine.max_loras);
    return std::nullopt;
  }
  KernelKnobs e_def = vllm_expand_defaults(c.num_slices);
  KernelKnobs s_def = vllm_shrink_defaults(c.tokens, engine.batch_invariant);
  if (!tuned_knobs(c, engine, e_def, s_def, why)) {
    return std::nullopt;
  }
  set_knobs(v, c, e_def, s_def);
  return c;
}

/// The exclude rules, indexed so that matching a case costs one lookup per axis a
/// rule names, however many rules there are (at most k_max_exclude_rules): for each
/// such axis, the rules a value satisfies, and the rules that do not name the axis.
class ExcludeIndex {
 public:
  using Rules = std::bitset<k_max_exclude_rules>;

  explicit ExcludeIndex(const std::vector<ExcludeRule>& rules) {
    if (rules.size() > k_max_exclude_rules) {
      throw UsageError(fmt::format("{} exclude rules, more than the {} a config may have", rules.size(),
                                   k_max_exclude_rules));
    }
    for (std::size_t r = 0; r < rules.size(); ++r) {
      m_all.set(r);
      for (const auto& [id, values] : rules[r].match) {
        Axis& axis = axis_entry(id);
        axis.naming.set(r);
        for (const AxisValue& v : values) {
          axis.wanted.push_back({v.to_json(), r});
        }
      }
    }
    for (Axis& axis : m_axes) {
      axis.others = m_all & ~axis.naming;
    }
  }

  /// The first rule `c` matches, or nullopt.
  [[nodiscard]] std::optional<std::size_t> first_match(const Case& c) const {
    if (m_all.none()) {
      return std::nullopt;
    }
    Rules alive = m_all;
    for (const Axis& axis : m_axes) {
      alive &= satisfied(axis, case_axis_value(c, axis.id));
      if (alive.none()) {
        return std::nullopt;
      }
    }
    for (std::size_t r = 0; r < k_max_exclude_rules; ++r) {
      if (alive.test(r)) {
        return r;
      }
    }
    return std::nullopt;
  }

 private:
  struct Axis {
    AxisId id;
    Rules naming;                                        ///< the rules that name this axis
    Rules others;                                        ///< the rules that do not
    std::vector<std::pair<json, std::size_t>> wanted;    ///< (value, rule) for every value a rule lists
    mutable std::unordered_map<std::string, Rules> cache;  ///< actual value (dumped) -> the rules it satisfies
  };
  /// The rules `actual` satisfies on `axis`; computed once per distinct value (a plan
  /// has few per axis), so a case costs a lookup, not a scan of the rules.
  const Rules& satisfied(const Axis& axis, const json& actual) const {
    std::string key = actual.dump();
    const auto found = axis.cache.find(key);
    if (found != axis.cache.end()) {
      return found->second;
    }
    Rules here = axis.others;  // a rule that does not name the axis does not care
    if (!actual.is_null()) {   // an axis that does not apply matches no rule that names it
      for (const auto& [value, rule] : axis.wanted) {
        if (!here.test(rule) && rule_value_matches(axis.id, actual, {value})) {
          here.set(rule);
        }
      }
    }
    return axis.cache.emplace(std::move(key), here).first->second;
  }
  Axis& axis_entry(AxisId id) {
    for (Axis& a : m_axes) {
      if (a.id == id) {
        return a;
      }
    }
    m_axes.push_back({id, {}, {}, {}, {}});
    return m_axes.back();
  }
  Rules m_all;
  std::vector<Axis> m_axes;
};

/// The canonical axis values of a planned case.
json canonical_axes(const Case& c) {
  json axes = {{"op", op_name(c.op)},
               {"tokens", c.tokens},
               {"rank", c.rank},
               {"hidden", c.hidden},
               {"num_slices", c.num_slices},
               {"num_loras", c.num_loras},
               {"weight_dtype", dtype_name(c.weight_dtype)},
               {"compiler", c.compiler.to_string()},
               {"triton", c.triton}};
  const FamilyTraits& traits = family_of(c.op).traits();
  if (traits.input_dtype_axis) {
    axes["input_dtype"] = dtype_name(c.input_dtype);
  }
  if (const FusedMoeCase* fused = c.fused_moe()) {
    const FusedMoeCase& f = *fused;
    axes["hidden_in"] = f.hidden_in;
    axes["num_experts"] = f.num_experts;
    axes["top_k"] = f.top_k;
    axes["mul_routed_weight"] = f.mul_routed_weight;
    axes["npid_factor"] = f.npid_factor;
  }
  if (c.amplify > 0) {
    axes["amplify"] = c.amplify;
  }
  if (traits.add_inputs_axis) {
    axes["add_inputs"] = c.add_inputs;
  }
  if (c.gdc) {
    axes["gdc"] = true;  // only when on: every case without it keeps the id it always had
  }
  if (traits.scale_group_axis) {
    axes["scale_group"] = c.scale_group;
  }
  const KernelKnobs& main_knobs = c.expand ? *c.expand : *c.shrink;
  axes.update(knobs_json(main_knobs, !traits.expand_knobs));
  if (traits.expand_knobs && traits.shrink_knobs) {
    axes["shrink"] = knobs_json(*c.shrink, true);
  }
  return axes;
}

}  // namespace

json not_applicable_json(const std::vector<Dropped>& not_applicable) {
  json out = json::array();
  for (const Dropped& d : not_applicable) {
    out.push_back({{"reason", d.reason}, {"count", d.count}});
  }
  return out;
}

json not_swept_json(const std::vector<NotSwept>& not_swept) {
  json out = json::array();
  for (const NotSwept& n : not_swept) {
    out.push_back({{"projection", n.projection}, {"why", n.why}});
  }
  return out;
}

std::string case_id(const Case& c) { return sha256_hex(canonical_axes(c).dump()).substr(0, 12); }

void keep_only(Plan& plan, const std::vector<std::string>& ids) {
  std::set<std::string> wanted(ids.begin(), ids.end());
  std::deque<Case> kept;
  for (Case& c : plan.cases) {
    if (wanted.erase(c.id) > 0) {
      kept.push_back(std::move(c));
    }
  }
  if (!wanted.empty()) {
    throw UsageError(fmt::format("--case {}: not a case of this plan ({} cases; sweep --dry-run --json lists their "
                                 "ids)",
                                 fmt::join(wanted, ","), plan.cases.size()));
  }
  plan.cases = std::move(kept);
}

AxisValues Case::axes() const {
  if (own_axes) {
    return *own_axes;
  }
  AxisValues a = AxisValues::from_json(canonical_axes(*this));
  if (!projection().empty()) {
    a.set("projection", projection());
  }
  if (!tuned().empty()) {
    a.set("tuned", tuned());
  }
  return a;
}

namespace {
const std::string k_no_text;
}  // namespace

const std::string& Case::projection() const noexcept { return m_extras ? m_extras->projection : k_no_text; }
const std::string& Case::tuned() const noexcept { return m_extras ? m_extras->tuned : k_no_text; }
const FusedMoeCase* Case::fused_moe() const noexcept {
  return m_extras && m_extras->fused_moe ? &*m_extras->fused_moe : nullptr;
}

Case::Extras& Case::extras() {
  // Copy on write: cases copied from one another (a plan's sub-plans, remedies) share it.
  auto own = m_extras ? std::make_shared<Extras>(*m_extras) : std::make_shared<Extras>();
  m_extras = own;
  return *own;
}

void Case::set_projection(std::string projection) { extras().projection = std::move(projection); }
void Case::set_tuned(std::string tuned) { extras().tuned = std::move(tuned); }
void Case::set_fused_moe(std::optional<FusedMoeCase> fused) { extras().fused_moe = std::move(fused); }

Plan expand_plan(const SweepConfig& config, const std::vector<std::string>& available) {
  if (config.model.value) {
    return expand_model_plan(config, available);
  }
  Plan plan;
  std::optional<TunedConfigs> tuned;
  if (config.vllm_configs.value) {
    const VllmConfigs& v = *config.vllm_configs.value;
    tuned = TunedConfigs::load(v.dir, v.gpu.empty() ? std::string(k_default_vllm_gpu) : v.gpu);
  }
  const VllmEngine engine{tuned ? &*tuned : nullptr, config.vllm_batch_invariant.value, config.vllm_max_loras.value};
  const std::vector<std::vector<json>> lists = axis_lists(config, available, plan.combinations);
  plan.excluded_by_rule.assign(config.exclude.value.size(), 0);
  const ExcludeIndex excludes(config.exclude.value);
  std::unordered_set<std::uint64_t> seen_ids;  // the 48-bit ids as numbers: 5 million fit in a few hundred MB
  std::vector<std::size_t> at(lists.size(), 0);
  for (std::size_t n = 0; n < plan.combinations; ++n) {
    // Odometer over the axes, the last axis (tokens) fastest.
    if (n > 0) {
      for (std::size_t a = lists.size(); a-- > 0;) {
        if (++at[a] < lists[a].size()) {
          break;
        }
        at[a] = 0;
      }
    }
    auto v = [&](AxisId id) -> const json& { return lists[static_cast<std::size_t>(id)][at[static_cast<std::size_t>(id)]]; };
    std::string why;
    std::optional<Case> c = case_of(v, why, engine);
    if (!c) {
      count_reason(plan.not_applicable, why);
      continue;
    }
    if (const std::optional<std::size_t> rule = excludes.first_match(*c)) {
      ++plan.excluded_by_rule[*rule];
      continue;
    }
    c->id = case_id(*c);
    if (!seen_ids.insert(std::stoull(c->id, nullptr, 16)).second) {
      ++plan.duplicates;
      continue;
    }
    c->index = plan.cases.size();
    plan.cases.push_back(std::move(*c));
  }
  return plan;
}

void write_plan_json(std::FILE* file, const SweepConfig& config, const Plan& p) {
  json head = {{"config", config.to_json()},       {"count", p.cases.size()},
               {"combinations", p.combinations},   {"not_applicable", not_applicable_json(p.not_applicable)},
               {"excluded_by_rule", p.excluded_by_rule}, {"duplicates", p.duplicates}};
  if (!p.not_swept.empty()) {
    head["not_swept"] = not_swept_json(p.not_swept);
  }
  if (config.model.value) {
    head["shared_by_projections"] = p.shared_by_projections;
    head["added_by_vllm"] = p.added_by_vllm;
    head["sm_count"] = config.sm_count.value > 0 ? config.sm_count.value : k_default_sm_count;
  }
  if (p.without_variant) {
    head["without_variant"] = not_applicable_json(*p.without_variant);
  }
  std::string text = head.dump(2);
  text.resize(text.size() - 2);  // drop the closing "\n}": the cases follow
  fmt::print(file, "{},\n  \"cases\": [", escape::json_c1(text));
  // One case per line, written as it goes.
  for (std::size_t i = 0; i < p.cases.size(); ++i) {
    fmt::print(file, "{}\n    {}", i == 0 ? "" : ",", escape::json_c1(case_to_json(p.cases[i]).dump()));
  }
  fmt::print(file, "{}]\n}}\n", p.cases.empty() ? "" : "\n  ");
}

}  // namespace lp::plan
