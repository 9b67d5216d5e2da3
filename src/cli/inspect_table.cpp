#include "cli/inspect_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace lp::cli {

namespace {

using nlohmann::json;

/// One table row's cells, from the CubinReport JSON (several kernels in one cubin
/// add up; the deepest and largest figures win).
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

RowFigures figures(const json& sass) {
  RowFigures f;
  for (const json& kernel : sass.value("kernels", json::array())) {
    const json& s = kernel.at("stats");
    f.wgmma += s.value("wgmma", std::size_t{0});
    f.a_from_registers = f.a_from_registers || s.value("a_from_registers", false);
    f.in_flight = std::max(f.in_flight, s.value("max_groups_in_flight", 0LL));
    if (s.contains("registers") && s["registers"].is_number()) {
      f.registers = std::max(f.registers.value_or(0), s["registers"].get<long long>());
    }
    if (s.contains("frame_bytes") && s["frame_bytes"].is_number()) {
      f.frame_bytes = std::max(f.frame_bytes, s["frame_bytes"].get<unsigned long long>());
    }
    f.local_loads += s.value("local_loads", std::size_t{0});
    f.local_stores += s.value("local_stores", std::size_t{0});
    const json& findings = kernel.at("findings");
    if (f.first_finding.empty() && !findings.empty()) {
      const json& first = findings.front();
      f.first_finding = fmt::format("{} {}  (HGMMA {} in flight{})", first.value("address", ""),
                                    first.value("instruction", ""), first.at("wgmma").value("address", ""),
                                    first.value("over_back_edge", false) ? ", over the back-edge" : "");
    }
  }
  // An early read is named when there is no wgmma finding to show.
  for (const json& kernel : sass.value("kernels", json::array())) {
    const json& early = kernel.value("early_reads", json::array());
    if (f.first_finding.empty() && !early.empty()) {
      const json& first = early.front();
      f.first_finding = fmt::format("{} {}  (reads {} before {} {})", first.value("address", ""),
                                    first.value("instruction", ""), first.value("param", ""),
                                    first.at("wait").value("instruction", ""), first.at("wait").value("address", ""));
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
    const RowFigures f = figures(r.sass);
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
  return out;
}

}  // namespace lp::cli
