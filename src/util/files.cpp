#include "util/files.hpp"

#include <array>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "util/error.hpp"

namespace lp {

std::string read_file(const std::string& path, std::size_t max_bytes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw UsageError(fmt::format("{}: cannot read: is a directory", path));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw UsageError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  // A regular file's size is checked before reading; a device, pipe or FIFO
  // (/dev/zero, a link to one) has none, so every input is also read in bounded
  // chunks that stop at the limit.
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    throw UsageError(fmt::format("{}: cannot read: {} bytes is over the limit of {}", path, size, max_bytes));
  }
  std::string out;
  std::array<char, 1 << 16> chunk{};
  while (in) {
    in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (out.size() + got > max_bytes) {
      throw UsageError(fmt::format("{}: cannot read: more than the limit of {} bytes", path, max_bytes));
    }
    out.append(chunk.data(), got);
  }
  if (in.bad()) {
    throw UsageError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  }
  return out;
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::string tmpl = (dir / ("." + target.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    throw Error(fmt::format("{}: cannot create a temporary file: {}", path, std::strerror(errno)));
  }
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      const int saved = errno;
      ::close(fd);
      ::unlink(tmpl.c_str());
      throw Error(fmt::format("{}: write failed: {}", path, std::strerror(saved)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0644);
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    throw Error(fmt::format("{}: flush failed: {}", path, std::strerror(errno)));
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmpl.c_str());
    throw Error(fmt::format("{}: rename failed: {}", path, std::strerror(saved)));
  }
}

TempDir::TempDir(const std::string& prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/" + prefix + "XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(fmt::format("cannot create a temporary folder {}: {}", pattern, std::strerror(errno)));
  }
  m_path = pattern;
}

TempDir::~TempDir() {
  if (!m_path.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(m_path, ec);
  }
}

TempDir::TempDir(TempDir&& other) noexcept : m_path(std::move(other.m_path)) { other.m_path.clear(); }

std::string TempDir::write(const std::string& name, std::string_view contents) const {
  const std::string path = m_path + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) {
    throw Error(fmt::format("{}: write failed", path));
  }
  return path;
}

}  // namespace lp
