// libFuzzer target: the ELF readers of lp_sass (sass/cubin.hpp) that look at a user's
// cubin before nvdisasm does: function_code(), which decides whether a cubin's code
// is batched as raw instructions, and read_function_resources(). Any input must give
// code or a reason (function_code never throws) and resources or lp::Error; code that
// is given lies inside the input and is whole 16-byte instructions.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sass/cubin.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const lp::sass::FunctionCodeOrWhy c = lp::sass::function_code(bytes);
  if (c.code) {
    const std::string_view code = c.code->code;
    const bool inside = code.data() >= bytes.data() && code.data() + code.size() <= bytes.data() + bytes.size();
    const bool whole = !code.empty() && code.size() % 16 == 0;
    const bool arch = c.code->nvdisasm_arch == "SM90" || c.code->nvdisasm_arch == "SM90a";
    if (!inside || !whole || !arch || c.code->function.empty() || !c.why_not.empty()) {
      __builtin_trap();
    }
  } else if (c.why_not.empty()) {
    __builtin_trap();  // no code and no reason
  }
  try {
    static_cast<void>(lp::sass::read_function_resources(bytes));
  } catch (const lp::Error&) {
    // not an ELF, or a header or section outside the file
  }
  return 0;
}
