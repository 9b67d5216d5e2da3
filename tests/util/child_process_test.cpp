#include "util/child_process.hpp"

#include <gtest/gtest.h>

#include "util/base64.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

using Clock = std::chrono::steady_clock;

TEST(ChildProcess, EchoesLinesBothWays) {
  ChildProcess child({"/bin/cat"});
  ASSERT_TRUE(child.send_line(R"({"type":"ping"})"));
  ASSERT_TRUE(child.send_line("second"));
  bool timed_out = false;
  EXPECT_EQ(child.read_line(Clock::now() + std::chrono::seconds(10), timed_out), R"({"type":"ping"})");
  EXPECT_EQ(child.read_line(Clock::now() + std::chrono::seconds(10), timed_out), "second");
  EXPECT_FALSE(timed_out);
}

TEST(ChildProcess, ReadTimesOutOnASilentChildAndKillEndsIt) {
  // exec: the sleep is the child (it inherits the ignored TERM), so no orphaned grandchild
  // holds the test's output open for 30 s after the kill.
  ChildProcess child({"/bin/sh", "-c", "trap '' TERM; exec sleep 30"});
  bool timed_out = false;
  const auto start = Clock::now();
  EXPECT_FALSE(child.read_line(Clock::now() + std::chrono::milliseconds(200), timed_out).has_value());
  EXPECT_TRUE(timed_out);
  const ChildExit e = child.kill(std::chrono::milliseconds(200));
  EXPECT_EQ(e.term_signal, SIGKILL);  // it ignored SIGTERM
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(10));
}

TEST(ChildProcess, ExitIsSeenAsEndOfOutput) {
  ChildProcess child({"/bin/sh", "-c", "echo last; exit 7"});
  bool timed_out = false;
  EXPECT_EQ(child.read_line(Clock::now() + std::chrono::seconds(10), timed_out), "last");
  EXPECT_FALSE(child.read_line(Clock::now() + std::chrono::seconds(10), timed_out).has_value());
  EXPECT_FALSE(timed_out);
  const auto e = child.wait_for(std::chrono::seconds(10));
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->exit_code, 7);
  EXPECT_EQ(e->describe(), "exit 7");
  EXPECT_FALSE(child.send_line("anyone there?"));
}

TEST(ChildProcess, MissingProgramThrows) { EXPECT_THROW(ChildProcess({"/nonexistent/worker"}), Error); }

TEST(Base64, RoundTripsBinaryAndPinsAVector) {
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  std::string bytes;
  for (int i = 0; i < 1000; ++i) {
    bytes.push_back(static_cast<char>(i * 37));
  }
  for (std::size_t n : {0UL, 1UL, 2UL, 3UL, 999UL, 1000UL}) {
    EXPECT_EQ(base64_decode(base64_encode(bytes.substr(0, n))), bytes.substr(0, n)) << n;
  }
  EXPECT_THROW(base64_decode("abc"), Error);
  EXPECT_THROW(base64_decode("a!c="), Error);
}

}  // namespace
}  // namespace lp
