#pragma once
// One escaping function per output language. Every value that comes from a
// document (a report, a journal, a cache entry, a config, a kernel dir) or from a
// device (its name) goes through the one for the output it lands in; the writers
// call nothing else. Reports travel between people, so whatever a document holds
// is treated as an adversary wrote it.
//
//   terminal        C0/C1 controls, DEL, ESC and bytes that are not UTF-8 shown as \x1b, \r, ...
//   xml             the five entities; characters outside XML 1.0's Char production become U+FFFD
//   shell           one POSIX sh word: bare when it is only safe characters, else '...' with '\''
//   markdown_text   inline text: no HTML, no link/emphasis/heading syntax, controls shown escaped
//   markdown_code   a code span no backtick in the text can close
//   markdown_fence  a fenced block no line in the text can close
//   json_c1         JSON text: C1 controls (U+0080..U+009F) as \u escapes, so JSON on a terminal is inert

#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace lp::escape {

/// For a terminal: tab and newline stay (the writers' own layout); every other
/// control character (C0, DEL, C1 as raw bytes or as UTF-8 U+0080..U+009F) and every
/// byte that is not part of valid UTF-8 is shown escaped: \r, else \xNN per byte.
std::string terminal(std::string_view text);

/// As terminal(), and a newline is shown as \n too: one field on one line.
std::string terminal_line(std::string_view text);

/// XML 1.0 text and attribute content: &, <, >, " and ' as entities; characters
/// outside Char (#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]),
/// surrogates encoded as UTF-8 and invalid UTF-8 become U+FFFD.
std::string xml(std::string_view text);

/// True when `text` is valid UTF-8 of XML 1.0 Char characters and no C1 control:
/// what xml() makes of anything (the report fuzzer checks JUnit and HTML with it).
bool is_xml_chars(std::string_view text);

/// One word for POSIX sh: unchanged when it is non-empty and only [A-Za-z0-9_./:=,+@%-],
/// else single-quoted with each ' written '\''.
std::string shell(std::string_view word);

/// Inline Markdown text (CommonMark/GFM): every character that can start syntax
/// (\ ` * _ [ ] < > # | ! ~ &) backslash-escaped, so no emphasis, link, image,
/// autolink, raw HTML, heading or table cell boundary comes from the text; control
/// characters (newline included) shown as \xNN / \n, so one value stays one line.
std::string markdown_text(std::string_view text);

/// An inline code span of `text`: delimited by one more backtick than its longest
/// backtick run, padded with a space where it starts or ends with a backtick; '|'
/// escaped so that it can sit in a GFM table cell; controls shown as in markdown_text.
std::string markdown_code(std::string_view text);

/// A fenced code block of `text` (newline-terminated lines): the fence is one backtick
/// longer than the longest backtick run in the text (at least three), so no line of
/// the text can close it; controls other than tab and newline shown as \xNN.
/// `info` is the info string ("sh"), which must be a plain word.
std::string markdown_fence(std::string_view text, std::string_view info = {});

/// JSON text as nlohmann's dump() writes it (valid UTF-8; outside strings only ASCII),
/// with each C1 control character (U+0080..U+009F: U+009B is a terminal's CSI, as ESC [
/// is) written as its \u escape ("\u009b"). Every other byte stays as it was, so a
/// document without C1 is byte for byte what dump() wrote, and any reader reads the same
/// value back. Every JSON document loraprobe prints or writes goes through it.
std::string json_c1(std::string_view text);

/// A sink that passes on JSON text as json_c1() writes it, for documents written piece
/// by piece (a report of a million rows): a character split across two pieces is
/// escaped whole.
std::function<void(std::string_view)> json_c1_sink(std::function<void(std::string_view)> sink);

}  // namespace lp::escape
