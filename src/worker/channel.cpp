#include "worker/channel.hpp"

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "util/elapsed.hpp"
#include "util/error.hpp"
#include "util/line_reader.hpp"

namespace lp::worker {

RequestReader::RequestReader(int fd) : m_state(std::make_shared<State>()) {
  std::thread([state = m_state, fd] {
    LineReader lines(fd);
    auto push = [&](ParsedRequest parsed, double ms, bool run_line) {
      const std::lock_guard lock(state->mutex);
      state->times.parsing += ms;
      state->times.parsing_jobs += run_line ? ms : 0.0;
      state->queue.push_back(std::move(parsed));
      state->ready.notify_one();
    };
    while (true) {
      while (std::optional<std::string> line = lines.buffered_line()) {
        if (line->empty()) {
          continue;
        }
        const auto start = std::chrono::steady_clock::now();
        ParsedRequest parsed;
        try {
          parsed.request = protocol::parse_request(*line);
        } catch (...) {  // lp::Error for a malformed request; anything else ends the worker alike
          parsed.malformed = std::current_exception();
        }
        const bool run_line = parsed.request && std::holds_alternative<protocol::RunJob>(*parsed.request);
        push(std::move(parsed), ms_since(start), run_line);
      }
      bool end = lines.at_eof();
      if (!end) {
        try {
          (void)lines.fill(-1);
        } catch (const Error&) {
          end = true;  // poll failed: nothing more can be read
        }
      }
      if (end) {
        const std::lock_guard lock(state->mutex);
        state->eof = true;
        state->ready.notify_one();
        return;
      }
    }
  }).detach();
}

RequestReader::~RequestReader() = default;

std::optional<ParsedRequest> RequestReader::next(bool wait) {
  std::unique_lock lock(m_state->mutex);
  if (wait) {
    m_state->ready.wait(lock, [&] { return !m_state->queue.empty() || m_state->eof; });
  }
  if (m_state->queue.empty()) {
    return std::nullopt;
  }
  ParsedRequest parsed = std::move(m_state->queue.front());
  m_state->queue.pop_front();
  return parsed;
}

bool RequestReader::at_end() const {
  const std::lock_guard lock(m_state->mutex);
  return m_state->eof && m_state->queue.empty();
}

ReaderTimes RequestReader::times() const {
  const std::lock_guard lock(m_state->mutex);
  return m_state->times;
}

ReplyWriter::ReplyWriter(std::FILE* out) : m_out(out), m_thread([this] { run(); }) {}

ReplyWriter::~ReplyWriter() {
  {
    const std::lock_guard lock(m_mutex);
    m_stop = true;
    m_wake.notify_one();
  }
  m_thread.join();
}

void ReplyWriter::send(protocol::Reply reply) {
  const std::lock_guard lock(m_mutex);
  m_queue.push_back(std::move(reply));
  m_wake.notify_one();
}

void ReplyWriter::drain() {
  std::unique_lock lock(m_mutex);
  m_drained.wait(lock, [&] { return m_queue.empty() && !m_writing; });
}

double ReplyWriter::answering_ms() const {
  const std::lock_guard lock(m_mutex);
  return m_answering_ms;
}

void ReplyWriter::run() {
  std::unique_lock lock(m_mutex);
  while (true) {
    m_wake.wait(lock, [&] { return !m_queue.empty() || m_stop; });
    if (m_queue.empty()) {
      return;  // stopped, and everything was written
    }
    std::deque<protocol::Reply> taken;
    taken.swap(m_queue);
    m_writing = true;
    lock.unlock();
    // One line per message; the parent reads line by line with a deadline. The
    // stream's lock keeps what others print through it (a library, a kernel's printf
    // flushed by the driver) out of the middle of these lines, as when one thread did both.
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::string> lines;
    for (const protocol::Reply& reply : taken) {
      lines.push_back(protocol::to_line(reply) + "\n");
    }
    ::flockfile(m_out);
    for (const std::string& line : lines) {
      std::fwrite(line.data(), 1, line.size(), m_out);
    }
    std::fflush(m_out);
    ::funlockfile(m_out);
    const double ms = ms_since(start);
    lock.lock();
    m_answering_ms += ms;
    m_writing = false;
    if (m_queue.empty()) {
      m_drained.notify_all();
    }
  }
}

}  // namespace lp::worker
