#pragma once
// Per-function resource usage read straight from a cubin (an ELF64 file), so
// that no second tool (cuobjdump -res-usage) has to run. ptxas records it in the
// global `.nv.info` section as EIATTR records keyed by the function's symbol:
// EIATTR_REGCOUNT (0x2f), EIATTR_FRAME_SIZE (0x11, bytes of local memory per
// thread, where spills live), EIATTR_MIN_STACK_SIZE (0x12). The spill byte counts
// that `ptxas -v` prints are not stored in the cubin; the analysis counts the
// local loads/stores (LDL/STL) in the SASS instead.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace lp::sass {

/// What ptxas recorded about one function.
struct FunctionResources {
  std::optional<int> registers;            ///< registers per thread
  std::optional<std::uint32_t> frame_bytes;     ///< local memory frame per thread
  std::optional<std::uint32_t> min_stack_bytes; ///< stack per thread
};

/// True when `bytes` starts like an ELF file (a cubin rather than PTX or text).
bool looks_like_elf(std::string_view bytes) noexcept;

/// Function name -> resources, for every function the `.nv.info` records name.
/// Throws lp::Error when `bytes` is not a 64-bit little-endian ELF or a header or
/// section lies outside the file; a cubin without `.nv.info` gives an empty map.
std::map<std::string, FunctionResources> read_function_resources(std::string_view bytes);

}  // namespace lp::sass
