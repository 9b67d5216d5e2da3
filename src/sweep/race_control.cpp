#include "sweep/race_control.hpp"

#include <fmt/format.h>

#include "compile/ptxas.hpp"
#include "kernels/embedded.hpp"
#include "sass/analyze.hpp"
#include "util/error.hpp"

namespace lp::sweep {

using protocol::RaceResult;

std::string_view race_control_ptx() {
  const std::optional<std::string_view> ptx = kernels::embedded_file("race/race-control.ptx");
  if (!ptx) {
    throw Error("this loraprobe was built without kernels/race/race-control.ptx");
  }
  return *ptx;
}

RaceCubin compile_race_control() {
  RaceCubin r;
  r.error = error_of([&] {
    const compile::PtxasInfo ptxas = compile::resolve_ptxas("toolkit");
    r.compiler = fmt::format("ptxas=toolkit ({})", ptxas.version);
    r.cubin = compile::compile_with_ptxas(ptxas, race_control_ptx(), "race-control").cubin;
  });
  return r;
}

RaceCubin inspect_race_control(RaceCubin compiled, const std::optional<std::string>& nvdisasm) {
  if (!compiled.error.empty()) {
    return compiled;
  }
  compiled.inspect_error = error_of([&] {
    sass::NvdisasmSearch search;
    search.path = nvdisasm;
    compiled.findings =
        sass::analyze_cubin(compiled.cubin, sass::find_nvdisasm(search), {}, "race-control.cubin").finding_count();
  });
  return compiled;
}

report::RaceRecord race_outcome(const std::string& compiler, std::optional<std::size_t> static_findings,
                                const std::optional<RaceResult>& result, const std::string& error) {
  report::RaceRecord out;
  out.ran = result.has_value();
  out.compiler = compiler;
  out.static_findings = static_findings;
  if (result) {
    out.result = protocol::to_json_text(*result);
  }
  if (!result) {
    out.summary = fmt::format("the race control did not run: {}", error);
    return out;
  }
  if (result->unwritten > 0) {
    out.summary = fmt::format("the race control left {} elements unwritten: its result says nothing", result->unwritten);
    return out;
  }
  if (!static_findings || *static_findings == 0) {
    out.summary = fmt::format(
        "the race control's SASS ({}) {}: it cannot show the race here", compiler,
        static_findings ? "has no wgmma hazard (ptxas serialised its wgmma)" : "could not be inspected");
    return out;
  }
  out.shows = result->late_tiles > 0;
  if (result->late_tiles > 0) {
    out.summary = fmt::format(
        "this GPU reads wgmma A registers late: {} of {} tiles ({} of {} launches) read the A written after the "
        "wgmma; the LATENT cases are a real risk here",
        result->late_tiles, result->tiles, result->launches_with_late, result->launches);
  } else {
    out.summary = fmt::format(
        "this GPU did not read wgmma A registers late in {} tiles ({} launches) of the race control; LATENT "
        "remains a static proof without a run-time witness here",
        result->tiles, result->launches);
  }
  return out;
}

}  // namespace lp::sweep
