#include "report/verdict.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace lp::report {

namespace {
constexpr std::array k_all = {Verdict::pass,    Verdict::fail,          Verdict::latent,  Verdict::incomplete,
                              Verdict::fault,   Verdict::timeout,       Verdict::compile_error, Verdict::skipped,
                              Verdict::incompatible};
}  // namespace

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return "PASS";
    case Verdict::fail:
      return "FAIL";
    case Verdict::latent:
      return "LATENT";
    case Verdict::incomplete:
      return "incomplete";
    case Verdict::fault:
      return "fault";
    case Verdict::timeout:
      return "timeout";
    case Verdict::compile_error:
      return "compile_error";
    case Verdict::skipped:
      return "skipped";
    case Verdict::incompatible:
      return "incompatible";
  }
  return "?";
}

char verdict_letter(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass:
      return 'P';
    case Verdict::fail:
      return 'F';
    case Verdict::latent:
      return 'L';
    case Verdict::incomplete:
      return 'i';
    case Verdict::fault:
      return 'f';
    case Verdict::timeout:
      return 't';
    case Verdict::compile_error:
      return 'c';
    case Verdict::skipped:
      return 's';
    case Verdict::incompatible:
      return 'x';
  }
  return '?';
}

std::optional<Verdict> parse_verdict(std::string_view text) {
  auto lower = [](std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
    return out;
  };
  const std::string wanted = lower(text);
  for (Verdict v : k_all) {
    if (lower(to_string(v)) == wanted) {
      return v;
    }
  }
  return std::nullopt;
}

std::set<Verdict> default_fail_on() {
  return {Verdict::fail, Verdict::fault, Verdict::timeout, Verdict::compile_error};
}

std::string latent_reason(int static_findings, int runs) {
  // Rule of three: 0 failures in n runs bounds the per-run rate by 3/n at 95%.
  return fmt::format(
      "the SASS has {} wgmma register hazard finding(s); not observed in {} runs (95% upper bound on the per-run "
      "failure rate: {:.3g})",
      static_findings, runs, runs > 0 ? std::min(1.0, 3.0 / runs) : 1.0);
}

std::string fixing_ptxas_version() { return fmt::format("{}.{}", k_fixing_ptxas.major, k_fixing_ptxas.minor); }

std::string ptxas_fix_text() {
  return fmt::format("ptxas >= {} fixes it (the PTX is clean, ptxas up to {}.{} re-creates the hazard)",
                     fixing_ptxas_version(), k_fixing_ptxas.major, k_fixing_ptxas.minor - 1);
}

std::string attribution_note(const std::string& attribution) {
  if (attribution == "ptx") {
    return "; the PTX itself writes registers of the pending wgmma (fix in the PTX producer; no ptxas can be relied on)";
  }
  if (attribution == "ptxas") {
    return "; ptxas made the hazard: " + ptxas_fix_text();
  }
  return "";
}

namespace {

template <class Key, class Name>
std::string counts_of(const std::map<Key, std::size_t>& counts, Name name) {
  std::vector<std::string> parts;
  for (const auto& [key, n] : counts) {
    parts.push_back(fmt::format("{} {}", n, name(key)));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace

std::string counts_text(const std::map<Verdict, std::size_t>& counts) {
  return counts_of(counts, [](Verdict v) { return to_string(v); });
}

std::string counts_text(const std::map<std::string, std::size_t>& counts) {
  return counts_of(counts, [](const std::string& name) { return name; });
}

}  // namespace lp::report
