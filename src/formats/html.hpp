#pragma once
// One self-contained HTML page of a sweep report (no external fonts, scripts or
// stylesheets; nothing is fetched): the outcome, the environment block, a heat map
// of the verdict map (a colour per verdict, the case and its worst deviation over
// tolerance on hover), the cases to read first, the static findings of every
// hazardous variant with its SASS excerpt highlighted, the remedies the run
// measured, and a histogram of the clean cases' worst deviation over tolerance
// (their margin). Drawn from the same view as the Markdown (formats/view.hpp).
// An inspect document gets its hazardous cubins and their excerpts.

#include <string>

#include "formats/document.hpp"
#include "util/files.hpp"

namespace lp::formats {

std::string html_of(const Document& doc);
/// As above, the page passed to `sink` as it is made (a report's verdict map a row at a time).
void html_of(const Document& doc, const TextSink& sink);

/// The margin histogram's bins: worst deviation over tolerance of clean cases, "0"
/// (exact) then tenths of the tolerance up to 1; counts per bin.
std::vector<std::size_t> margin_histogram(const std::vector<double>& margins);

}  // namespace lp::formats
