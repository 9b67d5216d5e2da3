#include "sweep/background_inspection.hpp"

#include <chrono>

#include <fmt/format.h>

#include "util/elapsed.hpp"

namespace lp::sweep {

void BackgroundInspection::start(const std::optional<std::string>& nvdisasm, std::size_t threads) {
  m_inspection = std::async(std::launch::async, [this, nvdisasm, threads] {
    const auto t = std::chrono::steady_clock::now();
    std::string problem = m_images.inspect(nvdisasm, threads);
    m_seconds = seconds_since(t);
    return problem;
  });
}

void BackgroundInspection::await() {
  if (!m_inspection.valid()) {
    return;
  }
  const auto t = std::chrono::steady_clock::now();
  std::future<std::string> inspection = std::move(m_inspection);
  const std::string problem = inspection.get();
  m_wait_s = seconds_since(t);
  m_joined();
  if (!problem.empty()) {
    fmt::print(stderr, "sweep: warning: static inspection unavailable ({}); no case can be LATENT\n", problem);
  }
}

}  // namespace lp::sweep
