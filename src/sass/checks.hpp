#pragma once
// The SASS checks, as rows of one table {id, description, function} (after
// bloaty's source table): the table drives registration, selection by id and the
// `--list-checks` listing, so adding a check is adding a row.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sass/cfg.hpp"
#include "sass/listing.hpp"
#include "sass/scoreboard.hpp"

namespace lp::sass {

/// One hazard in one function.
struct Finding {
  std::string check;               ///< id of the check that found it
  std::string kernel;              ///< function name
  std::uint64_t address = 0;       ///< of the offending instruction
  std::string instruction;         ///< its text
  std::uint64_t wgmma_address = 0; ///< of the in-flight MMA it races with
  std::string wgmma_instruction;   ///< that MMA's text
  std::string access;              ///< "write" or "read" (of the registers below)
  std::vector<int> registers;      ///< GPR numbers both touch, ascending
  bool over_back_edge = false;     ///< the race needs a path round a loop back edge
  /// The warpgroup wait the race passes, which leaves the MMA in flight: the first
  /// WARPGROUP.DEPBAR after the MMA in listing order on the way to the instruction
  /// (round the loop end when over_back_edge). 0 / empty: no wait on that way.
  std::uint64_t wait_address = 0;
  std::string wait_instruction;
};

/// What a check sees of one function; the scoreboard analysis is shared by all.
struct CheckContext {
  const KernelListing& kernel;
  const ControlFlowGraph& cfg;
  const ScoreboardResult& scoreboard;
};

/// Appends this check's findings for one function.
using CheckFunction = void (*)(const CheckContext&, std::vector<Finding>&);

/// One row of the table.
struct Check {
  std::string_view id;
  std::string_view description;
  CheckFunction run;
};

/// Every check, in listing order.
std::span<const Check> all_checks() noexcept;

/// The row with `id`, or nullptr.
const Check* find_check(std::string_view id) noexcept;

/// The row with `id`; throws lp::UsageError "unknown SASS check 'ID' (known: ...)".
const Check& require_check(std::string_view id);

}  // namespace lp::sass
