#include "sweep/report_builder.hpp"

#include "families/family.hpp"
#include "compile/compiler.hpp"
#include "compile/toolchain.hpp"
#include "model/tolerance.hpp"
#include "report/environment.hpp"
#include "sass/analyze.hpp"
#include "util/sha256.hpp"
#include "version.hpp"

namespace lp::sweep {

std::vector<report::KernelSetRecord> kernel_sets_record(const kernels::KernelSets& sets,
                                                        const std::vector<std::string>& tritons) {
  std::vector<report::KernelSetRecord> out;
  for (const std::string& triton : tritons) {
    const kernels::KernelSet& set = sets.at(triton);
    out.push_back({triton, set.origin(), set.variants().size(), set.manifest().ptxas_json(),
                   set.manifest().ptxas_options});
  }
  return out;
}

report::Meta meta_record(const plan::SweepConfig& config, const plan::Plan& plan, const std::vector<std::string>& argv,
                         const std::vector<report::KernelSetRecord>& kernel_sets) {
  report::Meta m;
  m.version = k_version;
  m.git_sha = k_git_sha;
  m.argv = argv;
  m.started_at = report::utc_now_iso8601();
  m.config = config.to_json_text();
  m.config_sha256 = sha256_hex(m.config.text());
  m.seed = config.seed.value;
  m.repeats = static_cast<int>(config.repeats.value);
  m.kernel_sets = kernel_sets;
  m.plan.cases = plan.cases.size();
  m.plan.combinations = plan.combinations;
  m.plan.excluded_by_rule = plan.excluded_by_rule;
  m.plan.duplicates = plan.duplicates;
  // Why combinations are not cases: among them what vLLM itself would refuse (a tuned
  // file without the num_slices key), so a report says it and not only the dry run.
  m.plan.not_applicable = plan.not_applicable;
  m.plan.not_swept = plan.not_swept;
  return m;
}

report::Environment environment_record(const ImageSet& images, const std::optional<protocol::GpuRecord>& gpu,
                                       bool allow_jit_cache, const std::vector<report::KernelSetRecord>& kernel_sets) {
  report::Environment e;
  e.host = report::host_record().to_json_text();
  e.toolkit = compile::toolkit_record().to_json_text();
  for (const compile::CompilerRecord& c : images.compiler_records()) {
    e.compilers.push_back(c.to_json_text());
  }
  if (gpu) {
    e.gpu = protocol::to_json_text(*gpu);
  }
  e.jit_cache_disabled = gpu ? gpu->jit_cache_disabled : !allow_jit_cache;
  e.module_loading = gpu ? gpu->module_loading : std::string();
  const std::optional<inspect::CacheStats>& cache = images.inspection_cache();
  e.inspection_cache = cache ? cache->to_json_text(inspect::default_cache_root()) : JsonText();
  e.kernel_sets = kernel_sets;
  return e;
}

std::vector<report::VariantRecord> variants_record(const ImageSet& images, const report::CaseStore& cases,
                                                   const std::map<std::string, std::vector<std::string>>& keys_by_case) {
  std::map<std::string, std::map<std::string, std::size_t>> verdicts_by_key;
  for (const report::CaseRecord& c : cases) {
    if (const auto it = keys_by_case.find(c.id); it != keys_by_case.end()) {
      for (const std::string& key : it->second) {
        ++verdicts_by_key[key][std::string(report::to_string(c.verdict))];
      }
    }
  }
  auto text = [](const std::string& s) { return s.empty() ? std::nullopt : std::optional<std::string>(s); };
  std::vector<report::VariantRecord> variants;
  for (const auto& [key, image] : images.all()) {
    report::VariantRecord v;
    v.variant = image.variant_id;
    v.triton = image.triton;
    v.compiler = image.compiler.to_string();
    if (image.amplify > 0) {
      v.amplify = image.amplify;  // the same variant, compiler and Triton with D pairs
    }
    if (image.compile) {
      v.compile = image.compile->to_json_text();
    }
    v.compile_error = text(image.error);
    v.cubin_sha256 = image.cubin.empty() ? std::nullopt : std::optional<std::string>(sha256_hex(image.cubin));
    v.static_findings = image.findings;
    v.ptx_findings = image.ptx_findings;
    v.attribution = text(image.attribution);
    v.sass = image.sass ? sass::to_json_text(*image.sass) : JsonText();
    v.sass_error = text(image.sass_error);
    v.case_verdicts = verdicts_by_key[key];
    variants.push_back(std::move(v));
  }
  return variants;
}

report::Tolerances tolerance_record(const plan::SweepConfig& config) {
  report::Tolerances t;
  t.model =
      "|actual - expected| <= atol + rtol * |expected|, atol and rtol computed per case from the op, output "
      "dtype, K and ADD_INPUTS (src/model/tolerance.hpp); each case's metrics carry the atol and rtol it "
      "was judged with; a config override replaces both for every case of that output dtype";
  for (const ToleranceRow& row : tolerance_table()) {
    t.table.push_back({std::string(op_name(row.op)), std::string(dtype_name(row.output)), row.k, row.add_inputs,
                       row.hidden_in, row.tolerance.atol, row.tolerance.rtol, row.tolerance.describe()});
  }
  for (const auto& [dtype, setting] : config.tolerance) {
    t.overrides[std::string(dtype_name(dtype))] = {setting.value.atol, setting.value.rtol, setting.origin.describe()};
  }
  return t;
}

}  // namespace lp::sweep
