#include "util/line_reader.hpp"

#include <poll.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "util/error.hpp"

namespace lp {

std::optional<std::string> LineReader::buffered_line() {
  const std::size_t nl = m_buffer.find('\n');
  if (nl == std::string::npos) {
    return std::nullopt;
  }
  std::string line = m_buffer.substr(0, nl);
  m_buffer.erase(0, nl + 1);
  return line;
}

LineReader::Fill LineReader::fill(int wait_ms) {
  if (m_eof) {
    return Fill::eof;
  }
  pollfd fd{m_fd, POLLIN, 0};
  const int ready = ::poll(&fd, 1, wait_ms);
  if (ready < 0) {
    if (errno == EINTR) {
      return Fill::timeout;
    }
    throw Error(fmt::format("poll on fd {} failed: {}", m_fd, std::strerror(errno)));
  }
  if (ready == 0) {
    return Fill::timeout;
  }
  std::array<char, 1 << 16> chunk{};
  const ssize_t n = ::read(m_fd, chunk.data(), chunk.size());
  if (n < 0) {
    if (errno == EINTR || errno == EAGAIN) {
      return Fill::timeout;
    }
  }
  if (n <= 0) {  // closed, or unreadable (EIO, EBADF): either way no more lines come
    m_eof = true;
    return Fill::eof;
  }
  m_buffer.append(chunk.data(), static_cast<std::size_t>(n));
  return Fill::data;
}

}  // namespace lp
