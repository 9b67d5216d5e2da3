// The stack library's one unit with the JSON library: the probe's answer read, and the
// check document (configs/schema/check.schema.json) and the stack record written.

#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "check_schema_version.hpp"
#include "stack/answer.hpp"
#include "stack/probe.hpp"
#include "util/json_bounded.hpp"
#include "util/json_in.hpp"
#include "util/json_out.hpp"
#include "version.hpp"

namespace lp::stack {

namespace {

/// The probe's answer is 3 levels deep; anything deeper is no probe's.
constexpr std::size_t k_probe_depth = 8;

VllmFlag flag_from(const JsonIn& v) {
  VllmFlag f;
  f.value = v.optional_string("value");
  f.on = v.at("on").boolean();
  f.error = v.optional_string("error").value_or("");
  return f;
}

nlohmann::json flag_json(const VllmFlag& f) {
  return {{"value", null_if_absent(f.value)}, {"on", f.on}, {"error", null_if_empty(f.error)}};
}

nlohmann::json ptxas_json(const std::optional<compile::PtxasInfo>& p) { return p ? p->to_json() : nlohmann::json(); }

/// A version as a distribution states it ("2.14.0+cu130"): 1 to 64 printable characters
/// without spaces, so that it cannot break the answer's first line.
std::optional<std::string> version_at(const JsonIn& parent, std::string_view key) {
  std::optional<std::string> v = parent.optional_string(key);
  if (v && (v->empty() || v->size() > 64 ||
            std::any_of(v->begin(), v->end(), [](char c) { return c <= ' ' || c > '~'; }))) {
    parent.at(key).fail(fmt::format("\"{}\" is no version", *v));
  }
  return v;
}

}  // namespace

PythonStack stack_from_probe_json(std::string_view text, const std::string& source) {
  const nlohmann::json doc = parse_json_bounded(text, source, k_probe_depth);
  const JsonIn in(doc, source);
  in.object();
  if (in.at("probe_version").integer(1, 1) != 1) {
    in.at("probe_version").fail("unknown probe version");
  }
  PythonStack s;
  const JsonIn python = in.at("python");
  s.executable = python.at("executable").string();
  s.python_version = version_at(python, "version").value_or("?");
  const JsonIn vllm = in.at("vllm");
  s.vllm_version = version_at(vllm, "version");
  s.vllm_dir = vllm.optional_string("dir");
  s.vllm_ops_dir = vllm.optional_string("lora_ops_dir");
  s.torch_version = version_at(in.at("torch"), "version");
  const JsonIn triton = in.at("triton");
  s.triton_version = version_at(triton, "version");
  s.triton_dir = triton.optional_string("dir");
  for (const auto& [name, value] : in.at("env").members()) {
    if (!value.is_null()) {
      s.env[name] = value.string();
    }
  }
  s.tuned_folder = in.at("env").optional_string("VLLM_TUNED_CONFIG_FOLDER");
  const JsonIn flags = in.at("vllm_flags");
  s.dual_stream = flag_from(flags.at("VLLM_LORA_ENABLE_DUAL_STREAM"));
  s.disable_pdl = flag_from(flags.at("VLLM_LORA_DISABLE_PDL"));
  s.batch_invariant = flag_from(flags.at("VLLM_BATCH_INVARIANT"));
  if (const auto ptxas = in.find("ptxas")) {
    s.ptxas.sm90_path = ptxas->optional_string("sm90_path");
    s.ptxas.knob = ptxas->optional_string("sm90_knob").value_or("TRITON_PTXAS_PATH");
    s.ptxas.error = ptxas->optional_string("error").value_or("");
    const JsonIn bundled = ptxas->at("bundled");
    s.ptxas.bundled_path = bundled.optional_string("ptxas");
    s.ptxas.blackwell_path = bundled.optional_string("ptxas-blackwell");
    if (const auto imported = version_at(*ptxas, "imported_version")) {
      s.triton_version = imported;  // what `import triton` says wins over a distribution's name
    }
  }
  return s;
}

JsonText PythonStack::to_json_text() const {
  nlohmann::json flags = nlohmann::json::object();
  flags["VLLM_LORA_ENABLE_DUAL_STREAM"] = flag_json(dual_stream);
  flags["VLLM_LORA_DISABLE_PDL"] = flag_json(disable_pdl);
  flags["VLLM_BATCH_INVARIANT"] = flag_json(batch_invariant);
  const nlohmann::json j = {
      {"python", python},
      {"executable", executable},
      {"python_version", python_version},
      {"vllm", {{"version", null_if_absent(vllm_version)}, {"dir", null_if_absent(vllm_dir)},
                {"lora_ops_dir", null_if_absent(vllm_ops_dir)}}},
      {"torch", {{"version", null_if_absent(torch_version)}}},
      {"triton", {{"version", null_if_absent(triton_version)}, {"dir", null_if_absent(triton_dir)}}},
      {"env", env},
      {"vllm_flags", flags},
      {"tuned_folder", null_if_absent(tuned_folder)},
      {"use_gdc", use_gdc()},
      {"ptxas", {{"sm90", ptxas_json(ptxas.sm90)}, {"knob", ptxas.knob}, {"overridden", ptxas.overridden},
                 {"bundled", ptxas_json(ptxas.bundled)}, {"bundled_blackwell", ptxas_json(ptxas.bundled_blackwell)},
                 {"error", null_if_empty(ptxas.error)}}}};
  return JsonText::of(j);
}

std::string_view check_schema_version() { return k_check_schema_version; }

JsonText answer_json(const CheckAnswer& a, const std::vector<std::string>& argv) {
  nlohmann::json kernels = nlohmann::json::array();
  for (const KernelAnswer& k : a.kernels) {
    kernels.push_back({{"variant", k.variant}, {"label", k.label}, {"source", k.source}, {"status", k.status},
                       {"findings", k.findings}, {"early_reads", k.early_reads}, {"made_by", null_if_empty(k.made_by)},
                       {"early_made_by", null_if_empty(k.early_made_by)}, {"error", null_if_empty(k.error)},
                       {"run", null_if_empty(k.run)}});
  }
  nlohmann::json remedies = nlohmann::json::array();
  for (const Remedy& r : a.remedies) {
    remedies.push_back({{"id", r.id}, {"fixes", r.fixes}, {"what", r.what}, {"how", r.how},
                        {"status", std::string(to_string(r.status))}, {"evidence", r.evidence}});
  }
  const nlohmann::json j = {
      {"schema_version", k_check_schema_version},
      {"meta", {{"tool", "loraprobe"}, {"command", "check"}, {"version", k_version}, {"git_sha", k_git_sha},
                {"argv", argv}}},
      {"stack", a.stack.to_json_text().value()},
      {"verdict", std::string(to_string(a.verdict))},
      {"headline", a.headline()},
      {"sentence", a.sentence},
      {"exit_code", a.exit_code()},
      {"kernels_source", a.kernels_source},
      {"kernels", kernels},
      {"remedies", remedies},
      {"notes", a.notes},
      {"build_seconds", a.build_seconds},
      {"gpu", a.gpu}};
  return JsonText::of(j);
}

}  // namespace lp::stack
