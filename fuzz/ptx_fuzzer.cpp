// libFuzzer target: the PTX hazard check (src/ptx), which reads users' PTX files
// and Triton caches. Any input must be analysed or rejected with
// lp::sass::ListingError (an lp::Error); anything else is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "ptx/ptx_check.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const lp::ptx::PtxReport report = lp::ptx::analyze_ptx(text, "fuzz.ptx");
    static_cast<void>(report.finding_count());
  } catch (const lp::Error&) {
    // ListingError: PTX it cannot read, reported with its line.
  }
  return 0;
}
