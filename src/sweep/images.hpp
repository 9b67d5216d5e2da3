#pragma once
// The compiled images a sweep runs, one per (Triton set, variant, compiler, amplify),
// each built once: prebuilt cubins come from the kernel set, ptxas=<spec> cubins are
// compiled here on the CPU in parallel, driver cubins come back from a worker's JIT.
// An amplified image (amplify D > 0, src/ptx/amplify.hpp) is its variant's PTX with
// D wgmma pairs before each register-A wgmma, compiled by the same compiler (prebuilt:
// the set's bundled ptxas with the set's options); its unamplified image is built and
// inspected too, so that the report can say whether the hazard survived. Every image
// that ran is statically inspected once for the wgmma register hazard.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>


#include "compile/compiler.hpp"
#include "compile/toolchain.hpp"
#include "inspect/inspector.hpp"
#include "kernels/kernel_sets.hpp"
#include "protocol/protocol.hpp"
#include "sass/analyze.hpp"
#include "util/json_text.hpp"

namespace lp::sweep {

/// What the amplifier did to an image, and what ptxas made of it.
struct Amplification {
  int amplify = 0;               ///< D
  std::size_t sites = 0;         ///< register-A wgmmas the pairs were inserted before
  std::size_t pending_sites = 0; ///< of which the next wgmma.wait_group leaves in flight
  std::string describe;          ///< ptx::Amplified::describe()
  /// ptxas's words when it serialised the wgmmas (info C7513 or C7515), else empty.
  std::string serialised;
  [[nodiscard]] bool changed() const noexcept { return amplify > 0 && sites > 0; }
};

/// One (Triton set, variant, compiler, amplify) of the run.
struct Image {
  std::string key;       ///< protocol::ImageRef::key() of the fields below
  std::string triton;    ///< the Triton version of the kernel set the variant comes from
  std::string variant_id;
  compile::Compiler compiler;
  int amplify = 0;       ///< dependent wgmma pairs per register-A wgmma (src/ptx/amplify.hpp)
  std::string base_key;  ///< amplify > 0: the unamplified image's key
  std::optional<Amplification> amplification;  ///< amplify > 0, once the PTX was amplified
  std::string cubin;     ///< the SASS that runs; empty until built
  std::string error;     ///< why it could not be built (the cases get compile_error)
  /// Set with error when the compiler cannot read the PTX's ISA version at all (the
  /// cases get incompatible, with this as the reason): "the PTX is .version 9.4; ...".
  std::string incompatible;
  /// An amplified prebuilt image compiled by another ptxas than the set's bundled one
  /// (not here): which, and why; the case's reason says it. Empty otherwise.
  std::string compiler_note;
  std::optional<compile::BuildRecord> compile;  ///< how it was built, once it was
  std::optional<int> findings;  ///< static hazards, once inspected
  int early_reads = 0;          ///< gdc-early-read findings, once inspected (sass/early_read.hpp)
  std::string early_read_attribution;  ///< who made them: "ptx", "ptxas", "none"; empty until known
  std::shared_ptr<const sass::CubinReport> sass;  ///< the SASS analysis, once inspected (null: skipped)
  std::string sass_error;       ///< why it could not be inspected
  std::shared_ptr<const std::string> ptx;  ///< the variant's PTX, for the PTX check (an amplified
                                           ///< image's once built, the others' once inspected)
  std::map<int, std::string> produced;     ///< the variant's produced parameters, for gdc-early-read
  std::optional<int> ptx_findings;         ///< the PTX check's findings, once inspected
  std::string attribution;                 ///< "ptx", "ptxas", "none"; empty until known
};

class ImageSet {
 public:
  /// Adds the image `ref` names (Triton set, variant, compiler, amplify) unless
  /// present (amplify > 0 adds the unamplified image too); returns its key, ref.key().
  std::string add(const protocol::ImageRef& ref);

  /// Fills the cubins that need no GPU: prebuilt ones from the image's set, ptxas=<spec>
  /// ones by compiling the variant's PTX with the options its set's Triton used (each
  /// ptxas resolved and hashed once; ptxas=triton is the set's bundled one), `threads`
  /// at a time. An amplified image's PTX is amplified first; prebuilt and ptxas ones
  /// are compiled (prebuilt: with the set's bundled ptxas); where the transform left the
  /// PTX unchanged the image takes its unamplified image's cubin. Failures are recorded
  /// per image, never thrown.
  void build_on_cpu(const kernels::KernelSets& sets, std::size_t threads);

  /// The driver-compiled images not yet built, as load items for a worker's JIT; an
  /// amplified one carries its amplified PTX (one the transform left unchanged is not
  /// listed: take_jit gives it its unamplified image's cubin).
  [[nodiscard]] std::vector<protocol::LoadItem> driver_items() const;
  /// Takes a worker's answers to driver_items(): each image's cubin and compile record
  /// (`driver_version` names the JIT), or its error.
  void take_jit(const std::vector<protocol::LoadResult>& results, const std::string& driver_version);

  /// Reads the variant's PTX of every image that lacks it (build_on_cpu reads only an
  /// amplified image's; inspect() the others'), from the sets build_on_cpu was given.
  void read_all_ptx(std::size_t threads);

  /// Inspects every built image not yet inspected, `threads` nvdisasm runs at a time,
  /// reading first the PTX of those that lack it (from the sets build_on_cpu was given).
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
  /// How inspect() used the static inspection's disk cache (whose root is
  /// inspect::default_cache_root()); nullopt when nothing was inspected.
  [[nodiscard]] const std::optional<inspect::CacheStats>& inspection_cache() const { return m_inspection_cache; }

 private:
  /// Each ptxas the images need, resolved once (its --version and sha256 go into the
  /// report); one that is not here is every such image's error.
  void resolve_compilers(const kernels::KernelSets& sets);
  /// Decodes in parallel, one task per pack stream, the streams that the files
  /// compile_images (of `to_build`) and read_ptx (of `without_ptx`) will read.
  static void prefetch(const kernels::KernelSets& sets, std::size_t threads, const std::vector<Image*>& to_build,
                       const std::vector<Image*>& without_ptx);
  /// The PTX of those of `images` that lack it (read_ptx on build_on_cpu's sets).
  void read_missing_ptx(const std::vector<Image*>& images, std::size_t threads);
  /// The variants' PTX of `without_ptx` (amplified where asked), read in parallel.
  void read_ptx(const kernels::KernelSets& sets, std::size_t threads, const std::vector<Image*>& without_ptx);
  /// The cubins of `todo`: the set's own, or compiled by their ptxas, in parallel.
  void compile_images(const kernels::KernelSets& sets, std::size_t threads, const std::vector<Image*>& todo);

  std::map<std::string, Image> m_images;
  const kernels::KernelSets* m_sets = nullptr;  ///< build_on_cpu's, for inspect()'s PTX reads
  std::optional<inspect::CacheStats> m_inspection_cache;
  /// The ptxas of an image's compiler: by spec, or "triton@<version>" for ptxas=triton.
  static std::string ptxas_key(const Image& image);
  std::map<std::string, compile::PtxasInfo> m_ptxas;  ///< by ptxas_key, resolved once
  std::map<std::string, std::string> m_ptxas_errors;  ///< by ptxas_key
  /// By Triton version: the ptxas an amplified prebuilt image is compiled with where the
  /// set's bundled one is not here (compile::ptxas_standing_in_for), as the amplified
  /// controls are; absent when none is.
  std::map<std::string, compile::PtxasInfo> m_stand_in;
  std::map<std::string, std::vector<std::string>> m_options;  ///< ptxas options by Triton version
};

}  // namespace lp::sweep
