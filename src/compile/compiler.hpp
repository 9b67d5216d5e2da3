#pragma once
// What turns a variant's PTX into the SASS that is inspected or run: the one
// spelling of the `compiler` axis, of `--compiler` in sweep and inspect, of image
// keys, and of the compiler record both JSON documents carry.
//
//   prebuilt      the cubin Triton built (the kernel set's, with its bundled ptxas)
//   driver        the driver's JIT (cuLink) on the GPU; only a sweep can use it
//   ptxas=SPEC    a ptxas binary: PATH, VERSION (installed under .tools/ptxas), toolkit,
//                 or triton (for kernel-set variants: the bundled ptxas of their set)
//   file          a user's cubin, inspected as given (inspect only; never a config value)

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "compile/toolchain.hpp"
#include "util/json_in.hpp"

namespace lp::compile {

enum class CompilerKind { prebuilt, driver, ptxas, file };

std::string_view to_string(CompilerKind kind);

struct Compiler {
  CompilerKind kind = CompilerKind::prebuilt;
  std::string ptxas;  ///< kind ptxas only: PATH, VERSION, toolkit or triton

  static Compiler prebuilt() { return {CompilerKind::prebuilt, {}}; }
  static Compiler driver() { return {CompilerKind::driver, {}}; }
  static Compiler file() { return {CompilerKind::file, {}}; }
  static Compiler with_ptxas(std::string spec) { return {CompilerKind::ptxas, std::move(spec)}; }

  /// "prebuilt", "driver", "ptxas=SPEC" (a non-empty SPEC) or "file"; nullopt otherwise.
  static std::optional<Compiler> parse(std::string_view text);
  /// As parse(); throws lp::UsageError naming `where` (a flag or config key) and the
  /// grammar. A bare "toolkit" or "triton" (inspect's old spelling) reads as
  /// ptxas=toolkit / ptxas=triton, with a deprecation note on stderr.
  static Compiler parse_or_throw(std::string_view text, std::string_view where);

  /// The spelling parse() reads back: "prebuilt", "ptxas=13.3".
  [[nodiscard]] std::string to_string() const;
  /// ptxas=triton: for kernel-set variants, each set's own bundled ptxas.
  [[nodiscard]] bool is_bundled_ptxas() const { return kind == CompilerKind::ptxas && ptxas == "triton"; }
  [[nodiscard]] bool is_ptxas() const { return kind == CompilerKind::ptxas; }
  [[nodiscard]] bool operator==(const Compiler&) const = default;
  [[nodiscard]] bool operator<(const Compiler& other) const { return to_string() < other.to_string(); }
};

/// The config's and the flag's grammar, for messages and --help.
inline constexpr std::string_view k_compiler_grammar = "prebuilt, driver or ptxas=<path|version|toolkit|triton>";

/// The message for a value that is no compiler (the `compiler` axis check), or nullopt.
std::optional<std::string> compiler_syntax_error(std::string_view text);

/// One compiler as a run used it: the record of report.schema.json and
/// inspect.schema.json, #/$defs/compiler (the same in both).
struct CompilerRecord {
  Compiler compiler;
  std::optional<std::string> triton;  ///< the kernel set it compiled for; nullopt for user files
  std::optional<PtxasInfo> ptxas;     ///< the binary that made the SASS (prebuilt: the set's bundled one)
  std::optional<std::vector<std::string>> options;  ///< the ptxas options used
  std::optional<std::string> version;  ///< what reports the compiler's version (driver: the driver's)
  std::string error;                   ///< why it could not be used; empty when it could

  /// {name, kind, triton, ptxas, version, options, error}: every key always present.
  [[nodiscard]] nlohmann::json to_json() const;
  [[nodiscard]] JsonText to_json_text() const;  ///< to_json() as a report carries it
};

/// How one image was built: a report variant's `compile` record.
struct BuildRecord {
  CompilerKind kind = CompilerKind::prebuilt;  ///< prebuilt, ptxas (amplified prebuilt too) or driver
  std::string tool;     ///< what made it: "Triton 3.8.0's bundled ptxas", a ptxas path, the driver's JIT calls
  std::string version;  ///< the tool's version in its own words (a set's manifest keeps ptxas's banner)
  std::optional<std::string> sha256;  ///< the ptxas binary's (prebuilt: the set's bundled one, as its manifest says)
  std::optional<std::vector<std::string>> options;  ///< the ptxas options
  std::optional<double> ms;                          ///< compile time, when this run compiled it
  std::optional<std::string> log;                    ///< the compiler's own output
  std::optional<int> amplified;                      ///< the dependent wgmma pairs of an amplified image

  /// {kind, tool, version, ...}: the keys it has.
  [[nodiscard]] JsonText to_json_text() const;
  /// The record to_json_text() wrote (a report variant's `compile`); an absent tool or
  /// version reads as "". Throws lp::InputError at j's pointer for a missing kind, a
  /// kind that is none of compile's, or a value of the wrong type.
  static BuildRecord from_json(const JsonIn& j);
};

}  // namespace lp::compile
