#pragma once
// The cases of a report, held packed (issue 30: reading a report may cost at most 4x
// its size). A CaseRecord is about 700 bytes before its strings; a compact report
// spends about 85 bytes of file on one. The store keeps each record as the bytes of
// util/packed.hpp: counts as varints, the texts many cases share (variant ids,
// reasons, tolerance derivations) once in a table, a compact group's axes once in
// the axis packing. A record costs about 1.5x its compact row.
//
// It reads like a std::vector<CaseRecord> whose elements are made when read:
// operator[], front(), back() and the iterator return a const CaseRecord by value,
// so `for (const CaseRecord& c : store)` and `const CaseRecord& c = store[i]` read
// one record each, and no one can change a record in place by mistake (set() does).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/axis_values.hpp"
#include "report/case_record.hpp"

namespace lp::report {

class CaseStore {
 public:
  class const_iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = CaseRecord;
    using difference_type = std::ptrdiff_t;
    using reference = const CaseRecord;
    using pointer = void;
    const_iterator() = default;
    const CaseRecord operator*() const { return (*m_store)[m_index]; }
    const_iterator& operator++() {
      ++m_index;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator before = *this;
      ++m_index;
      return before;
    }
    bool operator==(const const_iterator& other) const { return m_index == other.m_index; }

   private:
    friend class CaseStore;
    const_iterator(const CaseStore* store, std::size_t index) : m_store(store), m_index(index) {}
    const CaseStore* m_store = nullptr;
    std::size_t m_index = 0;
  };

  CaseStore() = default;
  CaseStore(std::initializer_list<CaseRecord> records);  // NOLINT(google-explicit-constructor): reads as a vector
  CaseStore(const std::vector<CaseRecord>& records);      // NOLINT(google-explicit-constructor)

  [[nodiscard]] std::size_t size() const { return m_records.size(); }
  [[nodiscard]] bool empty() const { return m_records.empty(); }
  /// Record i, made from its bytes. Throws lp::Error for i out of range.
  const CaseRecord operator[](std::size_t i) const;
  const CaseRecord front() const { return (*this)[0]; }
  const CaseRecord back() const { return (*this)[size() - 1]; }
  [[nodiscard]] const_iterator begin() const { return {this, 0}; }
  [[nodiscard]] const_iterator end() const { return {this, size()}; }

  void push_back(const CaseRecord& record);
  /// Replaces record i (its old bytes stay until the store goes: replacing is rare).
  void set(std::size_t i, const CaseRecord& record);
  void reserve(std::size_t n) { m_records.reserve(n); }
  void clear();

  /// Every record made again (tests, and the few callers that sort or index them).
  [[nodiscard]] std::vector<CaseRecord> records() const;
  /// Bytes held: the records' bytes, their index and the shared text table (benchmarks,
  /// tests of the packing).
  [[nodiscard]] std::size_t bytes() const;

 private:
  /// Where a record's bytes are: a block of m_blocks and an offset in it.
  struct Slot {
    std::uint32_t block = 0;
    std::uint32_t offset = 0;
  };
  /// The number of `text` in the shared table; inline texts beyond k_max_texts.
  void put_text(ByteWriter& out, const std::string& text);
  [[nodiscard]] std::string get_text(ByteReader& in) const;
  Slot append(const std::string& bytes);

  std::vector<Slot> m_records;
  std::vector<std::string> m_blocks;  ///< records' bytes; a record never spans two blocks
  std::vector<std::string> m_texts;
  std::unordered_map<std::string, std::uint32_t> m_text_numbers;
  AxisValues::Packing m_axes;
};

}  // namespace lp::report
