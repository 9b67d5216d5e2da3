#pragma once
// How `loraprobe inspect` shows its results as text: one row per (variant or
// file, compiler). The counts are inspect::total() (inspect/document.hpp).

#include <string>
#include <vector>

#include "inspect/inspector.hpp"

namespace lp::cli {

/// The table: name, compiler, findings, HGMMA count, A from registers, most groups
/// in flight, registers, local memory (frame bytes and LDL/STL counts), and the
/// first finding (address, instruction, the HGMMA it races with) or the error.
/// `hazards_only` leaves out the clean rows.
std::string format_inspect_table(const std::vector<inspect::InspectResult>& results, bool hazards_only);

}  // namespace lp::cli
