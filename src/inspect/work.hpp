#pragma once
// What one `loraprobe inspect` run inspects, however it was asked: the kernel
// sets (every variant or a filter), the variants a sweep config loads, the user's
// own files, or the ptxas version matrix. A plain request in, the items for the
// Inspector out; the command line (cli/inspect.cpp) only fills the request.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/compiler.hpp"
#include "inspect/inputs.hpp"
#include "inspect/inspector.hpp"
#include "inspect/matrix.hpp"
#include "kernels/kernel_sets.hpp"

namespace lp::inspect {

/// A compiler of an inspect run, resolved to the binary it runs.
struct RunCompiler {
  compile::Compiler compiler;
  std::string label;  ///< what items and tables say: compiler.to_string(), a version prefix resolved ("ptxas=13.5.37")
  std::optional<compile::PtxasInfo> ptxas;  ///< unset for prebuilt, file, and the per-set ptxas=triton
  /// ptxas=triton of kernel-set variants: each variant's set's own bundled ptxas.
  [[nodiscard]] bool per_triton_set() const { return compiler.is_bundled_ptxas() && !ptxas; }
};

/// A variant and the set it comes from.
struct SetVariant {
  const kernels::KernelSet* set = nullptr;
  const kernels::Variant* variant = nullptr;
  /// --config's plan: the wgmma pairs its image is amplified with, as the sweep's
  /// (ptx/amplify.hpp); 0: the variant as built.
  int amplify = 0;
};

enum class Mode { kernel_set, files, ptxas_matrix };
std::string_view to_string(Mode mode);

/// Everything that decides what is inspected.
struct InspectRequest {
  std::shared_ptr<const kernels::KernelSets> sets;  ///< loaded; unused for files
  std::vector<const kernels::KernelSet*> selected;  ///< the sets --triton names (all by default)
  bool kernel_sets_named = false;      ///< --kernel-dir or --triton was given (refused with files)
  std::vector<std::string> paths;      ///< the user's files and folders: files mode
  std::string filter;                  ///< --filter
  std::vector<std::string> produced;   ///< --produced (files only): names or ordinals (inspect/produced.hpp)
  std::vector<std::string> compilers;  ///< --compiler: replaces the default compilers
  std::vector<std::string> ptxas;      ///< --ptxas: adds ptxas=SPEC
  bool matrix = false;                 ///< --ptxas-matrix
  std::string matrix_dir;              ///< its folder; empty: tools_dir()/ptxas
  /// --config: the (set, variant) pairs and the compilers a sweep of it loads (sweep/case_variants.hpp).
  std::optional<std::string> config_path;
  std::vector<SetVariant> config_variants;
  std::vector<compile::Compiler> config_compilers;
};

/// What the run inspects.
struct Work {
  Mode mode = Mode::kernel_set;
  std::shared_ptr<const kernels::KernelSets> all_sets;  ///< keeps the sets the pointers below point into
  std::vector<const kernels::KernelSet*> sets;  ///< the sets whose variants are inspected
  std::vector<SetVariant> variants;
  std::vector<InputFile> files;
  std::vector<RunCompiler> compilers;
  std::vector<InspectItem> items;
  std::vector<MatrixColumn> columns;                        ///< ptxas_matrix only
  std::map<std::string, std::vector<std::string>> missing;  ///< ptxas_matrix: default rows a set lacks
};

/// Resolves the request (compilers by --version, variants by filter, files by
/// content) into the work. Throws lp::UsageError for bad input (a filter that
/// matches nothing, a compiler inspect cannot use, a corrupt --kernel-dir pack).
Work plan_work(const InspectRequest& request);

/// The ptxas matrices of a ptxas_matrix run, one per Triton set: its own prebuilt
/// column and the same ptxas columns. Where a Triton's PTX is at fault, the line
/// says which later set's PTX is clean there (the upgrade that fixes it, measured).
std::vector<PtxasMatrix> build_matrices(const Work& work, const std::vector<InspectResult>& results);

/// A compiler of the run as the document lists it (inspect.schema.json#/$defs/compiler).
struct RunCompilerRecord {
  std::string name;  ///< as the items name it: a version prefix as it resolved
  compile::CompilerRecord record;
};

/// The compilers of the run: one per compiler and Triton set the run inspects (files:
/// one per compiler, triton none).
std::vector<RunCompilerRecord> compiler_records(const Work& work);

}  // namespace lp::inspect
