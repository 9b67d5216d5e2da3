#pragma once
// The parent's side of a GPU worker: start it and wait for "ready", load images,
// run a job under a deadline. A worker that misses the deadline is killed (SIGTERM,
// then SIGKILL) and the job is a timeout; one that dies is a fault.

#include <chrono>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/protocol.hpp"
#include "util/child_process.hpp"

namespace lp::sweep {

class WorkerClient {
 public:
  /// Starts `argv` and waits up to `start_timeout` for its ready message. Throws
  /// lp::EnvironmentError with the worker's own reason when it cannot run (no
  /// driver, no GPU, not Hopper), lp::Error when it does not answer.
  WorkerClient(const std::vector<std::string>& argv, std::chrono::seconds start_timeout);

  /// The GPU record the worker sent when it started.
  [[nodiscard]] const nlohmann::json& gpu() const noexcept { return m_gpu; }
  /// False once the worker has died or been killed.
  [[nodiscard]] bool alive() const noexcept { return m_alive; }
  [[nodiscard]] bool has_loaded(const std::string& key) const { return m_loaded.count(key) > 0; }

  /// Sends a load_batch and returns the per-item results. A worker that dies or
  /// times out gives every item ok=false with the reason.
  std::vector<protocol::LoadResult> load(const std::vector<protocol::LoadItem>& items, std::chrono::seconds timeout);

  /// Runs `job`. On a deadline miss returns outcome timeout (the worker is killed);
  /// on a worker that dies without answering returns outcome fault with how it died.
  protocol::JobResult run(const protocol::Job& job, std::chrono::seconds timeout);

  /// Runs the race control (sweep/race_control.hpp) on the worker: its result, or
  /// nullopt with `error` set (a fault, a timeout: the worker is then gone, or the
  /// worker's own error).
  std::optional<protocol::RaceResult> race(const protocol::RaceRequest& request, std::chrono::seconds timeout,
                                           std::string& error);

  /// Asks the worker to quit, then makes sure it is gone.
  void quit();

 private:
  /// The next message, or nullopt with `problem` set (timeout or death; the worker is then gone).
  std::optional<nlohmann::json> receive(std::chrono::steady_clock::time_point deadline, std::string& problem,
                                        bool& timed_out);

  ChildProcess m_child;
  nlohmann::json m_gpu;
  std::set<std::string> m_loaded;
  bool m_alive = true;
};

}  // namespace lp::sweep
