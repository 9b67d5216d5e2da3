#pragma once
// The verdict vocabulary, one spelling across code, JSON keys, flags and tables.

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "util/release.hpp"

namespace lp::report {

/// What loraprobe concluded about one case (DESIGN.md section 1).
enum class Verdict {
  pass,           ///< PASS: clean statically and dynamically
  fail,           ///< FAIL: wrong numbers observed
  latent,         ///< LATENT: static hazard, not observed in n runs
  incomplete,     ///< ran but could not be judged (e.g. the reference failed)
  fault,          ///< the kernel faulted (illegal address, trap, ...)
  timeout,        ///< the case exceeded --case-timeout and was killed
  compile_error,  ///< the compile path could not build the variant
  skipped,        ///< not run, with a reason (no variant, specialisation, memory, no GPU)
  /// Not run: the PTX's .version is newer than the compiler reads (Triton 3.9's 9.4 under
  /// ptxas 13.0). A pairing no stack has, so not a failure; since report schema 4.2.0.
  incompatible,
};

/// "PASS", "FAIL", "LATENT", "incomplete", "fault", "timeout", "compile_error", "skipped",
/// "incompatible".
std::string_view to_string(Verdict verdict);
/// One letter for the verdict table: P F L i f t c s x.
char verdict_letter(Verdict verdict);
/// Parses a verdict, case-insensitively ("latent" and "LATENT" both work).
std::optional<Verdict> parse_verdict(std::string_view text);

/// Verdicts that make a sweep exit 1 unless --fail-on adds more.
std::set<Verdict> default_fail_on();

/// "4740 PASS, 540 LATENT": each count with its verdict, in the map's order; "" for none.
std::string counts_text(const std::map<Verdict, std::size_t>& counts);
/// As above for counts keyed by a verdict's name (a report's summary.counts).
std::string counts_text(const std::map<std::string, std::size_t>& counts);

/// The reason of a LATENT case: the findings and the rule-of-three bound of its
/// runs. One wording, used by the sweep and by the reader of compact reports.
std::string latent_reason(int static_findings, int runs);

/// The first ptxas release that keeps the A-fragment copies Triton 3.8 and 3.9 write
/// (triton #9433): every ptxas before it folds them away and re-creates the hazard. The
/// one place this version is written; the sentences below and the sweep's remedies read it.
inline constexpr Release k_fixing_ptxas{13, 3, 0};
static_assert(k_fixing_ptxas.minor > 0, "ptxas_fix_text names the release before it as MAJOR.MINOR-1");

/// "13.3": k_fixing_ptxas as flags and sentences spell it (`--ptxas 13.3` takes the newest
/// 13.3.x installed).
std::string fixing_ptxas_version();

/// What fixes a hazard ptxas made (the attribution "ptxas"), in every format that says so:
/// "ptxas >= 13.3 fixes it (the PTX is clean, ptxas up to 13.2 re-creates the hazard)".
std::string ptxas_fix_text();

/// What the attribution adds to a LATENT or FAIL reason: "; the PTX itself ..." for
/// "ptx", "; ptxas made the hazard: " and ptxas_fix_text() for "ptxas", nothing otherwise.
std::string attribution_note(const std::string& attribution);

}  // namespace lp::report
