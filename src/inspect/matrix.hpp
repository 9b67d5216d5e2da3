#pragma once
// The ptxas version matrix of issue 5, without a GPU: kernel variants compiled
// by every ptxas of a folder (plus Triton's bundled one, through the prebuilt
// cubins it made), inspected, and tabulated as configuration x version ->
// findings, with the first version that gives clean SASS for vLLM's defaults.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/toolchain.hpp"
#include "inspect/inspector.hpp"
#include "kernels/kernel_set.hpp"

namespace lp::inspect {

/// True when version `a` sorts before `b` numerically ("13.10.2" after "13.9.1");
/// non-numeric parts compare as 0.
bool version_less(const std::string& a, const std::string& b);

/// The matrix's default selection from `set`: expand fp32 -> bf16 at vLLM's
/// default (block_m 64, block_k 32, 4 warps, EVEN_K, ADD_INPUTS, one slice) with
/// block_n {32, 64, 128, 256} x num_stages {1, 2, 3, 4}; the multi-slice default
/// (block_n 64, num_stages 2, SAME_STRIDE) with 2 and 3 slices at block_k 32 and
/// at vLLM's newer block_k 16; the single-slice default at block_k 16 (newer vLLM);
/// and the bf16-input expand at block_n 128,
/// num_stages 2 (descriptor A, the negative control). A row the set lacks (the
/// smaller "upgrade" matrix of newer Tritons has no 4-stage variants) is appended to
/// `missing` as a short description; with `missing` null, or when the set has none of
/// the rows, lp::UsageError names it.
std::vector<const kernels::Variant*> default_matrix_variants(const kernels::KernelSet& set,
                                                             std::vector<std::string>* missing = nullptr);

/// Every ptxas under `dir` (DIR/<version>/ptxas or DIR/<version>/bin/ptxas, as
/// scripts/install_tools.sh lays them out), described by compile::resolve_ptxas
/// with `spec` set to the folder's name, sorted by version. Throws lp::UsageError
/// when `dir` is not a folder or holds no ptxas.
std::vector<compile::PtxasInfo> ptxas_in_folder(const std::string& dir);

/// One compiler of the matrix.
struct MatrixColumn {
  std::string compiler;  ///< the items' label: "prebuilt" or "ptxas=<version>"
  std::string version;   ///< the ptxas version that built the cubins ("12.8.93")
  std::string source;    ///< "Triton's bundled ptxas (prebuilt cubins)" or the binary's path
};

/// One variant under one compiler.
struct MatrixCell {
  std::optional<std::size_t> findings;  ///< nullopt: error or not inspected
  std::string status;                   ///< clean, hazard, error, missing
  std::string cubin_sha256;             ///< empty when unknown
  std::string attribution;              ///< who made a hazard: ptx, ptxas, none; empty when unknown
};

/// One variant across the compilers.
struct MatrixRow {
  const kernels::Variant* variant = nullptr;
  std::vector<MatrixCell> cells;  ///< one per column, in column order
};

/// The first version that gives clean SASS for a group of variants.
struct FirstClean {
  std::string what;                   ///< "vLLM default expand (block_n 128, num_stages 2, fp32 input)"
  std::vector<std::string> variants;  ///< the group's variant ids in the matrix
  std::optional<std::string> version; ///< the earliest version with every variant clean
  std::vector<std::string> regressions;  ///< later versions with a hazard again
  std::string line;                   ///< the sentence format() prints
};

/// The whole matrix.
struct PtxasMatrix {
  std::string triton_version;         ///< of the kernel set the variants come from
  std::vector<std::string> missing;   ///< default rows the set lacks (default_matrix_variants)
  std::vector<MatrixColumn> columns;  ///< ordered by version, prebuilt before a ptxas of its version
  std::vector<MatrixRow> rows;        ///< in the variants' order
  /// vLLM default expand, multi-slice default, single-slice default at block_k 16.
  std::vector<FirstClean> first_clean;
  /// Text: a table with one row per variant and one column per compiler (finding
  /// counts, "err" for an error), then the first-clean lines.
  [[nodiscard]] std::string format() const;
  /// {columns: [...], rows: [{variant, axes, cells: [{compiler, findings, status, cubin_sha256}]}],
  ///  first_clean: [{what, variants, version, regressions, line}], triton_version}.
  [[nodiscard]] nlohmann::json to_json() const;
};

/// Tabulates `results` (items labelled variant id x column compiler) for
/// `variants` x `columns` of a kernel set made by Triton `triton_version`.
PtxasMatrix build_matrix(const std::vector<const kernels::Variant*>& variants, std::vector<MatrixColumn> columns,
                         const std::vector<InspectResult>& results, const std::string& triton_version);

}  // namespace lp::inspect
