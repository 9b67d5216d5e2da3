#pragma once
// How `loraprobe inspect` shows its results as text: one row per (variant or
// file, compiler) and a summary line.

#include <string>
#include <vector>

#include "inspect/inspector.hpp"

namespace lp::cli {

/// Counts over the results.
struct InspectTotals {
  std::size_t items = 0;
  std::size_t clean = 0;
  std::size_t hazard = 0;
  std::size_t error = 0;
  std::size_t findings = 0;
  std::size_t made_by_ptx = 0;    ///< hazardous items whose PTX breaks the rule
  std::size_t made_by_ptxas = 0;  ///< hazardous items whose PTX is clean
  std::size_t skipped = 0;        ///< clean without nvdisasm: their PTX has no wgmma.mma_async
  /// 1 when an item has a hazard or could not be analysed, else 0.
  [[nodiscard]] int exit_code() const noexcept { return hazard + error > 0 ? 1 : 0; }
};

/// Adds up `results`.
InspectTotals total(const std::vector<inspect::InspectResult>& results);

/// The table: name, compiler, findings, HGMMA count, A from registers, most groups
/// in flight, registers, local memory (frame bytes and LDL/STL counts), and the
/// first finding (address, instruction, the HGMMA it races with) or the error.
/// `hazards_only` leaves out the clean rows.
std::string format_inspect_table(const std::vector<inspect::InspectResult>& results, bool hazards_only);

}  // namespace lp::cli
