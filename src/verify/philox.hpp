#pragma once
// Philox4x32-10 (Salmon, Moraes, Dror, Shaw: "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011), the counter-based generator cuRAND and Random123 ship. A
// value is a pure function of (key, counter), so a tensor's contents depend only on
// (seed, tensor id, element index), never on launch shape, thread order or device.
// Shared by the device generator and its host twin.

#include <cstdint>

#include "model/dtype.hpp"

namespace lp {

/// Four 32-bit words: a Philox counter or output block.
struct Philox4x32 {
  std::uint32_t v[4];
};

LP_HD inline std::uint32_t philox_mulhi(std::uint32_t a, std::uint32_t b) {
#if defined(__CUDA_ARCH__)
  return __umulhi(a, b);
#else
  return static_cast<std::uint32_t>((static_cast<std::uint64_t>(a) * b) >> 32);
#endif
}

/// Philox4x32 with 10 rounds of `counter` under the 64-bit `key` (k0 = low word).
LP_HD inline Philox4x32 philox4x32_10(Philox4x32 counter, std::uint32_t k0, std::uint32_t k1) {
  constexpr std::uint32_t m0 = 0xD2511F53u;
  constexpr std::uint32_t m1 = 0xCD9E8D57u;
  constexpr std::uint32_t w0 = 0x9E3779B9u;  // golden ratio
  constexpr std::uint32_t w1 = 0xBB67AE85u;  // sqrt(3) - 1
  for (int round = 0; round < 10; ++round) {
    const std::uint32_t hi0 = philox_mulhi(m0, counter.v[0]);
    const std::uint32_t lo0 = m0 * counter.v[0];
    const std::uint32_t hi1 = philox_mulhi(m1, counter.v[2]);
    const std::uint32_t lo1 = m1 * counter.v[2];
    counter = Philox4x32{{hi1 ^ counter.v[1] ^ k0, lo1, hi0 ^ counter.v[3] ^ k1, lo0}};
    k0 += w0;
    k1 += w1;
  }
  return counter;
}

}  // namespace lp
