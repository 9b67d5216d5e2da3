#pragma once
// What running a planned case takes, and how its outcome becomes a case record.
// The plan's cases and the controls are entries alike: each names the images it
// needs (registered in the run's ImageSet) and the job a worker runs.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"
#include "protocol/protocol.hpp"
#include "report/report.hpp"
#include "sweep/case_variants.hpp"
#include "sweep/images.hpp"

namespace lp::sweep {

/// One planned case (or control) and what running it takes.
struct Entry {
  const plan::Case* plan_case = nullptr;
  protocol::Job job;
  std::vector<std::string> image_keys;  ///< shrink first, then expand
  std::string variant_label;            ///< the variant id(s) for the report
  std::string skip_reason;              ///< set when it cannot run (no variant)
  /// The expand image's amplification (the case's `amplify`), 0 for none. Its pairs
  /// reach the job (problem.amplify, for the tolerance) once settle_amplification
  /// knows whether the transform changed the PTX.
  int amplify = 0;
};

/// A problem's seed: the config seed mixed with what its inputs are a function of
/// (inputs_key, model/problem.hpp), so every case of one problem, whatever its variant,
/// compiler or Triton set, gets the same inputs, and two problems different ones.
std::uint64_t problem_seed(std::uint64_t config_seed, const Problem& p);

/// The host model of a planned case, seeded by problem_seed.
Problem problem_of(const plan::Case& c, std::uint64_t config_seed);

/// The --test-hook role that runs a gdc case's expand without its wait (the gdc-off
/// variant of the same config, still launched with programmatic dependent launch).
inline constexpr std::string_view k_hook_pdl_no_wait = "pdl_no_wait";

/// One entry per case of `plan`, in plan order: the variant(s) each needs, looked
/// up in its Triton's set and registered in `images`. `test_hooks` (plan index ->
/// role) replaces a case's expand kernel by a kernel that misbehaves on purpose
/// (k_hook_pdl_no_wait: a gdc case's expand without its wait); lp::UsageError when a
/// set has no variant of that role.
std::vector<Entry> plan_entries(const plan::Plan& plan, const plan::SweepConfig& config,
                                const kernels::KernelSets& sets, ImageSet& images,
                                const std::map<std::size_t, std::string>& test_hooks);

/// Once `images` were built (their PTX amplified): each amplified entry's job gets
/// the pairs its expand kernel really has (0 where the transform left the PTX as it
/// was), which its tolerance accounts for (model/tolerance.hpp, "amplify_pairs").
void settle_amplification(std::vector<Entry>& entries, const ImageSet& images);

/// The controls of one Triton set: the positive control (raw fp32 bits fed to the
/// dot as bf16 pairs: must FAIL) and the negative control (bf16 input, vLLM's
/// default: must PASS), each an expand of 512 tokens at rank 64 under prebuilt.
/// Their cases are synthesised into `cases` (indices from `first_index` on, past
/// the plan) and their images registered in `images`, like any planned case's.
struct ControlEntries {
  std::string triton;
  Entry positive;
  Entry negative;
};
ControlEntries control_entries(const kernels::KernelSet& set, std::uint64_t config_seed, std::size_t first_index,
                               std::vector<std::unique_ptr<plan::Case>>& cases, ImageSet& images);

/// The amplified controls of a run with amplify D > 0 (docs/amplify.md): statically clean
/// images that do have a register-A wgmma, run amplified by `pairs`; each must PASS,
/// or the run is invalid. `role` is "block_n_32" (the field workaround, vLLM's default
/// expand at block_n 32, fp32 input) of `set`, or "fixed_default" (vLLM's default
/// expand, fp32 input, of the Triton 3.9 set, whose bundled ptxas keeps the A copies),
/// compiled by `compiler`. Nullopt with `why` when `set` has no such variant.
std::optional<Entry> amplified_control_entry(const kernels::KernelSet& set, const std::string& role,
                                             const compile::Compiler& compiler, int amplify,
                                             std::uint64_t config_seed, std::size_t index,
                                             std::vector<std::unique_ptr<plan::Case>>& cases, ImageSet& images,
                                             std::string& why);

/// One amplified control to run.
struct AmplifiedControlEntry {
  std::string triton;
  std::string role;  ///< "block_n_32" or "fixed_default"
  Entry entry;
};

/// The Triton set whose default expand is the amplified "fixed" control: its bundled
/// ptxas 13.4 keeps the A copies Triton 3.8+ makes, so its SASS is clean (DESIGN.md).
inline constexpr std::string_view k_fixed_triton = "3.9.0";

/// The amplified controls of `plan`, for each distinct amplify D > 0 of its cases:
/// block_n 32 of each of `tritons`, and the default of Triton k_fixed_triton. Each is
/// prebuilt when its set's bundled ptxas is here, else compiled by the newest installed
/// ptxas at least as new as that one (it reads the set's PTX, serialises block_n 32 and
/// keeps 3.8+'s copies alike), with a note saying so; with neither it does not run, and
/// a note says why. Indexed from `next_index` on (advanced past them); `notes` gets
/// every such note.
std::vector<AmplifiedControlEntry> amplified_control_entries(const plan::Plan& plan, const kernels::KernelSets& sets,
                                                             const std::vector<std::string>& tritons,
                                                             std::uint64_t config_seed, std::size_t& next_index,
                                                             std::vector<std::unique_ptr<plan::Case>>& cases,
                                                             ImageSet& images, std::vector<std::string>& notes);

/// The record of an entry that ran, from its worker result and its images' static
/// findings and attribution. `images` null: the static inspection is not in yet (it
/// runs beside the GPU work), so the record has no static part and a run that passed
/// is PASS, not yet PASS or LATENT; FAIL, fault, timeout and incomplete are final.
/// Only such a provisional record may be made while the inspection runs.
report::CaseRecord record_of(const Entry& e, const protocol::JobResult& r, const ImageSet* images);

/// The record of an entry that did not run (skipped, compile_error).
report::CaseRecord not_run(const Entry& e, report::Verdict verdict, std::string reason);

}  // namespace lp::sweep
