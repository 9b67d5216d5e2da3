// loraprobe inspect: the static wgmma register-hazard analysis of SASS, with no
// GPU. Three modes: the kernel set (every variant, or --filter, under prebuilt,
// the toolkit's ptxas and each --ptxas), the user's own PTX and cubins (paths),
// and the ptxas version matrix (--ptxas-matrix).

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include <fmt/format.h>

#include "cli/app.hpp"
#include "cli/commands.hpp"
#include "cli/inspect_table.hpp"
#include "cli/kernel_options.hpp"
#include "cli/validators.hpp"
#include "compile/toolchain.hpp"
#include "inspect/inputs.hpp"
#include "inspect/inspector.hpp"
#include "inspect/matrix.hpp"
#include "kernels/case_variants.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "inspect_schema_version.hpp"
#include "report/report.hpp"
#include "sass/checks.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "version.hpp"

namespace lp::cli {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

/// Everything `loraprobe inspect` takes.
struct InspectOptions {
  KernelSetOptions kernels;
  std::vector<std::string> paths;
  std::string filter;
  std::vector<std::string> ptxas;
  std::vector<std::string> compilers;
  std::optional<std::string> nvdisasm;
  std::vector<std::string> checks;
  std::string matrix_dir;
  bool matrix = false;
  unsigned jobs = 0;
  bool json = false;
  bool list_checks = false;
  bool no_cache = false;
  bool no_skip = false;
  std::string config_path;
  bool hazards_only = false;
};

/// A compiler the items are labelled with.
struct Compiler {
  std::string label;  ///< "prebuilt", "file", "ptxas=<spec>"
  std::string kind;   ///< "prebuilt", "file", "ptxas"
  std::optional<compile::PtxasInfo> ptxas;  ///< unset for prebuilt, file, and the per-set ptxas=triton
  bool bundled = false;  ///< ptxas=triton of kernel-set variants: the bundled ptxas of each variant's set
  [[nodiscard]] json to_json() const {
    return {{"label", label}, {"kind", kind}, {"ptxas", ptxas ? ptxas->to_json() : json(nullptr)},
            {"per_triton_set", bundled}};
  }
};

/// A variant and the set it comes from.
struct SetVariant {
  const kernels::KernelSet* set = nullptr;
  const kernels::Variant* variant = nullptr;
};

/// What the run inspects, however it was chosen.
struct Work {
  std::string mode;  ///< kernel_set, files, ptxas_matrix
  std::shared_ptr<const kernels::KernelSets> all_sets;
  std::vector<const kernels::KernelSet*> sets;  ///< the selected ones (--triton)
  std::vector<SetVariant> variants;
  std::vector<inspect::InputFile> files;
  std::vector<Compiler> compilers;
  std::vector<inspect::InspectItem> items;
  std::vector<inspect::MatrixColumn> columns;  ///< ptxas_matrix only
  std::map<std::string, std::vector<std::string>> missing;  ///< ptxas_matrix: default rows a set lacks
};

/// ptxas=SPEC, labelled with the version it resolved to when SPEC is a version prefix
/// ("--ptxas 13" reads "ptxas=13.5.37" in the table and the JSON).
Compiler ptxas_compiler(const std::string& spec) {
  compile::PtxasInfo info = compile::resolve_ptxas(spec);
  const bool version_spec = !spec.empty() && spec.find('/') == std::string::npos && std::isdigit(spec[0]) != 0;
  const std::string label = version_spec && !info.version.empty() ? info.version : spec;
  return {"ptxas=" + label, "ptxas", std::move(info)};
}

void add_unique(std::vector<Compiler>& list, Compiler compiler) {
  for (const Compiler& c : list) {
    if (c.label == compiler.label) {
      return;
    }
  }
  list.push_back(std::move(compiler));
}

/// ptxas=SPEC: for kernel-set variants, ptxas=triton is each set's bundled ptxas.
Compiler spec_compiler(const std::string& spec, bool files_mode) {
  if (spec == "triton" && !files_mode) {
    return {"ptxas=triton", "ptxas", std::nullopt, true};
  }
  return ptxas_compiler(spec);
}

/// --compilers entries: prebuilt, ptxas=SPEC, or a bare toolkit / triton.
std::vector<Compiler> parse_compilers(const std::vector<std::string>& entries, bool files_mode) {
  std::vector<Compiler> out;
  for (const std::string& entry : entries) {
    if (entry == "prebuilt") {
      if (files_mode) {
        throw UsageError("--compilers prebuilt: only the kernel set has prebuilt cubins; files are inspected as given "
                         "(cubins) or compiled with ptxas (PTX)");
      }
      add_unique(out, {"prebuilt", "prebuilt", std::nullopt});
    } else if (entry == "driver") {
      throw UsageError("--compilers driver: the driver's JIT needs a GPU; 'loraprobe sweep' inspects what it built, "
                       "inspect compiles with ptxas=PATH|VERSION|toolkit|triton");
    } else if (entry.rfind("ptxas=", 0) == 0 && entry.size() > 6) {
      add_unique(out, spec_compiler(entry.substr(6), files_mode));
    } else if (entry == "toolkit" || entry == "triton") {
      add_unique(out, spec_compiler(entry, files_mode));
    } else {
      throw UsageError(fmt::format("--compilers {}: expected prebuilt or ptxas=PATH|VERSION|toolkit|triton", entry));
    }
  }
  return out;
}

/// The ok variants of `sets` that match --filter; a `triton=V` term selects sets.
std::vector<SetVariant> select_variants(const std::vector<const kernels::KernelSet*>& sets, const std::string& filter) {
  std::vector<kernels::FilterTerm> terms =
      filter.empty() ? std::vector<kernels::FilterTerm>{} : kernels::parse_filter(filter);
  const std::vector<std::string> tritons = take_triton_terms(terms);
  std::vector<SetVariant> out;
  for (const kernels::KernelSet* set : sets) {
    if (!tritons.empty() && std::find(tritons.begin(), tritons.end(), set->triton()) == tritons.end()) {
      continue;
    }
    for (const kernels::Variant* v : set->filter(terms)) {
      if (v->ok()) {
        out.push_back({set, v});
      }
    }
  }
  if (out.empty()) {
    std::string where;
    for (const kernels::KernelSet* set : sets) {
      where += (where.empty() ? "" : ", ") + set->origin();
    }
    throw UsageError(fmt::format("--filter {}: no compiled variant of {} matches ('loraprobe list --filter' shows "
                                 "what there is)",
                                 filter, where));
  }
  return out;
}

/// One item per (variant, compiler), PTX and cubins read once per variant; a ptxas
/// compile uses the options of the variant's Triton.
std::vector<inspect::InspectItem> variant_items(const std::vector<SetVariant>& variants,
                                                const std::vector<Compiler>& compilers) {
  std::vector<inspect::InspectItem> items;
  std::map<std::string, compile::PtxasInfo> bundled;  // by Triton version
  for (const auto& [set, v] : variants) {
    // Every item of a variant shares its PTX: compiled by the ptxas items, checked by all.
    // A --kernel-dir set whose pack is corrupt is bad input (exit 2); an embedded one
    // that is corrupt is a broken build (main's internal error).
    const auto contents = [&, s = set](const kernels::FileRef& f) {
      try {
        return s->contents(f);
      } catch (const Error& e) {
        if (s->is_embedded()) {
          throw;
        }
        throw UsageError(fmt::format("--kernel-dir {}: {}", s->origin(), e.what()));
      }
    };
    const auto ptx = std::make_shared<const std::string>(contents(*v->ptx));
    for (const Compiler& c : compilers) {
      inspect::InspectItem item{v->id, v->id, c.label, {}, std::nullopt, ptx, set->triton()};
      if (c.kind == "prebuilt") {
        item.cubin = contents(*v->cubin);
      } else {
        if (c.bundled && bundled.count(set->triton()) == 0) {
          bundled.emplace(set->triton(), compile::resolve_bundled_ptxas({set->triton(),
                                                                          set->manifest().ptxas.value("path_hint", ""),
                                                                          set->manifest().ptxas.value("sha256", "")}));
        }
        item.ptx = inspect::PtxInput{ptx, c.bundled ? bundled.at(set->triton()) : *c.ptxas,
                                     set->manifest().ptxas_options};
      }
      items.push_back(std::move(item));
    }
  }
  return items;
}

/// "12.8.93" out of the manifest's "Cuda compilation tools, release 12.8, V12.8.93".
std::string prebuilt_version(const kernels::KernelSet& set) {
  const auto parsed = tools::parse_tool_version(set.manifest().ptxas.value("version", std::string()));
  return parsed ? parsed->version : std::string("?");
}

Work plan_matrix(const InspectOptions& o) {
  if (!o.paths.empty()) {
    throw UsageError("--ptxas-matrix inspects kernel-set variants; it takes no files (did a path follow "
                     "--ptxas-matrix? write --ptxas-matrix=DIR)");
  }
  if (!o.compilers.empty()) {
    throw UsageError("--ptxas-matrix uses every ptxas of its folder plus the prebuilt cubins; --compilers does not "
                     "apply (--ptxas adds a column)");
  }
  Work w;
  w.mode = "ptxas_matrix";
  w.all_sets = o.kernels.load();
  w.sets = o.kernels.selected(*w.all_sets);
  if (o.filter.empty()) {
    for (const kernels::KernelSet* set : w.sets) {
      std::vector<std::string> missing;
      for (const kernels::Variant* v : inspect::default_matrix_variants(*set, &missing)) {
        w.variants.push_back({set, v});
      }
      w.missing[set->triton()] = std::move(missing);
    }
  } else {
    w.variants = select_variants(w.sets, o.filter);
  }
  const std::string dir = o.matrix_dir.empty() ? tools::tools_dir() + "/ptxas" : o.matrix_dir;
  w.compilers.push_back({"prebuilt", "prebuilt", std::nullopt});
  std::vector<compile::PtxasInfo> found = inspect::ptxas_in_folder(dir);
  for (const std::string& spec : o.ptxas) {
    found.push_back(compile::resolve_ptxas(spec));
  }
  for (compile::PtxasInfo& info : found) {
    Compiler c{"ptxas=" + info.spec, "ptxas", info};
    w.columns.push_back({c.label, info.version.empty() ? info.spec : info.version, info.path});
    add_unique(w.compilers, std::move(c));
  }
  w.items = variant_items(w.variants, w.compilers);
  return w;
}

Work plan_kernel_set(const InspectOptions& o) {
  Work w;
  w.mode = "kernel_set";
  if (o.compilers.empty()) {
    w.compilers.push_back({"prebuilt", "prebuilt", std::nullopt});
    if (tools::toolkit_root()) {
      w.compilers.push_back(ptxas_compiler("toolkit"));
    }
  } else {
    w.compilers = parse_compilers(o.compilers, false);
  }
  for (const std::string& spec : o.ptxas) {
    add_unique(w.compilers, spec_compiler(spec, false));
  }
  w.all_sets = o.kernels.load();
  w.sets = o.kernels.selected(*w.all_sets);
  w.variants = select_variants(w.sets, o.filter);
  w.items = variant_items(w.variants, w.compilers);
  return w;
}

/// --config: the static half of a sweep of that config, without a GPU: every
/// (set, variant) its cases load, under the config's compilers (driver needs a GPU:
/// left out, and said) plus --ptxas.
Work plan_config(const InspectOptions& o) {
  if (!o.paths.empty() || !o.filter.empty()) {
    throw UsageError("--config picks the variants a sweep of that config loads; it takes no files or --filter");
  }
  plan::SweepConfig config = plan::load_config_file(o.config_path);
  if (!o.kernels.tritons.empty()) {
    std::string text;
    for (const std::string& t : o.kernels.tritons) {
      text += (text.empty() ? "" : ",") + t;
    }
    plan::override_axis(config, plan::AxisId::triton,
                        plan::parse_flag_values(plan::axis_info(plan::AxisId::triton), text), "--triton");
  }
  Work w;
  w.mode = "kernel_set";
  w.all_sets = o.kernels.load();
  const plan::Plan p = plan::expand_plan(config, w.all_sets->versions());
  std::set<std::string> compilers;
  std::set<std::pair<std::string, std::string>> seen;
  for (const plan::Case& c : p.cases) {
    compilers.insert(c.compiler);
    const kernels::KernelSet& set = w.all_sets->at(c.triton);
    if (std::find(w.sets.begin(), w.sets.end(), &set) == w.sets.end()) {
      w.sets.push_back(&set);
    }
    std::vector<nlohmann::json> wanted;
    if (c.shrink) {
      wanted.push_back(kernels::wanted_shrink_axes(c));
    }
    if (c.expand) {
      wanted.push_back(kernels::wanted_expand_axes(c));
    }
    for (const nlohmann::json& axes : wanted) {
      const kernels::Lookup found = set.lookup(axes);
      if (found.variant != nullptr && seen.insert({c.triton, found.variant->id}).second) {
        w.variants.push_back({&set, found.variant});
      } else if (found.variant == nullptr && seen.insert({c.triton, found.problem}).second) {
        fmt::print(stderr, "inspect: Triton {}: {} (a sweep records those cases as skipped)\n", c.triton,
                   found.problem);
      }
    }
  }
  std::sort(w.sets.begin(), w.sets.end(), [&](const kernels::KernelSet* a, const kernels::KernelSet* b) {
    const auto& order = w.all_sets->all();
    return a - order.data() < b - order.data();
  });
  if (!o.compilers.empty()) {
    // --compilers replaces the config's (a gate of one new ptxas: --compilers ptxas=PATH).
    compilers.clear();
    w.compilers = parse_compilers(o.compilers, false);
  }
  for (const std::string& compiler : compilers) {
    if (compiler == "prebuilt") {
      add_unique(w.compilers, {"prebuilt", "prebuilt", std::nullopt});
    } else if (compiler == "driver") {
      fmt::print(stderr, "inspect: --config {}: compiler driver left out (the driver's JIT needs a GPU; a sweep "
                         "inspects what it built)\n", o.config_path);
    } else {
      add_unique(w.compilers, spec_compiler(compiler.substr(6), false));
    }
  }
  for (const std::string& spec : o.ptxas) {
    add_unique(w.compilers, spec_compiler(spec, false));
  }
  if (w.variants.empty() || w.compilers.empty()) {
    throw UsageError(fmt::format("--config {}: its plan loads no variant this can inspect", o.config_path));
  }
  w.items = variant_items(w.variants, w.compilers);
  return w;
}

Work plan_files(const InspectOptions& o) {
  if (!o.filter.empty()) {
    throw UsageError("--filter selects kernel-set variants; it does not apply to files");
  }
  if (!o.kernels.kernel_dirs.empty() || !o.kernels.tritons.empty()) {
    throw UsageError("--kernel-dir and --triton name kernel sets; they do not apply to files");
  }
  Work w;
  w.mode = "files";
  w.files = inspect::collect_inputs(o.paths);
  std::vector<Compiler> ptxas = parse_compilers(o.compilers, true);
  for (const std::string& spec : o.ptxas) {
    add_unique(ptxas, ptxas_compiler(spec));
  }
  const bool any_ptx = std::any_of(w.files.begin(), w.files.end(),
                                   [](const inspect::InputFile& f) { return f.kind == inspect::InputKind::ptx; });
  if (any_ptx && ptxas.empty()) {
    if (tools::toolkit_root()) {
      ptxas.push_back(ptxas_compiler("toolkit"));
    } else if (compile::triton_bin_dir()) {
      ptxas.push_back(ptxas_compiler("triton"));
    } else {
      throw UsageError("no ptxas to compile the PTX inputs with (no CUDA toolkit, no Triton): give --ptxas PATH");
    }
  }
  if (std::any_of(w.files.begin(), w.files.end(),
                  [](const inspect::InputFile& f) { return f.kind == inspect::InputKind::cubin; })) {
    w.compilers.push_back({"file", "file", std::nullopt});
  }
  if (any_ptx) {
    w.compilers.insert(w.compilers.end(), ptxas.begin(), ptxas.end());
  }
  // A cubin with a .ptx of the same name beside it (a Triton cache entry) is
  // checked at both levels, which says who made its hazard.
  std::map<std::string, std::shared_ptr<const std::string>> ptx_by_stem;
  for (const inspect::InputFile& f : w.files) {
    if (f.kind == inspect::InputKind::ptx) {
      ptx_by_stem[std::filesystem::path(f.path).replace_extension().string()] =
          std::make_shared<const std::string>(f.contents);
    }
  }
  for (const inspect::InputFile& f : w.files) {
    if (f.kind == inspect::InputKind::cubin) {
      const auto sibling = ptx_by_stem.find(std::filesystem::path(f.path).replace_extension().string());
      w.items.push_back({f.path, std::nullopt, "file", f.contents, std::nullopt,
                         sibling == ptx_by_stem.end() ? nullptr : sibling->second, ""});
      continue;
    }
    const auto text = std::make_shared<const std::string>(f.contents);
    for (const Compiler& c : ptxas) {
      w.items.push_back({f.path, std::nullopt, c.label, {}, inspect::PtxInput{text, *c.ptxas}, nullptr, ""});
    }
  }
  return w;
}

/// Progress on stderr every 10 s, so a cold run of the whole set on a small
/// machine does not look hung; short runs print nothing.
inspect::ProgressFunction progress_printer() {
  const auto start = Clock::now();
  auto last = std::make_shared<Clock::time_point>(start);
  return [start, last](const inspect::InspectResult&, std::size_t done, std::size_t total) {
    const auto now = Clock::now();
    if (now - *last < std::chrono::seconds(10) || done == total) {
      return;
    }
    *last = now;
    const double s = std::chrono::duration<double>(now - start).count();
    fmt::print(stderr, "inspect: {}/{} done ({:.0f}%), {:.0f} s\n", done, total, 100.0 * double(done) / double(total),
               s);
    std::fflush(stderr);
  };
}

std::string list_checks_text() {
  std::size_t width = 2;
  for (const sass::Check& c : sass::all_checks()) {
    width = std::max(width, c.id.size());
  }
  std::string out = fmt::format("{:<{}}  {}\n", "id", width, "description");
  for (const sass::Check& c : sass::all_checks()) {
    out += fmt::format("{:<{}}  {}\n", c.id, width, c.description);
  }
  return out;
}

std::string summary_line(const Work& w, const InspectTotals& t, const sass::Nvdisasm& tool,
                         const inspect::CacheStats& cache, bool cache_on, double seconds, unsigned jobs) {
  std::string what;
  if (w.mode == "files") {
    what = fmt::format("{} file(s)", w.files.size());
  } else {
    what = fmt::format("{} variant(s) x {} compiler(s)", w.variants.size(), w.compilers.size());
  }
  const std::size_t lookups = cache.sass_hits + cache.sass_misses;
  const std::string cache_text =
      !cache_on ? "cache off"
                : fmt::format("{} of {} reports from the cache{}", cache.sass_hits, lookups,
                              cache.write_errors > 0 ? fmt::format(" ({} not written: {})", cache.write_errors,
                                                                   cache.first_write_error)
                                                     : std::string());
  // Who made the hazards, when there are some: the PTX (fix Triton) or ptxas (a newer ptxas fixes it).
  const std::size_t unattributed = t.hazard - std::min(t.hazard, t.made_by_ptx + t.made_by_ptxas);
  const std::string made_by =
      t.hazard == 0 ? std::string()
                    : fmt::format("; made by the PTX: {}, by ptxas: {}{}", t.made_by_ptx, t.made_by_ptxas,
                                  unattributed > 0 ? fmt::format(", without PTX to tell: {}", unattributed) : "");
  const std::string skipped =
      t.skipped == 0 ? std::string() : fmt::format(" ({} without wgmma in their PTX, not disassembled)", t.skipped);
  return fmt::format("inspect: {} cubin(s) ({}): {} with a hazard ({} findings{}), {} clean{}, {} error(s); nvdisasm {} "
                     "({}); {}; {:.1f} s with -j {}\n",
                     t.items, what, t.hazard, t.findings, made_by, t.clean, skipped, t.error, tool.version, tool.origin,
                     cache_text, seconds, jobs);
}

/// After Ctrl-C or SIGTERM: what was kept and how to go on, and the exit code
/// (128 + signal); nullopt when the run was not interrupted.
std::optional<int> finish_interrupted(int signal, const std::vector<inspect::InspectResult>& results,
                                      const std::optional<std::string>& cache_root) {
  if (signal == 0) {
    return std::nullopt;
  }
  const std::size_t done = static_cast<std::size_t>(std::count_if(
      results.begin(), results.end(),
      [](const inspect::InspectResult& r) { return r.error.rfind("not inspected: interrupted", 0) != 0; }));
  fmt::print(stderr, "inspect: interrupted by {} after {} of {} cubins; {}\n", signal_name(signal), done,
             results.size(),
             cache_root ? fmt::format("their reports are in the cache ({}): the same command again redoes only the "
                                      "rest",
                                      *cache_root)
                        : std::string("--no-cache kept nothing: run again to redo them all"));
  return 128 + signal;
}

int run_inspect(const InspectOptions& o) {
  if (o.list_checks) {
    fmt::print("{}", list_checks_text());
    return 0;
  }
  const std::string started_at = report::utc_now_iso8601();
  const auto start = Clock::now();
  // Bad input (exit 2) is reported before a missing nvdisasm (exit 3).
  const Work w = o.matrix                ? plan_matrix(o)
                 : !o.config_path.empty() ? plan_config(o)
                 : o.paths.empty()        ? plan_kernel_set(o)
                                          : plan_files(o);
  sass::NvdisasmSearch search;
  search.path = o.nvdisasm;
  const sass::Nvdisasm tool = sass::find_nvdisasm(search);
  std::optional<std::string> cache_root = o.no_cache ? std::nullopt : inspect::default_cache_root();
  inspect::InspectorOptions options{tool, {o.checks}, o.jobs, cache_root, progress_printer(), !o.no_skip};
  const inspect::Inspector inspector(std::move(options));
  const std::vector<inspect::InspectResult> results = inspector.inspect_all(w.items);
  const int interrupted_by = inspector.interrupted_by();
  const InspectTotals totals = total(results);
  const inspect::CacheStats cache = inspector.cache_stats();
  // One matrix block per Triton set: its own prebuilt column, the same ptxas columns.
  std::vector<inspect::PtxasMatrix> matrices;
  if (o.matrix) {
    for (const kernels::KernelSet* set : w.sets) {
      std::vector<const kernels::Variant*> variants;
      for (const SetVariant& sv : w.variants) {
        if (sv.set == set) {
          variants.push_back(sv.variant);
        }
      }
      if (variants.empty()) {
        continue;
      }
      std::vector<inspect::InspectResult> mine;
      for (const inspect::InspectResult& r : results) {
        if (r.triton == set->triton()) {
          mine.push_back(r);
        }
      }
      std::vector<inspect::MatrixColumn> columns = w.columns;
      columns.push_back({"prebuilt", prebuilt_version(*set),
                         fmt::format("Triton {}'s bundled ptxas (the prebuilt cubins of {})", set->triton(),
                                     set->origin())});
      inspect::PtxasMatrix m = inspect::build_matrix(variants, std::move(columns), mine, set->triton());
      if (const auto it = w.missing.find(set->triton()); it != w.missing.end()) {
        m.missing = it->second;
      }
      matrices.push_back(std::move(m));
    }
    // Where a Triton's PTX is at fault, say which later set's PTX is clean there: the
    // upgrade that fixes it, measured from the embedded sets, not assumed.
    for (std::size_t i = 0; i < matrices.size(); ++i) {
      for (std::size_t t = 0; t < matrices[i].first_clean.size(); ++t) {
        inspect::FirstClean& f = matrices[i].first_clean[t];
        if (f.version || f.line.find("the PTX itself") == std::string::npos) {
          continue;
        }
        for (std::size_t j = i + 1; j < matrices.size(); ++j) {
          const inspect::FirstClean& later = matrices[j].first_clean[t];
          const bool ptx_clean = std::none_of(
              matrices[j].rows.begin(), matrices[j].rows.end(), [&](const inspect::MatrixRow& row) {
                return std::find(later.variants.begin(), later.variants.end(), row.variant->id) != later.variants.end() &&
                       std::any_of(row.cells.begin(), row.cells.end(),
                                   [](const inspect::MatrixCell& c) { return c.attribution == "ptx"; });
              });
          if (later.version && later.variants == f.variants && ptx_clean) {
            f.line += fmt::format(" (Triton {}'s PTX is clean here: first clean with ptxas {})",
                                  matrices[j].triton_version, *later.version);
            break;
          }
        }
      }
    }
  }
  const double wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();

  if (o.json) {
    json doc = {{"schema_version", inspect::k_inspect_schema_version},
                {"meta",
                 {{"tool", "loraprobe"},
                  {"command", "inspect"},
                  {"version", k_version},
                  {"git_sha", k_git_sha},
                  {"argv", command_line()},
                  {"started_at", started_at},
                  {"finished_at", report::utc_now_iso8601()},
                  {"wall_ms", wall_ms},
                  {"jobs", inspector.options().jobs},
                  {"interrupted", interrupted_by != 0 ? json(signal_name(interrupted_by)) : json(nullptr)}}},
                {"mode", w.mode},
                {"nvdisasm", tool},
                {"analysis",
                 {{"version", sass::k_analysis_version},
                  {"fingerprint", inspector.fingerprint()},
                  {"checks", inspector.check_ids()}}},
                {"kernel_sets", json::array()},
                {"compilers", json::array()},
                {"inputs", json::array()},
                {"cache", cache.to_json(cache_root)},
                {"items", json::array()},
                {"matrix", o.matrix ? json::array() : json(nullptr)},
                {"summary",
                 {{"items", totals.items},
                  {"clean", totals.clean},
                  {"hazard", totals.hazard},
                  {"error", totals.error},
                  {"findings", totals.findings},
                  {"exit_code", totals.exit_code()}}}};
    for (const kernels::KernelSet* set : w.sets) {
      doc["kernel_sets"].push_back({{"origin", set->origin()},
                                    {"triton_version", set->triton()},
                                    {"ptxas", set->manifest().ptxas},
                                    {"ptxas_options", set->manifest().ptxas_options}});
    }
    for (const inspect::PtxasMatrix& m : matrices) {
      doc["matrix"].push_back(m.to_json());
    }
    for (const Compiler& c : w.compilers) {
      doc["compilers"].push_back(c.to_json());
    }
    for (const inspect::InputFile& f : w.files) {
      doc["inputs"].push_back({{"path", f.path}, {"kind", inspect::to_string(f.kind)}, {"bytes", f.contents.size()}});
    }
    for (const inspect::InspectResult& r : results) {
      doc["items"].push_back(r.to_json());
    }
    fmt::print("{}\n", doc.dump(2));
    return finish_interrupted(interrupted_by, results, cache_root).value_or(totals.exit_code());
  }
  if (o.matrix) {
    for (const inspect::PtxasMatrix& m : matrices) {
      fmt::print("== Triton {} ==\n{}\n", m.triton_version, m.format());
    }
    for (const inspect::InspectResult& r : results) {
      if (r.status == inspect::ItemStatus::error) {
        fmt::print("error: {} ({}): {}\n", r.name, r.compiler, r.error.substr(0, r.error.find('\n')));
      }
    }
  } else {
    fmt::print("{}", format_inspect_table(results, o.hazards_only));
  }
  fmt::print("{}", summary_line(w, totals, tool, cache, cache_root.has_value(), wall_ms / 1000.0,
                                inspector.options().jobs));
  return finish_interrupted(interrupted_by, results, cache_root).value_or(totals.exit_code());
}

}  // namespace

Command add_inspect_command(CLI::App& app) {
  auto o = std::make_shared<InspectOptions>();
  CLI::App* sub = app.add_subcommand(
      "inspect", "Statically inspect SASS for the wgmma register hazard (no GPU): the kernel set, your files, "
                 "or the ptxas version matrix");
  sub->add_option("paths", o->paths,
                  "PTX files (compiled with --ptxas, default the toolkit's), cubins, or folders searched recursively "
                  "for *.ptx and *.cubin (a Triton cache directory works); none: the kernel set");
  o->kernels.add_to(*sub);
  sub->add_option("--filter", o->filter,
                  "Only variants whose fields equal every key=value, as 'loraprobe list --filter' (op, role, id, "
                  "or an axis)");
  sub->add_option("--ptxas", o->ptxas,
                  "Also compile with this ptxas: PATH, a VERSION installed under .tools/ptxas, toolkit or triton (for "
                  "kernel-set variants: the bundled ptxas of each variant's Triton; for files: the python3's Triton) "
                  "(repeatable)")
      ->allow_extra_args(false);  // one value per flag: a path after it is an input, not a second ptxas
  sub->add_option("--compilers", o->compilers,
                  "Only these compilers instead of the default (prebuilt and, when there is a CUDA toolkit, "
                  "ptxas=toolkit): prebuilt, ptxas=PATH|VERSION|toolkit|triton (comma-separated)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--nvdisasm", o->nvdisasm, "Use this nvdisasm (default: CUDA toolkit, .tools, then Triton's)")
      ->check(non_empty());
  sub->add_option("--checks", o->checks, "Run only these check ids (comma-separated; --list-checks shows them)")
      ->delimiter(',')
      ->allow_extra_args(false);
  sub->add_option("--ptxas-matrix", o->matrix_dir,
                  "Print the ptxas version matrix: vLLM's default expand configs (or --filter) compiled by every "
                  "ptxas in DIR (default: the tools folder's ptxas/) and Triton's, x findings")
      ->expected(0, 1)
      ->each([o](const std::string&) { o->matrix = true; });
  sub->add_option("-j,--jobs", o->jobs, "Inputs inspected at once (ptxas and nvdisasm processes); 0: one per "
                                        "hardware thread (default)")
      ->check(CLI::Range(0U, k_max_jobs));
  sub->add_flag("--json", o->json, "Print JSON (configs/schema/inspect.schema.json) instead of a table");
  sub->add_flag("--list-checks", o->list_checks, "Print the check table (id, description) and exit");
  sub->add_option("-c,--config", o->config_path,
                  "Inspect what a sweep of this config loads (its cases' variants in every Triton set it names, under "
                  "its compilers, or --compilers, and --ptxas), without a GPU")
      ->check(non_empty());
  sub->add_flag("--no-skip", o->no_skip,
                "Disassemble every cubin, also those whose PTX has no wgmma.mma_async (which cannot have a finding "
                "and are otherwise reported clean without nvdisasm)");
  sub->add_flag("--no-cache", o->no_cache,
                "Neither read nor write the report cache ($XDG_CACHE_HOME/loraprobe, else ~/.cache/loraprobe)");
  sub->add_flag("--hazards-only", o->hazards_only, "Leave the clean rows out of the table (the summary counts all)");
  sub->final_callback([o, sub] {
    // --ptxas-matrix without a value: each() is not called for an empty value list.
    if (sub->count("--ptxas-matrix") > 0) {
      o->matrix = true;
    }
  });
  sub->footer(
      "Examples:\n"
      "  loraprobe inspect --filter op=expand,block_n=128,num_stages=2,input_dtype=fp32\n"
      "  loraprobe inspect --compilers prebuilt --hazards-only            # every Triton-built cubin\n"
      "  loraprobe inspect --filter role=negative_control --ptxas 13.5 --json\n"
      "  loraprobe inspect ~/.triton/cache                                # your own Triton kernels\n"
      "  loraprobe inspect kernel.ptx --ptxas /opt/cuda-13.3/bin/ptxas --ptxas toolkit\n"
      "  loraprobe inspect --ptxas-matrix                                 # every Triton set x every ptxas in .tools/ptxas\n"
      "  loraprobe inspect --triton 3.8.0 --filter op=expand,input_dtype=fp32,block_n=128 --ptxas 13.3\n"
      "  loraprobe inspect --ptxas-matrix=/opt/ptxas --filter op=expand,input_dtype=fp32,block_n=128\n"
      "  loraprobe inspect --config configs/seed-48590.json --ptxas toolkit  # what the seed sweep loads, every Triton\n"
      "  loraprobe inspect --list-checks\n"
      "Reports are cached under $XDG_CACHE_HOME/loraprobe (else ~/.cache/loraprobe) by cubin, nvdisasm and\n"
      "analysis version; --no-cache bypasses it.\n"
      "Exit codes: 0 no hazard, 1 a hazard (or a cubin that could not be built or analysed), 2 bad input (also a\n"
      "corrupt --kernel-dir set), 3 no nvdisasm, 4 internal error (a bug: please report it).");
  return {sub, [o] { return run_inspect(*o); }};
}

}  // namespace lp::cli
