#pragma once
// The parts of a sweep's report that describe the run rather than its cases:
// meta (tool, argv, config, plan), environment (host, toolkit, compilers, GPU),
// the kernel sets, the per-variant static findings and the tolerance model. One
// place builds each block (report.schema.json names them).

#include <map>
#include <string>
#include <vector>


#include "kernels/kernel_sets.hpp"
#include "plan/plan.hpp"
#include "report/report.hpp"
#include "protocol/protocol.hpp"
#include "sweep/images.hpp"

namespace lp::sweep {

/// The kernel sets the plan uses (`tritons`, in order): origin, Triton, variants, bundled ptxas.
std::vector<report::KernelSetRecord> kernel_sets_record(const kernels::KernelSets& sets,
                                                        const std::vector<std::string>& tritons);

/// meta before the run: tool, version, argv, config and its sha256, seed, repeats,
/// kernel sets, plan counts (meta.interrupted is Report::stop()'s).
report::Meta meta_record(const plan::SweepConfig& config, const plan::Plan& plan, const std::vector<std::string>& argv,
                         const std::vector<report::KernelSetRecord>& kernel_sets);

/// environment: host, toolkit, the compilers of `images`, the worker's GPU record.
report::Environment environment_record(const ImageSet& images, const std::optional<protocol::GpuRecord>& gpu,
                                       bool allow_jit_cache, const std::vector<report::KernelSetRecord>& kernel_sets);

/// variants: one record per image, with the verdicts of the cases that used it
/// (`keys_by_case`: case id -> the image keys of its entry).
std::vector<report::VariantRecord> variants_record(const ImageSet& images, const report::CaseStore& cases,
                                                   const std::map<std::string, std::vector<std::string>>& keys_by_case);

/// tolerances: the model, the table (model/tolerance.hpp) and the config's overrides.
report::Tolerances tolerance_record(const plan::SweepConfig& config);

}  // namespace lp::sweep
