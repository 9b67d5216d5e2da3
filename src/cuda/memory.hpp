#pragma once
// Device memory: one owning buffer type with its size in bytes, and typed views.

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda/stream.hpp"

namespace lp {

/// A typed, non-owning view of device memory: `size` elements of T at `data`.
/// Valid only while the DeviceBuffer it came from lives.
template <class T>
struct DeviceSpan {
  T* data = nullptr;
  std::size_t size = 0;
  [[nodiscard]] std::size_t bytes() const noexcept { return size * sizeof(T); }
};

/// Move-only owner of one device allocation in the current context. An empty
/// buffer (size 0, default-constructed or moved-from) holds no allocation.
/// Either plain (cuMemAlloc/cuMemFree, which waits for the device) or stream-ordered
/// (cuMemAllocAsync/cuMemFreeAsync on one stream, from the device's memory pool):
/// a case's buffers are the latter, so that freeing them neither waits nor returns
/// the memory to the system, and the next case gets it back at once.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` bytes (0 is allowed and allocates nothing). Contents are
  /// undefined. Throws lp::CudaError (CUDA_ERROR_OUT_OF_MEMORY when it does not fit).
  explicit DeviceBuffer(std::size_t bytes);
  /// Allocates `bytes` stream-ordered on `stream`: usable by work queued on it from
  /// now, freed in its order when the buffer dies (the stream must outlive it).
  DeviceBuffer(std::size_t bytes, const Stream& stream);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  [[nodiscard]] CUdeviceptr get() const noexcept { return m_ptr; }
  [[nodiscard]] std::size_t bytes() const noexcept { return m_bytes; }
  [[nodiscard]] bool empty() const noexcept { return m_bytes == 0; }
  /// The address as a raw pointer, for runtime kernel launches.
  [[nodiscard]] void* raw() const noexcept { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(m_ptr)); }

  /// The buffer as elements of T. Throws lp::Error when the size is not a multiple
  /// of sizeof(T) (a typed view must never straddle the end).
  template <class T>
  [[nodiscard]] DeviceSpan<T> view() const {
    check_view(sizeof(T), alignof(T));
    return DeviceSpan<T>{static_cast<T*>(raw()), m_bytes / sizeof(T)};
  }

  /// Asynchronous copies and fills on `stream`. Sizes are in bytes and must fit
  /// (lp::Error otherwise). Host memory may be pageable; the driver then stages it
  /// and the call returns once the host side may be reused.
  void copy_from_host(const void* src, std::size_t bytes, const Stream& stream);
  void copy_to_host(void* dst, std::size_t bytes, const Stream& stream) const;
  /// Copies all of `src` (same size required) device to device.
  void copy_from(const DeviceBuffer& src, const Stream& stream);
  /// Fills every byte / 16-bit / 32-bit word with `value`; the size must be a
  /// multiple of the word size. Throws lp::Error / lp::CudaError.
  void fill_u8(std::uint8_t value, const Stream& stream);
  void fill_u16(std::uint16_t value, const Stream& stream);
  void fill_u32(std::uint32_t value, const Stream& stream);
  /// fill_u32 over `bytes` bytes from byte `offset` (both multiples of 4, inside the buffer).
  void fill_u32(std::uint32_t value, std::size_t offset, std::size_t bytes, const Stream& stream);

 private:
  void check_view(std::size_t size, std::size_t align) const;
  void check_fits(std::size_t bytes, const char* what) const;

  CUdeviceptr m_ptr = 0;
  std::size_t m_bytes = 0;
  CUstream m_stream = nullptr;  ///< set for a stream-ordered allocation
};

/// Move-only owner of page-locked host memory (cuMemAllocHost) in the current
/// context. Copies between it and the device are truly asynchronous: one into it
/// from the device is queued and returns at once, where a copy into pageable memory
/// waits for the whole stream. Contents are undefined after allocation. Freeing it
/// may wait for the device, so a worker keeps its few for its whole life.
class PinnedHostBuffer {
 public:
  PinnedHostBuffer() = default;
  /// Allocates `bytes` (0 allocates nothing). Throws lp::CudaError.
  explicit PinnedHostBuffer(std::size_t bytes);
  ~PinnedHostBuffer();
  PinnedHostBuffer(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer& operator=(PinnedHostBuffer&& other) noexcept;
  PinnedHostBuffer(const PinnedHostBuffer&) = delete;
  PinnedHostBuffer& operator=(const PinnedHostBuffer&) = delete;

  [[nodiscard]] std::byte* data() const noexcept { return m_data; }
  [[nodiscard]] std::size_t bytes() const noexcept { return m_bytes; }

 private:
  std::byte* m_data = nullptr;
  std::size_t m_bytes = 0;
};

/// The current device's memory pool keeps what stream-ordered buffers free (no
/// release threshold), so a sweep's cases reuse memory instead of asking the
/// driver for it case after case. Throws lp::CudaError.
void keep_freed_device_memory();

/// Hands the memory the pool keeps back to the device (after waiting for `stream`),
/// so that cuMemGetInfo counts it as free again. Throws lp::CudaError.
void release_kept_device_memory(const Stream& stream);

/// A new stream-ordered device buffer holding a copy of `values`, copied on `stream`.
/// `values` may die once this returns: a copy from pageable memory is staged before
/// the call returns. Throws lp::CudaError.
template <class T>
[[nodiscard]] DeviceBuffer upload(std::span<const T> values, const Stream& stream) {
  static_assert(std::is_trivially_copyable_v<T>);
  DeviceBuffer buffer(values.size_bytes(), stream);
  buffer.copy_from_host(values.data(), values.size_bytes(), stream);
  return buffer;
}

/// The whole buffer as host elements of T (waits for `stream`). Throws lp::Error
/// when the size is not a multiple of sizeof(T), lp::CudaError on failure.
template <class T>
[[nodiscard]] std::vector<T> download(const DeviceBuffer& buffer, const Stream& stream) {
  static_assert(std::is_trivially_copyable_v<T>);
  const DeviceSpan<T> span = buffer.view<T>();
  std::vector<T> out(span.size);
  buffer.copy_to_host(out.data(), span.bytes(), stream);
  stream.synchronize();
  return out;
}

}  // namespace lp
