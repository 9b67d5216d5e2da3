#pragma once
// The on-disk cache of lp_inspect. Disassembling a cubin costs about a second of
// nvdisasm, compiling a PTX a fraction of one, and the full kernel set holds
// over a thousand of each; a second `loraprobe inspect` of the same cubins with
// the same tools should cost file reads only.
//
// Two kinds of entries, one JSON file each, under <root>/<kind>/<2 hex>/<key>.json:
//   sass/   a CubinReport as JSON, keyed by (cubin sha256, nvdisasm sha256,
//           analysis fingerprint: sass::k_analysis_version, the check table and
//           the checks selected);
//   ptxas/  what compiling one PTX with one ptxas binary gave (the cubin's sha256
//           and size, ptxas -v's log), keyed by (PTX sha256, ptxas sha256, the
//           options), so that a cached compile leads straight to a cached report
//           without running ptxas again. The cubin itself is not kept.
// Entries are written atomically (temporary file and rename), so concurrent
// processes and threads may share a root.
//
// The cache is a cache, not an authority: anyone who can write its folder can edit
// an entry, so each one is an envelope {format, kind, key, cubin_sha256,
// payload_sha256, payload} and is used only when it is whole: the key and kind are
// the ones asked for, the payload hashes to payload_sha256, it describes the cubin
// the caller has (cubin_sha256), and it reads back through the typed reader of its
// kind with nothing missing, mistyped or extra. Anything else is a rejected entry:
// a miss, recomputed and rewritten. The folder must be writable only by you (README,
// Security): a forged entry with correct hashes is caught only by re-analysis
// (inspect --verify-cache).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sass/analyze.hpp"

namespace lp::inspect {

/// $XDG_CACHE_HOME/loraprobe when XDG_CACHE_HOME is set (and absolute), else
/// $HOME/.cache/loraprobe; nullopt when neither variable is usable.
std::optional<std::string> default_cache_root();

/// sha256 of what decides an analysis besides its inputs: sass::k_analysis_version,
/// every row of the check table (id and description) and the ids `options` selects
/// (all of them when empty). Throws lp::UsageError for an unknown check id.
std::string analysis_fingerprint(const sass::AnalysisOptions& options);

/// The sass/ key of a report: sha256 over the three parts, lower-case hex.
std::string sass_cache_key(std::string_view cubin_sha256, std::string_view nvdisasm_sha256,
                           std::string_view analysis_fingerprint);

/// The ptxas/ key of a compile: sha256 over the PTX's sha256, the ptxas binary's
/// sha256 and its options in order, lower-case hex.
std::string compile_cache_key(std::string_view ptx_sha256, std::string_view ptxas_sha256,
                              const std::vector<std::string>& options);

/// What compiling one PTX with one ptxas binary made: a ptxas/ entry's payload,
/// {cubin_sha256, cubin_bytes, ms, log} exactly.
struct CompiledPtx {
  std::string cubin_sha256;
  std::size_t cubin_bytes = 0;
  double ms = 0.0;  ///< ptxas's wall time
  std::string log;  ///< ptxas -v's output
};

/// What a lookup found.
template <class Payload>
struct LoadedEntry {
  std::optional<Payload> payload;  ///< the entry's payload when whole
  bool rejected = false;           ///< an entry was there but is not whole
};

/// The text of a sass/ entry read by the rules above: its report when the entry is
/// whole, is the one under `key` and describes the cubin `cubin_sha256`; else
/// rejected. Never throws for a bad entry.
LoadedEntry<sass::CubinReport> report_entry(std::string_view text, const std::string& key,
                                            std::string_view cubin_sha256);
/// The text of a ptxas/ entry read by the rules above (it names the cubin it made).
LoadedEntry<CompiledPtx> compile_entry(std::string_view text, const std::string& key);

/// A cache folder. Thread-safe: every call works on its own files.
class ResultCache {
 public:
  /// Uses `root` (created on the first store).
  explicit ResultCache(std::string root) : m_root(std::move(root)) {}

  /// The folder given at construction.
  [[nodiscard]] const std::string& root() const noexcept { return m_root; }

  template <class Payload>
  using Loaded = LoadedEntry<Payload>;
  /// The sass/ entry `key` when it is whole (see above) and describes the cubin
  /// `cubin_sha256`. Never throws for a bad entry.
  [[nodiscard]] Loaded<sass::CubinReport> load_report(const std::string& key, std::string_view cubin_sha256) const;
  /// The ptxas/ entry `key` when it is whole (it names the cubin it made).
  [[nodiscard]] Loaded<CompiledPtx> load_compile(const std::string& key) const;
  /// Writes the entry, in its envelope, atomically. Best effort: returns the reason
  /// it could not ("<path>: ...") instead of throwing, since a cache that cannot be
  /// written only costs time.
  [[nodiscard]] std::optional<std::string> store_report(const std::string& key,
                                                        const sass::CubinReport& report) const;
  [[nodiscard]] std::optional<std::string> store_compile(const std::string& key, const CompiledPtx& compiled) const;
  /// Where the entry `key` of `kind` lives.
  [[nodiscard]] std::string path_of(std::string_view kind, const std::string& key) const;

 private:
  std::string m_root;
};

}  // namespace lp::inspect
