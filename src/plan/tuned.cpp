#include "plan/tuned.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/json_bounded.hpp"

namespace lp::plan {

namespace {

constexpr std::size_t k_levels = 5;  // max_loras, num_slices, m, k, n
constexpr const char* k_level_names[k_levels] = {"max_loras", "num_slices", "m", "k", "n"};
constexpr std::size_t k_max_file_bytes = std::size_t{64} << 20;
/// The levels of a tuned file, its config object and one more: anything deeper is not
/// vLLM's layout, and is refused before it is parsed.
constexpr std::size_t k_max_file_depth = 16;

bool integer_key(const std::string& key) {
  return !key.empty() && key.size() <= 12 && key.find_first_not_of("0123456789") == std::string::npos;
}

/// Checks the whole tree: integer keys on every level, a complete leaf under each.
void validate(const nlohmann::ordered_json& node, std::size_t level, const std::string& file, const std::string& ptr,
              bool shrink) {
  if (level == k_levels) {
    if (!node.is_object()) {
      throw InputError(file, ptr, "expected the kernel config (block_m, block_n, ...), got " + node.dump().substr(0, 40));
    }
    std::vector<const char*> keys = {"block_m", "block_n", "block_k", "num_warps", "num_ctas", "num_stages"};
    if (shrink) {
      keys.push_back("split_k");
    }
    for (const char* key : keys) {
      const auto it = node.find(key);
      if (it == node.end()) {
        throw InputError(file, ptr, fmt::format("missing \"{}\"", key));
      }
      if (!it->is_number_integer() || it->get<std::int64_t>() < 1 || it->get<std::int64_t>() > 1024) {
        throw InputError(file, ptr + "/" + key, fmt::format("expected a whole number in [1, 1024], got {}", it->dump()));
      }
    }
    return;
  }
  if (!node.is_object() || node.empty()) {
    throw InputError(file, ptr, fmt::format("expected an object keyed by {}, got {}", k_level_names[level],
                                            node.is_object() ? std::string("{}") : node.dump().substr(0, 40)));
  }
  for (const auto& [key, value] : node.items()) {
    if (!integer_key(key)) {
      throw InputError(file, ptr + "/" + key, fmt::format("\"{}\" is not a {} (a whole number)", key, k_level_names[level]));
    }
    validate(value, level + 1, file, ptr + "/" + key, shrink);
  }
}

}  // namespace

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
  for (const char* op : {"EXPAND_TRUE", "EXPAND_FALSE", "SHRINK"}) {
    const std::string name = fmt::format("{}_{}.json", t.m_prefix, op);
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (!std::filesystem::exists(path, ec)) {
      continue;
    }
    nlohmann::ordered_json doc;
    const std::string text = read_file(path, k_max_file_bytes);
    require_json_nesting(text, path, k_max_file_depth);
    try {
      doc = nlohmann::ordered_json::parse(text);  // ordered: vLLM's nearest-key lookup reads the file's order
    } catch (const nlohmann::json::exception& e) {
      throw InputError(path, "", "not JSON: " + json_error_text(e));
    }
    validate(doc, 0, path, "", std::string(op) == "SHRINK");
    t.m_files.emplace_back(name, std::move(doc));
  }
  if (t.m_files.empty()) {
    throw UsageError(fmt::format("--vllm-configs {}: no {}_EXPAND_TRUE.json, _EXPAND_FALSE.json or _SHRINK.json there "
                                 "(the GPU name: --vllm-gpu)",
                                 dir, t.m_prefix));
  }
  return t;
}

std::vector<std::string> TunedConfigs::files() const {
  std::vector<std::string> out;
  for (const auto& [name, doc] : m_files) {
    out.push_back(name);
  }
  return out;
}

std::optional<TunedChoice> TunedConfigs::lookup(const std::string& name, const std::vector<std::int64_t>& wanted,
                                                bool shrink) const {
  const nlohmann::ordered_json* node = nullptr;
  for (const auto& [file, doc] : m_files) {
    if (file == name) {
      node = &doc;
    }
  }
  if (node == nullptr) {
    return std::nullopt;
  }
  TunedChoice c;
  c.file = name;
  for (const std::int64_t want : wanted) {
    const std::string exact = std::to_string(want);
    std::string chosen;
    if (node->contains(exact)) {
      chosen = exact;
    } else {
      // Closest by |key - wanted|; the first such key in file order on a tie.
      std::int64_t best = -1;
      for (const auto& [key, value] : node->items()) {
        const std::int64_t d = std::llabs(std::stoll(key) - want);
        if (best < 0 || d < best) {
          best = d;
          chosen = key;
        }
      }
    }
    c.keys.push_back(chosen);
    node = &(*node)[chosen];
  }
  const nlohmann::ordered_json& leaf = *node;
  c.knobs.block_m = leaf["block_m"].get<int>();
  c.knobs.block_n = leaf["block_n"].get<int>();
  c.knobs.block_k = leaf["block_k"].get<int>();
  c.knobs.num_warps = leaf["num_warps"].get<int>();
  c.knobs.num_stages = leaf["num_stages"].get<int>();
  c.knobs.split_k = shrink ? leaf["split_k"].get<int>() : 1;
  return c;
}

std::optional<TunedChoice> TunedConfigs::expand(bool add_inputs, std::int64_t max_loras, std::int64_t num_slices,
                                                std::int64_t m, std::int64_t rank, std::int64_t width) const {
  return lookup(fmt::format("{}_EXPAND_{}.json", m_prefix, add_inputs ? "TRUE" : "FALSE"),
                {max_loras, num_slices, m, rank, width}, false);
}

std::optional<TunedChoice> TunedConfigs::shrink(std::int64_t max_loras, std::int64_t num_slices, std::int64_t m,
                                                std::int64_t width, std::int64_t rank) const {
  return lookup(fmt::format("{}_SHRINK.json", m_prefix), {max_loras, num_slices, m, width, rank}, true);
}

}  // namespace lp::plan
