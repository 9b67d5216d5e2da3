#pragma once
// Small text helpers the parsers share.

#include <cctype>
#include <string_view>

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

}  // namespace lp
