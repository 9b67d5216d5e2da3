#pragma once
// The expand family: buf [S,T,R] (dtype I) -> y [T,H_tot] (dtype W), the kernel of
// the field report (docs/problem.md). lora_linear reuses its sizes.

#include <cstdint>

#include "families/family.hpp"

namespace lp {

[[nodiscard]] const KernelFamily& expand_family() noexcept;

/// The expand's compulsory traffic (verify/stats.hpp): buf rows of live tokens read in
/// the A operand's dtype, the B of the LoRAs in use, y written (and read with ADD_INPUTS).
[[nodiscard]] std::uint64_t expand_traffic(const Problem& p, const LoraMetadata& m);
/// The device bytes of B, y, y_in and the reference.
[[nodiscard]] std::uint64_t expand_tensor_bytes(const Problem& p);

}  // namespace lp
