#pragma once
// The records another library writes and a report carries: the host, the toolkit, the
// compilers, the GPU, the inspection cache (environment), a set's bundled ptxas, the
// resolved config, a merge's parts (meta), the race control's tally (controls), how an
// image was built and what its SASS analysis found (variants).
//
// Each is a typed record, read once where the report is read (report/records.cpp,
// through JsonIn), and carried as a Carried<T>: the record beside the JSON text it was
// read as, or that its owner wrote (X::to_json_text()). The text is what the report
// writes back, so a report of any version (2.x records differ in their keys) goes
// through `report --format json`, `merge` and `as_report` byte for byte, keys this
// loraprobe does not read included; the printers read record(), never a key.

#include <optional>

#include "util/json_in.hpp"
#include "util/json_text.hpp"

namespace lp::report {

template <class T>
class Carried {
 public:
  Carried() = default;  ///< null: not recorded
  /// The record in its owner's JSON form (what the sweep hands over: compile's
  /// to_json_text(), protocol's, sass's), read as a report's is. Implicit, so a block is
  /// filled from its owner's record as it was before the records were typed.
  Carried(JsonText text);  // NOLINT(google-explicit-constructor)
  /// The record at `j`: an object read by T::from_json, or null (not recorded). Throws
  /// lp::InputError at j's pointer for anything else, or for what T's reader refuses.
  static Carried read(const JsonIn& j);
  /// parent[key]: absent reads as null.
  static Carried read_member(const JsonIn& parent, const char* key);

  /// The record; nullopt when the report has null (or nothing) there.
  [[nodiscard]] const std::optional<T>& record() const noexcept { return m_record; }
  /// The record as the report holds it, written back as it is.
  [[nodiscard]] const JsonText& json_text() const noexcept { return m_text; }
  /// Its compact JSON text (what meta.config_sha256 hashes).
  [[nodiscard]] const std::string& text() const noexcept { return m_text.text(); }
  [[nodiscard]] bool is_null() const noexcept { return m_text.is_null(); }
  /// The same record: the same text.
  [[nodiscard]] bool operator==(const Carried& other) const noexcept { return m_text == other.m_text; }

 private:
  std::optional<T> m_record;
  JsonText m_text;
};

}  // namespace lp::report
