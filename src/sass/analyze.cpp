#include "sass/analyze.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

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

void to_json(nlohmann::json& j, const EarlyRead& f) {
  j = nlohmann::json{{"check", "gdc-early-read"},
                     {"kernel", f.kernel},
                     {"address", format_address(f.address)},
                     {"instruction", f.instruction},
                     {"param", f.param},
                     {"wait", {{"address", format_address(f.wait_address)}, {"instruction", f.wait_instruction}}}};
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
                     {"min_stack_bytes", opt(s.min_stack_bytes)},
                     {"gdc_waits", s.gdc_waits}};
}

void to_json(nlohmann::json& j, const KernelReport& k) {
  j = nlohmann::json{{"name", k.name}, {"stats", k.stats}, {"findings", k.findings}, {"early_reads", k.early_reads}};
}

void to_json(nlohmann::json& j, const ListingReport& r) {
  j = nlohmann::json{{"arch", r.arch},
                     {"checks", r.checks},
                     {"finding_count", r.finding_count()},
                     {"early_read_count", r.early_read_count()},
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

namespace {

std::uint64_t address_of(const nlohmann::json& j) {
  const std::string text = j.get<std::string>();
  if (text.size() < 3 || text.size() > 18 || text.rfind("0x", 0) != 0) {
    throw std::invalid_argument("not an address");
  }
  std::size_t used = 0;
  const std::uint64_t value = std::stoull(text.substr(2), &used, 16);
  if (used != text.size() - 2) {
    throw std::invalid_argument("not an address");
  }
  return value;
}

int register_of(const nlohmann::json& j) {
  const std::string text = j.get<std::string>();
  if (text.size() < 2 || text.size() > 4 || text[0] != 'R') {
    throw std::invalid_argument("not a register");
  }
  return std::stoi(text.substr(1));
}

template <class T>
std::optional<T> optional_of(const nlohmann::json& j) {
  return j.is_null() ? std::nullopt : std::optional<T>(j.get<T>());
}

Finding finding_of(const nlohmann::json& j) {
  Finding f;
  f.check = j.at("check").get<std::string>();
  f.kernel = j.at("kernel").get<std::string>();
  f.address = address_of(j.at("address"));
  f.instruction = j.at("instruction").get<std::string>();
  f.access = j.at("access").get<std::string>();
  for (const nlohmann::json& r : j.at("registers")) {
    f.registers.push_back(register_of(r));
  }
  f.wgmma_address = address_of(j.at("wgmma").at("address"));
  f.wgmma_instruction = j.at("wgmma").at("instruction").get<std::string>();
  f.over_back_edge = j.at("over_back_edge").get<bool>();
  if (const nlohmann::json& wait = j.at("wait"); !wait.is_null()) {
    f.wait_address = address_of(wait.at("address"));
    f.wait_instruction = wait.at("instruction").get<std::string>();
  }
  return f;
}

KernelStats stats_of(const nlohmann::json& j) {
  KernelStats s;
  s.instructions = j.at("instructions").get<std::size_t>();
  s.basic_blocks = j.at("basic_blocks").get<std::size_t>();
  s.back_edges = j.at("back_edges").get<std::size_t>();
  s.wgmma = j.at("wgmma").get<std::size_t>();
  s.wgmma_register_a = j.at("wgmma_register_a").get<std::size_t>();
  s.max_groups_in_flight = j.at("max_groups_in_flight").get<int>();
  s.local_loads = j.at("local_loads").get<std::size_t>();
  s.local_stores = j.at("local_stores").get<std::size_t>();
  s.registers = optional_of<int>(j.at("registers"));
  s.frame_bytes = optional_of<std::uint32_t>(j.at("frame_bytes"));
  s.min_stack_bytes = optional_of<std::uint32_t>(j.at("min_stack_bytes"));
  s.gdc_waits = j.at("gdc_waits").get<std::size_t>();
  return s;
}

EarlyRead early_read_of(const nlohmann::json& j) {
  EarlyRead f;
  f.kernel = j.at("kernel").get<std::string>();
  f.address = address_of(j.at("address"));
  f.instruction = j.at("instruction").get<std::string>();
  f.param = j.at("param").get<std::string>();
  f.wait_address = address_of(j.at("wait").at("address"));
  f.wait_instruction = j.at("wait").at("instruction").get<std::string>();
  return f;
}

}  // namespace

std::optional<CubinReport> cubin_report_from_json(const nlohmann::json& j) {
  try {
    CubinReport r;
    r.arch = j.at("arch").get<std::string>();
    r.checks = j.at("checks").get<std::vector<std::string>>();
    r.analysis_ms = j.at("analysis_ms").get<double>();
    for (const nlohmann::json& k : j.at("kernels")) {
      KernelReport kernel;
      kernel.name = k.at("name").get<std::string>();
      kernel.stats = stats_of(k.at("stats"));
      for (const nlohmann::json& f : k.at("findings")) {
        kernel.findings.push_back(finding_of(f));
      }
      for (const nlohmann::json& f : k.at("early_reads")) {
        kernel.early_reads.push_back(early_read_of(f));
      }
      r.kernels.push_back(std::move(kernel));
    }
    r.cubin_sha256 = j.at("cubin_sha256").get<std::string>();
    r.cubin_bytes = j.at("cubin_bytes").get<std::size_t>();
    const nlohmann::json& d = j.at("disassembler");
    r.disassembler.path = d.at("path").get<std::string>();
    r.disassembler.origin = d.at("origin").get<std::string>();
    r.disassembler.version = d.at("version").get<std::string>();
    r.disassembler.sha256 = d.at("sha256").get<std::string>();
    r.listing_format = d.at("format").get<std::string>();
    r.input = d.at("input").get<std::string>();
    r.warnings = j.at("warnings").get<std::vector<std::string>>();
    r.disassemble_ms = j.at("disassemble_ms").get<double>();
    // Equal to what would be written: finding_count is the findings' count, the
    // accesses and addresses are in their one spelling, no key is extra.
    if (nlohmann::json(r) != j) {
      return std::nullopt;
    }
    return r;
  } catch (const nlohmann::json::exception&) {  // a missing key, a wrong type, a number out of range
    return std::nullopt;
  } catch (const lp::Error&) {  // a value outside its vocabulary
    return std::nullopt;
  }
}

bool same_findings(const ListingReport& a, const ListingReport& b) {
  if (a.kernels.size() != b.kernels.size()) {
    return false;
  }
  for (std::size_t k = 0; k < a.kernels.size(); ++k) {
    const KernelReport& x = a.kernels[k];
    const KernelReport& y = b.kernels[k];
    // Compared in their JSON form: every field of every finding, in the one spelling.
    if (x.name != y.name || nlohmann::json(x.findings) != nlohmann::json(y.findings) ||
        nlohmann::json(x.early_reads) != nlohmann::json(y.early_reads)) {
      return false;
    }
  }
  return true;
}

}  // namespace lp::sass
