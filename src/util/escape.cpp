#include "util/escape.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>

#include <fmt/format.h>

namespace lp::escape {

namespace {

/// One UTF-8 sequence at the start of `s`: its code point and length, or length 0
/// for a byte that does not start a valid, shortest-form sequence.
struct Decoded {
  std::uint32_t code = 0;
  std::size_t length = 0;
};

Decoded decode(std::string_view s) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) {
    return {b0, 1};
  }
  std::size_t n = 0;
  std::uint32_t code = 0;
  std::uint32_t min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, code = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, code = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, code = b0 & 0x07, min = 0x10000;
  } else {
    return {};
  }
  if (s.size() < n) {
    return {};
  }
  for (std::size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) {
      return {};
    }
    code = (code << 6) | (byte(i) & 0x3F);
  }
  if (code < min || code > 0x10FFFF) {
    return {};
  }
  return {code, n};
}

bool is_control(std::uint32_t code) { return code < 0x20 || code == 0x7F || (code >= 0x80 && code <= 0x9F); }

std::string hex_byte(unsigned char b) { return fmt::format("\\x{:02x}", b); }

/// The shared walk: each valid, non-control character is copied through `plain`;
/// a control character or an invalid byte is handed to `control` (code, raw bytes).
template <class Plain, class Control>
void walk(std::string_view text, Plain&& plain, Control&& control) {
  std::size_t i = 0;
  while (i < text.size()) {
    const Decoded d = decode(text.substr(i));
    if (d.length == 0) {
      control(0xFFFFFFFFu, text.substr(i, 1));
      ++i;
      continue;
    }
    const std::string_view raw = text.substr(i, d.length);
    if (is_control(d.code)) {
      control(d.code, raw);
    } else {
      plain(d.code, raw);
    }
    i += d.length;
  }
}

/// \xNN for each byte of a control character or an invalid byte.
std::string shown(std::string_view raw) {
  std::string out;
  for (const char c : raw) {
    out += hex_byte(static_cast<unsigned char>(c));
  }
  return out;
}

std::string terminal_impl(std::string_view text, bool keep_newline) {
  std::string out;
  out.reserve(text.size());
  walk(
      text, [&](std::uint32_t, std::string_view raw) { out.append(raw); },
      [&](std::uint32_t code, std::string_view raw) {
        if (code == '\t' || (code == '\n' && keep_newline)) {
          out.append(raw);
        } else if (code == '\n') {
          out += "\\n";
        } else if (code == '\r') {
          out += "\\r";
        } else {
          out += shown(raw);
        }
      });
  return out;
}

/// Controls for Markdown: newline and carriage return by name, the rest as \xNN.
std::string markdown_control(std::uint32_t code, std::string_view raw) {
  if (code == '\n') {
    return "\\n";
  }
  if (code == '\r') {
    return "\\r";
  }
  if (code == '\t') {
    return " ";
  }
  return shown(raw);
}

std::size_t longest_backtick_run(std::string_view text) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  return longest;
}

}  // namespace

std::string terminal(std::string_view text) { return terminal_impl(text, true); }

std::string terminal_line(std::string_view text) { return terminal_impl(text, false); }

std::string xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  constexpr std::string_view k_replacement = "\xEF\xBF\xBD";
  walk(
      text,
      [&](std::uint32_t code, std::string_view raw) {
        switch (code) {
          case '&':
            out += "&amp;";
            return;
          case '<':
            out += "&lt;";
            return;
          case '>':
            out += "&gt;";
            return;
          case '"':
            out += "&quot;";
            return;
          case '\'':
            out += "&apos;";
            return;
          default:
            break;
        }
        const bool in_char = (code >= 0x20 && code <= 0xD7FF) || (code >= 0xE000 && code <= 0xFFFD) ||
                             (code >= 0x10000 && code <= 0x10FFFF);
        if (in_char) {
          out.append(raw);
        } else {
          out += k_replacement;
        }
      },
      [&](std::uint32_t code, std::string_view raw) {
        // C1 (U+0080..U+009F) is in Char but means nothing in a report: replaced too.
        if (code == '\t' || code == '\n' || code == '\r') {
          out.append(raw);
        } else {
          out += k_replacement;
        }
      });
  return out;
}

bool is_xml_chars(std::string_view text) {
  bool ok = true;
  walk(
      text,
      [&](std::uint32_t code, std::string_view) {
        ok = ok && ((code >= 0x20 && code <= 0xD7FF) || (code >= 0xE000 && code <= 0xFFFD) ||
                    (code >= 0x10000 && code <= 0x10FFFF));
      },
      [&](std::uint32_t code, std::string_view) { ok = ok && (code == '\t' || code == '\n' || code == '\r'); });
  return ok;
}

std::string shell(std::string_view word) {
  const bool bare = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_./:=,+@%-").find(c) != std::string_view::npos;
  });
  if (bare) {
    return std::string(word);
  }
  std::string out = "'";
  for (const char c : word) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string markdown_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  walk(
      text,
      [&](std::uint32_t code, std::string_view raw) {
        if (code < 0x80 && std::string_view("\\`*_[]<>#|!~&").find(static_cast<char>(code)) != std::string_view::npos) {
          out += '\\';
        }
        out.append(raw);
      },
      [&](std::uint32_t code, std::string_view raw) { out += markdown_control(code, raw); });
  return out;
}

std::string markdown_code(std::string_view text) {
  std::string body;
  walk(
      text,
      [&](std::uint32_t code, std::string_view raw) {
        if (code == '|') {
          body += "\\|";  // GFM splits table cells on a pipe even inside a code span
        } else {
          body.append(raw);
        }
      },
      [&](std::uint32_t code, std::string_view raw) { body += markdown_control(code, raw); });
  const std::string fence(longest_backtick_run(body) + 1, '`');
  const bool pad = body.empty() || body.front() == '`' || body.back() == '`' || body.front() == ' ' ||
                   body.back() == ' ';
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

std::string markdown_fence(std::string_view text, std::string_view info) {
  std::string body;
  walk(
      text, [&](std::uint32_t, std::string_view raw) { body.append(raw); },
      [&](std::uint32_t code, std::string_view raw) {
        if (code == '\n' || code == '\t') {
          body.append(raw);
        } else if (code == '\r') {
          body += "\\r";
        } else {
          body += shown(raw);
        }
      });
  if (!body.empty() && body.back() != '\n') {
    body += '\n';
  }
  const std::string fence(std::max<std::size_t>(3, longest_backtick_run(body) + 1), '`');
  std::string plain_info;
  for (const char c : info) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      plain_info += c;
    }
  }
  return fence + plain_info + "\n" + body + fence + "\n";
}

namespace {

/// json_c1() of `text` appended to `out`. In UTF-8, 0xC2 is only ever a lead byte and
/// U+0080..U+009F are exactly 0xC2 followed by 0x80..0x9F.
void append_json_c1(std::string& out, std::string_view text) {
  std::size_t done = 0;
  for (std::size_t i = text.find('\xc2'); i != std::string_view::npos && i + 1 < text.size();
       i = text.find('\xc2', i + 1)) {
    const auto next = static_cast<unsigned char>(text[i + 1]);
    if (next >= 0x80 && next <= 0x9f) {
      out.append(text.substr(done, i - done));
      out += fmt::format("\\u{:04x}", next);
      done = i + 2;
      ++i;
    }
  }
  out.append(text.substr(done));
}

}  // namespace

std::string json_c1(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_json_c1(out, text);
  return out;
}

std::function<void(std::string_view)> json_c1_sink(std::function<void(std::string_view)> sink) {
  // A piece ending in 0xC2 keeps that byte back for the next one: valid JSON never ends
  // in one, so nothing is left over at the end.
  auto held = std::make_shared<std::string>();
  return [sink = std::move(sink), held](std::string_view piece) {
    std::string joined;
    if (!held->empty()) {
      joined = *held;
      joined.append(piece);
      held->clear();
      piece = joined;
    }
    if (!piece.empty() && piece.back() == '\xc2') {
      held->assign(1, '\xc2');
      piece.remove_suffix(1);
    }
    if (piece.find('\xc2') == std::string_view::npos) {
      sink(piece);  // the common case: no copy
      return;
    }
    std::string out;
    out.reserve(piece.size() + 8);
    append_json_c1(out, piece);
    sink(out);
  };
}

}  // namespace lp::escape
