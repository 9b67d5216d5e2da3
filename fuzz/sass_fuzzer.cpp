// libFuzzer target: the SASS listing parsers (nvdisasm text, cuobjdump text,
// nvdisasm JSON), the control-flow graph and the hazard analysis. Any input must
// be analysed or rejected with lp::sass::ListingError (an lp::Error).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "sass/analyze.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const lp::sass::ListingReport report = lp::sass::analyze_listing(text, {}, "fuzz.sass");
    static_cast<void>(report.finding_count());
  } catch (const lp::Error&) {
    // ListingError: a malformed listing, reported with its line.
  }
  return 0;
}
