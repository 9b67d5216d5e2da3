#include "model/symptom.hpp"

#include <fmt/format.h>

namespace lp {

namespace {

/// Mismatches that are neither NaN, Inf, huge nor unwritten (each is also a mismatch).
std::uint64_t plain(const SymptomCounts& c) noexcept {
  const std::uint64_t marked = c.nan + c.inf + c.huge.value_or(0) + c.unwritten.value_or(0);
  return c.mismatches > marked ? c.mismatches - marked : 0;
}

}  // namespace

Symptom symptom_of(const SymptomCounts& c) noexcept {
  if (c.mismatches == 0) {
    return Symptom::none;
  }
  if (c.nan + c.inf + c.huge.value_or(0) > 0) {
    return Symptom::raw_bits;
  }
  return plain(c) > 0 ? Symptom::stale_values : Symptom::unwritten;
}

std::string describe_symptom(const SymptomCounts& c) {
  const Symptom s = symptom_of(c);
  if (s == Symptom::none) {
    return {};
  }
  const std::uint64_t extreme = c.nan + c.inf + c.huge.value_or(0);
  const std::uint64_t other = plain(c);
  std::string text = fmt::format("NaN {}, Inf {}, |x| > 1e30 {}, other wrong {}", c.nan, c.inf,
                                 c.huge ? fmt::format("{}", *c.huge) : std::string("not counted"), other);
  if (extreme > 0 && other > 0) {
    text += extreme >= other ? " (NaN/Inf/|x| > 1e30 dominate)" : " (plain mismatches dominate)";
  }
  switch (s) {
    case Symptom::raw_bits:
      text += ": NaN and |x| > 1e30 are fp32 bits read as bf16 (the HGMMA read its A registers between the next "
              "trip's LDS and the F2FP pack)";
      break;
    case Symptom::stale_values:
      text += ": only finite, ordinary wrong values (an HGMMA that read the next trip's bf16 A, or another error)";
      break;
    case Symptom::unwritten:
      text += ": only unwritten elements";
      break;
    case Symptom::none:
      break;
  }
  return text;
}

}  // namespace lp
