#pragma once
// gzip (RFC 1952) decompression through zlib: the kernel set is stored gzipped.

#include <string>
#include <string_view>

namespace lp::kernels {

/// Inflates a gzip stream. `expected_bytes` sizes the output (0: unknown) and is a hard
/// cap when `max_bytes` is 0. Throws lp::Error("<what>: ...") on a corrupt stream or
/// when the output would exceed max_bytes (default 256 MiB).
std::string gunzip(std::string_view compressed, const std::string& what, std::size_t expected_bytes = 0,
                   std::size_t max_bytes = std::size_t{256} << 20);

}  // namespace lp::kernels
