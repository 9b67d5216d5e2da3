// libFuzzer target: the worker protocol's readers (protocol/protocol.cpp). A sweep's
// parent reads its worker's stdout, which it shares with every library the worker
// loads and with the printf of every kernel it launches (a --kernel-dir is anyone's),
// so a reply line can be anything; a worker reads what its parent sends. Each input is
// read as a reply and as a request. Any line must be read, skipped (a reply that is
// not a JSON object) or refused with lp::Error: a crash, a sanitizer report (a number
// out of range converted regardless) or another exception is a bug. A message read
// must be written back as a line that reads back to the same line.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "protocol/protocol.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view line(reinterpret_cast<const char*>(data), size);
  try {
    const std::optional<lp::protocol::Reply> reply = lp::protocol::parse_reply(line);
    if (reply && !std::holds_alternative<lp::protocol::UnknownReply>(*reply)) {
      const std::string once = lp::protocol::to_line(*reply);
      const std::optional<lp::protocol::Reply> again = lp::protocol::parse_reply(once);
      if (!again || lp::protocol::to_line(*again) != once) {
        __builtin_trap();  // read, but written as something that does not read back
      }
    }
  } catch (const lp::Error&) {
    // refused: a malformed message of a known type
  }
  try {
    const lp::protocol::Request request = lp::protocol::parse_request(line);
    if (!std::holds_alternative<lp::protocol::BadRequest>(request)) {
      const std::string once = lp::protocol::to_line(request);
      if (lp::protocol::to_line(lp::protocol::parse_request(once)) != once) {
        __builtin_trap();
      }
    }
  } catch (const lp::Error&) {
  }
  return 0;
}
