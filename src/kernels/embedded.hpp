#pragma once
// The kernel set (kernels/manifest.json and set.pack.xz, its PTX and cubins), linked
// into the binary by cmake/embed_kernels.cmake, so nothing is read from disk
// unless the user passes --kernel-dir.

#include <optional>
#include <string_view>
#include <vector>

namespace lp::kernels {

/// One embedded file: its path relative to kernels/ and its bytes as stored.
struct EmbeddedFile {
  std::string_view path;
  std::string_view bytes;
};

/// Every embedded file, sorted by path.
const std::vector<EmbeddedFile>& embedded_files();

/// The bytes of kernels/<path> as embedded, or nullopt.
std::optional<std::string_view> embedded_file(std::string_view path);

}  // namespace lp::kernels
