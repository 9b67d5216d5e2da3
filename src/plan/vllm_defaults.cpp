#include "plan/vllm_defaults.hpp"

#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"

namespace lp::plan {

using nlohmann::json;

namespace {

/// A block size, a batch bound: a positive whole number.
int positive(const JsonIn& v) { return v.whole<int>(1, 1 << 20); }

KernelKnobs knobs(const JsonIn& k, bool with_split_k) {
  return KernelKnobs{positive(k.at("block_m")),   positive(k.at("block_n")),
                     positive(k.at("block_k")),   positive(k.at("num_warps")),
                     positive(k.at("num_stages")), with_split_k ? positive(k.at("split_k")) : 1,
                     false};
}

/// A list of at least one value.
std::vector<JsonIn> values(const JsonIn& v) {
  std::vector<JsonIn> out = v.items();
  if (out.empty()) {
    v.fail("expected a non-empty list");
  }
  return out;
}

/// The axes a matrix row or answer lists, outer to inner.
constexpr const char* k_list_axes[] = {"block_k", "num_slices", "block_n", "num_stages"};

}  // namespace

VllmDefaults parse_vllm_defaults(std::string_view text, const std::string& file) {
  const json parsed = parse_json_bounded(text, file, 16);
  const JsonIn doc(parsed, file);
  VllmDefaults d;
  const JsonIn expand = doc.at("expand");
  d.expand_one_slice = knobs(expand.at("one_slice"), false);
  d.expand_more_slices = knobs(expand.at("more_slices"), false);
  d.expand_block_k_newer = positive(expand.at("block_k_newer"));
  const JsonIn shrink = doc.at("shrink");
  d.shrink_small_batch_below = positive(shrink.at("small_batch_below"));
  d.shrink_small_batch = knobs(shrink.at("small_batch"), true);
  d.shrink_large_batch = knobs(shrink.at("large_batch"), true);
  d.shrink_group_size_m = positive(shrink.at("group_size_m"));
  d.shrink_small_batch.group_size_m = d.shrink_group_size_m;
  d.shrink_large_batch.group_size_m = d.shrink_group_size_m;
  const JsonIn moe = doc.at("fused_moe");
  FusedMoeDefaults& f = d.fused_moe;
  f.block_m = positive(moe.at("block_m"));
  f.block_n = positive(moe.at("block_n"));
  f.num_stages = positive(moe.at("num_stages"));
  f.num_warps = positive(moe.at("num_warps"));
  f.num_warps_split_n = positive(moe.at("num_warps_split_n"));
  f.block_k_wide = positive(moe.at("block_k_wide"));
  f.block_k_narrow = positive(moe.at("block_k_narrow"));
  f.wide_block_k_from_k = positive(moe.at("wide_block_k_from_k"));
  f.wide_block_k_from_pairs_per_expert = positive(moe.at("wide_block_k_from_pairs_per_expert"));
  f.max_rank = positive(moe.at("max_rank"));
  f.max_npid_factor = positive(moe.at("max_npid_factor"));
  for (const JsonIn& row : values(moe.at("block_m_by_tokens").at("rows"))) {
    const std::optional<JsonIn> bound = row.find("up_to");
    const std::int64_t up_to = bound ? positive(*bound) : std::numeric_limits<std::int64_t>::max();
    f.block_m_by_tokens.emplace_back(up_to, positive(row.at("block_m")));
  }
  if (f.block_m_by_tokens.empty() || f.block_m_by_tokens.back().first != std::numeric_limits<std::int64_t>::max()) {
    throw InputError(file, "/fused_moe/block_m_by_tokens/rows", "the last row has no up_to");
  }
  f.two_kernel_max_tokens = positive(moe.at("two_kernel_max_tokens"));
  f.naive_sparsity_factor = positive(moe.at("naive_sparsity_factor"));
  f.naive_block_m = positive(moe.at("naive_block_m"));
  const JsonIn matrix = doc.at("ptxas_matrix");
  const json& common = matrix.at("common").object();
  d.matrix_common = AxisValues::from_json(common);
  for (const JsonIn& row : values(matrix.at("rows"))) {
    std::vector<json> expanded = {common};
    for (const auto& [key, value] : row.members()) {
      if (std::find(std::begin(k_list_axes), std::end(k_list_axes), key) == std::end(k_list_axes)) {
        for (json& e : expanded) {
          e[key] = value.json();
        }
      }
    }
    for (const char* axis : k_list_axes) {
      std::vector<json> next;
      for (const json& e : expanded) {
        for (const JsonIn& v : values(row.at(axis))) {
          json w = e;
          w[axis] = v.json();
          next.push_back(std::move(w));
        }
      }
      expanded = std::move(next);
    }
    for (const json& e : expanded) {
      d.matrix_rows.push_back(AxisValues::from_json(e));
    }
  }
  for (const JsonIn& answer : values(matrix.at("answers"))) {
    MatrixAnswer a{answer.at("what").string(), answer.at("marker").string(), {}};
    for (const char* axis : k_list_axes) {
      for (const JsonIn& v : values(answer.at(axis))) {  // a non-empty list
        a.match[axis].push_back(AxisValue::from_json(v.json()));
      }
    }
    d.matrix_answers.push_back(std::move(a));
  }
  return d;
}

const VllmDefaults& vllm_defaults() {
  static const VllmDefaults d = parse_vllm_defaults(vllm_defaults_text(), "<embedded>/configs/vllm/defaults.json");
  return d;
}

int FusedMoeDefaults::block_m_for(std::int64_t tokens) const {
  for (const auto& [up_to, m] : block_m_by_tokens) {
    if (tokens <= up_to) {
      return m;
    }
  }
  return block_m_by_tokens.back().second;
}

FusedMoeLaunch vllm_fused_moe_launch(std::int64_t tokens, std::int64_t top_k, std::int64_t experts, std::int64_t k,
                                     std::int64_t n, std::int64_t slices, std::int64_t loras, int block_m,
                                     std::int64_t sms) {
  const FusedMoeDefaults& f = vllm_defaults().fused_moe;
  FusedMoeLaunch launch;
  KernelKnobs& knobs = launch.knobs;
  knobs.block_m = block_m;
  knobs.block_n = f.block_n;
  knobs.num_stages = f.num_stages;
  const std::int64_t pairs = tokens * top_k;
  const bool wide = k >= f.wide_block_k_from_k ||
                    static_cast<double>(pairs) / static_cast<double>(std::max<std::int64_t>(experts, 1)) >=
                        static_cast<double>(f.wide_block_k_from_pairs_per_expert);
  knobs.block_k = wide ? f.block_k_wide : f.block_k_narrow;
  knobs.even_k = k % knobs.block_k == 0;
  // vLLM's moe_lora_align_block_size: EM = pairs + experts (block_m - 1), or
  // pairs x block_m when there are fewer pairs than experts; M blocks = cdiv(EM, block_m).
  const std::int64_t padded = pairs < experts ? pairs * block_m : pairs + experts * (block_m - 1);
  const std::int64_t m_blocks = (padded + block_m - 1) / block_m;
  const std::int64_t base = std::max<std::int64_t>(m_blocks * slices * loras, 1);
  const double shrink_ratio = static_cast<double>(k) / static_cast<double>(std::max<std::int64_t>(k + n, 1));
  const std::int64_t by_budget = std::max<std::int64_t>(1, static_cast<std::int64_t>(1.5 / std::max(shrink_ratio, 1e-3)) + 1);
  std::int64_t npid = 1;
  if (base < 3 * sms / 2) {
    const std::int64_t by_occupancy =
        std::clamp<std::int64_t>((2 * sms + base - 1) / base, 1, f.max_npid_factor);
    npid = std::min(by_occupancy, by_budget);
  }
  npid = std::max<std::int64_t>(1, std::min(npid, std::max<std::int64_t>(1, n / 128)));
  launch.npid_factor = static_cast<int>(npid);
  knobs.num_warps = npid > 1 ? f.num_warps_split_n : f.num_warps;
  return launch;
}

}  // namespace lp::plan
