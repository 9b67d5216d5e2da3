#include "inspect/inspector.hpp"

#include "util/interrupt.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "compile/ptxas.hpp"
#include "ptx/ptx_check.hpp"
#include "sass/checks.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::inspect {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

/// What one distinct input gave; shared by every item that names it.
struct Inspector::Outcome {
  StaticOutcome status = StaticOutcome::error;
  std::size_t finding_count = 0;
  nlohmann::json sass;
  nlohmann::json compile;
  std::string error;
  std::string skipped;  ///< why nvdisasm did not run (the PTX has no wgmma); empty when it did
  bool cached = false;
  double ms = 0.0;
};

namespace {

/// Why a cubin built from `ptx` needs no SASS analysis, or "": both findings are about
/// a wgmma.mma_async (its A registers, its accumulator), and ptxas makes no HGMMA from a
/// PTX that has none. A text that only mentions it in a comment is analysed (the safe side).
std::string skip_reason(const std::shared_ptr<const std::string>& ptx, bool enabled) {
  if (!enabled || !ptx || ptx->find("wgmma.mma_async") != std::string::npos) {
    return {};
  }
  return "the PTX has no wgmma.mma_async, so the SASS has no HGMMA for either finding";
}

}  // namespace

/// Inputs being or already worked on: the first caller computes, later ones wait.
struct Inspector::Memo {
  std::mutex mutex;
  std::map<std::string, std::shared_future<Outcome>> outcomes;
  std::map<std::string, nlohmann::json> ptx_reports;  ///< by sha256 of the PTX
};

std::string_view to_string(StaticOutcome status) noexcept {
  switch (status) {
    case StaticOutcome::clean:
      return "clean";
    case StaticOutcome::hazard:
      return "hazard";
    case StaticOutcome::error:
      return "error";
  }
  return "error";
}

nlohmann::json InspectResult::to_json() const {
  return nlohmann::json{{"name", name},
                        {"variant", variant ? nlohmann::json(*variant) : nlohmann::json(nullptr)},
                        {"triton", triton.empty() ? nlohmann::json(nullptr) : nlohmann::json(triton)},
                        {"compiler", compiler},
                        {"status", to_string(status)},
                        {"finding_count", finding_count},
                        {"cached", cached},
                        {"error", error.empty() ? nlohmann::json(nullptr) : nlohmann::json(error)},
                        {"skipped", skipped.empty() ? nlohmann::json(nullptr) : nlohmann::json(skipped)},
                        {"ms", ms},
                        {"compile", compile},
                        {"sass", sass},
                        {"ptx", ptx},
                        {"attribution", attribution.empty() ? nlohmann::json(nullptr) : nlohmann::json(attribution)}};
}

nlohmann::json CacheStats::to_json(const std::optional<std::string>& root) const {
  return nlohmann::json{{"enabled", root.has_value()},
                        {"root", root ? nlohmann::json(*root) : nlohmann::json(nullptr)},
                        {"sass_hits", sass_hits},
                        {"sass_misses", sass_misses},
                        {"compile_hits", compile_hits},
                        {"compile_misses", compile_misses},
                        {"write_errors", write_errors}};
}

Inspector::Inspector(InspectorOptions options)
    : m_options(std::move(options)),
      m_fingerprint(analysis_fingerprint(m_options.analysis)),
      m_memo(std::make_unique<Memo>()) {
  if (m_options.jobs == 0) {
    m_options.jobs = std::max(1U, std::thread::hardware_concurrency());
  }
  if (m_options.cache_root) {
    m_cache.emplace(*m_options.cache_root);
  }
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
  stats.write_errors = m_write_errors;
  std::lock_guard lock(m_write_error_mutex);
  stats.first_write_error = m_first_write_error;
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

Inspector::Outcome Inspector::analyse(std::string_view cubin, const std::string& cubin_sha256,
                                      const std::string& name) const {
  Outcome outcome;
  const std::string key = sass_cache_key(cubin_sha256, m_options.nvdisasm.sha256, m_fingerprint);
  if (m_cache) {
    if (std::optional<nlohmann::json> hit = m_cache->load("sass", key);
        hit && hit->value("cubin_sha256", std::string()) == cubin_sha256 && hit->contains("finding_count")) {
      ++m_sass_hits;
      outcome.finding_count = hit->at("finding_count").get<std::size_t>();
      outcome.status = outcome.finding_count > 0 ? StaticOutcome::hazard : StaticOutcome::clean;
      outcome.sass = std::move(*hit);
      outcome.cached = true;
      return outcome;
    }
    ++m_sass_misses;
  }
  sass::CubinReport report;
  try {
    report = sass::analyze_cubin(cubin, m_options.nvdisasm, m_options.analysis, name);
  } catch (const lp::Error& e) {
    // Not cached: nvdisasm timing out under load says nothing about the next run.
    outcome.error = e.what();
    return outcome;
  }
  // What the cache stores is what the caller gets, byte for byte once dumped,
  // so a later hit is indistinguishable from this run.
  const std::string text = nlohmann::json(report).dump();
  if (m_cache) {
    note_write(m_cache->store("sass", key, nlohmann::json::parse(text)));
  }
  outcome.sass = nlohmann::json::parse(text);
  outcome.finding_count = report.finding_count();
  outcome.status = outcome.finding_count > 0 ? StaticOutcome::hazard : StaticOutcome::clean;
  return outcome;
}

Inspector::Outcome Inspector::work(const InspectItem& item, const std::string& input_sha256) const {
  if (!item.ptx) {
    if (std::string why = skip_reason(item.source_ptx, m_options.skip_without_wgmma); !why.empty()) {
      Outcome outcome;
      outcome.status = StaticOutcome::clean;
      outcome.skipped = std::move(why);
      return outcome;
    }
    return analyse(item.cubin, input_sha256, item.name);
  }
  const compile::PtxasInfo& ptxas = item.ptx->ptxas;
  const std::string key = compile_cache_key(input_sha256, ptxas.sha256, item.ptx->options);
  if (m_cache) {
    if (std::optional<nlohmann::json> record = m_cache->load("ptxas", key);
        record && record->contains("cubin_sha256") && record->at("cubin_sha256").is_string()) {
      // The compile is known; only a cached report saves running ptxas again.
      const std::string cubin_sha256 = record->at("cubin_sha256").get<std::string>();
      const std::string report_key = sass_cache_key(cubin_sha256, m_options.nvdisasm.sha256, m_fingerprint);
      if (std::optional<nlohmann::json> hit = m_cache->load("sass", report_key);
          hit && hit->value("cubin_sha256", std::string()) == cubin_sha256 && hit->contains("finding_count")) {
        ++m_compile_hits;
        ++m_sass_hits;
        Outcome outcome;
        outcome.finding_count = hit->at("finding_count").get<std::size_t>();
        outcome.status = outcome.finding_count > 0 ? StaticOutcome::hazard : StaticOutcome::clean;
        outcome.sass = std::move(*hit);
        outcome.cached = true;
        outcome.compile = std::move(*record);
        outcome.compile["cached"] = true;
        return outcome;
      }
    }
    ++m_compile_misses;
  }
  compile::PtxasOutput out;
  try {
    out = compile::compile_with_ptxas(ptxas, *item.ptx->ptx, item.name, item.ptx->options);
  } catch (const lp::Error& e) {
    Outcome outcome;
    outcome.error = e.what();
    outcome.compile = nlohmann::json{{"error", e.what()}, {"cached", false}};
    return outcome;
  }
  const std::string cubin_sha256 = sha256_hex(out.cubin);
  nlohmann::json record = {
      {"cubin_sha256", cubin_sha256}, {"cubin_bytes", out.cubin.size()}, {"ms", out.ms}, {"log", out.log}};
  if (m_cache) {
    note_write(m_cache->store("ptxas", key, record));
  }
  // Compiled all the same: a PTX that this ptxas refuses is an error row, skipped or not.
  Outcome outcome;
  if (std::string why = skip_reason(item.ptx->ptx, m_options.skip_without_wgmma); !why.empty()) {
    outcome.status = StaticOutcome::clean;
    outcome.skipped = std::move(why);
  } else {
    outcome = analyse(out.cubin, cubin_sha256, item.name + " (" + item.compiler + ")");
  }
  outcome.compile = std::move(record);
  outcome.compile["cached"] = false;
  return outcome;
}

InspectResult Inspector::inspect(const InspectItem& item) const {
  const auto start = Clock::now();
  const std::string input_sha256 = item.ptx ? sha256_hex(*item.ptx->ptx) : sha256_hex(item.cubin);
  const std::string key = item.ptx ? "ptx:" + input_sha256 + ":" + item.ptx->ptxas.sha256 : "cubin:" + input_sha256;
  std::shared_future<Outcome> future;
  std::optional<std::promise<Outcome>> promise;
  {
    std::lock_guard lock(m_memo->mutex);
    if (auto it = m_memo->outcomes.find(key); it != m_memo->outcomes.end()) {
      future = it->second;
    } else {
      promise.emplace();
      future = promise->get_future().share();
      m_memo->outcomes.emplace(key, future);
    }
  }
  const bool first = promise.has_value();
  if (first) {
    try {
      promise->set_value(work(item, input_sha256));
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  }
  const Outcome& outcome = future.get();  // rethrows what work() threw
  InspectResult result;
  result.name = item.name;
  result.variant = item.variant;
  result.triton = item.triton;
  result.compiler = item.compiler;
  result.status = outcome.status;
  result.finding_count = outcome.finding_count;
  result.sass = outcome.sass;
  result.compile = outcome.compile;
  if (item.ptx && result.compile.is_object()) {
    // The same binary may be known by several specs ("toolkit", "13.0"): name this item's.
    result.compile["ptxas"] = item.ptx->ptxas.to_json();
  }
  result.error = outcome.error;
  result.skipped = outcome.skipped;
  result.cached = outcome.cached;
  const std::shared_ptr<const std::string> ptx = item.ptx ? item.ptx->ptx : item.source_ptx;
  if (ptx) {
    result.ptx = check_ptx(*ptx, item.name);
    if (result.status != StaticOutcome::error && result.ptx.contains("finding_count")) {
      result.attribution =
          ptx::attribution(result.ptx.at("finding_count").get<std::size_t>(), result.finding_count);
    }
  }
  result.ms = first ? ms_since(start) : 0.0;
  return result;
}

nlohmann::json Inspector::check_ptx(const std::string& ptx, const std::string& name) const {
  const std::string key = sha256_hex(ptx);
  {
    std::lock_guard lock(m_memo->mutex);
    if (auto it = m_memo->ptx_reports.find(key); it != m_memo->ptx_reports.end()) {
      return it->second;
    }
  }
  // Milliseconds per kernel: computed where needed rather than cached on disk. Two
  // threads may both compute one PTX; they get the same answer.
  nlohmann::json report;
  try {
    report = ptx::analyze_ptx(ptx, name);
  } catch (const Error& e) {
    report = {{"error", e.what()}};
  }
  std::lock_guard lock(m_memo->mutex);
  return m_memo->ptx_reports.emplace(key, std::move(report)).first->second;
}

std::vector<InspectResult> Inspector::inspect_all(const std::vector<InspectItem>& items) const {
  std::vector<InspectResult> results(items.size());
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards failure, done and the progress callback
  std::exception_ptr failure;
  std::size_t done = 0;
  auto worker = [&] {
    while (!stop) {
      const std::size_t i = next++;
      if (i >= items.size()) {
        return;
      }
      try {
        results[i] = inspect(items[i]);
      } catch (const Interrupted& e) {
        // Ctrl-C: stop taking items; what finished is kept (and already cached).
        m_interrupted_by = e.signal();
        stop = true;
        return;
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) {
          failure = std::current_exception();
        }
        stop = true;
        return;
      }
      if (m_options.progress) {
        std::lock_guard lock(mutex);
        ++done;
        m_options.progress(results[i], done, items.size());
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(m_options.jobs, items.size());
  {
    std::vector<std::jthread> pool;
    pool.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) {
      pool.emplace_back(worker);
    }
  }  // joins
  if (failure) {
    std::rethrow_exception(failure);
  }
  if (m_interrupted_by != 0) {
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (results[i].name.empty()) {
        results[i].name = items[i].name;
        results[i].variant = items[i].variant;
        results[i].triton = items[i].triton;
        results[i].compiler = items[i].compiler;
        results[i].status = StaticOutcome::error;
        results[i].error = fmt::format("not inspected: interrupted by {}", signal_name(m_interrupted_by));
      }
    }
  }
  return results;
}

}  // namespace lp::inspect
