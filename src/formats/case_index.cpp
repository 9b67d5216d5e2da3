#include "formats/case_index.hpp"

#include <algorithm>
#include <map>

namespace lp::formats {

CaseIndex::CaseIndex(const report::CaseStore& cases, KeyOf key_of) : m_cases(cases), m_key_of(std::move(key_of)) {
  m_entries.reserve(cases.size());
  std::size_t i = 0;
  for (const report::CaseRecord& c : cases) {
    m_entries.emplace_back(hash(m_key_of(c)), i++);
  }
  std::sort(m_entries.begin(), m_entries.end());
}

std::uint64_t CaseIndex::hash(const std::string& key) { return std::hash<std::string>{}(key); }

std::optional<std::size_t> CaseIndex::find(const std::string& key) const {
  const std::uint64_t h = hash(key);
  std::optional<std::size_t> found;
  for (auto it = std::lower_bound(m_entries.begin(), m_entries.end(), std::make_pair(h, std::size_t{0}));
       it != m_entries.end() && it->first == h; ++it) {
    if (this->key(it->second) == key) {
      found = it->second;  // entries of one hash are in store order: the last match is kept
    }
  }
  return found;
}

std::optional<std::pair<std::size_t, std::size_t>> CaseIndex::first_repeat() const {
  std::optional<std::pair<std::size_t, std::size_t>> repeat;
  for (std::size_t from = 0; from < m_entries.size();) {
    std::size_t to = from + 1;
    while (to < m_entries.size() && m_entries[to].first == m_entries[from].first) {
      ++to;
    }
    if (to - from > 1) {
      std::map<std::string, std::size_t> first_of;  // key -> its first case (entries of a hash are in store order)
      for (std::size_t e = from; e < to; ++e) {
        const auto [it, added] = first_of.emplace(key(m_entries[e].second), m_entries[e].second);
        if (!added && (!repeat || m_entries[e].second < repeat->first)) {
          repeat = std::make_pair(m_entries[e].second, it->second);
        }
      }
    }
    from = to;
  }
  return repeat;
}

}  // namespace lp::formats
