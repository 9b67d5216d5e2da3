// libFuzzer target: the sweep-config parser and plan expansion. Any input must
// either parse or be rejected with lp::InputError / lp::UsageError; a crash, a
// sanitizer report, a hang or any other exception is a bug.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const lp::plan::SweepConfig config = lp::plan::parse_config(text, "fuzz.json");
    // Expand only plans small enough to stay fast: the size limit itself is tested elsewhere.
    std::size_t combinations = 1;
    for (const auto& [id, setting] : config.axes) {
      combinations *= setting.value.size();
      if (combinations > 20000) {
        return 0;
      }
    }
    static_cast<void>(lp::plan::expand_plan(config, {"3.6.0", "3.9.0"}));
    static_cast<void>(lp::plan::format_config(config));
  } catch (const lp::UsageError&) {
    // InputError is a UsageError: rejected with a message, as it should be.
  }
  return 0;
}
