#pragma once
// The cases of a report by a key of each (diff: the configuration, compiler mapped;
// the view's remedies: the axes). A key text is about 300 bytes for a sweep's axes, so
// a million cases' keys would cost several times the report; the index keeps each
// case's key as a 64-bit hash beside its number (16 bytes a case), and where a hash
// matches it makes the key text again and compares it, so a collision never pairs two
// different keys.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/case_store.hpp"

namespace lp::formats {

class CaseIndex {
 public:
  using KeyOf = std::function<std::string(const report::CaseRecord&)>;

  /// One pass over `cases` (which must outlive the index).
  CaseIndex(const report::CaseStore& cases, KeyOf key_of);

  /// The key of case i, made again.
  [[nodiscard]] std::string key(std::size_t i) const { return m_key_of(m_cases[i]); }
  /// The case whose key is `key`; of several, the last in store order.
  [[nodiscard]] std::optional<std::size_t> find(const std::string& key) const;
  /// The first case, in store order, whose key an earlier case has: {that case, the
  /// earliest case with its key}; nullopt when every key is once.
  [[nodiscard]] std::optional<std::pair<std::size_t, std::size_t>> first_repeat() const;

 private:
  static std::uint64_t hash(const std::string& key);
  const report::CaseStore& m_cases;
  KeyOf m_key_of;
  std::vector<std::pair<std::uint64_t, std::size_t>> m_entries;  ///< (hash, case), sorted
};

}  // namespace lp::formats
