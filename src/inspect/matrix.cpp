#include "inspect/matrix.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "plan/axes.hpp"
#include "plan/vllm_defaults.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"

namespace lp::inspect {

namespace fs = std::filesystem;

namespace {

std::vector<int> version_parts(const std::string& v) {
  std::vector<int> parts;
  std::size_t start = 0;
  while (start <= v.size()) {
    const std::size_t dot = std::min(v.find('.', start), v.size());
    int value = 0;
    for (std::size_t i = start; i < dot && v[i] >= '0' && v[i] <= '9'; ++i) {
      value = value * 10 + (v[i] - '0');
    }
    parts.push_back(value);
    start = dot + 1;
  }
  return parts;
}

/// An fp32-input expand kernel at vLLM's fixed knobs (configs/vllm/defaults.json's
/// ptxas_matrix.common: block_m 64, 4 warps, and the EVEN_K path vLLM takes whenever
/// the rank is a multiple of block_k) whose listed axes take one of an answer's values.
bool matches(const plan::MatrixAnswer& answer, const kernels::Variant& v) {
  const AxisValues& common = plan::vllm_defaults().matrix_common;
  if (v.op != common.text("op").value_or("") || v.axes.text("input_dtype") != "fp32" ||
      (v.role != "kernel" && v.role != "negative_control")) {
    return false;
  }
  for (const char* key : {"block_m", "num_warps", "even_k"}) {
    if (v.axes.at(key) != common.at(key)) {
      return false;
    }
  }
  for (const auto& [key, values] : answer.match) {
    if (std::find(values.begin(), values.end(), v.axes.at(key)) == values.end()) {
      return false;
    }
  }
  return true;
}

FirstClean first_clean_of(const plan::MatrixAnswer& target, const PtxasMatrix& m) {
  FirstClean out;
  out.what = target.what;
  std::vector<const MatrixRow*> rows;
  for (const MatrixRow& row : m.rows) {
    if (matches(target, *row.variant)) {
      rows.push_back(&row);
      out.variants.push_back(row.variant->id);
    }
  }
  if (rows.empty() || m.columns.empty()) {
    out.line = fmt::format("{}: not in this selection", out.what);
    return out;
  }
  auto clean_in = [&](std::size_t column) {
    return std::all_of(rows.begin(), rows.end(), [&](const MatrixRow* r) {
      return r->cells[column].findings.has_value() && *r->cells[column].findings == 0;
    });
  };
  std::optional<std::size_t> first;
  for (std::size_t c = 0; c < m.columns.size(); ++c) {
    if (!first && clean_in(c)) {
      first = c;
    } else if (first && !clean_in(c)) {
      out.regressions.push_back(m.columns[c].version);
    }
  }
  const std::string count = rows.size() == 1 ? rows.front()->variant->id : fmt::format("{} variants", rows.size());
  const std::string triton = m.triton_version.empty() ? std::string() : fmt::format("Triton {}, ", m.triton_version);
  // What the set's own cubins (Triton's bundled ptxas) give, and who made a hazard.
  std::string bundled;
  bool ptx_at_fault = false;
  for (std::size_t c = 0; c < m.columns.size(); ++c) {
    for (const MatrixRow* r : rows) {
      ptx_at_fault = ptx_at_fault || r->cells[c].attribution == "ptx";
    }
    if (m.columns[c].compiler == "prebuilt" && bundled.empty()) {
      bundled = fmt::format("; bundled ptxas {} {}", m.columns[c].version,
                            clean_in(c) ? "is clean" : "has the hazard");
    }
  }
  if (!first) {
    out.line = fmt::format("{}{} [{}]: no ptxas gives clean SASS (tried {} .. {}){}", triton, out.what, count,
                           m.columns.front().version, m.columns.back().version,
                           ptx_at_fault ? ": the PTX itself writes registers of pending wgmmas, so the fix belongs in "
                                          "Triton and no ptxas can be relied on"
                                        : bundled);
    return out;
  }
  out.version = m.columns[*first].version;
  out.line = fmt::format("{}{} [{}]: first clean with ptxas {}{}{}", triton, out.what, count, *out.version,
                         out.regressions.empty()
                             ? (*first == 0 ? " (the oldest tried; every version is clean)" : " (and every later one)")
                             : fmt::format(" (hazard again with {})", fmt::join(out.regressions, ", ")),
                         bundled);
  return out;
}

}  // namespace

bool version_less(const std::string& a, const std::string& b) { return version_parts(a) < version_parts(b); }

std::vector<const kernels::Variant*> default_matrix_variants(const kernels::KernelSet& set,
                                                             std::vector<std::string>* missing) {
  const std::vector<AxisValues>& wanted = plan::vllm_defaults().matrix_rows;
  std::vector<const kernels::Variant*> out;
  for (const AxisValues& w : wanted) {
    const kernels::Lookup found = set.lookup(w);
    if (found.variant == nullptr) {
      if (missing == nullptr) {
        throw UsageError(fmt::format("--ptxas-matrix: the kernel set {} has no variant {}: {}; choose variants with "
                                     "--filter",
                                     set.origin(), w.dump(), found.problem));
      }
      missing->push_back(fmt::format("{} block_n {}, {} stage(s), {} slice(s), block_k {}",
                                     w.text("input_dtype").value_or(""), w.integer("block_n").value_or(0),
                                     w.integer("num_stages").value_or(0), w.integer("num_slices").value_or(0),
                                     w.integer("block_k").value_or(0)));
      continue;
    }
    out.push_back(found.variant);
  }
  if (out.empty()) {
    throw UsageError(fmt::format("--ptxas-matrix: the kernel set {} has none of the default matrix rows; choose "
                                 "variants with --filter",
                                 set.origin()));
  }
  return out;
}

std::vector<compile::PtxasInfo> ptxas_in_folder(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw UsageError(fmt::format("--ptxas-matrix {}: not a folder (scripts/install_tools.sh fills {}/ptxas)", dir,
                                 tools::tools_dir()));
  }
  std::vector<compile::PtxasInfo> found;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    for (const char* rel : {"ptxas", "bin/ptxas"}) {
      const fs::path candidate = entry.path() / rel;
      if (tools::is_executable_file(candidate.string())) {
        compile::PtxasInfo info = compile::describe_found_ptxas(entry.path().filename().string(), candidate.string());
        info.spec = entry.path().filename().string();
        found.push_back(std::move(info));
        break;
      }
    }
  }
  if (found.empty()) {
    throw UsageError(fmt::format("--ptxas-matrix {}: no <version>/ptxas or <version>/bin/ptxas in this folder", dir));
  }
  std::sort(found.begin(), found.end(), [](const compile::PtxasInfo& a, const compile::PtxasInfo& b) {
    const std::string& va = a.version.empty() ? a.spec : a.version;
    const std::string& vb = b.version.empty() ? b.spec : b.version;
    return version_less(va, vb);
  });
  return found;
}

PtxasMatrix build_matrix(const std::vector<const kernels::Variant*>& variants, std::vector<MatrixColumn> columns,
                         const std::vector<InspectResult>& results, const std::string& triton_version) {
  PtxasMatrix m;
  m.triton_version = triton_version;
  std::stable_sort(columns.begin(), columns.end(), [](const MatrixColumn& a, const MatrixColumn& b) {
    if (a.version != b.version) {
      return version_less(a.version, b.version);
    }
    return a.compiler == "prebuilt" && b.compiler != "prebuilt";
  });
  m.columns = std::move(columns);
  std::map<std::pair<std::string, std::string>, const InspectResult*> by_key;
  for (const InspectResult& r : results) {
    if (r.variant) {
      by_key[{*r.variant, r.compiler}] = &r;
    }
  }
  for (const kernels::Variant* v : variants) {
    MatrixRow row;
    row.variant = v;
    for (const MatrixColumn& column : m.columns) {
      MatrixCell cell;
      const auto it = by_key.find({v->id, column.compiler});
      if (it == by_key.end()) {
        cell.status = "missing";
      } else {
        cell.status = std::string(to_string(it->second->status));
        if (it->second->status != StaticOutcome::error && it->second->status != StaticOutcome::incompatible) {
          cell.findings = it->second->finding_count;
          cell.cubin_sha256 = it->second->sass ? it->second->sass->cubin_sha256 : std::string();
          cell.attribution = it->second->attribution;
        }
      }
      row.cells.push_back(std::move(cell));
    }
    m.rows.push_back(std::move(row));
  }
  for (const plan::MatrixAnswer& target : plan::vllm_defaults().matrix_answers) {
    m.first_clean.push_back(first_clean_of(target, m));
  }
  return m;
}

std::string PtxasMatrix::format() const {
  // Label columns: the ones the issue names always, the others only when they vary.
  std::vector<std::pair<std::string, std::string>> labels = {
      {"input_dtype", "in"}, {"weight_dtype", "w"}, {"block_n", "bn"}, {"num_stages", "ns"}, {"num_slices", "S"}};
  for (const auto& [key, head] : std::vector<std::pair<std::string, std::string>>{
           {"block_m", "bm"}, {"block_k", "bk"}, {"num_warps", "nw"}, {"even_k", "evenk"}, {"add_inputs", "add"},
           {"same_stride", "same"}, {"split_k", "sk"}}) {
    std::set<std::string> seen;
    for (const MatrixRow& row : rows) {
      seen.insert(plan::format_cell(row.variant->axes, key));
    }
    if (seen.size() > 1) {
      labels.emplace_back(key, head);
    }
  }
  std::set<std::string> roles;
  for (const MatrixRow& row : rows) {
    roles.insert(row.variant->role);
  }
  std::vector<std::size_t> width;
  for (const auto& [key, head] : labels) {
    std::size_t w = head.size();
    for (const MatrixRow& row : rows) {
      w = std::max(w, plan::format_cell(row.variant->axes, key).size());
    }
    width.push_back(w);
  }
  std::size_t cell_width = 7;
  for (const MatrixColumn& c : columns) {
    cell_width = std::max(cell_width, c.version.size());
  }
  auto label_cells = [&](auto&& text_of) {
    std::string s;
    for (std::size_t i = 0; i < labels.size(); ++i) {
      s += fmt::format("{:>{}} ", text_of(i), width[i]);
    }
    return s;
  };
  std::string out = "ptxas version matrix: wgmma hazard findings per cubin (0 = clean SASS, x = incompatible: this ptxas cannot read the PTX, err = not analysed)\n";
  std::string head1 = label_cells([&](std::size_t i) { return labels[i].second; }) + "|";
  std::string head2 = label_cells([](std::size_t) { return std::string(); }) + "|";
  for (const MatrixColumn& c : columns) {
    head1 += fmt::format(" {:>{}}", c.compiler == "prebuilt" ? "Triton" : "ptxas", cell_width);
    head2 += fmt::format(" {:>{}}", c.version, cell_width);
  }
  out += head1 + "\n" + head2 + "\n";
  for (const MatrixRow& row : rows) {
    std::string line = label_cells([&](std::size_t i) { return plan::format_cell(row.variant->axes, labels[i].first); }) + "|";
    for (const MatrixCell& cell : row.cells) {
      line += fmt::format(" {:>{}}",
                          cell.findings                    ? std::to_string(*cell.findings)
                          : cell.status == "missing"      ? std::string("-")
                          : cell.status == "incompatible" ? std::string("x")
                                                           : std::string("err"),
                          cell_width);
    }
    for (const plan::MatrixAnswer& target : plan::vllm_defaults().matrix_answers) {
      if (matches(target, *row.variant)) {
        line += "  <- " + target.marker;
      }
    }
    if (roles.size() > 1 && row.variant->role != "kernel") {
      line += "  (" + row.variant->role + ")";
    }
    out += line + "\n";
  }
  for (const MatrixColumn& c : columns) {
    out += fmt::format("  {} {}: {}\n", c.compiler == "prebuilt" ? "Triton" : "ptxas", c.version, c.source);
  }
  if (!missing.empty()) {
    out += fmt::format("  not in this set (its matrix is smaller): {}\n", fmt::join(missing, "; "));
  }
  for (const FirstClean& f : first_clean) {
    out += f.line + "\n";
  }
  return out;
}

}  // namespace lp::inspect
