#pragma once
// The Python stack vLLM runs in, as loraprobe check reads it: the embedded probe
// (scripts/check/probe.py) run with the user's interpreter. It reads the vLLM, torch and
// Triton versions without importing vllm or torch, where vLLM's LoRA ops live, which ptxas
// Triton runs for sm_90 (TRITON_PTXAS_PATH honoured, asked of Triton itself) and the
// environment variables that decide which LoRA kernels vLLM builds.

#include <map>
#include <optional>
#include <string>

#include "compile/toolchain.hpp"
#include "util/json_text.hpp"

namespace lp::stack {

/// A boolean environment variable of vLLM, as vllm/envs.py reads it: bool(int(value)).
struct VllmFlag {
  std::optional<std::string> value;  ///< as set; nullopt when unset
  bool on = false;
  std::string error;  ///< set when vLLM would raise on the value (no integer)
};

/// The ptxas Triton runs for sm_90, and the ones its wheel carries.
struct TritonPtxas {
  /// The paths as the probe named them (not yet run); each described below once
  /// loraprobe checked it lies in the user's Triton or their TRITON_PTXAS_PATH names it.
  std::optional<std::string> sm90_path, bundled_path, blackwell_path;
  std::optional<compile::PtxasInfo> sm90;  ///< what Triton runs for sm_90; unset: see `error`
  std::string knob;                        ///< the variable that overrides it: TRITON_PTXAS_PATH
  bool overridden = false;                 ///< that variable is set
  std::optional<compile::PtxasInfo> bundled;            ///< backends/nvidia/bin/ptxas
  std::optional<compile::PtxasInfo> bundled_blackwell;  ///< backends/nvidia/bin/ptxas-blackwell
  std::string error;  ///< why Triton could not be asked, or a binary not run
};

/// What the probe found; a part it could not find is unset.
struct PythonStack {
  std::string python;          ///< the interpreter as asked (--python, or the default)
  std::string executable;      ///< sys.executable
  std::string python_version;  ///< "3.11.7"
  std::optional<std::string> vllm_version, vllm_dir, vllm_ops_dir;
  std::optional<std::string> torch_version;
  std::optional<std::string> triton_version, triton_dir;
  std::map<std::string, std::string> env;  ///< the LoRA- and ptxas-relevant variables that are set
  VllmFlag dual_stream;      ///< VLLM_LORA_ENABLE_DUAL_STREAM
  VllmFlag disable_pdl;      ///< VLLM_LORA_DISABLE_PDL
  VllmFlag batch_invariant;  ///< VLLM_BATCH_INVARIANT
  std::optional<std::string> tuned_folder;  ///< VLLM_TUNED_CONFIG_FOLDER
  TritonPtxas ptxas;

  [[nodiscard]] bool has_triton() const { return triton_version.has_value() && triton_dir.has_value(); }
  /// vLLM 0.34 compiles the expand with USE_GDC and launches it with PDL on sm_90 when
  /// dual-stream LoRA is on and PDL not disabled (lora_expand_op.py, utils.py supports_pdl).
  [[nodiscard]] bool use_gdc() const { return dual_stream.on && !disable_pdl.on; }
  /// "vLLM 0.34.0, torch 2.14.0, Triton 3.8.0, ptxas 12.9.86 (Triton's, for sm_90)".
  [[nodiscard]] std::string headline() const;
  /// {"python", "vllm", "torch", "triton", "env", "ptxas", ...}: the record `check --json`
  /// and `env --json` carry.
  [[nodiscard]] JsonText to_json_text() const;
};

/// The interpreter check and env ask by default: the python3 beside this executable (a
/// wheel install), else the one on PATH (tools::python_interpreter).
std::string default_python();

/// Runs the probe with `python`. Throws lp::EnvironmentError (exit 3) when the interpreter
/// cannot be run or its answer is not the probe's; the ptxas binaries it names are found
/// by loraprobe in the user's Triton and run for their version (never named by a document).
PythonStack probe_stack(const std::string& python);

/// Runs the ptxas binaries `stack.ptxas` names for their versions, where they lie in the
/// user's Triton (or their TRITON_PTXAS_PATH names them), and allows them as compilers.
void describe_stack_ptxas(PythonStack& stack);

/// The probe's JSON answer read into a stack (the ptxas paths not yet run). Throws
/// lp::InputError naming `source` and the key for an answer of another shape.
PythonStack stack_from_probe_json(std::string_view text, const std::string& source);

}  // namespace lp::stack
