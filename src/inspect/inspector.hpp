#pragma once
// The static inspection that `loraprobe inspect` and the sweep share: cubins
// (given as bytes, or as PTX plus the ptxas that compiles it) in, one SASS
// report per item out, several nvdisasm and ptxas processes at a time.
//
//   lp::inspect::InspectorOptions options;
//   options.nvdisasm = lp::sass::find_nvdisasm();
//   options.cache_root = lp::inspect::default_cache_root();
//   const lp::inspect::Inspector inspector(std::move(options));
//   std::vector<InspectItem> items;
//   items.push_back({v.id, v.id, "prebuilt", set.contents(*v.cubin), std::nullopt});
//   for (const InspectResult& r : inspector.inspect_all(items)) {
//     if (r.status == StaticOutcome::hazard) { ... }   // a sweep case that passed: LATENT
//   }
//
// Every distinct input is worked on once per Inspector: the same cubin bytes, or
// the same PTX under the same ptxas binary (compared by sha256, whatever the
// label), give one compile and one nvdisasm run however many items and threads
// ask for them. With a cache root, reports and compile records persist between
// processes (cache.hpp).

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/ptxas.hpp"
#include "compile/toolchain.hpp"
#include "inspect/cache.hpp"
#include "inspect/shipped.hpp"
#include "ptx/ptx_check.hpp"
#include "sass/analyze.hpp"
#include "sass/nvdisasm.hpp"
#include "util/json_text.hpp"

namespace lp::inspect {

/// PTX to be compiled before it is inspected.
struct PtxInput {
  /// The PTX text; shared, since one PTX is usually compiled by several ptxas.
  std::shared_ptr<const std::string> ptx;
  compile::PtxasInfo ptxas;  ///< the binary; its sha256 identifies it
  /// ptxas options: the kernel set's (its Triton's); Triton 3.6's for a user's file.
  std::vector<std::string> options = compile::triton_ptxas_options();
};

/// One thing to inspect.
struct InspectItem {
  std::string name;                    ///< variant id, or the path of a user's file
  std::optional<std::string> variant;  ///< kernel-set variant id, when it is one
  std::string compiler;                ///< "prebuilt", "ptxas=<spec>", "driver", "file"
  std::string cubin;                   ///< ELF bytes; leave empty when `ptx` is set
  std::optional<PtxInput> ptx;         ///< compile this instead of taking `cubin`
  /// The PTX `cubin` was built from, when known (a kernel-set variant's, or the
  /// .ptx beside a user's .cubin): the PTX check runs on it. Items given as `ptx`
  /// need none: that PTX is checked.
  std::shared_ptr<const std::string> source_ptx;
  std::string triton;  ///< the Triton version of the variant's kernel set; empty for a user's file
  /// The gdc-early-read contract: parameter ordinal -> name of the parameters the
  /// previous grid writes (a kernel-set variant's manifest `produced`, or --produced).
  /// Empty: that check has nothing to look for.
  std::map<int, std::string> produced;
  /// Why gdc-early-read cannot run on this item although its PTX waits (no contract,
  /// no parameter names: inspect/produced.hpp); empty otherwise.
  std::string produced_not_checked;
  /// The wgmma pairs the PTX was amplified with (inspect --config with --amplify: the
  /// image a sweep loads); 0 for the variant as built.
  int amplify = 0;
  /// The file `source_ptx` was read from (the .ptx beside a user's cubin), which the
  /// PTX check's messages name; empty: `name`.
  std::string source_ptx_name{};
};

/// What the static analysis of one item found (a case's outcome is its verdict,
/// report/verdict.hpp; a worker's run is a protocol::RunOutcome).
enum class StaticOutcome {
  clean,   ///< analysed, no finding
  hazard,  ///< analysed, at least one finding
  error,   ///< not analysed: ptxas or nvdisasm failed, or the input is no cubin
  /// Not analysed: the compiler cannot read the PTX's ISA version (Triton 3.9's 9.4 under
  /// ptxas 13.0), a pairing no stack has; error holds the reason. Not a failure.
  incompatible,
};

/// "clean", "hazard", "error", "incompatible".
std::string_view to_string(StaticOutcome status) noexcept;

/// What an incompatible item's error adds to the compiler's reason.
inline constexpr std::string_view k_incompatible_note = " (a pairing that cannot compile, not a failure)";

/// How a PTX input was compiled.
struct CompileRecord {
  compile::PtxasInfo ptxas;             ///< the binary, under this item's spec ("toolkit", "13.0")
  std::optional<CompiledPtx> compiled;  ///< what it made; nullopt when it failed
  std::string error;                    ///< why it failed; empty when it did not
  bool cached = false;                  ///< taken from the cache's ptxas/ entry, ptxas not run
};

/// The PTX check of one PTX text (ptx/ptx_check.hpp).
struct PtxCheck {
  std::optional<ptx::PtxReport> report;  ///< nullopt when the PTX could not be read
  std::string error;                     ///< why not; empty otherwise
};

/// The result for one item, in the order of the items given.
struct InspectResult {
  std::string name;
  std::optional<std::string> variant;
  std::string triton;  ///< the item's Triton set; empty for a user's file
  std::string compiler;
  /// hazard when either count below is above 0.
  StaticOutcome status = StaticOutcome::error;
  std::size_t finding_count = 0;     ///< wgmma hazard findings in the SASS
  std::size_t early_read_count = 0;  ///< gdc-early-read findings in the SASS
  /// The SASS analysis; null for an error, or when nvdisasm did not run (`skipped`).
  std::shared_ptr<const sass::CubinReport> sass;
  /// For PTX inputs, how it was compiled; nullopt for items given as cubins.
  std::optional<CompileRecord> compile;
  /// The PTX check of the item's PTX; null when no PTX is known.
  std::shared_ptr<const PtxCheck> ptx;
  /// Who made the hazard: "ptx", "ptxas" or "none" (ptx::attribution); empty when
  /// the SASS or the PTX could not be analysed.
  std::string attribution;
  /// Who made the early reads, by the same rule from the PTX's and the SASS's
  /// gdc-early-read counts; empty as `attribution`.
  std::string early_read_attribution;
  std::string early_read_not_checked;  ///< InspectItem::produced_not_checked
  std::string error;  ///< why, for status error; empty otherwise
  std::string skipped;  ///< why nvdisasm did not run (no wgmma.mma_async in the PTX); `sass` is then null
  bool cached = false;  ///< `sass` was read from the disk cache, not computed
  double ms = 0.0;      ///< wall time spent on this input (0 for a repeat)
  int amplify = 0;      ///< InspectItem::amplify

  /// {name, variant, triton, compiler, status, finding_count, early_read_count, cached,
  /// error, compile, sass, ptx, attribution, early_read_attribution, early_read_not_checked}:
  /// the `items` entries of configs/schema/inspect.schema.json.
  /// `amplify` only when above 0 (since 3.6.0).
  [[nodiscard]] nlohmann::json to_json() const;
};

/// How far inspect_all is (serialised: never two calls at once): `stage` is "prepared"
/// (looked up in the cache or compiled, per distinct input), "disassembled" (once,
/// when the batched nvdisasm runs are done) or "inspected" (per item).
using ProgressFunction = std::function<void(std::string_view stage, std::size_t done, std::size_t total)>;

/// How an Inspector works.
struct InspectorOptions {
  sass::Nvdisasm nvdisasm;          ///< from sass::find_nvdisasm
  sass::AnalysisOptions analysis;   ///< checks to run (empty: all)
  unsigned jobs = 0;                ///< items worked on at once; 0: hardware concurrency
  std::optional<std::string> cache_root;  ///< nullopt: no disk cache (--no-cache)
  ProgressFunction progress;        ///< optional
  /// Skip nvdisasm for a cubin whose PTX is known and has neither wgmma.mma_async nor
  /// griddepcontrol.wait: it cannot have any finding (the result is clean, with
  /// `skipped` saying why). Sound, and
  /// checked over every embedded set by tests/inspect (--no-skip runs them in full).
  bool skip_without_wgmma = true;
  /// The cache is not trusted with what a PTX compiles to: ptxas runs again and the
  /// report is looked up by the cubin it really made. false (inspect --trust-cache)
  /// takes the ptxas/ record's word and saves those compiles.
  bool verify_compile_hits = true;
  /// Re-check the first this many entries the cache has (inspect --verify-cache) and
  /// count every one that differs from the fresh result (which is used): a report by
  /// running nvdisasm again, and a trusted compile record (a shipped one, or the disk
  /// cache's under --trust-cache) by running its ptxas again.
  std::size_t verify_sample = 0;
  /// Results shipped with the binary (shipped.hpp: ShippedResults::embedded()), looked up
  /// before the disk cache and trusted with compiles; null: none (--no-cache,
  /// --no-shipped-results).
  std::shared_ptr<const ShippedResults> shipped{};
};

/// Counts of the disk cache's use since construction.
struct CacheStats {
  std::size_t sass_hits = 0;
  std::size_t sass_misses = 0;
  std::size_t compile_hits = 0;
  std::size_t compile_misses = 0;
  std::size_t shipped_sass_hits = 0;     ///< of sass_hits, those the shipped results served
  std::size_t shipped_compile_hits = 0;  ///< of compile_hits, those the shipped results served
  std::size_t write_errors = 0;
  std::string first_write_error;  ///< the first reason a store failed, for the user
  std::size_t rejected = 0;       ///< entries there but not whole (cache.hpp): misses, rewritten
  std::size_t verified = 0;       ///< cache entries re-checked (verify_sample): reports, trusted compiles
  std::size_t differences = 0;    ///< of which the fresh analysis contradicts
  std::string first_difference;   ///< the first of those, for the user
  std::size_t shipped_differences = 0;  ///< of differences, those of a shipped entry (not the disk cache's fault)
  /// {enabled, root, sass_hits, sass_misses, compile_hits, compile_misses, shipped_sass_hits, shipped_compile_hits,
  /// write_errors, rejected, verified, differences, shipped_differences}.
  [[nodiscard]] nlohmann::json to_json(const std::optional<std::string>& root) const;
  [[nodiscard]] JsonText to_json_text(const std::optional<std::string>& root) const;  ///< as a report carries it
};

/// Inspects cubins. Thread-safe: inspect() and inspect_all() may be called from
/// several threads at once.
class Inspector {
 public:
  /// Throws lp::UsageError for an unknown check id in `options.analysis`.
  explicit Inspector(InspectorOptions options);
  ~Inspector();
  Inspector(const Inspector&) = delete;
  Inspector& operator=(const Inspector&) = delete;

  /// Inspects one item in the calling thread (waiting for another thread that is
  /// already working on the same input). Failures of ptxas, nvdisasm or the
  /// input give status error; lp::Fatal errors propagate.
  [[nodiscard]] InspectResult inspect(const InspectItem& item) const;

  /// Inspects every item with options().jobs threads and returns the results in
  /// the items' order. The first lp::Fatal (or unexpected exception) a worker
  /// meets stops the others from starting new items and is rethrown here, except
  /// lp::Interrupted (Ctrl-C, SIGTERM): then the results are returned, the items not
  /// done marked "not inspected: interrupted by ...", and interrupted_by() says so.
  [[nodiscard]] std::vector<InspectResult> inspect_all(const std::vector<InspectItem>& items) const;

  /// The signal that stopped the last inspect_all early, or 0.
  [[nodiscard]] int interrupted_by() const noexcept { return m_interrupted_by.load(); }

  /// The options given (jobs resolved to a number).
  [[nodiscard]] const InspectorOptions& options() const noexcept { return m_options; }
  /// sha256 of the analysis version, check table and selected checks (cache.hpp).
  [[nodiscard]] const std::string& fingerprint() const noexcept { return m_fingerprint; }
  /// The check ids that run.
  [[nodiscard]] std::vector<std::string> check_ids() const;
  /// The disk cache's use so far.
  [[nodiscard]] CacheStats cache_stats() const;

 private:
  struct Outcome;
  struct Memo;
  struct Pending;

  /// The memo key of `item` ("cubin:<sha256>" or "ptx:<sha256>:<ptxas sha256>", then
  /// "|<produced>" when it has produced parameters); sets `input_sha256`.
  static std::string memo_key(const InspectItem& item, std::string& input_sha256);
  /// inspect_all's first phase for one input: everything before nvdisasm.
  [[nodiscard]] Pending prepare(const InspectItem& item, const std::string& input_sha256) const;
  /// prepare's cached compile of a PTX (the record under `key`) when the disk cache also
  /// has its cubin's report; nullopt otherwise, with `recheck_cubin` set when the hit
  /// is one --verify-cache re-checks by running ptxas again.
  [[nodiscard]] std::optional<Outcome> compiled_before(const InspectItem& item, const std::string& key, bool& recheck_shipped,
                                                       std::optional<std::string>& recheck_cubin) const;
  /// Runs the item's ptxas on its PTX into `out`; the outcome when it could not
  /// (incompatible, or an error), nullopt when it compiled.
  [[nodiscard]] std::optional<Outcome> run_ptxas(const InspectItem& item, compile::PtxasOutput& out) const;
  /// inspect_all's second phase: the prepared inputs left (`todo`'s, by index into
  /// `pending`) disassembled and analysed, many to an nvdisasm run, and each outcome
  /// memoised under its item's key.
  void analyse_prepared(std::vector<Pending>& pending, const std::vector<std::size_t>& todo,
                        const std::vector<std::string>& keys, const ProgressFunction& progress) const;
  /// The disk cache's report of a cubin, if it has a whole one.
  [[nodiscard]] std::optional<Outcome> cached_report(const std::string& cubin_sha256,
                                                     const std::map<int, std::string>& produced) const;
  /// The analysis fingerprint of a report with these produced parameters (the cache key's).
  [[nodiscard]] std::string fingerprint_for(const std::map<int, std::string>& produced) const;
  /// Counts a hit that is used (a report, or a compile record), and whether it was shipped.
  void count_hit(const Outcome& hit, bool compile) const;
  /// One of the verify_sample re-analyses, if any is left (never more than asked, whatever the threads).
  [[nodiscard]] bool take_verification() const;
  /// Compares the cubin ptxas made with the one a trusted compile record names (verify_sample).
  void compare_compile_with_cache(const InspectItem& item, bool shipped, const std::string& cached_cubin,
                                  const std::string& fresh_cubin) const;
  /// Counts a re-checked entry that a fresh result contradicts (a shipped one apart) and
  /// keeps the first one's description, `describe` given who said otherwise.
  void note_difference(bool shipped, const std::function<std::string(std::string_view says)>& describe) const;
  /// Compares a fresh report with the cached one it re-checks (verify_sample).
  void compare_with_cache(const Pending& pending, const sass::CubinReport& fresh) const;
  /// The outcome of a pending input from its analysis (stored in the disk cache).
  [[nodiscard]] Outcome finish(const Pending& pending, const sass::CubinOutcome& analysed) const;
  /// An item's result from its input's outcome; `first` carries the input's time.
  [[nodiscard]] InspectResult result_of(const InspectItem& item, const Outcome& outcome, bool first) const;
  /// fn(0..count-1) on options().jobs threads; an interrupt stops taking work (interrupted_by),
  /// any other exception is rethrown once all threads stopped.
  template <class Fn>
  void run_pool(std::size_t count, Fn&& fn) const;
  /// The PTX check of `ptx`, once per distinct text.
  [[nodiscard]] std::shared_ptr<const PtxCheck> check_ptx(const std::string& ptx, const std::string& name,
                                         const std::map<int, std::string>& produced) const;
  void note_write(const std::optional<std::string>& failure) const;

  mutable std::atomic<int> m_interrupted_by{0};  ///< the signal that stopped inspect_all, or 0

  InspectorOptions m_options;
  std::string m_fingerprint;
  std::optional<ResultCache> m_cache;
  std::unique_ptr<Memo> m_memo;
  mutable std::atomic<std::size_t> m_sass_hits{0};
  mutable std::atomic<std::size_t> m_sass_misses{0};
  mutable std::atomic<std::size_t> m_compile_hits{0};
  mutable std::atomic<std::size_t> m_compile_misses{0};
  mutable std::atomic<std::size_t> m_shipped_sass_hits{0};
  mutable std::atomic<std::size_t> m_shipped_compile_hits{0};
  mutable std::atomic<std::size_t> m_write_errors{0};
  mutable std::atomic<std::size_t> m_rejected{0};
  mutable std::atomic<std::size_t> m_verify_left{0};
  mutable std::atomic<std::size_t> m_verified{0};
  mutable std::atomic<std::size_t> m_differences{0};
  mutable std::atomic<std::size_t> m_shipped_differences{0};
  mutable std::string m_first_difference;  ///< under m_write_error_mutex
  mutable std::mutex m_write_error_mutex;
  mutable std::string m_first_write_error;
};

}  // namespace lp::inspect
