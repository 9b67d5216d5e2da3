#include "inspect/shipped.hpp"

#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/embedded.hpp"
#include "kernels/xz.hpp"
#include "util/error.hpp"
#include "util/json_bounded.hpp"

namespace lp::inspect {

namespace {

/// The decoded file is about 7 MB for the four sets; far more is not ours.
constexpr std::size_t k_max_results_bytes = std::size_t{256} << 20;
constexpr int k_results_format = 1;
constexpr std::size_t k_max_header_depth = 4;

/// The value of the first `"name":"..."` in an entry's line: the envelope's own, since
/// the envelope's members come sorted and its payload is the last but one.
std::string_view first_string_member(std::string_view line, std::string_view name) {
  const std::string needle = fmt::format("\"{}\":\"", name);
  const std::size_t at = line.find(needle);
  if (at == std::string_view::npos) {
    return {};
  }
  const std::size_t from = at + needle.size();
  const std::size_t to = line.find('"', from);
  return to == std::string_view::npos ? std::string_view() : line.substr(from, to - from);
}

ShippedTool tool_from_json(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object() || !j.contains("version") || !j["version"].is_string() || !j.contains("sha256") ||
      !j["sha256"].is_string()) {
    throw Error(fmt::format("{}: a tool must be {{\"version\": string, \"sha256\": string}}", where));
  }
  return {j["version"].get<std::string>(), j["sha256"].get<std::string>()};
}

ShippedHeader header_from_json(std::string_view line, const std::string& where) {
  const std::optional<nlohmann::json> j = try_parse_json_bounded(line, k_max_header_depth);
  if (!j || !j->is_object() || j->value("format", nlohmann::json()) != k_results_format) {
    throw Error(fmt::format("{}: not a results header of format {}", where, k_results_format));
  }
  ShippedHeader h;
  const nlohmann::json& fingerprint = j->value("analysis_fingerprint", nlohmann::json());
  const nlohmann::json& entries = j->value("entries", nlohmann::json());
  const nlohmann::json& ptxas = j->value("ptxas", nlohmann::json());
  if (!fingerprint.is_string() || !entries.is_number_unsigned() || !ptxas.is_array()) {
    throw Error(fmt::format("{}: the header needs analysis_fingerprint, entries and ptxas", where));
  }
  h.analysis_fingerprint = fingerprint.get<std::string>();
  h.entries = entries.get<std::size_t>();
  h.nvdisasm = tool_from_json(j->value("nvdisasm", nlohmann::json()), where + ": nvdisasm");
  for (const nlohmann::json& p : ptxas) {
    h.ptxas.push_back(tool_from_json(p, where + ": ptxas"));
  }
  return h;
}

}  // namespace

ShippedResults ShippedResults::parse(std::string text, const std::string& origin) {
  ShippedResults r;
  r.m_text = std::move(text);
  const std::string_view all(r.m_text);
  std::size_t line_no = 0;
  std::size_t at = 0;
  while (at < all.size()) {
    std::size_t end = all.find('\n', at);
    end = end == std::string_view::npos ? all.size() : end;
    const Span span{at, end - at};
    const std::string_view line = all.substr(span.offset, span.bytes);
    at = end + 1;
    const std::string where = fmt::format("{}: line {}", origin, ++line_no);
    if (line_no == 1) {
      r.m_header = header_from_json(line, where);
      continue;
    }
    const std::string_view kind = first_string_member(line, "kind");
    const std::string key(first_string_member(line, "key"));
    auto& index = kind == "sass" ? r.m_sass : r.m_compiles;
    if ((kind != "sass" && kind != "ptxas") || key.empty() || !index.emplace(key, span).second) {
      throw Error(fmt::format("{}: an entry needs a kind (sass or ptxas) and a key of its own", where));
    }
  }
  if (line_no == 0) {
    throw Error(fmt::format("{}: empty, not even a header", origin));
  }
  if (r.size() != r.m_header.entries) {
    throw Error(fmt::format("{}: {} entries, the header says {}", origin, r.size(), r.m_header.entries));
  }
  return r;
}

std::shared_ptr<const ShippedResults> ShippedResults::embedded() {
  static std::once_flag once;
  static std::shared_ptr<const ShippedResults> results;
  std::call_once(once, [] {
    const std::optional<std::string_view> stored = kernels::embedded_file(k_shipped_results_path);
    if (!stored) {
      results = std::make_shared<const ShippedResults>();
      return;
    }
    const std::string origin = fmt::format("<embedded>/kernels/{}", k_shipped_results_path);
    results = std::make_shared<const ShippedResults>(
        parse(kernels::unxz(*stored, origin, 0, k_max_results_bytes), origin));
  });
  return results;
}

LoadedEntry<sass::CubinReport> ShippedResults::load_report(const std::string& key,
                                                           std::string_view cubin_sha256) const {
  const auto it = m_sass.find(key);
  return it == m_sass.end() ? LoadedEntry<sass::CubinReport>{} : report_entry(line(it->second), key, cubin_sha256);
}

LoadedEntry<CompiledPtx> ShippedResults::load_compile(const std::string& key) const {
  const auto it = m_compiles.find(key);
  return it == m_compiles.end() ? LoadedEntry<CompiledPtx>{} : compile_entry(line(it->second), key);
}

}  // namespace lp::inspect
