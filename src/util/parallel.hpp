#pragma once
// The one bounded parallel loop for CPU-side work (compiling with ptxas, running
// nvdisasm, inspecting cubins): each of `threads` threads takes the next index until
// none is left, or until the loop is told to stop.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lp {

/// The hardware's thread count, at least 1 (std::thread says 0 when it cannot tell):
/// what "0: the hardware's count" means wherever a thread count is asked for.
inline std::size_t hardware_threads() { return std::max(1U, std::thread::hardware_concurrency()); }

/// What the loop does after fn threw.
enum class StopPolicy {
  finish_all,   ///< every index is still processed (independent items: one bad cubin spoils none)
  first_error,  ///< no index is started after the first throw (an interrupt, a fatal error)
};

/// Calls fn(i) for every i in [0, n) on up to `threads` threads (0: the hardware's
/// count). The first exception fn throws is rethrown after all threads have stopped;
/// `policy` says whether the indices not yet started are still processed.
template <class Fn>
void parallel_for(std::size_t n, std::size_t threads, Fn&& fn, StopPolicy policy = StopPolicy::finish_all) {
  if (threads == 0) {
    threads = hardware_threads();
  }
  threads = std::min(threads, n);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto body = [&] {
    for (std::size_t i = next++; i < n && !stop; i = next++) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!first_error) {
          first_error = std::current_exception();
        }
        if (policy == StopPolicy::first_error) {
          stop = true;
        }
      }
    }
  };
  if (threads <= 1) {
    body();
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) {
      pool.emplace_back(body);
    }
    for (std::thread& t : pool) {
      t.join();
    }
  }
  if (first_error) {
    std::rethrow_exception(first_error);
  }
}

}  // namespace lp
