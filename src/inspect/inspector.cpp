#include "inspect/inspector.hpp"

#include "util/interrupt.hpp"
#include "util/parallel.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "compile/ptxas.hpp"
#include "ptx/ptx_check.hpp"
#include "sass/checks.hpp"
#include "util/error.hpp"
#include "util/elapsed.hpp"
#include "util/sha256.hpp"

namespace lp::inspect {

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

/// What one distinct input gave; shared by every item that names it.
struct Inspector::Outcome {
  StaticOutcome status = StaticOutcome::error;
  std::size_t finding_count = 0;
  std::size_t early_read_count = 0;
  std::shared_ptr<const sass::CubinReport> sass;
  std::optional<CompileRecord> compile;  ///< PTX inputs; its ptxas is set per item (result_of)
  std::string error;
  std::string skipped;  ///< why nvdisasm did not run (the PTX has no wgmma); empty when it did
  bool cached = false;
  bool shipped = false;  ///< the hit came from the results shipped with the binary
  double ms = 0.0;

  /// Clean without nvdisasm, for the reason `why` (skip_reason).
  static Outcome skipped_because(std::string why) {
    Outcome o;
    o.status = StaticOutcome::clean;
    o.skipped = std::move(why);
    return o;
  }
};

namespace {

/// Why a cubin built from `ptx` needs no SASS analysis, or "": the wgmma findings are
/// about a wgmma.mma_async (its A registers, its accumulator), and ptxas makes no HGMMA
/// from a PTX that has none; gdc-early-read looks only at kernels that wait, and ptxas
/// makes no ACQBULK from a PTX without griddepcontrol.wait. A text that only mentions
/// either in a comment is analysed (the safe side).
std::string skip_reason(const std::shared_ptr<const std::string>& ptx, bool enabled) {
  if (!enabled || !ptx || ptx->find("wgmma.mma_async") != std::string::npos ||
      ptx->find("griddepcontrol.wait") != std::string::npos) {
    return {};
  }
  return "the PTX has no wgmma.mma_async and no griddepcontrol.wait, so the SASS has nothing any check looks at";
}

/// The produced parameters as text, for keys: "0=input_ptr,3=x".
std::string produced_text(const std::map<int, std::string>& produced) {
  std::vector<std::string> pairs;
  for (const auto& [ordinal, name] : produced) {
    pairs.push_back(fmt::format("{}={}", ordinal, name));
  }
  return fmt::format("{}", fmt::join(pairs, ","));
}

StaticOutcome outcome_of(std::size_t findings, std::size_t early_reads) {
  return findings + early_reads > 0 ? StaticOutcome::hazard : StaticOutcome::clean;
}

}  // namespace

/// What inspect_all has worked out, by input (the same bytes, or the same PTX under
/// the same ptxas binary), across calls.
struct Inspector::Memo {
  std::mutex mutex;
  std::map<std::string, Outcome> outcomes;
  std::map<std::string, std::shared_ptr<const PtxCheck>> ptx_reports;  ///< by sha256 of the PTX
};

/// One input between inspect_all's phases: done without nvdisasm (a cache hit, a
/// skip, a compile error), or a cubin waiting to be disassembled with the others.
struct Inspector::Pending {
  std::optional<Outcome> outcome;
  std::string compiled;                    ///< the cubin ptxas made (PTX inputs)
  const std::string* given = nullptr;      ///< else the item's own bytes
  std::string cubin_sha256;
  std::string name;
  std::map<int, std::string> produced;  ///< the item's (InspectItem::produced)
  std::optional<CompileRecord> compile;  ///< the compile record (PTX inputs)
  /// A cached report this analysis re-checks (verify_sample), else null.
  std::shared_ptr<const sass::CubinReport> recheck;
  bool recheck_shipped = false;  ///< that report came from the shipped results
  double ms = 0.0;             ///< time spent before disassembling
  /// The cubin to disassemble.
  [[nodiscard]] std::string_view cubin() const { return given != nullptr ? std::string_view(*given) : compiled; }
};

std::string_view to_string(StaticOutcome status) noexcept {
  switch (status) {
    case StaticOutcome::clean:
      return "clean";
    case StaticOutcome::hazard:
      return "hazard";
    case StaticOutcome::error:
      return "error";
    case StaticOutcome::incompatible:
      return "incompatible";
  }
  return "error";
}

Inspector::Inspector(InspectorOptions options)
    : m_options(std::move(options)),
      m_fingerprint(analysis_fingerprint(m_options.analysis)),
      m_memo(std::make_unique<Memo>()) {
  if (m_options.jobs == 0) {
    m_options.jobs = static_cast<unsigned>(hardware_threads());
  }
  if (m_options.cache_root) {
    m_cache.emplace(*m_options.cache_root);
  }
  m_verify_left = m_options.verify_sample;
}

Inspector::~Inspector() = default;

std::vector<std::string> Inspector::check_ids() const {
  if (!m_options.analysis.checks.empty()) {
    return m_options.analysis.checks;
  }
  std::vector<std::string> ids;
  for (const sass::Check& check : sass::all_checks()) {
    ids.emplace_back(check.id);
  }
  return ids;
}

CacheStats Inspector::cache_stats() const {
  CacheStats stats;
  stats.sass_hits = m_sass_hits;
  stats.sass_misses = m_sass_misses;
  stats.compile_hits = m_compile_hits;
  stats.compile_misses = m_compile_misses;
  stats.shipped_sass_hits = m_shipped_sass_hits;
  stats.shipped_compile_hits = m_shipped_compile_hits;
  stats.write_errors = m_write_errors;
  stats.rejected = m_rejected;
  stats.verified = m_verified;
  stats.differences = m_differences;
  stats.shipped_differences = m_shipped_differences;
  std::lock_guard lock(m_write_error_mutex);
  stats.first_write_error = m_first_write_error;
  stats.first_difference = m_first_difference;
  return stats;
}

void Inspector::note_write(const std::optional<std::string>& failure) const {
  if (!failure) {
    return;
  }
  ++m_write_errors;
  std::lock_guard lock(m_write_error_mutex);
  if (m_first_write_error.empty()) {
    m_first_write_error = *failure;
  }
}

std::string Inspector::fingerprint_for(const std::map<int, std::string>& produced) const {
  return produced.empty() ? m_fingerprint : sha256_hex(m_fingerprint + "\nproduced " + produced_text(produced));
}

std::optional<Inspector::Outcome> Inspector::cached_report(const std::string& cubin_sha256,
                                                           const std::map<int, std::string>& produced) const {
  if (!m_cache && !m_options.shipped) {
    return std::nullopt;
  }
  const std::string key = sass_cache_key(cubin_sha256, m_options.nvdisasm.sha256, fingerprint_for(produced));
  Outcome outcome;
  LoadedEntry<sass::CubinReport> hit;
  if (m_options.shipped) {
    hit = m_options.shipped->load_report(key, cubin_sha256);
    outcome.shipped = hit.payload.has_value();
  }
  if (!hit.payload && m_cache) {
    hit = m_cache->load_report(key, cubin_sha256);
    if (hit.rejected) {
      ++m_rejected;  // a miss: the fresh report overwrites it
    }
  }
  if (!hit.payload) {
    return std::nullopt;
  }
  if (outcome.shipped) {
    hit.payload->disassembler = m_options.nvdisasm;  // the same binary (the key has its sha256), found here
  }
  outcome.finding_count = hit.payload->finding_count();
  outcome.early_read_count = hit.payload->early_read_count();
  outcome.status = outcome_of(outcome.finding_count, outcome.early_read_count);
  outcome.sass = std::make_shared<const sass::CubinReport>(std::move(*hit.payload));
  outcome.cached = true;
  return outcome;
}

void Inspector::count_hit(const Outcome& hit, bool compile) const {
  ++(compile ? m_compile_hits : m_sass_hits);
  if (hit.shipped) {
    ++(compile ? m_shipped_compile_hits : m_shipped_sass_hits);
  }
}

bool Inspector::take_verification() const {
  std::size_t left = m_verify_left.load();
  while (left > 0 && !m_verify_left.compare_exchange_weak(left, left - 1)) {
  }
  return left > 0;
}

void Inspector::compare_with_cache(const Pending& pending, const sass::CubinReport& fresh) const {
  ++m_verified;
  if (sass::same_findings(fresh, *pending.recheck)) {
    return;
  }
  note_difference(pending.recheck_shipped, [&](std::string_view says) {
    return fmt::format("{} (cubin sha256 {}): {} {} finding(s) and {} early read(s), a fresh analysis {} and {}",
                       pending.name, pending.cubin_sha256.substr(0, 12), says, pending.recheck->finding_count(),
                       pending.recheck->early_read_count(), fresh.finding_count(), fresh.early_read_count());
  });
}

void Inspector::compare_compile_with_cache(const InspectItem& item, bool shipped, const std::string& cached_cubin,
                                           const std::string& fresh_cubin) const {
  ++m_verified;
  if (cached_cubin == fresh_cubin) {
    return;
  }
  note_difference(shipped, [&](std::string_view says) {
    return fmt::format("{} ({}): {} its PTX compiles to cubin sha256 {}, ptxas made {}", item.name, item.compiler,
                       says, cached_cubin.substr(0, 12), fresh_cubin.substr(0, 12));
  });
}

void Inspector::note_difference(bool shipped, const std::function<std::string(std::string_view says)>& describe) const {
  ++m_differences;
  if (shipped) {
    ++m_shipped_differences;
  }
  std::lock_guard lock(m_write_error_mutex);
  if (m_first_difference.empty()) {
    m_first_difference = describe(shipped ? "the shipped results say" : "the cache says");
  }
}

Inspector::Outcome Inspector::finish(const Pending& pending, const sass::CubinOutcome& analysed) const {
  Outcome outcome;
  if (!analysed.report) {
    // Not cached: nvdisasm timing out under load says nothing about the next run.
    outcome.error = analysed.error;
  } else {
    // What the cache stores is what the caller gets (a hit reads back through
    // cubin_report_from_json, which refuses anything to_json would not write again),
    // so a later hit is indistinguishable from this run.
    if (pending.recheck) {
      compare_with_cache(pending, *analysed.report);
    }
    if (m_cache) {
      const std::string key =
          sass_cache_key(pending.cubin_sha256, m_options.nvdisasm.sha256, fingerprint_for(pending.produced));
      note_write(m_cache->store_report(key, *analysed.report));
    }
    outcome.sass = std::make_shared<const sass::CubinReport>(*analysed.report);
    outcome.finding_count = analysed.report->finding_count();
    outcome.early_read_count = analysed.report->early_read_count();
    outcome.status = outcome_of(outcome.finding_count, outcome.early_read_count);
    outcome.ms = analysed.report->disassemble_ms + analysed.report->analysis_ms;
  }
  outcome.compile = pending.compile;
  outcome.ms += pending.ms;
  return outcome;
}

std::optional<Inspector::Outcome> Inspector::compiled_before(const InspectItem& item, const std::string& key,
                                                             bool& recheck_shipped,
                                                             std::optional<std::string>& recheck_cubin) const {
  // A shipped record is trusted as the binary is; the disk cache's only under --trust-cache.
  LoadedEntry<CompiledPtx> record;
  bool shipped = false;
  if (m_options.shipped) {
    record = m_options.shipped->load_compile(key);
    shipped = record.payload.has_value();
  }
  if (!record.payload && m_cache && !m_options.verify_compile_hits) {
    record = m_cache->load_compile(key);
    if (record.rejected) {
      ++m_rejected;
    }
  }
  if (!record.payload) {
    return std::nullopt;
  }
  // The compile is known; a skip (decided by the PTX alone) or a cached report of its
  // cubin saves running ptxas again.
  std::optional<Outcome> hit;
  if (std::string why = skip_reason(item.ptx->ptx, m_options.skip_without_wgmma); !why.empty()) {
    hit = Outcome::skipped_because(std::move(why));
  } else {
    hit = cached_report(record.payload->cubin_sha256, item.produced);
  }
  if (hit && take_verification()) {
    recheck_cubin = record.payload->cubin_sha256;
    recheck_shipped = shipped;
    return std::nullopt;
  }
  if (hit) {
    if (hit->sass) {
      count_hit(*hit, false);
    }
    hit->shipped = shipped;
    count_hit(*hit, true);
    hit->cached = true;
    hit->compile = CompileRecord{{}, std::move(*record.payload), {}, true};
  }
  return hit;
}

std::optional<Inspector::Outcome> Inspector::run_ptxas(const InspectItem& item, compile::PtxasOutput& out) const {
  try {
    out = compile::compile_with_ptxas(item.ptx->ptxas, *item.ptx->ptx, item.name, item.ptx->options);
    return std::nullopt;
  } catch (const compile::IncompatiblePtx& e) {
    Outcome outcome;
    outcome.status = StaticOutcome::incompatible;
    outcome.error = e.reason() + std::string(k_incompatible_note);
    outcome.compile = CompileRecord{{}, std::nullopt, e.what(), false};
    return outcome;
  } catch (const lp::Error& e) {
    Outcome outcome;
    outcome.error = e.what();
    outcome.compile = CompileRecord{{}, std::nullopt, e.what(), false};
    return outcome;
  }
}

Inspector::Pending Inspector::prepare(const InspectItem& item, const std::string& input_sha256) const {
  const auto start = Clock::now();
  Pending p;
  p.name = item.name;
  p.produced = item.produced;
  auto done = [&](Outcome outcome) {
    outcome.ms = ms_since(start);
    p.outcome = std::move(outcome);
    return std::move(p);
  };
  auto to_disassemble = [&](const std::string* given, const std::string& cubin_sha256) {
    std::optional<Outcome> hit = cached_report(cubin_sha256, item.produced);
    if (hit && take_verification()) {
      // --verify-cache: analysed again, and compared with what the cache said.
      p.recheck = std::move(hit->sass);
      p.recheck_shipped = hit->shipped;
      hit.reset();
    }
    if (hit) {
      count_hit(*hit, false);
      hit->compile = p.compile;
      return done(std::move(*hit));
    }
    if (m_cache) {
      ++m_sass_misses;
    }
    p.given = given;
    p.cubin_sha256 = cubin_sha256;
    p.ms = ms_since(start);
    return std::move(p);
  };
  if (!item.ptx) {
    // Only a kernel-set variant's PTX is known to be its cubin's source (the manifest
    // pairs them). A user's cubin is always disassembled: the .ptx beside it may be
    // empty, junk or another kernel's, and skipping on it turned a hazard clean.
    const bool source_known = item.variant.has_value();
    if (std::string why = skip_reason(item.source_ptx, m_options.skip_without_wgmma && source_known); !why.empty()) {
      return done(Outcome::skipped_because(std::move(why)));
    }
    return to_disassemble(&item.cubin, input_sha256);
  }
  const std::string key = compile_cache_key(input_sha256, item.ptx->ptxas.sha256, item.ptx->options);
  // --trust-cache with --verify-cache: a trusted compile record this run re-checks by
  // running its ptxas again (a forged record can map a hazardous PTX to a clean cubin).
  std::optional<std::string> recheck_cubin;
  bool recheck_shipped = false;
  if (std::optional<Outcome> hit = compiled_before(item, key, recheck_shipped, recheck_cubin)) {
    return done(std::move(*hit));
  }
  if (m_cache) {
    ++m_compile_misses;  // ptxas runs (verify_compile_hits: always)
  }
  compile::PtxasOutput out;
  if (std::optional<Outcome> failed = run_ptxas(item, out)) {
    return done(std::move(*failed));
  }
  const std::string cubin_sha256 = sha256_hex(out.cubin);
  if (recheck_cubin) {
    compare_compile_with_cache(item, recheck_shipped, *recheck_cubin, cubin_sha256);
  }
  CompiledPtx compiled{cubin_sha256, out.cubin.size(), out.ms, out.log};
  if (m_cache) {
    note_write(m_cache->store_compile(key, compiled));
  }
  p.compile = CompileRecord{{}, std::move(compiled), {}, false};
  // Compiled all the same: a PTX that this ptxas refuses is an error row, skipped or not.
  if (std::string why = skip_reason(item.ptx->ptx, m_options.skip_without_wgmma); !why.empty()) {
    Outcome outcome = Outcome::skipped_because(std::move(why));
    outcome.compile = p.compile;
    return done(std::move(outcome));
  }
  p.compiled = std::move(out.cubin);
  p.name = item.name + " (" + item.compiler + ")";
  return to_disassemble(nullptr, cubin_sha256);
}

InspectResult Inspector::inspect(const InspectItem& item) const { return inspect_all({item}).front(); }

std::string Inspector::memo_key(const InspectItem& item, std::string& input_sha256) {
  input_sha256 = item.ptx ? sha256_hex(*item.ptx->ptx) : sha256_hex(item.cubin);
  std::string key = item.ptx ? "ptx:" + input_sha256 + ":" + item.ptx->ptxas.sha256 : "cubin:" + input_sha256;
  if (!item.produced.empty()) {
    key += "|" + produced_text(item.produced);
  }
  return key;
}

InspectResult Inspector::result_of(const InspectItem& item, const Outcome& outcome, bool first) const {
  InspectResult result;
  result.name = item.name;
  result.variant = item.variant;
  result.triton = item.triton;
  result.compiler = item.compiler;
  result.status = outcome.status;
  result.finding_count = outcome.finding_count;
  result.early_read_count = outcome.early_read_count;
  result.early_read_not_checked = item.produced_not_checked;
  result.amplify = item.amplify;
  result.sass = outcome.sass;
  result.compile = outcome.compile;
  if (item.ptx && result.compile) {
    // The same binary may be known by several specs ("toolkit", "13.0"): name this item's.
    result.compile->ptxas = item.ptx->ptxas;
  }
  result.error = outcome.error;
  result.skipped = outcome.skipped;
  result.cached = outcome.cached;
  const std::shared_ptr<const std::string> ptx = item.ptx ? item.ptx->ptx : item.source_ptx;
  if (ptx) {
    result.ptx = check_ptx(*ptx, item.ptx || item.source_ptx_name.empty() ? item.name : item.source_ptx_name,
                           item.produced);
    if (result.status != StaticOutcome::error && result.status != StaticOutcome::incompatible &&
        result.ptx->report) {
      result.attribution = ptx::attribution(result.ptx->report->finding_count(), result.finding_count);
      result.early_read_attribution =
          ptx::attribution(result.ptx->report->early_read_count(), result.early_read_count);
    }
  }
  result.ms = first ? outcome.ms : 0.0;
  return result;
}

std::shared_ptr<const PtxCheck> Inspector::check_ptx(const std::string& ptx, const std::string& name,
                                    const std::map<int, std::string>& produced) const {
  const std::string key = sha256_hex(ptx) + "|" + produced_text(produced);
  {
    std::lock_guard lock(m_memo->mutex);
    if (auto it = m_memo->ptx_reports.find(key); it != m_memo->ptx_reports.end()) {
      return it->second;
    }
  }
  // Milliseconds per kernel: computed where needed rather than cached on disk. Two
  // threads may both compute one PTX; they get the same answer.
  auto report = std::make_shared<PtxCheck>();
  try {
    report->report = ptx::analyze_ptx(ptx, name, produced);
  } catch (const Error& e) {
    report->error = e.what();
  }
  std::lock_guard lock(m_memo->mutex);
  return m_memo->ptx_reports.emplace(key, std::move(report)).first->second;
}

namespace {

/// The result of an item inspect_all did not get to before `signal` stopped it.
InspectResult not_inspected(const InspectItem& item, int signal) {
  InspectResult result;
  result.name = item.name;
  result.variant = item.variant;
  result.triton = item.triton;
  result.compiler = item.compiler;
  result.status = StaticOutcome::error;
  result.error = fmt::format("not inspected: interrupted by {}", signal_name(signal));
  return result;
}

}  // namespace

void Inspector::analyse_prepared(std::vector<Pending>& pending, const std::vector<std::size_t>& todo,
                                 const std::vector<std::string>& keys, const ProgressFunction& progress) const {
  std::vector<sass::BatchInput> batch;
  std::map<std::string, std::size_t> batch_of;  // cubin sha256 -> index in `batch`
  std::vector<std::size_t> batch_index(todo.size(), 0);
  for (std::size_t t = 0; t < todo.size(); ++t) {
    if (!pending[t].outcome && m_interrupted_by == 0 && !pending[t].cubin_sha256.empty()) {
      const auto [it, added] =
          batch_of.emplace(pending[t].cubin_sha256 + "|" + produced_text(pending[t].produced), batch.size());
      if (added) {
        batch.push_back({pending[t].cubin(), pending[t].name, pending[t].produced});
      }
      batch_index[t] = it->second;
    }
  }
  std::vector<sass::CubinOutcome> analysed;
  if (!batch.empty()) {
    try {
      analysed = sass::analyze_cubins(batch, m_options.nvdisasm, m_options.analysis, m_options.jobs);
    } catch (const Interrupted& e) {
      m_interrupted_by = e.signal();
    }
  }
  progress("disassembled", batch.size(), batch.size());
  {
    std::lock_guard lock(m_memo->mutex);
    for (std::size_t t = 0; t < todo.size(); ++t) {
      const std::string& key = keys[todo[t]];
      if (pending[t].outcome) {
        m_memo->outcomes[key] = std::move(*pending[t].outcome);
      } else if (!pending[t].cubin_sha256.empty() && batch_index[t] < analysed.size()) {
        m_memo->outcomes[key] = finish(pending[t], analysed[batch_index[t]]);
      }
    }
  }
}

std::vector<InspectResult> Inspector::inspect_all(const std::vector<InspectItem>& items) const {
  // 1. Each distinct input once: cache lookups, ptxas, the no-wgmma skip (threads).
  std::vector<std::string> keys(items.size());
  std::vector<std::string> input_sha256(items.size());
  std::map<std::string, std::size_t> first_of;  // key -> the first item naming it
  std::vector<std::size_t> todo;                // those not known from earlier calls
  {
    std::lock_guard lock(m_memo->mutex);
    for (std::size_t i = 0; i < items.size(); ++i) {
      keys[i] = memo_key(items[i], input_sha256[i]);
      if (first_of.emplace(keys[i], i).second && m_memo->outcomes.count(keys[i]) == 0) {
        todo.push_back(i);
      }
    }
  }
  std::vector<Pending> pending(todo.size());
  std::atomic<std::size_t> prepared{0};
  std::mutex progress_mutex;
  const ProgressFunction progress = [&](std::string_view stage, std::size_t done, std::size_t total) {
    if (m_options.progress) {
      std::lock_guard lock(progress_mutex);
      m_options.progress(stage, done, total);
    }
  };
  run_pool(todo.size(), [&](std::size_t t) {
    pending[t] = prepare(items[todo[t]], input_sha256[todo[t]]);
    progress("prepared", ++prepared, todo.size());
  });
  // 2. The cubins left, each distinct one disassembled once, many to an nvdisasm run.
  analyse_prepared(pending, todo, keys, progress);
  // 3. One result per item, with the PTX check (threads; the first item of an input carries its time).
  std::vector<InspectResult> results(items.size());
  std::vector<char> have(items.size(), 0);  // written by the threads: not vector<bool>
  std::vector<char> computed_now(items.size(), 0);
  for (const std::size_t i : todo) {
    computed_now[i] = 1;
  }
  std::atomic<std::size_t> finished{0};
  run_pool(items.size(), [&](std::size_t i) {
    std::optional<Outcome> outcome;
    {
      std::lock_guard lock(m_memo->mutex);
      if (auto it = m_memo->outcomes.find(keys[i]); it != m_memo->outcomes.end()) {
        outcome = it->second;
      }
    }
    if (outcome) {
      results[i] = result_of(items[i], *outcome, computed_now[i] != 0);
      have[i] = 1;
    }
    progress("inspected", ++finished, items.size());
  });
  if (m_interrupted_by != 0) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!have[i]) {
        results[i] = not_inspected(items[i], m_interrupted_by);
      }
    }
  }
  return results;
}

template <class Fn>
void Inspector::run_pool(std::size_t count, Fn&& fn) const {
  try {
    parallel_for(count, m_options.jobs, std::forward<Fn>(fn), StopPolicy::first_error);
  } catch (const Interrupted& e) {
    // Ctrl-C: no more work is taken; what finished is kept (and already cached).
    m_interrupted_by = e.signal();
  }
}

}  // namespace lp::inspect
