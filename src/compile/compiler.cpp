#include "compile/compiler.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "util/error.hpp"

namespace lp::compile {

namespace {

constexpr std::string_view k_ptxas_prefix = "ptxas=";

}  // namespace

std::string_view to_string(CompilerKind kind) {
  switch (kind) {
    case CompilerKind::prebuilt:
      return "prebuilt";
    case CompilerKind::driver:
      return "driver";
    case CompilerKind::ptxas:
      return "ptxas";
    case CompilerKind::file:
      return "file";
  }
  return "?";
}

std::optional<Compiler> Compiler::parse(std::string_view text) {
  if (text == "prebuilt") {
    return prebuilt();
  }
  if (text == "driver") {
    return driver();
  }
  if (text == "file") {
    return file();
  }
  if (text.substr(0, k_ptxas_prefix.size()) == k_ptxas_prefix && text.size() > k_ptxas_prefix.size()) {
    return with_ptxas(std::string(text.substr(k_ptxas_prefix.size())));
  }
  return std::nullopt;
}

Compiler Compiler::parse_or_throw(std::string_view text, std::string_view where) {
  if (text == "toolkit" || text == "triton") {
    fmt::print(stderr, "loraprobe: note: {} {}: write ptxas={} (the bare name is deprecated)\n", where, text, text);
    return with_ptxas(std::string(text));
  }
  std::optional<Compiler> c = parse(text);
  if (!c || c->kind == CompilerKind::file) {
    throw UsageError(fmt::format("{} {}: expected {}", where, text, k_compiler_grammar));
  }
  return *c;
}

std::string Compiler::to_string() const {
  return kind == CompilerKind::ptxas ? std::string(k_ptxas_prefix) + ptxas : std::string(compile::to_string(kind));
}

std::optional<std::string> compiler_syntax_error(std::string_view text) {
  const std::optional<Compiler> c = Compiler::parse(text);
  if (c && c->kind != CompilerKind::file) {
    return std::nullopt;
  }
  return fmt::format("expected {}, got \"{}\"", k_compiler_grammar, text);
}

}  // namespace lp::compile
