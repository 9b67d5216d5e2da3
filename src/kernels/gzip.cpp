#include "kernels/gzip.hpp"

#include <zlib.h>

#include <fmt/format.h>

#include "util/error.hpp"

namespace lp::kernels {

std::string gunzip(std::string_view compressed, const std::string& what, std::size_t expected_bytes,
                   std::size_t max_bytes) {
  z_stream stream{};
  // 16 + MAX_WBITS: expect a gzip header and trailer (checked CRC-32 and length).
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) {
    throw Error(fmt::format("{}: zlib inflateInit2 failed", what));
  }
  std::string out;
  out.resize(expected_bytes > 0 ? expected_bytes : compressed.size() * 4 + 1024);
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  stream.avail_in = static_cast<uInt>(compressed.size());
  int rc = Z_OK;
  while (true) {
    if (stream.total_out == out.size()) {
      if (out.size() >= max_bytes) {
        inflateEnd(&stream);
        throw Error(fmt::format("{}: decompresses to more than {} bytes", what, max_bytes));
      }
      out.resize(std::min(max_bytes, out.size() * 2));
    }
    stream.next_out = reinterpret_cast<Bytef*>(out.data() + stream.total_out);
    stream.avail_out = static_cast<uInt>(out.size() - stream.total_out);
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc == Z_STREAM_END) {
      break;
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      const std::string message = stream.msg != nullptr ? stream.msg : fmt::format("zlib error {}", rc);
      inflateEnd(&stream);
      throw Error(fmt::format("{}: corrupt gzip data: {}", what, message));
    }
    if (rc == Z_BUF_ERROR && stream.avail_in == 0) {
      inflateEnd(&stream);
      throw Error(fmt::format("{}: truncated gzip data", what));
    }
  }
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

}  // namespace lp::kernels
