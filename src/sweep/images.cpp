#include "sweep/images.hpp"

#include <fmt/format.h>

#include "compile/ptxas.hpp"
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

std::string image_key(const std::string& triton, const std::string& variant_id, const compile::Compiler& compiler) {
  return triton + "/" + variant_id + "|" + compiler.to_string();
}

std::string ImageSet::ptxas_key(const Image& image) {
  return image.compiler.is_bundled_ptxas() ? "triton@" + image.triton : image.compiler.ptxas;
}

std::string ImageSet::add(const std::string& triton, const std::string& variant_id, const compile::Compiler& compiler) {
  const std::string key = image_key(triton, variant_id, compiler);
  if (m_images.count(key) == 0) {
    Image image;
    image.key = key;
    image.triton = triton;
    image.variant_id = variant_id;
    image.compiler = compiler;
    m_images.emplace(key, std::move(image));
  }
  return key;
}

void ImageSet::build_on_cpu(const kernels::KernelSets& sets, std::size_t threads) {
  // Resolve each ptxas once (its --version and sha256 go into the report).
  for (const auto& [key, image] : m_images) {
    const kernels::KernelSet& set = sets.at(image.triton);
    m_options.emplace(image.triton, set.manifest().ptxas_options);
    if (!image.compiler.is_ptxas()) {
      continue;
    }
    const std::string pkey = ptxas_key(image);
    if (m_ptxas.count(pkey) > 0 || m_ptxas_errors.count(pkey) > 0) {
      continue;
    }
    try {
      m_ptxas.emplace(pkey, image.compiler.is_bundled_ptxas()
                                ? compile::resolve_bundled_ptxas({set.triton(), set.manifest().ptxas.value("path_hint", ""),
                                                                  set.manifest().ptxas.value("sha256", "")})
                                : compile::resolve_ptxas(image.compiler.ptxas));
    } catch (const std::exception& e) {
      m_ptxas_errors.emplace(pkey, e.what());
    }
  }
  std::vector<Image*> todo;
  std::vector<Image*> without_ptx;
  for (auto& [key, image] : m_images) {
    if (image.cubin.empty() && image.error.empty() && image.compiler.kind != compile::CompilerKind::driver) {
      todo.push_back(&image);
    }
    if (!image.ptx) {
      without_ptx.push_back(&image);
    }
  }
  // Every image keeps its variant's PTX (the driver's too): the PTX check runs on it.
  // Read in parallel: each read may decode a stream of the pack.
  parallel_for(without_ptx.size(), threads, [&](std::size_t i) {
    Image& image = *without_ptx[i];
    const kernels::KernelSet& set = sets.at(image.triton);
    const kernels::Variant* v = set.find(image.variant_id);
    if (v != nullptr && v->ok()) {
      try {
        image.ptx = std::make_shared<const std::string>(set.contents(*v->ptx));
      } catch (const Error&) {
        // The build below records the same failure against the image.
      }
    }
  });
  parallel_for(todo.size(), threads, [&](std::size_t i) {
    Image& image = *todo[i];
    const kernels::KernelSet& set = sets.at(image.triton);
    const kernels::Variant* v = set.find(image.variant_id);
    try {
      if (v == nullptr || !v->ok()) {
        throw Error(fmt::format("variant {} is not an ok variant of {}", image.variant_id, set.origin()));
      }
      if (image.compiler.kind == compile::CompilerKind::prebuilt) {
        image.cubin = set.contents(*v->cubin);
        image.compile = {{"kind", "prebuilt"},
                         {"tool", fmt::format("Triton {}'s bundled ptxas", set.triton())},
                         {"version", v->ptxas_version},
                         {"sha256", set.manifest().ptxas.value("sha256", "")},
                         {"options", set.manifest().ptxas_options}};
        return;
      }
      const std::string pkey = ptxas_key(image);
      if (const auto bad = m_ptxas_errors.find(pkey); bad != m_ptxas_errors.end()) {
        throw Error(bad->second);
      }
      const compile::PtxasInfo& ptxas = m_ptxas.at(pkey);
      const std::vector<std::string>& options = set.manifest().ptxas_options;
      const compile::PtxasOutput out = compile::compile_with_ptxas(ptxas, set.contents(*v->ptx), v->id, options);
      image.cubin = out.cubin;
      image.compile = {{"kind", "ptxas"},        {"tool", ptxas.path}, {"version", ptxas.version},
                       {"sha256", ptxas.sha256}, {"options", options}, {"ms", out.ms},
                       {"log", out.log}};
    } catch (const Interrupted&) {
      image.error = "not built: interrupted";  // the run stops below; nothing of it is reported as compiled
    } catch (const std::exception& e) {
      image.error = e.what();
    }
  });
  throw_if_interrupted();
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
  inspect::InspectorOptions options;
  try {
    sass::NvdisasmSearch search;
    search.path = nvdisasm;
    options.nvdisasm = sass::find_nvdisasm(search);
  } catch (const std::exception& e) {
    for (Image* image : todo) {
      image->sass_error = e.what();
    }
    return e.what();
  }
  // The same cache as `loraprobe inspect`: a cubin analysed once is never re-analysed.
  options.cache_root = inspect::default_cache_root();
  options.jobs = static_cast<unsigned>(threads);
  const inspect::Inspector inspector(std::move(options));
  std::vector<inspect::InspectItem> items;
  for (const Image* image : todo) {
    items.push_back(
        {image->key, image->variant_id, image->compiler.to_string(), image->cubin, std::nullopt, image->ptx, image->triton});
  }
  const std::vector<inspect::InspectResult> results = inspector.inspect_all(items);
  m_inspection_cache = inspector.cache_stats().to_json(inspect::default_cache_root());
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
    todo[i]->sass = r.sass;
    if (r.ptx.contains("finding_count")) {
      todo[i]->ptx_findings = r.ptx.at("finding_count").get<int>();
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
    if (image.compile.contains("version") && image.compile["version"].is_string() && !c.version) {
      // The manifest records ptxas's own words ("Cuda compilation tools, release 12.8, V12.8.93"):
      // the record holds the version, as inspect's does.
      const std::string words = image.compile["version"].get<std::string>();
      const std::optional<tools::ToolVersion> parsed = tools::parse_tool_version(words);
      c.version = parsed ? parsed->version : words;
    }
    if (image.compile.contains("options")) {
      c.options = image.compile["options"].get<std::vector<std::string>>();
    }
    if (image.compiler.kind == compile::CompilerKind::prebuilt && image.compile.contains("sha256") &&
        image.compile["sha256"].is_string()) {
      compile::PtxasInfo bundled;
      bundled.spec = "triton";
      bundled.version = c.version.value_or("");
      bundled.sha256 = image.compile["sha256"].get<std::string>();
      c.ptxas = bundled;
    }
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace lp::sweep
