#pragma once
// The public face of lp_sass: disassemble a cubin (or take a listing), run the
// checks of checks.hpp on every function, and report findings and statistics,
// as C++ values and as JSON for the CLI and the sweep report.
//
//   auto tool = lp::sass::find_nvdisasm({.path = options.nvdisasm});
//   lp::sass::CubinReport r = lp::sass::analyze_cubin(bytes, tool, {}, "expand.cubin");
//   if (r.finding_count() > 0) { ... }          // a hazard: LATENT unless observed
//   nlohmann::json j = r;                        // embeds in the report

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "sass/batch.hpp"
#include "sass/checks.hpp"
#include "sass/cubin.hpp"
#include "sass/early_read.hpp"
#include "sass/nvdisasm.hpp"
#include "util/json_text.hpp"

namespace lp::sass {

/// Version of what the analysis reports for a given listing: the parsers, the
/// control-flow graph, the scoreboard model, the checks and the JSON forms below.
/// Bump it with any change that can change a report, so that caches keyed by it
/// (lp_inspect keeps reports on disk) never serve a report this build would not write.
inline constexpr int k_analysis_version = 4;  // 2: findings name the wait they pass; 3: labels no block starts;
                                              // 4: gdc-early-read

/// Which checks to run.
struct AnalysisOptions {
  /// Check ids (checks.hpp); empty runs every check. An unknown id is a UsageError.
  std::vector<std::string> checks;
  /// The gdc-early-read pass (early_read.hpp): parameter ordinal -> name of the
  /// parameters the previous grid writes, for every function of a cubin (a listing
  /// alone has no parameter layout, so the pass finds nothing there). Empty: none.
  std::map<int, std::string> produced;
};

/// Per-function figures, whether or not anything was found.
struct KernelStats {
  std::size_t instructions = 0;
  std::size_t basic_blocks = 0;
  std::size_t back_edges = 0;             ///< loop latches
  std::size_t wgmma = 0;                  ///< HGMMA/QGMMA/IGMMA/BGMMA instructions
  std::size_t wgmma_register_a = 0;       ///< of which take A from registers
  int max_groups_in_flight = 0;           ///< deepest wgmma group stack on any path
  std::size_t local_loads = 0;            ///< LDL instructions (spill reloads, local arrays)
  std::size_t local_stores = 0;           ///< STL instructions
  std::optional<int> registers;           ///< per thread (cubins only)
  std::optional<std::uint32_t> frame_bytes;      ///< local memory per thread (cubins only)
  std::optional<std::uint32_t> min_stack_bytes;  ///< (cubins only)
  std::size_t gdc_waits = 0;              ///< ACQBULK (griddepcontrol.wait) instructions
  /// True when some MMA takes its A operand from registers (the hazardous form).
  [[nodiscard]] bool a_from_registers() const noexcept { return wgmma_register_a > 0; }
};

/// One function's result.
struct KernelReport {
  std::string name;
  KernelStats stats;
  std::vector<Finding> findings;  ///< ordered by check, then address
  std::vector<EarlyRead> early_reads;  ///< gdc-early-read, by address
};

/// The result for one listing.
struct ListingReport {
  std::string arch;                 ///< "sm_90a", or empty when the listing does not say
  std::vector<std::string> checks;  ///< ids that ran
  std::vector<KernelReport> kernels;
  double analysis_ms = 0;           ///< parsing + graph + checks, wall clock
  /// wgmma hazard findings (the checks table) over all functions.
  [[nodiscard]] std::size_t finding_count() const noexcept;
  /// gdc-early-read findings over all functions.
  [[nodiscard]] std::size_t early_read_count() const noexcept;
};

/// The result for one cubin: the listing report plus how it was disassembled.
struct CubinReport : ListingReport {
  std::string cubin_sha256;
  std::size_t cubin_bytes = 0;
  Nvdisasm disassembler;
  std::string listing_format;          ///< "json" or "text"
  /// What nvdisasm read: "cubin" (the ELF), or "code" (the function's instructions,
  /// batched with other cubins' as raw `-b SM90a` code: batch.hpp).
  std::string input = "cubin";
  std::vector<std::string> warnings;   ///< nvdisasm's, verbatim
  double disassemble_ms = 0;           ///< running nvdisasm, wall clock
};

/// Analyses a listing: nvdisasm text (`-c`), `cuobjdump -sass` text, or nvdisasm
/// JSON (recognised by its leading '['). `source` names it in errors. Throws
/// ListingError for a malformed listing, lp::UsageError for an unknown check id.
ListingReport analyze_listing(std::string_view text, const AnalysisOptions& options = {},
                              std::string_view source = "<listing>");

/// Analyses an already parsed listing (what analyze_listing and analyze_cubin share).
/// `layouts`: each function's parameter layout (from its cubin), for gdc-early-read.
ListingReport analyze_parsed(const Listing& listing, const AnalysisOptions& options, std::string_view source,
                             const std::map<std::string, ParamLayout>& layouts = {});

/// Disassembles `cubin` with `tool` and analyses it; adds registers and local
/// memory from the ELF. `name` names the cubin in errors. Throws lp::Error when
/// `cubin` is not an ELF cubin or nvdisasm fails, ListingError when its output
/// cannot be parsed, lp::UsageError for an unknown check id.
CubinReport analyze_cubin(std::string_view cubin, const Nvdisasm& tool, const AnalysisOptions& options = {},
                          std::string_view name = "<cubin>");

/// One cubin's outcome of analyze_cubins: a report, or why not.
struct CubinOutcome {
  std::optional<CubinReport> report;
  std::string error;  ///< nvdisasm failed, the listing did not parse, not a cubin
};

/// analyze_cubin for many cubins at once, with few nvdisasm runs (batch.hpp) and
/// `jobs` threads (0: one per hardware thread); in the inputs' order. One cubin's
/// failure is its outcome's error; lp::UsageError for an unknown check id.
std::vector<CubinOutcome> analyze_cubins(const std::vector<BatchInput>& cubins, const Nvdisasm& tool,
                                         const AnalysisOptions& options = {}, unsigned jobs = 0);

/// "0x1d30": the address spelling of reports (nvdisasm prints /*1d30*/).
std::string format_address(std::uint64_t address);

/// JSON forms (nlohmann ADL hooks, so `nlohmann::json j = report;` works).
/// Finding: {check, kernel, address: "0x2340", instruction, access: "write"|"read",
///           registers: ["R88", ...], wgmma: {address, instruction}, over_back_edge}.
void to_json(nlohmann::json& j, const Finding& f);
/// EarlyRead: {check: "gdc-early-read", kernel, address, instruction, param,
///            wait: {address, instruction}}.
void to_json(nlohmann::json& j, const EarlyRead& f);
/// KernelStats: {instructions, basic_blocks, back_edges, wgmma, wgmma_register_a,
///   a_from_registers, max_groups_in_flight, local_loads, local_stores,
///   registers, frame_bytes, min_stack_bytes, gdc_waits} (registers, frame_bytes and
///   min_stack_bytes null for a listing).
void to_json(nlohmann::json& j, const KernelStats& s);
/// KernelReport: {name, stats, findings: [...], early_reads: [...]}.
void to_json(nlohmann::json& j, const KernelReport& k);
/// ListingReport: {arch, checks: [ids], finding_count, early_read_count, analysis_ms,
/// kernels: [...]}.
void to_json(nlohmann::json& j, const ListingReport& r);
/// Nvdisasm: {path, origin, version, sha256}.
void to_json(nlohmann::json& j, const Nvdisasm& d);
/// CubinReport: the ListingReport keys plus cubin_sha256, cubin_bytes,
/// disassembler: {path, origin, version, sha256, format}, warnings, disassemble_ms.
void to_json(nlohmann::json& j, const CubinReport& r);
/// The JSON forms above as a record carries them (util/json_text.hpp).
JsonText to_json_text(const CubinReport& r);
JsonText to_json_text(const Nvdisasm& d);

/// The typed reading of a CubinReport's JSON form (a cache entry: a document that
/// anyone with write access to the cache may have edited): every key of the form
/// above with its type, and the whole value equal to what to_json writes back from
/// the result (so finding_count agrees with the findings, and nothing is added).
/// nullopt on any difference.
std::optional<CubinReport> cubin_report_from_json(const nlohmann::json& j);

/// Whether two analyses decide the same: the same kernels in order, each with the same
/// findings and early reads, every field of them (timings, tools and sizes aside).
bool same_findings(const ListingReport& a, const ListingReport& b);

}  // namespace lp::sass
