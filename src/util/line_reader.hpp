#pragma once
// Lines from a pipe, read in chunks: the bytes read past a line's end are kept for
// the next call. The one line reader of both ends of the worker protocol: the
// parent reads its workers' answers with a deadline (util/child_process.hpp), a
// worker reads its requests and asks whether another one is already there, so that
// it queues the next case behind the one on the GPU (worker/worker.cpp).

#include <cstddef>
#include <optional>
#include <string>

namespace lp {

class LineReader {
 public:
  /// Reads `fd` (not owned: the caller closes it).
  explicit LineReader(int fd) noexcept : m_fd(fd) {}

  /// The next line already read, without its newline; nullopt when no whole line is
  /// buffered (read more with fill()).
  [[nodiscard]] std::optional<std::string> buffered_line();

  enum class Fill {
    data,     ///< bytes were appended (maybe not a whole line)
    timeout,  ///< nothing came within the wait (or a signal interrupted it)
    eof,      ///< the writer closed its end: no more lines beyond the buffered ones
  };
  /// Waits up to `wait_ms` (0: not at all, -1: without limit) for the fd to be
  /// readable and appends what one read() gives. A read that fails (but for EINTR)
  /// counts as the end. Throws lp::Error when poll fails with anything but EINTR.
  Fill fill(int wait_ms);

  /// True once fill() saw the end of the input.
  [[nodiscard]] bool at_eof() const noexcept { return m_eof; }
  /// Bytes read and not yet returned as a line.
  [[nodiscard]] std::size_t buffered_bytes() const noexcept { return m_buffer.size(); }

 private:
  int m_fd;
  bool m_eof = false;
  std::string m_buffer;
};

}  // namespace lp
