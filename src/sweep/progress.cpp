#include "sweep/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace lp::sweep {

std::string format_duration(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  if (s >= 3600) {
    return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  }
  if (s >= 60) {
    return fmt::format("{}m{:02}s", s / 60, s % 60);
  }
  return fmt::format("{}s", s);
}

Progress::Progress(std::size_t total, bool enabled)
    : m_total(total),
      m_enabled(enabled),
      m_tty(::isatty(STDERR_FILENO) == 1),
      m_start(std::chrono::steady_clock::now()),
      m_last_line(m_start) {}

void Progress::update(std::size_t done, std::size_t failures, std::size_t latent, const std::string& current) {
  if (!m_enabled || m_total == 0) {
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - m_start).count();
  const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(m_total - done) : 0.0;
  const std::size_t width = 30;
  const std::size_t filled = width * done / m_total;
  const std::string status = fmt::format("{}/{} cases, {} failing, {} latent, {} elapsed, ETA {}", done, m_total,
                                         failures, latent, format_duration(elapsed), format_duration(eta));
  if (m_tty) {
    fmt::print(stderr, "\r[{}{}] {} {:<40.40}", std::string(filled, '#'), std::string(width - filled, '.'), status,
               current);
    std::fflush(stderr);
    return;
  }
  const std::size_t decile = 10 * done / m_total;
  if (decile > m_last_decile || now - m_last_line > std::chrono::seconds(30) || done == m_total) {
    m_last_decile = decile;
    m_last_line = now;
    fmt::print(stderr, "progress: {}\n", status);
  }
}

void Progress::finish() {
  if (m_enabled && m_tty) {
    fmt::print(stderr, "\n");
  }
}

}  // namespace lp::sweep
