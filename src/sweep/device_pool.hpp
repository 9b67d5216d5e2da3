#pragma once
// The GPUs of one sweep (--devices): one worker process per GPU, each with its own
// CUDA context, taking cases from one queue. A fault replaces that GPU's worker
// only; with more than one GPU, a GPU whose worker faults (or times out) a number
// of times in a row leaves the rotation and the others carry on.

#include <cstddef>
#include <deque>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report/report.hpp"
#include "sweep/worker_client.hpp"

namespace lp::sweep {

/// One GPU's worker and how it has fared.
struct DeviceSlot {
  int device = 0;
  std::optional<WorkerClient> client;
  std::optional<protocol::GpuRecord> gpu;  ///< its worker's GPU record, once one started
  int faults_in_row = 0;
  std::size_t cases = 0;
  std::string retired;  ///< why it left the rotation; empty while in it
  /// The jobs (plan indexes) sent to the worker and not yet answered, oldest first:
  /// the worker answers them in this order. Cleared with the worker.
  std::deque<std::size_t> sent;
  /// Whether this run's first load on this GPU took the run's images (send_and_await).
  bool preloaded = false;
};

/// Faults or timeouts in a row that take a GPU out of the rotation (when there are others).
inline constexpr int k_max_faults_in_row = 3;

/// The tasks a slot holds at once: the one awaited and the ones sent to its worker
/// behind it. With one behind, the worker sat idle 0.15 s of the 1008-case H200
/// benchmark while the parent read an answer and sent the next job (about 0.2 ms
/// a case, longer than the worker's smallest cases).
inline constexpr std::size_t k_tasks_in_flight = 3;

struct PoolCallbacks {
  /// Runs task `task` on `slot`'s worker; called only from that slot's thread. `ahead`
  /// holds the tasks that slot runs next, in order (fewer than k_tasks_in_flight):
  /// their jobs may be sent to the worker before `task`'s answer is awaited, so that
  /// the worker never waits for the parent.
  std::function<report::CaseRecord(DeviceSlot& slot, std::size_t task, const std::vector<std::size_t>& ahead)> run;
  /// Called on the calling thread as each task finishes, in the order they finish;
  /// false stops the pool taking more (--stop-on-first-failure).
  std::function<bool(std::size_t task, const report::CaseRecord& record)> done;
  /// The record of a task no GPU is left to run.
  std::function<report::CaseRecord(std::size_t task, const std::string& why)> lost;
};

/// Runs tasks 0..count-1 over `slots`, one thread per slot. Returns when every task
/// has a record (or the pool was stopped). An exception in a slot's thread (an
/// interrupt) stops the others; the first is rethrown here.
void run_on_devices(std::vector<DeviceSlot>& slots, std::size_t count, const PoolCallbacks& callbacks);

/// "0,1,3" or "all" (given the device count): the ordinals, ascending, each once.
/// Throws lp::UsageError naming the value.
std::vector<int> parse_devices(const std::string& text, int device_count);

/// The checks of parse_devices that need no GPU (a dry run): the syntax, and each
/// ordinal at most report::k_max_device. Throws lp::UsageError naming the value.
void check_devices_text(const std::string& text);

}  // namespace lp::sweep
