#include "sweep/device_pool.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
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

namespace {

/// One run of the pool: the queue the GPUs' threads share and the records they finish,
/// handed on by the calling thread.
class Pool {
 public:
  Pool(std::vector<DeviceSlot>& slots, std::size_t count, const PoolCallbacks& callbacks)
      : m_slots(slots), m_count(count), m_callbacks(callbacks), m_running(slots.size()),
        m_rotation(slots.size() > 1) {}

  void run() {
    std::vector<std::thread> threads;
    threads.reserve(m_slots.size());
    for (DeviceSlot& slot : m_slots) {
      threads.emplace_back([this, &slot] { work(slot); });
    }
    hand_on();
    for (std::thread& t : threads) {
      t.join();
    }
    if (m_failure) {
      std::rethrow_exception(m_failure);
    }
    record_left_over();
  }

 private:
  /// The next task for a slot. With `wait` (the slot holds none), it waits while other
  /// slots hold tasks that may come back, so that a slot which drained the queue does
  /// not leave before one that then retires hands its window back.
  std::optional<std::size_t> take(bool wait) {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (true) {
      if (m_stop) {
        return std::nullopt;
      }
      if (!m_again.empty()) {
        const std::size_t task = m_again.front();
        m_again.pop_front();
        return task;
      }
      if (m_next < m_count) {
        ++m_outstanding;
        return m_next++;
      }
      if (!wait || m_outstanding == 0) {
        return std::nullopt;
      }
      m_cv.wait(lock);
    }
  }

  /// A GPU's thread: its window of tasks, run one after the other, each finished record
  /// queued for hand_on; a slot with too many faults in a row leaves the rotation and
  /// hands its window back.
  void work(DeviceSlot& slot) {
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
        report::CaseRecord record = m_callbacks.run(slot, task, ahead);
        window.pop_front();
        record.device = slot.device;
        ++slot.cases;
        slot.faults_in_row = is_fault(record) ? slot.faults_in_row + 1 : 0;
        const bool retire = m_rotation && slot.faults_in_row >= k_max_faults_in_row;
        if (retire) {
          slot.retired = fmt::format("{} faults or timeouts in a row (the last: {})", slot.faults_in_row,
                                     record.reason);
        }
        bool stopped = false;
        {
          std::lock_guard<std::mutex> lock(m_mutex);
          m_finished.emplace_back(task, std::move(record));
          --m_outstanding;
          if (retire) {
            m_again.insert(m_again.end(), window.begin(), window.end());  // other GPUs run them
          }
          stopped = m_stop;
        }
        m_cv.notify_all();
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
      std::lock_guard<std::mutex> lock(m_mutex);
      if (!m_failure) {
        m_failure = std::current_exception();
      }
      m_stop = true;
    }
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      --m_running;
    }
    m_cv.notify_all();
  }

  /// The calling thread hands each finished task on as it comes, until every slot left.
  void hand_on() {
    std::unique_lock<std::mutex> lock(m_mutex);
    while (true) {
      m_cv.wait(lock, [&] { return !m_finished.empty() || m_running == 0; });
      while (!m_finished.empty()) {
        auto [task, record] = std::move(m_finished.front());
        m_finished.pop_front();
        const bool failed = m_failure != nullptr;
        lock.unlock();
        const bool go_on = !failed && m_callbacks.done(task, record);
        lock.lock();
        if (!go_on) {
          m_stop = true;
          m_cv.notify_all();  // a slot waiting for tasks to come back leaves
        }
      }
      if (m_running == 0 && m_finished.empty()) {
        return;
      }
    }
  }

  /// Every GPU left the rotation: what is left is recorded, not silently dropped.
  void record_left_over() {
    if (m_stop || (m_next >= m_count && m_again.empty())) {
      return;
    }
    std::string why = "not run: every GPU of --devices left the rotation (";
    for (const DeviceSlot& s : m_slots) {
      why += fmt::format("{}GPU {}: {}", &s == &m_slots.front() ? "" : "; ", s.device, s.retired);
    }
    why += ")";
    std::vector<std::size_t> left(m_again.begin(), m_again.end());
    for (std::size_t task = m_next; task < m_count; ++task) {
      left.push_back(task);
    }
    std::sort(left.begin(), left.end());
    for (const std::size_t task : left) {
      if (!m_callbacks.done(task, m_callbacks.lost(task, why))) {
        break;
      }
    }
  }

  std::vector<DeviceSlot>& m_slots;
  const std::size_t m_count;
  const PoolCallbacks& m_callbacks;
  std::mutex m_mutex;
  std::condition_variable m_cv;
  std::size_t m_next = 0;           ///< the next task never handed out
  std::deque<std::size_t> m_again;  ///< handed out as `ahead` to a slot that then left the rotation
  bool m_stop = false;
  std::exception_ptr m_failure;
  std::deque<std::pair<std::size_t, report::CaseRecord>> m_finished;
  std::size_t m_running;
  /// Tasks handed out and without a record yet, whichever slot holds them: while there
  /// are any, a slot that leaves the rotation may hand some back through m_again.
  std::size_t m_outstanding = 0;
  const bool m_rotation;
};

}  // namespace

void run_on_devices(std::vector<DeviceSlot>& slots, std::size_t count, const PoolCallbacks& callbacks) {
  Pool(slots, count, callbacks).run();
}

namespace {

/// parse_devices without a GPU count (nullopt: k_max_device is the last ordinal).
std::vector<int> devices_of(const std::string& text, std::optional<int> device_count) {
  std::set<int> out;
  if (text == "all" && !device_count) {
    return {0};
  }
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
      if (!device_count && d > report::k_max_device) {
        throw UsageError(fmt::format("--devices {}: GPU ordinals are 0 to {}", text, report::k_max_device));
      }
      if (device_count && d >= *device_count) {
        throw UsageError(fmt::format("--devices {}: GPU {} is not there ({} GPU(s): 0 to {})", text, d, *device_count,
                                     *device_count - 1));
      }
      out.insert(d);
    }
  }
  if (out.empty()) {
    throw UsageError(fmt::format("--devices {}: no GPU", text));
  }
  return {out.begin(), out.end()};
}

}  // namespace

std::vector<int> parse_devices(const std::string& text, int device_count) { return devices_of(text, device_count); }

void check_devices_text(const std::string& text) { (void)devices_of(text, std::nullopt); }

}  // namespace lp::sweep
