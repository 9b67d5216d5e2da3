#pragma once
// Error checking for every CUDA driver and cuBLAS call (after nvbench's
// NVBENCH_CUDA_CALL): a failed call throws with file:line, the error's name and
// string, and the text of the call. Sticky errors (the context is dead: illegal
// address, trap, misaligned access, launch failure...) throw StickyCudaError so a
// sweep can record the case as `fault: CUDA_ERROR_ILLEGAL_ADDRESS` and stop using
// the context. The _NOEXCEPT forms log instead of throwing; they are for
// destructors only. None of these macros ever compiles to nothing.

#include <cublas_api.h>
#include <cuda.h>

#include <string>

#include "util/error.hpp"

namespace lp {

/// Which CUDA library a failed call belongs to.
enum class CudaApi { driver, cublas };

/// A failed CUDA driver or cuBLAS call. Recorded against the case that
/// made it (an lp::Error); what() is the full one-line message.
class CudaError : public Error {
 public:
  /// api: the library; code: its numeric status; name: e.g. "CUDA_ERROR_OUT_OF_MEMORY",
  /// "CUBLAS_STATUS_NOT_SUPPORTED"; what: the full message.
  CudaError(CudaApi api, int code, std::string name, const std::string& what)
      : Error(what), m_api(api), m_code(code), m_name(std::move(name)) {}
  [[nodiscard]] CudaApi api() const noexcept { return m_api; }
  /// The numeric CUresult / cublasStatus_t.
  [[nodiscard]] int code() const noexcept { return m_code; }
  /// The symbolic name of code().
  [[nodiscard]] const std::string& name() const noexcept { return m_name; }

 private:
  CudaApi m_api;
  int m_code;
  std::string m_name;
};

/// A sticky error: the context (and with it every buffer, module and stream made
/// in it) is unusable and the process must be restarted to use this GPU again.
class StickyCudaError : public CudaError {
 public:
  StickyCudaError(CudaApi api, CUresult result, std::string name, const std::string& what)
      : CudaError(api, static_cast<int>(result), std::move(name), what), m_result(result) {}
  /// The driver error code, e.g. CUDA_ERROR_ILLEGAL_ADDRESS.
  [[nodiscard]] CUresult result() const noexcept { return m_result; }
  /// The driver name of result(), e.g. "CUDA_ERROR_ILLEGAL_ADDRESS".
  [[nodiscard]] const std::string& cu_name() const noexcept { return name(); }
  /// What a sweep records as the case's reason: "fault: CUDA_ERROR_ILLEGAL_ADDRESS".
  [[nodiscard]] std::string fault_reason() const { return "fault: " + name(); }

 private:
  CUresult m_result;
};

/// True for the driver errors after which the context cannot be used again
/// (cuda.h: "the process must be terminated and relaunched"), plus device-side
/// assert and uncorrectable ECC, which also poison the context.
[[nodiscard]] bool is_sticky(CUresult result) noexcept;

/// "CUDA_ERROR_ILLEGAL_ADDRESS" for a sticky code, from our own table (usable
/// without a loaded driver); nullptr for a code that is not sticky.
[[nodiscard]] const char* sticky_error_name(CUresult result) noexcept;

/// Name of a driver result: cuGetErrorName when the driver is loaded, else our
/// sticky table, else "CUresult <n>". Never throws.
[[nodiscard]] std::string cu_result_name(CUresult result) noexcept;

/// Description of a driver result (cuGetErrorString), or "" when unavailable. Never throws.
[[nodiscard]] std::string cu_result_string(CUresult result) noexcept;

namespace detail {

// The out-of-line halves of the macros below: build the message and throw (or log).
[[noreturn]] void throw_cu_error(CUresult result, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
void log_cu_error(CUresult result, const char* call, const char* file, int line) noexcept;
void log_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept;

}  // namespace detail
}  // namespace lp

/// Evaluates a driver API call once; on failure throws lp::CudaError (lp::StickyCudaError
/// for sticky codes) naming file:line, the CUresult and the call's text.
#define LP_CU_CHECK(call)                                                   \
  do {                                                                      \
    const CUresult lp_cu_result_ = (call);                                  \
    if (lp_cu_result_ != CUDA_SUCCESS) {                                    \
      ::lp::detail::throw_cu_error(lp_cu_result_, #call, __FILE__, __LINE__); \
    }                                                                       \
  } while (false)

/// cuBLAS twin of LP_CU_CHECK: throws lp::CudaError with the cublasStatus_t name.
#define LP_CUBLAS_CHECK(call)                                                      \
  do {                                                                             \
    const cublasStatus_t lp_cublas_status_ = (call);                               \
    if (lp_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                              \
      ::lp::detail::throw_cublas_error(lp_cublas_status_, #call, __FILE__, __LINE__); \
    }                                                                              \
  } while (false)

/// Destructor-only forms: evaluate the call, log a failure to stderr, never throw.
#define LP_CU_CHECK_NOEXCEPT(call)                                          \
  do {                                                                      \
    const CUresult lp_cu_result_ = (call);                                  \
    if (lp_cu_result_ != CUDA_SUCCESS) {                                    \
      ::lp::detail::log_cu_error(lp_cu_result_, #call, __FILE__, __LINE__); \
    }                                                                       \
  } while (false)

#define LP_CUBLAS_CHECK_NOEXCEPT(call)                                               \
  do {                                                                               \
    const cublasStatus_t lp_cublas_status_ = (call);                                 \
    if (lp_cublas_status_ != CUBLAS_STATUS_SUCCESS) {                                \
      ::lp::detail::log_cublas_error(lp_cublas_status_, #call, __FILE__, __LINE__);   \
    }                                                                                \
  } while (false)
