// Every converter of `loraprobe report` meets documents whose values have the wrong
// type: each value of the H200 seed report (its blocks and its first case, to the
// leaves) replaced by a number, a string, null, a list and an object in turn. Reading
// and converting must succeed or refuse with lp::InputError (exit 2, file:pointer);
// any other exception is what the CLI used to report as an internal error (exit 4).

#include <gtest/gtest.h>

#include <functional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "formats/diff.hpp"
#include "formats/document.hpp"
#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "formats/summary.hpp"
#include "report/report.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::formats {
namespace {

using nlohmann::json;

/// The pointers of `j` down to `depth` levels (every element of a list past the first
/// is like it, and left out).
void pointers(const json& j, const json::json_pointer& at, std::size_t depth, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (depth == 0) {
    return;
  }
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      pointers(value, at / key, depth - 1, out);
    }
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size() && i < 1; ++i) {
      pointers(j[i], at / i, depth - 1, out);
    }
  }
}

/// What happened to one mutated document: "" when every converter succeeded or refused
/// with InputError, else the first other exception.
std::string convert_all(const std::string& path, const Document& reference) {
  const std::vector<std::pair<const char*, std::function<void(const Document&)>>> converters = {
      {"summary", [](const Document& d) { (void)summary_of(d); }},
      {"md", [](const Document& d) { (void)markdown_of(d); }},
      {"html", [](const Document& d) { (void)html_of(d); }},
      {"junit", [](const Document& d) { (void)junit_of(d); }},
      {"json", [](const Document& d) { (void)as_report(d).dump(); }},
  };
  try {
    const Document doc = read_document(path);
    for (const auto& [name, convert] : converters) {
      try {
        convert(doc);
      } catch (const InputError&) {
      } catch (const std::exception& e) {
        return fmt::format("{}: {}", name, e.what());
      }
    }
    try {
      (void)diff_reports(reference, doc, {});
      (void)diff_reports(doc, reference, {});
    } catch (const InputError&) {
    } catch (const std::exception& e) {
      return fmt::format("diff: {}", e.what());
    }
  } catch (const InputError&) {
  } catch (const std::exception& e) {
    return fmt::format("read: {}", e.what());
  }
  return "";
}

TEST(Mutation, EveryWrongTypeIsRefusedAsInputOrRead) {
  const std::string seed = LP_SOURCE_DIR "/tests/report/fixtures/seed-h200-3.0.0.json";
  const json original = json::parse(read_file(seed));
  std::vector<json::json_pointer> all;
  for (const auto& [key, value] : original.items()) {
    pointers(value, json::json_pointer("/" + key), key == "cases" ? 4 : 3, all);
  }
  const TempDir dir("lp-mutation-test-");
  const std::string path = dir.path() + "/mutated.json";
  const json replacements[] = {7, "x", nullptr, json::array(), json::object()};
  const Document reference = read_document(seed);
  std::vector<std::string> failures;
  for (const json::json_pointer& at : all) {
    for (const json& replacement : replacements) {
      if (original.at(at) == replacement) {
        continue;
      }
      json mutated = original;
      mutated.at(at) = replacement;
      write_file_atomic(path, mutated.dump());
      if (std::string why = convert_all(path, reference); !why.empty()) {
        failures.push_back(fmt::format("{} = {}: {}", at.to_string(), replacement.dump(), why));
      }
    }
  }
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << all.size() * 5 << " mutations:\n"
                                << fmt::format("{}", fmt::join(failures, "\n"));
}

}  // namespace
}  // namespace lp::formats
