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

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/interrupt.hpp"

namespace lp {

namespace {

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) {
    return "a folder";
  }
  if (S_ISCHR(mode)) {
    return "a character device";
  }
  if (S_ISBLK(mode)) {
    return "a block device";
  }
  if (S_ISFIFO(mode)) {
    return "a FIFO";
  }
  if (S_ISSOCK(mode)) {
    return "a socket";
  }
  return "not a regular file";
}

[[noreturn]] void cannot_read(const std::string& path, const std::string& why) {
  throw UsageError(fmt::format("{}: cannot read: {}", path, why));
}

/// stat(2) of `path`, a symlink followed, refusing what is not a regular file: a
/// FIFO would block the open, a device (/dev/zero) would stream without end.
struct stat regular_stat(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    cannot_read(path, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    cannot_read(path, fmt::format("it is {}, not a regular file", kind_of(st.st_mode)));
  }
  return st;
}

/// A read-only descriptor of the regular file at `path`, closed when it goes.
class ReadFd {
 public:
  explicit ReadFd(const std::string& path) {
    const struct stat named = regular_stat(path);
    // O_NONBLOCK: a FIFO put in the file's place since the stat opens without waiting
    // for a writer, and the fstat below refuses it.
    m_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (m_fd < 0) {
      cannot_read(path, std::strerror(errno));
    }
    struct stat opened {};
    if (::fstat(m_fd, &opened) != 0 || !S_ISREG(opened.st_mode) || opened.st_ino != named.st_ino ||
        opened.st_dev != named.st_dev) {
      ::close(m_fd);
      cannot_read(path, "it changed while it was opened");
    }
    m_size = static_cast<std::size_t>(opened.st_size);
  }
  ~ReadFd() { ::close(m_fd); }
  ReadFd(const ReadFd&) = delete;
  ReadFd& operator=(const ReadFd&) = delete;
  [[nodiscard]] int fd() const { return m_fd; }
  /// What fstat said; /proc files say 0 and have more, so reads go on to the end.
  [[nodiscard]] std::size_t size() const { return m_size; }

 private:
  int m_fd = -1;
  std::size_t m_size = 0;
};

}  // namespace

std::size_t regular_file_size(const std::string& path) {
  return static_cast<std::size_t>(regular_stat(path).st_size);
}

void read_file_chunks(const std::string& path, std::size_t max_bytes,
                      const std::function<bool(std::string_view)>& chunk) {
  const ReadFd file(path);
  if (file.size() > max_bytes) {
    cannot_read(path, fmt::format("{} bytes is over the limit of {}", file.size(), max_bytes));
  }
  std::array<char, 1 << 16> buffer{};
  std::size_t total = 0;
  for (;;) {
    const ssize_t got = ::read(file.fd(), buffer.data(), buffer.size());
    if (got < 0) {
      if (errno == EINTR) {
        throw_if_interrupted();  // Ctrl-C is exit 130, not a read error
        continue;
      }
      cannot_read(path, std::strerror(errno));
    }
    if (got == 0) {
      return;
    }
    total += static_cast<std::size_t>(got);
    if (total > max_bytes) {  // it grew since the fstat
      cannot_read(path, fmt::format("more than the limit of {} bytes", max_bytes));
    }
    if (!chunk(std::string_view(buffer.data(), static_cast<std::size_t>(got)))) {
      return;
    }
  }
}

std::string read_file(const std::string& path, std::size_t max_bytes) {
  std::string out;
  read_file_chunks(path, max_bytes, [&](std::string_view piece) {
    out.append(piece);
    return true;
  });
  return out;
}

namespace {

[[noreturn]] void cannot_write(const std::string& path, const std::string& why) {
  throw EnvironmentError(fmt::format("{}: cannot write: {}", path, why));
}

/// The process's umask, read without changing it (/proc/self/status has it since
/// Linux 4.7); the umask() round trip otherwise.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0) {
      return static_cast<mode_t>(std::strtoul(line.c_str() + 6, nullptr, 8) & 0777);
    }
  }
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return mask;
}

}  // namespace

bool write_all(int fd, std::string_view bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) {
        continue;
      }
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void write_file_atomic(const std::string& path, const std::string& contents) {
  write_file_atomic(path, [&](const TextSink& sink) { sink(contents); });
}

namespace {

/// What write_file_atomic's rename replaces (the file itself, or the file a symlink
/// names) and the mode the new file gets (the old one's, else 0666 less the umask).
struct WriteTarget {
  std::string path;
  mode_t mode = 0;
};

/// `path`'s WriteTarget; throws (cannot_write) when it is not a regular file or a
/// symlink to one.
WriteTarget write_target(const std::string& path) {
  WriteTarget out{path, static_cast<mode_t>(0666 & ~current_umask())};
  struct stat st {};
  if (::lstat(path.c_str(), &st) == 0) {
    if (S_ISLNK(st.st_mode)) {
      char* resolved = ::realpath(path.c_str(), nullptr);
      if (resolved == nullptr) {
        cannot_write(path, fmt::format("a symlink to nothing ({})", std::strerror(errno)));
      }
      out.path = resolved;
      std::free(resolved);
      if (::stat(out.path.c_str(), &st) != 0) {
        cannot_write(path, std::strerror(errno));
      }
    }
    if (!S_ISREG(st.st_mode)) {
      cannot_write(path, fmt::format("it is {}, not a regular file; name a file (or - for standard output where "
                                     "the command takes it)",
                                     kind_of(st.st_mode)));
    }
    out.mode = st.st_mode & 07777;
  } else if (errno != ENOENT) {
    cannot_write(path, std::strerror(errno));
  }
  return out;
}

}  // namespace

void write_file_atomic(const std::string& path, const std::function<void(const TextSink&)>& produce) {
  if (path.empty()) {
    cannot_write(path, "an empty path");
  }
  const WriteTarget written = write_target(path);
  const std::string& target = written.path;
  const mode_t mode = written.mode;
  const std::filesystem::path target_path(target);
  const std::filesystem::path dir = target_path.has_parent_path() ? target_path.parent_path() : ".";
  std::string tmpl = (dir / ("." + target_path.filename().string() + ".tmp.XXXXXX")).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) {
    cannot_write(path, fmt::format("cannot create a file in {}: {}", dir.string(), std::strerror(errno)));
  }
  bool closed = false;  // by fail(), which also removed the temporary file
  auto fail = [&](const char* step) {
    const int saved = errno;
    closed = true;
    ::close(fd);
    ::unlink(tmpl.c_str());
    cannot_write(path, fmt::format("{}: {}", step, std::strerror(saved)));
  };
  auto write_out = [&](std::string_view bytes) {
    if (!write_all(fd, bytes)) {
      fail("write failed");
    }
  };
  // Small pieces are gathered into writes of about a megabyte; a large one goes as it is.
  constexpr std::size_t k_buffer_bytes = std::size_t{1} << 20;
  std::string buffer;
  try {
    produce([&](std::string_view piece) {
      if (buffer.size() + piece.size() > k_buffer_bytes) {
        write_out(buffer);
        buffer.clear();
      }
      if (piece.size() >= k_buffer_bytes) {
        write_out(piece);
      } else {
        buffer.append(piece);
      }
    });
    write_out(buffer);
  } catch (...) {
    if (!closed) {
      ::close(fd);
      ::unlink(tmpl.c_str());
    }
    throw;
  }
  if (::fchmod(fd, mode) != 0) {
    fail("cannot set its mode");
  }
  if (::fsync(fd) != 0) {
    fail("flush failed");
  }
  if (::close(fd) != 0) {
    const int saved = errno;
    ::unlink(tmpl.c_str());
    cannot_write(path, fmt::format("flush failed: {}", std::strerror(saved)));
  }
  if (::rename(tmpl.c_str(), target.c_str()) != 0) {
    const int saved = errno;
    ::unlink(tmpl.c_str());
    cannot_write(path, fmt::format("rename failed: {}", std::strerror(saved)));
  }
}

void make_output_dir(const std::string& dir) {
  std::error_code ec;
  if (std::filesystem::is_directory(dir, ec)) {
    return;
  }
  if (std::filesystem::exists(std::filesystem::symlink_status(dir, ec))) {
    throw EnvironmentError(fmt::format("{}: cannot create the folder: something else is there", dir));
  }
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    throw EnvironmentError(fmt::format("{}: cannot create the folder: {}", dir, ec.message()));
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
