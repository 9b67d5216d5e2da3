#pragma once
// xz (.xz container, LZMA2) decompression through liblzma: the kernel set's
// PTX and cubins are stored as xz streams laid end to end, kernels/set.pack.xz
// (each stream a few MiB of the pack, so that a reader decodes only what it
// needs, the streams in parallel).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace lp::kernels {

/// Decodes exactly one xz stream (its integrity check verified by liblzma). `expected_bytes`
/// sizes the output up front (0: unknown); `max_bytes` is a hard cap on the output. Throws
/// lp::Error("<what>: corrupt xz data: <why>") on a damaged, truncated or non-xz input or on
/// bytes after the stream, and lp::Error("<what>: decompresses to more than <max_bytes>
/// bytes") when the output would pass the cap. Decoder memory is limited to 256 MiB (the
/// set needs 65 MiB).
std::string unxz(std::string_view compressed, const std::string& what, std::size_t expected_bytes,
                 std::size_t max_bytes);

/// One stream of a file of xz streams laid end to end: its bytes in the file, and the
/// part of the whole output it decodes to.
struct XzStreamSpan {
  std::size_t stored_offset = 0;
  std::size_t stored_bytes = 0;
  std::size_t offset = 0;  ///< in the concatenated output
  std::size_t bytes = 0;
};

/// The streams of `stored`, in order, read from each stream's footer and index
/// (lzma_stream_footer_decode, lzma_index_buffer_decode) from the end, decoding no
/// data. Their outputs add up to at most `max_bytes`. Throws lp::Error("<what>:
/// corrupt xz data: <why>") when a footer or an index is damaged, the sizes do not
/// add up, or there is stream padding (the packs have none). Each stream's data and
/// integrity check are verified when unxz decodes it.
std::vector<XzStreamSpan> xz_streams(std::string_view stored, const std::string& what, std::size_t max_bytes);

}  // namespace lp::kernels
