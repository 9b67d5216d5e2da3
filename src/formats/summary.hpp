#pragma once
// A one-screen text summary of a sweep report or an inspect document, for a
// terminal or a CI log: what ran where, the controls, the counts per
// (Triton, compiler, op), the exit code and the first and minimal failure.

#include <string>

#include "formats/document.hpp"

namespace lp::formats {

std::string summary_of(const Document& doc);

}  // namespace lp::formats
