#include "sweep/device_pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/text.hpp"

namespace lp::sweep {

namespace {

bool is_fault(const report::CaseRecord& r) {
  return r.verdict == report::Verdict::fault || r.verdict == report::Verdict::timeout;
}

}  // namespace

void run_on_devices(std::vector<DeviceSlot>& slots, std::size_t count, const PoolCallbacks& callbacks) {
  std::mutex m;
  std::condition_variable cv;
  std::size_t next = 0;           // the next task never handed out
  std::deque<std::size_t> again;  // handed out as `ahead` to a slot that then left the rotation
  bool stop = false;
  std::exception_ptr failure;
  std::deque<std::pair<std::size_t, report::CaseRecord>> finished;
  std::size_t running = slots.size();
  // Tasks handed out and without a record yet, whichever slot holds them: while there
  // are any, a slot that leaves the rotation may hand some back through `again`.
  std::size_t outstanding = 0;
  const bool rotation = slots.size() > 1;
  // The next task for a slot. With `wait` (the slot holds none), it waits while other
  // slots hold tasks that may come back, so that a slot which drained the queue does
  // not leave before one that then retires hands its window back.
  auto take = [&](bool wait) -> std::optional<std::size_t> {
    std::unique_lock<std::mutex> lock(m);
    while (true) {
      if (stop) {
        return std::nullopt;
      }
      if (!again.empty()) {
        const std::size_t task = again.front();
        again.pop_front();
        return task;
      }
      if (next < count) {
        ++outstanding;
        return next++;
      }
      if (!wait || outstanding == 0) {
        return std::nullopt;
      }
      cv.wait(lock);
    }
  };
  auto work = [&](DeviceSlot& slot) {
    try {
      std::deque<std::size_t> window;  // this slot's tasks: the first is run next
      auto refill = [&] {
        while (window.size() < k_tasks_in_flight) {
          const std::optional<std::size_t> task = take(/*wait=*/window.empty());
          if (!task) {
            break;
          }
          window.push_back(*task);
        }
      };
      refill();
      while (!window.empty()) {
        const std::size_t task = window.front();
        const std::vector<std::size_t> ahead(window.begin() + 1, window.end());
        report::CaseRecord record = callbacks.run(slot, task, ahead);
        window.pop_front();
        record.device = slot.device;
        ++slot.cases;
        slot.faults_in_row = is_fault(record) ? slot.faults_in_row + 1 : 0;
        const bool retire = rotation && slot.faults_in_row >= k_max_faults_in_row;
        if (retire) {
          slot.retired = fmt::format("{} faults or timeouts in a row (the last: {})", slot.faults_in_row,
                                     record.reason);
        }
        bool stopped = false;
        {
          std::lock_guard<std::mutex> lock(m);
          finished.emplace_back(task, std::move(record));
          --outstanding;
          if (retire) {
            again.insert(again.end(), window.begin(), window.end());  // other GPUs run them
          }
          stopped = stop;
        }
        cv.notify_all();
        if (retire) {
          slot.client.reset();
          slot.sent.clear();
          break;
        }
        if (stopped) {
          break;  // --stop-on-first-failure: the window's other tasks are not run
        }
        refill();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(m);
      if (!failure) {
        failure = std::current_exception();
      }
      stop = true;
    }
    {
      std::lock_guard<std::mutex> lock(m);
      --running;
    }
    cv.notify_all();
  };
  std::vector<std::thread> threads;
  threads.reserve(slots.size());
  for (DeviceSlot& slot : slots) {
    threads.emplace_back(work, std::ref(slot));
  }
  // The calling thread hands each finished task on as it comes.
  std::unique_lock<std::mutex> lock(m);
  while (true) {
    cv.wait(lock, [&] { return !finished.empty() || running == 0; });
    while (!finished.empty()) {
      auto [task, record] = std::move(finished.front());
      finished.pop_front();
      const bool failed = failure != nullptr;
      lock.unlock();
      const bool go_on = !failed && callbacks.done(task, record);
      lock.lock();
      if (!go_on) {
        stop = true;
        cv.notify_all();  // a slot waiting for tasks to come back leaves
      }
    }
    if (running == 0 && finished.empty()) {
      break;
    }
  }
  lock.unlock();
  for (std::thread& t : threads) {
    t.join();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
  if (!stop && (next < count || !again.empty())) {
    // Every GPU left the rotation: what is left is recorded, not silently dropped.
    std::string why = "not run: every GPU of --devices left the rotation (";
    for (const DeviceSlot& s : slots) {
      why += fmt::format("{}GPU {}: {}", &s == &slots.front() ? "" : "; ", s.device, s.retired);
    }
    why += ")";
    std::vector<std::size_t> left(again.begin(), again.end());
    for (std::size_t task = next; task < count; ++task) {
      left.push_back(task);
    }
    std::sort(left.begin(), left.end());
    for (const std::size_t task : left) {
      if (!callbacks.done(task, callbacks.lost(task, why))) {
        break;
      }
    }
  }
}

std::vector<int> parse_devices(const std::string& text, int device_count) {
  std::set<int> out;
  if (text == "all") {
    for (int d = 0; d < device_count; ++d) {
      out.insert(d);
    }
  } else {
    for (const std::string_view item : split(text)) {
      const std::string_view p = trim(item);
      const std::optional<int> ordinal = p.size() <= 4 ? parse_number<int>(p) : std::nullopt;
      if (!ordinal || *ordinal < 0) {
        throw UsageError(fmt::format("--devices {}: write GPU ordinals (0,1,3) or all", text));
      }
      const int d = *ordinal;
      if (d >= device_count) {
        throw UsageError(fmt::format("--devices {}: GPU {} is not there ({} GPU(s): 0 to {})", text, d, device_count,
                                     device_count - 1));
      }
      out.insert(d);
    }
  }
  if (out.empty()) {
    throw UsageError(fmt::format("--devices {}: no GPU", text));
  }
  return {out.begin(), out.end()};
}

}  // namespace lp::sweep
