#include "plan/config.hpp"

#include <vector>

#include <optional>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "plan/embedded_configs.hpp"
#include "plan/models.hpp"
#include "util/checked.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"
#include "util/text.hpp"
#include "util/files.hpp"
#include "util/sha256.hpp"

namespace lp::plan {

using nlohmann::json;

namespace {

const std::vector<std::string_view> k_top_level_keys = {"$schema",   "name",    "description", "axes",    "repeats",
                                                        "seed",      "tolerance", "exclude",   "model", "remedies"};

std::string did_you_mean(std::string_view key, const std::vector<std::string_view>& known) {
  if (const std::optional<std::string_view> best = nearest(key, known)) {
    return fmt::format(" (did you mean \"{}\"?)", *best);
  }
  std::vector<std::string_view> list;
  std::copy_if(known.begin(), known.end(), std::back_inserter(list), [](std::string_view k) { return k != "$schema"; });
  return fmt::format(" (known: {})", fmt::join(list, ", "));
}

std::vector<std::string_view> axis_keys() {
  std::vector<std::string_view> keys;
  for (const AxisInfo& axis : axis_table()) {
    keys.push_back(axis.key);
  }
  return keys;
}

/// Parses JSON text with the size and nesting limits; throws InputError.
json parse_json_limited(std::string_view text, const std::string& file) {
  if (text.size() > k_max_config_bytes) {
    throw InputError(file, "", fmt::format("config is {} bytes, over the limit of {}", text.size(), k_max_config_bytes));
  }
  // Depth first, in one pass: the callback below keeps a pointer per open level, which
  // would cost depth squared before a limit inside it could say no.
  require_json_nesting(text, file, k_max_config_depth);
  // A key written twice in one object is an error, as an unknown key is: JSON parsers
  // disagree on which one wins, and the user meant one of them. The stack holds, per
  // open object or array, its pointer, the keys seen so far and the current key.
  struct Level {
    std::string pointer;
    bool object = false;
    std::set<std::string> keys;
    std::string key;
    std::size_t index = 0;
  };
  std::vector<Level> open;
  std::optional<std::string> duplicate;  // the pointer of the repeated key
  auto child_pointer = [&open]() {
    if (open.empty()) {
      return std::string();
    }
    const Level& parent = open.back();
    return parent.pointer + "/" + (parent.object ? json_pointer_token(parent.key) : std::to_string(parent.index));
  };
  auto value_done = [&open]() {
    if (!open.empty() && !open.back().object) {
      ++open.back().index;
    }
  };
  json::parser_callback_t check = [&](int /*depth*/, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        open.push_back({child_pointer(), event == json::parse_event_t::object_start, {}, {}, 0});
        break;
      case json::parse_event_t::key:
        if (!open.back().keys.insert(parsed.get<std::string>()).second && !duplicate) {
          duplicate = open.back().pointer + "/" + json_pointer_token(parsed.get<std::string>());
        }
        open.back().key = parsed.get<std::string>();
        break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end:
        open.pop_back();
        value_done();
        break;
      case json::parse_event_t::value:
        value_done();
        break;
    }
    return true;
  };
  try {
    json doc = json::parse(text.begin(), text.end(), check, /*allow_exceptions=*/true, /*ignore_comments=*/false);
    if (duplicate) {
      throw InputError(file, *duplicate, "this key is written twice in its object; keep one");
    }
    return doc;
  } catch (const json::exception& e) {  // parse_error, and out_of_range for numbers that overflow
    throw InputError(file, "", "invalid JSON: " + json_error_text(e));
  }
}

std::int64_t integer_field(const json& object, std::string_view key, const std::string& file, const std::string& ptr) {
  const auto it = object.find(key);
  if (it == object.end()) {
    throw InputError(file, ptr, fmt::format("range needs \"{}\"", key));
  }
  if (!it->is_number_integer()) {
    throw InputError(file, ptr + "/" + std::string(key), fmt::format("expected a whole number, got {}", it->dump()));
  }
  const std::optional<std::int64_t> v = as_int64(*it);
  if (!v) {
    throw InputError(file, ptr + "/" + std::string(key),
                     fmt::format("{} is above the largest whole number a range takes, {}", it->dump(),
                                 std::numeric_limits<std::int64_t>::max()));
  }
  return *v;
}

}  // namespace

std::vector<json> expand_range(const AxisInfo& axis, const json& range, const std::string& file,
                               const std::string& ptr) {
  if (axis.kind != AxisKind::integer) {
    throw InputError(file, ptr, fmt::format("{} takes no ranges, only values", axis.key));
  }
  for (const auto& [key, value] : range.items()) {
    if (key != "from" && key != "to" && key != "mul" && key != "step") {
      throw InputError(file, ptr + "/" + json_pointer_token(key),
                       fmt::format("unknown key \"{}\" in a range (from, to, and mul or step)", key));
    }
  }
  const bool has_mul = range.contains("mul");
  const bool has_step = range.contains("step");
  if (has_mul == has_step) {
    throw InputError(file, ptr, "a range needs exactly one of \"mul\" (geometric) or \"step\" (arithmetic)");
  }
  const std::int64_t from = integer_field(range, "from", file, ptr);
  const std::int64_t to = integer_field(range, "to", file, ptr);
  if (from > to) {
    throw InputError(file, ptr, fmt::format("range from {} is above to {}", from, to));
  }
  const std::int64_t by = integer_field(range, has_mul ? "mul" : "step", file, ptr);
  if (has_mul ? by < 2 : by < 1) {
    throw InputError(file, ptr + (has_mul ? "/mul" : "/step"),
                     fmt::format("{} must be at least {}, got {}", has_mul ? "mul" : "step", has_mul ? 2 : 1, by));
  }
  // Multiplying a value below 1 never climbs towards `to`: 0 stays 0, negatives run away from it.
  if (has_mul && from < 1) {
    throw InputError(file, ptr + "/from", fmt::format("a range with \"mul\" starts at 1 or more, got {}", from));
  }
  std::vector<json> values;
  // Each step is checked: a next value that does not fit in int64 is past `to`, so the range ends there.
  for (std::optional<std::int64_t> v = from; v && *v <= to;
       v = has_mul ? checked_mul(*v, by) : checked_add(*v, by)) {
    if (values.size() >= k_max_axis_values) {
      throw InputError(file, ptr, fmt::format("range gives more than {} values", k_max_axis_values));
    }
    values.emplace_back(*v);
  }
  return values;
}

namespace {

/// The values of one axis as written in a file: a list, a range, or one value.
std::vector<json> parse_axis_values(const AxisInfo& axis, const json& node, const std::string& file,
                                    const std::string& ptr, bool allow_vllm) {
  std::vector<std::pair<json, std::string>> raw;  // value, pointer
  if (node.is_array()) {
    if (node.empty()) {
      throw InputError(file, ptr, fmt::format("empty axis: {} needs at least one value", axis.key));
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string item_ptr = fmt::format("{}/{}", ptr, i);
      if (node[i].is_object()) {
        for (json& v : expand_range(axis, node[i], file, item_ptr)) {
          raw.emplace_back(std::move(v), item_ptr);
        }
      } else {
        raw.emplace_back(node[i], item_ptr);
      }
    }
  } else if (node.is_object()) {
    for (json& v : expand_range(axis, node, file, ptr)) {
      raw.emplace_back(std::move(v), ptr);
    }
  } else {
    raw.emplace_back(node, ptr);
  }
  if (raw.size() > k_max_axis_values) {
    throw InputError(file, ptr, fmt::format("{} values, over the limit of {}", raw.size(), k_max_axis_values));
  }
  std::vector<json> values;
  for (auto& [value, where] : raw) {
    if (!allow_vllm && value.is_string() && value.get<std::string>() == k_vllm_default) {
      throw InputError(file, where, "\"vllm\" cannot be matched here: name the resolved value");
    }
    if (auto bad = allow_vllm ? check_sweep_value(axis, value) : check_value(axis, value)) {
      throw InputError(file, where, *bad);
    }
    if (std::find(values.begin(), values.end(), value) != values.end()) {
      throw InputError(file, where, fmt::format("duplicate value {}", format_value(value)));
    }
    values.push_back(std::move(value));
  }
  return values;
}

Tolerance parse_tolerance(const json& node, const std::string& file, const std::string& ptr) {
  if (!node.is_object()) {
    throw InputError(file, ptr, fmt::format("expected an object {{\"atol\": ..., \"rtol\": ...}}, got {}", node.dump()));
  }
  Tolerance tol;
  for (const auto& [key, value] : node.items()) {
    const std::string item_ptr = ptr + "/" + json_pointer_token(key);
    if (key != "atol" && key != "rtol") {
      throw InputError(file, item_ptr, fmt::format("unknown key \"{}\" (atol, rtol)", key));
    }
    if (!value.is_number()) {
      throw InputError(file, item_ptr, fmt::format("expected a number, got {}", value.dump()));
    }
    const double v = value.get<double>();
    if (!std::isfinite(v) || v < 0.0 || v > 1.0) {
      throw InputError(file, item_ptr, fmt::format("{} must be within [0, 1], got {}", key, value.dump()));
    }
    (key == "atol" ? tol.atol : tol.rtol) = v;
  }
  if (!node.contains("atol") || !node.contains("rtol")) {
    throw InputError(file, ptr, "a tolerance needs both atol and rtol");
  }
  return tol;
}

Setting<std::vector<AxisValue>> builtin_axis(const std::vector<json>& values) {
  return {to_axis_values(values), Origin{Origin::Kind::builtin, ""}};
}

std::vector<json> tokens_16_to_8192() {
  std::vector<json> v;
  for (std::int64_t t = 16; t <= 8192; t *= 2) {
    v.emplace_back(t);
  }
  return v;
}

}  // namespace

std::string Origin::describe() const {
  switch (kind) {
    case Kind::builtin:
      return "default";
    case Kind::file:
      return "file " + where;
    case Kind::flag:
      return "flag " + where;
  }
  return "?";
}

SweepConfig builtin_config() {
  SweepConfig c;
  c.name = "builtin";
  const json vllm = std::string(k_vllm_default);
  c.axes[AxisId::triton] = builtin_axis({std::string(k_all_tritons)});
  c.axes[AxisId::op] = builtin_axis({"expand"});
  c.axes[AxisId::input_dtype] = builtin_axis({"fp32"});
  c.axes[AxisId::weight_dtype] = builtin_axis({"bf16"});
  c.axes[AxisId::num_slices] = builtin_axis({1});
  c.axes[AxisId::hidden] = builtin_axis({4096});
  c.axes[AxisId::rank] = builtin_axis({64});
  c.axes[AxisId::num_loras] = builtin_axis({1});
  c.axes[AxisId::add_inputs] = builtin_axis({true});
  c.axes[AxisId::gdc] = builtin_axis({false});
  c.axes[AxisId::scale_group] = builtin_axis({0});
  for (AxisId id : {AxisId::block_m, AxisId::block_n, AxisId::block_k, AxisId::num_warps, AxisId::num_stages,
                    AxisId::split_k}) {
    c.axes[id] = builtin_axis({vllm});
  }
  c.axes[AxisId::compiler] = builtin_axis({"prebuilt"});
  c.axes[AxisId::amplify] = builtin_axis({0});
  c.axes[AxisId::tokens] = builtin_axis(tokens_16_to_8192());
  c.repeats = {3, {}};
  c.seed = {48590, {}};
  c.exclude = {{}, {}};
  return c;
}

namespace {

/// The axis a config key names; an old spelling is read and noted. Throws
/// lp::InputError for a key that is no axis.
const AxisInfo& axis_of_key(const std::string& key, const std::string& file, const std::string& ptr,
                            std::vector<std::string>& notes) {
  bool deprecated = false;
  const AxisInfo* axis = find_axis(key, &deprecated);
  if (axis == nullptr) {
    throw InputError(file, ptr, fmt::format("unknown axis \"{}\"{}", key, did_you_mean(key, axis_keys())));
  }
  if (deprecated) {
    notes.push_back(fmt::format("{}:{}: write {} ({} is deprecated)", file, ptr, axis->key, key));
  }
  return *axis;
}

}  // namespace

namespace {

/// The config's "name": printed on terminals (plan and verdict tables), so it holds
/// no control character.
std::string name_of(const json& value, const std::string& file) {
  if (!value.is_string()) {
    throw InputError(file, "/name", fmt::format("expected a string, got {}", value.dump()));
  }
  std::string name = value.get<std::string>();
  for (const char ch : name) {
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) {
      throw InputError(file, "/name",
                       fmt::format("contains the control character U+{:04X}; a name is printed on terminals",
                                   static_cast<unsigned>(static_cast<unsigned char>(ch))));
    }
  }
  return name;
}

/// The config's "axes" into `c` (each axis once, whatever its spelling).
void read_axes(const json& axes, const std::string& file, const Origin& from_file, SweepConfig& c) {
  if (!axes.is_object()) {
    throw InputError(file, "/axes", fmt::format("expected an object of axes, got {}", axes.dump()));
  }
  std::set<AxisId> seen;
  for (const auto& [key, value] : axes.items()) {
    const std::string ptr = "/axes/" + json_pointer_token(key);
    const AxisInfo& axis = axis_of_key(key, file, ptr, c.notes);
    if (!seen.insert(axis.id).second) {
      throw InputError(file, ptr, fmt::format("axis {} is given twice (as {} and {})", axis.key, axis.key, axis.old_key));
    }
    c.axes[axis.id] = {to_axis_values(parse_axis_values(axis, value, file, ptr, /*allow_vllm=*/true)), from_file};
  }
}

/// The config's "model": {"name": "qwen3-8b", "tp": 2}, or just the name; a preset
/// that has it.
ModelChoice model_of(const json& value, const std::string& file) {
  ModelChoice m;
  if (value.is_string()) {
    m.name = value.get<std::string>();
  } else if (value.is_object() && value.contains("name") && value["name"].is_string()) {
    for (const auto& [key, item] : value.items()) {
      if (key != "name" && key != "tp") {
        throw InputError(file, "/model/" + key, fmt::format("unknown key \"{}\" (name, tp)", key));
      }
    }
    m.name = value["name"].get<std::string>();
    if (value.contains("tp")) {
      const json& tp = value["tp"];
      if (!tp.is_number_integer() || tp.get<std::int64_t>() < 1 || tp.get<std::int64_t>() > 64) {
        throw InputError(file, "/model/tp", fmt::format("expected a whole number in [1, 64], got {}", tp.dump()));
      }
      m.tp = tp.get<std::int64_t>();
    }
  } else {
    throw InputError(file, "/model", fmt::format("expected a preset name or {{\"name\", \"tp\"}}, got {}", value.dump()));
  }
  try {
    (void)projections(find_model(m.name), m.tp);
  } catch (const UsageError& e) {
    throw InputError(file, "/model", e.what());
  }
  return m;
}

/// The config's "seed": nlohmann keeps 2^63..2^64-1 as unsigned, so every seed a
/// report records reads back.
std::uint64_t seed_of(const json& value, const std::string& file) {
  const bool fits = value.is_number_unsigned() || (value.is_number_integer() && value.get<std::int64_t>() >= 0);
  if (!fits) {
    throw InputError(file, "/seed", fmt::format("expected a whole number from 0 to {}, got {}",
                                                std::numeric_limits<std::uint64_t>::max(), value.dump()));
  }
  return value.get<std::uint64_t>();
}

/// The config's "tolerance" into `c`, keyed by dtype.
void read_tolerance(const json& tolerance, const std::string& file, const Origin& from_file, SweepConfig& c) {
  if (!tolerance.is_object()) {
    throw InputError(file, "/tolerance", fmt::format("expected an object keyed by dtype, got {}", tolerance.dump()));
  }
  for (const auto& [key, value] : tolerance.items()) {
    const std::string ptr = "/tolerance/" + json_pointer_token(key);
    const std::optional<DType> dtype = parse_dtype(key);
    if (!dtype) {
      throw InputError(file, ptr, fmt::format("unknown dtype \"{}\" (fp32, bf16, fp16)", key));
    }
    c.tolerance[*dtype] = {parse_tolerance(value, file, ptr), from_file};
  }
}

/// One rule of the config's "exclude" (at `ptr`): axis values a case must all have.
ExcludeRule exclude_rule_of(const json& rule, const std::string& file, const std::string& ptr,
                            std::vector<std::string>& notes) {
  if (!rule.is_object()) {
    throw InputError(file, ptr, fmt::format("expected an object of axis values, got {}", rule.dump()));
  }
  if (rule.empty()) {
    throw InputError(file, ptr, "an empty rule would exclude every case");
  }
  ExcludeRule parsed;
  parsed.pointer = ptr;
  for (const auto& [key, value] : rule.items()) {
    const std::string key_ptr = ptr + "/" + json_pointer_token(key);
    const AxisInfo& axis = axis_of_key(key, file, key_ptr, notes);
    if (parsed.match.count(axis.id) > 0) {
      throw InputError(file, key_ptr,
                       fmt::format("axis {} is given twice (as {} and {})", axis.key, axis.key, axis.old_key));
    }
    parsed.match[axis.id] = to_axis_values(parse_axis_values(axis, value, file, key_ptr, /*allow_vllm=*/false));
  }
  return parsed;
}

/// The config's "exclude" rules. Every case is matched against every rule: the cap
/// keeps that in proportion (80,000 rules once ran for minutes).
std::vector<ExcludeRule> exclude_rules_of(const json& exclude, const std::string& file,
                                          std::vector<std::string>& notes) {
  if (!exclude.is_array()) {
    throw InputError(file, "/exclude", fmt::format("expected a list of rules, got {}", exclude.dump()));
  }
  if (exclude.size() > k_max_exclude_rules) {
    throw InputError(file, "/exclude", fmt::format("{} rules, more than the {} a config may have; narrow the axes "
                                                   "instead, or split the sweep",
                                                   exclude.size(), k_max_exclude_rules));
  }
  std::vector<ExcludeRule> rules;
  for (std::size_t i = 0; i < exclude.size(); ++i) {
    rules.push_back(exclude_rule_of(exclude[i], file, fmt::format("/exclude/{}", i), notes));
  }
  return rules;
}

/// Refuses a top-level key a config does not have (an axis written outside "axes" is
/// told so).
void check_top_level_keys(const json& doc, const std::string& file) {
  for (const auto& [key, value] : doc.items()) {
    if (std::find(k_top_level_keys.begin(), k_top_level_keys.end(), key) == k_top_level_keys.end()) {
      const bool is_axis = find_axis(key) != nullptr;
      throw InputError(file, "/" + json_pointer_token(key),
                       is_axis ? fmt::format("unknown key \"{}\": axes go inside \"axes\"", key)
                               : fmt::format("unknown key \"{}\"{}", key, did_you_mean(key, k_top_level_keys)));
    }
  }
}

}  // namespace

SweepConfig parse_config(std::string_view text, const std::string& file) {
  const json doc = parse_json_limited(text, file);
  if (!doc.is_object()) {
    throw InputError(file, "", fmt::format("a config is a JSON object, got {}", doc.type_name()));
  }
  SweepConfig c = builtin_config();
  c.source = file;
  c.source_sha256 = sha256_hex(text);
  const Origin from_file{Origin::Kind::file, file};
  check_top_level_keys(doc, file);
  const auto it = doc.find("name");
  c.name = it != doc.end() ? name_of(*it, file) : file;
  if (const auto d = doc.find("description"); d != doc.end()) {
    if (!d->is_string()) {
      throw InputError(file, "/description", fmt::format("expected a string, got {}", d->dump()));
    }
    c.description = d->get<std::string>();
  }
  if (const auto axes = doc.find("axes"); axes != doc.end()) {
    read_axes(*axes, file, from_file, c);
  }
  if (const auto r = doc.find("remedies"); r != doc.end()) {
    if (!r->is_boolean()) {
      throw InputError(file, "/remedies", fmt::format("expected true or false, got {}", r->dump()));
    }
    c.remedies = {r->get<bool>(), from_file};
  }
  if (const auto m = doc.find("model"); m != doc.end()) {
    c.model = {model_of(*m, file), from_file};
  }
  if (const auto r = doc.find("repeats"); r != doc.end()) {
    if (!r->is_number_integer() || r->get<std::int64_t>() < 1 || r->get<std::int64_t>() > k_max_repeats) {
      throw InputError(file, "/repeats",
                       fmt::format("expected a whole number in [1, {}], got {}", k_max_repeats, r->dump()));
    }
    c.repeats = {r->get<std::int64_t>(), from_file};
  }
  if (const auto seed = doc.find("seed"); seed != doc.end()) {
    c.seed = {seed_of(*seed, file), from_file};
  }
  if (const auto t = doc.find("tolerance"); t != doc.end()) {
    read_tolerance(*t, file, from_file, c);
  }
  if (const auto e = doc.find("exclude"); e != doc.end()) {
    c.exclude = {exclude_rules_of(*e, file, c.notes), from_file};
  }
  return c;
}

SweepConfig load_config_file(const std::string& path) {
  return parse_config(read_file(path, k_max_config_bytes), path);
}

SweepConfig load_default_config() { return load_embedded_config("default"); }

namespace {
constexpr std::string_view k_json_suffix = ".json";

bool ends_with_json(std::string_view value) {
  return value.size() >= k_json_suffix.size() && value.substr(value.size() - k_json_suffix.size()) == k_json_suffix;
}
}  // namespace

std::vector<std::string> embedded_config_stems() {
  std::vector<std::string> stems;
  for (std::string_view file : embedded_config_names()) {
    if (ends_with_json(file)) {
      file.remove_suffix(k_json_suffix.size());
    }
    stems.emplace_back(file);
  }
  std::sort(stems.begin(), stems.end());
  return stems;
}

SweepConfig load_embedded_config(std::string_view name) {
  const std::vector<std::string> stems = embedded_config_stems();
  if (std::find(stems.begin(), stems.end(), name) == stems.end()) {
    throw UsageError(fmt::format("--config {}: no such file or embedded config (embedded: {})", name,
                                 fmt::join(stems, ", ")));
  }
  const std::string file = std::string(name) + std::string(k_json_suffix);
  return parse_config(embedded_config(file), std::string(k_embedded_prefix) + file);
}

bool names_config_file(const std::string& value) {
  std::error_code ec;
  return value.find('/') != std::string::npos || ends_with_json(value) || std::filesystem::is_regular_file(value, ec);
}

SweepConfig load_config(const std::string& value) {
  if (!names_config_file(value)) {
    return load_embedded_config(value);
  }
  std::error_code ec;
  if (!std::filesystem::exists(value, ec)) {
    std::string stem = std::filesystem::path(value).filename().string();
    if (ends_with_json(stem)) {
      stem.resize(stem.size() - k_json_suffix.size());
    }
    const std::vector<std::string> stems = embedded_config_stems();
    if (std::find(stems.begin(), stems.end(), stem) != stems.end()) {
      throw UsageError(fmt::format("{}: cannot read: no such file; the embedded config of that name is --config {}",
                                   value, stem));
    }
  }
  return load_config_file(value);
}

JsonText configs_listing_json(const std::vector<ConfigListing>& rows) {
  json out = json::array();
  for (const ConfigListing& row : rows) {
    out.push_back({{"name", row.name}, {"description", row.description}, {"cases", row.cases}});
  }
  return JsonText::of(out);
}

std::string SweepConfig::json_text() const { return escape::json_c1(to_json().dump(2)) + "\n"; }

JsonText SweepConfig::to_json_text() const { return JsonText::of(to_json()); }

json SweepConfig::to_json() const {
  json out;
  out["name"] = name;
  out["description"] = description;
  out["source"] = source;
  out["source_sha256"] = source_sha256;
  json axes_json = json::object();
  for (const auto& [id, setting] : axes) {
    axes_json[std::string(axis_info(id).key)] = {{"values", to_json_values(setting.value)},
                                                 {"origin", setting.origin.describe()}};
  }
  out["axes"] = std::move(axes_json);
  if (remedies.value) {
    out["remedies"] = {{"value", true}, {"origin", remedies.origin.describe()}};
  }
  if (vllm_configs.value) {
    out["vllm_configs"] = {{"dir", vllm_configs.value->dir},
                           {"gpu", vllm_configs.value->gpu},
                           {"origin", vllm_configs.origin.describe()}};
  }
  if (vllm_batch_invariant.value) {
    out["vllm_batch_invariant"] = {{"value", true}, {"origin", vllm_batch_invariant.origin.describe()}};
  }
  if (vllm_max_loras.value > 0) {
    out["vllm_max_loras"] = {{"value", vllm_max_loras.value}, {"origin", vllm_max_loras.origin.describe()}};
  }
  if (vllm_moe_configs.value) {
    out["vllm_moe_configs"] = {{"dir", vllm_moe_configs.value->dir},
                               {"gpu", vllm_moe_configs.value->gpu},
                               {"origin", vllm_moe_configs.origin.describe()}};
  }
  if (sm_count.value > 0) {
    out["sm_count"] = {{"value", sm_count.value}, {"origin", sm_count.origin.describe()}};
  }
  if (model.value) {
    out["model"] = {{"name", model.value->name}, {"tp", model.value->tp}, {"origin", model.origin.describe()}};
  }
  out["repeats"] = {{"value", repeats.value}, {"origin", repeats.origin.describe()}};
  out["seed"] = {{"value", seed.value}, {"origin", seed.origin.describe()}};
  json tol = json::object();
  for (const auto& [dtype, setting] : tolerance) {
    tol[std::string(dtype_name(dtype))] = {
        {"atol", setting.value.atol}, {"rtol", setting.value.rtol}, {"origin", setting.origin.describe()}};
  }
  out["tolerance_overrides"] = std::move(tol);
  json rules = json::array();
  for (const ExcludeRule& rule : exclude.value) {
    json r = json::object();
    for (const auto& [id, values] : rule.match) {
      r[std::string(axis_info(id).key)] = to_json_values(values);
    }
    rules.push_back(std::move(r));
  }
  out["exclude"] = {{"rules", std::move(rules)}, {"origin", exclude.origin.describe()}};
  return out;
}

std::string format_config(const SweepConfig& config) {
  constexpr std::size_t k_values_width = 46;
  auto shorten = [](std::string s) {
    if (s.size() > k_values_width) {
      s = s.substr(0, k_values_width - 3) + "...";
    }
    return s;
  };
  std::string out = fmt::format("config: {}{}\n", config.name, config.source.empty() ? "" : " (" + config.source + ")");
  out += fmt::format("{:<14} {:<{}} {}\n", "setting", "values", k_values_width, "origin");
  for (const AxisInfo& axis : axis_table()) {
    const auto& setting = config.axes.at(axis.id);
    std::string joined;
    for (const AxisValue& v : setting.value) {
      if (!joined.empty()) {
        joined += ',';
      }
      joined += format_value(v.to_json());
    }
    if (setting.value.size() > 4) {
      joined = fmt::format("{} ({} values)", joined, setting.value.size());
    }
    out += fmt::format("{:<14} {:<{}} {}\n", axis.key, shorten(joined), k_values_width, setting.origin.describe());
  }
  out += fmt::format("{:<14} {:<{}} {}\n", "repeats", config.repeats.value, k_values_width,
                     config.repeats.origin.describe());
  out += fmt::format("{:<14} {:<{}} {}\n", "seed", config.seed.value, k_values_width, config.seed.origin.describe());
  for (const auto& [dtype, setting] : config.tolerance) {
    out += fmt::format("{:<14} {:<{}} {}\n", fmt::format("tolerance.{}", dtype_name(dtype)),
                       fmt::format("atol {} rtol {}", setting.value.atol, setting.value.rtol), k_values_width,
                       setting.origin.describe());
  }
  out += fmt::format("{:<14} {:<{}} {}\n", "exclude", fmt::format("{} rule{}", config.exclude.value.size(), config.exclude.value.size() == 1 ? "" : "s"),
                     k_values_width, config.exclude.origin.describe());
  // The settings besides the axes that change what runs: every one, set or not.
  out += fmt::format("{:<14} {:<{}} {}\n", "remedies", config.remedies.value ? "on" : "off", k_values_width,
                     config.remedies.origin.describe());
  out += fmt::format("{:<14} {:<{}} {}\n", "model",
                     config.model.value ? shorten(fmt::format("{} tp {}", config.model.value->name, config.model.value->tp))
                                        : std::string("none (the num_slices and hidden axes)"),
                     k_values_width, config.model.origin.describe());
  out += fmt::format("{:<14} {:<{}} {}\n", "vllm_configs",
                     config.vllm_configs.value
                         ? shorten(fmt::format("{} (GPU {})", config.vllm_configs.value->dir,
                                               config.vllm_configs.value->gpu.empty() ? "present"
                                                                                      : config.vllm_configs.value->gpu))
                         : std::string("none (vLLM's defaults)"),
                     k_values_width, config.vllm_configs.origin.describe());
  if (config.vllm_max_loras.value > 0) {
    out += fmt::format("{:<14} {:<{}} {}\n", "max_loras", config.vllm_max_loras.value, k_values_width,
                       config.vllm_max_loras.origin.describe());
  }
  if (config.vllm_moe_configs.value) {
    out += fmt::format("{:<14} {:<{}} {}\n", "moe_configs",
                       shorten(fmt::format("{} (GPU {})", config.vllm_moe_configs.value->dir,
                                           config.vllm_moe_configs.value->gpu.empty()
                                               ? "present"
                                               : config.vllm_moe_configs.value->gpu)),
                       k_values_width, config.vllm_moe_configs.origin.describe());
  }
  if (config.sm_count.value > 0) {
    out += fmt::format("{:<14} {:<{}} {}\n", "sm_count", config.sm_count.value, k_values_width,
                       config.sm_count.origin.describe());
  }
  if (config.vllm_batch_invariant.value) {
    out += fmt::format("{:<14} {:<{}} {}\n", "batch_invariant", "on (VLLM_BATCH_INVARIANT)", k_values_width,
                       config.vllm_batch_invariant.origin.describe());
  }
  return out;
}

}  // namespace lp::plan
