#include "plan/vllm_defaults.hpp"

#include <algorithm>

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

}  // namespace lp::plan
