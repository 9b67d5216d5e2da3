#pragma once
// A byte form for records kept in memory by the million (report::CaseStore): whole
// numbers as LEB128 varints (a count of 0 is one byte), doubles in 4 bytes when they
// are a float's value and 8 otherwise, text with its length first. The bytes never
// leave the process that wrote them: they are no file format, and a reader reads only
// what the matching writer wrote (an overrun is an internal bug, lp::Error).

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "util/error.hpp"

namespace lp {

/// Appends to a byte string.
class ByteWriter {
 public:
  explicit ByteWriter(std::string& out) : m_out(out) {}

  void byte(std::uint8_t b) { m_out.push_back(static_cast<char>(b)); }
  void varint(std::uint64_t v) {
    while (v >= 0x80) {
      byte(static_cast<std::uint8_t>(v | 0x80));
      v >>= 7;
    }
    byte(static_cast<std::uint8_t>(v));
  }
  /// A signed number, small magnitudes in few bytes (zigzag).
  void signed_varint(std::int64_t v) {
    varint((static_cast<std::uint64_t>(v) << 1) ^ static_cast<std::uint64_t>(v >> 63));
  }
  /// Every bit kept, NaN payloads and the sign of zero included.
  void real(double v) {
    // A finite double beyond float's range has no float to try (the cast would be undefined).
    const bool fits = !std::isfinite(v) || std::abs(v) <= static_cast<double>(std::numeric_limits<float>::max());
    const float f = fits ? static_cast<float>(v) : 0.0F;
    if (fits && std::bit_cast<std::uint64_t>(static_cast<double>(f)) == std::bit_cast<std::uint64_t>(v)) {
      byte(4);
      raw(std::bit_cast<std::uint32_t>(f));
    } else {
      byte(8);
      raw(std::bit_cast<std::uint64_t>(v));
    }
  }
  void text(std::string_view s) {
    varint(s.size());
    m_out.append(s);
  }

 private:
  template <class T>
  void raw(T v) {
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    m_out.append(bytes, sizeof(T));
  }
  std::string& m_out;
};

/// Reads what a ByteWriter wrote, in the order it wrote it.
class ByteReader {
 public:
  explicit ByteReader(std::string_view bytes) : m_at(bytes.data()), m_end(bytes.data() + bytes.size()) {}

  std::uint8_t byte() {
    need(1);
    return static_cast<std::uint8_t>(*m_at++);
  }
  std::uint64_t varint() {
    std::uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      const std::uint8_t b = byte();
      v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) {
        return v;
      }
    }
    throw Error("packed record: a varint longer than 64 bits (an internal bug)");
  }
  std::int64_t signed_varint() {
    const std::uint64_t z = varint();
    return static_cast<std::int64_t>((z >> 1) ^ (~(z & 1) + 1));
  }
  double real() {
    if (byte() == 4) {
      return static_cast<double>(std::bit_cast<float>(raw<std::uint32_t>()));
    }
    return std::bit_cast<double>(raw<std::uint64_t>());
  }
  std::string text() {
    const std::uint64_t n = varint();
    need(n);
    std::string s(m_at, n);
    m_at += n;
    return s;
  }
  [[nodiscard]] bool done() const { return m_at == m_end; }

 private:
  void need(std::uint64_t n) const {
    if (static_cast<std::uint64_t>(m_end - m_at) < n) {
      throw Error("packed record: read past its end (an internal bug)");
    }
  }
  template <class T>
  T raw() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, m_at, sizeof(T));
    m_at += sizeof(T);
    return v;
  }
  const char* m_at;
  const char* m_end;
};

}  // namespace lp
