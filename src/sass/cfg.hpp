#pragma once
// Control-flow graph of one function's SASS.
//
// Blocks start at the first instruction, at every label and branch target, and
// after every control-transfer instruction. Edges:
//   BRA/JMP  -> its target; a guarded one also falls through; `@!PT BRA` only falls through
//   EXIT/KILL/unguarded -> nothing; guarded -> falls through (other threads go on)
//   CALL to a label inside the function -> the callee (ptxas puts subroutines such
//        as the slow path of a division after the kernel body, ending in RET);
//        to anything else -> falls through
//   RET      -> every instruction after a CALL into this function (all return sites)
//   BRX/JMX  -> every block (indirect: target unknown, so assume any)
//   anything else -> falls through
// BSSY/BSYNC/WARPSYNC only steer reconvergence and are not edges. Back edges are
// the retreating edges of a depth-first search from the entry; for the reducible
// graphs ptxas emits they are exactly the loop back edges.

#include <cstddef>
#include <string_view>
#include <optional>
#include <vector>

#include "sass/listing.hpp"

namespace lp::sass {

/// A straight-line run of instructions [first, last) of the function.
struct BasicBlock {
  std::size_t first = 0;
  std::size_t last = 0;
  std::vector<std::size_t> successors;  ///< block indices
  std::vector<bool> back_edge;          ///< parallel to successors
  bool reachable = false;               ///< from the entry block
};

/// The graph; block 0 is the entry.
class ControlFlowGraph {
 public:
  /// Builds the graph of `kernel`. Throws ListingError (source `source`, the
  /// branch's line) when a branch target is neither a label nor an instruction.
  static ControlFlowGraph build(const KernelListing& kernel, std::string_view source);

  [[nodiscard]] const std::vector<BasicBlock>& blocks() const noexcept { return m_blocks; }
  /// Index of the block holding instruction `index`.
  [[nodiscard]] std::size_t block_of(std::size_t index) const { return m_block_of.at(index); }
  /// Number of back edges (loops, counted by their latches).
  [[nodiscard]] std::size_t back_edge_count() const noexcept;

 private:
  /// Where blocks start, what each control instruction targets, where calls return.
  struct Leaders {
    std::vector<bool> leader;
    std::vector<std::optional<std::size_t>> target;
    std::vector<std::size_t> return_sites;
  };
  static Leaders find_leaders(const KernelListing& kernel, std::string_view source);
  /// Cuts the instructions into blocks at the leaders.
  void make_blocks(const std::vector<bool>& leader);
  /// The successors of each block, from how its last instruction flows.
  void link(const KernelListing& kernel, const Leaders& leaders);
  /// Reachability from the entry, and the edges that retreat (depth-first search).
  void mark_back_edges();

  std::vector<BasicBlock> m_blocks;
  std::vector<std::size_t> m_block_of;
};

}  // namespace lp::sass
