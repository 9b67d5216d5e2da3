#pragma once
// The configs/*.json files, compiled into the binary by cmake/embed_configs.cmake,
// so `loraprobe sweep` works from any directory.

#include <string_view>
#include <vector>

namespace lp::plan {

/// How embedded files are named in messages and reports.
inline constexpr std::string_view k_embedded_prefix = "<embedded>/configs/";

/// Contents of configs/<name> as built in; throws lp::UsageError naming the
/// available ones when there is no such file.
std::string_view embedded_config(std::string_view name);

/// Names of the embedded configs (default.json, seed-48590.json, ...).
std::vector<std::string_view> embedded_config_names();

}  // namespace lp::plan
