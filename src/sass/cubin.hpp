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
#include <vector>

namespace lp::sass {

/// What ptxas recorded about one function.
struct FunctionResources {
  std::optional<int> registers;            ///< registers per thread
  std::optional<std::uint32_t> frame_bytes;     ///< local memory frame per thread
  std::optional<std::uint32_t> min_stack_bytes; ///< stack per thread
};

/// Where a kernel's parameters lie in constant bank 0, from its `.nv.info.<name>`
/// section: EIATTR_PARAM_CBANK (0x0a: the bank offset of the first parameter, 0x210
/// on sm_90) and one EIATTR_KPARAM_INFO (0x17) per parameter (ordinal, offset from
/// that base, size in bytes).
struct ParamLayout {
  std::uint32_t bank_offset = 0;
  struct Param {
    int ordinal = 0;
    std::uint32_t offset = 0;  ///< from bank_offset
    std::uint32_t bytes = 0;
  };
  std::vector<Param> params;  ///< in the order ptxas wrote them
  /// The ordinal of the parameter holding bank-0 byte `at` (c[0x0][at]), if any.
  [[nodiscard]] std::optional<int> ordinal_at(std::uint32_t at) const;
};

/// Function name -> parameter layout, for every function with a `.nv.info.<name>`
/// section that has EIATTR_PARAM_CBANK. Throws lp::Error as read_function_resources.
std::map<std::string, ParamLayout> read_param_layouts(std::string_view bytes);

/// True when `bytes` starts like an ELF file (a cubin rather than PTX or text).
bool looks_like_elf(std::string_view bytes) noexcept;

/// Function name -> resources, for every function the `.nv.info` records name.
/// Throws lp::Error when `bytes` is not a 64-bit little-endian ELF or a header or
/// section lies outside the file; a cubin without `.nv.info` gives an empty map.
std::map<std::string, FunctionResources> read_function_resources(std::string_view bytes);

}  // namespace lp::sass

namespace lp::sass {

/// The code of a cubin that nvdisasm can read as raw instructions (`-b SM90a`),
/// many cubins to one run, with the same listing as from the ELF but for labels.
struct FunctionCode {
  std::string function;   ///< the function's symbol: the `.text.<name>` suffix
  std::string_view code;  ///< its instruction bytes, a view into the cubin
  std::string nvdisasm_arch;  ///< the `-b` value: "SM90" or "SM90a"
};

/// The one function of `cubin` when disassembling its bytes raw is provably the
/// same as disassembling the ELF, else why not. It is when the cubin is a 64-bit
/// executable (ET_EXEC) with exactly one executable section `.text.<name>` whose
/// size is a positive multiple of the 16-byte sm_90 instruction, no relocation
/// applies to that section (the bytes are final), and the ELF says sm_90 or sm_90a:
/// old layout (EI_ABIVERSION 7) in e_flags (SM in bits 0-7, 0x800 accelerators);
/// new layout (8) SM in bits 8-15 and `-arch sm_90[a]` in `.note.nv.tkinfo`.
/// Anything else (a device function beside the kernel, another architecture, an
/// ELF this reader does not know) is disassembled from the ELF, one nvdisasm each.
struct FunctionCodeOrWhy {
  std::optional<FunctionCode> code;
  std::string why_not;  ///< set when `code` is not
};
FunctionCodeOrWhy function_code(std::string_view cubin);

}  // namespace lp::sass
