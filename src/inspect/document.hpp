#pragma once
// The JSON document of `loraprobe inspect --json` (configs/schema/inspect.schema.json).

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "inspect/cache.hpp"
#include "inspect/inspector.hpp"
#include "inspect/work.hpp"

namespace lp::inspect {

/// Counts over the results.
struct InspectTotals {
  std::size_t items = 0;
  std::size_t clean = 0;
  std::size_t hazard = 0;
  std::size_t error = 0;
  std::size_t findings = 0;       ///< wgmma hazard findings
  std::size_t early_reads = 0;    ///< gdc-early-read findings
  std::size_t with_early_reads = 0;     ///< items with a gdc-early-read finding
  std::size_t early_by_ptx = 0;   ///< of which the PTX already reads before its wait
  std::size_t early_by_ptxas = 0; ///< of which only the SASS does
  std::size_t early_not_checked = 0;  ///< items whose PTX waits but whose produced parameters are unknown
  std::size_t made_by_ptx = 0;    ///< hazardous items whose PTX breaks the rule
  std::size_t made_by_ptxas = 0;  ///< hazardous items whose PTX is clean
  std::size_t skipped = 0;        ///< clean without nvdisasm: their PTX has no wgmma.mma_async
  std::size_t incompatible = 0;   ///< the compiler cannot read the PTX's ISA version: not analysed, not failed
  /// 1 when an item has a hazard or could not be analysed; 3 when every item was
  /// incompatible (nothing was inspected); else 0.
  [[nodiscard]] int exit_code() const noexcept {
    if (hazard + error > 0) {
      return 1;
    }
    return items > 0 && incompatible == items ? 3 : 0;
  }
};

/// Adds up `results`.
InspectTotals total(const std::vector<InspectResult>& results);

/// Why a run whose every item is incompatible (exit 3) inspected nothing, in one line for
/// stderr: each (Triton set, compiler) pairing with the compiler's reason ("the PTX is
/// .version 9.4; ptxas 13.3.73 reads up to 9.3"), and how to go on. Values from flags and
/// tools are escaped for a terminal line. Empty unless every item is incompatible.
std::string all_incompatible_line(const std::vector<InspectResult>& results);

/// What the document says of the run itself.
struct RunInfo {
  std::vector<std::string> argv;
  std::string started_at;
  std::string finished_at;
  double wall_ms = 0.0;
  int interrupted_by = 0;  ///< the signal, 0 when the run finished
  std::optional<std::string> cache_root;
};

/// The whole document.
std::shared_ptr<const nlohmann::json> inspect_document(const Work& work, const std::vector<InspectResult>& results,
                                const std::vector<PtxasMatrix>& matrices, const Inspector& inspector,
                                const RunInfo& run);

}  // namespace lp::inspect
