#include "util/json_bounded.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "util/error.hpp"

namespace lp {

std::size_t json_nesting(std::string_view text) {
  std::size_t depth = 0;
  std::size_t deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character, a quote included
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

void require_json_nesting(std::string_view text, const std::string& source, std::size_t max_depth) {
  if (json_nesting(text) > max_depth) {
    throw InputError(source, "", fmt::format("nesting deeper than {} levels", max_depth));
  }
}

std::string json_error_text(const std::exception& e) {
  std::string what = e.what();
  if (const auto pos = what.find("] "); what.starts_with("[json.exception") && pos != std::string::npos) {
    what = what.substr(pos + 2);
  }
  return what;
}

nlohmann::json parse_json_bounded(std::string_view text, const std::string& source, std::size_t max_depth) {
  require_json_nesting(text, source, max_depth);
  try {
    return nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::exception& e) {  // parse_error, and out_of_range for numbers that overflow
    throw InputError(source, "", "not JSON: " + json_error_text(e));
  }
}

std::optional<nlohmann::json> try_parse_json_bounded(std::string_view text, std::size_t max_depth) {
  if (json_nesting(text) > max_depth) {
    return std::nullopt;
  }
  nlohmann::json value = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace lp
