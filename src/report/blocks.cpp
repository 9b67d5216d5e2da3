#include "report/blocks.hpp"

#include "report/environment.hpp"

#include <nlohmann/json.hpp>

#include "util/json_out.hpp"

namespace lp::report {

using nlohmann::json;

namespace {

/// A non-negative real (an atol or rtol).
double non_negative(const JsonIn& j) {
  const double v = j.number();
  if (v < 0.0) {
    j.fail("expected a number >= 0, got " + json_preview(j.json()));
  }
  return v;
}

template <class T>
std::vector<T> records_of(const JsonIn& list) {
  std::vector<T> out;
  for (const JsonIn& item : list.items()) {
    out.push_back(T::from_json(item));
  }
  return out;
}

template <class T>
json list_json(const std::vector<T>& records) {
  json out = json::array();
  for (const T& r : records) {
    out.push_back(r.to_json());
  }
  return out;
}

}  // namespace

json KernelSetRecord::to_json() const {
  return {{"triton_version", triton_version},
          {"origin", origin},
          {"variants", variants},
          {"ptxas", ptxas.json_text().value()},
          {"ptxas_options", ptxas_options}};
}

JsonText KernelSetRecord::to_json_text() const { return JsonText::of(to_json()); }

KernelSetRecord KernelSetRecord::from_json(const JsonIn& j) {
  KernelSetRecord k;
  k.triton_version = j.at("triton_version").string();
  k.origin = j.at("origin").string();
  k.variants = j.at("variants").count();
  k.ptxas = Carried<ReportedPtxas>::read(j.at("ptxas"));
  k.ptxas_options = j.at("ptxas_options").strings();
  return k;
}

json PlanRecord::to_json() const {
  json j = {{"cases", cases}, {"combinations", combinations}};
  if (excluded_by_rule) {
    j["excluded_by_rule"] = *excluded_by_rule;
  }
  if (duplicates) {
    j["duplicates"] = *duplicates;
  }
  if (!not_applicable.empty()) {
    j["not_applicable"] = plan::not_applicable_json(not_applicable);
  }
  if (!not_swept.empty()) {
    j["not_swept"] = plan::not_swept_json(not_swept);
  }
  if (only_cases) {
    j["only_cases"] = *only_cases;
  }
  return j;
}

PlanRecord PlanRecord::from_json(const JsonIn& j) {
  PlanRecord p;
  p.cases = j.at("cases").count();
  p.combinations = j.at("combinations").count();
  if (const auto v = j.find("excluded_by_rule")) {
    p.excluded_by_rule.emplace();
    for (const JsonIn& n : v->items()) {
      p.excluded_by_rule->push_back(n.count());
    }
  }
  if (const auto v = j.find("duplicates")) {
    p.duplicates = v->count();
  }
  if (const auto v = j.find("not_applicable")) {
    for (const JsonIn& d : v->items()) {
      p.not_applicable.push_back({d.at("reason").string(), d.at("count").count()});
    }
  }
  if (const auto v = j.find("not_swept")) {
    for (const JsonIn& n : v->items()) {
      p.not_swept.push_back({n.at("projection").string(), n.at("why").string()});
    }
  }
  if (const auto v = j.find("only_cases")) {
    p.only_cases = v->strings();
  }
  return p;
}

json shard_to_json(const ShardRecord& s) {
  return {{"index", s.index}, {"count", s.count}, {"plan_sha256", s.plan_sha256}, {"plan_cases", s.plan_cases}};
}

ShardRecord shard_from_json(const JsonIn& j) {
  ShardRecord s;
  s.count = j.at("count").whole<std::size_t>(1, k_max_count);
  // An index is below its count: shard 2 of 2 is no shard of any plan.
  s.index = j.at("index").whole<std::size_t>(0, s.count - 1);
  s.plan_sha256 = j.at("plan_sha256").string();
  s.plan_cases = j.at("plan_cases").count();
  return s;
}

json DeviceRecord::to_json() const { return {{"device", device}, {"cases", cases}, {"retired", null_if_absent(retired)}}; }

DeviceRecord DeviceRecord::from_json(const JsonIn& j) {
  DeviceRecord d;
  d.device = j.at("device").whole<int>(0, k_max_device);
  d.cases = j.at("cases").count();
  d.retired = j.optional_string("retired");
  return d;
}

json Meta::to_json() const {
  json j = {{"tool", "loraprobe"},
            {"version", version},
            {"git_sha", git_sha},
            {"argv", argv},
            {"started_at", started_at},
            {"config", config.json_text().value()},
            {"config_sha256", config_sha256},
            {"seed", seed},
            {"repeats", repeats},
            {"plan", plan.to_json()}};
  if (finished_at) {
    j["finished_at"] = *finished_at;
  }
  if (kernel_sets) {
    j["kernel_sets"] = list_json(*kernel_sets);
  }
  if (shard) {
    j["shard"] = shard_to_json(*shard);
  }
  if (devices) {
    j["devices"] = list_json(*devices);
  }
  if (!merged.is_null()) {
    j["merged"] = merged.json_text().value();
  }
  if (phases_s) {
    j["phases_s"] = *phases_s;
  }
  if (problems) {
    j["problems"] = *problems;
  }
  return j;
}

Meta Meta::from_json(const JsonIn& j) {
  Meta m;
  if (const std::string tool = j.at("tool").string(); tool != "loraprobe") {
    j.at("tool").fail("\"" + tool + "\" is not loraprobe: not a loraprobe report");
  }
  m.version = j.at("version").string();
  m.git_sha = j.at("git_sha").string();
  m.argv = j.at("argv").strings();
  m.started_at = j.at("started_at").string();
  m.finished_at = j.optional_string("finished_at");
  m.config = Carried<ReportedConfig>::read(j.at("config"));
  m.config_sha256 = j.at("config_sha256").string();
  m.seed = j.at("seed").whole<std::uint64_t>(0);
  m.repeats = j.at("repeats").whole<int>(1, static_cast<int>(plan::k_max_repeats));
  if (const auto v = j.find("kernel_sets")) {
    m.kernel_sets = records_of<KernelSetRecord>(*v);
  }
  m.plan = PlanRecord::from_json(j.at("plan"));
  if (const auto v = j.find("shard")) {
    m.shard = shard_from_json(*v);
  }
  if (const auto v = j.find("devices")) {
    m.devices = records_of<DeviceRecord>(*v);
  }
  m.merged = Carried<MergedRecord>::read_member(j, "merged");
  if (const auto v = j.find("phases_s")) {
    m.phases_s.emplace();
    for (const auto& [name, seconds] : v->members()) {
      (*m.phases_s)[name] = non_negative(seconds);
    }
  }
  if (const auto v = j.find("problems")) {
    m.problems = v->count();
  }
  return m;
}

JsonText MergedRecord::to_json_text() const {
  json list = json::array();
  for (const MergedPart& p : parts) {
    list.push_back({{"path", p.path},
                    {"kind", p.kind},
                    {"shard", shard_to_json(p.shard)},
                    {"cases", p.cases},
                    {"environment", p.environment ? p.environment->to_json() : json()},
                    {"controls", p.controls ? p.controls->to_json() : json()}});
  }
  return JsonText::of({{"parts", std::move(list)},
                       {"missing_shards", missing_shards},
                       {"short_parts", short_parts},
                       {"not_the_plan", null_if_absent(not_the_plan)},
                       {"incomplete", incomplete}});
}

MergedRecord MergedRecord::from_json(const JsonIn& j) {
  MergedRecord m;
  for (const JsonIn& p : j.at("parts").items()) {
    MergedPart part;
    part.path = p.at("path").string();
    part.kind = p.at("kind").string();
    part.shard = shard_from_json(p.at("shard"));
    part.cases = p.at("cases").count();
    if (const auto e = p.find("environment")) {
      part.environment = Environment::from_json(*e);
    }
    if (const auto c = p.find("controls")) {
      part.controls = Controls::from_json(*c);
    }
    m.parts.push_back(std::move(part));
  }
  if (const auto v = j.find("missing_shards")) {
    for (const JsonIn& n : v->items()) {
      m.missing_shards.push_back(n.count());
    }
  }
  if (const auto v = j.find("short_parts")) {
    m.short_parts = v->strings();
  }
  m.not_the_plan = j.optional_string("not_the_plan");
  if (const auto v = j.find("incomplete")) {
    m.incomplete = v->boolean();
  }
  return m;
}

json HostRecord::to_json() const {
  return {{"hostname", hostname}, {"os", os}, {"kernel", kernel}, {"machine", machine}, {"cpus", cpus}};
}

JsonText HostRecord::to_json_text() const { return JsonText::of(to_json()); }

json Environment::to_json() const {
  json list = json::array();
  for (const Carried<ReportedCompiler>& c : compilers) {
    list.push_back(c.json_text().value());
  }
  json j = {{"host", host.json_text().value()},
            {"toolkit", toolkit.json_text().value()},
            {"compilers", std::move(list)},
            {"gpu", gpu.json_text().value()}};
  if (kernel_sets) {
    j["kernel_sets"] = list_json(*kernel_sets);
  }
  if (gpus) {
    json all = json::array();
    for (const Carried<ReportedGpu>& g : *gpus) {
      all.push_back(g.json_text().value());
    }
    j["gpus"] = std::move(all);
  }
  if (no_gpu_reason) {
    j["no_gpu_reason"] = *no_gpu_reason;
  }
  if (jit_cache_disabled) {
    j["jit_cache_disabled"] = *jit_cache_disabled;
  }
  if (module_loading) {
    j["module_loading"] = *module_loading;
  }
  if (inspection_cache) {
    j["inspection_cache"] = inspection_cache->json_text().value();
  }
  return j;
}

Environment Environment::from_json(const JsonIn& j) {
  Environment e;
  // host, toolkit and each compiler are objects (null is none of them).
  (void)j.at("host").object();
  e.host = Carried<ReportedHost>::read(j.at("host"));
  (void)j.at("toolkit").object();
  e.toolkit = Carried<ReportedToolkit>::read(j.at("toolkit"));
  for (const JsonIn& c : j.at("compilers").items()) {
    (void)c.object();
    e.compilers.push_back(Carried<ReportedCompiler>::read(c));
  }
  if (const auto v = j.find("kernel_sets")) {
    e.kernel_sets = records_of<KernelSetRecord>(*v);
  }
  e.gpu = Carried<ReportedGpu>::read_member(j, "gpu");
  if (const auto v = j.find("gpus")) {
    e.gpus.emplace();
    for (const JsonIn& g : v->items()) {
      e.gpus->push_back(Carried<ReportedGpu>::read(g));
    }
  }
  e.no_gpu_reason = j.optional_string("no_gpu_reason");
  if (const auto v = j.find("jit_cache_disabled")) {
    e.jit_cache_disabled = v->boolean();
  }
  e.module_loading = j.optional_string("module_loading");
  if (j.json().contains("inspection_cache")) {
    e.inspection_cache = Carried<ReportedCache>::read_member(j, "inspection_cache");
  }
  return e;
}

json VariantRecord::to_json() const {
  json j = {{"variant", variant},
            {"triton", triton},
            {"compiler", compiler},
            {"compile", compile.is_null() ? json::object() : compile.json_text().value()},
            {"compile_error", null_if_absent(compile_error)},
            {"cubin_sha256", null_if_absent(cubin_sha256)},
            {"static_findings", static_findings ? json(*static_findings) : json()},
            {"ptx_findings", ptx_findings ? json(*ptx_findings) : json()},
            {"attribution", null_if_absent(attribution)},
            {"sass", sass.json_text().value()},
            {"sass_error", null_if_absent(sass_error)}};
  if (case_verdicts) {
    json verdicts = json::object();
    for (const auto& [verdict, n] : *case_verdicts) {
      verdicts[verdict] = n;
    }
    j["case_verdicts"] = std::move(verdicts);
  }
  if (amplify) {
    j["amplify"] = *amplify;
  }
  return j;
}

VariantRecord VariantRecord::from_json(const JsonIn& j) {
  VariantRecord v;
  v.variant = j.at("variant").string();
  v.triton = j.at("triton").string();
  v.compiler = j.at("compiler").string();
  if (const auto a = j.find("amplify")) {
    v.amplify = a->whole<int>(1, k_max_amplify);
  }
  // A variant without a build record is written with {} (an image no run built).
  if (const auto c = j.find("compile"); c && !(c->object().empty())) {
    v.compile = Carried<compile::BuildRecord>::read(*c);
  }
  v.compile_error = j.optional_string("compile_error");
  v.cubin_sha256 = j.optional_string("cubin_sha256");
  if (const auto n = j.find("static_findings")) {
    v.static_findings = n->whole<int>(0);
  }
  if (const auto n = j.find("ptx_findings")) {
    v.ptx_findings = n->whole<int>(0);
  }
  v.attribution = j.optional_string("attribution");
  v.sass = Carried<ReportedSass>::read_member(j, "sass");
  v.sass_error = j.optional_string("sass_error");
  if (const auto verdicts = j.find("case_verdicts")) {
    v.case_verdicts.emplace();
    for (const auto& [verdict, n] : verdicts->members()) {
      (*v.case_verdicts)[verdict] = n.count();
    }
  }
  return v;
}

json RaceRecord::to_json() const {
  return {{"ran", ran},
          {"compiler", compiler},
          {"static_findings", static_findings ? json(*static_findings) : json()},
          {"result", result.json_text().value()},
          {"shows", shows ? json(*shows) : json()},
          {"summary", summary}};
}

RaceRecord RaceRecord::from_json(const JsonIn& j) {
  RaceRecord r;
  r.ran = j.at("ran").boolean();
  r.compiler = j.at("compiler").string();
  if (const auto v = j.find("static_findings")) {
    r.static_findings = v->count();
  }
  r.result = Carried<RaceTally>::read_member(j, "result");
  if (const auto v = j.find("shows")) {
    r.shows = v->boolean();
  }
  r.summary = j.at("summary").string();
  return r;
}

json SetControlsRecord::to_json() const {
  json j = {{"triton", triton},
            {"valid", valid},
            {"positive", positive ? positive->to_json() : json()},
            {"negative", negative ? negative->to_json() : json()}};
  if (reason) {
    j["reason"] = *reason;
  }
  return j;
}

SetControlsRecord SetControlsRecord::from_json(const JsonIn& j) {
  SetControlsRecord s;
  s.triton = j.at("triton").string();
  s.valid = j.at("valid").boolean();
  if (const auto v = j.find("positive")) {
    s.positive = CaseRecord::from_json(*v);
  }
  if (const auto v = j.find("negative")) {
    s.negative = CaseRecord::from_json(*v);
  }
  s.reason = j.optional_string("reason");
  return s;
}

json AmplifiedControlRecord::to_json() const {
  json j = {{"triton", triton}, {"role", role}, {"amplify", amplify}, {"valid", valid}, {"record", record.to_json()}};
  if (reason) {
    j["reason"] = *reason;
  }
  return j;
}

AmplifiedControlRecord AmplifiedControlRecord::from_json(const JsonIn& j) {
  AmplifiedControlRecord a;
  a.triton = j.at("triton").string();
  a.role = j.at("role").string();
  a.amplify = read_amplify(j);
  a.valid = j.at("valid").boolean();
  a.reason = j.optional_string("reason");
  a.record = CaseRecord::from_json(j.at("record"));
  return a;
}

json Controls::to_json() const {
  json j = {{"ran", ran}, {"valid", valid ? json(*valid) : json()}};
  if (sets) {
    j["sets"] = list_json(*sets);
  }
  if (race) {
    j["race"] = race->to_json();
  }
  if (amplified) {
    j["amplified"] = list_json(*amplified);
  }
  if (amplified_notes) {
    j["amplified_notes"] = *amplified_notes;
  }
  if (reason) {
    j["reason"] = *reason;
  }
  return j;
}

Controls Controls::from_json(const JsonIn& j) {
  Controls c;
  c.ran = j.at("ran").boolean();
  if (const auto v = j.find("valid")) {
    c.valid = v->boolean();
  }
  if (const auto v = j.find("sets")) {
    c.sets = records_of<SetControlsRecord>(*v);
  }
  if (const auto v = j.find("race")) {
    c.race = RaceRecord::from_json(*v);
  }
  if (const auto v = j.find("amplified")) {
    c.amplified = records_of<AmplifiedControlRecord>(*v);
  }
  if (const auto v = j.find("amplified_notes")) {
    c.amplified_notes = v->strings();
  }
  c.reason = j.optional_string("reason");
  return c;
}

json Tolerances::to_json() const {
  json rows = json::array();
  for (const ToleranceTableRow& r : table) {
    json row = {{"op", r.op}, {"output_dtype", r.output_dtype}, {"k", r.k}, {"atol", r.atol}, {"rtol", r.rtol}};
    if (r.add_inputs) {
      row["add_inputs"] = *r.add_inputs;
    }
    if (r.hidden_in) {
      row["hidden_in"] = *r.hidden_in;
    }
    if (r.why) {
      row["why"] = *r.why;
    }
    rows.push_back(std::move(row));
  }
  json by_dtype = json::object();
  for (const auto& [dtype, o] : overrides) {
    by_dtype[dtype] = {{"atol", o.atol}, {"rtol", o.rtol}, {"origin", o.origin}};
  }
  return {{"model", model}, {"table", std::move(rows)}, {"overrides", std::move(by_dtype)}};
}

Tolerances Tolerances::from_json(const JsonIn& j) {
  Tolerances t;
  t.model = j.at("model").string();
  for (const JsonIn& r : j.at("table").items()) {
    ToleranceTableRow row;
    row.op = r.at("op").string();
    row.output_dtype = r.at("output_dtype").string();
    row.k = r.at("k").integer(0);
    if (const auto v = r.find("add_inputs")) {
      row.add_inputs = v->boolean();
    }
    if (const auto v = r.find("hidden_in")) {
      row.hidden_in = v->integer(0);
    }
    row.atol = non_negative(r.at("atol"));
    row.rtol = non_negative(r.at("rtol"));
    row.why = r.optional_string("why");
    t.table.push_back(std::move(row));
  }
  for (const auto& [dtype, o] : j.at("overrides").members()) {
    t.overrides[dtype] = {non_negative(o.at("atol")), non_negative(o.at("rtol")), o.at("origin").string()};
  }
  return t;
}

namespace {

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(); }

std::optional<double> optional_non_negative(const JsonIn& j, const char* key) {
  if (const auto v = j.find(key)) {
    return non_negative(*v);
  }
  return std::nullopt;
}

}  // namespace

json RemedyRecord::to_json() const {
  return {{"remedy", remedy},
          {"why", why},
          {"case", case_id},
          {"verdict", to_string(verdict)},
          {"static_findings", static_findings ? json(*static_findings) : json()},
          {"kernel_ms", optional_number(kernel_ms)},
          {"cost", optional_number(cost)},
          {"in_plan", in_plan},
          {"reason", null_if_absent(reason)}};
}

RemedyRecord RemedyRecord::from_json(const JsonIn& j) {
  RemedyRecord r;
  r.remedy = j.at("remedy").string();
  if (const auto v = j.find("why")) {
    r.why = v->string();
  }
  r.case_id = j.at("case").string();
  r.verdict = read_verdict(j.at("verdict"));
  if (const auto v = j.find("static_findings")) {
    r.static_findings = v->whole<int>(0);
  }
  r.kernel_ms = optional_non_negative(j, "kernel_ms");
  r.cost = optional_non_negative(j, "cost");
  r.in_plan = j.at("in_plan").boolean();
  r.reason = j.optional_string("reason");
  return r;
}

json HazardRemedies::to_json() const {
  return {{"configuration", configuration}, {"case", case_id},
          {"tokens", tokens},               {"verdict", to_string(verdict)},
          {"kernel_ms", optional_number(kernel_ms)}, {"remedies", list_json(remedies)}};
}

HazardRemedies HazardRemedies::from_json(const JsonIn& j) {
  HazardRemedies h;
  h.configuration = j.at("configuration").string();
  h.case_id = j.at("case").string();
  h.tokens = j.at("tokens").integer(0);
  h.verdict = read_verdict(j.at("verdict"));
  h.kernel_ms = optional_non_negative(j, "kernel_ms");
  h.remedies = records_of<RemedyRecord>(j.at("remedies"));
  return h;
}

json Remedies::to_json() const { return {{"hazards", list_json(hazards)}, {"notes", notes}}; }

Remedies Remedies::from_json(const JsonIn& j) {
  Remedies r;
  r.hazards = records_of<HazardRemedies>(j.at("hazards"));
  r.notes = j.at("notes").strings();
  return r;
}

}  // namespace lp::report
