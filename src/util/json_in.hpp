#pragma once
// The one way loraprobe reads a value out of a parsed document (a report, a journal
// line, a manifest, a config, vLLM's files): a view of the value with the file and the
// JSON pointer it sits at. Every typed read checks the type and the range and throws
// lp::InputError "<file>:<pointer>: expected ..., got ..." (exit 2), so a wrong type
// or an out-of-range number is the document's fault, named where it is, never a
// silent reinterpretation (-1 read as 2^64-1, 2^32+8 as 8) or an internal error.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace lp {

/// The largest index, count or size a document may hold: far above any plan or file,
/// and exact in a double, which is how JSON tools read numbers.
inline constexpr std::size_t k_max_json_count = std::size_t{1} << 53;

/// `key` as one token of a JSON pointer (RFC 6901: "~" is "~0", "/" is "~1").
std::string json_pointer_token(std::string_view key);

/// The first characters of a value's JSON text, for an error message.
std::string json_preview(const nlohmann::json& value);

/// The one wording of a whole number outside [lo, hi]: "expected a whole number in
/// [lo, hi], got <got>" (JsonIn::integer's, for a range a reader checks after it).
std::string whole_out_of_range(std::int64_t lo, std::int64_t hi, std::string_view got);
std::string whole_out_of_range(std::uint64_t lo, std::uint64_t hi, std::string_view got);

class JsonIn {
 public:
  /// `file` must outlive the view and every view taken from it.
  JsonIn(const nlohmann::json& value, const std::string& file, std::string pointer = "")
      : m_value(&value), m_file(&file), m_pointer(std::move(pointer)) {}

  [[nodiscard]] const nlohmann::json& json() const noexcept { return *m_value; }
  [[nodiscard]] const std::string& file() const noexcept { return *m_file; }
  [[nodiscard]] const std::string& pointer() const noexcept { return m_pointer; }
  [[nodiscard]] bool is_null() const noexcept;

  /// The member `key` of this object: "missing \"key\"" when absent.
  [[nodiscard]] JsonIn at(std::string_view key) const;
  /// The member `key`, or nullopt when it is absent or null.
  [[nodiscard]] std::optional<JsonIn> find(std::string_view key) const;
  /// The member `key` as string() / number() read it, or nullopt when it is absent or null.
  [[nodiscard]] std::optional<std::string> optional_string(std::string_view key) const;
  [[nodiscard]] std::optional<double> optional_number(std::string_view key) const;
  /// Element `i` of this array.
  [[nodiscard]] JsonIn operator[](std::size_t i) const;
  /// The elements of this array, as views.
  [[nodiscard]] std::vector<JsonIn> items() const;
  /// This object's members as (key, view), in the document's order for ordered_json input.
  [[nodiscard]] std::vector<std::pair<std::string, JsonIn>> members() const;

  /// This value, checked to be an object / an array.
  const nlohmann::json& object() const;
  const nlohmann::json& array() const;
  [[nodiscard]] std::string string() const;
  [[nodiscard]] bool boolean() const;
  /// Any number, finite.
  [[nodiscard]] double number() const;
  /// A whole number in [lo, hi] (a JSON integer; 3.0 is not one).
  [[nodiscard]] std::int64_t integer(std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                                     std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const;
  /// A whole number in [lo, hi], which may reach past int64's range (a seed: JSON
  /// writers keep 2^63..2^64-1 as unsigned).
  [[nodiscard]] std::uint64_t natural(std::uint64_t lo = 0, std::uint64_t hi = std::numeric_limits<std::uint64_t>::max()) const;
  /// integer() in T's range (or the narrower [lo, hi]); natural() for an unsigned 64-bit T.
  template <class T>
  [[nodiscard]] T whole(T lo = std::numeric_limits<T>::min(), T hi = std::numeric_limits<T>::max()) const {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) == sizeof(std::uint64_t)) {
      return static_cast<T>(natural(lo, hi));
    } else {
      const auto low = static_cast<std::int64_t>(lo);
      const auto high = static_cast<std::uint64_t>(hi) > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                            ? std::numeric_limits<std::int64_t>::max()
                            : static_cast<std::int64_t>(hi);
      return static_cast<T>(integer(low, high));
    }
  }
  /// A count, index or size: a whole number in [0, k_max_json_count].
  [[nodiscard]] std::size_t count() const { return whole<std::size_t>(0, k_max_json_count); }
  /// A list of strings.
  [[nodiscard]] std::vector<std::string> strings() const;

  /// Throws lp::InputError at this value's pointer.
  [[noreturn]] void fail(const std::string& message) const;

 private:
  const nlohmann::json* m_value;
  const std::string* m_file;
  std::string m_pointer;
};

}  // namespace lp
