#pragma once
// The cuBLAS handle used by the reference. Pedantic math is set on the handle so no
// routine may use TF32, reduced-precision reductions or other shortcuts: the
// reference must be the honest fp32-accumulated product of the operands it is given.

#include <cublas_v2.h>

#include <string>

#include "cuda/stream.hpp"

namespace lp {

/// Move-only owner of a cublasHandle_t bound to one stream, in pedantic math mode,
/// host pointer mode (alpha and beta are host scalars).
class CublasHandle {
 public:
  /// Creates the handle in the current context and binds it to `stream` (which must
  /// outlive the handle). Throws lp::CudaError (CUBLAS_STATUS_NOT_INITIALIZED when
  /// there is no usable GPU).
  explicit CublasHandle(const Stream& stream);
  ~CublasHandle();
  CublasHandle(CublasHandle&& other) noexcept;
  CublasHandle& operator=(CublasHandle&& other) noexcept;
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;

  [[nodiscard]] cublasHandle_t get() const noexcept { return m_handle; }
  [[nodiscard]] cudaStream_t stream() const noexcept { return m_stream; }

 private:
  cublasHandle_t m_handle = nullptr;
  cudaStream_t m_stream = nullptr;
};

/// Version of the libcublas actually loaded, "major.minor.patch" (cublasGetProperty;
/// no GPU needed). Throws lp::CudaError.
[[nodiscard]] std::string cublas_library_version();

/// Version of the cuBLAS headers this binary was built with, "major.minor.patch".
[[nodiscard]] std::string cublas_header_version();

}  // namespace lp
