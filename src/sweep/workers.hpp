#pragma once
// A sweep's GPU workers: one DeviceSlot per GPU of --devices (device_pool.hpp). The
// first GPU's worker starts at the beginning, so that CUDA and cuBLAS start while the
// parent prepares the plan and the images; the others are started by their threads,
// and a slot whose worker died gets a fresh one.

#include <optional>
#include <vector>

#include "protocol/protocol.hpp"
#include "report/report.hpp"
#include "sweep/device_pool.hpp"
#include "sweep/images.hpp"
#include "sweep/runner.hpp"
#include "sweep/worker_client.hpp"

namespace lp::sweep {

class Workers {
 public:
  explicit Workers(const SweepRequest& request) : m_request(request) {}

  /// The first GPU's worker (without waiting for it when --devices is not given: the
  /// first wait_for_first() waits), then a slot for each other GPU of --devices.
  void start();
  /// Starts `slot`'s worker; WorkerStart::wait waits until it said it is ready.
  void start_worker(DeviceSlot& slot, WorkerStart start = WorkerStart::wait);
  /// start_worker, when `slot` has no worker or its worker died.
  void ensure_worker(DeviceSlot& slot);
  /// Waits for the first GPU's worker; returns the seconds waited.
  double wait_for_first();
  /// The driver compile path: the first worker JITs each variant's PTX once (in
  /// parallel) and hands the cubin back for inspection and for later workers.
  void jit_driver_images(ImageSet& images);
  /// Asks every worker to quit; reap() waits for them, once the report is out.
  void stop();
  void reap();
  /// After a signal: the workers were killed and reaped by the wait that noticed it.
  void forget();
  /// meta.devices and environment.gpus, when the sweep ran on more than one GPU (a
  /// GPU that left the rotation is said on stderr).
  void record_devices(report::Report& report) const;

  DeviceSlot& first() { return m_slots.front(); }
  std::vector<DeviceSlot>& slots() { return m_slots; }
  /// The first worker's GPU, once it answered.
  const std::optional<protocol::GpuRecord>& gpu() const { return m_gpu; }

 private:
  const SweepRequest& m_request;
  std::vector<DeviceSlot> m_slots;  ///< one worker per GPU (--devices); the first runs the controls
  std::optional<protocol::GpuRecord> m_gpu;  ///< the first worker's
};

}  // namespace lp::sweep
