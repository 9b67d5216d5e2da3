#pragma once
// The worker's half of the race control (docs/race-control.md, sweep/race_control.hpp):
// run the cubin the parent compiled and checked, and count the tiles that read the
// A registers written after their wgmma.

#include <string_view>

#include "cuda/stream.hpp"
#include "protocol/protocol.hpp"

namespace lp::worker {

/// Loads `cubin` into the current context and runs it `launches` times over `ctas`
/// tiles, output poisoned before each launch. Throws lp::CudaError
/// (lp::StickyCudaError after a fault in the kernel).
protocol::RaceResult run_race_kernel(std::string_view cubin, unsigned ctas, unsigned launches, const Stream& stream);

}  // namespace lp::worker
