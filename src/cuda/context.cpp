#include "cuda/context.hpp"

#include <utility>

#include "cuda/check.hpp"
#include "cuda/driver.hpp"

namespace lp {

PrimaryContext::PrimaryContext(int ordinal) : m_ordinal(ordinal) {
  const DriverApi& drv = driver();
  LP_CU_CHECK(drv.cuDeviceGet(&m_device, ordinal));
  LP_CU_CHECK(drv.cuDevicePrimaryCtxRetain(&m_context, m_device));
  try {
    make_current();
  } catch (...) {
    release();
    throw;
  }
}

PrimaryContext::~PrimaryContext() { release(); }

PrimaryContext::PrimaryContext(PrimaryContext&& other) noexcept
    : m_ordinal(std::exchange(other.m_ordinal, -1)),
      m_device(std::exchange(other.m_device, 0)),
      m_context(std::exchange(other.m_context, nullptr)) {}

PrimaryContext& PrimaryContext::operator=(PrimaryContext&& other) noexcept {
  if (this != &other) {
    release();
    m_ordinal = std::exchange(other.m_ordinal, -1);
    m_device = std::exchange(other.m_device, 0);
    m_context = std::exchange(other.m_context, nullptr);
  }
  return *this;
}

void PrimaryContext::make_current() const { LP_CU_CHECK(driver().cuCtxSetCurrent(m_context)); }

void PrimaryContext::synchronize() const {
  make_current();
  LP_CU_CHECK(driver().cuCtxSynchronize());
}

void PrimaryContext::release() noexcept {
  if (m_context == nullptr) {
    return;
  }
  if (const DriverApi* drv = driver_if_loaded()) {
    LP_CU_CHECK_NOEXCEPT(drv->cuDevicePrimaryCtxRelease(m_device));
  }
  m_context = nullptr;
}

}  // namespace lp
