#include "sweep/entries.hpp"

#include <set>

#include <fmt/format.h>

#include "sweep/case_variants.hpp"
#include "sweep/decide.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::sweep {

using nlohmann::json;
using protocol::ImageRef;
using report::CaseRecord;
using report::Verdict;

namespace {

/// Shrink's scaling in every case: vLLM passes lora_alpha / rank; 0.25 is exact in
/// binary, so it adds no rounding of its own to the comparison.
constexpr float k_shrink_scale = 0.25F;

/// Sizes of the controls: long enough a prompt (512 tokens) that the positive
/// control's garbage reaches every tile, rank 64 as in the field report.
constexpr std::int64_t k_control_tokens = 512;
constexpr std::int64_t k_control_rank = 64;
constexpr std::int64_t k_control_hidden = 4096;

}  // namespace

std::uint64_t case_seed(std::uint64_t config_seed, const std::string& id) {
  std::uint64_t z = config_seed ^ std::stoull(id, nullptr, 16);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

Problem problem_of(const plan::Case& c, std::uint64_t seed) {
  Problem p;
  p.op = c.op;
  p.num_tokens = c.tokens;
  p.rank = c.rank;
  p.slice_hidden = c.hidden;
  p.hidden_in = c.op == Op::expand ? 0 : c.hidden.at(0);
  p.num_loras = c.num_loras;
  p.input_dtype = c.op == Op::expand ? c.input_dtype : c.weight_dtype;
  p.weight_dtype = c.weight_dtype;
  p.add_inputs = c.op != Op::shrink && c.add_inputs;
  p.scale = c.op == Op::expand ? 1.0F : k_shrink_scale;
  p.seed = seed;
  p.split_k = c.shrink ? c.shrink->split_k : 1;
  return p;
}

std::vector<Entry> plan_entries(const plan::Plan& plan, const plan::SweepConfig& config,
                                const kernels::KernelSets& sets, ImageSet& images,
                                const std::map<std::size_t, std::string>& test_hooks) {
  std::vector<Entry> entries;
  entries.reserve(plan.cases.size());
  for (const plan::Case& c : plan.cases) {
    Entry e;
    e.plan_case = &c;
    e.job.index = c.index;
    e.job.case_id = c.id;
    e.job.problem = problem_of(c, case_seed(config.seed.value, c.id));
    e.job.repeats = static_cast<int>(config.repeats.value);
    const plan::KernelKnobs& tile = c.expand ? *c.expand : *c.shrink;
    e.job.block_m = tile.block_m;
    e.job.block_n = tile.block_n;
    const DType out = c.op == Op::shrink ? DType::f32 : c.weight_dtype;
    if (const auto tol = config.tolerance.find(out); tol != config.tolerance.end()) {
      e.job.atol = tol->second.value.atol;
      e.job.rtol = tol->second.value.rtol;
    }
    std::vector<std::string> labels;
    const kernels::KernelSet& set = sets.at(c.triton);
    auto use = [&](const nlohmann::json& wanted, std::optional<ImageRef>& slot) {
      const kernels::Lookup found = set.lookup(wanted);
      if (found.variant == nullptr) {
        e.skip_reason = found.problem;
        return;
      }
      const std::string key = images.add(c.triton, found.variant->id, c.compiler);
      slot = ImageRef{key, c.triton, found.variant->id, c.compiler};
      e.image_keys.push_back(key);
      labels.push_back(found.variant->id);
    };
    if (c.shrink) {
      use(wanted_shrink_axes(c), e.job.shrink);
    }
    if (c.expand && e.skip_reason.empty()) {
      use(wanted_expand_axes(c), e.job.expand);
    }
    if (const auto hook = test_hooks.find(c.index); hook != test_hooks.end() && e.skip_reason.empty()) {
      const kernels::Variant* v = set.with_role(hook->second);
      if (v == nullptr) {
        throw UsageError(fmt::format("--test-hook {}={}: the kernel set of Triton {} has no variant of role {}",
                                     c.index, hook->second, c.triton, hook->second));
      }
      const std::string key = images.add(c.triton, v->id, c.compiler);
      e.job.expand = ImageRef{key, c.triton, v->id, c.compiler};
      e.image_keys.back() = key;
      labels.back() = v->id;
    }
    for (const std::string& l : labels) {
      e.variant_label += (e.variant_label.empty() ? "" : "+") + l;
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

ControlEntries control_entries(const kernels::KernelSet& set, std::uint64_t config_seed, std::size_t first_index,
                               std::vector<std::unique_ptr<plan::Case>>& cases, ImageSet& images) {
  auto control = [&](const std::string& role, DType input, std::size_t index) {
    auto c = std::make_unique<plan::Case>();
    c->index = index;
    c->id = sha256_hex(role + "@" + set.triton()).substr(0, 12);
    c->compiler = compile::Compiler::prebuilt();
    c->triton = set.triton();
    c->own_axes = {{"op", "expand"}, {"tokens", k_control_tokens}, {"rank", k_control_rank},
               {"hidden", {k_control_hidden}}, {"input_dtype", dtype_name(input)},
               {"weight_dtype", "bf16"}, {"compiler", c->compiler.to_string()}, {"triton", set.triton()},
               {"control", role}};
    Entry e;
    const kernels::Variant* v = set.with_role(role);
    if (v == nullptr || !v->ok()) {
      e.skip_reason = fmt::format("the kernel set of Triton {} has no ok {} variant", set.triton(), role);
    } else {
      c->own_axes["variant"] = v->id;
      e.variant_label = v->id;
      e.job.index = c->index;
      e.job.case_id = c->id;
      Problem& p = e.job.problem;
      p.op = Op::expand;
      p.num_tokens = k_control_tokens;
      p.rank = k_control_rank;
      p.slice_hidden = {k_control_hidden};
      p.input_dtype = input;
      p.weight_dtype = DType::bf16;
      p.add_inputs = v->constexprs.value("ADD_INPUTS", false);
      p.seed = case_seed(config_seed, c->id);
      e.job.block_m = v->constexprs.value("BLOCK_M", 64);
      e.job.block_n = v->constexprs.value("BLOCK_N", 128);
      e.job.repeats = 1;
      const std::string key = images.add(set.triton(), v->id, c->compiler);
      e.image_keys = {key};
      e.job.expand = ImageRef{key, set.triton(), v->id, c->compiler};
    }
    e.plan_case = c.get();
    cases.push_back(std::move(c));
    return e;
  };
  ControlEntries out;
  out.triton = set.triton();
  out.positive = control("positive_control", DType::f32, first_index);
  out.negative = control("negative_control", DType::bf16, first_index + 1);
  return out;
}

CaseRecord record_of(const Entry& e, const protocol::JobResult& r, const ImageSet* images) {
  CaseRecord c;
  c.index = e.plan_case != nullptr ? e.plan_case->index : r.index;
  c.id = r.case_id;
  c.axes = e.plan_case != nullptr ? e.plan_case->axes() : json::object();
  c.variant = e.variant_label;
  c.runs = r.runs;
  c.failed_runs = r.failed_runs;
  c.metrics = r.metrics;
  c.timing = r.timing;
  if (images == nullptr) {
    const Decision d = decide(r, 0, "");
    c.verdict = d.verdict;
    c.reason = d.reason;
    return c;
  }
  int findings = 0;
  bool inspected = true;
  std::string not_inspected;
  std::set<std::string> made_by;  // of the case's images (lora_linear has two)
  for (const std::string& key : e.image_keys) {
    const Image& image = images->at(key);
    if (image.findings) {
      findings += *image.findings;
    } else {
      inspected = false;
      not_inspected = image.sass_error;
    }
    made_by.insert(image.attribution);
  }
  if (inspected) {
    c.static_findings = findings;
  }
  if (!made_by.empty() && made_by.count("") == 0) {
    c.attribution = made_by.count("ptx") > 0 ? "ptx" : made_by.count("ptxas") > 0 ? "ptxas" : "none";
  }
  const Decision d = decide(r, c.static_findings, not_inspected);
  c.verdict = d.verdict;
  c.reason = d.reason;
  if (c.attribution && *c.attribution != "none" && (c.verdict == Verdict::latent || c.verdict == Verdict::fail)) {
    c.reason += report::attribution_note(*c.attribution);
  }
  return c;
}

CaseRecord not_run(const Entry& e, Verdict verdict, std::string reason) {
  CaseRecord c;
  c.index = e.plan_case->index;
  c.id = e.plan_case->id;
  c.axes = e.plan_case->axes();
  if (!e.variant_label.empty()) {
    c.variant = e.variant_label;
  }
  c.verdict = verdict;
  c.reason = std::move(reason);
  c.metrics = nullptr;
  c.timing = nullptr;
  return c;
}

}  // namespace lp::sweep
