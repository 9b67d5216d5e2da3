#include "sweep/report_builder.hpp"

#include "compile/toolchain.hpp"
#include "model/tolerance.hpp"
#include "report/environment.hpp"
#include "util/sha256.hpp"
#include "version.hpp"

namespace lp::sweep {

using nlohmann::json;

json kernel_sets_record(const kernels::KernelSets& sets, const std::vector<std::string>& tritons) {
  json out = json::array();
  for (const std::string& triton : tritons) {
    const kernels::KernelSet& set = sets.at(triton);
    out.push_back({{"triton_version", triton},
                   {"origin", set.origin()},
                   {"variants", set.variants().size()},
                   {"ptxas", set.manifest().ptxas_json()},
                   {"ptxas_options", set.manifest().ptxas_options}});
  }
  return out;
}

json meta_record(const plan::SweepConfig& config, const plan::Plan& plan, const std::vector<std::string>& argv,
                 const json& kernel_sets) {
  json out = {{"tool", "loraprobe"},
          {"version", k_version},
          {"git_sha", k_git_sha},
          {"argv", argv},
          {"started_at", report::utc_now_iso8601()},
          {"config", config.to_json()},
          {"config_sha256", sha256_hex(config.to_json().dump())},
          {"seed", config.seed.value},
          {"repeats", config.repeats.value},
          {"kernel_sets", kernel_sets},
          {"plan", {{"cases", plan.cases.size()}, {"combinations", plan.combinations},
                    {"excluded_by_rule", plan.excluded_by_rule}, {"duplicates", plan.duplicates}}}};
  if (!plan.not_applicable.empty()) {
    // Why combinations are not cases: among them what vLLM itself would refuse (a tuned
    // file without the num_slices key), so a report says it and not only the dry run.
    out["plan"]["not_applicable"] = plan::not_applicable_json(plan);
  }
  if (!plan.not_swept.empty()) {
    out["plan"]["not_swept"] = plan::not_swept_json(plan);
  }
  return out;
}

json environment_record(const ImageSet& images, const std::optional<protocol::GpuRecord>& gpu, bool allow_jit_cache,
                        const json& kernel_sets) {
  json compilers = json::array();
  for (const compile::CompilerRecord& c : images.compiler_records()) {
    compilers.push_back(c.to_json());
  }
  return {{"host", report::host_record()},
          {"toolkit", compile::toolkit_record()},
          {"compilers", std::move(compilers)},
          {"gpu", gpu ? protocol::to_json(*gpu) : json()},
          {"jit_cache_disabled", gpu ? gpu->jit_cache_disabled : !allow_jit_cache},
          {"module_loading", gpu ? gpu->module_loading : std::string()},
          {"inspection_cache", images.inspection_cache()},
          {"kernel_sets", kernel_sets}};
}

json variants_record(const ImageSet& images, const std::vector<report::CaseRecord>& cases,
                     const std::map<std::string, std::vector<std::string>>& keys_by_case) {
  std::map<std::string, std::map<std::string, int>> verdicts_by_key;
  for (const report::CaseRecord& c : cases) {
    if (const auto it = keys_by_case.find(c.id); it != keys_by_case.end()) {
      for (const std::string& key : it->second) {
        ++verdicts_by_key[key][std::string(report::to_string(c.verdict))];
      }
    }
  }
  json variants = json::array();
  for (const auto& [key, image] : images.all()) {
    variants.push_back({{"variant", image.variant_id},
                        {"triton", image.triton},
                        {"compiler", image.compiler.to_string()},
                        {"compile", image.compile ? image.compile->to_json() : json::object()},
                        {"compile_error", image.error.empty() ? json() : json(image.error)},
                        {"cubin_sha256", image.cubin.empty() ? json() : json(sha256_hex(image.cubin))},
                        {"static_findings", image.findings ? json(*image.findings) : json()},
                        {"ptx_findings", image.ptx_findings ? json(*image.ptx_findings) : json()},
                        {"attribution", image.attribution.empty() ? json() : json(image.attribution)},
                        {"sass", image.sass},
                        {"sass_error", image.sass_error.empty() ? json() : json(image.sass_error)},
                        {"case_verdicts", verdicts_by_key[key]}});
    if (image.amplify > 0) {
      variants.back()["amplify"] = image.amplify;  // the same variant, compiler and Triton with D pairs
    }
  }
  return variants;
}

json tolerance_record(const plan::SweepConfig& config) {
  json table = json::array();
  for (const ToleranceRow& row : tolerance_table()) {
    table.push_back({{"op", op_name(row.op)},
                     {"output_dtype", dtype_name(row.output)},
                     {"k", row.k},
                     {"add_inputs", row.add_inputs},
                     {"hidden_in", row.hidden_in},
                     {"atol", row.tolerance.atol},
                     {"rtol", row.tolerance.rtol},
                     {"why", row.tolerance.describe()}});
  }
  json overrides = json::object();
  for (const auto& [dtype, setting] : config.tolerance) {
    overrides[std::string(dtype_name(dtype))] = {
        {"atol", setting.value.atol}, {"rtol", setting.value.rtol}, {"origin", setting.origin.describe()}};
  }
  return {{"model",
           "|actual - expected| <= atol + rtol * |expected|, atol and rtol computed per case from the op, output "
           "dtype, K and ADD_INPUTS (src/model/tolerance.hpp); each case's metrics carry the atol and rtol it "
           "was judged with; a config override replaces both for every case of that output dtype"},
          {"table", std::move(table)},
          {"overrides", std::move(overrides)}};
}

}  // namespace lp::sweep
