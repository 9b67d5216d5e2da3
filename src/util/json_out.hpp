#pragma once
// The one spelling of an absent text in the documents loraprobe writes: JSON null,
// never "" (the schemas say string-or-null). Defined in json.cpp, util's one JSON unit.

#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace lp {

/// `text` as a JSON string, or null when it is empty.
nlohmann::json null_if_empty(const std::string& text);
/// `text` as a JSON string, or null when there is none.
nlohmann::json null_if_absent(const std::optional<std::string>& text);

}  // namespace lp
