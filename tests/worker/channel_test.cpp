// The worker's reader and writer threads (worker/channel.hpp): requests come out
// parsed and in order, a malformed one in its place; replies go out whole and in order.

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "protocol/protocol.hpp"
#include "worker/channel.hpp"

namespace lp::worker {
namespace {

protocol::Job job(std::size_t index) {
  protocol::Job j;
  j.index = index;
  j.case_id = "case" + std::to_string(index);
  j.repeats = 3;
  return j;
}

TEST(RequestReader, GivesEveryRequestParsedInOrderAndAMalformedOneInItsPlace) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  RequestReader reader(fds[0]);
  EXPECT_FALSE(reader.next(/*wait=*/false)) << "nothing sent yet: none, at once";
  EXPECT_FALSE(reader.at_end());
  std::string text;
  for (std::size_t i = 0; i < 200; ++i) {
    text += protocol::to_line(protocol::Request{protocol::RunJob{job(i)}}) + "\n";
    if (i == 100) {
      text += "\n{\"type\": \"run\", \"job\": {\"index\": \"x\"}}\n{\"type\": \"nonsense\"}\n";
    }
  }
  text += protocol::to_line(protocol::Request{protocol::Quit{}}) + "\n";
  // Written in pieces that cut lines anywhere, as a pipe may deliver them.
  for (std::size_t at = 0; at < text.size(); at += 4093) {
    const std::string piece = text.substr(at, 4093);
    ASSERT_EQ(::write(fds[1], piece.data(), piece.size()), static_cast<ssize_t>(piece.size()));
  }
  ::close(fds[1]);
  std::vector<std::size_t> indices;
  int malformed = 0;
  int bad = 0;
  bool quit = false;
  while (std::optional<ParsedRequest> r = reader.next(/*wait=*/true)) {
    ASSERT_FALSE(quit) << "nothing after quit";
    if (r->malformed) {
      ++malformed;
      EXPECT_EQ(indices.size(), 101U) << "in its place";
      continue;
    }
    ASSERT_TRUE(r->request.has_value());
    if (const auto* run = std::get_if<protocol::RunJob>(&*r->request)) {
      indices.push_back(run->job.index);
    } else if (std::holds_alternative<protocol::BadRequest>(*r->request)) {
      ++bad;
    } else {
      quit = std::holds_alternative<protocol::Quit>(*r->request);
    }
  }
  ASSERT_EQ(indices.size(), 200U);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    ASSERT_EQ(indices[i], i);
  }
  EXPECT_EQ(malformed, 1);
  EXPECT_EQ(bad, 1) << "an unknown type is answered, not fatal";
  EXPECT_TRUE(quit);
  EXPECT_TRUE(reader.at_end());
  EXPECT_GT(reader.times().parsing_jobs, 0.0);
  ::close(fds[0]);
}

TEST(ReplyWriter, WritesEveryReplyWholeAndInOrderByDrainAndByItsEnd) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    ReplyWriter writer(out);
    for (std::size_t i = 0; i < 500; ++i) {
      protocol::JobResult r = protocol::JobResult::lost(i, "case" + std::to_string(i), protocol::RunOutcome::fault, "x");
      writer.send(protocol::JobAnswer{r});
      if (i == 249) {
        writer.drain();  // the first 250 are in the file, flushed: read them past the FILE
        std::string bytes(1 << 20, '\0');
        const ssize_t n = ::pread(::fileno(out), bytes.data(), bytes.size(), 0);
        ASSERT_GT(n, 0);
        bytes.resize(static_cast<std::size_t>(n));
        EXPECT_EQ(std::count(bytes.begin(), bytes.end(), '\n'), 250);
      }
    }
  }  // the rest by the destructor
  std::rewind(out);
  std::vector<std::size_t> indices;
  char buffer[4096];
  std::string line;
  while (std::fgets(buffer, sizeof buffer, out) != nullptr) {
    line += buffer;
    if (line.back() != '\n') {
      continue;
    }
    line.pop_back();
    const std::optional<protocol::Reply> reply = protocol::parse_reply(line);
    ASSERT_TRUE(reply.has_value()) << line;
    indices.push_back(std::get<protocol::JobAnswer>(*reply).result.index);
    line.clear();
  }
  std::fclose(out);
  ASSERT_EQ(indices.size(), 500U);
  for (std::size_t i = 0; i < indices.size(); ++i) {
    ASSERT_EQ(indices[i], i);
  }
}

// A reply quoting bytes that are not UTF-8 (a driver's JIT log) is written with them
// replaced, not thrown on the writer thread (which would end the worker unanswered).
TEST(ReplyWriter, BytesThatAreNotUtf8AreReplacedNotThrown) {
  std::FILE* out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  {
    ReplyWriter writer(out);
    writer.send(protocol::WorkerError{"bad \xff byte"});
    writer.send(protocol::WorkerError{"next"});
  }
  std::rewind(out);
  char buffer[4096];
  std::vector<std::string> errors;
  while (std::fgets(buffer, sizeof buffer, out) != nullptr) {
    std::string line(buffer);
    line.pop_back();
    const std::optional<protocol::Reply> reply = protocol::parse_reply(line);
    ASSERT_TRUE(reply.has_value()) << line;
    errors.push_back(std::get<protocol::WorkerError>(*reply).error);
  }
  std::fclose(out);
  EXPECT_EQ(errors, (std::vector<std::string>{"bad \xEF\xBF\xBD byte", "next"}));
}

}  // namespace
}  // namespace lp::worker
