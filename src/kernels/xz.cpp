#include "kernels/xz.hpp"

#include <lzma.h>

#include <algorithm>
#include <cstdint>
#include <new>

#include <fmt/format.h>

#include "util/error.hpp"

namespace lp::kernels {

namespace {

// A hostile or damaged header could ask for a dictionary of gigabytes; the
// set is written with xz -9e (64 MiB dictionary, ~65 MiB to decode).
constexpr std::uint64_t k_decoder_memory_limit = std::uint64_t{256} << 20;

const char* describe(lzma_ret rc) {
  switch (rc) {
    case LZMA_FORMAT_ERROR:
      return "not an xz stream";
    case LZMA_OPTIONS_ERROR:
      return "unsupported compression options";
    case LZMA_DATA_ERROR:
      return "damaged data or integrity check failed";
    case LZMA_BUF_ERROR:
      return "truncated";
    case LZMA_MEMLIMIT_ERROR:
      return "the decoder would need more than 256 MiB of memory";
    case LZMA_MEM_ERROR:
      return "out of memory";
    default:
      return "liblzma error";
  }
}

/// Owns a lzma_stream so every exit path frees the decoder.
class Decoder {
 public:
  Decoder() = default;
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;
  ~Decoder() { lzma_end(&m_stream); }
  lzma_stream& stream() { return m_stream; }

 private:
  lzma_stream m_stream = LZMA_STREAM_INIT;
};

}  // namespace

std::string unxz(std::string_view compressed, const std::string& what, std::size_t expected_bytes,
                 std::size_t max_bytes) {
  Decoder decoder;
  lzma_stream& s = decoder.stream();
  // No LZMA_CONCATENATED: the pack is one stream, so anything after it is damage.
  const lzma_ret init = lzma_stream_decoder(&s, k_decoder_memory_limit, 0);
  if (init == LZMA_MEM_ERROR) {
    throw std::bad_alloc();  // the machine's limit, not damage: main says "out of memory", exit 3
  }
  if (init != LZMA_OK) {
    throw Error(fmt::format("{}: liblzma could not start a decoder: {}", what, describe(init)));
  }
  std::string out;
  out.resize(std::min(max_bytes, expected_bytes > 0 ? expected_bytes : compressed.size() * 8 + 4096));
  s.next_in = reinterpret_cast<const std::uint8_t*>(compressed.data());
  s.avail_in = compressed.size();
  // When the buffer is full, decode into a one-byte probe: the index and
  // footer need no room, so a stream of exactly the expected size ends
  // without the buffer ever growing, and a byte past max_bytes is caught.
  std::uint8_t probe = 0;
  while (true) {
    const std::size_t produced = static_cast<std::size_t>(s.total_out);
    const bool probing = produced == out.size();
    s.next_out = probing ? &probe : reinterpret_cast<std::uint8_t*>(out.data()) + produced;
    s.avail_out = probing ? 1 : out.size() - produced;
    const lzma_ret rc = lzma_code(&s, LZMA_FINISH);
    if (probing && s.avail_out == 0) {
      if (out.size() >= max_bytes) {
        throw Error(fmt::format("{}: decompresses to more than {} bytes", what, max_bytes));
      }
      out.resize(std::min(max_bytes, std::max<std::size_t>(out.size() * 2, 4096)));
      out[produced] = static_cast<char>(probe);
    }
    if (rc == LZMA_STREAM_END) {
      break;
    }
    if (rc == LZMA_MEM_ERROR) {
      throw std::bad_alloc();
    }
    if (rc != LZMA_OK) {
      // All input was given with LZMA_FINISH and there was room for output:
      // LZMA_BUF_ERROR here means the stream stops early.
      throw Error(fmt::format("{}: corrupt xz data: {}", what, describe(rc)));
    }
  }
  if (s.avail_in != 0) {
    throw Error(fmt::format("{}: corrupt xz data: data after the end of the stream ({} bytes)", what, s.avail_in));
  }
  out.resize(static_cast<std::size_t>(s.total_out));
  return out;
}

std::vector<XzStreamSpan> xz_streams(std::string_view stored, const std::string& what, std::size_t max_bytes) {
  const auto corrupt = [&](const std::string& why) {
    return Error(fmt::format("{}: corrupt xz data: {}", what, why));
  };
  const auto* data = reinterpret_cast<const std::uint8_t*>(stored.data());
  std::vector<XzStreamSpan> spans;
  std::size_t end = stored.size();
  if (end == 0) {
    throw corrupt("empty");
  }
  while (end > 0) {
    if (end < 2 * LZMA_STREAM_HEADER_SIZE) {
      throw corrupt("truncated");
    }
    lzma_stream_flags footer{};
    lzma_ret rc = lzma_stream_footer_decode(&footer, data + end - LZMA_STREAM_HEADER_SIZE);
    if (rc != LZMA_OK) {
      // Cut short, or stream padding (zero bytes between streams: none is written).
      throw corrupt(fmt::format("truncated (no stream footer ends at byte {}: {})", end, describe(rc)));
    }
    const std::uint64_t index_bytes = footer.backward_size;
    if (index_bytes > end - 2 * LZMA_STREAM_HEADER_SIZE) {
      throw corrupt("truncated");
    }
    lzma_index* index = nullptr;
    std::uint64_t memory = k_decoder_memory_limit;
    std::size_t in_pos = 0;
    rc = lzma_index_buffer_decode(&index, &memory, nullptr, data + end - LZMA_STREAM_HEADER_SIZE - index_bytes,
                                  &in_pos, static_cast<std::size_t>(index_bytes));
    if (rc != LZMA_OK || in_pos != index_bytes) {
      if (index != nullptr) {
        lzma_index_end(index, nullptr);
      }
      throw corrupt(fmt::format("a stream index does not decode: {}", rc != LZMA_OK ? describe(rc) : "wrong size"));
    }
    const std::uint64_t stream_bytes = lzma_index_stream_size(index);
    const std::uint64_t raw_bytes = lzma_index_uncompressed_size(index);
    lzma_index_end(index, nullptr);
    if (stream_bytes > end || stream_bytes < 2 * LZMA_STREAM_HEADER_SIZE + index_bytes) {
      throw corrupt("a stream index gives a size the file does not have");
    }
    if (raw_bytes > max_bytes) {
      throw Error(fmt::format("{}: decompresses to more than {} bytes", what, max_bytes));
    }
    spans.push_back({static_cast<std::size_t>(end - stream_bytes), static_cast<std::size_t>(stream_bytes), 0,
                     static_cast<std::size_t>(raw_bytes)});
    end -= static_cast<std::size_t>(stream_bytes);
  }
  std::reverse(spans.begin(), spans.end());
  std::size_t offset = 0;
  for (XzStreamSpan& s : spans) {
    if (s.bytes > max_bytes - offset) {
      throw Error(fmt::format("{}: decompresses to more than {} bytes", what, max_bytes));
    }
    s.offset = offset;
    offset += s.bytes;
  }
  return spans;
}

}  // namespace lp::kernels
