#pragma once
// xz (.xz container, LZMA2) decompression through liblzma: the kernel set's
// PTX and cubins are stored as one xz stream, kernels/set.pack.xz.

#include <cstddef>
#include <string>
#include <string_view>

namespace lp::kernels {

/// Decodes exactly one xz stream (its integrity check verified by liblzma). `expected_bytes`
/// sizes the output up front (0: unknown); `max_bytes` is a hard cap on the output. Throws
/// lp::Error("<what>: corrupt xz data: <why>") on a damaged, truncated or non-xz input or on
/// bytes after the stream, and lp::Error("<what>: decompresses to more than <max_bytes>
/// bytes") when the output would pass the cap. Decoder memory is limited to 256 MiB (the
/// set needs 65 MiB).
std::string unxz(std::string_view compressed, const std::string& what, std::size_t expected_bytes,
                 std::size_t max_bytes);

}  // namespace lp::kernels
