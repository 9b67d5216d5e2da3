#pragma once
// A JSON value that loraprobe carries through a typed record without interpreting it:
// the resolved config in a report's meta, the parts of a merged report, what the race
// control's worker measured. It is held as its compact JSON text, so that the record
// that holds it needs no JSON library in its header, and it is written back as the
// same value it was read as.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace lp {

class JsonText {
 public:
  JsonText() = default;  ///< null
  /// The value's compact text (nlohmann's dump(): numbers as they round-trip).
  static JsonText of(const nlohmann::json& value);
  /// A document put together from values that are text already, without the JSON
  /// library at hand: a string, an array of `items`, an object of `members` (keys in
  /// nlohmann's order, sorted, as of() writes them).
  static JsonText of_string(std::string_view text);
  static JsonText array(const std::vector<JsonText>& items);
  static JsonText object(const std::vector<std::pair<std::string, JsonText>>& members);

  [[nodiscard]] nlohmann::json value() const;
  [[nodiscard]] bool is_null() const noexcept { return m_text == "null"; }
  [[nodiscard]] const std::string& text() const noexcept { return m_text; }
  /// The value indented by 2, as a document to print (no final newline).
  [[nodiscard]] std::string pretty() const;
  [[nodiscard]] bool operator==(const JsonText&) const = default;

 private:
  std::string m_text = "null";
};

}  // namespace lp
