#pragma once
// The static results shipped with the binary: kernels/inspected.jsonl.xz, made by
// scripts/gen_inspected.py from a cold `loraprobe inspect` of every embedded variant
// under the compilers it names (prebuilt, and the CUDA toolkit's ptxas it was run
// with) and the pinned nvdisasm of scripts/install_tools.sh.
//
// One JSON object per line: a header
//   {"$comment", "format": 1, "analysis_fingerprint", "nvdisasm": {version, sha256},
//    "ptxas": [{version, sha256}, ...], "entries": N}
// then N entries, each exactly a disk-cache entry (cache.hpp: the envelope, keyed by
// the cubin's or the PTX's sha256, the tool binary's sha256 and the analysis
// fingerprint), sorted by kind and key. A lookup is served only where the keys
// match, that is for the same PTX or cubin bytes under the same ptxas or nvdisasm
// binary and the same analysis: anything else is a miss and is computed as before.
//
// The entries are trusted as the embedded kernel sets are: they are part of the
// binary, not of a folder someone else can write. So a shipped compile record saves
// its ptxas run (the disk cache's are re-run unless --trust-cache), and `inspect
// --verify-cache N` re-derives N of the hits, shipped or not. tests/inspect checks
// that the file matches this binary's analysis and kernel sets.

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/cache.hpp"

namespace lp::inspect {

/// A tool the results were made with: what `--version` said, and the binary's sha256.
struct ShippedTool {
  std::string version;
  std::string sha256;
};

/// The header line of a results file.
struct ShippedHeader {
  std::string analysis_fingerprint;
  ShippedTool nvdisasm;
  std::vector<ShippedTool> ptxas;
  std::size_t entries = 0;
};

/// Where the embedded results lie among the embedded kernel files.
inline constexpr std::string_view k_shipped_results_path = "inspected.jsonl.xz";

class ShippedResults {
 public:
  /// The results embedded in this binary, decoded once on first use; empty when the
  /// binary has none. Throws lp::Error when the embedded file is malformed (a build defect).
  static std::shared_ptr<const ShippedResults> embedded();
  /// Reads a results file's text (see above); `origin` names it in errors. Throws
  /// lp::InputError("<origin>: line 1:<pointer>: ...") for a malformed header,
  /// lp::Error("<origin>: line N: ...") for an entry without kind and key, and when the
  /// count differs from the header's.
  static ShippedResults parse(std::string text, const std::string& origin);

  [[nodiscard]] const ShippedHeader& header() const noexcept { return m_header; }
  [[nodiscard]] std::size_t size() const noexcept { return m_sass.size() + m_compiles.size(); }
  /// The sass/ entry `key`, read by the disk cache's rules (cache.hpp: report_entry).
  [[nodiscard]] LoadedEntry<sass::CubinReport> load_report(const std::string& key, std::string_view cubin_sha256) const;
  /// The ptxas/ entry `key` (cache.hpp: compile_entry).
  [[nodiscard]] LoadedEntry<CompiledPtx> load_compile(const std::string& key) const;

 private:
  /// Where an entry's line lies in m_text (offsets: the object may move).
  struct Span {
    std::size_t offset = 0;
    std::size_t bytes = 0;
  };
  [[nodiscard]] std::string_view line(Span span) const { return std::string_view(m_text).substr(span.offset, span.bytes); }

  std::string m_text;
  ShippedHeader m_header;
  std::map<std::string, Span, std::less<>> m_sass;      ///< key -> the entry's line
  std::map<std::string, Span, std::less<>> m_compiles;  ///< key -> the entry's line
};

}  // namespace lp::inspect
