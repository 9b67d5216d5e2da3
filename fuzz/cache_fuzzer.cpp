// libFuzzer target: the reader of what the inspect cache serves back
// (src/inspect/cache.cpp): a SASS report, read from an entry's payload by
// sass::cubin_report_from_json. An entry is a document anyone with write access to
// the cache folder may have edited, and its envelope's hashes are no defence against
// someone who recomputes them. Any input must be read or refused (nullopt): an
// exception out of the reader (a finding's address "0xZZ" let std::invalid_argument
// out, and inspect ended with an internal error) or a crash is a bug. A report it
// reads must be written back as the same JSON: the reader refuses anything its writer
// would not write.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include <nlohmann/json.hpp>

#include "sass/analyze.hpp"
#include "util/json_bounded.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // As the cache parses an entry (k_max_entry_depth; the payload sits one level down).
  const std::optional<nlohmann::json> payload = lp::try_parse_json_bounded(text, 12);
  if (!payload) {
    return 0;
  }
  const std::optional<lp::sass::CubinReport> report = lp::sass::cubin_report_from_json(*payload);
  if (report && nlohmann::json(*report) != *payload) {
    __builtin_trap();  // read, but not what its writer writes
  }
  return 0;
}
