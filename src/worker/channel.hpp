#pragma once
// The worker's two pipes, each served by a thread of its own: one reads and parses
// the parent's requests ahead, one writes the answers. The main thread then spends
// its time on the CUDA work alone. On the H100 host the worker spent 277 ms parsing
// and 146 ms answering the default sweep's 5,288 jobs, on the path of every job;
// the order of requests and of answers is kept.

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "protocol/protocol.hpp"

namespace lp::worker {

/// One request line as the reader thread parsed it.
struct ParsedRequest {
  std::optional<protocol::Request> request;  ///< empty when the line was malformed
  std::exception_ptr malformed;              ///< what parse_request threw (an lp::Error for a malformed line)
};

/// Where the reader thread spent its time, in ms (LP_WORKER_TIMES=1).
struct ReaderTimes {
  double parsing = 0;       ///< parse_request, every line
  double parsing_jobs = 0;  ///< of which the run lines
};

/// Reads request lines from `fd` on its own thread and parses them in order. The
/// thread ends at the end of the input; it outlives this object when that is gone
/// first (the worker's process ends then), holding only state of its own.
class RequestReader {
 public:
  explicit RequestReader(int fd);
  ~RequestReader();
  RequestReader(const RequestReader&) = delete;
  RequestReader& operator=(const RequestReader&) = delete;

  /// The next request in order: with `wait`, blocks until one is parsed or the input
  /// ends; without, only one already parsed. nullopt when none is there.
  [[nodiscard]] std::optional<ParsedRequest> next(bool wait);
  /// True once the input ended and every request was taken.
  [[nodiscard]] bool at_end() const;
  [[nodiscard]] ReaderTimes times() const;

 private:
  struct State {
    mutable std::mutex mutex;
    std::condition_variable ready;
    std::deque<ParsedRequest> queue;
    bool eof = false;
    ReaderTimes times;
  };
  std::shared_ptr<State> m_state;
};

/// Writes replies to `out` (not owned) on its own thread, one line each, in the order
/// sent; what is queued together goes out with one flush.
class ReplyWriter {
 public:
  explicit ReplyWriter(std::FILE* out);
  /// Drains, then joins the thread.
  ~ReplyWriter();
  ReplyWriter(const ReplyWriter&) = delete;
  ReplyWriter& operator=(const ReplyWriter&) = delete;

  void send(protocol::Reply reply);
  /// Returns once every reply sent is written and flushed.
  void drain();
  /// The thread's time serialising and writing, in ms (LP_WORKER_TIMES=1).
  [[nodiscard]] double answering_ms() const;

 private:
  void run();

  mutable std::mutex m_mutex;
  std::condition_variable m_wake;     ///< a reply queued, or the end
  std::condition_variable m_drained;  ///< the queue written
  std::deque<protocol::Reply> m_queue;
  bool m_writing = false;  ///< the thread holds replies it took and has not flushed
  bool m_stop = false;
  double m_answering_ms = 0;
  std::FILE* m_out;
  std::thread m_thread;
};

}  // namespace lp::worker
