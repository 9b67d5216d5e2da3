#include "sass/analyze.hpp"

#include <cstdio>

#include "sass/batch.hpp"
#include "sass/cubin.hpp"
#include "util/parallel.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::sass {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::vector<const Check*> selected_checks(const AnalysisOptions& options) {
  std::vector<const Check*> out;
  if (options.checks.empty()) {
    for (const auto& c : all_checks()) {
      out.push_back(&c);
    }
    return out;
  }
  for (const auto& id : options.checks) {
    const Check* c = find_check(id);
    if (c == nullptr) {
      std::string known;
      for (const auto& k : all_checks()) {
        known += (known.empty() ? "" : ", ") + std::string(k.id);
      }
      throw lp::UsageError("unknown SASS check '" + id + "' (known: " + known + ")");
    }
    out.push_back(c);
  }
  return out;
}

KernelReport analyze_kernel(const KernelListing& kernel, const std::vector<const Check*>& checks,
                            std::string_view source) {
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

std::string format_address(std::uint64_t address) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%04llx", static_cast<unsigned long long>(address));
  return buf;
}

ListingReport analyze_parsed(const Listing& listing, const AnalysisOptions& options, std::string_view source) {
  const auto start = Clock::now();
  const auto checks = selected_checks(options);
  ListingReport report;
  report.arch = listing.arch;
  for (const Check* c : checks) {
    report.checks.emplace_back(c->id);
  }
  for (const auto& kernel : listing.kernels) {
    report.kernels.push_back(analyze_kernel(kernel, checks, source));
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
  static_cast<ListingReport&>(report) = analyze_parsed(d.listing, options, name);
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
      o.report = report_of(elf[k].cubin, *d.disassembly, d.ms, tool, options, elf[k].name, d.input);
    } catch (const Error& e) {
      o.error = e.what();
    }
  });
  return out;
}

void to_json(nlohmann::json& j, const Finding& f) {
  nlohmann::json regs = nlohmann::json::array();
  for (int r : f.registers) {
    regs.push_back(gpr_name(r));
  }
  j = nlohmann::json{{"check", f.check},
                     {"kernel", f.kernel},
                     {"address", format_address(f.address)},
                     {"instruction", f.instruction},
                     {"access", f.access},
                     {"registers", std::move(regs)},
                     {"wgmma", {{"address", format_address(f.wgmma_address)}, {"instruction", f.wgmma_instruction}}},
                     {"over_back_edge", f.over_back_edge},
                     {"wait", f.wait_instruction.empty()
                                  ? nlohmann::json()
                                  : nlohmann::json{{"address", format_address(f.wait_address)},
                                                   {"instruction", f.wait_instruction}}}};
}

void to_json(nlohmann::json& j, const KernelStats& s) {
  auto opt = [](const auto& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  j = nlohmann::json{{"instructions", s.instructions},
                     {"basic_blocks", s.basic_blocks},
                     {"back_edges", s.back_edges},
                     {"wgmma", s.wgmma},
                     {"wgmma_register_a", s.wgmma_register_a},
                     {"a_from_registers", s.a_from_registers()},
                     {"max_groups_in_flight", s.max_groups_in_flight},
                     {"local_loads", s.local_loads},
                     {"local_stores", s.local_stores},
                     {"registers", opt(s.registers)},
                     {"frame_bytes", opt(s.frame_bytes)},
                     {"min_stack_bytes", opt(s.min_stack_bytes)}};
}

void to_json(nlohmann::json& j, const KernelReport& k) {
  j = nlohmann::json{{"name", k.name}, {"stats", k.stats}, {"findings", k.findings}};
}

void to_json(nlohmann::json& j, const ListingReport& r) {
  j = nlohmann::json{{"arch", r.arch},
                     {"checks", r.checks},
                     {"finding_count", r.finding_count()},
                     {"analysis_ms", r.analysis_ms},
                     {"kernels", r.kernels}};
}

void to_json(nlohmann::json& j, const Nvdisasm& d) {
  j = nlohmann::json{{"path", d.path}, {"origin", d.origin}, {"version", d.version}, {"sha256", d.sha256}};
}

void to_json(nlohmann::json& j, const CubinReport& r) {
  to_json(j, static_cast<const ListingReport&>(r));
  j["cubin_sha256"] = r.cubin_sha256;
  j["cubin_bytes"] = r.cubin_bytes;
  j["disassembler"] = r.disassembler;
  j["disassembler"]["format"] = r.listing_format;
  j["disassembler"]["input"] = r.input;
  j["warnings"] = r.warnings;
  j["disassemble_ms"] = r.disassemble_ms;
}

}  // namespace lp::sass
