#pragma once
// SplitMix64 (Steele, Lea, Flood 2014): tiny, well mixed, and fully specified here,
// unlike std::mt19937 + std::uniform_int_distribution whose output may differ
// between standard libraries. The token mapping and the MoE routing draw from it,
// so a case's inputs are the same on every platform.

#include <cstdint>
#include <limits>

namespace lp {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : m_state(seed) {}
  std::uint64_t next() { return mix(m_state += 0x9E3779B97F4A7C15ull); }
  /// SplitMix64's finaliser alone: a well-mixed 64-bit function of `z` (seeds mixed
  /// from several parts use it, sweep/entries.cpp problem_seed).
  static constexpr std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Unbiased draw in [0, bound) by rejection (bound > 0).
  std::uint64_t below(std::uint64_t bound) {
    const std::uint64_t limit =
        std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % bound;
    std::uint64_t x = next();
    while (x >= limit) {
      x = next();
    }
    return x % bound;
  }

 private:
  std::uint64_t m_state;
};

}  // namespace lp
