#include "report/records.hpp"

#include "report/blocks.hpp"
#include "report/carried.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "compile/compiler.hpp"

namespace lp::report {

using nlohmann::json;

namespace {

/// j[key], or null when j is no object or lacks it.
const json& member_of(const JsonIn& j, const char* key) {
  static const json k_null;
  const json& v = j.json();
  if (!v.is_object()) {
    return k_null;
  }
  const auto it = v.find(key);
  return it == v.end() ? k_null : *it;
}

/// j[key] when it is a string; absent otherwise (the environment records' rule).
Text text_of(const JsonIn& j, const char* key) {
  const json& v = member_of(j, key);
  return v.is_string() ? Text(v.get<std::string>()) : std::nullopt;
}

/// j[key] when it is a whole number; absent otherwise.
std::optional<std::int64_t> whole_of(const JsonIn& j, const char* key) {
  const json& v = member_of(j, key);
  return v.is_number_integer() ? std::optional<std::int64_t>(v.get<std::int64_t>()) : std::nullopt;
}

/// The member `key` of `j` as text: "" when absent or null; another type is refused.
std::string text_in(const JsonIn& j, const char* key) { return j.optional_string(key).value_or(""); }

/// The member `key` of `j` as a SASS address ("0x" and hex digits): "" when absent or
/// null; anything else is refused.
std::string address_in(const JsonIn& j, const char* key) {
  const std::optional<JsonIn> v = j.find(key);
  if (!v) {
    return "";
  }
  std::string a = v->string();
  if (a.size() < 3 || a.rfind("0x", 0) != 0 || a.find_first_not_of("0123456789abcdef", 2) != std::string::npos) {
    v->fail(fmt::format("expected an address (0x and hex digits), got {}", json_preview(v->json())));
  }
  return a;
}

Text address_field(const JsonIn& j, const char* key) {
  std::string a = address_in(j, key);
  return a.empty() ? std::nullopt : Text(std::move(a));
}

ReportedFinding finding_of(const JsonIn& f) {
  ReportedFinding v;
  v.address = address_in(f, "address");
  v.instruction = text_in(f, "instruction");
  v.access = text_in(f, "access");
  if (const auto registers = f.find("registers")) {
    v.registers = registers->strings();
  }
  if (const auto back = f.find("over_back_edge")) {
    v.over_back_edge = back->boolean();
  }
  if (const auto wgmma = f.find("wgmma")) {
    v.wgmma_address = address_in(*wgmma, "address");
    v.wgmma_instruction = text_in(*wgmma, "instruction");
  }
  if (const auto wait = f.find("wait")) {
    v.has_wait = true;
    v.wait_address = address_in(*wait, "address");
    v.wait_instruction = text_in(*wait, "instruction");
  }
  return v;
}

ReportedEarlyRead early_read_of(const JsonIn& r) {
  const std::optional<JsonIn> wait = r.find("wait");
  return {address_field(r, "address"), r.optional_string("instruction"), r.optional_string("param"),
          wait ? address_field(*wait, "address") : std::nullopt,
          wait ? wait->optional_string("instruction") : std::nullopt};
}

ReportedKernel kernel_of(const JsonIn& kernel) {
  ReportedKernel k;
  const std::optional<JsonIn> findings = kernel.find("findings");
  for (const JsonIn& f : findings ? findings->items() : std::vector<JsonIn>{}) {
    k.findings.push_back(finding_of(f));
    if (!k.first_finding_json) {
      k.first_finding_json = f.json().dump();
    }
  }
  const std::optional<JsonIn> early = kernel.find("early_reads");
  for (const JsonIn& r : early ? early->items() : std::vector<JsonIn>{}) {
    k.early_reads.push_back(early_read_of(r));
    if (!k.first_early_read_json) {
      k.first_early_read_json = r.json().dump();
    }
  }
  return k;
}

}  // namespace

ReportedHost ReportedHost::from_json(const JsonIn& j) {
  return {text_of(j, "hostname"), text_of(j, "os"), text_of(j, "kernel"), text_of(j, "machine"), whole_of(j, "cpus")};
}

ReportedToolkit ReportedToolkit::from_json(const JsonIn& j) {
  return {text_of(j, "version"), text_of(j, "root"), text_of(j, "origin"), text_of(j, "build_version")};
}

ReportedGpu ReportedGpu::from_json(const JsonIn& j) {
  ReportedGpu g;
  g.name = text_of(j, "name");
  g.uuid = text_of(j, "uuid");
  g.compute_capability = text_of(j, "compute_capability");
  g.driver_version = text_of(j, "driver_version");
  g.driver_cuda_version = text_of(j, "driver_cuda_version");
  g.runtime_version = text_of(j, "runtime_version");
  g.cublas_version = text_of(j, "cublas_version");
  g.sm_count = whole_of(j, "sm_count");
  const json& memory = member_of(j, "total_memory_bytes");
  g.total_memory_bytes = memory.is_number() ? memory.get<double>() : 0.0;
  return g;
}

ReportedPtxas ReportedPtxas::from_json(const JsonIn& j) { return {text_of(j, "version"), text_of(j, "sha256")}; }

ReportedCompiler ReportedCompiler::from_json(const JsonIn& j) {
  ReportedCompiler c;
  c.name = text_of(j, "name");
  c.triton = text_of(j, "triton");
  c.version = text_of(j, "version");
  c.error = text_of(j, "error");
  if (const json& ptxas = member_of(j, "ptxas"); ptxas.is_object()) {
    c.ptxas = ReportedPtxas::from_json(JsonIn(ptxas, j.file(), j.pointer() + "/ptxas"));
  }
  c.sha256 = text_of(j, "sha256");
  // Whatever the options hold, each element as its text (a string as itself).
  for (const json& item : member_of(j, "options")) {
    c.options.push_back(item.is_string() ? item.get<std::string>() : item.dump());
  }
  return c;
}

ReportedCache ReportedCache::from_json(const JsonIn& j) {
  const json& enabled = member_of(j, "enabled");
  return {enabled.is_boolean() && enabled.get<bool>(), text_of(j, "root"), whole_of(j, "sass_hits"),
          whole_of(j, "sass_misses")};
}

ReportedConfig ReportedConfig::from_json(const JsonIn& j) { return {text_of(j, "name"), text_of(j, "source")}; }

ReportedSass ReportedSass::from_json(const JsonIn& j) {
  ReportedSass s;
  const std::optional<JsonIn> kernels = j.find("kernels");
  for (const JsonIn& kernel : kernels ? kernels->items() : std::vector<JsonIn>{}) {
    s.kernels.push_back(kernel_of(kernel));
  }
  if (const json& d = member_of(j, "disassembler"); d.is_object()) {
    const JsonIn dis(d, j.file(), j.pointer() + "/disassembler");
    s.disassembler = ReportedDisassembler{text_of(dis, "version"), text_of(dis, "sha256"), text_of(dis, "origin")};
  }
  return s;
}

RaceTally RaceTally::from_json(const JsonIn& j) {
  const auto count = [&](const char* key) -> std::uint64_t {
    const std::optional<JsonIn> v = j.find(key);
    return v ? v->count() : 0;
  };
  RaceTally t;
  t.ctas = count("ctas");
  t.launches = count("launches");
  t.tiles = count("tiles");
  t.late_tiles = count("late_tiles");
  t.late_elements = count("late_elements");
  t.launches_with_late = count("launches_with_late");
  t.unwritten = count("unwritten");
  if (const auto values = j.find("values")) {
    for (const auto& [value, n] : values->members()) {
      t.values[value] = n.count();
    }
  }
  return t;
}

template <class T>
Carried<T>::Carried(JsonText text) : m_text(std::move(text)) {
  static const std::string k_owner = "<record>";
  const json value = m_text.value();
  if (!value.is_null()) {
    m_record = T::from_json(JsonIn(value, k_owner));
  }
}

template <class T>
Carried<T> Carried<T>::read(const JsonIn& j) {
  Carried c;
  if (!j.is_null()) {
    (void)j.object();
    c.m_record = T::from_json(j);
    c.m_text = JsonText::of(j.json());
  }
  return c;
}

template <class T>
Carried<T> Carried<T>::read_member(const JsonIn& parent, const char* key) {
  const std::optional<JsonIn> v = parent.find(key);
  return v ? read(*v) : Carried();
}

template class Carried<ReportedHost>;
template class Carried<ReportedToolkit>;
template class Carried<ReportedGpu>;
template class Carried<ReportedPtxas>;
template class Carried<ReportedCompiler>;
template class Carried<ReportedCache>;
template class Carried<ReportedConfig>;
template class Carried<ReportedSass>;
template class Carried<RaceTally>;
template class Carried<MergedRecord>;
template class Carried<compile::BuildRecord>;

}  // namespace lp::report
