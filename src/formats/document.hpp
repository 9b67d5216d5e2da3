#pragma once
// A JSON document loraprobe wrote, read back for conversion: a sweep report
// (configs/schema/report.schema.json) or an inspect document (inspect.schema.json).

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "report/report.hpp"
#include "util/json_text.hpp"

namespace lp::formats {

enum class DocumentKind { report, inspect };

/// A text field as a document wrote it: absent (missing, or not a string) or the text.
/// Each converter says what it prints for an absent one.
using Text = std::optional<std::string>;

/// One item of an inspect document (inspect.schema.json#/$defs/item).
struct InspectItem {
  Text name;
  Text triton;    ///< absent for a user's file
  Text compiler;
  Text status;    ///< clean, hazard, error, incompatible
  Text attribution;
  Text early_read_attribution;
  Text error;
  std::int64_t finding_count = 0;     ///< 0 when absent, as every count
  std::int64_t early_read_count = 0;
  double ms = 0.0;
  report::ReportedSass sass;
};

/// An inspect document's summary block.
struct InspectSummary {
  std::int64_t items = 0;
  std::int64_t clean = 0;
  std::int64_t hazard = 0;
  std::int64_t error = 0;
  std::int64_t findings = 0;
  std::int64_t early_reads = 0;
  std::int64_t exit_code = -1;  ///< -1 when absent
};

/// An inspect document (inspect.schema.json), typed: what the converters draw from it.
struct InspectDocument {
  Text schema_version;
  Text mode;
  Text version;  ///< meta.version
  Text git_sha;  ///< meta.git_sha
  std::vector<std::string> argv;  ///< meta.argv
  Text nvdisasm_version;
  Text nvdisasm_origin;
  InspectSummary summary;
  std::vector<InspectItem> items;
};

/// A compiler record (a report's environment.compilers, an inspect document's
/// compilers), as the converters draw it: report::ReportedCompiler, its ptxas's version
/// made one shape.
struct CompilerView {
  Text name;
  Text triton;          ///< absent for a user's files
  Text version_text;    ///< the version as recorded (2.x: ptxas's own words)
  std::string version;  ///< tool_version(version_text): "12.8.93"
  Text ptxas_sha256;    ///< of the ptxas binary (ptxas.sha256)
  Text error;           ///< why it could not be used
  std::vector<std::string> options;  ///< the ptxas options (anything but a string as its JSON text)
};

/// A tool's version as a record gives it: "12.8.93" from ptxas's words ("Cuda compilation
/// tools, release 12.8, V12.8.93", as 2.x and 3.0 reports and the manifests keep them),
/// the text otherwise, "" for none.
std::string tool_version(const Text& recorded);

/// A case a report's summary names (first_failure, ...).
struct CaseRef {
  std::int64_t index = -1;  ///< -1 when absent
  Text id;
};

/// A report's summary block as written (report::Report computes its own again).
struct SummaryView {
  std::map<std::string, std::size_t> counts;  ///< verdict name -> cases
  std::optional<CaseRef> first_failure;
  std::optional<CaseRef> minimal_failure;
  std::optional<CaseRef> first_latent;
  std::int64_t exit_code = -1;  ///< -1 when absent
  Text outcome;
};

struct Document {
  DocumentKind kind = DocumentKind::report;
  std::string path;
  /// The tree as read (an inspect document whole, for `--format json`); of a report,
  /// the blocks not read typed below (schema_version and the summary, which
  /// report::Report computes again). Never null once read; shared, not copied, by
  /// copies of the Document (it is not changed).
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
  /// The document's schema_version.
  Text schema_version;
  /// A report's summary as its cases say it.
  SummaryView summary;
  /// An inspect document, typed (empty for a report).
  InspectDocument inspect;
  /// The compiler records, of either kind.
  std::vector<CompilerView> compilers;
};

/// Reads and recognises `path` (bounded read). Throws lp::InputError
/// "<path>:<pointer>: ..." for a file that is neither, or a major schema version
/// this loraprobe does not read.
Document read_document(const std::string& path);

/// An inspect document held in memory (`inspect` writes its outputs from it), its
/// typed parts read as read_document reads them.
Document inspect_document_of(std::string path, std::shared_ptr<const nlohmann::json> tree);

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

/// j[key] when it is an integer, else `fallback`; j may be anything.
std::int64_t integer(const nlohmann::json& j, const char* key, std::int64_t fallback = 0);

/// j[key] when it is a string, else `fallback`.
std::string text(const nlohmann::json& j, const char* key, const char* fallback = "");

/// A real in %.3g form, NaN as "nan" (reports write every NaN so).
std::string real_text(double value);

/// A recorded argv as one POSIX sh command line, every element quoted for sh
/// (util/escape.hpp shell), so that copying it runs exactly that command and nothing
/// a document smuggled into an argument; "" for none.
std::string command_text(const std::vector<std::string>& argv);


}  // namespace lp::formats
