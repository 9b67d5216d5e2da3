#pragma once
// The GPU of this host as env and check report it: the record a sweep's worker sends,
// read in this process (which runs no kernel, so no fault can hide behind it).

#include <optional>
#include <string>

#include "protocol/protocol.hpp"

namespace lp::cli {

/// The record of CUDA device `device`, or nullopt with `why` set ("no CUDA device: ...").
std::optional<protocol::GpuRecord> probe_gpu(int device, bool allow_jit_cache, std::string& why);

}  // namespace lp::cli
