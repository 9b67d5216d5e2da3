// Deciding check's answer from what the built kernels' SASS showed.

#include "families/family.hpp"
#include "stack/answer.hpp"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

#include "report/verdict.hpp"
#include "util/escape.hpp"
#include "util/release.hpp"

namespace lp::stack {

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::clean: return "clean";
    case Verdict::affected: return "affected";
    case Verdict::cannot_tell: return "cannot_tell";
  }
  return "?";
}

int exit_code_of(Verdict verdict) {
  switch (verdict) {
    case Verdict::clean: return 0;
    case Verdict::affected: return 1;
    case Verdict::cannot_tell: return 3;
  }
  return 3;
}

std::string_view to_string(RemedyStatus status) {
  switch (status) {
    case RemedyStatus::verified: return "verified";
    case RemedyStatus::does_not_fix: return "does_not_fix";
    case RemedyStatus::not_verified: return "not_verified";
  }
  return "?";
}

std::string kernel_label(const kernels::Variant& v) {
  const AxisValues& a = v.axes;
  std::string out = v.op;
  // A kernel that reads x in the weight dtype shows one dtype; the expand its input's and W.
  const KernelFamily* family = family_named(v.op);
  const bool one_dtype = family == nullptr || family->traits().input_is_weight_dtype;
  if (const auto input = a.text("input_dtype"), weight = a.text("weight_dtype"); input && weight && one_dtype) {
    out += fmt::format(" {}", *input);
  } else if (input && weight) {
    out += fmt::format(" {}->{}", *input, *weight);
  } else if (const auto dtype = a.text("dtype")) {
    out += fmt::format(" {}", *dtype);
  }
  if (const auto slices = a.integer("num_slices")) {
    out += fmt::format(", {} slice{}", *slices, *slices == 1 ? "" : "s");
  }
  if (const auto bn = a.integer("block_n")) {
    out += fmt::format(", block_n {}", *bn);
  }
  if (const auto stages = a.integer("num_stages")) {
    out += fmt::format(", {} stage{}", *stages, *stages == 1 ? "" : "s");
  }
  if (a.boolean("gdc") == true) {
    out += ", PDL";
  }
  return out;
}

std::string_view verdict_word(Verdict verdict) {
  switch (verdict) {
    case Verdict::clean: return "CLEAN";
    case Verdict::affected: return "AFFECTED";
    case Verdict::cannot_tell: return "CANNOT TELL";
  }
  return "?";
}

std::string CheckAnswer::headline() const {
  return fmt::format("{}: {}. {}", stack.headline(), verdict_word(verdict), sentence);
}

CheckAnswer cannot_tell(PythonStack stack, std::string why) {
  CheckAnswer a;
  a.stack = std::move(stack);
  a.verdict = Verdict::cannot_tell;
  a.sentence = std::move(why);
  return a;
}

namespace {

/// The inspect results by (variant id, compiler label).
class ResultIndex {
 public:
  explicit ResultIndex(const std::vector<inspect::InspectResult>& results) {
    for (const inspect::InspectResult& r : results) {
      if (r.variant) {
        m_by.emplace(std::make_pair(*r.variant, r.compiler), &r);
      }
    }
  }
  [[nodiscard]] const inspect::InspectResult* find(const std::string& id, const std::string& compiler) const {
    const auto it = m_by.find({id, compiler});
    return it == m_by.end() ? nullptr : it->second;
  }

 private:
  std::map<std::pair<std::string, std::string>, const inspect::InspectResult*> m_by;
};

constexpr std::string_view k_prebuilt = "prebuilt";
constexpr std::string_view k_register_hazard = "wgmma register hazard";
constexpr std::string_view k_early_read = "gdc early read";

KernelAnswer kernel_answer(const kernels::KernelSet& built, const std::string& id, const ResultIndex& index) {
  KernelAnswer k;
  k.variant = id;
  const kernels::Variant* v = built.find(id);
  if (v == nullptr) {
    k.status = "not built";
    k.error = "the generator did not list it";
    return k;
  }
  k.label = kernel_label(*v);
  k.source = v->source;
  if (!v->ok()) {
    k.status = "not built";
    k.error = v->reason;
    return k;
  }
  const inspect::InspectResult* r = index.find(id, std::string(k_prebuilt));
  if (r == nullptr) {
    k.status = "error";
    k.error = "not inspected";
    return k;
  }
  k.findings = r->finding_count;
  k.early_reads = r->early_read_count;
  k.made_by = r->attribution == "none" ? "" : r->attribution;
  k.early_made_by = r->early_read_attribution == "none" ? "" : r->early_read_attribution;
  k.status = std::string(inspect::to_string(r->status));
  k.error = r->error;
  return k;
}

/// Whether every one of `ids` is clean of `problem` under `compiler`; nullopt when one
/// has no result (not built, an error).
std::optional<bool> all_fixed(const std::vector<std::string>& ids, const std::string& compiler,
                              const ResultIndex& index, bool early) {
  for (const std::string& id : ids) {
    const inspect::InspectResult* r = index.find(id, compiler);
    if (r == nullptr || r->status == inspect::StaticOutcome::error ||
        r->status == inspect::StaticOutcome::incompatible) {
      return std::nullopt;
    }
    if ((early ? r->early_read_count : r->finding_count) > 0) {
      return false;
    }
  }
  return true;
}

std::string join_labels(const std::vector<const KernelAnswer*>& kernels) {
  std::vector<std::string> labels;
  for (const KernelAnswer* k : kernels) {
    labels.push_back(k->label);
  }
  return fmt::format("{}", fmt::join(labels, "; "));
}

/// Who made the findings of `kernels`: "the PTX", "ptxas", or both.
std::string made_by_text(const std::vector<const KernelAnswer*>& kernels, bool early) {
  std::set<std::string> who;
  for (const KernelAnswer* k : kernels) {
    who.insert(early ? k->early_made_by : k->made_by);
  }
  std::vector<std::string> words;
  for (const std::string& w : who) {
    words.push_back(w == "ptx" ? "made by the PTX: Triton's fault, no ptxas fixes it"
                    : w == "ptxas" ? "made by ptxas: the PTX is clean"
                                   : "whose fault is not known");
  }
  return fmt::format("{}", fmt::join(words, "; "));
}

}  // namespace

namespace {

/// The ids of the launched kernels among `kernels` that have the problem.
std::vector<std::string> ids_of(const std::vector<const KernelAnswer*>& kernels) {
  std::vector<std::string> ids;
  for (const KernelAnswer* k : kernels) {
    ids.push_back(k->variant);
  }
  return ids;
}

/// The neighbours standing for `remedy` of `launched`; empty when one has none.
std::vector<std::string> neighbours_of(const Selection& s, const std::vector<std::string>& launched,
                                       KernelRemedy remedy) {
  std::vector<std::string> ids;
  for (const std::string& id : launched) {
    const auto it = std::find_if(s.neighbours.begin(), s.neighbours.end(),
                                 [&](const Neighbour& n) { return n.of == id && n.remedy == remedy; });
    if (it == s.neighbours.end()) {
      return {};
    }
    ids.push_back(it->id);
  }
  return ids;
}

Remedy verified_by(Remedy r, std::optional<bool> fixed, const std::string& fixed_text, const std::string& kept_text) {
  if (!fixed) {
    r.status = RemedyStatus::not_verified;
    r.evidence = "not every kernel could be built or inspected with it";
  } else {
    r.status = *fixed ? RemedyStatus::verified : RemedyStatus::does_not_fix;
    r.evidence = *fixed ? fixed_text : kept_text;
  }
  return r;
}

/// The remedies that change the compiler: each ptxas the check compiled with, and a pip one.
void ptxas_remedies(const CheckInputs& in, const std::vector<std::string>& ids, const ResultIndex& index,
                    std::vector<Remedy>& out) {
  const std::string knob = in.stack.ptxas.knob.empty() ? "TRITON_PTXAS_PATH" : in.stack.ptxas.knob;
  std::optional<bool> fixed_by_fixing;  ///< what a ptxas >= report::k_fixing_ptxas made of the PTX, when one ran
  for (const RemedyPtxas& p : in.ptxas) {
    Remedy r;
    r.id = p.origin == "beside Triton's ptxas" ? "ptxas_beside_triton" : "ptxas_installed";
    r.fixes = std::string(k_register_hazard);
    r.what = fmt::format("compile with ptxas {} ({})", p.info.version, p.origin);
    r.how = fmt::format("export {}={}", knob, escape::shell(p.info.path));
    const std::optional<bool> fixed = all_fixed(ids, p.label, index, false);
    out.push_back(verified_by(std::move(r), fixed,
                              fmt::format("the same PTX of {} kernel(s) compiled by it: 0 findings", ids.size()),
                              "the same PTX compiled by it still has the hazard"));
    const std::optional<Release> v = parse_release(p.info.version, ReleaseParts::two_or_three);
    if (fixed && v && *v >= report::k_fixing_ptxas) {
      fixed_by_fixing = fixed_by_fixing.value_or(false) || *fixed;
    }
  }
  Remedy pip;
  pip.id = "ptxas_pip";
  pip.fixes = std::string(k_register_hazard);
  const std::string fixing = report::fixing_ptxas_version();
  pip.what = fmt::format("install ptxas {} or newer from PyPI and point Triton at it", fixing);
  pip.how = fmt::format("pip install \"nvidia-cuda-nvcc=={}.*\" and export {}=<its bin/ptxas>", fixing, knob);
  if (!fixed_by_fixing) {
    pip.status = RemedyStatus::not_verified;
    pip.evidence = fmt::format("no ptxas {} or newer here to compile with (scripts/install_tools.sh, or pip install "
                               "\"loraprobe[ptxas]\", then check again)",
                               fixing);
  } else {
    pip.status = *fixed_by_fixing ? RemedyStatus::verified : RemedyStatus::does_not_fix;
    pip.evidence = fmt::format("a ptxas {} or newer compiled the same PTX {} (above)", fixing,
                               *fixed_by_fixing ? "clean" : "with the hazard: the PTX has it");
  }
  out.push_back(std::move(pip));
}

}  // namespace

namespace {

/// The remedies that change the kernel vLLM launches, verified on the neighbours built
/// with the user's Triton and ptxas.
void kernel_remedies(const CheckInputs& in, const std::vector<std::string>& hazard_ids, const ResultIndex& index,
                     std::vector<Remedy>& out) {
  struct Row {
    KernelRemedy remedy;
    const char* id;
    const char* what;
    const char* how;
  };
  const Row rows[] = {
      {KernelRemedy::input_16bit, "input_16bit", "a bf16 LoRA shrink buffer: the expand reads a 16-bit input from shared memory",
       "a vLLM patch (vllm #47869); no setting selects it"},
      {KernelRemedy::block_n_32, "block_n_32", "the expand at block_n 32 (ptxas serialises its wgmmas)",
       "a tuned expand config with block_n 32 in VLLM_TUNED_CONFIG_FOLDER (vllm #48638)"},
      {KernelRemedy::stages_1, "stages_1", "the expand with one pipeline stage (no wgmma in flight across loop trips)",
       "a tuned expand config with num_stages 1 in VLLM_TUNED_CONFIG_FOLDER"},
  };
  for (const Row& row : rows) {
    const std::vector<std::string> ids = neighbours_of(in.selection, hazard_ids, row.remedy);
    if (ids.empty()) {
      continue;
    }
    Remedy r{row.id, std::string(k_register_hazard), row.what, row.how, RemedyStatus::not_verified, {}};
    out.push_back(verified_by(std::move(r), all_fixed(ids, std::string(k_prebuilt), index, false),
                              fmt::format("built with this Triton and its ptxas: {} kernel(s), 0 findings", ids.size()),
                              "built with this Triton and its ptxas, it still has the hazard"));
  }
}

void upgrade_remedy(const CheckInputs& in, const std::vector<std::string>& hazard_ids, std::vector<Remedy>& out) {
  if (!in.upgrade_triton) {
    return;
  }
  const ResultIndex index(in.upgrade_results);
  Remedy r{"triton_upgrade", std::string(k_register_hazard),
           fmt::format("Triton {} (its PTX copies the wgmma A fragments; its ptxas {})", *in.upgrade_triton,
                       in.upgrade_ptxas),
           fmt::format("pip install \"triton=={}\" (with a torch that allows it)", *in.upgrade_triton),
           RemedyStatus::not_verified, {}};
  out.push_back(verified_by(std::move(r), all_fixed(hazard_ids, std::string(k_prebuilt), index, false),
                            fmt::format("loraprobe's embedded Triton {} kernels of the same configuration(s): 0 findings",
                                        *in.upgrade_triton),
                            fmt::format("loraprobe's embedded Triton {} kernels still have the hazard",
                                        *in.upgrade_triton)));
}

void pdl_remedy(const CheckInputs& in, const std::vector<std::string>& early_ids, const ResultIndex& index,
                std::vector<Remedy>& out) {
  const std::vector<std::string> ids = neighbours_of(in.selection, early_ids, KernelRemedy::pdl_off);
  if (ids.empty()) {
    return;
  }
  Remedy r{"disable_pdl", std::string(k_early_read),
           "no programmatic dependent launch: vLLM then compiles the expand without USE_GDC",
           "export VLLM_LORA_DISABLE_PDL=1 (or unset VLLM_LORA_ENABLE_DUAL_STREAM)", RemedyStatus::not_verified, {}};
  out.push_back(verified_by(std::move(r), all_fixed(ids, std::string(k_prebuilt), index, true),
                            fmt::format("built without USE_GDC: {} kernel(s), no early read", ids.size()),
                            "built without USE_GDC it still reads early"));
}

std::string affected_sentence(const std::vector<const KernelAnswer*>& hazard,
                              const std::vector<const KernelAnswer*>& early) {
  std::vector<std::string> parts;
  if (!hazard.empty()) {
    parts.push_back(fmt::format("vLLM's LoRA kernel(s) {} have the wgmma register hazard ({})", join_labels(hazard),
                                made_by_text(hazard, false)));
  }
  if (!early.empty()) {
    parts.push_back(fmt::format("{} read the shrink's buffer before griddepcontrol.wait (triton #11905; {})",
                                join_labels(early), made_by_text(early, true)));
  }
  return fmt::format("{}.", fmt::join(parts, "; and "));
}

}  // namespace

CheckAnswer decide(const CheckInputs& in) {
  CheckAnswer a;
  a.stack = in.stack;
  a.kernels_source = in.kernels_source;
  const ResultIndex index(in.results);
  for (const std::string& id : in.selection.launched) {
    a.kernels.push_back(kernel_answer(*in.built, id, index));
  }
  std::vector<const KernelAnswer*> hazard, early, unknown;
  for (const KernelAnswer& k : a.kernels) {
    if (k.findings > 0) {
      hazard.push_back(&k);
    }
    if (k.early_reads > 0) {
      early.push_back(&k);
    }
    if (k.status == "error" || k.status == "not built") {
      unknown.push_back(&k);
    }
  }
  for (const std::string& line : in.selection.unavailable) {
    a.notes.push_back(fmt::format("not checked: {}", line));
  }
  for (const KernelAnswer* k : unknown) {
    a.notes.push_back(fmt::format("not checked: {} ({}): {}", k->label, k->variant, k->error));
  }
  if (!hazard.empty() || !early.empty()) {
    a.verdict = Verdict::affected;
    a.sentence = affected_sentence(hazard, early);
    if (!hazard.empty()) {
      const std::vector<std::string> ids = ids_of(hazard);
      ptxas_remedies(in, ids, index, a.remedies);
      upgrade_remedy(in, ids, a.remedies);
      kernel_remedies(in, ids, index, a.remedies);
    }
    if (!early.empty()) {
      pdl_remedy(in, ids_of(early), index, a.remedies);
    }
    return a;
  }
  if (!unknown.empty()) {
    a.verdict = Verdict::cannot_tell;
    a.sentence = unknown.size() == a.kernels.size()
                     ? fmt::format("none of the {} kernels vLLM launches could be built or inspected (the notes say why)",
                                   a.kernels.size())
                     : fmt::format("{} of the {} kernels vLLM launches could not be built or inspected (the notes say "
                                   "why); the others are clean",
                                   unknown.size(), a.kernels.size());
    return a;
  }
  a.verdict = Verdict::clean;
  a.sentence = fmt::format("none of the {} LoRA kernels vLLM launches for this plan has the wgmma register hazard{} in "
                           "the SASS this Triton builds",
                           a.kernels.size(), in.stack.use_gdc() ? " or an early read" : "");
  return a;
}

}  // namespace lp::stack

namespace lp::stack {

namespace {

/// What the sweep's cases of one variant came to.
struct RunTally {
  std::map<report::Verdict, std::size_t> verdicts;
  std::uint64_t nan = 0;
  std::uint64_t inf = 0;
  std::uint64_t mismatches = 0;
  std::size_t amplified = 0;  ///< cases run with queued wgmma pairs
  std::size_t cases = 0;
};

std::string run_line(const RunTally& t) {
  const auto count = [&](report::Verdict v) {
    const auto it = t.verdicts.find(v);
    return it == t.verdicts.end() ? std::size_t{0} : it->second;
  };
  std::vector<std::string> parts;
  for (const auto& [verdict, n] : t.verdicts) {
    parts.push_back(fmt::format("{} {}", n, report::to_string(verdict)));
  }
  std::string out = fmt::format("{} case(s){}: {}", t.cases,
                                t.amplified > 0 ? fmt::format(" ({} amplified)", t.amplified) : std::string(),
                                fmt::join(parts, ", "));
  if (count(report::Verdict::fail) > 0) {
    out += fmt::format("; {} NaN, {} Inf, {} wrong values", t.nan, t.inf, t.mismatches);
  }
  return out;
}

}  // namespace

namespace {

/// check's remedy id of a sweep --remedies neighbour's name ("block_n 32"), or "".
std::string remedy_id_of(const std::string& sweep_name) {
  if (sweep_name == "block_n 32") {
    return "block_n_32";
  }
  if (sweep_name == "num_stages 1") {
    return "stages_1";
  }
  if (sweep_name == "bf16 input") {
    return "input_16bit";
  }
  if (sweep_name.rfind("Triton ", 0) == 0 && sweep_name.find('+') == std::string::npos) {
    return "triton_upgrade";
  }
  return {};
}

/// The sweep's measured remedies appended to the evidence of check's same remedy.
void fold_remedies(CheckAnswer& answer, const report::Remedies& measured) {
  std::map<std::string, std::vector<std::string>> seen;
  for (const report::HazardRemedies& hazard : measured.hazards) {
    for (const report::RemedyRecord& r : hazard.remedies) {
      const std::string id = remedy_id_of(r.remedy);
      if (!id.empty()) {
        seen[id].push_back(fmt::format("{} at {} tokens{}", report::to_string(r.verdict), hazard.tokens,
                                       r.reason ? fmt::format(" ({})", r.reason->substr(0, r.reason->find(':'))) : ""));
      }
    }
  }
  for (Remedy& r : answer.remedies) {
    if (const auto it = seen.find(r.id); it != seen.end()) {
      r.evidence += fmt::format("; run on this GPU: {}", fmt::join(it->second, ", "));
    }
  }
}

}  // namespace

void fold_run(CheckAnswer& answer, const formats::Document& report, const std::string& path) {
  if (report.remedies) {
    fold_remedies(answer, *report.remedies);
  }
  std::map<std::string, RunTally> by_variant;
  for (const report::CaseRecord c : report.cases) {
    if (!c.variant) {
      continue;
    }
    RunTally& t = by_variant[*c.variant];
    ++t.cases;
    ++t.verdicts[c.verdict];
    t.amplified += c.axes.integer("amplify").value_or(0) > 0 ? 1 : 0;
    if (c.metrics) {
      t.nan += c.metrics->nan;
      t.inf += c.metrics->inf;
      t.mismatches = std::max(t.mismatches, c.metrics->mismatches);
    }
  }
  std::vector<const KernelAnswer*> failed;
  for (KernelAnswer& k : answer.kernels) {
    const auto it = by_variant.find(k.variant);
    if (it == by_variant.end()) {
      k.run = "no case of the sweep ran it";
      continue;
    }
    k.run = run_line(it->second);
    if (it->second.verdicts.count(report::Verdict::fail) > 0) {
      failed.push_back(&k);
    }
  }
  answer.notes.push_back(fmt::format("--run: the sweep's report is {} (loraprobe report {})", path, path));
  if (!failed.empty()) {
    const bool was_clean = answer.verdict != Verdict::affected;
    answer.verdict = Verdict::affected;
    const std::string seen = fmt::format("On this GPU, {} returned wrong values (FAIL).", join_labels(failed));
    answer.sentence = was_clean ? seen : fmt::format("{} {}", answer.sentence, seen);
  }
}

}  // namespace lp::stack
