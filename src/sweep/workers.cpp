#include "sweep/workers.hpp"

#include <chrono>
#include <string>

#include <fmt/format.h>

#include "tools/tools.hpp"
#include "util/elapsed.hpp"

namespace lp::sweep {

void Workers::start() {
  m_slots.clear();
  m_slots.emplace_back();
  m_slots.front().device = m_request.device;
  if (m_request.devices.empty()) {
    start_worker(m_slots.front(), WorkerStart::later);  // wait_for_first() waits for it
    return;
  }
  // "all" and the list are read against the GPUs the first worker sees.
  m_slots.front().device = m_request.devices == "all" ? 0 : parse_devices(m_request.devices, 1 << 20).front();
  start_worker(m_slots.front());
  const int count = m_gpu ? m_gpu->device_count : 1;
  const std::vector<int> devices = parse_devices(m_request.devices, count);
  for (std::size_t i = 1; i < devices.size(); ++i) {
    m_slots.emplace_back();
    m_slots.back().device = devices[i];
  }
}

void Workers::start_worker(DeviceSlot& slot, WorkerStart start) {
  const std::string exe = m_request.worker_exe.empty() ? tools::executable_path().value_or("/proc/self/exe")
                                                       : m_request.worker_exe;
  std::vector<std::string> argv = {exe, "__worker", "--device", std::to_string(slot.device)};
  for (const std::string& dir : m_request.kernel_dirs) {
    argv.push_back("--kernel-dir");
    argv.push_back(dir);
  }
  if (m_request.allow_jit_cache) {
    argv.push_back("--allow-jit-cache");
  }
  slot.client.emplace(argv, m_request.worker_start_timeout, start);
  if (start == WorkerStart::later) {
    return;
  }
  slot.gpu = slot.client->gpu();
  if (!m_gpu) {
    m_gpu = slot.gpu;
  }
}

void Workers::ensure_worker(DeviceSlot& slot) {
  if (!slot.client || !slot.client->alive()) {
    start_worker(slot);
  }
}

double Workers::wait_for_first() {
  const auto t = std::chrono::steady_clock::now();
  DeviceSlot& slot = first();
  slot.client->wait_ready();
  slot.gpu = slot.client->gpu();
  if (!m_gpu) {
    m_gpu = slot.gpu;
  }
  return seconds_since(t);
}

void Workers::jit_driver_images(ImageSet& images) {
  const std::vector<protocol::LoadItem> items = images.driver_items();
  if (items.empty()) {
    return;
  }
  DeviceSlot& slot = first();
  ensure_worker(slot);
  images.take_jit(slot.client->load(items, m_request.case_timeout), slot.client->gpu().driver_version);
}

void Workers::stop() {
  for (DeviceSlot& slot : m_slots) {
    if (slot.client) {
      slot.client->ask_to_quit();
    }
  }
}

void Workers::reap() {
  for (DeviceSlot& slot : m_slots) {
    if (slot.client) {
      slot.client->quit();
      slot.client.reset();
    }
  }
}

void Workers::forget() {
  for (DeviceSlot& slot : m_slots) {
    slot.client.reset();
  }
}

void Workers::record_devices(report::Report& report) const {
  if (m_slots.size() <= 1) {
    return;
  }
  std::vector<report::DeviceRecord> devices;
  std::vector<report::Carried<report::ReportedGpu>> gpus;
  for (const DeviceSlot& slot : m_slots) {
    gpus.push_back(slot.gpu ? protocol::to_json_text(*slot.gpu) : JsonText());
    devices.push_back(
        {slot.device, slot.cases, slot.retired.empty() ? std::nullopt : std::optional<std::string>(slot.retired)});
    if (!slot.retired.empty()) {
      fmt::print(stderr, "sweep: GPU {} left the rotation: {}\n", slot.device, slot.retired);
    }
  }
  report.meta.devices = std::move(devices);
  report.environment.gpus = std::move(gpus);  // every GPU of --devices; "gpu" is the first
}

}  // namespace lp::sweep
