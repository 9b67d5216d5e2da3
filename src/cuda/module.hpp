#pragma once
// Loaded modules and the driver's JIT linker (the `driver` compile path: PTX in,
// cubin out, and the cubin is kept so the static analysis inspects what ran).

#include <cuda.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace lp {

class CudaError;

/// Move-only owner of a CUmodule loaded into the current context.
class Module {
 public:
  /// Loads a cubin, fatbin or NUL-free PTX text with cuModuleLoadData (the bytes
  /// are copied and NUL-terminated first, which PTX needs and a cubin ignores).
  /// Loading PTX JIT-compiles it with the driver's own ptxas. Throws lp::CudaError,
  /// e.g. CUDA_ERROR_NO_BINARY_FOR_GPU for a cubin of another architecture.
  explicit Module(std::string_view image);
  ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The kernel called `name` (the mangled/entry name as in the PTX `.entry`).
  /// The handle stays valid while this Module lives. Throws lp::Error naming the
  /// kernel when it is not in the module, lp::CudaError on other failures.
  [[nodiscard]] CUfunction function(const std::string& name) const;

  [[nodiscard]] CUmodule get() const noexcept { return m_module; }

 private:
  CUmodule m_module = nullptr;
};

/// Grid, block and dynamic shared memory of one kernel launch.
struct LaunchConfig {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  unsigned shared_bytes = 0;  ///< dynamic shared memory
};

/// Launches `function` on `stream` with cuLaunchKernel; `args` holds one pointer per
/// kernel parameter, in order. Throws lp::CudaError (launch errors; faults inside
/// the kernel surface at the next synchronisation).
void launch_kernel(CUfunction function, const LaunchConfig& config, void** args, CUstream stream);

/// launch_kernel with programmatic dependent launch, as Triton's launcher does for a
/// kernel built with launch_pdl=True: cuLaunchKernelEx with the launch attribute
/// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION set, so the kernel may start
/// once every program of the previous kernel on `stream` has run
/// griddepcontrol.launch_dependents (or exited), before that kernel has finished; only
/// its griddepcontrol.wait orders its reads after the previous kernel's writes.
void launch_kernel_programmatic(CUfunction function, const LaunchConfig& config, void** args, CUstream stream);

/// Allows `function` up to `bytes` of dynamic shared memory
/// (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), needed above 48 KiB. Throws lp::CudaError.
void set_max_dynamic_shared(CUfunction function, int bytes);

/// One cuLinkCreate option and its value, passed as the driver expects (an integer
/// option's value is the integer cast to void*, see cuLinkCreate).
struct JitOption {
  CUjit_option option;
  void* value;
};

/// Move-only owner of a CUlinkState: add PTX or cubins, complete, keep the cubin.
class Linker {
 public:
  /// Creates the link state with `options` plus info and error log buffers of our
  /// own (do not pass CU_JIT_*_LOG_* options). Throws lp::CudaError.
  explicit Linker(const std::vector<JitOption>& options = {});
  ~Linker();
  Linker(Linker&& other) noexcept;
  Linker& operator=(Linker&& other) noexcept;
  Linker(const Linker&) = delete;
  Linker& operator=(const Linker&) = delete;

  /// Adds PTX text (`name` appears in the driver's messages). Throws lp::CudaError
  /// whose message includes the JIT error log (ptxas errors show up here).
  void add_ptx(std::string_view ptx, const std::string& name);
  /// Adds a cubin. Throws lp::CudaError with the error log.
  void add_cubin(std::string_view cubin, const std::string& name);
  /// Links and returns a copy of the resulting cubin (the driver's copy dies with
  /// the link state). Throws lp::CudaError with the error log.
  [[nodiscard]] std::string complete();

  /// The JIT's informational log so far (e.g. ptxas register and spill counts).
  [[nodiscard]] std::string info_log() const;
  /// The JIT's error log so far.
  [[nodiscard]] std::string error_log() const;

 private:
  void add(CUjitInputType type, std::string_view data, const std::string& name);
  [[noreturn]] void rethrow_with_log(const CudaError& e) const;

  CUlinkState m_state = nullptr;
  // The driver writes the logs into these and reads the option values for the life
  // of the link state, so they live on the heap at stable addresses (a move keeps them).
  std::vector<char> m_info_log;
  std::vector<char> m_error_log;
  std::vector<CUjit_option> m_option_keys;
  std::vector<void*> m_option_values;
};

}  // namespace lp
