#pragma once
// Whole-file reads and atomic writes.

#include <string>
#include <string_view>

namespace lp {

/// Contents of the file at `path`; throws lp::UsageError "<path>: cannot read: <reason>"
/// when it does not exist or cannot be read, or is larger than `max_bytes`.
std::string read_file(const std::string& path, std::size_t max_bytes = std::size_t{1} << 30);

/// Writes `contents` to a temporary file beside `path`, flushes it and renames it over
/// `path`, so a reader never sees a half-written file. Throws lp::Error on failure.
void write_file_atomic(const std::string& path, const std::string& contents);

/// A private temporary folder (mkdtemp under $TMPDIR or /tmp), removed with everything
/// in it when the object goes. Move-only.
class TempDir {
 public:
  /// Creates "<tmp>/<prefix>XXXXXX"; throws lp::Error when it cannot.
  explicit TempDir(const std::string& prefix = "loraprobe-");
  ~TempDir();
  TempDir(TempDir&& other) noexcept;
  TempDir& operator=(TempDir&&) = delete;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// The folder's path.
  [[nodiscard]] const std::string& path() const noexcept { return m_path; }
  /// path()/name, written with `contents`; returns that path.
  std::string write(const std::string& name, std::string_view contents) const;

 private:
  std::string m_path;
};

}  // namespace lp
