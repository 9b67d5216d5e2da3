#include "sweep/entries.hpp"

#include <set>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "families/family.hpp"
#include "model/splitmix.hpp"
#include "sweep/case_variants.hpp"
#include "sweep/decide.hpp"
#include "compile/toolchain.hpp"
#include "tools/tools.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::sweep {

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

/// The axes of a control case: the expand of k_control_* shapes, named by its role.
AxisValues control_axes(std::string_view input_dtype, const compile::Compiler& compiler, const std::string& triton,
                        const std::string& control) {
  AxisValues axes;
  axes.set("op", AxisValue::of_text("expand"));
  axes.set("tokens", AxisValue::of_int(k_control_tokens));
  axes.set("rank", AxisValue::of_int(k_control_rank));
  axes.set("hidden", AxisValue::of_ints({k_control_hidden}));
  axes.set("input_dtype", AxisValue::of_text(input_dtype));
  axes.set("weight_dtype", AxisValue::of_text("bf16"));
  axes.set("compiler", AxisValue::of_text(compiler.to_string()));
  axes.set("triton", AxisValue::of_text(triton));
  axes.set("control", AxisValue::of_text(control));
  return axes;
}

}  // namespace

std::uint64_t problem_seed(std::uint64_t config_seed, const Problem& p) {
  // FNV-1a over the key (fixed, unlike std::hash), then SplitMix64's finaliser with the seed.
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char ch : inputs_key(p)) {
    h = (h ^ static_cast<unsigned char>(ch)) * 0x100000001b3ULL;
  }
  return SplitMix64::mix(config_seed ^ h);
}

Problem problem_of(const plan::Case& c, std::uint64_t config_seed) {
  Problem p;
  p.op = c.op;
  p.num_tokens = c.tokens;
  p.rank = c.rank;
  p.slice_hidden = c.hidden;
  p.hidden_in = c.hidden.at(0);
  p.num_loras = c.num_loras;
  p.input_dtype = c.input_dtype;
  p.weight_dtype = c.weight_dtype;
  p.add_inputs = c.add_inputs;
  p.scale = k_shrink_scale;
  p.split_k = c.shrink ? c.shrink->split_k : 1;
  p.scale_group = c.scale_group;
  if (const plan::FusedMoeCase* fused = c.fused_moe()) {
    p.hidden_in = fused->hidden_in;
    p.moe = ExpertRouting{fused->num_experts, fused->top_k, fused->mul_routed_weight,
                          c.expand->block_m};
  }
  family_of(c.op).shape(p);
  p.seed = problem_seed(config_seed, p);
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
    e.job.problem = problem_of(c, config.seed.value);
    e.job.repeats = static_cast<int>(config.repeats.value);
    e.job.pdl = c.gdc;
    const plan::KernelKnobs& tile = c.expand ? *c.expand : *c.shrink;
    e.job.block_m = tile.block_m;
    e.job.block_n = tile.block_n;
    const DType out = output_dtype(e.job.problem);
    if (const auto tol = config.tolerance.find(out); tol != config.tolerance.end()) {
      e.job.atol = tol->second.value.atol;
      e.job.rtol = tol->second.value.rtol;
    }
    std::vector<std::string> labels;
    const kernels::KernelSet& set = sets.at(c.triton);
    // Only the expand kernel is amplified: a shrink reads A from shared memory.
    auto use = [&](const AxisValues& wanted, std::optional<ImageRef>& slot, int amplify) {
      const kernels::Lookup found = set.lookup(wanted);
      if (found.variant == nullptr) {
        e.skip_reason = found.problem;
        return;
      }
      slot = ImageRef{c.triton, found.variant->id, c.compiler, amplify};
      e.image_keys.push_back(images.add(*slot));
      labels.push_back(found.variant->id);
    };
    if (c.shrink) {
      use(wanted_shrink_axes(c), e.job.shrink, 0);
    }
    if (c.expand && e.skip_reason.empty()) {
      use(wanted_expand_axes(c), e.job.expand, c.amplify);
      e.amplify = c.amplify;
    }
    const auto hook = test_hooks.find(c.index);
    if (hook != test_hooks.end() && hook->second == k_hook_pdl_no_wait && e.skip_reason.empty()) {
      // The dual-stream chain without its wait: the gdc-off expand of the same config,
      // still launched with programmatic dependent launch, reads the buffer whenever it starts.
      if (!c.gdc) {
        throw UsageError(fmt::format("--test-hook {}={}: case {} is not a dual-stream (gdc) case", c.index,
                                     hook->second, c.index));
      }
      AxisValues wanted = wanted_expand_axes(c);
      wanted.set("gdc", AxisValue::of_bool(false));
      const kernels::Lookup found = set.lookup(wanted);
      if (found.variant == nullptr) {
        throw UsageError(fmt::format("--test-hook {}={}: {}", c.index, hook->second, found.problem));
      }
      e.job.expand = ImageRef{c.triton, found.variant->id, c.compiler, e.amplify};
      e.image_keys.back() = images.add(*e.job.expand);
      labels.back() = found.variant->id + " (launched with PDL: no wait)";
    } else if (hook != test_hooks.end() && e.skip_reason.empty()) {
      const kernels::Variant* v = set.with_role(hook->second);
      if (v == nullptr) {
        throw UsageError(fmt::format("--test-hook {}={}: the kernel set of Triton {} has no variant of role {}",
                                     c.index, hook->second, c.triton, hook->second));
      }
      e.job.expand = ImageRef{c.triton, v->id, c.compiler, e.amplify};
      e.image_keys.back() = images.add(*e.job.expand);
      labels.back() = v->id;
    }
    e.variant_label = fmt::format("{}", fmt::join(labels, "+"));
    entries.push_back(std::move(e));
  }
  return entries;
}

void settle_amplification(std::vector<Entry>& entries, const ImageSet& images) {
  for (Entry& e : entries) {
    if (e.amplify == 0 || !e.job.expand) {
      continue;
    }
    const Image& image = images.at(e.job.expand->key());
    e.job.problem.amplify = image.amplification && image.amplification->changed() ? e.amplify : 0;
  }
}

ControlEntries control_entries(const kernels::KernelSet& set, std::uint64_t config_seed, std::size_t first_index,
                               std::vector<std::unique_ptr<plan::Case>>& cases, ImageSet& images) {
  auto control = [&](const std::string& role, DType input, std::size_t index) {
    auto c = std::make_unique<plan::Case>();
    c->index = index;
    c->id = sha256_hex(role + "@" + set.triton()).substr(0, 12);
    c->compiler = compile::Compiler::prebuilt();
    c->triton = set.triton();
    AxisValues axes = control_axes(dtype_name(input), c->compiler, set.triton(), role);
    Entry e;
    const kernels::Variant* v = set.with_role(role);
    if (v == nullptr || !v->ok()) {
      e.skip_reason = fmt::format("the kernel set of Triton {} has no ok {} variant", set.triton(), role);
    } else {
      axes.set("variant", AxisValue::of_text(v->id));
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
      p.add_inputs = v->constexprs.boolean("ADD_INPUTS").value_or(false);
      p.seed = problem_seed(config_seed, p);
      e.job.block_m = static_cast<int>(v->constexprs.integer("BLOCK_M").value_or(64));
      e.job.block_n = static_cast<int>(v->constexprs.integer("BLOCK_N").value_or(128));
      e.job.repeats = 1;
      e.job.expand = ImageRef{set.triton(), v->id, c->compiler, 0};
      e.image_keys = {images.add(*e.job.expand)};
    }
    c->own_axes = std::make_shared<const AxisValues>(std::move(axes));
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

std::optional<Entry> amplified_control_entry(const kernels::KernelSet& set, const std::string& role,
                                             const compile::Compiler& compiler, int amplify,
                                             std::uint64_t config_seed, std::size_t index,
                                             std::vector<std::unique_ptr<plan::Case>>& cases, ImageSet& images,
                                             std::string& why) {
  auto c = std::make_unique<plan::Case>();
  c->op = Op::expand;
  c->tokens = k_control_tokens;
  c->rank = k_control_rank;
  c->hidden = {k_control_hidden};
  c->input_dtype = DType::f32;
  c->weight_dtype = DType::bf16;
  c->add_inputs = true;
  c->compiler = compiler;
  c->triton = set.triton();
  c->amplify = amplify;
  plan::KernelKnobs knobs = plan::vllm_expand_defaults(1);
  if (role == "block_n_32") {
    knobs.block_n = 32;
  } else if (role != "fixed_default") {
    throw Error(fmt::format("no amplified control of role {}", role));
  }
  knobs.even_k = c->rank % knobs.block_k == 0;
  c->expand = knobs;
  const kernels::Lookup found = set.lookup(wanted_expand_axes(*c));
  if (found.variant == nullptr) {
    why = fmt::format("the Triton {} set has no variant for the amplified {} control: {}", set.triton(), role,
                      found.problem);
    return std::nullopt;
  }
  c->index = index;
  c->id = sha256_hex(fmt::format("amplified-{}@{}@{}", role, set.triton(), amplify)).substr(0, 12);
  AxisValues axes = control_axes("fp32", c->compiler, set.triton(), "amplified_" + role);
  axes.set("block_n", AxisValue::of_int(knobs.block_n));
  axes.set("num_stages", AxisValue::of_int(knobs.num_stages));
  axes.set("amplify", AxisValue::of_int(amplify));
  axes.set("variant", AxisValue::of_text(found.variant->id));
  c->own_axes = std::make_shared<const AxisValues>(std::move(axes));
  Entry e;
  e.plan_case = c.get();
  e.variant_label = found.variant->id;
  e.amplify = amplify;
  e.job.index = c->index;
  e.job.case_id = c->id;
  e.job.problem = problem_of(*c, config_seed);
  e.job.block_m = knobs.block_m;
  e.job.block_n = knobs.block_n;
  e.job.repeats = 1;
  e.job.expand = ImageRef{set.triton(), found.variant->id, c->compiler, amplify};
  e.image_keys = {images.add(*e.job.expand)};
  cases.push_back(std::move(c));
  return e;
}

namespace {

/// The compiler of an amplified control of `set` (role `role`): the set's own
/// (prebuilt) when its bundled ptxas is here; else the newest installed ptxas at least
/// as new as the bundled one (it reads the set's PTX, and serialises block_n 32 and keeps
/// the copies of 3.8+ as the bundled one does), with `note` saying so; else nullopt,
/// with `note` saying why the control did not run.
std::optional<compile::Compiler> control_compiler(const kernels::KernelSet& set, const std::string& role,
                                                  std::string& note) {
  const kernels::PtxasRecord& p = set.manifest().ptxas;
  try {
    (void)compile::resolve_bundled_ptxas({set.triton(), p.path_hint, p.sha256, p.version});
    return compile::Compiler::prebuilt();
  } catch (const EnvironmentError& e) {  // not installed here: what resolve_bundled_ptxas says
    const std::optional<tools::ToolVersion> bundled = tools::parse_tool_version(p.version);
    const std::optional<compile::PtxasInfo> newest = compile::ptxas_standing_in_for(p.version);
    if (!newest) {
      note = fmt::format("the amplified {} control of Triton {} did not run: {}; and no installed ptxas is as new as "
                         "it ({})",
                         role, set.triton(), e.what(), bundled ? bundled->version : "its version is not recorded");
      return std::nullopt;
    }
    note = fmt::format("the amplified {} control of Triton {} is compiled by ptxas {} (its bundled ptxas is not "
                       "here: {})",
                       role, set.triton(), newest->version, e.what());
    return compile::Compiler::with_ptxas(newest->spec);
  }
}

}  // namespace

std::vector<AmplifiedControlEntry> amplified_control_entries(const plan::Plan& plan, const kernels::KernelSets& sets,
                                                             const std::vector<std::string>& tritons,
                                                             std::uint64_t config_seed, std::size_t& next_index,
                                                             std::vector<std::unique_ptr<plan::Case>>& cases,
                                                             ImageSet& images, std::vector<std::string>& notes) {
  std::set<int> amplify_values;
  for (const plan::Case& c : plan.cases) {
    if (c.amplify > 0) {
      amplify_values.insert(c.amplify);
    }
  }
  std::vector<AmplifiedControlEntry> out;
  if (amplify_values.empty()) {
    return out;
  }
  // (set, role, compiler) of every control that can run, each decided once.
  std::vector<std::tuple<const kernels::KernelSet*, std::string, compile::Compiler>> wanted;
  auto want = [&](const kernels::KernelSet& set, const std::string& role) {
    std::string note;
    const std::optional<compile::Compiler> compiler = control_compiler(set, role, note);
    if (!note.empty()) {
      notes.push_back(note);
    }
    if (compiler) {
      wanted.emplace_back(&set, role, *compiler);
    }
  };
  for (const std::string& triton : tritons) {
    want(sets.at(triton), "block_n_32");
  }
  if (const kernels::KernelSet* fixed = sets.find(k_fixed_triton)) {
    want(*fixed, "fixed_default");
  } else {
    notes.push_back(fmt::format("no Triton {} set for the amplified fixed_default control", k_fixed_triton));
  }
  for (const int amplify : amplify_values) {
    for (const auto& [set, role, compiler] : wanted) {
      std::string why;
      std::optional<Entry> e =
          amplified_control_entry(*set, role, compiler, amplify, config_seed, next_index, cases, images, why);
      if (!e) {
        notes.push_back(why);
        continue;
      }
      ++next_index;
      out.push_back({set->triton(), role, std::move(*e)});
    }
  }
  return out;
}

namespace {

/// What the amplifier did to an entry's expand image, with the void reason once the
/// static inspection of it and of its unamplified image is in (`inspected`).
report::AmplificationRecord amplification_of(const Image& image, const Image* base, bool inspected) {
  report::AmplificationRecord a;
  a.amplify = image.amplify;
  if (image.amplification) {
    a.sites = image.amplification->sites;
    a.pending_sites = image.amplification->pending_sites;
    a.serialised = image.amplification->serialised;
  }
  if (a.sites == 0) {
    a.void_reason = fmt::format("{}, so the case ran its unamplified image",
                                image.amplification ? image.amplification->describe : "the PTX could not be amplified");
    return a;
  }
  if (base != nullptr && base->findings) {
    a.unamplified_findings = *base->findings;
  }
  if (!inspected || !image.findings || !a.unamplified_findings) {
    return a;
  }
  if (*a.unamplified_findings > 0 && *image.findings == 0) {
    a.void_reason = fmt::format(
        "the amplified SASS has no wgmma hazard while the unamplified SASS has {} ({}): the amplified run cannot "
        "show it",
        *a.unamplified_findings,
        a.serialised.empty() ? "ptxas kept the A registers apart" : "ptxas serialised the wgmmas: " + a.serialised);
  } else if (*a.unamplified_findings == 0 && *image.findings > 0) {
    a.void_reason = fmt::format("the amplified SASS has {} wgmma hazard(s) the unamplified SASS does not have: the "
                                "amplifier made them, not the kernel",
                                *image.findings);
  }
  return a;
}

/// What the static inspection says of a case's images (lora_linear has two).
struct StaticTally {
  int findings = 0;
  int early_reads = 0;        ///< gdc-early-read, counted for a case launched with PDL only
  std::string early_made_by;  ///< of the expand that reads early
  bool inspected = true;
  std::string not_inspected;  ///< why an image has no SASS report
  std::set<std::string> made_by;
};

StaticTally static_tally(const Entry& e, const ImageSet& images) {
  StaticTally t;
  for (const std::string& key : e.image_keys) {
    const Image& image = images.at(key);
    if (image.findings) {
      t.findings += *image.findings;
      // The dual-stream chain's own hazard: only a case launched with PDL can show it.
      t.early_reads += e.job.pdl ? image.early_reads : 0;
      if (e.job.pdl && image.early_reads > 0) {
        t.early_made_by = image.early_read_attribution;
      }
    } else {
      t.inspected = false;
      t.not_inspected = image.sass_error;
    }
    t.made_by.insert(image.attribution);
  }
  return t;
}

/// The reason's note on a dual-stream case: the chain it ran as, and its early reads.
std::string chain_note(const StaticTally& t) {
  return fmt::format(
      "dual-stream chain: the expand launched with programmatic dependent launch after a shrink whose tail spins {} "
      "us after launch_dependents{}",
      k_chain_tail_ns / 1000,
      t.early_reads == 0
          ? std::string("; gdc-early-read: none")
          : fmt::format("; gdc-early-read: {} of the static findings are loads of the shrink's buffer before "
                        "griddepcontrol.wait (triton-lang/triton #11905){}",
                        t.early_reads,
                        t.early_made_by == "ptx"     ? ", already in the PTX: Triton's pipeliner issues them in the loop "
                                                       "prologue"
                        : t.early_made_by == "ptxas" ? ", made by ptxas (the PTX waits first)"
                                                     : ""));
}

}  // namespace

CaseRecord record_of(const Entry& e, const protocol::JobResult& r, const ImageSet* images) {
  CaseRecord c;
  c.index = e.plan_case != nullptr ? e.plan_case->index : r.index;
  c.id = r.case_id;
  if (e.plan_case != nullptr) {
    c.axes = e.plan_case->axes();
  }
  c.variant = e.variant_label;
  c.runs = r.runs;
  c.failed_runs = r.failed_runs;
  c.metrics = r.metrics;
  c.timing = r.timing;
  std::optional<report::AmplificationRecord> amplified;
  if (e.amplify > 0 && e.job.expand) {
    // Provisional (no images yet): what the job says of its pairs is all there is.
    report::AmplificationRecord a;
    a.amplify = e.amplify;
    a.sites = e.job.problem.amplify > 0 ? 1 : 0;
    amplified = a;
    if (images != nullptr) {
      const Image& image = images->at(e.job.expand->key());
      amplified = amplification_of(image, image.base_key.empty() ? nullptr : &images->at(image.base_key), true);
    }
  }
  if (images == nullptr) {
    const Decision d = decide(r, 0, "", amplified ? &*amplified : nullptr);
    c.verdict = d.verdict;
    c.reason = d.reason;
    return c;
  }
  c.amplification = amplified;
  const StaticTally t = static_tally(e, *images);
  if (t.inspected) {
    c.static_findings = t.findings + t.early_reads;
  }
  if (!t.made_by.empty() && t.made_by.count("") == 0) {
    c.attribution = t.made_by.count("ptx") > 0 ? "ptx" : t.made_by.count("ptxas") > 0 ? "ptxas" : "none";
  }
  if (amplified && amplified->unamplified_findings && *amplified->unamplified_findings > 0 && t.findings == 0 &&
      t.inspected) {
    // A void amplification: the hazard and who made it are the unamplified image's.
    c.attribution = images->at(images->at(e.job.expand->key()).base_key).attribution;
  }
  const Decision d = decide(r, c.static_findings, t.not_inspected, amplified ? &*amplified : nullptr);
  c.verdict = d.verdict;
  c.reason = d.reason;
  if (c.attribution && *c.attribution != "none" && (c.verdict == Verdict::latent || c.verdict == Verdict::fail)) {
    c.reason += report::attribution_note(*c.attribution);
  }
  if (amplified && amplified->sites == 0) {
    c.reason += fmt::format("{}amplify {}: {}", c.reason.empty() ? "" : "; ", amplified->amplify, amplified->void_reason);
  }
  if (e.amplify > 0 && e.job.expand) {
    if (const std::string& note = images->at(e.job.expand->key()).compiler_note; !note.empty()) {
      c.reason += (c.reason.empty() ? "" : "; ") + note;  // another ptxas for the set's bundled one
    }
  }
  if (e.job.pdl) {
    c.reason += (c.reason.empty() ? "" : "; ") + chain_note(t);
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
  return c;
}

}  // namespace lp::sweep
