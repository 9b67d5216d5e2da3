#pragma once
// Forward may-analysis, to a fixed point over the control-flow graph, of the
// wgmma group scoreboard (the `gsb0` of HGMMA and WARPGROUP.DEPBAR):
//
//  - every issued warpgroup MMA joins the open group; the one marked `gsb0`
//    commits the open group (PTX wgmma.commit_group). Whatever lies between the
//    members of a group does not matter: each member is issued, hence in flight,
//    from its own address on, so a write between two members races too;
//  - `WARPGROUP.DEPBAR.LE gsb0, N` (wgmma.wait_group N) retires every committed
//    group but the N youngest. An open (uncommitted) group is not retired: the
//    hardware counts committed groups only;
//  - a group holds, per member, the A registers (when A comes from registers)
//    and the accumulator range.
//
// The abstract state at a program point is the set of scoreboards that some path
// can reach: a scoreboard is the stack of committed groups (oldest first) plus the
// open group, each group the set of its HGMMAs, each HGMMA tagged with whether the
// path since its issue crossed a loop back edge. Paths join by set union, so
// nothing that can be in flight on some path is lost. A guarded HGMMA/DEPBAR gives
// both outcomes; `@!PT` instructions are skipped. To stay finite a stack deeper
// than k_max_tracked_groups merges its two oldest groups, which only keeps
// registers held longer (sound).
//
// A conflict is an instruction that may execute while an HGMMA is in flight and
// writes one of its A registers, or reads or writes its accumulator without being
// an MMA chained on that same accumulator range.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sass/cfg.hpp"
#include "sass/listing.hpp"
#include "sass/registers.hpp"

namespace lp::sass {

/// Which register set of the in-flight HGMMA was touched.
enum class HeldRole { a_operand, accumulator };
/// What the offending instruction did to it.
enum class Access { read, write };

/// One (offending instruction, in-flight HGMMA) pair.
struct Conflict {
  std::size_t instruction = 0;  ///< index into KernelListing::instructions
  std::size_t wgmma = 0;        ///< index of the in-flight HGMMA
  HeldRole role = HeldRole::a_operand;
  Access access = Access::write;
  std::vector<int> registers;   ///< GPR numbers, ascending
  /// True when every path that shows the conflict runs over a loop back edge
  /// (so it needs a second trip round a loop); false when a straight path does.
  bool over_back_edge = false;
};

/// What the analysis found in one function.
struct ScoreboardResult {
  std::vector<Conflict> conflicts;  ///< ordered by instruction, then wgmma, role, access
  std::size_t wgmma_count = 0;      ///< warpgroup MMA instructions
  std::size_t wgmma_register_a = 0; ///< of which read A from registers
  int max_groups_in_flight = 0;     ///< deepest scoreboard on any path (committed + open)
};

/// What one instruction does to the scoreboard, in either ISA: the analysis runs
/// on these, so the SASS check (HGMMA, `gsb0`, WARPGROUP.DEPBAR) and the PTX check
/// (wgmma.mma_async, wgmma.commit_group, wgmma.wait_group) are one analysis.
/// Registers are GprRanges of whatever numbering the front end uses (SASS: R<n>;
/// PTX: an id per named register, consecutive for %r130, %r131, ...).
struct ScoreboardOp {
  bool may_execute = true;      ///< false: never runs (SASS `@!PT`)
  bool always_executes = true;  ///< false: guarded, so both outcomes are possible
  /// A warpgroup MMA: what it holds while in flight.
  struct Mma {
    std::vector<GprRange> a;            ///< A registers; empty when A comes from shared memory
    std::vector<GprRange> accumulator;  ///< D (and C)
    bool commits = false;               ///< also closes the open group (SASS `gsb0`)
  };
  std::optional<Mma> mma;
  bool commit = false;      ///< closes the open group (PTX wgmma.commit_group)
  std::optional<int> wait;  ///< retires every committed group but the N youngest
  RegisterEffects effects;  ///< registers read and written
};

/// The analysis over `ops` (one per instruction, in order) and the graph `cfg`
/// built over the same instructions. `name` names the function in errors. Throws
/// lp::Error when the state set explodes past k_max_states_per_block.
ScoreboardResult run_scoreboard(const std::vector<ScoreboardOp>& ops, const ControlFlowGraph& cfg,
                                const std::string& name, const std::vector<int>& lines);

/// Most committed groups tracked separately before the two oldest merge.
inline constexpr std::size_t k_max_tracked_groups = 16;
/// Most distinct scoreboards at one block entry before the analysis gives up.
inline constexpr std::size_t k_max_states_per_block = 4096;

/// Runs the analysis on `kernel` with its graph `cfg`. Throws ListingError
/// (`source`, the instruction's line) for an MMA or DEPBAR it cannot decode, and
/// lp::Error when the state set explodes past k_max_states_per_block.
ScoreboardResult analyze_scoreboard(const KernelListing& kernel, const ControlFlowGraph& cfg,
                                    std::string_view source);

}  // namespace lp::sass
