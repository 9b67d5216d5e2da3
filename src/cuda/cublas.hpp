#pragma once
// The cuBLAS handle used by the reference. Pedantic math is set on the handle so no
// routine may use TF32, reduced-precision reductions or other shortcuts: the
// reference must be the honest fp32-accumulated product of the operands it is given.
//
// cuBLAS is not linked: cublas_api() dlopens libcublas.so.<major> on first use, so
// only the GPU worker loads it. Loading it (with libcublasLt) costs about 0.1 s of
// start-up, which every `loraprobe` process, the sweep's parent included, paid before.

#include <cublas_v2.h>

#include <string>

#include "cuda/stream.hpp"

namespace lp {

/// The cuBLAS entry points loraprobe calls, resolved from the library.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSetPointerMode_v2) set_pointer_mode = nullptr;
  /// The cublasComputeType_t form (the header also has a C++ overload taking cudaDataType).
  cublasStatus_t (*gemm_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*,
                            const void*, cudaDataType, int, const void*, cudaDataType, int, const void*, void*,
                            cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasGetProperty) get_property = nullptr;
  decltype(&cublasGetStatusName) get_status_name = nullptr;
  decltype(&cublasGetStatusString) get_status_string = nullptr;
  std::string library;  ///< the file loaded
};

/// cuBLAS, loaded once (thread-safe). Throws lp::EnvironmentError naming the library
/// when it cannot be loaded or lacks an entry point (again on every later call).
[[nodiscard]] const CublasApi& cublas_api();

/// cublas_api() if it was loaded, else nullptr (loads nothing).
[[nodiscard]] const CublasApi* cublas_api_if_loaded() noexcept;

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
