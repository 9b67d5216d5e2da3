#pragma once
// The one JSON form of a case's metrics and timing (configs/schema/report.schema.json
// #/$defs/metrics and the case's timing): written by the worker's protocol, the full
// and compact reports, read back by each of them. Every key is a member's name, listed
// once, here.

#include <span>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "model/metrics.hpp"

namespace lp {

class JsonIn;

/// The metrics record; NaN and Inf (JSON has none) are written "nan", "inf", "-inf",
/// and the sentence of CompareMetrics::summary() is written as "summary".
void to_json(nlohmann::json& j, const CompareMetrics& m);
/// Inverse of to_json() ("summary" is read as prose and dropped: it is rebuilt from the
/// fields). Throws lp::InputError at the pointer of a missing, mistyped, out-of-range
/// or unknown field.
CompareMetrics metrics_from_json(const JsonIn& j);

/// The numbers a compact report keeps a column for, in its column order: every key of
/// to_json() but atol and rtol (kept in the report's tolerance list) and the prose
/// (summary, tolerance_why).
std::span<const std::string_view> metric_columns();

/// The timing record: kernel_ms, reference_ms, bytes, bandwidth_gb_s (null when not
/// known) and grid when known.
void to_json(nlohmann::json& j, const CaseTiming& t);
/// Inverse of to_json(); bandwidth_gb_s is read as derived and dropped.
CaseTiming timing_from_json(const JsonIn& j);

/// The timing numbers a compact report keeps a column for, in its column order.
std::span<const std::string_view> timing_columns();

}  // namespace lp
