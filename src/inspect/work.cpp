#include "inspect/work.hpp"

#include "inspect/produced.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "compile/ptxas.hpp"
#include "compile/toolchain.hpp"
#include "ptx/amplify.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"

namespace lp::inspect {

using compile::Compiler;
using compile::CompilerKind;

namespace {

RunCompiler prebuilt() { return {Compiler::prebuilt(), "prebuilt", std::nullopt}; }

/// ptxas=SPEC, resolved; labelled with the version it resolved to when SPEC is a
/// version prefix ("--ptxas 13" reads "ptxas=13.5.37" in the table and the JSON).
RunCompiler resolved_ptxas(const std::string& spec) {
  compile::PtxasInfo info = compile::resolve_ptxas(spec);
  const bool version_spec = !spec.empty() && spec.find('/') == std::string::npos && std::isdigit(spec[0]) != 0;
  const std::string label = version_spec && !info.version.empty() ? info.version : spec;
  return {Compiler::with_ptxas(spec), Compiler::with_ptxas(label).to_string(), std::move(info)};
}

/// ptxas=SPEC: for kernel-set variants, ptxas=triton is each set's bundled ptxas.
RunCompiler ptxas_compiler(const std::string& spec, bool files_mode) {
  if (spec == "triton" && !files_mode) {
    return {Compiler::with_ptxas("triton"), Compiler::with_ptxas("triton").to_string(), std::nullopt};
  }
  return resolved_ptxas(spec);
}

void add_unique(std::vector<RunCompiler>& list, RunCompiler compiler) {
  for (const RunCompiler& c : list) {
    if (c.label == compiler.label) {
      return;
    }
  }
  list.push_back(std::move(compiler));
}

/// A compiler inspect can use (driver needs a GPU; prebuilt only exists for kernel sets).
RunCompiler run_compiler(const Compiler& c, bool files_mode, std::string_view where) {
  switch (c.kind) {
    case CompilerKind::prebuilt:
      if (files_mode) {
        throw UsageError(fmt::format("{} prebuilt: only the kernel set has prebuilt cubins; files are inspected as "
                                     "given (cubins) or compiled with ptxas (PTX)",
                                     where));
      }
      return prebuilt();
    case CompilerKind::driver:
      throw UsageError(fmt::format("{} driver: inspect does not run the driver's JIT, on a GPU machine either (a "
                                   "sweep's GPU worker does); 'loraprobe sweep' inspects what it built, inspect "
                                   "compiles with ptxas=PATH|VERSION|toolkit|triton",
                                   where));
    case CompilerKind::ptxas:
      return ptxas_compiler(c.ptxas, files_mode);
    case CompilerKind::file:
      break;
  }
  throw UsageError(fmt::format("{} file: expected prebuilt or ptxas=PATH|VERSION|toolkit|triton", where));
}

/// --compiler entries.
std::vector<RunCompiler> parse_compilers(const std::vector<std::string>& entries, bool files_mode) {
  std::vector<RunCompiler> out;
  for (const std::string& entry : entries) {
    add_unique(out, run_compiler(Compiler::parse_or_throw(entry, "--compiler"), files_mode, "--compiler"));
  }
  return out;
}

/// The bundled ptxas of `set`'s Triton, as its manifest records it.
compile::BundledPtxas bundled_of(const kernels::KernelSet& set) {
  const kernels::PtxasRecord& p = set.manifest().ptxas;
  return {set.triton(), p.path_hint, p.sha256, p.version};
}

/// The ok variants of `sets` that match --filter; a `triton=V` term selects sets.
std::vector<SetVariant> select_variants(const std::vector<const kernels::KernelSet*>& sets, const std::string& filter) {
  std::vector<kernels::FilterTerm> terms =
      filter.empty() ? std::vector<kernels::FilterTerm>{} : kernels::parse_filter(filter);
  const std::vector<std::string> tritons = kernels::take_triton_terms(terms);
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
    throw kernels::no_filter_match(filter, "compiled variant", sets, "'loraprobe list --filter' shows what there is");
  }
  return out;
}

/// The ptxas an amplified prebuilt image of `set` is compiled with, as a sweep builds
/// it (sweep/images.cpp): the set's bundled one, else the newest installed ptxas at
/// least as new (said on stderr). Throws lp::EnvironmentError when neither is here.
compile::PtxasInfo amplified_prebuilt_ptxas(const kernels::KernelSet& set) {
  try {
    return compile::resolve_bundled_ptxas(bundled_of(set));
  } catch (const EnvironmentError& e) {
    std::optional<compile::PtxasInfo> stand_in = compile::ptxas_standing_in_for(set.manifest().ptxas.version);
    if (!stand_in) {
      throw EnvironmentError(fmt::format("--amplify: the amplified PTX of Triton {}'s prebuilt images is compiled by "
                                         "its bundled ptxas, and neither it nor a ptxas at least as new is here: {}",
                                         set.triton(), e.what()));
    }
    fmt::print(stderr, "inspect: Triton {}'s amplified prebuilt images are compiled by ptxas {} ({}), as a sweep "
                       "does: its bundled ptxas is not here\n",
               set.triton(), stand_in->version, stand_in->path);
    return std::move(*stand_in);
  }
}

/// One item per (variant, compiler), PTX and cubins read once per variant; a ptxas
/// compile uses the options of the variant's Triton. An amplified variant (--config's
/// plan with --amplify) is its amplified PTX under every compiler, prebuilt's compiled
/// by the set's bundled ptxas: the images the sweep loads.
std::vector<InspectItem> variant_items(const std::vector<SetVariant>& variants,
                                                const std::vector<RunCompiler>& compilers) {
  std::vector<InspectItem> items;
  std::map<std::string, compile::PtxasInfo> bundled;  // by Triton version
  std::map<std::string, compile::PtxasInfo> amplifying;  // by Triton version: amplified_prebuilt_ptxas
  for (const SetVariant& sv : variants) {
    const kernels::KernelSet* set = sv.set;
    const kernels::Variant* v = sv.variant;
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
    auto ptx = std::make_shared<const std::string>(contents(*v->ptx));
    if (sv.amplify > 0) {
      ptx = std::make_shared<const std::string>(ptx::amplify_ptx(*ptx, sv.amplify, v->id + ".ptx").ptx);
    }
    const std::string name = sv.amplify > 0 ? fmt::format("{}|amplify={}", v->id, sv.amplify) : v->id;
    for (const RunCompiler& c : compilers) {
      InspectItem item{name, v->id, c.label, {}, std::nullopt, ptx, set->triton(), v->produced_ordinals(), {}};
      item.amplify = sv.amplify;
      if (c.compiler.kind == CompilerKind::prebuilt && sv.amplify > 0) {
        if (amplifying.count(set->triton()) == 0) {
          amplifying.emplace(set->triton(), amplified_prebuilt_ptxas(*set));
        }
        item.ptx = PtxInput{ptx, amplifying.at(set->triton()), set->manifest().ptxas_options};
      } else if (c.compiler.kind == CompilerKind::prebuilt) {
        item.cubin = contents(*v->cubin);
      } else {
        if (c.per_triton_set() && bundled.count(set->triton()) == 0) {
          bundled.emplace(set->triton(), compile::resolve_bundled_ptxas(bundled_of(*set)));
        }
        item.ptx = PtxInput{ptx, c.per_triton_set() ? bundled.at(set->triton()) : *c.ptxas,
                                     set->manifest().ptxas_options};
      }
      items.push_back(std::move(item));
    }
  }
  return items;
}

/// "12.8.93" out of the manifest's "Cuda compilation tools, release 12.8, V12.8.93".
std::string prebuilt_version(const kernels::KernelSet& set) {
  const auto parsed = tools::parse_tool_version(set.manifest().ptxas.version);
  return parsed ? parsed->version : std::string("?");
}

Work plan_matrix(const InspectRequest& r) {
  if (!r.paths.empty()) {
    throw UsageError("--ptxas-matrix inspects kernel-set variants; it takes no files (did a path follow "
                     "--ptxas-matrix? write --ptxas-matrix=DIR)");
  }
  if (!r.compilers.empty()) {
    throw UsageError("--ptxas-matrix uses every ptxas of its folder plus the prebuilt cubins; --compiler does not "
                     "apply (--ptxas adds a column)");
  }
  Work w;
  w.mode = Mode::ptxas_matrix;
  w.sets = r.selected;
  if (r.filter.empty()) {
    for (const kernels::KernelSet* set : w.sets) {
      std::vector<std::string> missing;
      for (const kernels::Variant* v : default_matrix_variants(*set, &missing)) {
        w.variants.push_back({set, v});
      }
      w.missing[set->triton()] = std::move(missing);
    }
  } else {
    w.variants = select_variants(w.sets, r.filter);
  }
  const std::string dir = r.matrix_dir.empty() ? tools::tools_dir() + "/ptxas" : r.matrix_dir;
  w.compilers.push_back(prebuilt());
  std::vector<compile::PtxasInfo> found = ptxas_in_folder(dir);
  for (const std::string& spec : r.ptxas) {
    found.push_back(compile::resolve_ptxas(spec));
  }
  for (compile::PtxasInfo& info : found) {
    RunCompiler c{Compiler::with_ptxas(info.spec), Compiler::with_ptxas(info.spec).to_string(), info};
    w.columns.push_back({c.label, info.version.empty() ? info.spec : info.version, info.path});
    add_unique(w.compilers, std::move(c));
  }
  w.items = variant_items(w.variants, w.compilers);
  return w;
}

Work plan_kernel_set(const InspectRequest& r) {
  Work w;
  w.mode = Mode::kernel_set;
  if (r.compilers.empty()) {
    w.compilers.push_back(prebuilt());
    if (tools::toolkit_root()) {
      w.compilers.push_back(resolved_ptxas("toolkit"));
    }
  } else {
    w.compilers = parse_compilers(r.compilers, false);
  }
  for (const std::string& spec : r.ptxas) {
    add_unique(w.compilers, ptxas_compiler(spec, false));
  }
  w.sets = r.selected;
  w.variants = select_variants(w.sets, r.filter);
  w.items = variant_items(w.variants, w.compilers);
  return w;
}

/// --config: the static half of a sweep of that config, without a GPU: every
/// (set, variant) its cases load, under the config's compilers (driver needs a GPU:
/// left out, and said) or --compiler, plus --ptxas.
Work plan_config(const InspectRequest& r) {
  if (!r.paths.empty() || !r.filter.empty()) {
    throw UsageError("--config picks the variants a sweep of that config loads; it takes no files or --filter");
  }
  Work w;
  w.mode = Mode::kernel_set;
  w.variants = r.config_variants;
  for (const SetVariant& sv : w.variants) {
    if (std::find(w.sets.begin(), w.sets.end(), sv.set) == w.sets.end()) {
      w.sets.push_back(sv.set);
    }
  }
  std::sort(w.sets.begin(), w.sets.end(), [&](const kernels::KernelSet* a, const kernels::KernelSet* b) {
    const auto& order = r.sets->all();
    return a - order.data() < b - order.data();
  });
  if (!r.compilers.empty()) {
    // --compiler replaces the config's (a gate of one new ptxas: --compiler ptxas=PATH).
    w.compilers = parse_compilers(r.compilers, false);
  } else {
    for (const Compiler& c : r.config_compilers) {
      if (c.kind == CompilerKind::driver) {
        fmt::print(stderr, "inspect: the plan of {}: compiler driver left out (inspect does not run the driver's JIT, "
                           "which needs a sweep's GPU worker; a sweep inspects what it built)\n",
                   r.config_path.value_or(""));
        continue;
      }
      add_unique(w.compilers, run_compiler(c, false, "--config"));
    }
  }
  for (const std::string& spec : r.ptxas) {
    add_unique(w.compilers, ptxas_compiler(spec, false));
  }
  if (w.variants.empty() || w.compilers.empty()) {
    throw UsageError(fmt::format("the plan of {} (and the flags) loads no variant this can inspect",
                                 r.config_path.value_or("")));
  }
  w.items = variant_items(w.variants, w.compilers);
  return w;
}

Work plan_files(const InspectRequest& r) {
  if (!r.filter.empty()) {
    throw UsageError("--filter selects kernel-set variants; it does not apply to files");
  }
  if (r.kernel_sets_named) {
    throw UsageError("--kernel-dir and --triton name kernel sets; they do not apply to files");
  }
  Work w;
  w.mode = Mode::files;
  w.files = collect_inputs(r.paths);
  std::vector<RunCompiler> ptxas = parse_compilers(r.compilers, true);
  for (const std::string& spec : r.ptxas) {
    add_unique(ptxas, resolved_ptxas(spec));
  }
  const bool any_ptx =
      std::any_of(w.files.begin(), w.files.end(), [](const InputFile& f) { return f.kind == InputKind::ptx; });
  if (any_ptx && ptxas.empty()) {
    if (tools::toolkit_root()) {
      ptxas.push_back(resolved_ptxas("toolkit"));
    } else if (compile::triton_bin_dir()) {
      ptxas.push_back(resolved_ptxas("triton"));
    } else {
      throw UsageError("no ptxas to compile the PTX inputs with (no CUDA toolkit, no Triton): give --ptxas PATH");
    }
  }
  if (std::any_of(w.files.begin(), w.files.end(), [](const InputFile& f) { return f.kind == InputKind::cubin; })) {
    w.compilers.push_back({Compiler::file(), "file", std::nullopt});
  }
  if (any_ptx) {
    w.compilers.insert(w.compilers.end(), ptxas.begin(), ptxas.end());
  }
  // A cubin with a .ptx of the same name beside it (a Triton cache entry) is
  // checked at both levels, which says who made its hazard.
  std::map<std::string, std::pair<std::string, std::shared_ptr<const std::string>>> ptx_by_stem;  // stem -> (path, PTX)
  for (const InputFile& f : w.files) {
    if (f.kind == InputKind::ptx) {
      ptx_by_stem[std::filesystem::path(f.path).replace_extension().string()] = {
          f.path, std::make_shared<const std::string>(f.contents)};
    }
  }
  // The gdc-early-read contract of each file's kernel; the embedded manifests are read
  // only when some PTX waits (the contract of a kernel named like one of ours).
  std::shared_ptr<const kernels::KernelSets> contracts = r.sets;
  auto produced_of = [&](const std::string& path, const std::string* ptx) {
    if (!contracts && ptx != nullptr && ptx->find("griddepcontrol.wait") != std::string::npos) {
      contracts = std::make_shared<const kernels::KernelSets>(kernels::KernelSets::load());
    }
    return contracts ? produced_for_file(path, ptx, r.produced, *contracts) : ProducedParams{};
  };
  for (const InputFile& f : w.files) {
    if (f.kind == InputKind::cubin) {
      std::shared_ptr<const std::string> ptx;
      std::string ptx_path;
      if (const auto sibling = ptx_by_stem.find(std::filesystem::path(f.path).replace_extension().string());
          sibling != ptx_by_stem.end()) {
        std::tie(ptx_path, ptx) = sibling->second;
      } else if (std::optional<std::string> beside = sibling_ptx(f.path)) {
        // A cubin named alone (a repro bundle's kernel.cubin) with its PTX beside it.
        ptx = std::make_shared<const std::string>(std::move(*beside));
        ptx_path = std::filesystem::path(f.path).replace_extension(".ptx").string();
      }
      ProducedParams produced = produced_of(f.path, ptx.get());
      InspectItem item{f.path, std::nullopt, "file", f.contents, std::nullopt, ptx, "", std::move(produced.produced),
                       std::move(produced.not_checked)};
      item.source_ptx_name = std::move(ptx_path);
      w.items.push_back(std::move(item));
      continue;
    }
    const auto text = std::make_shared<const std::string>(f.contents);
    const ProducedParams produced = produced_of(f.path, text.get());
    for (const RunCompiler& c : ptxas) {
      w.items.push_back({f.path, std::nullopt, c.label, {}, PtxInput{text, *c.ptxas}, nullptr, "", produced.produced,
                         produced.not_checked});
    }
  }
  return w;
}

}  // namespace

std::string_view to_string(Mode mode) {
  switch (mode) {
    case Mode::kernel_set:
      return "kernel_set";
    case Mode::files:
      return "files";
    case Mode::ptxas_matrix:
      return "ptxas_matrix";
  }
  return "?";
}

Work plan_work(const InspectRequest& r) {
  Work w = r.matrix ? plan_matrix(r) : r.config_path ? plan_config(r) : r.paths.empty() ? plan_kernel_set(r) : plan_files(r);
  w.all_sets = r.sets;
  return w;
}

std::vector<PtxasMatrix> build_matrices(const Work& w, const std::vector<InspectResult>& results) {
  std::vector<PtxasMatrix> matrices;
  if (w.mode != Mode::ptxas_matrix) {
    return matrices;
  }
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
    std::vector<InspectResult> mine;
    for (const InspectResult& r : results) {
      if (r.triton == set->triton()) {
        mine.push_back(r);
      }
    }
    std::vector<MatrixColumn> columns = w.columns;
    columns.push_back({"prebuilt", prebuilt_version(*set),
                       fmt::format("Triton {}'s bundled ptxas (the prebuilt cubins of {})", set->triton(),
                                   set->origin())});
    PtxasMatrix m = build_matrix(variants, std::move(columns), mine, set->triton());
    if (const auto it = w.missing.find(set->triton()); it != w.missing.end()) {
      m.missing = it->second;
    }
    matrices.push_back(std::move(m));
  }
  // Where a Triton's PTX is at fault, say which later set's PTX is clean there: the
  // upgrade that fixes it, measured from the embedded sets, not assumed.
  for (std::size_t i = 0; i < matrices.size(); ++i) {
    for (std::size_t t = 0; t < matrices[i].first_clean.size(); ++t) {
      FirstClean& f = matrices[i].first_clean[t];
      if (f.version || f.line.find("the PTX itself") == std::string::npos) {
        continue;
      }
      for (std::size_t j = i + 1; j < matrices.size(); ++j) {
        const FirstClean& later = matrices[j].first_clean[t];
        const bool ptx_clean = std::none_of(
            matrices[j].rows.begin(), matrices[j].rows.end(), [&](const MatrixRow& row) {
              return std::find(later.variants.begin(), later.variants.end(), row.variant->id) != later.variants.end() &&
                     std::any_of(row.cells.begin(), row.cells.end(),
                                 [](const MatrixCell& c) { return c.attribution == "ptx"; });
            });
        if (later.version && later.variants == f.variants && ptx_clean) {
          f.line += fmt::format(" (Triton {}'s PTX is clean here: first clean with ptxas {})",
                                matrices[j].triton_version, *later.version);
          break;
        }
      }
    }
  }
  return matrices;
}

std::vector<RunCompilerRecord> compiler_records(const Work& w) {
  std::vector<RunCompilerRecord> out;
  auto record = [&](const RunCompiler& c, const kernels::KernelSet* set) {
    compile::CompilerRecord r;
    r.compiler = c.compiler;
    if (set != nullptr) {
      r.triton = set->triton();
    }
    if (c.compiler.kind == CompilerKind::prebuilt && set != nullptr) {
      compile::PtxasInfo bundled;
      bundled.spec = "triton";
      bundled.version = prebuilt_version(*set);
      bundled.sha256 = set->manifest().ptxas.sha256;
      r.ptxas = bundled;
      r.version = bundled.version;
      r.options = set->manifest().ptxas_options;
    } else if (c.compiler.kind == CompilerKind::ptxas) {
      if (c.ptxas) {
        r.ptxas = c.ptxas;
        r.version = c.ptxas->version;
      } else if (set != nullptr) {
        r.error = error_of([&] {  // not here: this row says so, the others are inspected
          r.ptxas = compile::resolve_bundled_ptxas(bundled_of(*set));
          r.version = r.ptxas->version;
        });
      }
      r.options = set != nullptr ? set->manifest().ptxas_options : compile::triton_ptxas_options();
    }
    out.push_back({c.label, std::move(r)});
  };
  for (const RunCompiler& c : w.compilers) {
    if (w.mode == Mode::files) {
      record(c, nullptr);
      continue;
    }
    for (const kernels::KernelSet* set : w.sets) {
      record(c, set);
    }
  }
  return out;
}

}  // namespace lp::inspect
