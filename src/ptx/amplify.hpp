#pragma once
// The amplifier: makes a latent register-A wgmma hazard show on a GPU whose tensor
// cores are fast enough to read the A registers before the next loop trip writes
// them (H100, H200). docs/race-control.md measured that such a GPU reads them late
// only when work is queued ahead of the wgmma in its group; docs/amplify.md measured
// what this transform does to the LoRA kernels.
//
// Before each register-A `wgmma.mma_async`, in its group, it inserts D pairs of
// shared-memory wgmmas on that wgmma's own accumulator: the first with scale-a -1,
// the second with +1, so each pair adds (acc - p) + p, which is acc up to two fp32
// roundings (bounded in model/tolerance.hpp, term "amplify_pairs"). The wgmma then
// cannot start until the chain has run. The pairs read only shared memory the
// wgmma itself reads, so they stay inside the buffer and see values no copy can
// change while the wgmma is pending:
//   - B through the wgmma's own B descriptor (the same shape, the same bytes);
//   - A through the same descriptor read as a K-major 64x16 A tile: for N >= 64 its
//     64 rows are the B tile's rows 0..63; for N < 64 the descriptor's stride byte
//     offset (bits 32-45) is cleared, so all eight 8-row groups re-read the B tile's
//     rows 0..7 (a 64x16 read at N 32 would run past the tile).
// Only the K-major B form (imm-trans-b 0) of 16-bit A/B types with an f32
// accumulator is amplified; any other register-A wgmma is left alone and listed.
// Every original byte stays where it was: the pairs are whole lines inserted before
// the wgmma's line.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/problem.hpp"  // k_max_amplify

namespace lp::ptx {


/// One register-A wgmma the pairs were inserted before.
struct AmplifySite {
  std::string function;
  int line = 0;                   ///< the wgmma's line in the original PTX
  std::string shape;              ///< "m64n128k16"
  std::string b_descriptor;       ///< its B descriptor operand, which the pairs read too
  bool a_stride_cleared = false;  ///< N < 64: the pairs' A descriptor has SBO 0
  /// The count of the first wgmma.wait_group after it in the function; nullopt when
  /// none follows. Above 0, that wait leaves the wgmma (and the pairs) in flight.
  std::optional<int> wait_after;
  [[nodiscard]] bool pending() const noexcept { return wait_after && *wait_after > 0; }
};

/// A register-A wgmma the transform left alone, and why.
struct AmplifySkip {
  std::string function;
  int line = 0;
  std::string reason;
};

/// The amplified module and what was done to it.
struct Amplified {
  std::string ptx;      ///< the amplified text; the input itself when no site was amplified
  int amplify = 0;      ///< the pairs per register-A wgmma (D)
  std::size_t register_a_wgmma = 0;  ///< register-A wgmmas in the module
  std::vector<AmplifySite> sites;
  std::vector<AmplifySkip> skipped;
  /// True when pairs were inserted (D > 0 and at least one site).
  [[nodiscard]] bool changed() const noexcept { return amplify > 0 && !sites.empty(); }
  /// One sentence: "2 pairs before each of 2 register-A wgmmas (2 left in flight by
  /// a wait_group 1)", or why the PTX is unchanged.
  [[nodiscard]] std::string describe() const;
};

/// Inserts `amplify` dependent wgmma pairs before every register-A wgmma of `ptx`
/// (`source` names it in errors). `amplify` 0 returns the text unchanged. Throws
/// lp::UsageError for `amplify` outside [0, k_max_amplify] and
/// lp::sass::ListingError for PTX the reader cannot read.
Amplified amplify_ptx(std::string_view ptx, int amplify, std::string_view source);

}  // namespace lp::ptx
