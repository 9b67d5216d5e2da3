#include "model/metrics_json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/json_in.hpp"
#include "util/text.hpp"

namespace lp {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 14> k_metric_columns = {
    "elements",      "nan",         "inf",         "huge",        "mismatches",  "unwritten",
    "untouched_rows_written",        "reference_nonfinite",        "failing_tiles", "total_tiles",
    "max_abs_dev",   "max_rel_dev", "worst_dev_over_tolerance",    "first_bad"};
constexpr std::array<std::string_view, 4> k_metric_prose = {"atol", "rtol", "tolerance_why", "summary"};
constexpr std::array<std::string_view, 3> k_timing_columns = {"kernel_ms", "reference_ms", "bytes"};

/// JSON has no NaN or Inf: such values are written as strings.
json real(double v) {
  if (std::isnan(v)) {
    return "nan";
  }
  if (std::isinf(v)) {
    return v > 0 ? "inf" : "-inf";
  }
  return v;
}

/// report.schema.json#/$defs/real: a number, "nan", "inf", "-inf" (or null, read as NaN).
double read_real(const JsonIn& in) {
  if (in.is_null()) {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (!in.json().is_string()) {
    return in.number();
  }
  const std::string s = in.string();
  if (s == "nan") {
    return std::numeric_limits<double>::quiet_NaN();
  }
  if (s == "inf" || s == "-inf") {
    return s == "inf" ? HUGE_VAL : -HUGE_VAL;
  }
  in.fail(fmt::format("expected a number, \"nan\", \"inf\" or \"-inf\", got {}", json_preview(in.json())));
}

std::uint64_t count(const JsonIn& in) { return in.count(); }

std::optional<std::uint64_t> count_or_null(const JsonIn& in) {
  return in.is_null() ? std::nullopt : std::optional<std::uint64_t>(count(in));
}

/// An element's bits as a report writes them ("0x3e80"): any over 16 bits say fp32 (a
/// 16-bit value is not padded, so fp32 bits that both fit in 16 bits, two subnormals,
/// read as 16-bit: describe() then pads them to 4 digits, not 8).
std::uint32_t read_bits(const JsonIn& in, bool& wide) {
  const std::string s = in.string();
  const std::optional<std::uint64_t> v =
      s.starts_with("0x") ? parse_number<std::uint64_t>(std::string_view(s).substr(2), 16) : std::nullopt;
  if (!v || *v > 0xffffffffu) {
    in.fail(fmt::format("expected 32-bit hex such as \"0x3e80\", got {}", json_preview(in.json())));
  }
  wide = wide || *v > 0xffffu;
  return static_cast<std::uint32_t>(*v);
}

/// A NaN with the sign its bits have, so that describe() says "-nan" where the element was.
double with_sign_of(double v, std::uint32_t bits, DType dtype) {
  const std::uint32_t sign = dtype == DType::f32 ? 0x80000000u : 0x8000u;
  return std::isnan(v) && (bits & sign) != 0 ? -std::numeric_limits<double>::quiet_NaN() : v;
}

BadElement read_bad(const JsonIn& in) {
  BadElement b;
  for (const auto& [key, value] : in.members()) {
    static constexpr std::array<std::string_view, 9> k_keys = {
        "token", "column", "slice", "expected", "actual", "expected_bits", "actual_bits", "untouched_row", "describe"};
    if (std::find(k_keys.begin(), k_keys.end(), key) == k_keys.end()) {
      value.fail("not a field of first_bad");
    }
  }
  b.token = in.at("token").integer();
  b.column = in.at("column").integer();
  b.slice = in.at("slice").integer();
  bool wide = false;
  b.expected_bits = read_bits(in.at("expected_bits"), wide);
  b.actual_bits = read_bits(in.at("actual_bits"), wide);
  b.dtype = wide ? DType::f32 : DType::bf16;
  b.expected = with_sign_of(read_real(in.at("expected")), b.expected_bits, b.dtype);
  b.actual = with_sign_of(read_real(in.at("actual")), b.actual_bits, b.dtype);
  b.untouched_row = in.at("untouched_row").boolean();
  (void)in.at("describe").string();  // prose: rebuilt from the fields
  return b;
}

}  // namespace

std::span<const std::string_view> metric_columns() { return k_metric_columns; }
std::span<const std::string_view> timing_columns() { return k_timing_columns; }

void to_json(json& j, const CompareMetrics& m) {
  json bad;
  if (m.first_bad) {
    const BadElement& b = *m.first_bad;
    const auto hex = [](std::uint32_t bits) { return fmt::format("0x{:x}", bits); };
    bad = {{"token", b.token},
           {"column", b.column},
           {"slice", b.slice},
           {"expected", real(b.expected)},
           {"actual", real(b.actual)},
           {"expected_bits", hex(b.expected_bits)},
           {"actual_bits", hex(b.actual_bits)},
           {"untouched_row", b.untouched_row},
           {"describe", b.describe()}};
  }
  j = {{"elements", m.elements},
       {"nan", m.nan},
       {"inf", m.inf},
       {"unwritten", m.unwritten ? json(*m.unwritten) : json()},
       {"untouched_rows_written", m.untouched_rows_written},
       {"mismatches", m.mismatches},
       {"max_abs_dev", real(m.max_abs_dev)},
       {"max_rel_dev", real(m.max_rel_dev)},
       {"worst_dev_over_tolerance", real(m.worst_dev_over_tolerance)},
       {"first_bad", bad},
       {"failing_tiles", m.failing_tiles},
       {"total_tiles", m.total_tiles},
       {"reference_nonfinite", m.reference_nonfinite},
       {"atol", m.atol},
       {"rtol", m.rtol},
       {"summary", m.summary()}};
  if (m.huge) {
    j["huge"] = *m.huge;
  }
  if (!m.tolerance_why.empty()) {  // a compact report does not keep it
    j["tolerance_why"] = m.tolerance_why;
  }
}

CompareMetrics metrics_from_json(const JsonIn& in) {
  for (const auto& [key, value] : in.members()) {
    if (std::find(k_metric_columns.begin(), k_metric_columns.end(), key) == k_metric_columns.end() &&
        std::find(k_metric_prose.begin(), k_metric_prose.end(), key) == k_metric_prose.end()) {
      value.fail("not a metric (report.schema.json#/$defs/metrics is closed)");
    }
  }
  CompareMetrics m;
  m.elements = count(in.at("elements"));
  m.nan = count(in.at("nan"));
  m.inf = count(in.at("inf"));
  const std::optional<JsonIn> huge = in.find("huge");  // absent or null before 4.1.0
  m.huge = huge ? std::optional<std::uint64_t>(count(*huge)) : std::nullopt;
  m.unwritten = count_or_null(in.at("unwritten"));
  m.mismatches = count(in.at("mismatches"));
  m.max_abs_dev = read_real(in.at("max_abs_dev"));
  m.max_rel_dev = read_real(in.at("max_rel_dev"));
  m.failing_tiles = count(in.at("failing_tiles"));
  if (const JsonIn bad = in.at("first_bad"); !bad.is_null()) {
    m.first_bad = read_bad(bad);
  }
  const auto optional = [&](std::string_view key, auto read, auto fallback) {
    const std::optional<JsonIn> v = in.find(key);  // absent or null: the fallback
    return v ? read(*v) : fallback;
  };
  m.untouched_rows_written = optional("untouched_rows_written", count, std::uint64_t{0});
  m.reference_nonfinite = optional("reference_nonfinite", count, std::uint64_t{0});
  m.total_tiles = optional("total_tiles", count, std::uint64_t{0});
  m.worst_dev_over_tolerance = optional("worst_dev_over_tolerance", read_real, 0.0);
  m.atol = optional("atol", [](const JsonIn& v) { return v.number(); }, 0.0);
  m.rtol = optional("rtol", [](const JsonIn& v) { return v.number(); }, 0.0);
  m.tolerance_why = optional("tolerance_why", [](const JsonIn& v) { return v.string(); }, std::string());
  (void)optional("summary", [](const JsonIn& v) { return v.string(); }, std::string());  // prose: rebuilt
  return m;
}

void to_json(json& j, const CaseTiming& t) {
  const auto number = [](const auto& v) { return v ? json(*v) : json(); };
  j = {{"kernel_ms", number(t.kernel_ms)},
       {"reference_ms", number(t.reference_ms)},
       {"bytes", number(t.bytes)},
       {"bandwidth_gb_s", number(t.bandwidth_gbps())}};
  if (t.grid) {
    j["grid"] = {(*t.grid)[0], (*t.grid)[1], (*t.grid)[2]};
  }
}

CaseTiming timing_from_json(const JsonIn& in) {
  (void)in.members();
  CaseTiming t;
  t.kernel_ms = in.optional_number("kernel_ms");
  t.reference_ms = in.optional_number("reference_ms");
  (void)in.optional_number("bandwidth_gb_s");  // derived: rebuilt from the fields
  if (const std::optional<JsonIn> v = in.find("bytes")) {
    t.bytes = count(*v);
  }
  if (const std::optional<JsonIn> v = in.find("grid")) {
    const std::vector<JsonIn> dims = v->items();
    if (dims.size() != 3) {
      v->fail(fmt::format("expected 3 grid dimensions, got {}", dims.size()));
    }
    t.grid = std::array<std::int64_t, 3>{dims[0].integer(0), dims[1].integer(0), dims[2].integer(0)};
  }
  return t;
}

}  // namespace lp
