#include "formats/outputs.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "formats/summary.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"

namespace lp::formats {

namespace {

void write_summary(const Document& doc, const OutputOptions& /*options*/, const TextSink& sink) {
  shape_checked(doc.path, [&] { sink(summary_of(doc)); });
}

void write_markdown(const Document& doc, const OutputOptions& /*options*/, const TextSink& sink) {
  shape_checked(doc.path, [&] { sink(markdown_of(doc)); });
}

void write_html(const Document& doc, const OutputOptions& /*options*/, const TextSink& sink) {
  shape_checked(doc.path, [&] { html_of(doc, sink); });
}

void write_junit(const Document& doc, const OutputOptions& options, const TextSink& sink) {
  shape_checked(doc.path, [&] { junit_of(doc, {options.latent_fails}, sink); });
}

/// The report again, in the current schema (a 3.x report's cases made compact): a
/// sweep report only.
void write_json(const Document& doc, const OutputOptions& options, const TextSink& sink) {
  report::Report r = as_report(doc);
  r.detail = options.detail;
  r.dump(sink);
}

}  // namespace

const std::vector<OutputFormat>& output_formats() {
  static const std::vector<OutputFormat> k_formats = {
      {"summary", "summary", "", write_summary},
      {"md", "Markdown", "--markdown", write_markdown},
      {"html", "HTML page", "--html", write_html},
      {"junit", "JUnit XML", "--junit", write_junit},
      {"json", "JSON report", "", write_json, true},
  };
  return k_formats;
}

const OutputFormat* find_output_format(std::string_view name) {
  const std::vector<OutputFormat>& all = output_formats();
  const auto it = std::find_if(all.begin(), all.end(), [&](const OutputFormat& f) { return f.name == name; });
  return it == all.end() ? nullptr : &*it;
}

std::string output_format_names() {
  std::vector<std::string_view> names;
  for (const OutputFormat& f : output_formats()) {
    names.push_back(f.name);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

OutputRequest parse_output(std::string_view spec) {
  const std::string shown = escape::terminal_line(std::string(spec));
  const std::size_t eq = spec.find('=');
  if (eq == std::string_view::npos) {
    throw UsageError(fmt::format("--output {}: expected FORMAT=PATH (formats: {})", shown, output_format_names()));
  }
  const std::string_view name = spec.substr(0, eq);
  const OutputFormat* format = find_output_format(name);
  if (format == nullptr) {
    throw UsageError(fmt::format("--output {}: unknown format \"{}\" (formats: {})", shown,
                                 escape::terminal_line(std::string(name)), output_format_names()));
  }
  if (eq + 1 == spec.size()) {
    throw UsageError(fmt::format("--output {}: the path is empty", shown));
  }
  return {format, std::string(spec.substr(eq + 1))};
}

void require_output_for(const OutputRequest& r, DocumentKind kind) {
  if (kind == DocumentKind::inspect && r.format->report_only) {
    throw UsageError(fmt::format("--output {}={}: the {} is made from a sweep report; inspect writes its JSON with --json",
                                 r.format->name, escape::terminal_line(r.path), r.format->what));
  }
}

void ExtraOutputs::add(OutputRequest r) {
  for (const OutputRequest& earlier : requests) {
    if (earlier.path == r.path) {
      throw UsageError(fmt::format("--output: {} is given twice ({} and {}): one file holds one format",
                                   escape::terminal_line(r.path), earlier.format->name, r.format->name));
    }
  }
  requests.push_back(std::move(r));
}

void write_outputs(const Document& doc, const ExtraOutputs& outputs) {
  for (const OutputRequest& r : outputs.requests) {
    try {
      write_file_atomic(r.path, [&](const TextSink& sink) { r.format->write(doc, outputs.options, sink); });
    } catch (const EnvironmentError& e) {
      throw EnvironmentError(fmt::format("the {} could not be written: {}", r.format->what, e.what()));
    }
  }
}

}  // namespace lp::formats
