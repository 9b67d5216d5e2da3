#include "cuda/cublas.hpp"

#include <library_types.h>

#include <utility>

#include <fmt/format.h>

#include "cuda/check.hpp"

namespace lp {

CublasHandle::CublasHandle(const Stream& stream) : m_stream(stream.runtime()) {
  LP_CUBLAS_CHECK(cublasCreate(&m_handle));
  try {
    LP_CUBLAS_CHECK(cublasSetStream(m_handle, m_stream));
    LP_CUBLAS_CHECK(cublasSetMathMode(m_handle, CUBLAS_PEDANTIC_MATH));
    LP_CUBLAS_CHECK(cublasSetPointerMode(m_handle, CUBLAS_POINTER_MODE_HOST));
  } catch (...) {
    LP_CUBLAS_CHECK_NOEXCEPT(cublasDestroy(m_handle));
    m_handle = nullptr;
    throw;
  }
}

CublasHandle::~CublasHandle() {
  if (m_handle != nullptr) {
    LP_CUBLAS_CHECK_NOEXCEPT(cublasDestroy(m_handle));
  }
}

CublasHandle::CublasHandle(CublasHandle&& other) noexcept
    : m_handle(std::exchange(other.m_handle, nullptr)), m_stream(std::exchange(other.m_stream, nullptr)) {}

CublasHandle& CublasHandle::operator=(CublasHandle&& other) noexcept {
  if (this != &other) {
    CublasHandle dying(std::move(*this));
    m_handle = std::exchange(other.m_handle, nullptr);
    m_stream = std::exchange(other.m_stream, nullptr);
  }
  return *this;
}

std::string cublas_library_version() {
  int major = 0;
  int minor = 0;
  int patch = 0;
  LP_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  LP_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  LP_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  return fmt::format("{}.{}.{}", major, minor, patch);
}

std::string cublas_header_version() {
  return fmt::format("{}.{}.{}", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
}

}  // namespace lp
