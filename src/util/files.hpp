#pragma once
// Whole-file reads and atomic writes.

#include <functional>
#include <string>
#include <string_view>

namespace lp {

/// The one reader of every file loraprobe takes in (documents, configs, manifests,
/// packs, tuned configs, journals, cache entries, inspect inputs): the contents of
/// the regular file at `path`, a symlink followed. Throws lp::UsageError
/// "<path>: cannot read: <reason>" when it does not exist, cannot be read, is larger
/// than `max_bytes`, or is not a regular file: a FIFO, a device (/dev/zero, a link to
/// one), a socket or a folder is refused before it is opened, so nothing blocks or
/// streams. A signal that asks the run to stop during the read throws lp::Interrupted.
std::string read_file(const std::string& path, std::size_t max_bytes = std::size_t{1} << 30);

/// As read_file, handing the contents to `chunk` a piece (at most 64 KiB) at a time
/// until it returns false: for files read line by line (a journal of a million cases).
void read_file_chunks(const std::string& path, std::size_t max_bytes,
                      const std::function<bool(std::string_view)>& chunk);

/// The size in bytes of the regular file at `path` (a symlink followed), checked as
/// read_file checks it, so a size a manifest states is compared before anything is
/// read. Throws as read_file does.
std::size_t regular_file_size(const std::string& path);

/// The one way loraprobe writes an output file (a report, a Markdown or HTML page,
/// JUnit, a repro bundle's files): `contents` go to a temporary file beside the
/// target, flushed, then renamed over it, so a reader never sees half a file.
/// - A target that exists and is not a regular file (a device such as /dev/null, a
///   FIFO, a socket, a folder) is refused: the rename would replace the node.
/// - A symlink is followed to the regular file it names, as editors do (that file is
///   replaced, the link stays); a symlink to nothing is refused.
/// - A replaced file keeps its mode; a new one gets 0666 less the umask.
/// Throws lp::EnvironmentError "<path>: cannot write: <why>" (exit 3), errno's text
/// included.
void write_file_atomic(const std::string& path, const std::string& contents);

/// Writes all of `bytes` to the descriptor `fd`, again after a signal interrupts it;
/// false (errno says why) when a write fails.
bool write_all(int fd, std::string_view bytes);

/// Where text is written piece by piece (a report of a million cases, row by row).
using TextSink = std::function<void(std::string_view)>;
/// As above, the contents being what `produce` passes to its sink, written as they come
/// (buffered) rather than held whole. When `produce` throws, the temporary file is
/// removed and the target is left as it was.
void write_file_atomic(const std::string& path, const std::function<void(const TextSink&)>& produce);

/// Creates the output folder `dir` (and its parents) unless it is one already.
/// Throws lp::EnvironmentError "<dir>: cannot create the folder: <why>" when it exists
/// as something else or cannot be made.
void make_output_dir(const std::string& dir);

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
