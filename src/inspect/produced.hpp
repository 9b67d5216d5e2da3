#pragma once
// The gdc-early-read contract of a user's kernel: which of its parameters the
// previous grid of a programmatic-dependent-launch chain writes (ptx/early_read.hpp).
// A kernel-set variant's comes from its manifest (`produced`); a user's file's from
// --produced, else from the embedded sets' contract for a kernel of the same name
// (vLLM's `_lora_expand_kernel` reads `input_ptr`, the shrink's buffer). Names become
// PTX parameter ordinals through the Triton cache's `.ttir` beside the file: its
// `tt.func` signature lists the runtime parameters in PTX order (constexprs and
// equal-to-1 arguments are not parameters). Without one, the contract's names take
// the ordinal they have in every embedded variant of that kernel (input_ptr: 0); a
// --produced name needs the .ttir. An ordinal may be given directly.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_sets.hpp"

namespace lp::inspect {

/// The kernel name and the parameter names of the first `tt.func public` in a .ttir,
/// in order; empty names when there is none or it cannot be read.
struct TtirSignature {
  std::string kernel;
  std::vector<std::string> params;
};
TtirSignature ttir_signature(std::string_view ttir);

/// What a file's kernel is checked for.
struct ProducedParams {
  std::map<int, std::string> produced;  ///< ordinal -> name; empty: nothing to look for
  /// Why the check cannot run although the PTX waits (no contract, no names); empty otherwise.
  std::string not_checked;
};

/// The produced parameters of the kernel in `path` (a cubin or PTX whose PTX text is
/// `ptx`; null when unknown). `flag`: --produced (names or ordinals), empty when not
/// given. Reads `<path without extension>.ttir` when there is one (bounded).
ProducedParams produced_for_file(const std::string& path, const std::string* ptx, const std::vector<std::string>& flag,
                                 const kernels::KernelSets& sets);

}  // namespace lp::inspect
