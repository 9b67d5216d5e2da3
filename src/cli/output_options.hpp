#pragma once
// The files a command writes besides its own, spelled the same in sweep, inspect, merge
// and report: --output FORMAT=PATH (repeatable), and for each format of the registry
// that has one, the flag short for it (--junit PATH is --output junit=PATH). Both come
// from formats/outputs.hpp's table, so a new format needs no flag here.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "formats/outputs.hpp"

namespace lp::cli {

struct OutputFlags {
  std::vector<std::string> outputs;                  ///< --output FORMAT=PATH, in the order given
  std::map<std::string, std::string, std::less<>> by_alias;  ///< format name -> the path its flag gave
};

/// Binds --output and the formats' flags on `app` (a subcommand or an option group);
/// `document` names what is written in their help ("the report", "the inspect document").
void add_output_options(CLI::App& app, OutputFlags& flags, std::string_view document);

/// The files to write: the flags' first (in the registry's order), then --output's.
/// Throws lp::UsageError for a --output value that is no FORMAT=PATH of a known format,
/// a format a document of `kind` cannot be written in, or a path given twice.
formats::ExtraOutputs extra_outputs(const OutputFlags& flags, const formats::OutputOptions& options,
                                    formats::DocumentKind kind = formats::DocumentKind::report);

}  // namespace lp::cli
