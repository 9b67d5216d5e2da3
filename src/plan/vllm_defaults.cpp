#include "plan/vllm_defaults.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/json_bounded.hpp"

namespace lp::plan {

using nlohmann::json;

namespace {

class Reader {
 public:
  explicit Reader(std::string file) : m_file(std::move(file)) {}

  const json& at(const json& object, const std::string& ptr, const char* key) const {
    if (!object.is_object() || !object.contains(key)) {
      throw InputError(m_file, ptr, fmt::format("missing key \"{}\"", key));
    }
    return object.at(key);
  }
  int integer(const json& object, const std::string& ptr, const char* key) const {
    const json& v = at(object, ptr, key);
    if (!v.is_number_integer() || v.get<std::int64_t>() < 1 || v.get<std::int64_t>() > 1 << 20) {
      throw InputError(m_file, ptr + "/" + key, fmt::format("expected a positive whole number, got {}", v.dump()));
    }
    return v.get<int>();
  }
  std::string text(const json& object, const std::string& ptr, const char* key) const {
    const json& v = at(object, ptr, key);
    if (!v.is_string()) {
      throw InputError(m_file, ptr + "/" + key, fmt::format("expected a string, got {}", v.dump()));
    }
    return v.get<std::string>();
  }
  KernelKnobs knobs(const json& object, const std::string& ptr, const char* key, bool with_split_k) const {
    const json& k = at(object, ptr, key);
    const std::string here = ptr + "/" + key;
    return KernelKnobs{integer(k, here, "block_m"),    integer(k, here, "block_n"),
                       integer(k, here, "block_k"),    integer(k, here, "num_warps"),
                       integer(k, here, "num_stages"), with_split_k ? integer(k, here, "split_k") : 1,
                       false};
  }
  const json& list(const json& object, const std::string& ptr, const char* key) const {
    const json& v = at(object, ptr, key);
    if (!v.is_array() || v.empty()) {
      throw InputError(m_file, ptr + "/" + key, fmt::format("expected a non-empty list, got {}", v.dump()));
    }
    return v;
  }

 private:
  std::string m_file;
};

/// The axes a matrix row or answer lists, outer to inner.
constexpr const char* k_list_axes[] = {"block_k", "num_slices", "block_n", "num_stages"};

}  // namespace

VllmDefaults parse_vllm_defaults(std::string_view text, const std::string& file) {
  const json doc = parse_json_bounded(text, file, 16);
  const Reader r(file);
  VllmDefaults d;
  const json& expand = r.at(doc, "", "expand");
  d.expand_one_slice = r.knobs(expand, "/expand", "one_slice", false);
  d.expand_more_slices = r.knobs(expand, "/expand", "more_slices", false);
  d.expand_block_k_newer = r.integer(expand, "/expand", "block_k_newer");
  const json& shrink = r.at(doc, "", "shrink");
  d.shrink_small_batch_below = r.integer(shrink, "/shrink", "small_batch_below");
  d.shrink_small_batch = r.knobs(shrink, "/shrink", "small_batch", true);
  d.shrink_large_batch = r.knobs(shrink, "/shrink", "large_batch", true);
  d.shrink_group_size_m = r.integer(shrink, "/shrink", "group_size_m");
  const json& matrix = r.at(doc, "", "ptxas_matrix");
  d.matrix_common = r.at(matrix, "/ptxas_matrix", "common");
  const json& rows = r.list(matrix, "/ptxas_matrix", "rows");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string ptr = fmt::format("/ptxas_matrix/rows/{}", i);
    std::vector<json> expanded = {d.matrix_common};
    for (const auto& [key, value] : rows[i].items()) {
      if (std::find(std::begin(k_list_axes), std::end(k_list_axes), key) == std::end(k_list_axes)) {
        for (json& e : expanded) {
          e[key] = value;
        }
      }
    }
    for (const char* axis : k_list_axes) {
      std::vector<json> next;
      for (const json& e : expanded) {
        for (const json& v : r.list(rows[i], ptr, axis)) {
          json w = e;
          w[axis] = v;
          next.push_back(std::move(w));
        }
      }
      expanded = std::move(next);
    }
    d.matrix_rows.insert(d.matrix_rows.end(), expanded.begin(), expanded.end());
  }
  const json& answers = r.list(matrix, "/ptxas_matrix", "answers");
  for (std::size_t i = 0; i < answers.size(); ++i) {
    const std::string ptr = fmt::format("/ptxas_matrix/answers/{}", i);
    MatrixAnswer a{r.text(answers[i], ptr, "what"), r.text(answers[i], ptr, "marker"), json::object()};
    for (const char* axis : k_list_axes) {
      a.match[axis] = r.list(answers[i], ptr, axis);
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
