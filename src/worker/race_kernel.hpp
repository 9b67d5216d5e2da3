#pragma once
// The worker's half of the race control (docs/race-control.md, sweep/race_control.hpp):
// run the cubin the parent compiled and checked, and count the tiles that read the
// A registers written after their wgmma.

#include <cstddef>
#include <span>
#include <string_view>

#include "cuda/stream.hpp"
#include "protocol/protocol.hpp"

namespace lp::worker {

/// Loads `cubin` into the current context and runs it `launches` times over `ctas`
/// tiles, output poisoned before each launch. Throws lp::CudaError
/// (lp::StickyCudaError after a fault in the kernel).
protocol::RaceResult run_race_kernel(std::string_view cubin, unsigned ctas, unsigned launches, const Stream& stream);

/// Adds one launch's outputs to `r`: `ctas` tiles of `outputs.size() / ctas` floats
/// each, in tile order. Counts the late tiles and elements (any value other than
/// k_race_clean_value), the unwritten elements (NaN poison) and every written value,
/// and the launch when any tile was late. Scans in up to `threads` threads (0: the
/// hardware's count; a launch's 2 M elements took 6 ms in one). Throws lp::Error when
/// the outputs do not divide into `ctas` tiles.
void tally_race_launch(std::span<const float> outputs, unsigned ctas, std::size_t threads, protocol::RaceResult& r);

}  // namespace lp::worker
