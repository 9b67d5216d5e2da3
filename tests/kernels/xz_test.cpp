#include "kernels/xz.hpp"

#include <gtest/gtest.h>

#include <string>

#include "util/error.hpp"

namespace lp::kernels {
namespace {

// python3: lzma.compress(b"loraprobe packs its kernels\n" * 4, format=lzma.FORMAT_XZ,
//                        check=lzma.CHECK_CRC64, preset=9)
constexpr unsigned char k_stream[] = {
    0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00, 0x04, 0xe6, 0xd6, 0xb4, 0x46, 0x02, 0x00, 0x21, 0x01,
    0x1c, 0x00, 0x00, 0x00, 0x10, 0xcf, 0x58, 0xcc, 0xe0, 0x00, 0x6f, 0x00, 0x22, 0x5d, 0x00, 0x36,
    0x1b, 0xca, 0xaa, 0x99, 0x82, 0xf2, 0x3f, 0x91, 0x12, 0x65, 0x74, 0x19, 0x49, 0x8d, 0x31, 0x0c,
    0x96, 0x4a, 0x90, 0xfb, 0xf0, 0x7e, 0x4e, 0x60, 0xa8, 0xdc, 0xb7, 0x46, 0x7d, 0x14, 0xe8, 0x60,
    0x00, 0x00, 0x00, 0x00, 0x8f, 0x16, 0x0c, 0x92, 0xdb, 0xf3, 0xd4, 0x5b, 0x00, 0x01, 0x3e, 0x70,
    0x6a, 0xdf, 0x46, 0x31, 0x1f, 0xb6, 0xf3, 0x7d, 0x01, 0x00, 0x00, 0x00, 0x00, 0x04, 0x59, 0x5a};

std::string stream() { return std::string(reinterpret_cast<const char*>(k_stream), sizeof k_stream); }

std::string text() {
  std::string t;
  for (int i = 0; i < 4; ++i) {
    t += "loraprobe packs its kernels\n";
  }
  return t;
}

/// The message of the lp::Error unxz throws ("" when it throws none).
std::string error_of(const std::string& compressed, std::size_t expected, std::size_t max) {
  try {
    (void)unxz(compressed, "t.xz", expected, max);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Xz, DecodesIntoABufferOfExactlyTheExpectedSize) {
  EXPECT_EQ(unxz(stream(), "t.xz", text().size(), text().size()), text());
}

TEST(Xz, GrowsTheBufferWhenTheSizeIsUnknownOrTooSmall) {
  EXPECT_EQ(unxz(stream(), "t.xz", 0, 1 << 20), text());
  EXPECT_EQ(unxz(stream(), "t.xz", 5, 1 << 20), text());
}

TEST(Xz, TheCapIsHard) {
  EXPECT_EQ(error_of(stream(), 0, text().size() - 1),
            "t.xz: decompresses to more than " + std::to_string(text().size() - 1) + " bytes");
}

TEST(Xz, DamageIsACorruptStream) {
  std::string damaged = stream();
  damaged[40] = static_cast<char>(damaged[40] ^ 0x01);
  EXPECT_EQ(error_of(damaged, 0, 1 << 20).rfind("t.xz: corrupt xz data: ", 0), 0U);
  EXPECT_EQ(error_of(stream().substr(0, 50), 0, 1 << 20), "t.xz: corrupt xz data: truncated");
  EXPECT_EQ(error_of(stream() + "x", 0, 1 << 20), "t.xz: corrupt xz data: data after the end of the stream (1 bytes)");
  EXPECT_EQ(error_of("not xz at all", 0, 1 << 20), "t.xz: corrupt xz data: not an xz stream");
}

}  // namespace
}  // namespace lp::kernels
