#include "formats/document.hpp"

#include <cstdlib>

#include <fmt/format.h>

#include "inspect_schema_version.hpp"
#include "report/report.hpp"
#include "util/error.hpp"
#include "util/files.hpp"

namespace lp::formats {

using nlohmann::json;

namespace {

constexpr std::size_t k_max_document_bytes = std::size_t{512} << 20;

std::string major_of(const std::string& version) { return version.substr(0, version.find('.')); }

}  // namespace

Document read_document(const std::string& path) {
  Document d;
  d.path = path;
  const std::string text = read_file(path, k_max_document_bytes);
  try {
    d.json = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(path, "", fmt::format("not JSON: {}", e.what()));
  }
  if (!d.json.is_object() || !d.json.contains("schema_version") || !d.json["schema_version"].is_string()) {
    throw InputError(path, "/schema_version", "missing: not a loraprobe report or inspect document");
  }
  const std::string version = d.json["schema_version"].get<std::string>();
  const bool is_inspect = d.json.value("meta", json::object()).value("command", "") == "inspect";
  d.kind = is_inspect ? DocumentKind::inspect : DocumentKind::report;
  // The converters read the current major and the one before it (2.x differs in the
  // compiler records and the open metrics, which they read tolerantly).
  const std::string supported(is_inspect ? inspect::k_inspect_schema_version : report::schema_version());
  const int current = std::stoi(major_of(supported));
  const int major = std::atoi(major_of(version).c_str());
  if (major != current && major != current - 1) {
    throw InputError(path, "/schema_version",
                     fmt::format("{} {}: this loraprobe reads {}.x and {}.x", is_inspect ? "inspect document" : "report",
                                 version, current - 1, current));
  }
  return d;
}

const json& member(const json& j, const char* key) {
  static const json k_null;
  if (!j.is_object()) {
    return k_null;
  }
  const auto it = j.find(key);
  return it == j.end() ? k_null : *it;
}

std::string text(const json& j, const char* key, const char* fallback) {
  const json& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : std::string(fallback);
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\n' && ch != '\t' && ch != '\r') {
          out += "\xEF\xBF\xBD";
        } else {
          out += ch;
        }
    }
  }
  return out;
}

}  // namespace lp::formats
