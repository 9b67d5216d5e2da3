#pragma once
// Every format loraprobe writes a document in, from one registry (outputs.cpp's table):
// `report --format NAME`, `--output NAME=PATH` on sweep, inspect, merge and report,
// and the flags short for one (--junit PATH is --output junit=PATH). A format is its
// own file (junit.cpp, markdown.cpp, ...) and one row of the table. Each writes from the
// document as written, so the files say what the JSON says.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "formats/document.hpp"
#include "report/report.hpp"
#include "util/files.hpp"

namespace lp::formats {

/// What a format may need besides the document.
struct OutputOptions {
  /// JUnit: whether LATENT is a failure; nullopt: the document's own meta.fail_on.
  std::optional<bool> latent_fails;
  report::Detail detail = report::Detail::compact;  ///< json: the case records' form
};

/// One format: a row of the registry.
struct OutputFormat {
  std::string_view name;   ///< --output NAME=PATH, report --format NAME
  std::string_view what;   ///< "JUnit XML": for help texts and messages
  std::string_view alias;  ///< the flag short for --output NAME=PATH ("--junit"), or ""
  /// Writes `doc` in this format, a piece at a time. Throws lp::InputError for a
  /// document this format cannot be made from.
  void (*write)(const Document& doc, const OutputOptions& options, const TextSink& sink);
  /// Made from a sweep report only (an inspect document has none of it).
  bool report_only = false;
};

/// Every format, in the order help texts list them.
const std::vector<OutputFormat>& output_formats();
/// The format called `name`, or nullptr.
const OutputFormat* find_output_format(std::string_view name);
/// "summary, md, html, junit, json": the names, for help texts and messages.
std::string output_format_names();

/// One file to write: a format and where.
struct OutputRequest {
  const OutputFormat* format = nullptr;
  std::string path;
};

/// "FORMAT=PATH" (--output's value). Throws lp::UsageError "--output SPEC: ..." for a
/// value without "=", an empty path, or a format that is none of output_formats()
/// (the message lists them).
OutputRequest parse_output(std::string_view spec);

/// Throws lp::UsageError "--output NAME=PATH: ..." when `r`'s format cannot be made from a
/// document of `kind` (json from an inspect run: its JSON is inspect --json).
void require_output_for(const OutputRequest& r, DocumentKind kind);

/// The files a run writes besides its own (a sweep's report, inspect's table).
struct ExtraOutputs {
  std::vector<OutputRequest> requests;
  OutputOptions options;

  /// Adds `r`. Throws lp::UsageError when its path is already one to write (two
  /// formats into one file, or one given twice).
  void add(OutputRequest r);
  [[nodiscard]] bool any() const { return !requests.empty(); }
};

/// Writes each requested file atomically, in the order given. Throws
/// lp::EnvironmentError naming the file that could not be written.
void write_outputs(const Document& doc, const ExtraOutputs& outputs);

}  // namespace lp::formats
