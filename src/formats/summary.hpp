#pragma once
// A one-screen text summary of a sweep report or an inspect document, for a
// terminal or a CI log: what ran where, the controls, the counts per
// (Triton, compiler, op), the exit code and the first and minimal failure.

#include <cstddef>
#include <string>

#include "formats/document.hpp"

namespace lp::formats {

/// The summary's widest line: longer ones are broken at spaces and indented.
inline constexpr std::size_t k_summary_width = 120;

/// The stack matrix first, then what ran where, the counts, the first failures and the
/// exit code; lines at most k_summary_width columns (a single longer word and the
/// recorded command line aside).
std::string summary_of(const Document& doc);

}  // namespace lp::formats
