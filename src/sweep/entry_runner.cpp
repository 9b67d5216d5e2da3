#include "sweep/entry_runner.hpp"

#include <fmt/format.h>

#include "sweep/send_jobs.hpp"
#include "util/elapsed.hpp"

namespace lp::sweep {

using report::CaseRecord;
using report::Verdict;

CaseRecord EntryRunner::run(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& ahead,
                            std::optional<protocol::JobResult>& ran) {
  if (!e.skip_reason.empty()) {
    return not_run(e, Verdict::skipped, e.skip_reason);
  }
  for (const std::string& key : e.image_keys) {
    const Image& image = m_images.at(key);
    if (!image.incompatible.empty()) {
      return not_run(e, Verdict::incompatible,
                     fmt::format("{}: {} (a pairing that cannot compile, not a failure)", key, image.incompatible));
    }
    if (!image.error.empty()) {
      return not_run(e, Verdict::compile_error, fmt::format("{}: {}", key, image.error));
    }
  }
  const auto start = std::chrono::steady_clock::now();
  // A fresh worker when the slot has none or its old one is unusable (send_jobs.hpp).
  const protocol::JobResult result = send_and_await(
      slot, e, ahead, m_images, m_case_timeout, [this](DeviceSlot& s) { m_workers.start_worker(s); }, m_preload);
  {
    const std::lock_guard lock(m_job_time_mutex);
    m_job_time.round_trip_s += seconds_since(start);
    m_job_time.worker_s += result.worker_ms / 1000.0;
  }
  CaseRecord record = record_of(e, result, nullptr);
  record.device = slot.device;
  ran = result;
  return record;
}

CaseRecord EntryRunner::final_record(const Entry& e, const CaseRecord& provisional,
                                     const std::optional<protocol::JobResult>& ran) {
  if (!ran) {
    return provisional;
  }
  m_inspection.await();
  CaseRecord record = record_of(e, *ran, &m_images);
  record.device = provisional.device;
  return record;
}

void EntryRunner::run_all(const std::vector<const Entry*>& entries, const Finished& finished) {
  // Each job's result, written by its GPU's thread before the pool hands the task on.
  std::vector<std::optional<protocol::JobResult>> ran(entries.size());
  m_preload = images_to_preload(entries, m_images);
  for (DeviceSlot& slot : m_workers.slots()) {
    slot.preloaded = false;  // each run's first load on each GPU takes its images
  }
  PoolCallbacks callbacks;
  callbacks.run = [&](DeviceSlot& slot, std::size_t task, const std::vector<std::size_t>& ahead) {
    std::vector<const Entry*> behind;
    for (const std::size_t a : ahead) {
      behind.push_back(entries[a]);
    }
    return run(slot, *entries[task], behind, ran[task]);
  };
  callbacks.lost = [&](std::size_t task, const std::string& why) {
    return not_run(*entries[task], Verdict::incomplete, why);
  };
  callbacks.done = [&](std::size_t task, const CaseRecord& provisional) {
    return finished(task, provisional, ran[task]);
  };
  run_on_devices(m_workers.slots(), entries.size(), callbacks);
  m_preload.clear();
}

}  // namespace lp::sweep
