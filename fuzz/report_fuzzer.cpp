// libFuzzer target: the reader of reports and inspect documents (src/formats/document,
// with the compact case table of src/report/compact) and the converters that
// `loraprobe report` runs on what it read: summary, Markdown, HTML, JUnit. A user
// hands these any file. Reading must succeed or refuse with lp::UsageError
// (InputError: file:pointer: message); a converter meeting a document that is not
// the shape its schema promises may throw nlohmann::json::exception, which the CLI
// turns into the same one-line refusal. Anything else (std::out_of_range, a crash,
// undefined behaviour) is a bug, and so is output that carries the document's bytes
// raw: the summary and Markdown must hold no control character a terminal obeys,
// JUnit and HTML only XML characters (util/escape.hpp).
// A report that is a shard also goes through `loraprobe merge` as the only part: a
// merge it calls complete must hold exactly the plan's cases, their ids hashing to
// the shard record's plan_sha256 (issue 53: forged shard records merged as complete).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "formats/document.hpp"
#include "formats/html.hpp"
#include "formats/junit.hpp"
#include "formats/markdown.hpp"
#include "formats/merge.hpp"
#include "formats/summary.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/sha256.hpp"

namespace {

/// Traps when a one-part merge of `path` is called complete without being the plan.
void check_merge(const std::string& path, const lp::formats::Document& doc) {
  if (doc.kind != lp::formats::DocumentKind::report || !doc.meta.shard) {
    return;
  }
  try {
    const lp::report::Report merged = lp::formats::merge_reports({path}, {});
    std::string ids;
    for (const lp::report::CaseRecord& c : merged.cases) {
      ids += c.id;
    }
    const bool complete = merged.meta.merged.record() && !merged.meta.merged.record()->incomplete;
    if (complete && (merged.cases.size() != doc.meta.shard->plan_cases ||
                     lp::sha256_hex(ids) != doc.meta.shard->plan_sha256)) {
      __builtin_trap();  // a merge called complete that is not the plan
    }
  } catch (const lp::UsageError&) {
    // refused
  } catch (const nlohmann::json::exception&) {
    // as above: not the shape its schema promises
  }
}

}  // namespace

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
    check_merge(path, doc);
    try {
      for (const std::string& text : {lp::formats::summary_of(doc), lp::formats::markdown_of(doc)}) {
        if (lp::escape::terminal(text) != text) {
          __builtin_trap();  // a raw control character from the document
        }
      }
      for (const std::string& xml : {lp::formats::html_of(doc), lp::formats::junit_of(doc)}) {
        if (!lp::escape::is_xml_chars(xml)) {
          __builtin_trap();  // a character XML 1.0 cannot carry
        }
      }
    } catch (const nlohmann::json::exception&) {
      // not the shape its schema version promises: refused by the CLI
    }
  } catch (const lp::UsageError&) {
    // refused as bad input
  }
  std::remove(path.c_str());
  return 0;
}
