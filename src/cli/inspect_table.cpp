#include "cli/inspect_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace lp::cli {

namespace {

/// One table row's cells, from the SASS analysis (several kernels in one cubin add
/// up; the deepest and largest figures win).
struct RowFigures {
  std::size_t wgmma = 0;
  bool a_from_registers = false;
  long long in_flight = 0;
  std::optional<long long> registers;
  unsigned long long frame_bytes = 0;
  std::size_t local_loads = 0;
  std::size_t local_stores = 0;
  std::string first_finding;
};

RowFigures figures(const sass::CubinReport* sass) {
  RowFigures f;
  if (sass == nullptr) {
    return f;
  }
  for (const sass::KernelReport& kernel : sass->kernels) {
    const sass::KernelStats& s = kernel.stats;
    f.wgmma += s.wgmma;
    f.a_from_registers = f.a_from_registers || s.a_from_registers();
    f.in_flight = std::max<long long>(f.in_flight, s.max_groups_in_flight);
    if (s.registers) {
      f.registers = std::max<long long>(f.registers.value_or(0), *s.registers);
    }
    if (s.frame_bytes) {
      f.frame_bytes = std::max<unsigned long long>(f.frame_bytes, *s.frame_bytes);
    }
    f.local_loads += s.local_loads;
    f.local_stores += s.local_stores;
    if (f.first_finding.empty() && !kernel.findings.empty()) {
      const sass::Finding& first = kernel.findings.front();
      f.first_finding = fmt::format("{} {}  (HGMMA {} in flight{})", sass::format_address(first.address),
                                    first.instruction, sass::format_address(first.wgmma_address),
                                    first.over_back_edge ? ", over the back-edge" : "");
    }
  }
  // An early read is named when there is no wgmma finding to show.
  for (const sass::KernelReport& kernel : sass->kernels) {
    if (f.first_finding.empty() && !kernel.early_reads.empty()) {
      const sass::EarlyRead& first = kernel.early_reads.front();
      f.first_finding = fmt::format("{} {}  (reads {} before {} {})", sass::format_address(first.address),
                                    first.instruction, first.param, first.wait_instruction,
                                    sass::format_address(first.wait_address));
    }
  }
  return f;
}

/// The first line of an error, short enough for a table.
std::string short_error(const std::string& error) {
  std::string line = error.substr(0, error.find('\n'));
  constexpr std::size_t k_max = 160;
  if (line.size() > k_max) {
    line = line.substr(0, k_max - 3) + "...";
  }
  return "error: " + line;
}

}  // namespace

std::string format_inspect_table(const std::vector<inspect::InspectResult>& results, bool hazards_only) {
  std::size_t name_width = std::string_view("variant / file").size();
  std::size_t compiler_width = std::string_view("compiler").size();
  for (const inspect::InspectResult& r : results) {
    name_width = std::max(name_width, r.name.size());
    compiler_width = std::max(compiler_width, r.compiler.size());
  }
  // A triton column when the rows come from kernel sets (several Tritons share variant ids).
  const bool with_triton = std::any_of(results.begin(), results.end(),
                                       [](const inspect::InspectResult& r) { return !r.triton.empty(); });
  auto triton_cell = [&](const std::string& t) {
    return with_triton ? fmt::format("{:<7} ", t.empty() ? "-" : t) : std::string();
  };
  std::string out = triton_cell("triton");
  out += fmt::format("{:<{}} {:<{}} {:>8} {:>7} {:>11} {:>5} {:>5} {:>8} {:>4} {:>9}  {}\n", "variant / file",
                     name_width, "compiler", compiler_width, "findings", "made_by", "early_reads", "hgmma", "a_reg",
                     "inflight", "regs", "local", "first finding");
  for (const inspect::InspectResult& r : results) {
    if (hazards_only && r.status == inspect::StaticOutcome::clean) {
      continue;
    }
    out += triton_cell(r.triton);
    if (r.status == inspect::StaticOutcome::error || r.status == inspect::StaticOutcome::incompatible) {
      out += fmt::format("{:<{}} {:<{}} {:>8} {:>7} {:>11} {:>5} {:>5} {:>8} {:>4} {:>9}  {}\n", r.name, name_width,
                         r.compiler, compiler_width, "-", "-", "-", "-", "-", "-", "-", "-",
                         r.status == inspect::StaticOutcome::incompatible ? "incompatible: " + r.error
                                                                          : short_error(r.error));
      continue;
    }
    if (!r.skipped.empty()) {
      out += fmt::format("{:<{}} {:<{}} {:>8} {:>7} {:>11} {:>5} {:>5} {:>8} {:>4} {:>9}  {}\n", r.name, name_width,
                         r.compiler, compiler_width, 0, "-", 0, 0, "-", "-", "-", "-",
                         "not disassembled: no wgmma.mma_async or griddepcontrol.wait in the PTX");
      continue;
    }
    const RowFigures f = figures(r.sass.get());
    // Local memory is where spills go: frame bytes per thread, then LDL/STL counts when any.
    const std::string local = f.local_loads + f.local_stores > 0
                                  ? fmt::format("{}B {}/{}", f.frame_bytes, f.local_loads, f.local_stores)
                                  : fmt::format("{}B", f.frame_bytes);
    // Who made the hazard: the PTX or ptxas; "-" for clean SASS, "?" without the PTX.
    const std::string made_by = r.attribution.empty() ? "?" : r.attribution == "none" ? "-" : r.attribution;
    // gdc-early-read: the count, and who made it when there are some ("4 ptx").
    const std::string early =
        !r.early_read_not_checked.empty() ? "unchecked"
        : r.early_read_count == 0         ? "0"
                                          : fmt::format("{} {}", r.early_read_count,
                                                        r.early_read_attribution.empty() ? "?" : r.early_read_attribution);
    out += fmt::format("{:<{}} {:<{}} {:>8} {:>7} {:>11} {:>5} {:>5} {:>8} {:>4} {:>9}  {}\n", r.name, name_width,
                       r.compiler, compiler_width, r.finding_count, made_by, early, f.wgmma,
                       f.a_from_registers ? "yes" : "no", f.in_flight,
                       f.registers ? std::to_string(*f.registers) : std::string("-"), local,
                       f.first_finding.empty() ? "-" : f.first_finding);
  }
  // A "?" whose PTX was there but did not parse says why (a .ptx joined onto one line).
  for (const inspect::InspectResult& r : results) {
    if (r.attribution.empty() && r.finding_count > 0 && r.ptx && !r.ptx->report) {
      out += fmt::format("made_by ? for {}: its PTX did not parse: {}\n", r.name, r.ptx->error.substr(0, r.ptx->error.find('\n')));
    }
  }
  return out;
}

}  // namespace lp::cli
