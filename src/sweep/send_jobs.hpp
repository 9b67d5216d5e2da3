#pragma once
// Sending a sweep's jobs to a GPU's worker: the images a job needs are loaded while
// nothing is queued on the worker, the job is sent with the slot's next runnable
// entries behind it (k_tasks_in_flight, device_pool.hpp), and its answer is awaited
// with the case timeout. The runner (runner.cpp) decides what runs; this decides how
// it reaches the worker.

#include <chrono>
#include <functional>
#include <vector>

#include "protocol/protocol.hpp"
#include "sweep/device_pool.hpp"
#include "sweep/entries.hpp"
#include "sweep/images.hpp"

namespace lp::sweep {

/// True when the entry runs on a worker (not skipped, its images compiled).
bool runnable(const Entry& e, const ImageSet& images);

/// Runs `e`'s job on `slot`'s worker and returns its answer: the worker is started
/// with `start_worker` when the slot has none, or none that answers in order, and
/// the job's images are loaded first. `ahead`, the slot's next entries, are sent in
/// order behind it before its answer is awaited (the runnable ones at the front,
/// their images loaded), so that the worker queues the next case on the GPU while
/// this answer is read and journaled; their own calls then only await them. A worker
/// that dies or misses `timeout` gives a fault or timeout result, and what it had
/// queued behind is sent again to the next one. `preload`, the images of the entries
/// the caller runs next (at most k_preload_images), go with a worker's first load
/// beside the job's own: a load is sent only while nothing is queued on the worker, so
/// each one drains its GPU, and loading the window's images alone did so every few cases.
protocol::JobResult send_and_await(DeviceSlot& slot, const Entry& e, const std::vector<const Entry*>& ahead,
                                   const ImageSet& images, std::chrono::seconds timeout,
                                   const std::function<void(DeviceSlot&)>& start_worker,
                                   const std::vector<std::string>& preload = {});

/// The most images a worker's first load takes beyond its job's own (send_and_await).
inline constexpr std::size_t k_preload_images = 512;

/// The images of the runnable `entries`, in order of first use, at most k_preload_images.
std::vector<std::string> images_to_preload(const std::vector<const Entry*>& entries, const ImageSet& images);

}  // namespace lp::sweep
