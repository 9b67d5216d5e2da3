#pragma once
// Base64 through OpenSSL: cubins travel between the sweep and its workers inside
// JSON lines.

#include <string>
#include <string_view>

namespace lp {

/// Standard base64 (RFC 4648, with padding) of `bytes`.
std::string base64_encode(std::string_view bytes);

/// Decodes standard base64; throws lp::Error on malformed input.
std::string base64_decode(std::string_view text);

}  // namespace lp
