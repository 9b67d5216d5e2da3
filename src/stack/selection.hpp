#pragma once
// Which kernels `loraprobe check` builds with the user's Triton: the variants vLLM
// launches for the plan (its defaults, or its tuned files, for the config's or --model's
// shapes), and beside each the neighbours that stand for the field remedies (block_n 32,
// a 16-bit LoRA input, one pipeline stage, PDL off). Variant ids are the matrix's, the same in every Triton
// set; they are resolved in the embedded set with the most variants (the full matrix).

#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"

namespace lp::stack {

/// A remedy that changes the kernel (the others change the compiler or the Triton).
enum class KernelRemedy { block_n_32, input_16bit, stages_1, pdl_off };
/// "block_n_32", "input_16bit", "stages_1", "pdl_off".
std::string_view to_string(KernelRemedy remedy);

/// A variant that stands for a remedy of a launched one.
struct Neighbour {
  KernelRemedy remedy = KernelRemedy::block_n_32;
  std::string of;  ///< the launched variant's id
  std::string id;  ///< the neighbour's id
};

struct Selection {
  std::vector<std::string> launched;    ///< what vLLM launches for the plan, in first-seen order
  std::vector<Neighbour> neighbours;    ///< the remedies' variants (each id once per remedy and launched id)
  std::vector<std::string> unavailable;  ///< planned kernels the matrix has no variant of, why
  /// Built but not judged: the sweep's own forms of launched kernels, which --run needs
  /// (the dual-stream shrink with loraprobe's TAIL_NS spin, whose launched form has none).
  std::vector<std::string> for_run;
  std::string resolved_in;               ///< the set the ids came from: "3.6.0"

  /// launched, neighbours' and for_run ids, each once, sorted: what the generator builds.
  [[nodiscard]] std::vector<std::string> ids() const;
};

/// The selection of `plan` (planned against `sets`' versions; its `triton` axis is
/// ignored: the ids are looked up in the set with the most variants). Throws lp::UsageError
/// when the plan launches nothing the matrix has.
Selection select_variants(const plan::Plan& plan, const kernels::KernelSets& sets);

/// The variant of `set` equal to `v` but for the remedy; nullptr when it has none (or the
/// remedy does not apply: a 16-bit input already, no USE_GDC).
const kernels::Variant* neighbour_of(const kernels::KernelSet& set, const kernels::Variant& v, KernelRemedy remedy);

}  // namespace lp::stack
