#pragma once
// The ptxas=PATH compile path: any ptxas binary, run without a shell, with the
// options Triton used for the PTX (a kernel set's manifest records them; Triton
// 3.6's make_cubin, -lineinfo -v --gpu-name=sm_90a, for PTX of unknown origin).

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "compile/toolchain.hpp"
#include "util/error.hpp"

namespace lp::compile {

/// The options Triton 3.6 passes to ptxas for an sm_90 target (without input and
/// output): what PTX of unknown origin (a user's file) is compiled with.
std::vector<std::string> triton_ptxas_options();

/// ptxas refused the PTX only because its ISA (.version) is newer than this ptxas
/// reads: the pairing cannot compile, which is not a defect of the kernel or of the
/// compiler (report::Verdict::incompatible).
class IncompatiblePtx : public lp::Error {
 public:
  IncompatiblePtx(const std::string& what, std::string reason) : lp::Error(what), m_reason(std::move(reason)) {}
  /// "the PTX is .version 9.4; ptxas 13.0.88 reads up to 9.0"
  [[nodiscard]] const std::string& reason() const noexcept { return m_reason; }

 private:
  std::string m_reason;
};

/// A cubin ptxas built, and how.
struct PtxasOutput {
  std::string cubin;              ///< ELF bytes
  std::string log;                ///< ptxas -v output (registers, spills, shared memory)
  std::vector<std::string> argv;  ///< the command as run, temporary paths included
  double ms = 0.0;                ///< wall time
};

/// Compiles `ptx` with `ptxas` and `options` (default: triton_ptxas_options()). `name`
/// names the variant in errors. Throws lp::Error with the ptxas log when it fails or
/// exceeds `timeout`; IncompatiblePtx when it refused the PTX's .version alone.
PtxasOutput compile_with_ptxas(const PtxasInfo& ptxas, std::string_view ptx, const std::string& name,
                               const std::vector<std::string>& options = triton_ptxas_options(),
                               std::chrono::milliseconds timeout = std::chrono::minutes(5));

}  // namespace lp::compile
