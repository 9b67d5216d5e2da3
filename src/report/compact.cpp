#include "report/compact.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/metrics_json.hpp"
#include "util/error.hpp"
#include "util/json_in.hpp"

namespace lp::report {

using nlohmann::json;

namespace {

/// The axes that differ from case to case within a kernel variant; every other axis
/// is said once, in the case's group.
constexpr std::array<const char*, 4> k_shape_axes = {"tokens", "hidden", "rank", "num_loras"};
/// Metric columns a report of an earlier 4.x version does not have: read as null there.
constexpr std::array<const char*, 1> k_columns_since_4_1 = {"huge"};
/// The group column of an amplified case's AmplificationRecord (since 4.1.0; no axis has this name).
constexpr const char* k_amplification_column = "amplification";

json columns() {
  json c = {"index", "id", "group"};
  for (const char* a : k_shape_axes) {
    c.push_back(a);
  }
  for (const char* k : {"device", "verdict", "reason", "runs", "failed_runs", "tolerance"}) {
    c.push_back(k);
  }
  for (const std::string_view m : metric_columns()) {
    c.push_back(m);
  }
  for (const std::string_view t : timing_columns()) {
    c.push_back(t);
  }
  return c;
}

/// Ratios the device computes in double from single-precision data; compact writes
/// them at single precision (about 7 significant digits; --detail full keeps 17).
constexpr std::array<const char*, 2> k_single_precision_ratios = {"max_rel_dev", "worst_dev_over_tolerance"};

/// A double at single precision's shortest decimal form (nan and inf strings pass).
json at_single_precision(const json& v) {
  if (!v.is_number_float()) {
    return v;
  }
  return std::strtod(fmt::format("{}", static_cast<float>(v.get<double>())).c_str(), nullptr);
}

/// A double that is a float (an event time, a float deviation) at float's shortest
/// decimal form: 0.007328 instead of 0.007327999919652939. Other values as they are.
json shortest(const json& v) {
  if (!v.is_number_float()) {
    return v;
  }
  const double d = v.get<double>();
  const float f = static_cast<float>(d);
  if (static_cast<double>(f) != d) {
    return v;
  }
  return std::strtod(fmt::format("{}", f).c_str(), nullptr);
}

bool contains(const auto& list, std::string_view key) {
  for (const std::string_view k : list) {
    if (key == k) {
      return true;
    }
  }
  return false;
}

/// The reason as the row stores it: null when reading can rebuild it exactly.
json stored_reason(const CaseRecord& c) {
  if (c.reason.empty()) {
    return nullptr;
  }
  if (c.verdict == Verdict::latent && c.static_findings) {
    const std::string rebuilt = latent_reason(*c.static_findings, c.runs) + attribution_note(c.attribution.value_or(""));
    if (rebuilt == c.reason) {
      return nullptr;
    }
  }
  return c.reason;
}

}  // namespace

struct CompactCases::Layout {
  json groups = json::array();
  std::map<std::string, std::size_t> group_index;
  json tolerances = json::array();
  std::map<std::pair<double, double>, std::size_t> tolerance_index;
  json all_columns = columns();
  json first_row;              ///< row 0, every column
  std::vector<bool> constant;  ///< per column of all_columns: one value in every row
};

namespace {

/// The row of `c`, every column, its group and tolerance added to `layout` when new.
json full_row(const CaseRecord& c, CompactCases::Layout& layout) {
  json rest = json::object();
  json shape = json::array();
  for (const char* a : k_shape_axes) {
    shape.push_back(c.axes.value(a));
  }
  for (auto& [key, value] : c.axes.items()) {
    if (!contains(k_shape_axes, key)) {
      rest[std::string(key)] = std::move(value);
    }
  }
  json group = {{"variant", c.variant ? json(*c.variant) : json()},
                {"axes", std::move(rest)},
                {"static_findings", c.static_findings ? json(*c.static_findings) : json()},
                {"attribution", c.attribution ? json(*c.attribution) : json()}};
  if (c.amplification) {
    group["amplification"] = c.amplification->to_json();
  }
  const auto [g, added] = layout.group_index.emplace(group.dump(), layout.groups.size());
  if (added) {
    layout.groups.push_back(std::move(group));
  }
  json row = {c.index, c.id, g->second};
  for (json& s : shape) {
    row.push_back(std::move(s));
  }
  row.push_back(c.device ? json(*c.device) : json());
  row.push_back(to_string(c.verdict));
  row.push_back(stored_reason(c));
  row.push_back(c.runs);
  row.push_back(c.failed_runs);
  if (c.metrics) {
    const json metrics = *c.metrics;
    const auto tol = std::make_pair(c.metrics->atol, c.metrics->rtol);
    const auto [t, new_tol] = layout.tolerance_index.emplace(tol, layout.tolerances.size());
    if (new_tol) {
      layout.tolerances.push_back({tol.first, tol.second});
    }
    row.push_back(t->second);
    for (const std::string_view m : metric_columns()) {
      const auto it = metrics.find(std::string(m));
      const json cell = it != metrics.end() ? *it : json();
      row.push_back(contains(k_single_precision_ratios, m) ? at_single_precision(cell) : shortest(cell));
    }
  } else {
    row.push_back(nullptr);
    for (std::size_t i = 0; i < metric_columns().size(); ++i) {
      row.push_back(nullptr);
    }
  }
  const json timing = c.timing ? json(*c.timing) : json();
  for (const std::string_view t : timing_columns()) {
    row.push_back(c.timing ? shortest(timing[std::string(t)]) : json());
  }
  return row;
}

}  // namespace

CompactCases::CompactCases(const CaseStore& cases) : m_cases(cases), m(std::make_unique<Layout>()) {
  // The first pass: the groups and tolerances, and which columns have one value in every
  // row (said once, in constants: in a clean sweep the failure counts are all 0 and take
  // no room in the rows). The rows themselves are made again by for_each_row, one at a
  // time, so that a million-case report is never a JSON tree of a million rows.
  Layout& l = *m;
  l.constant.assign(l.all_columns.size(), !cases.empty());
  for (std::size_t i = 0; i < l.all_columns.size(); ++i) {
    const std::string name = l.all_columns[i].get<std::string>();
    if (name == "index" || name == "id" || name == "group") {
      l.constant[i] = false;  // the columns a person reads a row by
    }
  }
  bool first = true;
  for (const CaseRecord& c : cases) {
    json row = full_row(c, l);
    if (first) {
      l.first_row = std::move(row);
      first = false;
      continue;
    }
    for (std::size_t i = 0; i < row.size(); ++i) {
      l.constant[i] = l.constant[i] && row[i] == l.first_row[i];
    }
  }
}

CompactCases::~CompactCases() = default;

json CompactCases::header() const {
  const Layout& l = *m;
  // Groups as rows too: their axis names once, in group_columns.
  std::set<std::string> axis_names;
  for (const json& g : l.groups) {
    for (const auto& [key, value] : g["axes"].items()) {
      axis_names.insert(key);
    }
  }
  json group_columns = {"variant", "static_findings", "attribution"};
  // Only an amplified run's groups have an amplification record: other reports keep their form.
  const bool amplified =
      std::any_of(l.groups.begin(), l.groups.end(), [](const json& g) { return g.contains("amplification"); });
  if (amplified) {
    group_columns.push_back(k_amplification_column);
  }
  for (const std::string& a : axis_names) {
    group_columns.push_back(a);
  }
  json group_rows = json::array();
  for (const json& g : l.groups) {
    json row = {g["variant"], g["static_findings"], g["attribution"]};
    if (amplified) {
      row.push_back(g.contains("amplification") ? g["amplification"] : json());
    }
    for (const std::string& a : axis_names) {
      row.push_back(g["axes"].contains(a) ? g["axes"][a] : json());
    }
    group_rows.push_back(std::move(row));
  }
  json kept_columns = json::array();
  json constants = json::object();
  for (std::size_t i = 0; i < l.all_columns.size(); ++i) {
    if (l.constant[i]) {
      constants[l.all_columns[i].get<std::string>()] = l.first_row[i];
    } else {
      kept_columns.push_back(l.all_columns[i]);
    }
  }
  return {{"detail", "compact"},
          {"columns", std::move(kept_columns)},
          {"constants", std::move(constants)},
          {"group_columns", std::move(group_columns)},
          {"groups", std::move(group_rows)},
          {"tolerances", l.tolerances},
          {"rows", json::array()}};
}

void CompactCases::for_each_row(const std::function<void(const json& row)>& f) const {
  // The layout is complete after the first pass: full_row() finds every group and
  // tolerance in it and adds none.
  Layout& l = *m;
  for (const CaseRecord& c : m_cases) {
    const json row = full_row(c, l);
    json kept = json::array();
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (!l.constant[i]) {
        kept.push_back(row[i]);
      }
    }
    f(kept);
  }
}

json compact_cases(const CaseStore& cases) {
  const CompactCases table(cases);
  json out = table.header();
  json& rows = out["rows"];
  table.for_each_row([&](const json& row) { rows.push_back(row); });
  return out;
}

namespace {

/// What intern_variants() says once: each variant's compile record (the same for
/// every variant of one Triton set and compiler), and its nvdisasm record and
/// warnings (the same for nearly every cubin). {key in "interned", path in the entry}.
struct Interned {
  const char* name;
  const char* parent;  ///< nullptr: a key of the entry itself
  const char* key;
};
constexpr std::array<Interned, 3> k_interned = {{
    {"compile", nullptr, "compile"}, {"disassembler", "sass", "disassembler"}, {"warnings", "sass", "warnings"}}};

json* interned_slot(json& entry, const Interned& what) {
  if (!entry.is_object()) {
    return nullptr;
  }
  json* holder = &entry;
  if (what.parent != nullptr) {
    if (!entry.contains(what.parent) || !entry[what.parent].is_object()) {
      return nullptr;
    }
    holder = &entry[what.parent];
  }
  return holder->contains(what.key) ? &(*holder)[what.key] : nullptr;
}

}  // namespace

json intern_variants(json& variants) {
  json interned = json::object();
  for (const Interned& what : k_interned) {
    json list = json::array();
    std::map<std::string, std::size_t> seen;
    for (json& v : variants) {
      json* slot = interned_slot(v, what);
      if (slot == nullptr) {
        continue;
      }
      const auto [it, added] = seen.emplace(slot->dump(), list.size());
      if (added) {
        list.push_back(*slot);
      }
      *slot = it->second;
    }
    interned[what.name] = std::move(list);
  }
  return interned;
}

void restore_variants(json& variants, const json& interned) {
  // Every part read through JsonIn: a wrong type anywhere is the document's fault,
  // named by its pointer (an unchecked index into a boolean was an internal error).
  static const std::string k_no_file;
  (void)JsonIn(variants, k_no_file, "/variants").array();
  const JsonIn lists(interned, k_no_file, "/interned");
  (void)lists.object();
  for (std::size_t i = 0; i < variants.size(); ++i) {
    for (const Interned& what : k_interned) {
      json* slot = interned_slot(variants[i], what);
      if (slot == nullptr) {
        continue;  // not an object where one is written: the variant's reader names it
      }
      const std::string pointer = what.parent != nullptr
                                      ? fmt::format("/variants/{}/{}/{}", i, what.parent, what.key)
                                      : fmt::format("/variants/{}/{}", i, what.key);
      const std::size_t at = JsonIn(*slot, k_no_file, pointer).count();
      const std::optional<JsonIn> list = lists.find(what.name);
      if (!list || at >= list->array().size()) {
        throw InputError("", pointer, fmt::format("{} is not in /interned/{}", at, what.name));
      }
      *slot = list->array()[at];
    }
  }
}

namespace {

/// One JSON value on one line, doubles at their shortest round-trip form (fmt's; the
/// JSON library's is not always the shortest: 1.9010879999999999 for 1.901088).
void append_line(std::string& out, const json& v) {
  switch (v.type()) {
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        out += first ? "" : ",";
        first = false;
        out += json(key).dump();
        out += ':';
        append_line(out, value);
      }
      out += '}';
      break;
    }
    case json::value_t::array: {
      out += '[';
      for (std::size_t i = 0; i < v.size(); ++i) {
        out += i == 0 ? "" : ",";
        append_line(out, v[i]);
      }
      out += ']';
      break;
    }
    case json::value_t::number_float: {
      const double d = v.get<double>();
      if (!std::isfinite(d)) {
        out += "null";  // as the JSON library writes it
        break;
      }
      out += fmt::format("{}", d);  // an integral value reads back as an integer: the same number
      break;
    }
    default:
      out += v.dump();
  }
}

/// Where `"key": []` is in `text`: after `anchor`, and not before `from`.
std::size_t empty_list_at(const std::string& text, const std::string& anchor, const std::string& key,
                          const std::string& indent, std::size_t from) {
  const std::size_t a = text.find(anchor);
  const std::size_t at =
      a == std::string::npos ? a : text.find("\n" + indent + "\"" + key + "\": []", std::max(a, from));
  if (at == std::string::npos) {
    throw Error(fmt::format("report: \"{}\" went missing while writing the compact report", key));
  }
  return at;
}

}  // namespace

void dump_compact_report(json report, const CompactCases& cases, const TextSink& sink) {
  json groups = std::move(report["cases"]["groups"]);
  json variants = std::move(report["variants"]);
  report["cases"]["rows"] = json::array();
  report["cases"]["groups"] = json::array();
  report["variants"] = json::array();
  const std::string text = report.dump(2);
  // Keys are sorted, each block's own key at its indentation (cases' at four spaces), so
  // the three lists come in this order: cases.groups, cases.rows, variants. Each `"key": []`
  // is replaced by its elements, one per line, the rows made and written one at a time.
  using Line = std::function<void(const json&)>;
  struct Splice {
    const char* anchor;
    const char* key;
    std::string indent;
    std::function<void(const Line&)> each;
  };
  const auto all_of = [](const json& list) {
    return [&list](const Line& line) {
      for (const json& element : list) {
        line(element);
      }
    };
  };
  const std::vector<Splice> splices = {
      {"\n  \"cases\": {", "groups", "    ", all_of(groups)},
      {"\n  \"cases\": {", "rows", "    ", [&](const Line& line) { cases.for_each_row(line); }},
      {"\n  \"variants\": []", "variants", "  ", all_of(variants)},
  };
  std::size_t done = 0;
  std::string piece;
  for (const Splice& s : splices) {
    const std::string empty = "\n" + s.indent + "\"" + s.key + "\": []";
    const std::size_t at = empty_list_at(text, s.anchor, s.key, s.indent, done);
    sink(std::string_view(text).substr(done, at - done));
    sink(std::string_view(empty).substr(0, empty.size() - 1));  // up to the "]"
    bool first = true;
    s.each([&](const json& element) {
      piece = (first ? "\n" : ",\n") + s.indent + "  ";
      first = false;
      append_line(piece, element);
      sink(piece);
    });
    sink(first ? "]" : "\n" + s.indent + "]");
    done = at + empty.size();
  }
  sink(std::string_view(text).substr(done));
  sink("\n");
}

void dump_full_report(const json& report, const CaseStore& cases, const TextSink& sink) {
  const std::string text = report.dump(2);
  const std::string empty = "\n  \"cases\": []";  // the root's key: two spaces in
  const std::size_t at = empty_list_at(text, empty, "cases", "  ", 0);
  sink(std::string_view(text).substr(0, at + empty.size() - 1));  // up to the "]"
  // Each case as dump(2) writes an element of the root's list: its lines four spaces in.
  bool first = true;
  std::string piece;
  for (const CaseRecord& c : cases) {
    piece = first ? "\n    " : ",\n    ";
    first = false;
    for (const char ch : c.to_json().dump(2)) {
      piece += ch;
      if (ch == '\n') {  // a string's newline is written escaped: every raw one is a line's end
        piece += "    ";
      }
    }
    sink(piece);
  }
  sink(first ? "]" : "\n  ]");
  sink(std::string_view(text).substr(at + empty.size()));
  sink("\n");
}

std::string dump_compact_report(json report, const CompactCases& cases) {
  std::string out;
  dump_compact_report(std::move(report), cases, [&](std::string_view piece) { out.append(piece); });
  return out;
}

bool is_compact(const json& cases) {
  return cases.is_object() && cases.contains("detail") && cases["detail"].is_string() &&
         cases["detail"].get<std::string>() == "compact";
}

struct CompactTable::State {
  json table;  ///< the table without its rows
  std::map<std::string, std::size_t> col;
  json constants;
  json groups;  ///< {variant, static_findings, attribution, axes[, amplification]} each
  std::vector<AxisValues> group_axes;
};

CompactTable::~CompactTable() = default;
CompactTable::CompactTable(CompactTable&&) noexcept = default;

CompactTable::CompactTable(const json& header) : m(std::make_unique<State>()) {
  auto bad = [](const std::string& where, const std::string& what) { return InputError("", "/cases/" + where, what); };
  if (!is_compact(header)) {
    throw bad("detail", "not a compact case table");
  }
  for (const char* key : {"columns", "groups", "tolerances"}) {
    if (!header.contains(key) || !header[key].is_array()) {
      throw bad(key, "missing or not an array");
    }
  }
  if (header.contains("rows") && !header["rows"].is_array()) {
    throw bad("rows", "missing or not an array");
  }
  m->table = json::object();
  for (const auto& [key, value] : header.items()) {
    if (key != "rows") {
      m->table[key] = value;
    }
  }
  const json& table = m->table;
  for (std::size_t i = 0; i < table["columns"].size(); ++i) {
    if (!table["columns"][i].is_string()) {
      throw bad(fmt::format("columns/{}", i), "not a name");
    }
    m->col[table["columns"][i].get<std::string>()] = i;
  }
  m->constants = table.contains("constants") ? table["constants"] : json::object();
  if (!m->constants.is_object()) {
    throw bad("constants", "not an object");
  }
  for (const auto& [name, value] : m->constants.items()) {
    if (m->col.count(name) > 0) {
      throw bad("constants/" + name, "also a column");
    }
  }
  for (const json& name : columns()) {
    if (m->col.count(name.get<std::string>()) == 0 && !m->constants.contains(name.get<std::string>()) &&
        !contains(k_columns_since_4_1, name.get<std::string>())) {
      throw bad("columns", fmt::format("no column or constant \"{}\"", name.get<std::string>()));
    }
  }
  if (!table.contains("group_columns") || !table["group_columns"].is_array() || table["group_columns"].size() < 3) {
    throw bad("group_columns", "missing, or fewer than variant, static_findings and attribution");
  }
  // The groups back as objects: {variant, static_findings, attribution, axes}.
  const json& group_columns = table["group_columns"];
  m->groups = json::array();
  for (std::size_t g = 0; g < table["groups"].size(); ++g) {
    const json& row = table["groups"][g];
    if (!row.is_array() || row.size() != group_columns.size()) {
      throw bad(fmt::format("groups/{}", g), "not a row of group_columns' length");
    }
    json group = {{"variant", row[0]}, {"static_findings", row[1]}, {"attribution", row[2]}, {"axes", json::object()}};
    for (std::size_t i = 3; i < row.size(); ++i) {
      if (!group_columns[i].is_string()) {
        throw bad(fmt::format("group_columns/{}", i), "not a name");
      }
      if (row[i].is_null()) {
        continue;
      }
      if (group_columns[i].get<std::string>() == k_amplification_column) {
        group["amplification"] = row[i];
      } else {
        group["axes"][group_columns[i].get<std::string>()] = row[i];
      }
    }
    m->groups.push_back(std::move(group));
  }
  // Each group's axes typed once; its cases copy them and add their shape.
  m->group_axes.reserve(m->groups.size());
  for (const json& group : m->groups) {
    m->group_axes.push_back(AxisValues::from_json(group.at("axes")).shared());
  }
}

namespace {

/// A cell of the wrong shape, at its pointer (the document's reader adds the file).
InputError bad_cell(const std::string& where, const std::string& what) { return InputError("", "/cases/" + where, what); }

/// The file a cell's view names: none (the document's reader adds it).
const std::string& no_file() {
  static const std::string k_none;
  return k_none;
}

/// Row `r`'s cells by column name: its own, else the table's constant, else absent (a
/// column added since the file was written).
class RowCells {
 public:
  RowCells(const json& row, std::size_t r, const std::map<std::string, std::size_t>& col, const json& constants)
      : m_row(row), m_r(r), m_col(col), m_constants(constants) {}

  [[nodiscard]] const json& at(const char* name) const {
    static const json k_absent;
    if (const auto it = m_col.find(name); it != m_col.end()) {
      return m_row[it->second];
    }
    const auto constant = m_constants.find(name);
    return constant != m_constants.end() ? *constant : k_absent;
  }
  [[nodiscard]] std::string where(const char* name) const { return fmt::format("rows/{}/{}", m_r, name); }
  /// A cell, read with its type and range checked.
  [[nodiscard]] JsonIn cell(const char* name) const { return JsonIn(at(name), no_file(), "/cases/" + where(name)); }
  [[nodiscard]] std::string pointer() const { return fmt::format("/cases/rows/{}", m_r); }

 private:
  const json& m_row;
  std::size_t m_r;
  const std::map<std::string, std::size_t>& m_col;
  const json& m_constants;
};

/// What the row's group gives every case of it: the variant, its static findings and
/// their attribution, the amplification.
void read_group(const json& group, std::size_t g, CaseRecord& c) {
  const JsonIn group_in(group, no_file(), fmt::format("/cases/groups/{}", g));
  if (const auto v = group_in.find("variant")) {
    c.variant = v->string();
  }
  if (const auto v = group_in.find("static_findings")) {
    c.static_findings = v->whole<int>(0);
  }
  if (const auto v = group_in.find("attribution")) {
    c.attribution = v->string();
  }
  if (group.contains("amplification")) {
    c.amplification = AmplificationRecord::from_json(group_in.at("amplification"));
  }
}

/// The verdict, the GPU, the runs and the reason (a LATENT case's, when the row drops
/// it, made again from its findings).
void read_outcome(const RowCells& cells, CaseRecord& c) {
  const std::optional<Verdict> v = parse_verdict(cells.cell("verdict").string());
  if (!v) {
    throw bad_cell(cells.where("verdict"), cells.at("verdict").dump() + " is not a verdict");
  }
  c.verdict = *v;
  if (!cells.at("device").is_null()) {
    c.device = cells.cell("device").whole<int>(0, k_max_device);
  }
  c.runs = cells.cell("runs").whole<int>(0);
  c.failed_runs = cells.cell("failed_runs").whole<int>(0, c.runs);
  if (!cells.at("reason").is_null()) {
    c.reason = cells.cell("reason").string();
  } else if (c.verdict == Verdict::latent && c.static_findings) {
    c.reason = latent_reason(*c.static_findings, c.runs) + attribution_note(c.attribution.value_or(""));
  }
}

/// The metrics through their one reader (model/metrics_json.hpp), from the cells of
/// their columns and the table's tolerance pairs; nullopt for a case that did not run.
std::optional<CompareMetrics> row_metrics(const RowCells& cells, const json& tolerances) {
  if (cells.at("elements").is_null()) {
    return std::nullopt;
  }
  json metrics = json::object();
  for (const std::string_view name : metric_columns()) {
    if (!contains(k_columns_since_4_1, name) || !cells.at(std::string(name).c_str()).is_null()) {
      metrics[std::string(name)] = cells.at(std::string(name).c_str());
    }
  }
  if (!cells.at("tolerance").is_null()) {
    const std::size_t t = cells.cell("tolerance").whole<std::size_t>(0, k_max_count);
    if (t >= tolerances.size() || !tolerances[t].is_array() || tolerances[t].size() != 2) {
      throw bad_cell(cells.where("tolerance"), fmt::format("{} is not a tolerance", t));
    }
    metrics["atol"] = tolerances[t][0];
    metrics["rtol"] = tolerances[t][1];
  }
  return metrics_from_json(JsonIn(metrics, no_file(), cells.pointer()));
}

/// The timing through its one reader, from its columns; nullopt when none was measured.
std::optional<CaseTiming> row_timing(const RowCells& cells) {
  if (cells.at("kernel_ms").is_null() && cells.at("reference_ms").is_null() && cells.at("bytes").is_null()) {
    return std::nullopt;
  }
  json timing = json::object();
  for (const std::string_view t : timing_columns()) {
    timing[std::string(t)] = cells.at(std::string(t).c_str());
  }
  return timing_from_json(JsonIn(timing, no_file(), cells.pointer()));
}

}  // namespace

CaseRecord CompactTable::row(const json& row, std::size_t r) const {
  const json& table = m->table;
  const json& groups = m->groups;
  if (!row.is_array() || row.size() != table["columns"].size()) {
    throw bad_cell(fmt::format("rows/{}", r), "not a row of the columns' length");
  }
  const RowCells cells(row, r, m->col, m->constants);
  try {
    CaseRecord c;
    c.index = cells.cell("index").whole<std::size_t>(0, k_max_count);
    c.id = cells.cell("id").string();
    const std::size_t g = cells.cell("group").whole<std::size_t>(0, k_max_count);
    if (g >= groups.size() || !groups[g].is_object()) {
      throw bad_cell(cells.where("group"), fmt::format("{} is not a group", g));
    }
    c.axes = m->group_axes[g];
    for (const char* a : k_shape_axes) {
      if (!cells.at(a).is_null()) {
        c.axes.set(a, cells.at(a));
      }
    }
    read_group(groups[g], g, c);
    read_outcome(cells, c);
    c.metrics = row_metrics(cells, table["tolerances"]);
    c.timing = row_timing(cells);
    return c;
  } catch (const json::exception& e) {
    throw bad_cell(fmt::format("rows/{}", r), fmt::format("a cell of the wrong type ({})", e.what()));
  }
}

std::vector<CaseRecord> expand_cases(const json& table) {
  const CompactTable header(table);
  if (!table.contains("rows") || !table["rows"].is_array()) {
    throw InputError("", "/cases/rows", "missing or not an array");
  }
  std::vector<CaseRecord> out;
  out.reserve(table["rows"].size());
  for (std::size_t r = 0; r < table["rows"].size(); ++r) {
    out.push_back(header.row(table["rows"][r], r));
  }
  return out;
}

}  // namespace lp::report
