#pragma once
// A bounded parallel loop for CPU-side work (compiling with ptxas, running
// nvdisasm): each of `threads` threads takes the next index until none is left.

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lp {

/// Calls fn(i) for every i in [0, n) on up to `threads` threads (0: the hardware's
/// count). The first exception fn throws is rethrown after all threads have
/// stopped; the remaining indices are still processed.
template <class Fn>
void parallel_for(std::size_t n, std::size_t threads, Fn&& fn) {
  if (threads == 0) {
    threads = std::max(1U, std::thread::hardware_concurrency());
  }
  threads = std::min(threads, n);
  std::atomic<std::size_t> next{0};
  std::exception_ptr first_error;
  std::mutex error_mutex;
  auto body = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        fn(i);
      } catch (...) {
        const std::lock_guard lock(error_mutex);
        if (!first_error) {
          first_error = std::current_exception();
        }
      }
    }
  };
  if (threads <= 1) {
    body();
  } else {
    std::vector<std::thread> pool;
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
