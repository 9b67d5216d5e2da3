#include "inspect/inputs.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>
#include <utility>

#include <sys/stat.h>

#include <fmt/format.h>

#include "sass/cubin.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::inspect {

namespace fs = std::filesystem;

namespace {

/// Larger than any cubin or PTX a kernel compiler writes; guards against reading
/// a disk image someone named foo.cubin.
constexpr std::size_t k_max_input_bytes = std::size_t{512} << 20;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/// True when the first directive of `text`, past blank lines and // and /* */
/// comments, is `.version <digits>`: every PTX file starts so (the PTX ISA makes
/// .version the first directive), and no other text format we might meet does.
bool looks_like_ptx(std::string_view text) {
  std::size_t i = 0;
  const std::size_t limit = std::min<std::size_t>(text.size(), 1 << 20);
  while (i < limit) {
    if (is_space(text[i])) {
      ++i;
    } else if (text.substr(i, 2) == "//") {
      const std::size_t nl = text.find('\n', i);
      i = nl == std::string_view::npos ? limit : nl + 1;
    } else if (text.substr(i, 2) == "/*") {
      const std::size_t end = text.find("*/", i + 2);
      if (end == std::string_view::npos) {
        return false;
      }
      i = end + 2;
    } else {
      break;
    }
  }
  constexpr std::string_view k_directive = ".version";
  if (text.substr(i, k_directive.size()) != k_directive) {
    return false;
  }
  i += k_directive.size();
  if (i >= text.size() || (text[i] != ' ' && text[i] != '\t')) {
    return false;
  }
  while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
    ++i;
  }
  return i < text.size() && text[i] >= '0' && text[i] <= '9';
}

std::string not_an_input(const std::string& path) {
  return fmt::format("{}: not a PTX file or a cubin (no ELF header and no .version directive)", path);
}

InputFile read_input(const std::string& path) {
  InputFile file;
  file.path = path;
  file.contents = read_file(path, k_max_input_bytes);
  const std::optional<InputKind> kind = classify_input(file.contents);
  if (!kind) {
    throw UsageError(not_an_input(path));
  }
  file.kind = *kind;
  return file;
}

}  // namespace

std::string_view to_string(InputKind kind) noexcept { return kind == InputKind::ptx ? "ptx" : "cubin"; }

std::optional<InputKind> classify_input(std::string_view bytes) {
  if (sass::looks_like_elf(bytes)) {
    return InputKind::cubin;
  }
  if (looks_like_ptx(bytes)) {
    return InputKind::ptx;
  }
  return std::nullopt;
}

namespace {

/// The *.ptx and *.cubin files under the folder `path`, sorted. Linked folders are
/// followed (a Triton cache is often a link); a folder already walked (a link back up
/// is a loop) is not entered again, known by its device and inode: one stat per folder,
/// where resolving each one's path (canonical) cost time growing with the cube of the depth.
/// Dangling links and loops are counted and said. `so_far`: inputs of earlier paths.
std::vector<std::string> find_inputs(const std::string& path, const InputLimits& limits, std::size_t so_far) {
  std::vector<std::string> found;
  std::set<std::pair<dev_t, ino_t>> walked;
  auto first_visit = [&walked](const fs::path& folder) {
    struct stat st {};
    return ::stat(folder.c_str(), &st) != 0 || walked.emplace(st.st_dev, st.st_ino).second;
  };
  (void)first_visit(path);
  std::size_t dangling = 0;
  std::size_t loops = 0;
  std::error_code ec;
  fs::recursive_directory_iterator it(
      path, fs::directory_options::skip_permission_denied | fs::directory_options::follow_directory_symlink, ec);
  if (ec) {
    throw UsageError(fmt::format("{}: cannot read: {}", path, ec.message()));
  }
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      throw UsageError(fmt::format("{}: cannot read: {}", it->path().string(), ec.message()));
    }
    const fs::path& entry = it->path();
    std::error_code link_ec;
    if (it->is_symlink(link_ec) && !fs::exists(entry, link_ec)) {
      ++dangling;
      continue;
    }
    if (it->is_directory(link_ec)) {
      if (static_cast<std::size_t>(it.depth()) + 1 > limits.max_depth) {
        throw UsageError(fmt::format("{}: folders nested deeper than {} levels (at {}); a Triton cache is two: "
                                     "name the folder that holds the kernels",
                                     path, limits.max_depth, entry.string()));
      }
      if (!first_visit(entry)) {
        ++loops;
        it.disable_recursion_pending();
      }
      continue;
    }
    const std::string ext = entry.extension().string();
    if ((ext == ".ptx" || ext == ".cubin") && it->is_regular_file(link_ec)) {
      if (so_far + found.size() >= limits.max_files) {
        throw UsageError(fmt::format("{}: more than {} *.ptx and *.cubin files; name a smaller folder (a Triton "
                                     "cache entry, or a few of them)",
                                     path, limits.max_files));
      }
      found.push_back(entry.string());
    }
  }
  if (dangling + loops > 0) {
    fmt::print(stderr, "inspect: {}: skipped {} dangling link(s) and {} link(s) back to a folder already walked\n",
               path, dangling, loops);
  }
  if (found.empty()) {
    throw UsageError(fmt::format("{}: no *.ptx or *.cubin files in this folder", path));
  }
  std::sort(found.begin(), found.end());
  return found;
}

}  // namespace

std::vector<InputFile> collect_inputs(const std::vector<std::string>& paths, const InputLimits& limits) {
  std::vector<InputFile> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      throw UsageError(fmt::format("{}: cannot read: {}", path,
                                   ec ? ec.message() : std::string(std::strerror(ENOENT))));
    }
    if (!fs::is_directory(status)) {
      out.push_back(read_input(path));
      continue;
    }
    for (const std::string& file : find_inputs(path, limits, out.size())) {
      // In a folder, a file that is named like an input but is none (a zero-byte or
      // truncated .cubin) is an error row of the results, not the end of the scan.
      InputFile f;
      f.path = file;
      f.contents = read_file(file, k_max_input_bytes);
      const std::optional<InputKind> kind = classify_input(f.contents);
      f.kind = kind ? *kind : (fs::path(file).extension() == ".ptx" ? InputKind::ptx : InputKind::cubin);
      out.push_back(std::move(f));
    }
  }
  return out;
}

std::optional<std::string> sibling_ptx(const std::string& cubin_path) {
  const fs::path ptx = fs::path(cubin_path).replace_extension(".ptx");
  std::error_code ec;
  if (ptx == fs::path(cubin_path) || !fs::is_regular_file(ptx, ec)) {
    return std::nullopt;
  }
  // Handed to the PTX check even when it does not read as PTX: the check then says why
  // (a file joined onto one line is one comment after its first "//"), where dropping
  // it left only a "?" for who made the hazard.
  return read_file(ptx.string(), k_max_input_bytes);
}

}  // namespace lp::inspect
