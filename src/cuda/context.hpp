#pragma once
// The device's primary context, retained for the lifetime of the object. The
// primary context is the one cuBLAS uses, so driver-loaded modules and cuBLAS
// share buffers and streams.

#include <cuda.h>

namespace lp {

/// Move-only owner of one retain of a device's primary context.
class PrimaryContext {
 public:
  /// Retains the primary context of device `ordinal` (0-based, as cuDeviceGet counts)
  /// and makes it current on the calling thread. Throws lp::Error when init_driver()
  /// has not run, lp::CudaError when the ordinal is invalid or the retain fails.
  explicit PrimaryContext(int ordinal);
  ~PrimaryContext();
  PrimaryContext(PrimaryContext&& other) noexcept;
  PrimaryContext& operator=(PrimaryContext&& other) noexcept;
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;

  /// Makes this context current on the calling thread (each thread that uses CUDA
  /// must do this once). Throws lp::CudaError.
  void make_current() const;
  /// Waits for all work in the context. Throws lp::CudaError (StickyCudaError after a fault).
  void synchronize() const;

  [[nodiscard]] CUcontext get() const noexcept { return m_context; }
  [[nodiscard]] CUdevice device() const noexcept { return m_device; }
  [[nodiscard]] int ordinal() const noexcept { return m_ordinal; }

 private:
  void release() noexcept;

  int m_ordinal = -1;
  CUdevice m_device = 0;
  CUcontext m_context = nullptr;
};

}  // namespace lp
