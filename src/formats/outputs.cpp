#include "formats/outputs.hpp"

#include <fmt/format.h>

#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::formats {

namespace {

void write(const std::string& path, const char* what, const std::function<void(const TextSink&)>& produce) {
  try {
    write_file_atomic(path, produce);
  } catch (const EnvironmentError& e) {
    throw EnvironmentError(fmt::format("the {} could not be written: {}", what, e.what()));
  }
}

void write(const std::string& path, const char* what, const std::string& text) {
  write(path, what, [&](const TextSink& sink) { sink(text); });
}

}  // namespace

void write_outputs(const Document& doc, const ExtraOutputs& outputs) {
  if (!outputs.junit.empty()) {
    write(outputs.junit, "JUnit XML", [&](const TextSink& sink) { junit_of(doc, {outputs.latent_fails}, sink); });
  }
  if (!outputs.markdown.empty()) {
    write(outputs.markdown, "Markdown", markdown_of(doc));
  }
  if (!outputs.html.empty()) {
    write(outputs.html, "HTML page", [&](const TextSink& sink) { html_of(doc, sink); });
  }
}

}  // namespace lp::formats
