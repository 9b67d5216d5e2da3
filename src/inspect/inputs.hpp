#pragma once
// The user's own files for `loraprobe inspect PATH...`: PTX to compile and
// cubins to disassemble, named one by one or found in folders (a Triton cache
// directory holds <hash>/<kernel>.ptx and <kernel>.cubin next to .json, .ttir,
// .llir and others, which are ignored).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace lp::inspect {

/// What a file holds.
enum class InputKind { ptx, cubin };

/// "ptx" or "cubin".
std::string_view to_string(InputKind kind) noexcept;

/// One file to inspect.
struct InputFile {
  std::string path;      ///< as named, or <folder>/<relative path> when found in a folder
  InputKind kind = InputKind::cubin;
  std::string contents;  ///< the bytes read
};

/// What `bytes` hold, by content: an ELF header is a cubin, a `.version X.Y`
/// directive before any other directive (after comments) is PTX; nullopt otherwise.
std::optional<InputKind> classify_input(std::string_view bytes);

/// How far a folder is searched: a Triton cache is two levels deep and holds a few
/// thousand kernels; past these a folder is no cache, and is refused before its files
/// are read (each found file is held in memory until the run ends).
struct InputLimits {
  std::size_t max_depth = 64;       ///< folders below the named one
  std::size_t max_files = 20'000;   ///< *.ptx and *.cubin files, over all the paths
};

/// Reads the inputs: a named file is taken by its content whatever its name; a
/// folder is searched recursively (sorted; symbolic links to folders followed, a
/// folder reached twice walked once) for *.ptx and *.cubin, everything else being
/// ignored. Throws lp::UsageError:
///   "<path>: cannot read: <reason>"                 (missing, unreadable, not a regular file)
///   "<path>: not a PTX file or a cubin (no ELF header and no .version directive)"
///                                                   (a named file, or a *.ptx / *.cubin
///                                                    found in a folder, that is neither)
///   "<path>: no *.ptx or *.cubin files in this folder"
///   "<path>: folders nested deeper than N levels ..." / "more than N *.ptx and *.cubin files ..."
std::vector<InputFile> collect_inputs(const std::vector<std::string>& paths, const InputLimits& limits = {});

/// The PTX beside a cubin named on its own: <stem>.ptx in the same folder, when that
/// file exists (a repro bundle's kernel.ptx, a Triton cache entry's), whatever it
/// holds: the PTX check says when it is not PTX. nullopt when there is none;
/// lp::UsageError "<path>: cannot read: ..." when it is there but cannot be read (as
/// a named input would be).
std::optional<std::string> sibling_ptx(const std::string& cubin_path);

}  // namespace lp::inspect
