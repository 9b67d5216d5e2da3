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


#include "protocol/protocol.hpp"
#include "util/child_process.hpp"

namespace lp::sweep {

/// Whether the constructor waits for the worker's ready message.
enum class WorkerStart {
  wait,   ///< the constructor returns once the worker is ready (or throws)
  later,  ///< it returns at once; the first wait_ready() (or any request) waits
};

class WorkerClient {
 public:
  /// Starts `argv` and (WorkerStart::wait) waits up to `start_timeout` for its ready
  /// message. Throws lp::EnvironmentError with the worker's own reason when it cannot
  /// run (no driver, no GPU, not Hopper), lp::Error when it does not answer. With
  /// WorkerStart::later the worker starts up (CUDA, cuBLAS) while the caller works
  /// on; wait_ready() then throws these, within `start_timeout` of the start.
  WorkerClient(const std::vector<std::string>& argv, std::chrono::seconds start_timeout,
               WorkerStart start = WorkerStart::wait);

  /// Waits for the ready message unless it came already. Throws as the constructor.
  void wait_ready();
  /// Takes the ready message if it has come, without waiting: true once ready, false
  /// while the worker is still starting. Throws as the constructor when the worker
  /// said it cannot run (no GPU answers so within milliseconds) or died.
  bool poll_ready();

  /// The GPU record the worker sent when it started (waits for it).
  [[nodiscard]] const protocol::GpuRecord& gpu() {
    wait_ready();
    return m_gpu;
  }
  /// False once the worker has died or been killed.
  [[nodiscard]] bool alive() const noexcept { return m_alive; }
  [[nodiscard]] bool has_loaded(const std::string& key) const { return m_loaded.count(key) > 0; }

  /// Sends a load_batch and returns the per-item results. A worker that dies or
  /// times out gives every item ok=false with the reason.
  std::vector<protocol::LoadResult> load(const std::vector<protocol::LoadItem>& items, std::chrono::seconds timeout);

  /// Runs `job`. On a deadline miss returns outcome timeout (the worker is killed);
  /// on a worker that dies without answering returns outcome fault with how it died.
  protocol::JobResult run(const protocol::Job& job, std::chrono::seconds timeout);

  /// run() in two halves, so that the next job can be sent while one runs (the worker
  /// takes them in order): send_job() is false when the worker is gone; result()
  /// waits for the answer to the oldest job sent and not yet answered, `timeout` from
  /// now, with run()'s outcomes.
  bool send_job(const protocol::Job& job);
  protocol::JobResult result(const protocol::Job& job, std::chrono::seconds timeout);

  /// Runs the race control (sweep/race_control.hpp) on the worker: its result, or
  /// nullopt with `error` set (a fault, a timeout: the worker is then gone, or the
  /// worker's own error).
  std::optional<protocol::RaceResult> race(const protocol::RaceRequest& request, std::chrono::seconds timeout,
                                           std::string& error);

  /// Asks the worker to quit and returns at once: its exit (the driver tearing its
  /// context down, 0.1 s on the H200) overlaps what the caller does next, and quit()
  /// then waits for it. A worker that never became ready is killed.
  void ask_to_quit();
  /// Asks the worker to quit unless asked already, then makes sure it is gone.
  void quit();

 private:
  /// Checks the first message the worker sent and takes its GPU record; throws as the constructor.
  void take_hello(const protocol::Reply& hello, const std::string& line);
  /// Says on stderr that a line was no message, escaped for the terminal.
  void say_stray(const std::string& line) const;
  /// Collects the worker, now gone; throws Interrupted when a stop signal (Ctrl-C,
  /// SIGTERM, SIGHUP, SIGQUIT) ended it.
  ChildExit reap();
  /// Sends one request; false when the worker is gone (reaped, as above).
  bool send(const protocol::Request& request);
  /// A reply and the line it came as (quoted when it is not the one awaited).
  struct Received {
    protocol::Reply reply;
    std::string line;
  };
  /// The next message, or nullopt with `problem` set (timeout or death; the worker is then gone).
  std::optional<Received> receive(std::chrono::steady_clock::time_point deadline, std::string& problem,
                                  bool& timed_out);

  ChildProcess m_child;
  std::chrono::steady_clock::time_point m_start_deadline;
  bool m_ready = false;
  protocol::GpuRecord m_gpu;
  std::set<std::string> m_loaded;
  bool m_alive = true;
  bool m_asked_to_quit = false;
};

}  // namespace lp::sweep
