#include "report/case_record.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "model/metrics_json.hpp"
#include "util/json_out.hpp"

namespace lp::report {

using nlohmann::json;

Verdict read_verdict(const JsonIn& j) {
  const std::string text = j.string();
  const std::optional<Verdict> v = parse_verdict(text);
  if (!v) {
    j.fail(fmt::format("\"{}\" is not a verdict", text));
  }
  return *v;
}

int read_amplify(const JsonIn& j) {
  const std::optional<JsonIn> before_5 = j.find("amplify") ? std::nullopt : j.find("pairs");
  return (before_5 ? *before_5 : j.at("amplify")).whole<int>(1, k_max_amplify);
}

json AmplificationRecord::to_json() const {
  return {{"amplify", amplify},
          {"sites", sites},
          {"pending_sites", pending_sites},
          {"unamplified_findings", unamplified_findings ? json(*unamplified_findings) : json()},
          {"serialised", null_if_empty(serialised)},
          {"void_reason", null_if_empty(void_reason)}};
}

AmplificationRecord AmplificationRecord::from_json(const JsonIn& j) {
  AmplificationRecord a;
  a.amplify = read_amplify(j);
  a.sites = j.at("sites").whole<std::size_t>(0, k_max_count);
  a.pending_sites = j.at("pending_sites").whole<std::size_t>(0, a.sites);
  if (const auto v = j.at("unamplified_findings"); !v.is_null()) {
    a.unamplified_findings = v.whole<int>(0);
  }
  if (const auto v = j.find("serialised")) {
    a.serialised = v->string();
  }
  if (const auto v = j.find("void_reason")) {
    a.void_reason = v->string();
  }
  return a;
}

json CaseRecord::to_json() const {
  json j = {{"index", index},
            {"id", id},
            {"axes", axes.to_json()},
            {"variant", variant ? json(*variant) : json()},
            {"verdict", to_string(verdict)},
            {"reason", null_if_empty(reason)},
            {"runs", runs},
            {"failed_runs", failed_runs},
            {"metrics", metrics ? json(*metrics) : json()},
            {"timing", timing ? json(*timing) : json()},
            {"static_findings", static_findings ? json(*static_findings) : json()},
            {"attribution", attribution ? json(*attribution) : json()},
            {"device", device ? json(*device) : json()}};
  if (amplification) {
    j["amplification"] = amplification->to_json();
  }
  if (runs > 0) {
    j["failure_rate"] = static_cast<double>(failed_runs) / runs;
    // Rule of three: with 0 failures in n runs the 95% upper bound on the rate is 3/n.
    j["failure_rate_upper_bound"] = failed_runs == 0 ? json(3.0 / runs) : json();
  } else {
    j["failure_rate"] = nullptr;
    j["failure_rate_upper_bound"] = nullptr;
  }
  return j;
}

CaseRecord CaseRecord::from_json(const JsonIn& j) {
  CaseRecord c;
  c.index = j.at("index").whole<std::size_t>(0, k_max_count);
  c.id = j.at("id").string();
  c.axes = AxisValues::from_json(j.at("axes").object());
  if (const auto v = j.find("variant")) {
    c.variant = v->string();
  }
  c.verdict = read_verdict(j.at("verdict"));
  if (const auto v = j.find("reason")) {
    c.reason = v->string();
  }
  c.runs = j.at("runs").whole<int>(0);
  c.failed_runs = j.at("failed_runs").whole<int>(0, c.runs);
  if (const auto v = j.at("metrics"); !v.is_null()) {
    c.metrics = metrics_from_json(v);
  }
  if (const auto v = j.at("timing"); !v.is_null()) {
    c.timing = timing_from_json(v);
  }
  if (const auto v = j.at("static_findings"); !v.is_null()) {
    c.static_findings = v.whole<int>(0);
  }
  // Journals of schema 1.0.0 have no attribution.
  if (const auto v = j.find("attribution")) {
    c.attribution = v->string();
  }
  // Reports before 4.0.0 have no device.
  if (const auto v = j.find("device")) {
    c.device = v->whole<int>(0, k_max_device);
  }
  // Since 4.1.0, and only for amplified cases.
  if (const auto v = j.find("amplification")) {
    c.amplification = AmplificationRecord::from_json(*v);
  }
  return c;
}

CaseRecord CaseRecord::from_json(const json& j) {
  static const std::string k_no_file = "case record";
  return from_json(JsonIn(j, k_no_file));
}

json CaseRecord::to_ref() const {
  return {{"index", index},
          {"id", id},
          {"axes", axes.to_json()},
          {"verdict", to_string(verdict)},
          {"reason", null_if_empty(reason)}};
}

}  // namespace lp::report
