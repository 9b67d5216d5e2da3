#include "cuda/stream.hpp"

#include <utility>

#include "cuda/check.hpp"
#include "cuda/driver.hpp"

namespace lp {

Stream::Stream() { LP_CU_CHECK(driver().cuStreamCreate(&m_stream, CU_STREAM_NON_BLOCKING)); }

Stream::~Stream() {
  if (m_stream != nullptr) {
    if (const DriverApi* drv = driver_if_loaded()) {
      LP_CU_CHECK_NOEXCEPT(drv->cuStreamDestroy(m_stream));
    }
  }
}

Stream::Stream(Stream&& other) noexcept : m_stream(std::exchange(other.m_stream, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    Stream dying(std::move(*this));
    m_stream = std::exchange(other.m_stream, nullptr);
  }
  return *this;
}

void Stream::synchronize() const { LP_CU_CHECK(driver().cuStreamSynchronize(m_stream)); }

StreamDrain::~StreamDrain() {
  if (m_stream == nullptr) {
    return;
  }
  if (const DriverApi* drv = driver_if_loaded()) {
    LP_CU_CHECK_NOEXCEPT(drv->cuStreamSynchronize(m_stream));
  }
}

Event::Event() { LP_CU_CHECK(driver().cuEventCreate(&m_event, CU_EVENT_DEFAULT)); }

Event::~Event() {
  if (m_event != nullptr) {
    if (const DriverApi* drv = driver_if_loaded()) {
      LP_CU_CHECK_NOEXCEPT(drv->cuEventDestroy(m_event));
    }
  }
}

Event::Event(Event&& other) noexcept : m_event(std::exchange(other.m_event, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    Event dying(std::move(*this));
    m_event = std::exchange(other.m_event, nullptr);
  }
  return *this;
}

void Event::record(const Stream& stream) const { LP_CU_CHECK(driver().cuEventRecord(m_event, stream.get())); }

void Event::synchronize() const { LP_CU_CHECK(driver().cuEventSynchronize(m_event)); }

float elapsed_ms(const Event& start, const Event& stop) {
  stop.synchronize();
  float ms = 0.0f;
  LP_CU_CHECK(driver().cuEventElapsedTime(&ms, start.get(), stop.get()));
  return ms;
}

}  // namespace lp
