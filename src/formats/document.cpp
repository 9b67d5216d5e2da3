#include "formats/document.hpp"

#include "util/json_bounded.hpp"
#include "util/json_in.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "inspect_schema_version.hpp"
#include "plan/axes.hpp"
#include "report/compact.hpp"
#include "report/report.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/escape.hpp"
#include "util/files.hpp"
#include "util/release.hpp"

namespace lp::formats {

using nlohmann::json;

namespace {

constexpr std::size_t k_max_document_bytes = std::size_t{512} << 20;
/// Reports nest about 8 deep (cases, axes, metrics, compile records); 64 leaves room
/// and keeps nlohmann's recursive dump and comparisons far from the stack's end.
constexpr std::size_t k_max_document_depth = 64;
/// The oldest schema major the converters read.
constexpr int k_oldest_major = 2;
/// The oldest major as_report() writes again in the current form: 3.x (cases whole, not
/// compact) and 4.x (the amplify count under the key "pairs") differ from it only in form.
constexpr int k_oldest_rewritable_major = 3;

/// The major of a schema version ("4.2.0" -> 4); -1 for a text that is no version.
int major_of(std::string_view version) {
  const std::optional<Release> r = parse_release(version, ReleaseParts::two_or_three);
  return r ? r->major : -1;
}

/// A case's axis values, each one its axis accepts (plan::check_value, as a config's
/// are checked); an axis this loraprobe does not know is shown as it is.
void check_axes(const JsonIn& axes) {
  for (const auto& [key, value] : axes.members()) {
    if (const plan::AxisInfo* axis = plan::find_axis(key)) {
      if (const std::optional<std::string> bad = plan::check_value(*axis, value.json())) {
        value.fail(*bad);
      }
    }
  }
}


/// A summary's reference to a case (first_failure, ...): null or {index, id, ...}.
void check_case_ref(const JsonIn& summary, const char* key) {
  if (const auto ref = summary.find(key)) {
    (void)ref->at("index").count();
    (void)ref->at("id").string();
  }
}

/// What both kinds of document share, checked for its JSON type before either is read:
/// an object where one is written (null included: no version writes a null block), a
/// string for meta's words, the summary's counts and references. A report's other
/// blocks are then read typed (read_report_blocks) and so are its cases (read_cases):
/// a wrong type or an out-of-range number anywhere is named by its pointer.
void check_blocks(const JsonIn& doc) {
  for (const char* block : {"meta", "environment", "controls", "tolerances", "summary"}) {
    if (doc.json().contains(block)) {
      (void)doc.at(block).object();
    }
  }
  if (const auto meta = doc.find("meta")) {
    for (const char* key : {"tool", "command", "version", "git_sha", "started_at", "finished_at", "config_sha256"}) {
      if (const auto v = meta->find(key)) {
        (void)v->string();
      }
    }
    if (const auto argv = meta->find("argv")) {
      (void)argv->strings();
    }
  }
  if (const auto summary = doc.find("summary")) {
    if (const auto counts = summary->find("counts")) {
      for (const auto& [verdict, n] : counts->members()) {
        (void)n.count();
      }
    }
    if (const auto code = summary->find("exit_code")) {
      (void)code->whole<int>(0, 255);
    }
    for (const char* key : {"first_failure", "minimal_failure", "first_latent"}) {
      check_case_ref(*summary, key);
    }
  }
  // A report's cases are read typed by read_cases (inspect documents have none).
  if (doc.json().contains("cases")) {
    const JsonIn cases = doc.at("cases");
    if (cases.json().is_object()) {  // a compact table says so
      if (const std::string detail = cases.at("detail").string(); detail != "compact") {
        cases.at("detail").fail(fmt::format("\"{}\" is no case table (compact)", detail));
      }
    } else {
      (void)cases.array();
    }
  }
}

/// Where a report's bulk is: a full report's cases, or a compact table's rows.
const JsonBulkPaths& case_paths() {
  static const JsonBulkPaths k_paths = {{"cases"}, {"cases", "rows"}};
  return k_paths;
}

/// The configurations (a case's axes) of the cases read so far. A report holds each
/// configuration once: diff pairs cases by it, the view finds a remedy's neighbours by
/// it. The second occurrence is refused as it is read, for every command (diff alone
/// used to refuse it, after report had read 317k such rows in 30-45 s). Each case is
/// kept as a hash of its key beside its number; a hash seen before makes the earlier
/// case's key again and compares, so a collision never refuses two configurations.
class Configurations {
 public:
  /// Before `c` joins `cases` as their next: throws InputError at `at` + its number when
  /// its configuration (`key`: c.axes.dump()) is an earlier case's.
  void add(const std::string& key, const report::CaseRecord& c, const report::CaseStore& cases, std::string_view at) {
    const std::size_t i = cases.size();
    const std::size_t h = std::hash<std::string>{}(key);
    const auto [first, last] = m_seen.equal_range(h);
    for (auto it = first; it != last; ++it) {
      if (cases[it->second].axes.dump() == key) {
        throw InputError("", fmt::format("{}{}", at, i),
                         fmt::format("the configuration {} (id {}) is also {}{}: a report holds each configuration once",
                                     plan::row_label(c.axes), json(c.id).dump(), at, it->second));
      }
    }
    m_seen.emplace(h, i);
  }

 private:
  std::unordered_multimap<std::size_t, std::size_t> m_seen;  ///< (hash of the key, case)
};

/// A report's cases as the typed records they are (report/case_record.hpp; the metrics
/// and timing through model/metrics_json.hpp), each record's axes checked, into the
/// packed store: `cases` is the cases block without its bulk (a compact table's
/// header, or an empty list), `text` the file, parsed again for the bulk one case at a
/// time. A wrong type or an out-of-range number anywhere is named by its pointer.
report::CaseStore read_cases(const json& cases, std::size_t count, std::string_view text, const std::string& path) {
  report::CaseStore out;
  if (cases.is_null()) {
    return out;
  }
  out.reserve(count);
  Configurations configurations;
  try {
    if (report::is_compact(cases)) {
      if (!cases.contains("rows") || !cases["rows"].is_array()) {
        throw InputError("", "/cases/rows", "missing or not an array");
      }
      const report::CompactTable table(cases);
      for_each_bulk_element(text, path, k_max_document_depth, case_paths(), [&](json&& row, std::size_t r) {
        report::CaseRecord c = table.row(row, r);
        // The rows' axes come from the table's groups: checked as full cases' are (the
        // pointer is the row's).
        const json axes = c.axes.to_json();
        check_axes(JsonIn(axes, path, fmt::format("/cases/rows/{}/axes", r)));
        configurations.add(axes.dump(), c, out, "/cases/rows/");
        out.push_back(c);
      });
    } else {
      for_each_bulk_element(text, path, k_max_document_depth, case_paths(), [&](json&& value, std::size_t i) {
        const JsonIn c(value, path, fmt::format("/cases/{}", i));
        const report::CaseRecord record = report::CaseRecord::from_json(c);
        check_axes(c.at("axes"));
        configurations.add(record.axes.dump(), record, out, "/cases/");
        out.push_back(record);
      });
    }
  } catch (const InputError& e) {
    throw InputError(path, e.pointer(), e.message());
  }
  return out;
}

/// A report's meta, controls and tolerances, read typed (report/blocks.hpp), out of
/// the tree: each field's type and range checked and named by its pointer.
void read_report_blocks(Document& d, json& tree) {
  try {
    const JsonIn doc(tree, d.path);
    const JsonIn meta = doc.at("meta");
    d.meta = report::Meta::from_json(meta);
    d.fail_on = report::default_fail_on();  // 2.x and 3.0 reports may not say
    if (const auto list = meta.find("fail_on")) {
      d.fail_on.clear();
      for (const JsonIn& v : list->items()) {
        d.fail_on.insert(report::read_verdict(v));
      }
    }
    if (const auto why = meta.find("interrupted")) {
      d.interrupted = why->string();
    }
    d.controls = report::Controls::from_json(doc.at("controls"));
    d.tolerances = report::Tolerances::from_json(doc.at("tolerances"));
    d.environment = report::Environment::from_json(doc.at("environment"));
    for (const JsonIn& v : doc.at("variants").items()) {
      d.variants.push_back(report::VariantRecord::from_json(v));
    }
    if (const auto remedies = doc.find("remedies")) {
      d.remedies = report::Remedies::from_json(*remedies);
    }
  } catch (const InputError& e) {
    throw InputError(d.path, e.pointer(), e.message());
  }
  for (const char* block : {"meta", "environment", "variants", "controls", "tolerances", "remedies"}) {
    tree.erase(block);
  }
}


Text text_field(const json& j, const char* key) {
  const json& v = member(j, key);
  return v.is_string() ? Text(v.get<std::string>()) : std::nullopt;
}

/// The statuses an inspect item may have (inspect.schema.json#/$defs/item).
constexpr std::array<std::string_view, 4> k_item_statuses = {"clean", "hazard", "error", "incompatible"};

/// One item of an inspect document, read typed: what decides a JUnit failure or the
/// exit code (its status, its counts) must be what the document says or be refused.
InspectItem read_item(const JsonIn& item) {
  InspectItem i;
  i.name = item.optional_string("name");
  i.triton = item.optional_string("triton");
  i.compiler = item.optional_string("compiler");
  const JsonIn status = item.at("status");
  i.status = status.string();
  if (std::find(k_item_statuses.begin(), k_item_statuses.end(), *i.status) == k_item_statuses.end()) {
    status.fail(fmt::format("expected clean, hazard, error or incompatible, got {}", json_preview(status.json())));
  }
  i.attribution = item.optional_string("attribution");
  i.early_read_attribution = item.optional_string("early_read_attribution");
  i.error = item.optional_string("error");
  if (const auto n = item.find("finding_count")) {
    i.finding_count = static_cast<std::int64_t>(n->count());
  }
  if (const auto n = item.find("early_read_count")) {
    i.early_read_count = static_cast<std::int64_t>(n->count());
  }
  i.ms = item.optional_number("ms").value_or(0.0);
  if (const auto sass = item.find("sass")) {
    i.sass = report::ReportedSass::from_json(*sass);
  }
  return i;
}

/// An inspect document's blocks as the converters draw them, read typed: a wrong type
/// anywhere they read is refused at its pointer (a status of 5 read as "no status"
/// made a hazard pass).
InspectDocument read_inspect(const JsonIn& tree) {
  InspectDocument d;
  d.schema_version = tree.optional_string("schema_version");
  d.mode = tree.optional_string("mode");
  if (const auto meta = tree.find("meta")) {
    d.version = meta->optional_string("version");
    d.git_sha = meta->optional_string("git_sha");
    if (const auto argv = meta->find("argv")) {
      d.argv = argv->strings();
    }
  }
  if (const auto nvdisasm = tree.find("nvdisasm")) {
    d.nvdisasm_version = nvdisasm->optional_string("version");
    d.nvdisasm_origin = nvdisasm->optional_string("origin");
  }
  if (const auto s = tree.find("summary")) {
    const auto n = [&](const char* key) {
      const auto v = s->find(key);
      return v ? static_cast<std::int64_t>(v->count()) : 0;
    };
    d.summary = {n("items"), n("clean"), n("hazard"), n("error"), n("findings"), n("early_reads"), -1};
    if (const auto code = s->find("exit_code")) {
      d.summary.exit_code = code->whole<int>(0, 255);
    }
  }
  for (const JsonIn& item : tree.at("items").items()) {
    d.items.push_back(read_item(item));
  }
  return d;
}

CompilerView compiler_view_of(const report::ReportedCompiler& c) {
  return {c.name,  c.triton, c.version, tool_version(c.version), c.ptxas ? c.ptxas->sha256 : std::nullopt,
          c.error, c.options};
}

/// The compiler records of an inspect document (`compilers`), read as a report's are:
/// anything but an object reads as a record of nothing.
std::vector<CompilerView> compilers_of(const json& list, const std::string& path) {
  std::vector<CompilerView> out;
  std::size_t i = 0;
  for (const json& c : list) {
    out.push_back(compiler_view_of(report::ReportedCompiler::from_json(JsonIn(c, path, fmt::format("/compilers/{}", i++)))));
  }
  return out;
}

/// A report's summary as its cases say it, not as its `summary` block was written:
/// every format answers from the same rows (a stale or forged block said "10 PASS,
/// exit 0" in the text and Markdown while JUnit failed). Only "interrupted", which the
/// rows cannot tell, is taken from the block, as as_report takes it.
SummaryView summary_of_cases(const Document& d, const json& stored) {
  report::Summary s = report::summarize(d.cases, d.fail_on, d.controls.trusted());
  if (d.interrupted && text_field(stored, "outcome").value_or("") == "interrupted") {
    s.outcome = report::Outcome::interrupted;
  }
  SummaryView v;
  for (const auto& [verdict, n] : s.counts) {
    v.counts[std::string(report::to_string(verdict))] = n;
  }
  const auto ref = [&](const std::optional<std::size_t>& at) -> std::optional<CaseRef> {
    if (!at) {
      return std::nullopt;
    }
    const report::CaseRecord c = d.cases[*at];
    return CaseRef{static_cast<std::int64_t>(c.index), Text(c.id)};
  };
  v.first_failure = ref(s.first_failure);
  v.minimal_failure = ref(s.minimal_failure);
  v.first_latent = ref(s.first_latent);
  v.exit_code = s.exit_code;
  v.outcome = Text(std::string(report::to_string(s.outcome)));
  return v;
}

}  // namespace

Document inspect_document_of(std::string path, std::shared_ptr<const nlohmann::json> tree) {
  Document d;
  d.kind = DocumentKind::inspect;
  d.path = std::move(path);
  d.inspect = read_inspect(JsonIn(*tree, d.path));
  d.schema_version = d.inspect.schema_version;
  d.compilers = compilers_of(member(*tree, "compilers"), d.path);
  d.json = std::move(tree);
  return d;
}

Document read_document(const std::string& path) {
  Document d;
  d.path = path;
  // Bounded in size by the read and in depth during the parse: a document may come from
  // anyone. A report's cases are parsed apart, one at a time (read_cases): the blocks
  // first, then the cases into the packed store, so the cases never exist as JSON all at once.
  std::string text = read_file(path, k_max_document_bytes);
  std::size_t case_count = 0;
  json tree = parse_json_bounded_without_bulk(text, path, k_max_document_depth, case_paths(), case_count);
  if (!tree.is_object() || !tree.contains("schema_version") || !tree["schema_version"].is_string()) {
    throw InputError(path, "/schema_version", "missing: not a loraprobe report or inspect document");
  }
  const std::string version = tree["schema_version"].get<std::string>();
  check_blocks(JsonIn(tree, path));
  const std::optional<JsonIn> meta = JsonIn(tree, path).find("meta");
  const bool is_inspect = meta && meta->optional_string("command") == "inspect";
  d.kind = is_inspect ? DocumentKind::inspect : DocumentKind::report;
  // The converters read every major since 2 (2.x differs in the compiler records and
  // the open metrics, which they read tolerantly; 4.x writes the cases compact; 5.x names
  // the amplify count "amplify", not "pairs").
  const std::string supported(is_inspect ? inspect::k_inspect_schema_version : report::schema_version());
  const int current = major_of(supported);
  const int major = major_of(version);
  if (major < k_oldest_major || major > current) {
    throw InputError(path, "/schema_version",
                     fmt::format("{} {}: this loraprobe reads {}.x to {}.x", is_inspect ? "inspect document" : "report",
                                 version, k_oldest_major, current));
  }
  if (d.kind == DocumentKind::report && tree.contains("interned")) {
    try {
      report::restore_variants(tree["variants"], tree["interned"]);
    } catch (const InputError& e) {
      throw InputError(path, e.pointer(), e.message());
    }
    tree.erase("interned");
  }
  if (d.kind == DocumentKind::report) {
    read_report_blocks(d, tree);
    // The converters read one shape, typed: the cases leave the JSON for doc.cases.
    json cases;
    if (const auto it = tree.find("cases"); it != tree.end()) {
      cases = std::move(*it);
      tree.erase(it);
    }
    d.cases = read_cases(cases, case_count, text, path);
  }
  if (d.kind == DocumentKind::inspect) {
    return inspect_document_of(path, std::make_shared<const json>(std::move(tree)));
  }
  for (const report::Carried<report::ReportedCompiler>& c : d.environment.compilers) {
    d.compilers.push_back(compiler_view_of(c.record().value_or(report::ReportedCompiler{})));
  }
  d.schema_version = text_field(tree, "schema_version");
  d.summary = summary_of_cases(d, member(tree, "summary"));
  d.json = std::make_shared<const json>(std::move(tree));
  return d;
}

std::string full_json_text(const Document& doc) {
  return escape::json_c1(doc.kind == DocumentKind::inspect ? doc.json->dump(2) : full_json(doc).dump(2)) + "\n";
}

void shape_checked(const std::string& source, const std::function<void()>& convert, bool several) {
  try {
    convert();
  } catch (const json::exception& e) {
    throw InputError(source, "",
                     fmt::format("not the shape {} schema version promises: {}", several ? "their" : "its", e.what()));
  }
}

json full_json(const Document& doc) {
  json j = *doc.json;
  if (doc.kind == DocumentKind::report) {
    json meta = doc.meta.to_json();
    json fail_on = json::array();
    for (const report::Verdict v : doc.fail_on) {
      fail_on.push_back(report::to_string(v));
    }
    meta["fail_on"] = std::move(fail_on);
    meta["interrupted"] = doc.interrupted ? json(*doc.interrupted) : json();
    j["meta"] = std::move(meta);
    j["controls"] = doc.controls.to_json();
    j["tolerances"] = doc.tolerances.to_json();
    j["environment"] = doc.environment.to_json();
    json variants = json::array();
    for (const report::VariantRecord& v : doc.variants) {
      variants.push_back(v.to_json());
    }
    j["variants"] = std::move(variants);
    if (doc.remedies) {
      j["remedies"] = doc.remedies->to_json();
    }
    json cases = json::array();
    for (const report::CaseRecord& c : doc.cases) {
      cases.push_back(c.to_json());
    }
    j["cases"] = std::move(cases);
  }
  return j;
}

namespace {

/// as_report without the cases.
report::Report report_blocks(const Document& doc) {
  if (doc.kind != DocumentKind::report) {
    throw InputError(doc.path, "/meta/command", "an inspect document, not a sweep report");
  }
  const std::string version = text(*doc.json, "schema_version");
  const int major = major_of(version);
  const int current = major_of(report::schema_version());
  if (major < k_oldest_rewritable_major || major > current) {
    throw InputError(doc.path, "/schema_version",
                     fmt::format("report {}: only {}.x to {}.x reports can be written again (older ones differ in "
                                 "more than the form of their cases); the other formats read it as it is",
                                 version, k_oldest_rewritable_major, current));
  }
  report::Report r;
  r.meta = doc.meta;
  if (doc.interrupted) {
    // meta.interrupted is the Report's own (one owner, Report::stop()).
    const JsonIn summary(member(*doc.json, "summary"), doc.path, "/summary");
    const auto outcome = summary.json().is_object() ? summary.find("outcome") : std::nullopt;
    r.stop(*doc.interrupted, outcome && outcome->string() == "interrupted");
  }
  r.controls = doc.controls;
  r.tolerances = doc.tolerances;
  r.fail_on = doc.fail_on;
  r.remedies = doc.remedies;
  r.environment = doc.environment;
  r.variants = doc.variants;
  return r;
}

}  // namespace

report::Report as_report(const Document& doc) {
  report::Report r = report_blocks(doc);
  r.cases = doc.cases;
  return r;
}

report::Report as_report(Document&& doc) {
  report::Report r = report_blocks(doc);
  r.cases = std::move(doc.cases);
  return r;
}

const json& member(const json& j, const char* key) {
  static const json k_null;
  if (!j.is_object()) {
    return k_null;
  }
  const auto it = j.find(key);
  return it == j.end() ? k_null : *it;
}

std::int64_t integer(const json& j, const char* key, std::int64_t fallback) {
  const json& v = member(j, key);
  return v.is_number_integer() ? v.get<std::int64_t>() : fallback;
}

std::string text(const json& j, const char* key, const char* fallback) {
  const json& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : std::string(fallback);
}

std::string tool_version(const Text& recorded) {
  const std::string v = recorded.value_or("");
  const std::optional<tools::ToolVersion> parsed = tools::parse_tool_version(v);
  return parsed ? parsed->version : v;
}

std::string real_text(double value) {
  // NaN as "nan" whatever its sign: the reports spell every NaN so.
  return std::isnan(value) ? std::string("nan") : fmt::format("{:.3g}", value);
}

std::string command_text(const std::vector<std::string>& argv) {
  std::vector<std::string> words;
  std::transform(argv.begin(), argv.end(), std::back_inserter(words), escape::shell);
  return fmt::format("{}", fmt::join(words, " "));
}

}  // namespace lp::formats
