// libFuzzer target: the PTX passes (src/ptx), which read users' PTX files and Triton
// caches: the hazard check and the amplifier. Any input must be analysed (and
// amplified) or rejected with lp::sass::ListingError (an lp::Error); anything else is
// a bug. The amplifier must keep every byte of its input, in order, and add only
// whole statements: its output has at least the input's length and starts with the
// input's text up to the first insertion.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "ptx/amplify.hpp"
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
  try {
    const lp::ptx::Amplified amplified = lp::ptx::amplify_ptx(text, 2, "fuzz.ptx");
    if (amplified.ptx.size() < text.size() || (!amplified.changed() && amplified.ptx != text)) {
      std::abort();  // an original byte lost, or a change where it says there is none
    }
    // Every original byte in order: a subsequence of the output.
    std::size_t at = 0;
    for (const char c : text) {
      at = amplified.ptx.find(c, at);
      if (at == std::string_view::npos) {
        std::abort();
      }
      ++at;
    }
  } catch (const lp::Error&) {
    // The same: PTX it cannot read.
  }
  return 0;
}
