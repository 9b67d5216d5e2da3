#include "plan/moe_configs.hpp"

#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/files.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"

namespace lp::plan {

namespace {

/// vLLM's files are a few KB; the bound leaves room for a long table.
constexpr std::size_t k_max_moe_config_bytes = std::size_t{1} << 20;
/// {M: {BLOCK_SIZE_M: ...}}: two levels, a little room.
constexpr std::size_t k_max_moe_config_depth = 4;
/// The largest batch-size key read (vLLM's files stop at a few thousand).
constexpr std::int64_t k_max_moe_config_batch = std::int64_t{1} << 40;

}  // namespace

std::string moe_config_file_name(std::int64_t experts, std::int64_t n, const std::string& gpu) {
  std::string device = std::regex_replace(gpu, std::regex(R"([\s/]+)"), "_");
  // "Set device_name to H200 if a device from the H200 family is detected."
  const std::regex h200(R"((^|_)H200(_|$))");
  if (std::regex_search(device, h200)) {
    device = "NVIDIA_H200";
  }
  return fmt::format("E={},N={},device_name={}.json", experts, n, device);
}

std::optional<MoeConfigChoice> moe_config_block_m(const std::string& dir, std::int64_t experts, std::int64_t n,
                                                   const std::string& gpu, std::int64_t tokens) {
  const std::string name = moe_config_file_name(experts, n, gpu);
  const std::string path = (std::filesystem::path(dir) / name).string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return std::nullopt;
  }
  const nlohmann::json parsed = parse_json_bounded(read_file(path, k_max_moe_config_bytes), path, k_max_moe_config_depth);
  const JsonIn doc(parsed, path);
  std::optional<MoeConfigChoice> best;
  std::int64_t best_key = 0;
  for (const auto& [key, entry] : doc.members()) {
    std::size_t used = 0;
    std::int64_t m = -1;
    try {
      m = std::stoll(key, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != key.size() || m < 1 || m > k_max_moe_config_batch) {
      throw InputError(path, "/" + json_pointer_token(key), "a key is a batch size, a whole number of at least 1");
    }
    const int block_m = entry.at("BLOCK_SIZE_M").whole<int>(16, 1024);
    if ((block_m & (block_m - 1)) != 0) {
      throw InputError(path, "/" + json_pointer_token(key) + "/BLOCK_SIZE_M",
                       fmt::format("{} is not a power of two (vLLM asserts one)", block_m));
    }
    const auto distance = [&](std::int64_t k) { return k > tokens ? k - tokens : tokens - k; };
    if (!best || distance(m) < distance(best_key) || (distance(m) == distance(best_key) && m < best_key)) {
      best = MoeConfigChoice{block_m, name, key};
      best_key = m;
    }
  }
  if (!best) {
    throw InputError(path, "", "no batch sizes (vLLM takes the closest of them)");
  }
  return best;
}

}  // namespace lp::plan
