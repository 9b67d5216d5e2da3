#pragma once
// The compact form of a report's cases (the default since schema 4.0.0; --detail
// full keeps one object per case). The full records repeat prose the numbers
// already say: the metrics summary sentence, the tolerance derivation and the
// LATENT reason. They also repeat the axes of the kernel variant in every case.
// The compact form keeps every number and says each repeated thing once:
//
//   "cases": {
//     "detail": "compact",
//     "columns": ["index", "id", "group", "tokens", ...],  one name per row cell
//     "constants": {"runs": 3, "nan": 0, ...},  columns with one value in every row
//     "group_columns": ["variant", "static_findings", "attribution", <axes>...],
//     "groups":  [["expand-fp32-...", 8, "ptx", true, 32, ...], ...],
//     "tolerances": [[atol, rtol], ...],
//     "rows": [[0, "56d32debbc00", 3, 16, [4096], ...], ...]
//   }
//
// A row's axes are its group's axes (null cells: the axis is absent) plus the shape axes in the columns (tokens,
// hidden, rank, num_loras). A LATENT reason that is exactly latent_reason() plus
// attribution_note() is written null and rebuilt on reading; any other reason is
// kept. Dropped for good: metrics.summary, metrics.tolerance_why (the tolerances
// block explains the model), timing.grid (the shape gives it). Floats measured in
// single precision (event times) are written at single precision's shortest.

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/report.hpp"
#include "util/files.hpp"

namespace lp::report {

/// The compact case table of `cases`, made in two passes over them: the first learns the
/// groups, tolerances and constant columns, the second makes each row, one at a time.
class CompactCases {
 public:
  struct Layout;
  /// The first pass. `cases` must outlive this.
  explicit CompactCases(const CaseStore& cases);
  ~CompactCases();
  CompactCases(const CompactCases&) = delete;
  CompactCases& operator=(const CompactCases&) = delete;
  /// The table with "rows": [].
  [[nodiscard]] nlohmann::json header() const;
  /// The second pass: f(row) for each case, in plan order.
  void for_each_row(const std::function<void(const nlohmann::json& row)>& f) const;

 private:
  const CaseStore& m_cases;
  std::unique_ptr<Layout> m;
};

/// The compact case table of `cases` (plan order kept), rows included.
nlohmann::json compact_cases(const CaseStore& cases);

/// The variants block of a compact report: each entry's sass.disassembler and
/// sass.warnings (the same record and the same nvdisasm chatter for nearly every
/// cubin) become indexes into interned["disassembler"] and interned["warnings"].
/// Returns the interned lists.
nlohmann::json intern_variants(nlohmann::json& variants);

/// The inverse of intern_variants(). Throws lp::InputError (no file, a pointer) on
/// an index that is not in the list.
void restore_variants(nlohmann::json& variants, const nlohmann::json& interned);

/// The file text of a compact report: indented like a full one, but each case row,
/// group and variant on one line (5000 rows stay 5000 greppable lines), with doubles
/// at their shortest.
std::string dump_compact_report(nlohmann::json report, const CompactCases& cases);
/// As above, the text passed to `sink` piece by piece, a row at a time.
void dump_compact_report(nlohmann::json report, const CompactCases& cases, const TextSink& sink);

/// The file text of a full report (`report` with an empty "cases" list, which `cases`
/// fill), passed to `sink` a case at a time: the same bytes as the whole tree's dump(2)
/// and a newline, without ever holding the tree of every case.
void dump_full_report(const nlohmann::json& report, const CaseStore& cases, const TextSink& sink);

/// Whether `cases` (a report's "cases" value) is a compact table.
bool is_compact(const nlohmann::json& cases);

/// A compact table's header (columns, constants, groups and tolerances; everything but
/// the rows), read and checked once, so that its rows can be read one at a time
/// (formats::read_document streams them). Throws lp::InputError with no file and the
/// pointer "/cases/<key>" on a header that is not well-formed (the caller names the file).
class CompactTable {
 public:
  /// `header` may hold its rows; they are not read here.
  explicit CompactTable(const nlohmann::json& header);
  ~CompactTable();
  CompactTable(CompactTable&&) noexcept;
  CompactTable(const CompactTable&) = delete;
  CompactTable& operator=(const CompactTable&) = delete;
  CompactTable& operator=(CompactTable&&) = delete;

  /// The record of row `r`, a full record without the dropped prose. Throws
  /// lp::InputError "/cases/rows/<r>/<column>" on a row that is not well-formed.
  [[nodiscard]] CaseRecord row(const nlohmann::json& row, std::size_t r) const;

 private:
  struct State;
  std::unique_ptr<State> m;
};

/// The case records of a whole compact table (rows included), as CompactTable reads them.
std::vector<CaseRecord> expand_cases(const nlohmann::json& table);

}  // namespace lp::report
