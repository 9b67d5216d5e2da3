#pragma once
// The shrink family: x [T,H] (dtype X) -> buf [S,T,R] fp32, times scale
// (docs/problem.md). lora_linear reuses its sizes.

#include <cstdint>

#include "families/family.hpp"

namespace lp {

[[nodiscard]] const KernelFamily& shrink_family() noexcept;

/// The shrink's compulsory traffic: x rows of live tokens, the A of the LoRAs in use,
/// buf written (fp32).
[[nodiscard]] std::uint64_t shrink_traffic(const Problem& p, const LoraMetadata& m);
/// The device bytes of x and A.
[[nodiscard]] std::uint64_t shrink_tensor_bytes(const Problem& p);
/// " H_in=... L=... X->out" and, after `rest`, " scale=... split_k=...".
[[nodiscard]] std::string shrink_describe(const Problem& p, std::string_view dtypes);

}  // namespace lp
