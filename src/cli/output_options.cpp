#include "cli/output_options.hpp"

#include <fmt/format.h>

#include "cli/validators.hpp"

namespace lp::cli {

void add_output_options(CLI::App& app, OutputFlags& flags, std::string_view document) {
  for (const formats::OutputFormat& f : formats::output_formats()) {
    if (!f.alias.empty()) {
      app.add_option(std::string(f.alias), flags.by_alias[std::string(f.name)],
                     fmt::format("Also write {} as {} here (--output {}=PATH)", document, f.what, f.name))
          ->check(non_empty());
    }
  }
  app.add_option("--output", flags.outputs,
                 fmt::format("Also write {} in FORMAT at PATH, atomically; repeatable. FORMAT: {}", document,
                             formats::output_format_names()))
      ->type_name("FORMAT=PATH")
      ->check(non_empty());
}

formats::ExtraOutputs extra_outputs(const OutputFlags& flags, const formats::OutputOptions& options,
                                    formats::DocumentKind kind) {
  formats::ExtraOutputs out;
  out.options = options;
  for (const formats::OutputFormat& f : formats::output_formats()) {
    if (const auto it = flags.by_alias.find(f.name); it != flags.by_alias.end() && !it->second.empty()) {
      out.add({&f, it->second});
    }
  }
  for (const std::string& spec : flags.outputs) {
    formats::OutputRequest r = formats::parse_output(spec);
    formats::require_output_for(r, kind);
    out.add(std::move(r));
  }
  return out;
}

}  // namespace lp::cli
