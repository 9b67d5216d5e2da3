#include "support/error_of.hpp"
#include "kernels/xz.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

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
  return test_support::error_of([&] { (void)unxz(compressed, "t.xz", expected, max); });
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

TEST(XzStreams, OneStreamIsOneSpan) {
  const std::vector<XzStreamSpan> spans = xz_streams(stream(), "t.xz", 1 << 20);
  ASSERT_EQ(spans.size(), 1U);
  EXPECT_EQ(spans[0].stored_offset, 0U);
  EXPECT_EQ(spans[0].stored_bytes, stream().size());
  EXPECT_EQ(spans[0].offset, 0U);
  EXPECT_EQ(spans[0].bytes, text().size());
}

TEST(XzStreams, StreamsLaidEndToEndAreFoundFromTheEndAndEachDecodes) {
  const std::string three = stream() + stream() + stream();
  const std::vector<XzStreamSpan> spans = xz_streams(three, "t.xz", 1 << 20);
  ASSERT_EQ(spans.size(), 3U);
  for (std::size_t k = 0; k < spans.size(); ++k) {
    EXPECT_EQ(spans[k].stored_offset, k * stream().size());
    EXPECT_EQ(spans[k].offset, k * text().size());
    EXPECT_EQ(unxz(std::string_view(three).substr(spans[k].stored_offset, spans[k].stored_bytes), "t.xz",
                   spans[k].bytes, spans[k].bytes),
              text());
  }
}

TEST(XzStreams, DamagePaddingAndTheCapAreRefused) {
  auto error = [](const std::string& stored, std::size_t max) {
    try {
      (void)xz_streams(stored, "t.xz", max);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(error("", 1 << 20), "t.xz: corrupt xz data: empty");
  EXPECT_EQ(error(stream().substr(0, 20), 1 << 20), "t.xz: corrupt xz data: truncated");
  EXPECT_EQ(error(stream() + std::string(4, '\0'), 1 << 20).rfind("t.xz: corrupt xz data: truncated (no stream footer", 0),
            0U);
  EXPECT_EQ(error(stream().substr(0, stream().size() - 1), 1 << 20)
                .rfind("t.xz: corrupt xz data: truncated (no stream footer", 0),
            0U);
  std::string index_damaged = stream();
  index_damaged[index_damaged.size() - 14] = static_cast<char>(index_damaged[index_damaged.size() - 14] ^ 0x40);
  EXPECT_EQ(error(index_damaged, 1 << 20).rfind("t.xz: corrupt xz data: ", 0), 0U);
  EXPECT_EQ(error(stream() + stream(), 2 * text().size() - 1),
            "t.xz: decompresses to more than " + std::to_string(2 * text().size() - 1) + " bytes");
}

}  // namespace
}  // namespace lp::kernels
