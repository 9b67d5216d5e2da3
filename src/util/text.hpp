#pragma once
// Small text helpers the parsers share.

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstddef>
#include <optional>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <vector>

namespace lp {

/// `s` without leading and trailing whitespace.
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) {
    s.remove_suffix(1);
  }
  return s;
}

/// A letter, digit or underscore: a character of an identifier-like word ('\0' is not).
inline bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; }

/// A character a name may hold wherever it goes (a file name, a terminal, Markdown,
/// HTML) without escaping: a word character, '.' or '-'.
inline bool is_name_char(char c) { return is_word_char(c) || c == '.' || c == '-'; }

/// `text` cut at every `sep`, empty items kept ("a,,b" is three items, "" is one), so
/// a caller can refuse them with its own words: the one list splitter (flags, filters,
/// axis values). The views point into `text`.
inline std::vector<std::string_view> split(std::string_view text, char sep = ',') {
  std::vector<std::string_view> items;
  std::size_t start = 0;
  while (true) {
    const std::size_t end = text.find(sep, start);
    items.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) {
      return items;
    }
    start = end + 1;
  }
}

/// Levenshtein distance: the fewest one-character insertions, deletions and
/// substitutions that turn `a` into `b`.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) {
    row[j] = j;
  }
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// The one "did you mean" rule (config keys, subcommands, flags): the known word
/// nearest to `typed`, when it is within max(2, a third of `typed`'s length) edits;
/// the first of equals. nullopt when none is that near.
inline std::optional<std::string_view> nearest(std::string_view typed, const std::vector<std::string_view>& known) {
  std::optional<std::string_view> best;
  std::size_t best_distance = std::max<std::size_t>(2, typed.size() / 3) + 1;
  for (const std::string_view candidate : known) {
    if (const std::size_t d = edit_distance(typed, candidate); d < best_distance) {
      best_distance = d;
      best = candidate;
    }
  }
  return best;
}

/// The number `s` spells, all of it (no sign for unsigned types, no spaces, no "0x"),
/// in `base` for integers; nullopt for anything else, an overflow included. The one
/// way a number typed by a user or found in a tool's text is read (std::from_chars:
/// no locale, no exception).
template <class T>
std::optional<T> parse_number(std::string_view s, int base = 10) {
  T value{};
  std::from_chars_result r{};
  if constexpr (std::is_integral_v<T>) {
    r = std::from_chars(s.data(), s.data() + s.size(), value, base);
  } else {
    r = std::from_chars(s.data(), s.data() + s.size(), value);
  }
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace lp
