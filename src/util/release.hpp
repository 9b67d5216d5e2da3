#pragma once
// A release number "MAJOR.MINOR.PATCH": Triton's (as kernel sets and the `triton` axis
// spell it), a CUDA tool's ("13.0.88"), a schema's. Parsed strictly and ordered
// numerically, so 3.10.0 sorts after 3.9.0. The one version type of loraprobe.

#include <compare>
#include <optional>
#include <string>
#include <string_view>

namespace lp {

struct Release {
  int major = 0;
  int minor = 0;
  int patch = 0;
  [[nodiscard]] std::string to_string() const;
  auto operator<=>(const Release&) const = default;
};

/// How many parts a spelling must have.
enum class ReleaseParts {
  three,       ///< "3.8.0" only (Triton releases, kernel sets)
  two_or_three ///< also "13.0" = 13.0.0 (a CUDA tool without its build number, a schema major.minor)
};

/// "3.8.0" -> {3, 8, 0}; nullopt for anything else (no "v", no suffix, no missing parts,
/// each part at most 6 digits).
std::optional<Release> parse_release(std::string_view text, ReleaseParts parts = ReleaseParts::three);

}  // namespace lp
