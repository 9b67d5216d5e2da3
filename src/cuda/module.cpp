#include "cuda/module.hpp"

#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/driver.hpp"
#include "util/error.hpp"

namespace lp {
namespace {

constexpr std::size_t k_log_bytes = std::size_t{64} << 10;

std::string log_text(const std::vector<char>& buffer) {
  if (buffer.empty()) {
    return {};
  }
  return std::string(buffer.data(), strnlen(buffer.data(), buffer.size()));
}

}  // namespace

Module::Module(std::string_view image) {
  const std::string terminated(image);  // std::string keeps a NUL after the bytes
  LP_CU_CHECK(driver().cuModuleLoadData(&m_module, terminated.c_str()));
}

Module::~Module() {
  if (m_module != nullptr) {
    if (const DriverApi* drv = driver_if_loaded()) {
      LP_CU_CHECK_NOEXCEPT(drv->cuModuleUnload(m_module));
    }
  }
}

Module::Module(Module&& other) noexcept : m_module(std::exchange(other.m_module, nullptr)) {}

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    Module dying(std::move(*this));
    m_module = std::exchange(other.m_module, nullptr);
  }
  return *this;
}

CUfunction Module::function(const std::string& name) const {
  CUfunction function = nullptr;
  const CUresult result = driver().cuModuleGetFunction(&function, m_module, name.c_str());
  if (result == CUDA_ERROR_NOT_FOUND) {
    throw Error(fmt::format("kernel '{}' is not in the loaded module", name));
  }
  LP_CU_CHECK(result);
  return function;
}

void launch_kernel(CUfunction function, const LaunchConfig& config, void** args, CUstream stream) {
  LP_CU_CHECK(driver().cuLaunchKernel(function, config.grid[0], config.grid[1], config.grid[2], config.block[0],
                                      config.block[1], config.block[2], config.shared_bytes, stream, args, nullptr));
}

void launch_kernel_programmatic(CUfunction function, const LaunchConfig& config, void** args, CUstream stream) {
  CUlaunchAttribute attribute{};
  attribute.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
  attribute.value.programmaticStreamSerializationAllowed = 1;
  CUlaunchConfig launch{};
  launch.gridDimX = config.grid[0];
  launch.gridDimY = config.grid[1];
  launch.gridDimZ = config.grid[2];
  launch.blockDimX = config.block[0];
  launch.blockDimY = config.block[1];
  launch.blockDimZ = config.block[2];
  launch.sharedMemBytes = config.shared_bytes;
  launch.hStream = stream;
  launch.attrs = &attribute;
  launch.numAttrs = 1;
  LP_CU_CHECK(driver().cuLaunchKernelEx(&launch, function, args, nullptr));
}

void set_max_dynamic_shared(CUfunction function, int bytes) {
  LP_CU_CHECK(driver().cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes));
}

Linker::Linker(const std::vector<JitOption>& options)
    : m_info_log(k_log_bytes, '\0'), m_error_log(k_log_bytes, '\0') {
  m_option_keys = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES, CU_JIT_ERROR_LOG_BUFFER,
                   CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES, CU_JIT_LOG_VERBOSE};
  m_option_values = {m_info_log.data(), reinterpret_cast<void*>(m_info_log.size()), m_error_log.data(),
                     reinterpret_cast<void*>(m_error_log.size()), reinterpret_cast<void*>(std::uintptr_t{1})};
  for (const JitOption& option : options) {
    m_option_keys.push_back(option.option);
    m_option_values.push_back(option.value);
  }
  LP_CU_CHECK(driver().cuLinkCreate(static_cast<unsigned>(m_option_keys.size()), m_option_keys.data(),
                                    m_option_values.data(), &m_state));
}

Linker::~Linker() {
  if (m_state != nullptr) {
    if (const DriverApi* drv = driver_if_loaded()) {
      LP_CU_CHECK_NOEXCEPT(drv->cuLinkDestroy(m_state));
    }
  }
}

Linker::Linker(Linker&& other) noexcept
    : m_state(std::exchange(other.m_state, nullptr)),
      m_info_log(std::move(other.m_info_log)),
      m_error_log(std::move(other.m_error_log)),
      m_option_keys(std::move(other.m_option_keys)),
      m_option_values(std::move(other.m_option_values)) {}

Linker& Linker::operator=(Linker&& other) noexcept {
  if (this != &other) {
    Linker dying(std::move(*this));
    m_state = std::exchange(other.m_state, nullptr);
    m_info_log = std::move(other.m_info_log);
    m_error_log = std::move(other.m_error_log);
    m_option_keys = std::move(other.m_option_keys);
    m_option_values = std::move(other.m_option_values);
  }
  return *this;
}

void Linker::add(CUjitInputType type, std::string_view data, const std::string& name) {
  const std::string terminated(data);
  // PTX must include its NUL; a cubin's size is its size.
  const std::size_t size = type == CU_JIT_INPUT_PTX ? terminated.size() + 1 : terminated.size();
  try {
    LP_CU_CHECK(driver().cuLinkAddData(m_state, type, const_cast<char*>(terminated.c_str()), size, name.c_str(), 0,
                                       nullptr, nullptr));
  } catch (const CudaError& e) {
    rethrow_with_log(e);
  }
}

void Linker::add_ptx(std::string_view ptx, const std::string& name) { add(CU_JIT_INPUT_PTX, ptx, name); }

void Linker::add_cubin(std::string_view cubin, const std::string& name) { add(CU_JIT_INPUT_CUBIN, cubin, name); }

std::string Linker::complete() {
  void* cubin = nullptr;
  std::size_t size = 0;
  try {
    LP_CU_CHECK(driver().cuLinkComplete(m_state, &cubin, &size));
  } catch (const CudaError& e) {
    rethrow_with_log(e);
  }
  return std::string(static_cast<const char*>(cubin), size);
}

std::string Linker::info_log() const { return log_text(m_info_log); }

std::string Linker::error_log() const { return log_text(m_error_log); }

void Linker::rethrow_with_log(const CudaError& e) const {
  const std::string log = error_log();
  const std::string what = log.empty() ? std::string(e.what()) : fmt::format("{}; JIT error log:\n{}", e.what(), log);
  if (const auto* sticky = dynamic_cast<const StickyCudaError*>(&e)) {
    throw StickyCudaError(sticky->api(), sticky->result(), sticky->name(), what);
  }
  throw CudaError(e.api(), e.code(), e.name(), what);
}

}  // namespace lp
