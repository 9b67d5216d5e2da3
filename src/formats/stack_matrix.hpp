#pragma once
// "With my Triton and my ptxas, is it fixed?": a report's cases as one matrix, Triton
// set x compiler, each cell the worst outcome the run saw for that pairing and whose
// fault a hazard is, each hazardous row with the cheapest remedy this run measured
// clean, and one sentence that answers the question. Built once from the document;
// the summary and the Markdown draw it first.

#include <cstddef>
#include <string>
#include <vector>

#include "formats/document.hpp"

namespace lp::formats {

/// What one (Triton set, compiler) pairing came to, worst first.
enum class StackOutcome {
  fail,          ///< wrong numbers (FAIL)
  error,         ///< a fault, timeout, compile error or unjudged run
  hazard,        ///< LATENT: the SASS that ran has the hazard, not observed
  clean,         ///< PASS
  incompatible,  ///< the compiler cannot read this Triton's PTX
  not_run,       ///< no case of the pairing ran (skipped, or none planned)
};

struct StackCell {
  StackOutcome outcome = StackOutcome::not_run;
  std::string attribution;  ///< hazard: "ptx", "ptxas" or "" (not known)
  std::size_t cases = 0;    ///< cases of the pairing in the report
  /// "FAIL", "hazard (PTX)", "hazard (ptxas)", "clean", "incompatible", "not run".
  [[nodiscard]] std::string text() const;
};

struct StackRow {
  std::string triton;
  std::string own_ptxas;          ///< the version of the ptxas this Triton bundles, "" when not recorded
  std::vector<StackCell> cells;   ///< one per column
  /// A hazardous or failing row: the cheapest remedy measured clean in this run and its
  /// cost ("block_n 32: clean, 0.98-2.0x kernel time"), or what to run to measure one.
  std::string remedy;
};

struct StackMatrix {
  std::vector<std::string> compilers;  ///< the columns: compiler names as the cases write them
  std::vector<std::string> labels;     ///< "Triton's own ptxas", "ptxas=toolkit (13.0.88)"
  std::vector<StackRow> rows;          ///< Triton sets, in the report's order
  /// One sentence: what is fixed, what is hazardous and whose fault, what failed.
  std::string answer;

  [[nodiscard]] bool empty() const { return rows.empty(); }
  /// The matrix as fixed-width text for a terminal, the answer and remedies under it.
  [[nodiscard]] std::string text() const;
};

/// The matrix of a sweep report (each case's verdict) or of an inspect document of
/// kernel sets (each cubin's static outcome; no remedies). Empty for an inspect of
/// files or a document without cases.
StackMatrix stack_matrix(const Document& doc);

}  // namespace lp::formats
