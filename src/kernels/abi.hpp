#pragma once
// Triton's launch ABI beside our kernels' own arguments (each family's list,
// families/family.hpp kernel_arguments): the manifest's params of every variant are
// that list minus the arguments specialised to 1, plus these two scratch pointers;
// the launcher fills arguments by name (kernels/README.md "Runtime arguments").

#include <cstdint>
#include <string_view>

namespace lp::kernels {

/// The specialisation Triton's JIT gives an integer argument by its value, as the
/// manifest's `specialization` and the expand's width axes (n_spec, out_stride_spec)
/// name it: 1 becomes the constant 1, a multiple of 16 is marked divisible by 16, any
/// other value is passed as it is.
[[nodiscard]] constexpr std::string_view integer_specialization(std::int64_t value) noexcept {
  if (value == 1) {
    return "equal_to_1";
  }
  return value % 16 == 0 ? "divisible_by_16" : "unspecialized";
}

/// The two trailing .u64 parameters Triton 3.6 appends to every kernel.
inline constexpr std::string_view k_global_scratch = "global_scratch";
inline constexpr std::string_view k_profile_scratch = "profile_scratch";

}  // namespace lp::kernels
