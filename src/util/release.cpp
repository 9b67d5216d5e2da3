#include "util/release.hpp"

#include <fmt/format.h>

namespace lp {

std::string Release::to_string() const { return fmt::format("{}.{}.{}", major, minor, patch); }

std::optional<Release> parse_release(std::string_view text, ReleaseParts form) {
  int parts[3] = {0, 0, 0};
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (i == 2 && pos == text.size() && form == ReleaseParts::two_or_three) {
        break;
      }
      if (pos >= text.size() || text[pos] != '.') {
        return std::nullopt;
      }
      ++pos;
    }
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && pos - start < 7) {
      parts[i] = parts[i] * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == start || pos - start > 6) {
      return std::nullopt;
    }
  }
  if (pos != text.size()) {
    return std::nullopt;
  }
  return Release{parts[0], parts[1], parts[2]};
}

}  // namespace lp
