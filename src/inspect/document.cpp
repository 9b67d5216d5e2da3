#include "inspect/document.hpp"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "inspect_schema_version.hpp"
#include "ptx/ptx_check.hpp"
#include "sass/analyze.hpp"
#include "util/escape.hpp"
#include "util/interrupt.hpp"
#include "util/json_out.hpp"
#include "version.hpp"

namespace lp::inspect {

using nlohmann::json;

namespace {

/// {ptxas, cubin_sha256, cubin_bytes, ms, log, cached}, or {ptxas, error, cached}.
json compile_json(const CompileRecord& c) {
  json j = {{"ptxas", c.ptxas.to_json()}, {"cached", c.cached}};
  if (c.compiled) {
    j["cubin_sha256"] = c.compiled->cubin_sha256;
    j["cubin_bytes"] = c.compiled->cubin_bytes;
    j["ms"] = c.compiled->ms;
    j["log"] = c.compiled->log;
  } else {
    j["error"] = c.error;
  }
  return j;
}

/// An item's `ptx` block (inspect.schema.json): ptx_check.hpp's PtxReport
/// {finding_count, early_read_count, functions}, or {"error": why}.
json ptx_finding_json(const ptx::PtxFinding& f) {
  return {{"check", f.check},
          {"function", f.function},
          {"line", f.line},
          {"instruction", f.instruction},
          {"access", f.access},
          {"registers", f.registers},
          {"wgmma", {{"line", f.wgmma_line}, {"instruction", f.wgmma_instruction}}},
          {"over_back_edge", f.over_back_edge}};
}

json ptx_early_read_json(const ptx::EarlyRead& f) {
  return {{"check", sass::k_early_read_id},
          {"function", f.function},
          {"line", f.line},
          {"instruction", f.instruction},
          {"param", f.param},
          {"wait", f.wait_line == 0 ? json() : json{{"line", f.wait_line}, {"instruction", f.wait_instruction}}}};
}

json ptx_function_json(const ptx::PtxFunctionReport& f) {
  json findings = json::array();
  for (const ptx::PtxFinding& x : f.findings) {
    findings.push_back(ptx_finding_json(x));
  }
  json early_reads = json::array();
  for (const ptx::EarlyRead& x : f.early_reads) {
    early_reads.push_back(ptx_early_read_json(x));
  }
  return {{"name", f.name},
          {"stats",
           {{"instructions", f.instructions},
            {"wgmma", f.wgmma},
            {"wgmma_register_a", f.wgmma_register_a},
            {"max_groups_in_flight", f.max_groups_in_flight},
            {"gdc_waits", f.gdc_waits}}},
          {"findings", std::move(findings)},
          {"early_reads", std::move(early_reads)}};
}

json ptx_json(const PtxCheck& c) {
  if (!c.report) {
    return {{"error", c.error}};
  }
  json functions = json::array();
  for (const ptx::PtxFunctionReport& f : c.report->functions) {
    functions.push_back(ptx_function_json(f));
  }
  return {{"finding_count", c.report->finding_count()},
          {"early_read_count", c.report->early_read_count()},
          {"functions", std::move(functions)}};
}

/// inspect.schema.json#/$defs/compiler records, each with its name.
json compilers_json(const Work& w) {
  json out = json::array();
  for (const RunCompilerRecord& r : compiler_records(w)) {
    json j = r.record.to_json();
    j["name"] = r.name;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace

json InspectResult::to_json() const {
  json j{{"name", name},
              {"variant", variant ? json(*variant) : json(nullptr)},
              {"triton", null_if_empty(triton)},
              {"compiler", compiler},
              {"status", to_string(status)},
              {"finding_count", finding_count},
              {"early_read_count", early_read_count},
              {"cached", cached},
              {"error", null_if_empty(error)},
              {"skipped", null_if_empty(skipped)},
              {"ms", ms},
              {"compile", compile ? compile_json(*compile) : json(nullptr)},
              {"sass", sass ? json(*sass) : json(nullptr)},
              {"ptx", ptx ? ptx_json(*ptx) : json(nullptr)},
              {"attribution", null_if_empty(attribution)},
              {"early_read_attribution", null_if_empty(early_read_attribution)},
              {"early_read_not_checked", null_if_empty(early_read_not_checked)}};
  if (amplify > 0) {
    j["amplify"] = amplify;  // since 3.6.0: only an amplified image has the key
  }
  return j;
}

json PtxasMatrix::to_json() const {
  json j = {{"triton_version", triton_version},
            {"missing_rows", missing},
            {"columns", json::array()},
            {"rows", json::array()},
            {"first_clean", json::array()}};
  for (const MatrixColumn& c : columns) {
    j["columns"].push_back({{"compiler", c.compiler}, {"version", c.version}, {"source", c.source}});
  }
  for (const MatrixRow& row : rows) {
    json cells = json::array();
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      const MatrixCell& cell = row.cells[i];
      cells.push_back({{"compiler", columns[i].compiler},
                       {"findings", cell.findings ? json(*cell.findings) : json()},
                       {"status", cell.status},
                       {"cubin_sha256", null_if_empty(cell.cubin_sha256)}});
    }
    j["rows"].push_back({{"variant", row.variant->id}, {"axes", row.variant->axes.to_json()}, {"cells", std::move(cells)}});
  }
  for (const FirstClean& f : first_clean) {
    j["first_clean"].push_back({{"what", f.what},
                                {"variants", f.variants},
                                {"version", f.version ? json(*f.version) : json()},
                                {"regressions", f.regressions},
                                {"line", f.line}});
  }
  return j;
}

json CacheStats::to_json(const std::optional<std::string>& root) const {
  return json{{"enabled", root.has_value()},
              {"root", root ? json(*root) : json(nullptr)},
              {"sass_hits", sass_hits},
              {"sass_misses", sass_misses},
              {"compile_hits", compile_hits},
              {"compile_misses", compile_misses},
              {"shipped_sass_hits", shipped_sass_hits},
              {"shipped_compile_hits", shipped_compile_hits},
              {"write_errors", write_errors},
              {"rejected", rejected},
              {"verified", verified},
              {"differences", differences},
              {"shipped_differences", shipped_differences}};
}

JsonText CacheStats::to_json_text(const std::optional<std::string>& root) const { return JsonText::of(to_json(root)); }

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

std::string all_incompatible_line(const std::vector<InspectResult>& results) {
  const bool all = !results.empty() && std::all_of(results.begin(), results.end(), [](const InspectResult& r) {
    return r.status == StaticOutcome::incompatible;
  });
  if (!all) {
    return "";
  }
  // Each pairing once, in the run's order, with the first reason its compiler gave (one
  // Triton set's PTX has one .version, so its variants' reasons agree).
  std::vector<std::tuple<std::string, std::string, std::string>> pairings;
  bool files = false;
  for (const InspectResult& r : results) {
    files = files || r.triton.empty();
    const auto same = [&](const auto& p) { return std::get<0>(p) == r.triton && std::get<1>(p) == r.compiler; };
    if (std::none_of(pairings.begin(), pairings.end(), same)) {
      const std::string reason =
          r.error.ends_with(k_incompatible_note) ? r.error.substr(0, r.error.size() - k_incompatible_note.size()) : r.error;
      pairings.emplace_back(r.triton, r.compiler, reason);
    }
  }
  constexpr std::size_t k_shown = 6;  // one line, however many sets and compilers were asked for
  std::vector<std::string> named;
  for (std::size_t i = 0; i < pairings.size() && i < k_shown; ++i) {
    const auto& [triton, compiler, reason] = pairings[i];
    named.push_back(fmt::format("{} with {} ({})",
                                triton.empty() ? std::string("your PTX") : "Triton " + escape::terminal_line(triton),
                                escape::terminal_line(compiler), escape::terminal_line(reason)));
  }
  if (pairings.size() > k_shown) {
    named.push_back(fmt::format("and {} more", pairings.size() - k_shown));
  }
  // Triton's own ptxas reads its own PTX; a user's files have no Triton to bring one.
  const std::string next = files ? "give a ptxas that reads that .version (--ptxas PATH of a newer one)"
                                 : "give a ptxas that reads that .version (--compiler ptxas=PATH of a newer one) or "
                                   "Triton's own (--compiler prebuilt)";
  return fmt::format("inspect: nothing was inspected, every pairing is incompatible: {}; {}", fmt::join(named, "; "),
                     next);
}

std::shared_ptr<const json> inspect_document(const Work& w, const std::vector<InspectResult>& results,
                                             const std::vector<PtxasMatrix>& matrices, const Inspector& inspector,
                                             const RunInfo& run) {
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
              {"compilers", compilers_json(w)},
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
                                  {"ptxas", set->manifest().ptxas_json().value()},
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
  return std::make_shared<const json>(std::move(doc));
}

}  // namespace lp::inspect
