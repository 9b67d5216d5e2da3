#include "sweep/images.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "compile/ptxas.hpp"
#include "ptx/amplify.hpp"
#include "inspect/cache.hpp"
#include "inspect/inspector.hpp"
#include "sass/analyze.hpp"
#include "util/error.hpp"
#include "util/interrupt.hpp"
#include "util/parallel.hpp"
#include "util/sha256.hpp"
#include "tools/tools.hpp"

namespace lp::sweep {

using nlohmann::json;

namespace {

/// Whether an image is compiled here by a ptxas: ptxas=<spec>, and an amplified
/// prebuilt one (the set's bundled ptxas compiles its amplified PTX).
bool compiled_by_ptxas(const Image& image) {
  return image.compiler.is_ptxas() || (image.compiler.kind == compile::CompilerKind::prebuilt && image.amplify > 0);
}

/// ptxas's own words when it serialised wgmmas (info C7513 or C7515), else empty.
std::string serialisation_note(const std::string& log) {
  for (const char* code : {"(C7513)", "(C7515)"}) {
    const std::size_t at = log.find(code);
    if (at != std::string::npos) {
      const std::size_t end = log.find('\n', at);
      return log.substr(at, end == std::string::npos ? std::string::npos : end - at);
    }
  }
  return {};
}

}  // namespace

std::string ImageSet::ptxas_key(const Image& image) {
  return image.compiler.is_ptxas() && !image.compiler.is_bundled_ptxas() ? image.compiler.ptxas
                                                                         : "triton@" + image.triton;
}

std::string ImageSet::add(const protocol::ImageRef& ref) {
  std::string key = ref.key();
  if (m_images.count(key) == 0) {
    Image image;
    image.key = key;
    image.triton = ref.triton;
    image.variant_id = ref.variant_id;
    image.compiler = ref.compiler;
    image.amplify = ref.amplify;
    if (ref.amplify > 0) {
      image.base_key = add(protocol::ImageRef{ref.triton, ref.variant_id, ref.compiler, 0});
    }
    m_images.emplace(key, std::move(image));
  }
  return key;
}

void ImageSet::build_on_cpu(const kernels::KernelSets& sets, std::size_t threads) {
  m_sets = &sets;
  resolve_compilers(sets);
  std::vector<Image*> todo;
  std::vector<Image*> to_amplify;
  for (auto& [key, image] : m_images) {
    if (image.cubin.empty() && image.error.empty() && image.compiler.kind != compile::CompilerKind::driver) {
      todo.push_back(&image);
    }
    // Only an amplified image needs its PTX to be built; the others' PTX is read for
    // the PTX check by inspect(), beside the GPU work rather than before it.
    if (!image.ptx && image.amplify > 0) {
      to_amplify.push_back(&image);
    }
  }
  prefetch(sets, threads, todo, to_amplify);
  read_ptx(sets, threads, to_amplify);
  // An amplified image whose PTX the transform left as it was is its unamplified
  // image: the same cubin, built once.
  std::vector<Image*> same_as_base;
  std::erase_if(todo, [&](Image* image) {
    if (image->amplify > 0 && image->amplification && !image->amplification->changed() && image->error.empty()) {
      same_as_base.push_back(image);
      return true;
    }
    return false;
  });
  compile_images(sets, threads, todo);
  for (Image* image : same_as_base) {
    const Image& base = m_images.at(image->base_key);
    image->cubin = base.cubin;
    image->error = base.error;
    image->compile = base.compile;
  }
  throw_if_interrupted();
}

void ImageSet::resolve_compilers(const kernels::KernelSets& sets) {
  // Resolve each ptxas once (its --version and sha256 go into the report), all at once:
  // each hashes a binary of 30-40 MB, one per Triton set.
  struct Wanted {
    std::string key;
    const kernels::KernelSet* set;
    std::string spec;  ///< the image's ptxas spec; empty: the set's bundled ptxas
    std::optional<compile::PtxasInfo> found;
    std::string why_not;
  };
  std::vector<Wanted> wanted;
  for (const auto& [key, image] : m_images) {
    const kernels::KernelSet& set = sets.at(image.triton);
    m_options.emplace(image.triton, set.manifest().ptxas_options);
    const std::string pkey = ptxas_key(image);
    // A second build (the remedies' images) resolves only the ptxas the first did not.
    const bool resolved = m_ptxas.count(pkey) > 0 || m_ptxas_errors.count(pkey) > 0;
    if (compiled_by_ptxas(image) && !resolved &&
        std::none_of(wanted.begin(), wanted.end(), [&](const Wanted& w) { return w.key == pkey; })) {
      wanted.push_back({pkey, &set, pkey.rfind("triton@", 0) == 0 ? std::string() : image.compiler.ptxas, {}, {}});
    }
  }
  parallel_for(wanted.size(), 0, [&](std::size_t i) {
    Wanted& w = wanted[i];
    const kernels::Manifest& m = w.set->manifest();
    // A ptxas that is not here fails the images that need it, not the run.
    w.why_not = error_of([&] {
      w.found = w.spec.empty() ? compile::resolve_bundled_ptxas({w.set->triton(), m.ptxas.path_hint, m.ptxas.sha256,
                                                                 m.ptxas.version})
                               : compile::resolve_ptxas(w.spec);
    });
  });
  for (Wanted& w : wanted) {
    if (w.found) {
      m_ptxas.emplace(w.key, std::move(*w.found));
    } else {
      m_ptxas_errors.emplace(w.key, w.why_not);
    }
  }
  // An amplified prebuilt image whose set's bundled ptxas is not here is compiled by the
  // newest ptxas at least as new, as the amplified controls are (the case says which).
  for (const auto& [key, image] : m_images) {
    if (image.compiler.kind == compile::CompilerKind::prebuilt && image.amplify > 0 &&
        m_ptxas_errors.count(ptxas_key(image)) > 0 && m_stand_in.count(image.triton) == 0) {
      if (std::optional<compile::PtxasInfo> p = compile::ptxas_standing_in_for(sets.at(image.triton).manifest().ptxas.version)) {
        m_stand_in.emplace(image.triton, std::move(*p));
      }
    }
  }
}

void ImageSet::prefetch(const kernels::KernelSets& sets, std::size_t threads, const std::vector<Image*>& to_build,
                        const std::vector<Image*>& without_ptx) {
  std::vector<std::pair<const kernels::KernelSet*, const kernels::FileRef*>> files;
  auto add = [&](const Image& image, bool cubin) {
    const kernels::KernelSet& set = sets.at(image.triton);
    const kernels::Variant* v = set.find(image.variant_id);
    const std::optional<kernels::FileRef>* file = v == nullptr ? nullptr : cubin ? &v->cubin : &v->ptx;
    if (file != nullptr && v->ok() && file->has_value()) {
      files.emplace_back(&set, &**file);
    }
  };
  for (const Image* image : without_ptx) {
    add(*image, false);
  }
  for (const Image* image : to_build) {
    if (image->amplify == 0) {
      // compile_images reads the set's cubin of a prebuilt image, a ptxas one's PTX.
      add(*image, image->compiler.kind == compile::CompilerKind::prebuilt);
    }
  }
  kernels::KernelSet::prefetch(files, threads);
}

void ImageSet::read_missing_ptx(const std::vector<Image*>& images, std::size_t threads) {
  if (m_sets == nullptr) {
    return;
  }
  std::vector<Image*> without_ptx;
  std::copy_if(images.begin(), images.end(), std::back_inserter(without_ptx), [](const Image* i) { return !i->ptx; });
  prefetch(*m_sets, threads, {}, without_ptx);
  read_ptx(*m_sets, threads, without_ptx);
}

void ImageSet::read_all_ptx(std::size_t threads) {
  std::vector<Image*> all;
  for (auto& [key, image] : m_images) {
    all.push_back(&image);
  }
  read_missing_ptx(all, threads);
}

void ImageSet::read_ptx(const kernels::KernelSets& sets, std::size_t threads, const std::vector<Image*>& without_ptx) {
  // Every image gets its variant's PTX (the driver's too): the PTX check runs on it.
  // Read in parallel: each read may decode a stream of the pack. An amplified image
  // keeps the amplified PTX: what its SASS was made from.
  parallel_for(without_ptx.size(), threads, [&](std::size_t i) {
    Image& image = *without_ptx[i];
    const kernels::KernelSet& set = sets.at(image.triton);
    const kernels::Variant* v = set.find(image.variant_id);
    if (v != nullptr && v->ok()) {
      image.produced = v->produced_ordinals();
      try {
        std::string ptx = set.contents(*v->ptx);
        if (image.amplify > 0) {
          ptx::Amplified amplified = ptx::amplify_ptx(ptx, image.amplify, v->id + ".ptx");
          image.amplification = Amplification{
              amplified.amplify, amplified.sites.size(),
              static_cast<std::size_t>(std::count_if(amplified.sites.begin(), amplified.sites.end(),
                                                     [](const ptx::AmplifySite& s) { return s.pending(); })),
              amplified.describe(), ""};
          ptx = std::move(amplified.ptx);
        }
        image.ptx = std::make_shared<const std::string>(std::move(ptx));
      } catch (const Error& e) {
        if (image.amplify > 0) {
          image.error = fmt::format("amplify {}: {}", image.amplify, e.what());
        }
        // Otherwise the build below records the same failure against the image.
      }
    }
  });
}

void ImageSet::compile_images(const kernels::KernelSets& sets, std::size_t threads, const std::vector<Image*>& todo) {
  parallel_for(todo.size(), threads, [&](std::size_t i) {
    Image& image = *todo[i];
    const kernels::KernelSet& set = sets.at(image.triton);
    const kernels::Variant* v = set.find(image.variant_id);
    if (!image.error.empty()) {
      return;  // the amplifier refused the PTX
    }
    try {
      // What ptxas or the variant says against it, or its ptxas missing here: its error.
      image.error = error_of([&] {
        if (v == nullptr || !v->ok()) {
          throw Error(fmt::format("variant {} is not an ok variant of {}", image.variant_id, set.origin()));
        }
        if (image.amplify > 0 && !image.ptx) {
          throw Error(fmt::format("variant {}: its PTX could not be read for amplification", v->id));
        }
        if (image.compiler.kind == compile::CompilerKind::prebuilt && image.amplify == 0) {
          image.cubin = set.contents(*v->cubin);
          compile::BuildRecord built;
          built.kind = compile::CompilerKind::prebuilt;
          built.tool = fmt::format("Triton {}'s bundled ptxas", set.triton());
          built.version = v->ptxas_version;
          built.sha256 = set.manifest().ptxas.sha256;
          built.options = set.manifest().ptxas_options;
          image.compile = std::move(built);
          return;
        }
        const std::string pkey = ptxas_key(image);
        const compile::PtxasInfo* stand_in = nullptr;
        if (const auto bad = m_ptxas_errors.find(pkey); bad != m_ptxas_errors.end()) {
          const auto other = m_stand_in.find(image.triton);
          if (image.compiler.kind != compile::CompilerKind::prebuilt || other == m_stand_in.end()) {
            throw Error(bad->second);
          }
          stand_in = &other->second;
          image.compiler_note = fmt::format("compiled by ptxas {} ({}), the newest here at least as new as Triton "
                                            "{}'s bundled ptxas, which is not here: {}",
                                            stand_in->version, stand_in->path, set.triton(), bad->second);
        }
        const compile::PtxasInfo& ptxas = stand_in != nullptr ? *stand_in : m_ptxas.at(pkey);
        const std::vector<std::string>& options = set.manifest().ptxas_options;
        const compile::PtxasOutput out = [&] {
          try {
            return compile::compile_with_ptxas(ptxas, image.amplify > 0 ? *image.ptx : set.contents(*v->ptx), v->id,
                                               options);
          } catch (const compile::IncompatiblePtx& e) {
            image.incompatible = e.reason();  // and error_of records the whole message as the error
            throw;
          }
        }();
        image.cubin = out.cubin;
        compile::BuildRecord built;
        built.kind = compile::CompilerKind::ptxas;
        built.tool = ptxas.path;
        built.version = ptxas.version;
        built.sha256 = ptxas.sha256;
        built.options = options;
        built.ms = out.ms;
        built.log = out.log;
        image.compile = std::move(built);
        if (image.amplify > 0) {
          // The amplified PTX of a prebuilt case goes through the binary that built the
          // set's cubins: the set's bundled ptxas, with the set's options.
          image.compile->amplified = image.amplify;
          if (image.compiler.kind == compile::CompilerKind::prebuilt) {
            image.compile->tool = stand_in != nullptr
                                      ? fmt::format("ptxas {} ({}) for Triton {}'s bundled ptxas, which is not here",
                                                    ptxas.version, ptxas.path, set.triton())
                                      : fmt::format("Triton {}'s bundled ptxas ({})", set.triton(), ptxas.path);
          }
          image.amplification->serialised = serialisation_note(out.log);
        }
      });
    } catch (const Interrupted&) {
      image.error = "not built: interrupted";  // the run stops below; nothing of it is reported as compiled
    }
  });
}

std::vector<protocol::LoadItem> ImageSet::driver_items() const {
  std::vector<protocol::LoadItem> items;
  for (const auto& [key, image] : m_images) {
    if (image.compiler.kind != compile::CompilerKind::driver || !image.cubin.empty() || !image.error.empty()) {
      continue;
    }
    if (image.amplify > 0 && (!image.amplification || !image.amplification->changed())) {
      continue;
    }
    protocol::LoadItem item{{image.triton, image.variant_id, image.compiler, image.amplify}, std::nullopt, std::nullopt};
    if (image.amplify > 0 && image.ptx) {
      item.ptx = *image.ptx;
    }
    items.push_back(std::move(item));
  }
  return items;
}

void ImageSet::take_jit(const std::vector<protocol::LoadResult>& results, const std::string& driver_version) {
  for (const protocol::LoadResult& r : results) {
    Image& image = m_images.at(r.key);
    if (r.jit_cubin) {
      image.cubin = *r.jit_cubin;
      compile::BuildRecord built;
      built.kind = compile::CompilerKind::driver;
      built.tool = "cuLinkCreate/cuLinkAddData/cuLinkComplete";
      built.version = driver_version;
      built.ms = r.ms;
      built.log = r.jit_log;
      image.compile = std::move(built);
      if (image.amplify > 0 && image.amplification) {
        image.compile->amplified = image.amplify;
        image.amplification->serialised = serialisation_note(r.jit_log);
      }
    }
    if (!r.ok) {
      image.error = r.error.empty() ? std::string("the driver JIT failed") : r.error;
    }
  }
  for (auto& [key, image] : m_images) {
    if (image.compiler.kind == compile::CompilerKind::driver && image.amplify > 0 && image.cubin.empty() &&
        image.error.empty() && image.amplification && !image.amplification->changed()) {
      const Image& base = m_images.at(image.base_key);
      image.cubin = base.cubin;
      image.compile = base.compile;
      image.error = base.cubin.empty() && base.error.empty() ? "its unamplified image was not built" : base.error;
    }
  }
}

std::string ImageSet::inspect(const std::optional<std::string>& nvdisasm, std::size_t threads) {
  std::vector<Image*> todo;
  for (auto& [key, image] : m_images) {
    if (!image.cubin.empty() && !image.findings && image.sass_error.empty()) {
      todo.push_back(&image);
    }
  }
  if (todo.empty()) {
    return {};
  }
  read_missing_ptx(todo, threads);
  inspect::InspectorOptions options;
  const std::string no_nvdisasm = error_of([&] {
    sass::NvdisasmSearch search;
    search.path = nvdisasm;
    options.nvdisasm = sass::find_nvdisasm(search);
  });
  if (!no_nvdisasm.empty()) {
    for (Image* image : todo) {
      image->sass_error = no_nvdisasm;
    }
    return no_nvdisasm;
  }
  // The same cache as `loraprobe inspect`: a cubin analysed once is never re-analysed.
  options.cache_root = inspect::default_cache_root();
  options.shipped = inspect::ShippedResults::embedded();
  options.jobs = static_cast<unsigned>(threads);
  const inspect::Inspector inspector(std::move(options));
  std::vector<inspect::InspectItem> items;
  for (const Image* image : todo) {
    items.push_back(
        {image->key, image->variant_id, image->compiler.to_string(), image->cubin, std::nullopt, image->ptx, image->triton,
         image->produced, {}});
  }
  const std::vector<inspect::InspectResult> results = inspector.inspect_all(items);
  m_inspection_cache = inspector.cache_stats();
  if (inspector.interrupted_by() != 0) {
    throw Interrupted(inspector.interrupted_by());  // the reports that finished are in the cache
  }
  for (std::size_t i = 0; i < todo.size(); ++i) {
    const inspect::InspectResult& r = results[i];
    if (r.status == inspect::StaticOutcome::error) {
      todo[i]->sass_error = r.error;
      continue;
    }
    todo[i]->findings = static_cast<int>(r.finding_count);
    todo[i]->early_reads = static_cast<int>(r.early_read_count);
    todo[i]->early_read_attribution = r.early_read_attribution;
    todo[i]->sass = r.sass;
    if (r.ptx && r.ptx->report) {
      todo[i]->ptx_findings = static_cast<int>(r.ptx->report->finding_count());
    }
    todo[i]->attribution = r.attribution;
  }
  return {};
}

std::vector<compile::CompilerRecord> ImageSet::compiler_records() const {
  std::vector<compile::CompilerRecord> out;
  std::map<std::string, bool> seen;
  for (const auto& [key, image] : m_images) {
    const std::string id = image.compiler.to_string() + "@" + image.triton;
    if (seen[id]) {
      continue;
    }
    seen[id] = true;
    compile::CompilerRecord c;
    c.compiler = image.compiler;
    c.triton = image.triton;
    if (image.compiler.is_ptxas()) {
      const std::string pkey = ptxas_key(image);
      if (const auto it = m_ptxas.find(pkey); it != m_ptxas.end()) {
        c.ptxas = it->second;
        c.version = it->second.version;
      } else if (const auto bad = m_ptxas_errors.find(pkey); bad != m_ptxas_errors.end()) {
        c.error = bad->second;
      }
    }
    if (image.compile && !c.version) {
      // The manifest records ptxas's own words ("Cuda compilation tools, release 12.8, V12.8.93"):
      // the record holds the version, as inspect's does.
      const std::string& words = image.compile->version;
      const std::optional<tools::ToolVersion> parsed = tools::parse_tool_version(words);
      c.version = parsed ? parsed->version : words;
    }
    if (image.compile && image.compile->options) {
      c.options = *image.compile->options;
    }
    if (image.compiler.kind == compile::CompilerKind::prebuilt && image.compile && image.compile->sha256) {
      compile::PtxasInfo bundled;
      bundled.spec = "triton";
      bundled.version = c.version.value_or("");
      bundled.sha256 = *image.compile->sha256;
      c.ptxas = bundled;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace lp::sweep
