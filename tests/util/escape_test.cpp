// util/escape.hpp: one escaping function per output language, each checked against
// the payloads a hostile document carries.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "util/escape.hpp"
#include "util/error.hpp"
#include "util/json_bounded.hpp"

namespace lp::escape {
namespace {

TEST(Escape, TerminalShowsEveryControlAndKeepsLayout) {
  EXPECT_EQ(terminal("a\tb\nc"), "a\tb\nc");
  EXPECT_EQ(terminal("\x1b]0;title\x07"), "\\x1b]0;title\\x07");
  EXPECT_EQ(terminal("line\roverwrite"), "line\\roverwrite");
  EXPECT_EQ(terminal("\xC2\x9B" "31m"), "\\xc2\\x9b31m");  // C1 CSI as UTF-8
  EXPECT_EQ(terminal("\x9b" "31m"), "\\x9b31m");           // and as a raw byte
  EXPECT_EQ(terminal("H200 \xE2\x9C\x93"), "H200 \xE2\x9C\x93");  // UTF-8 text stays
  EXPECT_EQ(terminal_line("two\nlines"), "two\\nlines");
}

TEST(Escape, XmlKeepsOnlyXmlChars) {
  EXPECT_EQ(xml("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&apos;");
  EXPECT_EQ(xml("\xEF\xBF\xBE|\xEF\xBF\xBF"), "\xEF\xBF\xBD|\xEF\xBF\xBD");  // U+FFFE, U+FFFF
  EXPECT_EQ(xml("\xED\xA0\x80"), "\xEF\xBF\xBD");  // a surrogate: no character
  EXPECT_EQ(xml(std::string("a\x01\x0b", 3)), "a\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(xml("tab\tnl\n"), "tab\tnl\n");
  EXPECT_EQ(xml("\xF0\x9F\x98\x80"), "\xF0\x9F\x98\x80");  // outside the BMP is fine
  for (const std::string bad : {"\xEF\xBF\xBE", "\x01", "\xff", "\xED\xA0\x80", "\xC2\x9B"}) {
    EXPECT_FALSE(is_xml_chars(bad)) << bad;
    EXPECT_TRUE(is_xml_chars(xml(bad))) << bad;
  }
  EXPECT_TRUE(is_xml_chars("<a>\t\r\n\xE2\x9C\x93</a>"));
}

TEST(Escape, ShellQuotesAnythingThatIsNotPlain) {
  EXPECT_EQ(shell("configs/seed-48590.json"), "configs/seed-48590.json");
  EXPECT_EQ(shell("ptxas=13.3.73,prebuilt"), "ptxas=13.3.73,prebuilt");
  EXPECT_EQ(shell(""), "''");
  EXPECT_EQ(shell("a b"), "'a b'");
  EXPECT_EQ(shell("x; curl e | sh"), "'x; curl e | sh'");
  EXPECT_EQ(shell("it's"), "'it'\\''s'");
  EXPECT_EQ(shell("$(id)`id`~"), "'$(id)`id`~'");
}

TEST(Escape, MarkdownTextHasNoSyntaxFromData) {
  EXPECT_EQ(markdown_text("<img src=x onerror=alert(1)>"), "\\<img src=x onerror=alert(1)\\>");
  EXPECT_EQ(markdown_text("[c](javascript:alert(1))"), "\\[c\\](javascript:alert(1))");
  EXPECT_EQ(markdown_text("a|b *c* _d_ # `e`"), "a\\|b \\*c\\* \\_d\\_ \\# \\`e\\`");
  EXPECT_EQ(markdown_text("one\r\ntwo\x1b"), "one\\r\\ntwo\\x1b");
  EXPECT_EQ(markdown_text("&lt;"), "\\&lt;");  // no entity turns into markup
}

TEST(Escape, MarkdownCodeSpanCannotBeClosedFromInside) {
  EXPECT_EQ(markdown_code("HGMMA.64x128x16"), "`HGMMA.64x128x16`");
  EXPECT_EQ(markdown_code("a`b"), "``a`b``");
  EXPECT_EQ(markdown_code("``x"), "``` ``x ```");
  EXPECT_EQ(markdown_code("a|b"), "`a\\|b`");  // a table cell stays one cell
  EXPECT_EQ(markdown_code("x\ny"), "`x\\ny`");
}

TEST(Escape, MarkdownFenceIsLongerThanAnyRunInside) {
  EXPECT_EQ(markdown_fence("ls\n", "sh"), "```sh\nls\n```\n");
  EXPECT_EQ(markdown_fence("a\n```\nb"), "````\na\n```\nb\n````\n");
  EXPECT_EQ(markdown_fence("x\ry"), "```\nx\\ry\n```\n");
  EXPECT_EQ(markdown_fence("x", "sh`;"), "```sh\nx\n```\n");  // the info string is a plain word
}

// Issue 53: `report --format json` wrote U+009B (a terminal's CSI) raw.
TEST(Escape, JsonC1IsWrittenAsUnicodeEscapesAndNothingElseChanges) {
  const nlohmann::json doc = {{"gpu", "H200\xC2\x9B" "31m\xC2\x80\xC2\x9F"}, {"ok", "\xC2\xA0\xE2\x9C\x93 \xC3\xA9"}};
  const std::string text = json_c1(doc.dump(2));
  EXPECT_EQ(text, "{\n  \"gpu\": \"H200\\u009b31m\\u0080\\u009f\",\n  \"ok\": \"\xC2\xA0\xE2\x9C\x93 \xC3\xA9\"\n}");
  EXPECT_EQ(nlohmann::json::parse(text), doc);  // the same value reads back
  const std::string plain = nlohmann::json({{"a", "\xC2\xA0 text"}}).dump(2);
  EXPECT_EQ(json_c1(plain), plain);
  // Written piece by piece, a character split between two pieces is escaped whole.
  const std::string whole = doc.dump(2);
  for (std::size_t cut = 0; cut <= whole.size(); ++cut) {
    std::string out;
    const auto sink = json_c1_sink([&out](std::string_view piece) { out.append(piece); });
    sink(std::string_view(whole).substr(0, cut));
    sink(std::string_view(whole).substr(cut));
    EXPECT_EQ(out, text) << "cut at " << cut;
  }
}

TEST(JsonBounded, NestingIsRefusedBeforeAnythingIsBuilt) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_EQ(json_nesting(deep), 100000U);
  EXPECT_EQ(json_nesting(R"({"a": "[[[[", "b": [1]})"), 2U);  // brackets inside strings do not count
  EXPECT_EQ(json_nesting(R"({"a": [1, {"b": []}]})"), 4U);
  EXPECT_EQ(json_nesting(R"({"a": "[[[{{{", "b": "\"[[["})"), 1U);  // an escaped quote does not end a string
  EXPECT_EQ(json_nesting("42"), 0U);
  EXPECT_FALSE(try_parse_json_bounded(deep, 64).has_value());
  EXPECT_THROW((void)parse_json_bounded(deep, "deep.json", 64), UsageError);
  EXPECT_EQ(parse_json_bounded("[[1]]", "x", 2), nlohmann::json::parse("[[1]]"));
}

TEST(JsonBounded, AnArrayIsSplitIntoItsElementsWithoutParsingAndOddTextIsLeftToTheParser) {
  const std::string text =
      R"({"a": "variants", "b": {"variants": [1]}, "variants": [ {"s": "]\",[", "t": [1, {"u": ","}]}, [1,[2]],)"
      R"( "x" , 3 ], "z": 1})";
  const std::optional<JsonArraySplit> split = split_top_level_array(text, "variants");
  ASSERT_TRUE(split.has_value());
  const std::vector<std::string_view> want = {R"({"s": "]\",[", "t": [1, {"u": ","}]})", "[1,[2]]", R"("x")", "3"};
  EXPECT_EQ(split->elements, want);
  EXPECT_EQ(split->head, R"({"a": "variants", "b": {"variants": [1]}, "variants": [], "z": 1})");
  // Head plus elements is the document.
  nlohmann::json rebuilt = nlohmann::json::parse(split->head);
  for (const std::string_view e : split->elements) {
    rebuilt["variants"].push_back(nlohmann::json::parse(e));
  }
  EXPECT_EQ(rebuilt, nlohmann::json::parse(text));
  // Empty arrays have no element; an empty element is kept, for its parse to fail.
  EXPECT_TRUE(split_top_level_array(R"({"variants": []})", "variants")->elements.empty());
  EXPECT_TRUE(split_top_level_array(R"({"variants": [ ]})", "variants")->elements.empty());
  EXPECT_EQ(split_top_level_array(R"({"variants": [1,]})", "variants")->elements,
            (std::vector<std::string_view>{"1", ""}));
  EXPECT_EQ(split_top_level_array(R"({"variants": [,1]})", "variants")->elements,
            (std::vector<std::string_view>{"", "1"}));
  // The parser decides: no such key, twice, not an array, an escaped key, no end.
  for (const char* odd : {R"({"other": [1]})", R"({"variants": [1], "variants": [2]})", R"({"variants": {"a": 1}})",
                          R"({"variants": [1], "variants": [2]})", R"({"variants": [1, 2)", R"([1, "variants"])"}) {
    EXPECT_FALSE(split_top_level_array(odd, "variants").has_value()) << odd;
  }
}

}  // namespace
}  // namespace lp::escape
