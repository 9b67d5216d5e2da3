#include "cuda/memory.hpp"

#include <utility>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/driver.hpp"
#include "util/error.hpp"

namespace lp {

DeviceBuffer::DeviceBuffer(std::size_t bytes) {
  if (bytes > 0) {
    LP_CU_CHECK(driver().cuMemAlloc(&m_ptr, bytes));
    m_bytes = bytes;
  }
}

DeviceBuffer::DeviceBuffer(std::size_t bytes, const Stream& stream) : m_stream(stream.get()) {
  if (bytes > 0) {
    LP_CU_CHECK(driver().cuMemAllocAsync(&m_ptr, bytes, m_stream));
    m_bytes = bytes;
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (m_ptr != 0) {
    if (const DriverApi* drv = driver_if_loaded()) {
      if (m_stream != nullptr) {
        LP_CU_CHECK_NOEXCEPT(drv->cuMemFreeAsync(m_ptr, m_stream));
      } else {
        LP_CU_CHECK_NOEXCEPT(drv->cuMemFree(m_ptr));
      }
    }
  }
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_ptr(std::exchange(other.m_ptr, 0)),
      m_bytes(std::exchange(other.m_bytes, 0)),
      m_stream(std::exchange(other.m_stream, nullptr)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    DeviceBuffer dying(std::move(*this));
    m_ptr = std::exchange(other.m_ptr, 0);
    m_bytes = std::exchange(other.m_bytes, 0);
    m_stream = std::exchange(other.m_stream, nullptr);
  }
  return *this;
}

PinnedHostBuffer::PinnedHostBuffer(std::size_t bytes) {
  if (bytes > 0) {
    void* p = nullptr;
    LP_CU_CHECK(driver().cuMemAllocHost(&p, bytes));
    m_data = static_cast<std::byte*>(p);
    m_bytes = bytes;
  }
}

PinnedHostBuffer::~PinnedHostBuffer() {
  if (m_data != nullptr) {
    if (const DriverApi* drv = driver_if_loaded()) {
      LP_CU_CHECK_NOEXCEPT(drv->cuMemFreeHost(m_data));
    }
  }
}

PinnedHostBuffer::PinnedHostBuffer(PinnedHostBuffer&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}

PinnedHostBuffer& PinnedHostBuffer::operator=(PinnedHostBuffer&& other) noexcept {
  if (this != &other) {
    PinnedHostBuffer dying(std::move(*this));
    m_data = std::exchange(other.m_data, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

namespace {

CUmemoryPool current_device_pool() {
  CUdevice device = 0;
  LP_CU_CHECK(driver().cuCtxGetDevice(&device));
  CUmemoryPool pool = nullptr;
  LP_CU_CHECK(driver().cuDeviceGetDefaultMemPool(&pool, device));
  return pool;
}

}  // namespace

void keep_freed_device_memory() {
  cuuint64_t threshold = ~cuuint64_t{0};
  LP_CU_CHECK(driver().cuMemPoolSetAttribute(current_device_pool(), CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
}

void release_kept_device_memory(const Stream& stream) {
  stream.synchronize();
  LP_CU_CHECK(driver().cuMemPoolTrimTo(current_device_pool(), 0));
}

void DeviceBuffer::check_view(std::size_t size, std::size_t align) const {
  if (m_bytes % size != 0) {
    throw Error(fmt::format("device buffer of {} bytes viewed as {}-byte elements: not a whole number of them",
                            m_bytes, size));
  }
  if (m_ptr % align != 0) {
    throw Error(fmt::format("device buffer at {:#x} viewed as elements aligned to {} bytes", m_ptr, align));
  }
}

void DeviceBuffer::check_fits(std::size_t bytes, const char* what) const {
  if (bytes > m_bytes) {
    throw Error(fmt::format("{} of {} bytes into a device buffer of {} bytes", what, bytes, m_bytes));
  }
}

void DeviceBuffer::copy_from_host(const void* src, std::size_t bytes, const Stream& stream) {
  check_fits(bytes, "host-to-device copy");
  if (bytes > 0) {
    LP_CU_CHECK(driver().cuMemcpyHtoDAsync(m_ptr, src, bytes, stream.get()));
  }
}

void DeviceBuffer::copy_to_host(void* dst, std::size_t bytes, const Stream& stream) const {
  check_fits(bytes, "device-to-host copy");
  if (bytes > 0) {
    LP_CU_CHECK(driver().cuMemcpyDtoHAsync(dst, m_ptr, bytes, stream.get()));
  }
}

void DeviceBuffer::copy_from(const DeviceBuffer& src, const Stream& stream) {
  if (src.m_bytes != m_bytes) {
    throw Error(fmt::format("device-to-device copy of {} bytes into a buffer of {} bytes", src.m_bytes, m_bytes));
  }
  if (m_bytes > 0) {
    LP_CU_CHECK(driver().cuMemcpyDtoDAsync(m_ptr, src.m_ptr, m_bytes, stream.get()));
  }
}

void DeviceBuffer::fill_u8(std::uint8_t value, const Stream& stream) {
  if (m_bytes > 0) {
    LP_CU_CHECK(driver().cuMemsetD8Async(m_ptr, value, m_bytes, stream.get()));
  }
}

void DeviceBuffer::fill_u16(std::uint16_t value, const Stream& stream) {
  check_view(sizeof(std::uint16_t), alignof(std::uint16_t));
  if (m_bytes > 0) {
    LP_CU_CHECK(driver().cuMemsetD16Async(m_ptr, value, m_bytes / sizeof(std::uint16_t), stream.get()));
  }
}

void DeviceBuffer::fill_u32(std::uint32_t value, const Stream& stream) {
  check_view(sizeof(std::uint32_t), alignof(std::uint32_t));
  if (m_bytes > 0) {
    LP_CU_CHECK(driver().cuMemsetD32Async(m_ptr, value, m_bytes / sizeof(std::uint32_t), stream.get()));
  }
}

void DeviceBuffer::fill_u32(std::uint32_t value, std::size_t offset, std::size_t bytes, const Stream& stream) {
  if (offset % sizeof(std::uint32_t) != 0 || bytes % sizeof(std::uint32_t) != 0 || m_ptr % alignof(std::uint32_t) != 0) {
    throw Error(fmt::format("32-bit fill of {} bytes at byte {}: not whole aligned words", bytes, offset));
  }
  check_fits(offset + bytes, "32-bit fill");
  if (bytes > 0) {
    LP_CU_CHECK(driver().cuMemsetD32Async(m_ptr + offset, value, bytes / sizeof(std::uint32_t), stream.get()));
  }
}

}  // namespace lp
