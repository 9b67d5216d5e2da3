#pragma once
// One interface per kernel family (docs/problem.md's ops: expand, shrink, the
// dual-stream lora_linear chain, fused-MoE), in the manner of CUTLASS profiler's one
// OperationProfiler per operation kind. A family says, in its own folder under
// src/families/, what its problem is (its rules, its sizes, its output), its
// tolerance, its traffic and memory, which kernels a case launches, and how the plan
// treats its axes (FamilyTraits: data the plan and the sweep read without branching
// on the family). Its device half (buffers, inputs, the cuBLAS reference, the launch
// arguments) is families/device.hpp. Every family is registered once, in registry.cpp.
//
// Nothing outside src/families/ branches on the family: it asks family_of(op).

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "model/problem.hpp"
#include "model/tolerance.hpp"

namespace lp {

struct MoeRouting;  // families/fused_moe/routing.hpp

/// Which of a job's two image slots (protocol's ImageRef expand / shrink) the image
/// of one of a case's kernels travels in.
enum class ImageSlot : std::uint8_t { expand, shrink };

/// One kernel a case of a family launches, in launch order. `kernel` names the
/// single-kernel family whose kernel it is (its launch arguments, its variants'
/// role in a kernel set): lora_linear launches a shrink, then an expand.
struct KernelLaunch {
  Op kernel;
  ImageSlot slot;
};

/// How the plan shapes a family's cases, as data (plan/plan.cpp reads it).
struct FamilyTraits {
  /// Why the op axis may not name the family ("" when it may: fused_moe is planned
  /// from a model's experts only).
  std::string_view off_op_axis_why;
  /// input_dtype is an axis of its cases (in their ids and exclude matching).
  bool input_dtype_axis = false;
  /// x is read in the weight dtype: input_dtype equals weight_dtype.
  bool input_is_weight_dtype = false;
  bool add_inputs_axis = false;  ///< y (+)= ...: add_inputs is an axis
  bool gdc_axis = false;         ///< vLLM's dual-stream chain: gdc is an axis
  bool shrink_knobs = false;     ///< the case carries shrink knobs (vLLM's SHRINK tuned file)
  bool expand_knobs = false;     ///< ... and expand knobs (its EXPAND_TRUE/FALSE file)
  /// Its slices read one x, so they have one hidden size: the reason when they do not
  /// ("" when slices may differ).
  std::string_view one_hidden_why;
  /// Its kernel casts its A operand in registers from the input dtype (the hazard's
  /// site), so the field report's remedies apply to it: block_n 32, a 16-bit input
  /// (vLLM PR #47869's bf16 buffer), 1 stage.
  bool register_a_remedies = false;
  /// x (or buf) and the weights are always of these dtypes, so those axes collapse to
  /// them (nullopt: the axis applies). The FP8 families: fp8e4m3 operands.
  std::optional<DType> fixed_input_dtype;
  std::optional<DType> fixed_weight_dtype;
  /// Its kernels take per-tensor or block-wise scales: scale_group is an axis of its
  /// cases and of its variants, which carry it instead of the dual-stream gdc/tail_ns.
  bool scale_group_axis = false;
};

/// One kernel family. Implementations live in src/families/<name>/.
class KernelFamily {
 public:
  virtual ~KernelFamily() = default;

  [[nodiscard]] virtual Op op() const noexcept = 0;
  /// "expand", "shrink", "lora_linear", "fused_moe": the op axis value and JSON key.
  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  [[nodiscard]] virtual const FamilyTraits& traits() const noexcept = 0;
  /// The kernels one case launches, in order.
  [[nodiscard]] virtual std::span<const KernelLaunch> kernels() const noexcept = 0;
  /// A one-kernel family's kernel parameters, as our Triton kernel declares them
  /// before Triton's two scratch pointers (kernels/triton/*.py; empty for a chain).
  [[nodiscard]] virtual std::span<const std::string_view> kernel_arguments() const noexcept { return {}; }

  // ---- its problem (docs/problem.md) ----
  /// Given a problem filled from a planned case as if every family had every field
  /// (hidden_in = the first slice's width, the case's input dtype and add_inputs,
  /// shrink's scale), keeps what the family has and clears or derives the rest.
  virtual void shape(Problem& p) const = 0;
  /// Calls `fail` with the first rule of the family that `p` breaks (the rules every
  /// family shares are checked by validate() before).
  virtual void check(const Problem& p, const std::function<void(const std::string&)>& fail) const = 0;
  /// What describe() adds after "op T= R= H=[...]": " H_in=...", the dtypes, ...
  [[nodiscard]] virtual std::string describe_rest(const Problem& p) const = 0;
  /// Rows of the output: T, or T * top_k routed pairs.
  [[nodiscard]] virtual std::int64_t output_rows(const Problem& p) const noexcept { return p.num_tokens; }
  /// Rows of x: T, or one per routed pair.
  [[nodiscard]] virtual std::int64_t x_rows(const Problem& p) const noexcept { return p.num_tokens; }
  /// The dtype of what it writes.
  [[nodiscard]] virtual DType output_dtype(const Problem& p) const noexcept { return p.weight_dtype; }
  /// The dtype an expand kernel casts its register A operand from.
  [[nodiscard]] virtual DType a_operand_dtype(const Problem& p) const noexcept { return p.input_dtype; }
  /// The output is buf [S, T, R] (fp32), not y.
  [[nodiscard]] virtual bool writes_buf() const noexcept { return false; }

  // ---- its measure ----
  /// The pass criterion of one case (model/tolerance.hpp's reasoning).
  [[nodiscard]] virtual Tolerance tolerance(const Problem& p) const = 0;
  /// The problems of the documented tolerance table (docs/tolerance.md), in order.
  [[nodiscard]] virtual std::vector<ToleranceRow> tolerance_rows() const { return {}; }
  /// Compulsory DRAM traffic of one launch (verify/stats.hpp's definition); a
  /// fused_moe problem's routing is `routing` when given (a case's buffers hold it).
  [[nodiscard]] virtual std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                                       const MoeRouting* routing) const = 0;
  /// An upper estimate of the device memory one case needs, before the worker's
  /// margin (worker/execute.cpp: refused with "out of memory" beyond the free memory).
  [[nodiscard]] virtual std::uint64_t device_bytes(const Problem& p) const = 0;
};

/// The family of `op`.
[[nodiscard]] const KernelFamily& family_of(Op op) noexcept;
/// Every family, in registration order.
[[nodiscard]] std::span<const KernelFamily* const> families() noexcept;
/// The family whose name (or whose one kernel's name, a kernel set variant's op) is
/// `name`; nullptr for a kernel no family launches (the two-kernel fused-MoE path's).
[[nodiscard]] const KernelFamily* family_named(std::string_view name) noexcept;

/// The runtime arguments of a kernel set variant's kernel, by its op, in signature
/// order without constexprs: a one-kernel family's own, or the two-kernel fused-MoE
/// path's ("fused_moe_shrink", "fused_moe_expand"); empty for an unknown op. A
/// variant's params are this list minus the arguments specialised to 1, plus
/// Triton's two scratch pointers (kernels/abi.hpp).
[[nodiscard]] std::span<const std::string_view> kernel_arguments(std::string_view variant_op) noexcept;

/// "expand", "shrink", "lora_linear", "fused_moe".
[[nodiscard]] std::string_view op_name(Op op) noexcept;
/// Inverse of op_name; nullopt for anything else.
[[nodiscard]] std::optional<Op> parse_op(std::string_view name) noexcept;

/// Throws lp::Error naming the first field that breaks docs/problem.md: sizes not
/// positive, T beyond int32 (the index tensors are int32), S outside 1..3, dtypes
/// outside the op's set, add_inputs / scale / split_k on an op without them, slices
/// of unequal width where one x is read, lora_of of the wrong length or out of
/// {-1..L-1}.
void validate(const Problem& problem);

/// One line for logs and failure messages: "expand T=256 R=64 H=[4096] L=1 fp32->bf16 seed=1".
[[nodiscard]] std::string describe(const Problem& problem);

/// The family's answers, for the callers that hold a problem.
[[nodiscard]] inline std::int64_t output_rows(const Problem& p) noexcept { return family_of(p.op).output_rows(p); }
[[nodiscard]] inline std::int64_t x_rows(const Problem& p) noexcept { return family_of(p.op).x_rows(p); }
[[nodiscard]] inline DType output_dtype(const Problem& p) noexcept { return family_of(p.op).output_dtype(p); }
[[nodiscard]] inline DType a_operand_dtype(const Problem& p) noexcept { return family_of(p.op).a_operand_dtype(p); }

/// What an output holds before each launch, and so whether unwritten elements can
/// be counted (verify/poison.hpp explains why).
enum class OutputInit : std::uint8_t {
  poison,  ///< the dtype's poison: unwritten elements are measurable
  y_in,    ///< ADD_INPUTS: y starts as the base output y_in; unwritten not measurable
  zero,    ///< SPLIT_K > 1 into buf: atomics add into zeros; unwritten not measurable
};
/// How the output the comparison checks (y, or buf where the family writes buf) starts.
[[nodiscard]] OutputInit output_init(const Problem& problem) noexcept;
/// True when output_init() is poison.
[[nodiscard]] inline bool unwritten_measurable(const Problem& p) noexcept { return output_init(p) == OutputInit::poison; }
/// What a problem's device tensors and cuBLAS reference are a function of: its inputs
/// (inputs_key and the seed) and how its output starts (the reference starts so too).
/// Two jobs with the same key can share both (worker/execute.hpp ProblemCache); the
/// sweep sends one key's cases back to back.
[[nodiscard]] std::string reference_key(const Problem& p);

/// Compulsory DRAM traffic of one launch of `problem`'s kernel(s), in bytes: every
/// element the op must read or write counted once (buf / x rows of live tokens, the
/// weights of the LoRAs in use, y rows written and, with ADD_INPUTS, read; for
/// lora_linear both kernels including the buf round trip; for fused_moe the x rows,
/// the A and B of each (adapter, expert) group in use, and the live pairs' rows).
/// Re-reads and the int32 metadata are not counted, so the achieved bandwidth is a
/// lower bound. A fused_moe problem's routing is `routing` when given, else built.
[[nodiscard]] inline std::uint64_t compulsory_bytes(const Problem& p, const LoraMetadata& m,
                                                    const MoeRouting* routing = nullptr) {
  return family_of(p.op).compulsory_bytes(p, m, routing);
}

/// The tolerance of `problem`. Throws lp::Error for an invalid problem.
[[nodiscard]] Tolerance tolerance_for(const Problem& problem);
/// The rows of docs/tolerance.md's table, every family's in registration order.
[[nodiscard]] std::vector<ToleranceRow> tolerance_table();

}  // namespace lp
