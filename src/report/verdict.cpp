#include "report/verdict.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace lp::report {

namespace {
constexpr std::array k_all = {Verdict::pass,  Verdict::fail,    Verdict::latent,        Verdict::incomplete,
                              Verdict::fault, Verdict::timeout, Verdict::compile_error, Verdict::skipped};
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

}  // namespace lp::report
