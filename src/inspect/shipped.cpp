#include "inspect/shipped.hpp"

#include <mutex>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kernels/embedded.hpp"
#include "kernels/xz.hpp"
#include "util/error.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"

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

ShippedTool tool_from_json(const JsonIn& j) {
  return {j.at("version").string(), j.at("sha256").string()};
}

/// The header line, read by the project's typed reader: lp::InputError
/// "<where>:<pointer>: ..." for a missing or mistyped member.
ShippedHeader header_from_json(std::string_view line, const std::string& where) {
  const nlohmann::json parsed = parse_json_bounded(line, where, k_max_header_depth);
  const JsonIn doc(parsed, where);
  if (doc.at("format").whole<int>() != k_results_format) {
    doc.at("format").fail(fmt::format("not a results header of format {}", k_results_format));
  }
  ShippedHeader h;
  h.analysis_fingerprint = doc.at("analysis_fingerprint").string();
  h.entries = doc.at("entries").whole<std::size_t>();
  h.nvdisasm = tool_from_json(doc.at("nvdisasm"));
  for (const JsonIn& p : doc.at("ptxas").items()) {
    h.ptxas.push_back(tool_from_json(p));
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
