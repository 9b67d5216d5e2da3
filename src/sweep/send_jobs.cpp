#include "sweep/send_jobs.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>

namespace lp::sweep {

bool runnable(const Entry& e, const ImageSet& images) {
  return e.skip_reason.empty() && std::all_of(e.image_keys.begin(), e.image_keys.end(), [&](const std::string& key) {
           return images.at(key).error.empty();
         });
}

std::vector<std::string> images_to_preload(const std::vector<const Entry*>& entries, const ImageSet& images) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const Entry* entry : entries) {
    if (!runnable(*entry, images)) {
      continue;
    }
    for (const std::string& key : entry->image_keys) {
      if (keys.size() == k_preload_images) {
        return keys;
      }
      if (seen.insert(key).second) {
        keys.push_back(key);
      }
    }
  }
  return keys;
}

namespace {

/// What `worker` must load before `e` and the entries `behind` it can run, with the
/// run's `preload` the first time: each image once, the job's own first.
std::vector<protocol::LoadItem> load_items(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& behind,
                                           const ImageSet& images, const std::vector<std::string>& preload) {
  const WorkerClient& worker = *slot.client;
  std::vector<std::string> keys = e.image_keys;
  for (const Entry* entry : behind) {
    keys.insert(keys.end(), entry->image_keys.begin(), entry->image_keys.end());
  }
  if (!preload.empty() && !slot.preloaded) {
    // Once per slot and run: a worker started after a fault loads window by window, so
    // an image whose load kills its worker costs only the cases that use it.
    keys.insert(keys.end(), preload.begin(), preload.end());
    slot.preloaded = true;
  }
  std::vector<protocol::LoadItem> items;
  std::set<std::string> listed;
  for (const std::string& key : keys) {
    if (worker.has_loaded(key) || !listed.insert(key).second) {
      continue;
    }
    const Image& image = images.at(key);
    protocol::LoadItem item{{image.triton, image.variant_id, image.compiler, image.amplify}, std::nullopt, std::nullopt};
    if (!image.cubin.empty()) {
      // The bytes inspected here are the bytes the worker loads (a prebuilt one
      // too: the worker then need not decompress its kernel set's pack).
      item.cubin = image.cubin;
    }
    items.push_back(std::move(item));
  }
  return items;
}

/// Loads what `e` and the entries `behind` it need (with the run's preload, the
/// slot's first time); the lost result of `e` when one of its own images did not load.
/// When a load that carried other entries' images killed its worker, a fresh one loads
/// `e`'s alone, so that an image whose load crashes costs only the cases that use it.
std::optional<protocol::JobResult> load_for(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& behind,
                                            const ImageSet& images, std::chrono::seconds timeout,
                                            const std::function<void(DeviceSlot&)>& start_worker,
                                            const std::vector<std::string>& preload) {
  std::vector<protocol::LoadItem> items = load_items(slot, e, behind, images, preload);
  if (items.empty()) {
    return std::nullopt;
  }
  const auto own = [&](const std::string& key) {
    return std::find(e.image_keys.begin(), e.image_keys.end(), key) != e.image_keys.end();
  };
  const bool others = std::any_of(items.begin(), items.end(), [&](const protocol::LoadItem& i) { return !own(i.image.key()); });
  std::vector<protocol::LoadResult> results = slot.client->load(items, timeout);
  if (others && !slot.client->alive()) {
    slot.client.reset();
    start_worker(slot);  // slot.preloaded is set: no preload this time
    slot.sent.clear();
    items = load_items(slot, e, {}, images, preload);
    results = items.empty() ? std::vector<protocol::LoadResult>{} : slot.client->load(items, timeout);
  }
  for (const protocol::LoadResult& r : results) {
    if (!r.ok && own(r.key)) {
      return protocol::JobResult::lost(e.job.index, e.job.case_id, protocol::RunOutcome::incomplete,
                                       fmt::format("loading {} failed: {}", r.key, r.error));
    }
  }
  return std::nullopt;
}

}  // namespace

protocol::JobResult send_and_await(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& ahead,
                                   const ImageSet& images, std::chrono::seconds timeout,
                                   const std::function<void(DeviceSlot&)>& start_worker,
                                   const std::vector<std::string>& preload) {
  const protocol::Job& job = e.job;
  if (!slot.client || !slot.client->alive()) {
    start_worker(slot);
    slot.sent.clear();  // what the old worker had queued died with it
  }
  if (!slot.sent.empty() && slot.sent.front() != job.index) {
    // The worker would answer other jobs first: never so by construction (the
    // slot sends its entries in the order it runs them); a fresh worker is safe.
    slot.client.reset();
    start_worker(slot);
    slot.sent.clear();
  }
  WorkerClient& worker = *slot.client;
  const bool already_sent = !slot.sent.empty();
  // The entries to send behind this job: the runnable ones at the front of `ahead`
  // (an entry that does not run breaks the order, and is not sent).
  std::vector<const Entry*> behind;
  for (const Entry* next : ahead) {
    if (!runnable(*next, images)) {
      break;
    }
    behind.push_back(next);
  }
  // Loads only while no job is queued on the worker (its answer would come first):
  // a job sent ahead had its images loaded already.
  if (!already_sent) {
    if (std::optional<protocol::JobResult> failed = load_for(slot, e, behind, images, timeout, start_worker, preload)) {
      return *failed;
    }
    if (!slot.client->send_job(job)) {
      return protocol::JobResult::lost(job.index, job.case_id, protocol::RunOutcome::fault,
                                       "the GPU worker was gone before the case started");
    }
    slot.sent.push_back(job.index);
  }
  // Behind it, in order, the entries not sent yet whose images are loaded.
  for (std::size_t i = slot.sent.size() - 1; i < behind.size(); ++i) {
    const Entry& next = *behind[i];
    const bool loaded = std::all_of(next.image_keys.begin(), next.image_keys.end(),
                                    [&](const std::string& key) { return worker.has_loaded(key); });
    if (!loaded || !worker.send_job(next.job)) {
      break;
    }
    slot.sent.push_back(next.job.index);
  }
  protocol::JobResult result = worker.result(job, timeout);
  slot.sent.pop_front();
  if (!worker.alive()) {
    slot.sent.clear();  // a fault or timeout: the jobs sent behind it never ran
  }
  return result;
}

}  // namespace lp::sweep
