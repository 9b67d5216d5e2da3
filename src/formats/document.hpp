#pragma once
// A JSON document loraprobe wrote, read back for conversion: a sweep report
// (configs/schema/report.schema.json) or an inspect document (inspect.schema.json).

#include <string>

#include <nlohmann/json.hpp>

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

/// j[key] when j is an object that has it, else null (which iterates as empty):
/// reading optional parts of a document without copying them.
const nlohmann::json& member(const nlohmann::json& j, const char* key);

/// j[key] when it is a string, else `fallback`.
std::string text(const nlohmann::json& j, const char* key, const char* fallback = "");

/// XML text and attribute escaping (the five entities; other control characters
/// become U+FFFD, which XML 1.0 cannot carry).
std::string xml_escape(const std::string& text);

}  // namespace lp::formats
