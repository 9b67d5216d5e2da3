// libFuzzer target: the reader of reports and inspect documents (src/formats/document,
// with the compact case table of src/report/compact) and the converters that
// `loraprobe report` runs on what it read: summary, Markdown, HTML, JUnit. A user
// hands these any file. Reading must succeed or refuse with lp::UsageError
// (InputError: file:pointer: message); a converter meeting a document that is not
// the shape its schema promises may throw nlohmann::json::exception, which the CLI
// turns into the same one-line refusal. Anything else (std::out_of_range, a crash,
// undefined behaviour) is a bug.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "formats/document.hpp"
#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "formats/summary.hpp"
#include "util/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // One scratch file, the same name every run (see journal_fuzzer.cpp).
  static const std::string path = "report-fuzz-input.json";
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) {
    return 0;
  }
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const lp::formats::Document doc = lp::formats::read_document(path);
    try {
      static_cast<void>(lp::formats::summary_of(doc).size());
      static_cast<void>(lp::formats::markdown_of(doc).size());
      static_cast<void>(lp::formats::html_of(doc).size());
      static_cast<void>(lp::formats::junit_of(doc).size());
    } catch (const nlohmann::json::exception&) {
      // not the shape its schema version promises: refused by the CLI
    }
  } catch (const lp::UsageError&) {
    // refused as bad input
  }
  std::remove(path.c_str());
  return 0;
}
