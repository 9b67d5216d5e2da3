#pragma once
// What `loraprobe check` answers: is the stack this Python runs affected, by which
// kernels and whose fault, and which remedies were verified by compiling the same kernels
// with them. Decided once from the inspection of the built kernels; every format (text,
// JSON, Markdown, JUnit) draws this one record.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/toolchain.hpp"
#include "formats/document.hpp"
#include "inspect/inspector.hpp"
#include "kernels/kernel_set.hpp"
#include "stack/probe.hpp"
#include "stack/selection.hpp"
#include "util/json_text.hpp"

namespace lp::stack {

enum class Verdict { clean, affected, cannot_tell };
std::string_view to_string(Verdict verdict);  ///< "clean", "affected", "cannot_tell"
std::string_view verdict_word(Verdict verdict);  ///< the answer's word: "CLEAN", "AFFECTED", "CANNOT TELL"
/// The exit code of the verdict: 0 clean, 1 affected, 3 cannot tell.
int exit_code_of(Verdict verdict);

/// One kernel vLLM launches, built with the user's Triton and inspected.
struct KernelAnswer {
  std::string variant;  ///< the matrix id
  std::string label;    ///< "expand fp32->bf16, 1 slice, block_n 128, 2 stages"
  std::string source;   ///< the file and function it was built from
  std::string status;   ///< "hazard", "clean", "error", "not built"
  std::size_t findings = 0;     ///< wgmma register-hazard findings in the SASS Triton built
  std::size_t early_reads = 0;  ///< gdc-early-read findings (loads of the shrink's buffer before the wait)
  std::string made_by;          ///< of the findings: "ptx", "ptxas", or "" (not known)
  std::string early_made_by;    ///< of the early reads, likewise
  std::string error;            ///< why, for "error" and "not built"
  /// With --run: what the sweep of its image saw ("FAIL: 13696 NaN ..."); empty without.
  std::string run;
};

enum class RemedyStatus { verified, does_not_fix, not_verified };
std::string_view to_string(RemedyStatus status);  ///< "verified", "does_not_fix", "not_verified"

/// A change the user can make, and what compiling with it showed.
struct Remedy {
  std::string id;        ///< "ptxas_beside_triton", "ptxas_pip", "triton_upgrade", "disable_pdl", ...
  std::string fixes;     ///< "wgmma register hazard" or "gdc early read"
  std::string what;      ///< one line, the change
  std::string how;       ///< the command or setting (shell-ready where it is one)
  RemedyStatus status = RemedyStatus::not_verified;
  std::string evidence;  ///< what was compiled and found, or why it was not verified
};

/// A ptxas the check compiled the same PTX with, to verify a remedy.
struct RemedyPtxas {
  std::string label;        ///< the compiler's label in the inspect results: "ptxas=/path/ptxas-blackwell"
  compile::PtxasInfo info;
  std::string origin;       ///< "beside Triton's ptxas", "installed (.tools)", "the CUDA toolkit"
};

/// Everything the answer is decided from.
struct CheckInputs {
  PythonStack stack;
  Selection selection;
  const kernels::KernelSet* built = nullptr;  ///< the kernels built with the user's Triton
  std::string kernels_source;                 ///< "vLLM 0.34.0's own (...)" or "loraprobe's vLLM-shaped"
  std::vector<inspect::InspectResult> results;  ///< the built set under prebuilt and every RemedyPtxas
  std::vector<RemedyPtxas> ptxas;
  /// The embedded set of the newest Triton, standing for "upgrade Triton", and its
  /// prebuilt results for the launched variants; unset when the user runs it (or newer).
  std::optional<std::string> upgrade_triton;
  std::string upgrade_ptxas;  ///< its bundled ptxas's version
  std::vector<inspect::InspectResult> upgrade_results;
};

struct CheckAnswer {
  PythonStack stack;
  Verdict verdict = Verdict::cannot_tell;
  std::string sentence;  ///< "AFFECTED. vLLM's fp32 LoRA expand ... (made by ptxas)."
  std::string kernels_source;
  std::vector<KernelAnswer> kernels;
  std::vector<Remedy> remedies;
  std::vector<std::string> notes;  ///< what was not checked, and why
  double build_seconds = 0.0;
  /// This host's GPU and driver ("NVIDIA H100 80GB HBM3, sm_90, driver 580.159.04"), or
  /// "none (why)": the static answer needs none; --run does.
  std::string gpu;

  /// The first line of every format: "<stack>: AFFECTED. ...".
  [[nodiscard]] std::string headline() const;
  [[nodiscard]] int exit_code() const { return exit_code_of(verdict); }
};

/// The answer of `in`.
CheckAnswer decide(const CheckInputs& in);

/// Folds the cases of check --run's sweep report into `answer`: each kernel's run line,
/// and a FAIL of a launched kernel makes the stack affected whatever the SASS said.
void fold_run(CheckAnswer& answer, const formats::Document& report, const std::string& path);

/// The answer when nothing could be built or inspected: cannot tell, and why.
CheckAnswer cannot_tell(PythonStack stack, std::string why);

/// "expand fp32->bf16, 1 slice, block_n 128, 2 stages" (with ", PDL" for a USE_GDC one).
std::string kernel_label(const kernels::Variant& v);

// The formats (check_text.cpp; JSON in check_json.cpp). Values from the user's machine
// are escaped by each for its language.
std::string answer_text(const CheckAnswer& a);      ///< the terminal's, not yet escaped
std::string answer_markdown(const CheckAnswer& a);  ///< for a bug report
std::string answer_junit(const CheckAnswer& a);     ///< one testcase per kernel
/// The document of configs/schema/check.schema.json.
JsonText answer_json(const CheckAnswer& a, const std::vector<std::string>& argv);
/// The schema version the document carries.
std::string_view check_schema_version();

}  // namespace lp::stack
