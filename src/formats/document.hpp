#pragma once
// A JSON document loraprobe wrote, read back for conversion: a sweep report
// (configs/schema/report.schema.json) or an inspect document (inspect.schema.json).

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/report.hpp"

namespace lp::formats {

enum class DocumentKind { report, inspect };

struct Document {
  DocumentKind kind = DocumentKind::report;
  std::string path;
  /// An inspect document whole; of a report, the blocks not read typed below
  /// (schema_version and the summary, which report::Report computes again). Never
  /// null once read; shared, not copied, by copies of the Document (it is not changed).
  std::shared_ptr<const nlohmann::json> json;
  /// A report's blocks, typed (report/blocks.hpp); meta's detail, fail_on and
  /// interrupted are the fields below.
  report::Meta meta;
  report::Environment environment;
  std::vector<report::VariantRecord> variants;
  report::Controls controls;
  report::Tolerances tolerances;
  std::optional<report::Remedies> remedies;  ///< sweep --remedies (since 4.0.0)
  std::set<report::Verdict> fail_on;    ///< meta.fail_on (the default set when absent: 2.x)
  std::optional<std::string> interrupted;  ///< meta.interrupted
  /// A report's cases, typed (a compact table expanded), in the file's order.
  report::CaseStore cases;
};

/// Reads and recognises `path` (bounded read). Throws lp::InputError
/// "<path>:<pointer>: ..." for a file that is neither, or a major schema version
/// this loraprobe does not read.
Document read_document(const std::string& path);

/// The document as one JSON, a report's cases in their full form (one object per case,
/// report/report.hpp CaseRecord::to_json): the file's content in one shape, whichever
/// form its cases were written in.
nlohmann::json full_json(const Document& doc);
/// full_json(doc) as text, indented by 2, with a final newline.
std::string full_json_text(const Document& doc);

/// A sweep report of this schema major, or of the one before it that differs only in
/// the form of its cases (3.x), as a Report to write again (compact or full). Throws
/// lp::InputError for an inspect document or an older major, whose other blocks
/// differ.
report::Report as_report(const Document& doc);
/// As above, the cases moved out of `doc` rather than copied (a report of a million cases).
report::Report as_report(Document&& doc);

/// Runs `convert`, a converter reading the documents that `source` names (a path, or
/// "OLD and NEW"). A document that is loraprobe's by its schema version but not by its
/// shape (a JSON access that fails) is bad input: lp::InputError "<source>: not the shape
/// its schema version promises: ..." ("their" for several), not a crash.
void shape_checked(const std::string& source, const std::function<void()>& convert, bool several = false);

/// j[key] when j is an object that has it, else null (which iterates as empty):
/// reading optional parts of a document without copying them.
const nlohmann::json& member(const nlohmann::json& j, const char* key);

/// j[key] when it is a number (of any kind), else `fallback`; j may be anything.
double number(const nlohmann::json& j, const char* key, double fallback = 0.0);
/// j[key] when it is an integer, else `fallback`; j may be anything.
std::int64_t integer(const nlohmann::json& j, const char* key, std::int64_t fallback = 0);
/// j[key] when it is a boolean, else `fallback`; j may be anything.
bool boolean(const nlohmann::json& j, const char* key, bool fallback);

/// j[key] when it is a string, else `fallback`.
std::string text(const nlohmann::json& j, const char* key, const char* fallback = "");

/// j[key] as a tool's version: "12.8.93" from ptxas's words ("Cuda compilation tools,
/// release 12.8, V12.8.93", as 2.x and 3.0 reports kept them), the text otherwise.
std::string version_of(const nlohmann::json& j, const char* key);

/// A real in %.3g form, NaN as "nan" (reports write every NaN so).
std::string real_text(double value);

/// A recorded argv as one POSIX sh command line, every element quoted for sh
/// (util/escape.hpp shell), so that copying it runs exactly that command and nothing
/// a document smuggled into an argument; "" for none.
std::string command_text(const std::vector<std::string>& argv);


}  // namespace lp::formats
