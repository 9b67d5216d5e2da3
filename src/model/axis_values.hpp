#pragma once
// A case's (or a kernel variant's) axis values: {"op": "expand", "tokens": 256, ...},
// as reports, journals, manifests and the plan hold them. The typed form of a JSON
// object of axis values, for memory: a million-case report holds a million of these,
// and a JSON object of 20 axes costs about 2 KB where this costs about 0.5 KB.
//
// Keys are kept sorted, the order a JSON object writes them in, so to_json().dump()
// is what the JSON object gave. Whole numbers, booleans and null are held in place;
// every other value (a string, a per-slice list, a nested object, a fraction) is held
// once per process, in a pool of the distinct values seen, which for axes is a short
// vocabulary (ops, dtypes, compilers, Triton versions, variant ids, hidden lists).
// The values many records have in common (a compact report's group) can be held once
// for all of them: see shared().

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace lp {

class ByteReader;
class ByteWriter;

/// One axis value: null, a boolean, a whole number that fits int64, or any other JSON
/// value (a string, a per-slice list, a nested object, a fraction, a larger number),
/// held once per process. 16 bytes; equal values compare equal in O(1).
class AxisValue {
 public:
  AxisValue() = default;  ///< null: an axis that does not apply
  static AxisValue from_json(const nlohmann::json& value);
  /// A boolean, a whole number, a string: the values code sets without JSON at hand.
  static AxisValue of_bool(bool value);
  static AxisValue of_int(std::int64_t value);
  static AxisValue of_text(std::string_view value);
  static AxisValue of_ints(const std::vector<std::int64_t>& values);  ///< a list: per-slice sizes
  /// A value typed on a command line (`--filter block_n=128`): the JSON scalar the text
  /// is (128, true, 1.5, "x"), else the text itself (fp32, a list or object as text).
  static AxisValue from_user_text(std::string_view text);
  [[nodiscard]] nlohmann::json to_json() const;
  /// to_json() as compact text: "32", "\"bf16\"", "[1,2]".
  [[nodiscard]] std::string dump() const;

  [[nodiscard]] bool is_null() const { return m_kind == Kind::null; }
  /// The value when it is a whole number that fits int64, else nullopt.
  [[nodiscard]] std::optional<std::int64_t> integer() const;
  /// The value when it is a string, else nullopt.
  [[nodiscard]] std::optional<std::string> text() const;
  /// The value when it is a boolean, else nullopt.
  [[nodiscard]] std::optional<bool> boolean() const;

  [[nodiscard]] bool operator==(const AxisValue& other) const;
  /// Equal as JSON values are: as ==, and a whole number matches the same number written
  /// as a fraction (128 and 128.0), as a filter a user typed expects.
  [[nodiscard]] bool matches(const AxisValue& other) const;

 private:
  friend class AxisValues;
  enum class Kind : std::uint8_t { null, boolean, integer, pooled, erased };
  Kind m_kind = Kind::null;
  union {
    bool boolean;
    std::int64_t integer;
    const nlohmann::json* pooled;  ///< equal values are one pointer
  } m_value{};
};

/// A list of values (a config's axis) from JSON and back.
std::vector<AxisValue> to_axis_values(const std::vector<nlohmann::json>& values);
std::vector<nlohmann::json> to_json_values(const std::vector<AxisValue>& values);

/// The values of a case's (or a variant's) axes, by key.
class AxisValues {
 public:
  AxisValues() = default;

  /// The values of a JSON object (a report's "axes", a manifest's). The readers check
  /// the type with its pointer first; anything but an object here is lp::Error.
  static AxisValues from_json(const nlohmann::json& object);
  /// The JSON object, keys in their sorted order.
  [[nodiscard]] nlohmann::json to_json() const;
  /// to_json().dump(): a key for maps and the text an id hashes.
  [[nodiscard]] std::string dump() const;

  /// These values held once for this object and every copy made of it, which then costs
  /// a pointer plus the values set on the copy (a compact report's group: each of its
  /// cases copies the group's axes and sets its own tokens, rank, hidden and num_loras).
  [[nodiscard]] AxisValues shared() const;

  [[nodiscard]] bool empty() const { return size() == 0; }
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] bool contains(std::string_view key) const;
  /// The value of `key`; null when there is none (an axis that does not apply).
  [[nodiscard]] AxisValue at(std::string_view key) const;
  /// at(key) as JSON.
  [[nodiscard]] nlohmann::json value(std::string_view key) const;
  /// at(key).integer(), at(key).text(), at(key).boolean().
  [[nodiscard]] std::optional<std::int64_t> integer(std::string_view key) const { return at(key).integer(); }
  [[nodiscard]] std::optional<std::string> text(std::string_view key) const { return at(key).text(); }
  [[nodiscard]] std::optional<bool> boolean(std::string_view key) const { return at(key).boolean(); }
  /// Every key and value, in key order.
  [[nodiscard]] std::vector<std::pair<std::string_view, nlohmann::json>> items() const;
  /// Every key and value, in key order, without JSON.
  [[nodiscard]] std::vector<std::pair<std::string_view, AxisValue>> entries() const;

  /// Sets `key` to `value` (adding the key, or replacing its value).
  void set(std::string_view key, const nlohmann::json& value);
  void set(std::string_view key, AxisValue value);
  /// Removes `key`; nothing when it is absent.
  void erase(std::string_view key);

  [[nodiscard]] bool operator==(const AxisValues& other) const;

 private:
  struct Entry {
    const std::string* key = nullptr;  ///< pooled: equal keys are one pointer
    AxisValue value;                   ///< Kind::erased: hides m_shared's entry of the key
  };

 public:
  /// The numbering that the packed values of one store share (report::CaseStore): each
  /// pooled key, pooled value and shared entry list is packed as its number here, so a
  /// compact report's case costs its own few values and a number for its group's.
  /// Copyable with its store; numbers are meaningless outside it.
  class Packing {
   private:
    friend class AxisValues;
    std::uint64_t number(const void* pointer);
    std::vector<const void*> m_pointers;
    std::unordered_map<const void*, std::uint64_t> m_numbers;
    std::vector<std::shared_ptr<const std::vector<Entry>>> m_bases;  ///< kept alive for unpack
    std::unordered_map<const void*, std::uint64_t> m_base_numbers;
  };
  /// Appends these values' packed form (util/packed.hpp) to `out`.
  void pack(ByteWriter& out, Packing& packing) const;
  /// The values pack() wrote, with the same `packing`.
  static AxisValues unpack(ByteReader& in, const Packing& packing);

 private:
  [[nodiscard]] const Entry* find(std::string_view key) const;
  /// Calls f(entry) for every value, shared or own, in key order.
  template <class F>
  void visit(F&& f) const;

  std::shared_ptr<const std::vector<Entry>> m_shared;  ///< sorted by *key; never changed once shared
  std::vector<Entry> m_own;  ///< sorted by *key; over m_shared's entry of the same key
};

}  // namespace lp
