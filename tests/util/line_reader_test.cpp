#include "util/line_reader.hpp"

#include <unistd.h>

#include <string>

#include <gtest/gtest.h>

namespace lp {
namespace {

/// A pipe whose write end the test feeds.
struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(::pipe(fds), 0); }
  ~Pipe() {
    for (int fd : fds) {
      if (fd >= 0) {
        ::close(fd);
      }
    }
  }
  void write(const std::string& s) const { ASSERT_EQ(::write(fds[1], s.data(), s.size()), static_cast<ssize_t>(s.size())); }
  void close_writer() {
    ::close(fds[1]);
    fds[1] = -1;
  }
};

TEST(LineReader, SplitsAChunkIntoLinesAndKeepsTheRestForLater) {
  Pipe p;
  LineReader reader(p.fds[0]);
  EXPECT_FALSE(reader.buffered_line().has_value());
  p.write("one\ntwo\nthr");
  ASSERT_EQ(reader.fill(1000), LineReader::Fill::data);
  EXPECT_EQ(reader.buffered_line(), "one");
  EXPECT_EQ(reader.buffered_line(), "two");
  EXPECT_FALSE(reader.buffered_line().has_value());  // "thr" is not a line yet
  EXPECT_EQ(reader.buffered_bytes(), 3U);
  p.write("ee\n\n");
  ASSERT_EQ(reader.fill(1000), LineReader::Fill::data);
  EXPECT_EQ(reader.buffered_line(), "three");
  EXPECT_EQ(reader.buffered_line(), "");  // an empty line is a line
  EXPECT_FALSE(reader.buffered_line().has_value());
}

TEST(LineReader, AZeroWaitOnAnEmptyPipeReturnsAtOnceAndEofIsSticky) {
  Pipe p;
  LineReader reader(p.fds[0]);
  EXPECT_EQ(reader.fill(0), LineReader::Fill::timeout);
  EXPECT_FALSE(reader.at_eof());
  p.write("last\n");
  p.close_writer();
  EXPECT_EQ(reader.fill(0), LineReader::Fill::data);
  EXPECT_EQ(reader.fill(-1), LineReader::Fill::eof);  // would block forever without the end
  EXPECT_TRUE(reader.at_eof());
  EXPECT_EQ(reader.fill(-1), LineReader::Fill::eof);
  EXPECT_EQ(reader.buffered_line(), "last");  // lines read before the end are still returned
}

}  // namespace
}  // namespace lp
