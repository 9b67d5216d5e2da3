#include "plan/tuned.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "plan/vllm_defaults.hpp"
#include "util/error.hpp"
#include "util/files.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"

namespace lp::plan {

namespace {

constexpr std::size_t k_levels = 5;  // max_loras, num_slices, m, k, n
constexpr std::size_t k_fused_moe_levels = 6;  // and i, the experts' intermediate width
constexpr const char* k_level_names[k_fused_moe_levels] = {"max_loras", "num_slices", "m", "k", "n", "i"};
/// The fused-MoE fast path's BLOCK_SIZE_M when a config leaves it out (vLLM's `or 64`).
constexpr int k_fused_moe_default_block_m = 64;
constexpr std::size_t k_max_file_bytes = std::size_t{64} << 20;
/// The levels of a tuned file, its config object and one more: anything deeper is not
/// vLLM's layout, and is refused before it is parsed.
constexpr std::size_t k_max_file_depth = 16;

bool integer_key(const std::string& key) {
  return !key.empty() && key.size() <= 12 && key.find_first_not_of("0123456789") == std::string::npos;
}

/// The kernel config of a last-level entry, every field checked.
KernelKnobs leaf_knobs(const nlohmann::ordered_json& node, const std::string& file, const std::string& ptr, bool shrink) {
  if (!node.is_object()) {
    throw InputError(file, ptr, "expected the kernel config (block_m, block_n, ...), got " + node.dump().substr(0, 40));
  }
  std::vector<const char*> keys = {"block_m", "block_n", "block_k", "num_warps", "num_ctas", "num_stages"};
  if (shrink) {
    keys.push_back("split_k");
  }
  auto check = [&](const char* key) {
    const auto& v = node[key];
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 1024) {
      throw InputError(file, ptr + "/" + key, fmt::format("expected a whole number in [1, 1024], got {}", v.dump()));
    }
  };
  for (const char* key : keys) {
    if (node.find(key) == node.end()) {
      throw InputError(file, ptr, fmt::format("missing \"{}\"", key));
    }
    check(key);
  }
  // vLLM's shrink reads config.get("group_size_m", 8); the expand has no such knob.
  const bool has_group = shrink && node.find("group_size_m") != node.end();
  if (has_group) {
    check("group_size_m");
  }
  KernelKnobs k;
  k.block_m = node["block_m"].get<int>();
  k.block_n = node["block_n"].get<int>();
  k.block_k = node["block_k"].get<int>();
  k.num_warps = node["num_warps"].get<int>();
  k.num_stages = node["num_stages"].get<int>();
  k.split_k = shrink ? node["split_k"].get<int>() : 1;
  k.num_ctas = node["num_ctas"].get<int>();
  k.group_size_m = !shrink ? 0 : has_group ? node["group_size_m"].get<int>() : vllm_defaults().shrink_group_size_m;
  return k;
}

/// The BLOCK_SIZE_M of a fused-MoE config: `block_m` or `BLOCK_SIZE_M` (vLLM normalises
/// the first to the second; the later in the file wins), 64 when absent, null or 0.
KernelKnobs fused_moe_leaf(const nlohmann::ordered_json& node, const std::string& file, const std::string& ptr) {
  if (!node.is_object()) {
    throw InputError(file, ptr, "expected the kernel config (block_m, ...), got " + node.dump().substr(0, 40));
  }
  KernelKnobs k;
  k.block_m = k_fused_moe_default_block_m;
  for (const auto& [key, value] : node.items()) {
    if (key != "block_m" && key != "BLOCK_SIZE_M") {
      continue;
    }
    if (value.is_null() || (value.is_number_integer() && value.get<std::int64_t>() == 0)) {
      k.block_m = k_fused_moe_default_block_m;
      continue;
    }
    if (!value.is_number_integer() || value.get<std::int64_t>() < 1 || value.get<std::int64_t>() > 1024) {
      throw InputError(file, ptr + "/" + key, fmt::format("expected a whole number in [1, 1024], got {}", value.dump()));
    }
    k.block_m = value.get<int>();
  }
  return k;
}

/// Builds the ordered_json of a tuned file in time linear in its keys. nlohmann's own
/// ordered parse looks every key up in its object's list, which is quadratic: 100,000
/// keys took 15 s, 200,000 took 41 s. This keeps the same value (each object's keys in
/// file order, a repeated key in its first place with its last value, as nlohmann and
/// Python read it) with a hash of the keys of each open object.
class OrderedBuilder {
 public:
  using json = nlohmann::ordered_json;

  bool null() { return value(json()); }
  bool boolean(bool v) { return value(json(v)); }
  bool number_integer(json::number_integer_t v) { return value(json(v)); }
  bool number_unsigned(json::number_unsigned_t v) { return value(json(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) { return value(json(v)); }
  bool string(json::string_t& v) { return value(json(std::move(v))); }
  bool binary(json::binary_t& v) { return value(json::binary(std::move(v))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool key(json::string_t& k) {
    m_frames.back().key = std::move(k);
    return true;
  }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
    m_error = json_error_text(e);
    return false;
  }

  [[nodiscard]] const std::string& error() const { return m_error; }
  json& root() { return m_root; }

 private:
  struct Frame {
    json* value = nullptr;  ///< the open container; its parent grows no more until it closes
    std::string key;        ///< an object's current key
    std::unordered_map<std::string, std::size_t> index;  ///< an object's keys: where each is
  };

  /// Puts `v` where the parse is: the root, an array's next element, or the current key.
  json* place(json&& v) {
    if (m_frames.empty()) {
      m_root = std::move(v);
      return &m_root;
    }
    Frame& f = m_frames.back();
    if (f.value->is_array()) {
      f.value->push_back(std::move(v));
      return &f.value->back();
    }
    json::object_t& members = f.value->get_ref<json::object_t&>();
    const auto [at, added] = f.index.emplace(f.key, members.size());
    if (!added) {
      json& repeated = (members.begin() + static_cast<std::ptrdiff_t>(at->second))->second;
      repeated = std::move(v);
      return &repeated;
    }
    members.emplace_back(std::move(f.key), std::move(v));  // the list's own append: no lookup
    return &members.back().second;
  }
  bool value(json&& v) {
    place(std::move(v));
    return true;
  }
  bool open(json&& container) {
    json* at = place(std::move(container));
    m_frames.push_back(Frame{at, {}, {}});
    return true;
  }
  bool close() {
    m_frames.pop_back();
    return true;
  }

  json m_root;
  std::vector<Frame> m_frames;
  std::string m_error;
};

}  // namespace

/// The typed tree of a file: integer keys on every level, a complete leaf under each.
std::shared_ptr<const TunedConfigs::Level> TunedConfigs::read_level(const nlohmann::ordered_json& node,
                                                                    std::size_t level, const std::string& file,
                                                                    const std::string& ptr, Leaf leaf) {
  if (!node.is_object() || node.empty()) {
    throw InputError(file, ptr, fmt::format("expected an object keyed by {}, got {}", k_level_names[level],
                                            node.is_object() ? std::string("{}") : node.dump().substr(0, 40)));
  }
  auto out = std::make_shared<Level>();
  for (const auto& [key, value] : node.items()) {
    if (!integer_key(key)) {
      throw InputError(file, ptr + "/" + json_pointer_token(key),
                       fmt::format("{} key \"{}\" is not a whole number", k_level_names[level], key));
    }
    Level::Entry e;
    e.key = key;
    e.value = std::stoll(key);  // at most 12 digits (integer_key)
    const std::string at = ptr + "/" + key;  // key: digits only, nothing to escape
    if (level + 1 == (leaf == Leaf::fused_moe ? k_fused_moe_levels : k_levels)) {
      e.knobs = leaf == Leaf::fused_moe ? fused_moe_leaf(value, file, at) : leaf_knobs(value, file, at, leaf == Leaf::shrink);
    } else {
      e.below = read_level(value, level + 1, file, at, leaf);
    }
    out->entries.push_back(std::move(e));
  }
  return out;
}

std::string TunedChoice::describe() const {
  std::string out = file;
  for (const std::string& k : keys) {
    out += "[" + k + "]";
  }
  return out;
}

std::string TunedConfigs::file_prefix(const std::string& gpu) {
  std::string out = gpu;
  for (char& c : out) {
    if (c == ' ' || c == '-') {
      c = '_';
    }
  }
  return out;
}

TunedConfigs TunedConfigs::load(const std::string& dir, const std::string& gpu) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    throw UsageError(fmt::format("--vllm-configs {}: not a folder", dir));
  }
  TunedConfigs t;
  t.m_prefix = file_prefix(gpu);
  for (const std::string_view op : k_ops) {
    const std::string path = (std::filesystem::path(dir) / t.file_name(op)).string();
    if (!std::filesystem::exists(path, ec)) {
      continue;
    }
    t.add_file(op, read_file(path, k_max_file_bytes), path);
  }
  if (t.m_files.empty()) {
    throw UsageError(fmt::format("--vllm-configs {}: no {}_EXPAND_TRUE.json, _EXPAND_FALSE.json, _SHRINK.json or "
                                 "_FUSED_MOE_LORA_{{W13,W2}}_SHRINK.json there (the GPU name: --vllm-gpu)",
                                 dir, t.m_prefix));
  }
  return t;
}

TunedConfigs TunedConfigs::parse(const std::string& gpu, std::string_view op, std::string_view text,
                                 const std::string& source) {
  if (std::find(std::begin(k_ops), std::end(k_ops), op) == std::end(k_ops)) {
    throw UsageError(fmt::format("{}: \"{}\" is not a tuned-config op ({})", source, op, fmt::join(k_ops, ", ")));
  }
  if (text.size() > k_max_file_bytes) {
    throw InputError(source, "", fmt::format("{} bytes, over the limit of {}", text.size(), k_max_file_bytes));
  }
  TunedConfigs t;
  t.m_prefix = file_prefix(gpu);
  t.add_file(op, text, source);
  return t;
}

std::string TunedConfigs::file_name(std::string_view op) const { return fmt::format("{}_{}.json", m_prefix, op); }

void TunedConfigs::add_file(std::string_view op, std::string_view text, const std::string& source) {
  require_json_nesting(text, source, k_max_file_depth);
  // Ordered: vLLM's nearest-key lookup reads the file's order.
  OrderedBuilder builder;
  if (!nlohmann::ordered_json::sax_parse(text.begin(), text.end(), &builder)) {
    throw InputError(source, "", "not JSON: " + builder.error());
  }
  const Leaf leaf = op == "SHRINK" ? Leaf::shrink : op.starts_with("FUSED_MOE_LORA") ? Leaf::fused_moe : Leaf::expand;
  m_files.emplace_back(file_name(op), read_level(builder.root(), 0, source, "", leaf));
}

std::vector<std::string> TunedConfigs::files() const {
  std::vector<std::string> out;
  for (const auto& [name, doc] : m_files) {
    out.push_back(name);
  }
  return out;
}

std::optional<TunedChoice> TunedConfigs::lookup(const std::string& name, const std::vector<std::int64_t>& wanted) const {
  const Level* level = nullptr;
  for (const auto& [file, doc] : m_files) {
    if (file == name) {
      level = doc.get();
    }
  }
  if (level == nullptr) {
    return std::nullopt;
  }
  TunedChoice c;
  c.file = name;
  for (std::size_t depth = 0; depth < wanted.size(); ++depth) {
    const std::int64_t want = wanted[depth];
    const std::string exact = std::to_string(want);
    const Level::Entry* chosen = nullptr;
    for (const Level::Entry& e : level->entries) {
      if (e.key == exact) {
        chosen = &e;
      }
    }
    if (chosen == nullptr && depth == 1) {
      // vLLM indexes num_slices with config_data[str(num_slices)]: no nearest key.
      std::vector<std::string> there;
      for (const Level::Entry& e : level->entries) {
        there.push_back(e.key);
      }
      c.vllm_error = fmt::format("vLLM raises KeyError: '{}' here: {} has no num_slices key \"{}\" (it has {}); vLLM "
                                 "indexes num_slices exactly",
                                 exact, c.describe(), exact, fmt::join(there, ", "));
      return c;
    }
    if (chosen == nullptr) {
      // Closest by |key - wanted|; the first such key in file order on a tie.
      std::uint64_t best = 0;
      for (const Level::Entry& e : level->entries) {
        // |key - wanted| as unsigned: no wanted value, however far, overflows it.
        const std::uint64_t d = e.value > want ? static_cast<std::uint64_t>(e.value) - static_cast<std::uint64_t>(want)
                                               : static_cast<std::uint64_t>(want) - static_cast<std::uint64_t>(e.value);
        if (chosen == nullptr || d < best) {
          best = d;
          chosen = &e;
        }
      }
    }
    c.keys.push_back(chosen->key);  // a level has at least one key (read_level)
    if (chosen->below == nullptr) {
      c.knobs = chosen->knobs;
      break;
    }
    level = chosen->below.get();
  }
  return c;
}

std::optional<TunedChoice> TunedConfigs::expand(bool add_inputs, std::int64_t max_loras, std::int64_t num_slices,
                                                std::int64_t m, std::int64_t rank, std::int64_t width) const {
  return lookup(file_name(add_inputs ? "EXPAND_TRUE" : "EXPAND_FALSE"),
                {max_loras + 1, num_slices, m, rank, width});
}

std::optional<TunedChoice> TunedConfigs::shrink(std::int64_t max_loras, std::int64_t num_slices, std::int64_t m,
                                                std::int64_t width, std::int64_t rank) const {
  return lookup(file_name("SHRINK"), {max_loras + 1, num_slices, m, width, rank});
}

std::optional<TunedChoice> TunedConfigs::fused_moe_shrink(bool w13, std::int64_t max_loras, std::int64_t num_slices,
                                                          std::int64_t m, std::int64_t rank, std::int64_t hidden,
                                                          std::int64_t intermediate) const {
  std::optional<TunedChoice> c = lookup(file_name(w13 ? "FUSED_MOE_LORA_W13_SHRINK" : "FUSED_MOE_LORA_W2_SHRINK"),
                                        {max_loras, num_slices, m, rank, hidden, intermediate});
  const int block_m = c ? c->knobs.block_m : 0;
  if (c && c->vllm_error.empty() && (block_m < 16 || (block_m & (block_m - 1)) != 0)) {
    // _run_fused_moe_lora_one_shot: tl.arange and tl.dot need a power of two of at least 16.
    c->vllm_error = fmt::format("vLLM's fused-MoE fast path asserts that block_size_m is a power of 2 and >= 16; {} "
                                "gives {}",
                                c->describe(), block_m);
  }
  return c;
}

}  // namespace lp::plan
