#pragma once
// One kernel set: the PTX and cubins of our kernels as one Triton version built
// them. Embedded sets live in kernels/sets/triton-<version>/ (manifest.json.xz +
// set.pack.xz); a folder given with --kernel-dir holds the same files (or a format 2
// manifest.json). kernels/kernel_sets.hpp holds all the sets of a run.
// The pack is xz streams laid end to end (a few MiB of it each): a file is cut from
// the streams it lies in, each decoded once, on first use, and checked against the
// manifest's sha256 before anything uses it. verify_pack() checks the whole pack.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>


#include "kernels/manifest.hpp"
#include "kernels/xz.hpp"
#include "util/error.hpp"

namespace lp::kernels {

/// A key=value term of --filter ("op=expand", "block_n=128", "even_k=true").
struct FilterTerm {
  std::string key;
  AxisValue value;  ///< a JSON scalar where the text is one (128, true, null), else the text
};

/// Parses "op=expand,block_n=128"; values are JSON scalars where they parse as such
/// (128, true, null), else strings. Throws lp::UsageError "--filter <text>: <message>".
std::vector<FilterTerm> parse_filter(const std::string& text);

/// Takes every `triton=V` term out of a filter (it picks kernel sets, not variants)
/// and returns the versions, in order.
std::vector<std::string> take_triton_terms(std::vector<FilterTerm>& terms);

class KernelSet;
/// What --filter `filter` throws when it matches no `what` ("variant", "compiled
/// variant") of `sets`: a filter that matches nothing is a mistake, not an empty
/// answer (list and inspect alike). `hint` says where to look.
[[nodiscard]] UsageError no_filter_match(const std::string& filter, std::string_view what,
                                         const std::vector<const KernelSet*>& sets, std::string_view hint);

/// Outcome of looking a variant up by its axes.
struct Lookup {
  const Variant* variant = nullptr;  ///< set when an ok variant matches every wanted axis
  std::string problem;               ///< otherwise: why not, naming the nearest values
};

class KernelSet {
 public:
  /// The sets linked into the binary, in the order of their embedded paths. Throws
  /// lp::Error when none was embedded.
  static std::vector<KernelSet> embedded_sets();
  /// A set made by the user: DIR/manifest.json.xz (or format 2's DIR/manifest.json; read
  /// now) and DIR/set.pack.xz (read by the first contents() call). Throws lp::UsageError /
  /// lp::InputError naming the file on bad input.
  static KernelSet from_directory(const std::string& dir);

  /// True for a set linked into the binary; false for a --kernel-dir one (the user's input).
  [[nodiscard]] bool is_embedded() const noexcept { return !m_dir.has_value(); }

  /// The Triton version that built the set (its manifest's triton_version).
  [[nodiscard]] const std::string& triton() const { return m_manifest.triton_version; }

  [[nodiscard]] const Manifest& manifest() const { return m_manifest; }
  [[nodiscard]] const std::vector<Variant>& variants() const { return m_manifest.variants; }
  /// "<embedded>/kernels/sets/triton-<version>" or the folder.
  [[nodiscard]] const std::string& origin() const { return m_origin; }

  /// The variant with this id, or nullptr.
  [[nodiscard]] const Variant* find(const std::string& id) const;

  /// The contents of a file of this set. The first call reads the pack's stream index;
  /// each stream the file lies in is decoded on first use (about 10 ms per 4 MiB) and kept
  /// for the set's lifetime. Thread-safe: threads decode different streams at once.
  /// Throws lp::Error when the pack is corrupt or decodes to another size than the
  /// manifest's (again on every later call), or the file's sha256 differs from the
  /// manifest's; lp::UsageError when --kernel-dir has no readable pack.
  [[nodiscard]] std::string contents(const FileRef& file) const;

  /// Decodes, `threads` at a time (0: every core), each pack stream that holds part of
  /// one of `files` (each of the set it is paired with), so that contents() then only
  /// cuts and checks. One task per stream: threads that call contents() in the files'
  /// order wait on one another, since neighbouring files share a stream. A pack or a
  /// stream that fails to decode is left for contents() to report.
  static void prefetch(const std::vector<std::pair<const KernelSet*, const FileRef*>>& files, std::size_t threads);

  /// Decodes the whole pack and checks it against the manifest's sha256 (contents()
  /// checks only the files it returns). Throws as contents() does, and lp::Error
  /// when the sha256 differs.
  void verify_pack() const;

  /// Variants whose fields match every term (keys: id, op, role, status, entry, or an
  /// axis). Throws lp::UsageError for a key no variant has, listing the keys there are.
  [[nodiscard]] std::vector<const Variant*> filter(const std::vector<FilterTerm>& terms) const;

  /// The ok variant of role `kernel` (or `negative_control`, which is a kernel too) whose
  /// op and axes equal every entry of `wanted` ({"op": ..., "block_n": ..., ...}).
  [[nodiscard]] Lookup lookup(const AxisValues& wanted) const;

  /// The variant of a role (positive_control, test_trap, ...); nullptr when absent.
  [[nodiscard]] const Variant* with_role(const std::string& role) const;

 private:
  /// One xz stream of the pack, decoded on first use.
  struct PackStream {
    XzStreamSpan span;
    std::mutex mutex;
    bool loaded = false;  ///< guarded by mutex; bytes never change once it is set
    std::string bytes;
  };
  /// The pack's streams, indexed by the first contents() call. Held by pointer because
  /// a mutex cannot move and KernelSet is returned by value. (Not std::call_once:
  /// libstdc++'s can hang when the callable throws on some targets, and a bad pack throws.)
  struct LazyPack {
    std::mutex mutex;
    bool indexed = false;  ///< guarded by mutex; what follows never changes once it is set
    std::string read;          ///< --kernel-dir: the .xz file
    std::string_view stored;   ///< the .xz bytes (`read`, or embedded)
    std::vector<std::unique_ptr<PackStream>> streams;  ///< in pack order
  };
  /// lookup()'s exact matches, per set of wanted keys: the values' JSON -> the first
  /// kernel variant (in manifest order) that has them. Built once per key set.
  struct LookupIndex {
    std::mutex mutex;
    std::map<std::string, std::map<std::string, const Variant*>> by_keys;
  };

  KernelSet(Manifest manifest, std::string origin, std::optional<std::string> dir, std::string embedded_prefix)
      : m_manifest(std::move(manifest)),
        m_origin(std::move(origin)),
        m_dir(std::move(dir)),
        m_embedded_prefix(std::move(embedded_prefix)),
        m_pack(std::make_unique<LazyPack>()),
        m_index(std::make_unique<LookupIndex>()) {}

  /// lookup()'s exact match from m_index (built for this key set on its first use):
  /// the first kernel variant in manifest order with every wanted value, or nullptr.
  [[nodiscard]] const Variant* indexed_match(const AxisValues& wanted) const;
  /// The pack with its streams indexed (read and indexed on the first call); throws as
  /// contents() documents.
  [[nodiscard]] const LazyPack& indexed_pack() const;
  /// The decoded bytes of stream `k` of the indexed pack.
  [[nodiscard]] const std::string& stream_bytes(const LazyPack& pack, std::size_t k) const;
  /// The streams [first, last) of the indexed pack that hold a byte of `file`.
  [[nodiscard]] static std::pair<std::size_t, std::size_t> streams_of(const LazyPack& pack, const FileRef& file);

  Manifest m_manifest;
  std::string m_origin;
  std::optional<std::string> m_dir;  ///< nullopt: embedded
  std::string m_embedded_prefix;     ///< embedded: "sets/triton-<version>/", where its pack is
  std::unique_ptr<LazyPack> m_pack;
  std::unique_ptr<LookupIndex> m_index;
};

/// A variant field by name for filters: id, op, role, status, entry, or axes[key]
/// (null when absent).
AxisValue variant_field(const Variant& v, std::string_view key);

}  // namespace lp::kernels
