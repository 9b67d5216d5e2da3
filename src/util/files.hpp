#pragma once
// Whole-file reads and atomic writes.

#include <string>

namespace lp {

/// Contents of the file at `path`; throws lp::UsageError "<path>: cannot read: <reason>"
/// when it does not exist or cannot be read, or is larger than `max_bytes`.
std::string read_file(const std::string& path, std::size_t max_bytes = std::size_t{1} << 30);

/// Writes `contents` to a temporary file beside `path`, flushes it and renames it over
/// `path`, so a reader never sees a half-written file. Throws lp::Error on failure.
void write_file_atomic(const std::string& path, const std::string& contents);

}  // namespace lp
