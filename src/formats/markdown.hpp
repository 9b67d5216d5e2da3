#pragma once
// Markdown of a sweep report or an inspect document, to paste into a GitHub or
// GitLab issue: the outcome, the environment (in the spirit of vLLM's collect_env),
// the command, the verdict map, the cases to read first with their numbers, SASS
// excerpts of the hazardous variants with the attribution, and what it means (the
// 3/n bound, the race control, the remedies this run measured). Kept under 64 KB
// (GitHub's limit on an issue body is 65536 characters): past a size, all-PASS rows
// of the map and further excerpts are counted instead of drawn.

#include <string>

#include "formats/document.hpp"

namespace lp::formats {

/// GitHub's limit on an issue or comment body, in characters.
inline constexpr std::size_t k_markdown_budget = 65536;

std::string markdown_of(const Document& doc);

}  // namespace lp::formats
