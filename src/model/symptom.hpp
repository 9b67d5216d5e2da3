#pragma once
// What a kernel's wrong values say about which A operand a register-A HGMMA read
// (docs/amplify.md). When the next loop trip overwrites the A registers of a wgmma
// still in flight, the HGMMA reads whatever the registers hold at that moment:
//   - raw fp32 bits: the read landed between the LDS of the next fp32 tile and the
//     F2FP that packs it to bf16, so each fp32 word's halves are read as two bf16
//     values with random exponents: NaN and values near 1e37 (the bug report's
//     "NaN and ~1e37");
//   - the next trip's bf16 values: the read landed after the pack, so the products
//     use the wrong (finite, ordinary) A: wrong numbers of a normal magnitude.
// The classification is by the counts alone, so reports of any version can be read.

#include <cstdint>
#include <optional>
#include <string>

namespace lp {

/// The counts the classification reads (CompareMetrics' names).
struct SymptomCounts {
  std::uint64_t mismatches = 0;
  std::uint64_t nan = 0;
  std::uint64_t inf = 0;
  std::optional<std::uint64_t> huge;       ///< finite |x| > 1e30; nullopt in reports before it was counted
  std::optional<std::uint64_t> unwritten;  ///< nullopt when not measurable
};

/// Which A the wrong values point to.
enum class Symptom {
  none,          ///< no mismatch
  raw_bits,      ///< NaN, Inf or |x| > 1e30 among them: fp32 bits read as bf16
  stale_values,  ///< only finite, ordinary wrong values: the next trip's bf16 A
  unwritten,     ///< only unwritten elements: nothing to say about A
};

/// The symptom of `counts`.
Symptom symptom_of(const SymptomCounts& counts) noexcept;

/// One clause for a FAIL line, empty when there is no mismatch: the counts by kind,
/// which kind dominates, and which A the HGMMA read. "NaN 13696, Inf 0, |x| > 1e30
/// 226892, other wrong 411430 (plain mismatches dominate): NaN and |x| > 1e30 are
/// fp32 bits read as bf16 (the HGMMA read its A registers between the next trip's
/// LDS and the F2FP pack)".
std::string describe_symptom(const SymptomCounts& counts);

}  // namespace lp
