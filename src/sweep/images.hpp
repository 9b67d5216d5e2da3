#pragma once
// The compiled images a sweep runs, one per (Triton set, variant, compiler), each built
// once: prebuilt cubins come from the kernel set, ptxas=<spec> cubins are compiled here
// on the CPU in parallel, driver cubins come back from a worker's JIT. Every image
// that ran is statically inspected once for the wgmma register hazard.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"
#include "compile/toolchain.hpp"
#include "kernels/kernel_sets.hpp"

namespace lp::sweep {

/// One (Triton set, variant, compiler) of the run.
struct Image {
  std::string key;       ///< "<triton>/<variant>|<compiler>"
  std::string triton;    ///< the Triton version of the kernel set the variant comes from
  std::string variant_id;
  compile::Compiler compiler;
  std::string cubin;     ///< the SASS that runs; empty until built
  std::string error;     ///< why it could not be built (the cases get compile_error)
  nlohmann::json compile = nlohmann::json::object();  ///< how it was built: tool, version, sha256, ms, log
  std::optional<int> findings;  ///< static hazards, once inspected
  nlohmann::json sass;          ///< the analysis report, or null
  std::string sass_error;       ///< why it could not be inspected
  std::shared_ptr<const std::string> ptx;  ///< the variant's PTX, for the PTX check
  std::optional<int> ptx_findings;         ///< the PTX check's findings, once inspected
  std::string attribution;                 ///< "ptx", "ptxas", "none"; empty until known
};

/// The key of a (Triton set, variant, compiler).
std::string image_key(const std::string& triton, const std::string& variant_id, const compile::Compiler& compiler);

class ImageSet {
 public:
  /// Adds (Triton set, variant, compiler) unless present; returns its key.
  std::string add(const std::string& triton, const std::string& variant_id, const compile::Compiler& compiler);

  /// Fills the cubins that need no GPU: prebuilt ones from the image's set, ptxas=<spec>
  /// ones by compiling the variant's PTX with the options its set's Triton used (each
  /// ptxas resolved and hashed once; ptxas=triton is the set's bundled one), `threads`
  /// at a time. Failures are recorded per image, never thrown.
  void build_on_cpu(const kernels::KernelSets& sets, std::size_t threads);

  /// Inspects every built image not yet inspected, `threads` nvdisasm runs at a time.
  /// `nvdisasm` (a path) overrides the search. When no nvdisasm is found every image
  /// gets sass_error and the returned string says why (empty when all went well).
  std::string inspect(const std::optional<std::string>& nvdisasm, std::size_t threads);

  [[nodiscard]] Image& at(const std::string& key) { return m_images.at(key); }
  [[nodiscard]] const Image& at(const std::string& key) const { return m_images.at(key); }
  [[nodiscard]] const std::map<std::string, Image>& all() const { return m_images; }
  [[nodiscard]] std::map<std::string, Image>& all() { return m_images; }
  /// The compilers used, one record per compiler and Triton set (prebuilt and
  /// ptxas=triton are another binary per set; a ptxas compile uses the set's options).
  [[nodiscard]] std::vector<compile::CompilerRecord> compiler_records() const;
  /// The static inspection's disk cache as inspect() used it (inspect::CacheStats::to_json):
  /// its root and hits; null when nothing was inspected.
  [[nodiscard]] const nlohmann::json& inspection_cache() const { return m_inspection_cache; }

 private:
  std::map<std::string, Image> m_images;
  nlohmann::json m_inspection_cache;
  /// The ptxas of an image's compiler: by spec, or "triton@<version>" for ptxas=triton.
  static std::string ptxas_key(const Image& image);
  std::map<std::string, compile::PtxasInfo> m_ptxas;  ///< by ptxas_key, resolved once
  std::map<std::string, std::string> m_ptxas_errors;  ///< by ptxas_key
  std::map<std::string, std::vector<std::string>> m_options;  ///< ptxas options by Triton version
};

}  // namespace lp::sweep
