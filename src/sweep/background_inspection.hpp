#pragma once
// The static inspection of a sweep's images (SASS and PTX, batched: sass/batch.hpp),
// in a thread beside the GPU work: it needs only the CPU and the cubins, so the
// controls and the cases run while it does, and their final records wait for it.

#include <cstddef>
#include <functional>
#include <future>
#include <optional>
#include <string>

#include "sweep/images.hpp"

namespace lp::sweep {

class BackgroundInspection {
 public:
  /// `joined` is called once, when the inspection has been joined: from then on the
  /// images' findings may be read (the report's environment names the inspection cache).
  BackgroundInspection(ImageSet& images, std::function<void()> joined)
      : m_images(images), m_joined(std::move(joined)) {}

  /// Inspects every image in a thread of its own, on `threads` threads.
  void start(const std::optional<std::string>& nvdisasm, std::size_t threads);
  /// Joins the inspection (once; later calls return at once), then calls `joined` and
  /// warns when the inspection was unavailable. Rethrows what the inspection threw
  /// (lp::Interrupted).
  void await();

  double seconds() const { return m_seconds; }       ///< the inspection's own time
  double wait_seconds() const { return m_wait_s; }  ///< how long the sweep waited for it

 private:
  ImageSet& m_images;
  std::function<void()> m_joined;
  std::future<std::string> m_inspection;  ///< its problem, empty when it ran
  double m_seconds = 0.0;
  double m_wait_s = 0.0;
};

}  // namespace lp::sweep
