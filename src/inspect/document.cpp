#include "inspect/document.hpp"

#include "inspect_schema_version.hpp"
#include "sass/analyze.hpp"
#include "util/interrupt.hpp"
#include "version.hpp"

namespace lp::inspect {

using nlohmann::json;

InspectTotals total(const std::vector<InspectResult>& results) {
  InspectTotals t;
  t.items = results.size();
  for (const InspectResult& r : results) {
    t.skipped += r.skipped.empty() ? 0 : 1;
    switch (r.status) {
      case StaticOutcome::clean:
        ++t.clean;
        break;
      case StaticOutcome::hazard:
        ++t.hazard;
        break;
      case StaticOutcome::error:
        ++t.error;
        break;
      case StaticOutcome::incompatible:
        ++t.incompatible;
        break;
    }
    t.findings += r.finding_count;
    t.made_by_ptx += r.attribution == "ptx" ? 1 : 0;
    t.made_by_ptxas += r.attribution == "ptxas" ? 1 : 0;
    t.early_reads += r.early_read_count;
    t.with_early_reads += r.early_read_count > 0 ? 1 : 0;
    t.early_by_ptx += r.early_read_attribution == "ptx" ? 1 : 0;
    t.early_by_ptxas += r.early_read_attribution == "ptxas" ? 1 : 0;
    t.early_not_checked += r.early_read_not_checked.empty() ? 0 : 1;
  }
  return t;
}

json inspect_document(const Work& w, const std::vector<InspectResult>& results,
                      const std::vector<PtxasMatrix>& matrices, const Inspector& inspector, const RunInfo& run) {
  const InspectTotals totals = total(results);
  json doc = {{"schema_version", k_inspect_schema_version},
              {"meta",
               {{"tool", "loraprobe"},
                {"command", "inspect"},
                {"version", k_version},
                {"git_sha", k_git_sha},
                {"argv", run.argv},
                {"started_at", run.started_at},
                {"finished_at", run.finished_at},
                {"wall_ms", run.wall_ms},
                {"jobs", inspector.options().jobs},
                {"interrupted", run.interrupted_by != 0 ? json(signal_name(run.interrupted_by)) : json(nullptr)}}},
              {"mode", to_string(w.mode)},
              {"nvdisasm", inspector.options().nvdisasm},
              {"analysis",
               {{"version", sass::k_analysis_version},
                {"fingerprint", inspector.fingerprint()},
                {"checks", inspector.check_ids()}}},
              {"kernel_sets", json::array()},
              {"compilers", compiler_records(w)},
              {"inputs", json::array()},
              {"cache", inspector.cache_stats().to_json(run.cache_root)},
              {"items", json::array()},
              {"matrix", w.mode == Mode::ptxas_matrix ? json::array() : json(nullptr)},
              {"summary",
               {{"items", totals.items},
                {"clean", totals.clean},
                {"hazard", totals.hazard},
                {"error", totals.error},
                {"incompatible", totals.incompatible},
                {"findings", totals.findings},
                {"early_reads", totals.early_reads},
                {"exit_code", totals.exit_code()}}}};
  for (const kernels::KernelSet* set : w.sets) {
    doc["kernel_sets"].push_back({{"origin", set->origin()},
                                  {"triton_version", set->triton()},
                                  {"ptxas", set->manifest().ptxas_json()},
                                  {"ptxas_options", set->manifest().ptxas_options}});
  }
  for (const PtxasMatrix& m : matrices) {
    doc["matrix"].push_back(m.to_json());
  }
  for (const InputFile& f : w.files) {
    doc["inputs"].push_back({{"path", f.path}, {"kind", to_string(f.kind)}, {"bytes", f.contents.size()}});
  }
  for (const InspectResult& r : results) {
    doc["items"].push_back(r.to_json());
  }
  return doc;
}

}  // namespace lp::inspect
