#pragma once
// The other formats a sweep or an inspect run writes at its end, next to its JSON
// (--junit, --markdown, --html): each from the document as written, so the files
// say what the JSON says.

#include <optional>
#include <string>

#include "formats/document.hpp"

namespace lp::formats {

struct ExtraOutputs {
  std::string junit;     ///< path, or empty
  std::string markdown;  ///< path, or empty
  std::string html;      ///< path, or empty
  /// JUnit: whether LATENT is a failure; nullopt: the document's own meta.fail_on.
  std::optional<bool> latent_fails;

  [[nodiscard]] bool any() const { return !junit.empty() || !markdown.empty() || !html.empty(); }
};

/// Writes each requested format atomically. Throws lp::EnvironmentError naming the
/// file that could not be written.
void write_outputs(const Document& doc, const ExtraOutputs& outputs);

}  // namespace lp::formats
