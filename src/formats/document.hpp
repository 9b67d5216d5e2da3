#pragma once
// A JSON document loraprobe wrote, read back for conversion: a sweep report
// (configs/schema/report.schema.json) or an inspect document (inspect.schema.json).

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "report/report.hpp"

namespace lp::formats {

enum class DocumentKind { report, inspect };

struct Document {
  DocumentKind kind = DocumentKind::report;
  std::string path;
  nlohmann::json json;
};

/// Reads and recognises `path` (bounded read). Throws lp::InputError
/// "<path>:<pointer>: ..." for a file that is neither, or a major schema version
/// this loraprobe does not read.
Document read_document(const std::string& path);

/// A sweep report of this schema major, or of the one before it that differs only in
/// the form of its cases (3.x), as a Report to write again (compact or full). Throws
/// lp::InputError for an inspect document or an older major, whose other blocks
/// differ.
report::Report as_report(const Document& doc);

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

/// A case's metrics in one line: metrics.summary where the report kept it (--detail
/// full), else the same numbers from the fields (compact reports); "" for null.
std::string metrics_line(const nlohmann::json& metrics);

/// model/symptom.hpp's clause for a metrics record (which A a register-A HGMMA read),
/// empty without a mismatch; a count a record lacks (huge before 4.1.0) is "not counted".
std::string metrics_symptom(const nlohmann::json& metrics);

/// A real as reports write it (a number, "nan", "inf", null) in %.3g form.
std::string real_text(const nlohmann::json& value);

/// A recorded argv as one POSIX sh command line, every element quoted for sh
/// (util/escape.hpp shell), so that copying it runs exactly that command and nothing
/// a document smuggled into an argument; "" for none.
std::string command_text(const nlohmann::json& argv);


}  // namespace lp::formats
