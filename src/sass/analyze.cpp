#include "sass/analyze.hpp"

#include <cstdio>

#include "sass/batch.hpp"
#include "sass/cubin.hpp"
#include "util/parallel.hpp"
#include "util/error.hpp"
#include "util/elapsed.hpp"
#include "util/sha256.hpp"

namespace lp::sass {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<const Check*> selected_checks(const AnalysisOptions& options) {
  std::vector<const Check*> out;
  if (options.checks.empty()) {
    for (const auto& c : all_checks()) {
      out.push_back(&c);
    }
    return out;
  }
  for (const auto& id : options.checks) {
    if (id != k_early_read_id) {
      out.push_back(&require_check(id));
    }
  }
  return out;
}

KernelReport analyze_kernel(const KernelListing& kernel, const std::vector<const Check*>& checks,
                            std::string_view source, const AnalysisOptions& options,
                            const std::map<std::string, ParamLayout>& layouts) {
  const ControlFlowGraph cfg = ControlFlowGraph::build(kernel, source);
  const ScoreboardResult scoreboard = analyze_scoreboard(kernel, cfg, source);
  KernelReport report;
  report.name = kernel.name;
  KernelStats& s = report.stats;
  s.instructions = kernel.instructions.size();
  s.basic_blocks = cfg.blocks().size();
  s.back_edges = cfg.back_edge_count();
  s.wgmma = scoreboard.wgmma_count;
  s.wgmma_register_a = scoreboard.wgmma_register_a;
  s.max_groups_in_flight = scoreboard.max_groups_in_flight;
  for (const auto& insn : kernel.instructions) {
    s.local_loads += insn.base == "LDL" ? 1 : 0;
    s.local_stores += insn.base == "STL" ? 1 : 0;
  }
  const CheckContext ctx{kernel, cfg, scoreboard};
  for (const Check* c : checks) {
    c->run(ctx, report.findings);
  }
  static const ParamLayout k_no_layout;
  const auto layout = layouts.find(kernel.name);
  const bool run = layout != layouts.end() && early_reads_selected(options.checks);
  EarlyReadScan early = find_early_reads(kernel, cfg, run ? layout->second : k_no_layout,
                                         run ? options.produced : std::map<int, std::string>{});
  s.gdc_waits = early.waits;
  report.early_reads = std::move(early.findings);
  return report;
}

}  // namespace

std::size_t ListingReport::finding_count() const noexcept {
  std::size_t n = 0;
  for (const auto& k : kernels) {
    n += k.findings.size();
  }
  return n;
}

std::size_t ListingReport::early_read_count() const noexcept {
  std::size_t n = 0;
  for (const auto& k : kernels) {
    n += k.early_reads.size();
  }
  return n;
}

std::string format_address(std::uint64_t address) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<unsigned long long>(address));
  return buf;
}

ListingReport analyze_parsed(const Listing& listing, const AnalysisOptions& options, std::string_view source,
                             const std::map<std::string, ParamLayout>& layouts) {
  const auto start = Clock::now();
  const auto checks = selected_checks(options);
  ListingReport report;
  report.arch = listing.arch;
  for (const Check* c : checks) {
    report.checks.emplace_back(c->id);
  }
  if (early_reads_selected(options.checks)) {
    report.checks.emplace_back(k_early_read_id);
  }
  for (const auto& kernel : listing.kernels) {
    report.kernels.push_back(analyze_kernel(kernel, checks, source, options, layouts));
  }
  report.analysis_ms = ms_since(start);
  return report;
}

ListingReport analyze_listing(std::string_view text, const AnalysisOptions& options, std::string_view source) {
  const auto start = Clock::now();
  std::size_t first = text.find_first_not_of(" \t\r\n");
  const bool json = first != std::string_view::npos && text[first] == '[';
  const Listing listing = json ? parse_json_listing(text, source) : parse_text_listing(text, source);
  ListingReport report = analyze_parsed(listing, options, source);
  report.analysis_ms = ms_since(start);
  return report;
}

namespace {

/// The report of `cubin` from its disassembly `d`, which took `disassemble_ms`.
CubinReport report_of(std::string_view cubin, Disassembly& d, double disassemble_ms, const Nvdisasm& tool,
                      const AnalysisOptions& options, std::string_view name, std::string input) {
  const auto analysis_start = Clock::now();
  CubinReport report;
  static_cast<ListingReport&>(report) = analyze_parsed(d.listing, options, name, read_param_layouts(cubin));
  const auto resources = read_function_resources(cubin);
  for (auto& k : report.kernels) {
    if (auto it = resources.find(k.name); it != resources.end()) {
      k.stats.registers = it->second.registers;
      k.stats.frame_bytes = it->second.frame_bytes;
      k.stats.min_stack_bytes = it->second.min_stack_bytes;
    }
  }
  report.analysis_ms = ms_since(analysis_start);
  report.disassemble_ms = disassemble_ms;
  report.cubin_sha256 = sha256_hex(cubin);
  report.cubin_bytes = cubin.size();
  report.disassembler = tool;
  report.listing_format = d.format;
  report.input = std::move(input);
  report.warnings = std::move(d.warnings);
  return report;
}

}  // namespace

CubinReport analyze_cubin(std::string_view cubin, const Nvdisasm& tool, const AnalysisOptions& options,
                          std::string_view name) {
  if (!looks_like_elf(cubin)) {
    throw lp::Error(std::string(name) + ": not a cubin (no ELF header)");
  }
  (void)selected_checks(options);  // reject a bad check id before running nvdisasm
  const auto start = Clock::now();
  Disassembly d = disassemble(tool, cubin, name);
  return report_of(cubin, d, ms_since(start), tool, options, name, "cubin");
}

std::vector<CubinOutcome> analyze_cubins(const std::vector<BatchInput>& cubins, const Nvdisasm& tool,
                                         const AnalysisOptions& options, unsigned jobs) {
  (void)selected_checks(options);  // reject a bad check id before running nvdisasm
  std::vector<CubinOutcome> out(cubins.size());
  std::vector<BatchInput> elf;
  std::vector<std::size_t> index;
  for (std::size_t i = 0; i < cubins.size(); ++i) {
    if (!looks_like_elf(cubins[i].cubin)) {
      out[i].error = cubins[i].name + ": not a cubin (no ELF header)";
    } else {
      elf.push_back(cubins[i]);
      index.push_back(i);
    }
  }
  std::vector<BatchOutput> disassembled = disassemble_batch(tool, elf, jobs);
  parallel_for(elf.size(), jobs, [&](std::size_t k) {
    CubinOutcome& o = out[index[k]];
    BatchOutput& d = disassembled[k];
    if (!d.disassembly) {
      o.error = d.error;
      return;
    }
    try {
      AnalysisOptions own = options;
      if (elf[k].produced) {
        own.produced = *elf[k].produced;
      }
      o.report = report_of(elf[k].cubin, *d.disassembly, d.ms, tool, own, elf[k].name, d.input);
    } catch (const Error& e) {
      o.error = e.what();
    }
  });
  return out;
}

}  // namespace lp::sass
