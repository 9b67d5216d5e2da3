// main's guard (util/guard.hpp): each kind of error ends as README "Exit codes" says,
// with one line (two for a bug) on the stream it is given.

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "util/error.hpp"
#include "util/guard.hpp"
#include "util/interrupt.hpp"

namespace lp {
namespace {

/// What run_guarded printed and returned for `body`.
std::pair<int, std::string> guarded(const std::function<int()>& body) {
  std::FILE* f = std::tmpfile();
  EXPECT_NE(f, nullptr);
  const int code = run_guarded(body, f);
  std::rewind(f);
  std::string text;
  char buf[512];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) {
    text.append(buf, n);
  }
  std::fclose(f);
  return {code, text};
}

TEST(Guard, ReturnsTheBodysStatus) {
  EXPECT_EQ(guarded([] { return 0; }), std::make_pair(0, std::string()));
  EXPECT_EQ(guarded([] { return 1; }), std::make_pair(1, std::string()));
}

TEST(Guard, ANulInAMessageIsShownAndTheRestKept) {
  // Issue 53: what() is a C string, so a NUL that a document put into a message ended
  // it there ("<file>:/meta/tool: \"lora" and nothing after). Shown as \x00 instead.
  const std::string with_nul("key \"16\0\" is not a number", 25);
  EXPECT_EQ(guarded([&]() -> int { throw InputError("t.json", "/1/1", with_nul); }),
            std::make_pair(2, std::string("loraprobe: t.json:/1/1: key \"16\\x00\" is not a number\n")));
  EXPECT_EQ(std::string(Error(with_nul).what()), "key \"16\\x00\" is not a number");
}

TEST(Guard, FatalErrorsExitWithTheirCodeAndOneLine) {
  EXPECT_EQ(guarded([]() -> int { throw UsageError("--x 3: bad"); }),
            std::make_pair(2, std::string("loraprobe: --x 3: bad\n")));
  EXPECT_EQ(guarded([]() -> int { throw InputError("r.json", "/meta/command", "expected a string, got 7"); }),
            std::make_pair(2, std::string("loraprobe: r.json:/meta/command: expected a string, got 7\n")));
  EXPECT_EQ(guarded([]() -> int { throw EnvironmentError("no nvdisasm"); }),
            std::make_pair(3, std::string("loraprobe: no nvdisasm\n")));
  // A value quoted from a document cannot drive the terminal.
  EXPECT_EQ(guarded([]() -> int { throw UsageError("x\x1b]0;owned\x07y"); }).second.find('\x1b'), std::string::npos);
  // Issue 53 re-test: a newline in a flag's value (--devices $'0\n1') made two lines.
  EXPECT_EQ(guarded([]() -> int { throw UsageError("--devices 0\n1: write GPU ordinals"); }),
            std::make_pair(2, std::string("loraprobe: --devices 0\\n1: write GPU ordinals\n")));
}

TEST(Guard, OutOfMemoryIsTheEnvironmentNotABug) {
  const auto [code, text] = guarded([]() -> int { throw std::bad_alloc(); });
  EXPECT_EQ(code, 3);
  EXPECT_EQ(text.rfind("loraprobe: out of memory: ", 0), 0U) << text;
  EXPECT_EQ(text.find('\n'), text.size() - 1) << "one line: " << text;
}

TEST(Guard, AnythingElseIsABugWithARequestForAReport) {
  for (const auto& body : {std::function<int()>([]() -> int { throw Error("unrecorded"); }),
                           std::function<int()>([]() -> int { throw std::logic_error("unrecorded"); })}) {
    const auto [code, text] = guarded(body);
    EXPECT_EQ(code, 4);
    EXPECT_EQ(text.rfind("loraprobe: internal error: unrecorded\nloraprobe: this is a bug in loraprobe ", 0), 0U)
        << text;
    EXPECT_NE(text.find("please report it with the command line and this message"), std::string::npos) << text;
  }
}

TEST(ErrorOf, RecordsAnItemsErrorsAndPassesTheRestOn) {
  EXPECT_EQ(error_of([] {}), "");
  EXPECT_EQ(error_of([] { throw Error("ptxas failed"); }), "ptxas failed");
  EXPECT_EQ(error_of([] { throw EnvironmentError("no ptxas 13.3"); }), "no ptxas 13.3");
  EXPECT_THROW(error_of([] { throw UsageError("bad flag"); }), UsageError);
  EXPECT_THROW(error_of([] { throw std::bad_alloc(); }), std::bad_alloc);
  EXPECT_THROW(error_of([] { throw std::out_of_range("bug"); }), std::out_of_range);
}

}  // namespace
}  // namespace lp
