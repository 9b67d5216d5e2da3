#pragma once
// Triton's launch ABI beside our kernels' own arguments (each family's list,
// families/family.hpp kernel_arguments): the manifest's params of every variant are
// that list minus the arguments specialised to 1, plus these two scratch pointers;
// the launcher fills arguments by name (kernels/README.md "Runtime arguments").

#include <string_view>

namespace lp::kernels {

/// The two trailing .u64 parameters Triton 3.6 appends to every kernel.
inline constexpr std::string_view k_global_scratch = "global_scratch";
inline constexpr std::string_view k_profile_scratch = "profile_scratch";

}  // namespace lp::kernels
