#include "formats/view.hpp"

#include "formats/case_index.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/symptom.hpp"
#include "report/report.hpp"
#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::formats {


namespace {

std::string short_sha(const Text& sha) {
  const std::string text = sha.value_or("");
  return text.size() > 12 ? text.substr(0, 12) : text;
}

std::string count_text(const std::optional<std::int64_t>& count) {
  return count ? fmt::format("{}", *count) : std::string("n/a");
}

std::vector<EnvRow> environment_rows(const Document& doc) {
  const report::Meta& meta = doc.meta;
  const report::Environment& env = doc.environment;
  std::vector<EnvRow> rows;
  if (const std::optional<report::ReportedGpu>& gpu = env.gpu.record()) {
    // The UUID names one physical board; a hash of it tells two reports' GPUs apart
    // without publishing it.
    const std::string uuid = gpu->uuid.value_or("");
    rows.push_back({"GPU", fmt::format("{} (sm {}, {} SMs, {:.0f} GiB), UUID sha256 {}", gpu->name.value_or("?"),
                                       gpu->compute_capability.value_or("?"), count_text(gpu->sm_count),
                                       gpu->total_memory_bytes / (1024.0 * 1024.0 * 1024.0),
                                       uuid.empty() ? "n/a" : sha256_hex(uuid).substr(0, 12))});
    rows.push_back({"Driver", fmt::format("{} (CUDA {})", gpu->driver_version.value_or("?"),
                                          gpu->driver_cuda_version.value_or("?"))});
    rows.push_back({"CUDA (loraprobe built with)", gpu->runtime_version.value_or("?")});
    rows.push_back({"cuBLAS", gpu->cublas_version.value_or("?")});
  } else {
    rows.push_back({"GPU", "none: " + env.no_gpu_reason.value_or("not recorded")});
  }
  if (const std::optional<report::ReportedToolkit>& toolkit = env.toolkit.record()) {
    rows.push_back({"CUDA toolkit", fmt::format("{} ({})", toolkit->version.value_or("?"), toolkit->root.value_or("?"))});
  }
  std::vector<std::string> sets;
  for (const report::KernelSetRecord& s : env.kernel_sets.value_or(std::vector<report::KernelSetRecord>{})) {
    const report::ReportedPtxas ptxas = s.ptxas.record().value_or(report::ReportedPtxas{});
    sets.push_back(fmt::format("Triton {} ({} variants, {}; its ptxas {} {})", s.triton_version, s.variants, s.origin,
                               tool_version(ptxas.version), short_sha(ptxas.sha256)));
  }
  rows.push_back({"Kernel sets", sets.empty() ? "not recorded" : fmt::format("{}", fmt::join(sets, "; "))});
  std::vector<std::string> compilers;
  for (const CompilerView& c : doc.compilers) {
    std::string line = fmt::format("{} (Triton {})", c.name.value_or("?"), c.triton.value_or("any"));
    if (c.error) {
      line += ": unavailable, " + *c.error;
    } else {
      const std::string sha = short_sha(c.ptxas_sha256);
      line += fmt::format(": ptxas {}{}, {}", c.version, sha.empty() ? "" : " " + sha, fmt::join(c.options, " "));
    }
    compilers.push_back(std::move(line));
  }
  rows.push_back({"Compilers", compilers.empty() ? "not recorded" : fmt::format("{}", fmt::join(compilers, "; "))});
  std::set<std::string> disassemblers;
  for (const report::VariantRecord& variant : doc.variants) {
    if (const auto& sass = variant.sass.record(); sass && sass->disassembler) {
      const report::ReportedDisassembler& d = *sass->disassembler;
      disassemblers.insert(
          fmt::format("nvdisasm {} {} ({})", d.version.value_or("?"), short_sha(d.sha256), d.origin.value_or("?")));
    }
  }
  if (!disassemblers.empty()) {
    rows.push_back({"Disassembler", fmt::format("{}", fmt::join(disassemblers, "; "))});
  }
  std::string caches = env.jit_cache_disabled.value_or(true) ? "driver JIT cache off (CUDA_CACHE_DISABLE=1)"
                                                             : "driver JIT cache ON (--allow-jit-cache)";
  caches += ", module loading " + env.module_loading.value_or("?");
  if (const auto* cache = env.inspection_cache ? &env.inspection_cache->record() : nullptr; cache && *cache) {
    caches += (*cache)->enabled
                  ? fmt::format(", static inspection cache {} ({} hits, {} misses)", (*cache)->root.value_or("?"),
                                count_text((*cache)->sass_hits), count_text((*cache)->sass_misses))
                  : ", static inspection cache off";
  }
  rows.push_back({"Caches", caches});
  if (const std::optional<report::ReportedHost>& host = env.host.record()) {
    rows.push_back({"Host", fmt::format("{} {} {}, {} CPUs", host->os.value_or("?"), host->kernel.value_or("?"),
                                        host->machine.value_or("?"), count_text(host->cpus))});
  }
  rows.push_back({"loraprobe", fmt::format("{} (git {}), report schema {}", meta.version, meta.git_sha,
                                           doc.schema_version.value_or("?"))});
  rows.push_back({"Config", fmt::format("{} (sha256 {}), seed {}, {} repeats", meta.config.record().value_or(report::ReportedConfig{}).name.value_or("?"),
                                        meta.config_sha256.substr(0, 12), meta.seed, meta.repeats)});
  rows.push_back({"Ran", fmt::format("{} to {}", meta.started_at, meta.finished_at.value_or("?"))});
  return rows;
}

/// Lines of the race of one variant: per in-flight MMA, the MMA, the wait it passes
/// and the instructions that touch its registers.
}  // namespace

std::vector<ExcerptLine> excerpt_lines_of(const report::ReportedSass& sass) {
  constexpr std::size_t k_max_lines = 12;
  std::vector<ExcerptLine> lines;
  for (const report::ReportedKernel& kernel : sass.kernels) {
    std::map<std::string, std::vector<const report::ReportedFinding*>> by_mma;  // by MMA address
    std::vector<std::string> order;
    for (const report::ReportedFinding& f : kernel.findings) {
      if (by_mma.count(f.wgmma_address) == 0) {
        order.push_back(f.wgmma_address);
      }
      by_mma[f.wgmma_address].push_back(&f);
    }
    for (const std::string& at : order) {
      const report::ReportedFinding& first = *by_mma[at].front();
      lines.push_back({at, first.wgmma_instruction, "warpgroup MMA, in flight from here", false});
      if (first.has_wait) {
        lines.push_back({first.wait_address, first.wait_instruction,
                         "waits for all but the youngest groups: this MMA stays in flight", false});
      }
      std::vector<const report::ReportedFinding*> hits = by_mma[at];
      std::sort(hits.begin(), hits.end(),
                [](const report::ReportedFinding* a, const report::ReportedFinding* b) { return a->address < b->address; });
      for (const report::ReportedFinding* f : hits) {
        if (lines.size() >= k_max_lines) {
          lines.push_back({"", "", fmt::format("... {} findings in all (the report lists each)", hits.size()), false});
          return lines;
        }
        lines.push_back({f->address, f->instruction,
                         fmt::format("{}s {} of the in-flight MMA{}", f->access, fmt::join(f->registers, ", "),
                                     f->over_back_edge ? " (next trip, round the back edge)" : ""),
                         true});
      }
    }
  }
  return lines;
}

namespace {

std::string strip_note(std::string note) { return note.rfind("; ", 0) == 0 ? note.substr(2) : note; }

/// The remedies a run can measure from its own cases: the same case with one axis
/// changed. {name, why, axis, value or "" for every other value of the axis}.
struct RemedyRule {
  const char* axis;
  AxisValue value;
  const char* why;
};

std::vector<Remedy> measure_remedies(const report::CaseStore& cases) {
  // Each case by its axes (the last of a repeated configuration counts, as it always did).
  const CaseIndex by_axes(cases, [](const report::CaseRecord& c) { return c.axes.dump(); });
  std::map<std::string, std::map<std::string, AxisValue>> values_of;  // axis -> values seen, by their JSON text
  for (const report::CaseRecord& c : cases) {
    for (const char* axis : {"compiler", "triton"}) {
      if (c.axes.contains(axis)) {
        const AxisValue v = c.axes.at(axis);
        values_of[axis].emplace(v.dump(), v);
      }
    }
  }
  std::vector<std::pair<std::string, RemedyRule>> rules = {
      {"block_n 32", {"block_n", AxisValue::of_int(32), "the field workaround (vLLM PR #48638)"}},
      {"num_stages 1", {"num_stages", AxisValue::of_int(1), "no software pipelining, so no MMA is in flight across trips"}},
      {"bf16 input", {"input_dtype", AxisValue::of_text("bf16"), "A from shared memory instead of registers (vLLM PR #47869)"}},
  };
  for (const char* axis : {"compiler", "triton"}) {
    for (const auto& [dumped, v] : values_of[axis]) {
      const bool compiler = axis == std::string("compiler");
      rules.push_back({fmt::format("{} {}", compiler ? "compiler" : "Triton", v.text().value_or(dumped)),
                       {axis, v, compiler ? "the same PTX through another compiler" : "that Triton's kernel set"}});
    }
  }
  std::vector<Remedy> out;
  for (const auto& [name, rule] : rules) {
    Remedy r{name, rule.why, 0, 0};
    for (const report::CaseRecord& c : cases) {
      const std::string verdict(report::to_string(c.verdict));
      const AxisValues& axes = c.axes;
      if ((verdict != "LATENT" && verdict != "FAIL") || !axes.contains(rule.axis) || axes.at(rule.axis) == rule.value) {
        continue;
      }
      AxisValues neighbour = axes;
      neighbour.set(rule.axis, rule.value);
      const std::optional<std::size_t> found = by_axes.find(neighbour.dump());
      if (!found) {
        continue;
      }
      ++r.measured;
      r.clean += cases[*found].verdict == report::Verdict::pass ? 1 : 0;
    }
    if (r.measured > 0) {
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace

std::vector<EnvRow> case_numbers(const report::CaseRecord& c) {
  const auto optional = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string("n/a"); };
  std::vector<EnvRow> rows;
  rows.push_back({"verdict", std::string(report::to_string(c.verdict)) + (c.reason.empty() ? "" : ": " + c.reason)});
  rows.push_back({"runs", fmt::format("{} ({} wrong)", c.runs, c.failed_runs)});
  if (c.metrics) {
    const CompareMetrics& m = *c.metrics;
    rows.push_back({"elements", fmt::format("{}: {} mismatched, NaN {}, Inf {}, |x| > 1e30 {}, unwritten {}, writes to "
                                            "untouched rows {}",
                                            m.elements, m.mismatches, m.nan, m.inf, optional(m.huge),
                                            optional(m.unwritten), m.untouched_rows_written)});
    if (const std::string symptom = describe_symptom({m.mismatches, m.nan, m.inf, m.huge, m.unwritten});
        !symptom.empty()) {
      rows.push_back({"symptom", symptom});
    }
    rows.push_back({"deviation", fmt::format("max abs {}, max rel {}, worst {} of tolerance (atol {}, rtol {})",
                                             real_text(m.max_abs_dev), real_text(m.max_rel_dev),
                                             real_text(m.worst_dev_over_tolerance), real_text(m.atol),
                                             real_text(m.rtol))});
    if (m.first_bad) {
      const BadElement& bad = *m.first_bad;
      rows.push_back({"first bad element",
                      fmt::format("token {}, column {}, slice {}: expected {} (0x{:x}), actual {} (0x{:x})", bad.token,
                                  bad.column, bad.slice, real_text(bad.expected), bad.expected_bits,
                                  real_text(bad.actual), bad.actual_bits)});
    }
  }
  if (c.amplification) {
    const report::AmplificationRecord& amp = *c.amplification;
    rows.push_back({"amplification",
                    fmt::format("{} queued wgmma pair(s) before each of {} register-A wgmma(s) ({} left in flight); "
                                "SASS hazards {} amplified, {} without{}{}",
                                amp.amplify, amp.sites, amp.pending_sites, optional(c.static_findings),
                                optional(amp.unamplified_findings),
                                amp.serialised.empty() ? "" : "; ptxas: " + amp.serialised,
                                amp.void_reason.empty() ? "" : "; void: " + amp.void_reason)});
  }
  if (c.timing && c.timing->kernel_ms) {
    rows.push_back({"kernel time", fmt::format("{:.4g} ms", *c.timing->kernel_ms)});
  }
  return rows;
}

std::vector<std::string> early_read_lines_of(const report::ReportedSass& sass) {
  std::vector<std::string> lines;
  for (const report::ReportedKernel& kernel : sass.kernels) {
    for (const report::ReportedEarlyRead& r : kernel.early_reads) {
      const std::string address = r.address.value_or("0x?");
      lines.push_back(fmt::format("/*{}*/ {}  // reads {} before {} at {}", address.substr(2),
                                  r.instruction.value_or("?"), r.param.value_or("?"), r.wait_instruction.value_or("?"),
                                  r.wait_address.value_or("?")));
    }
  }
  return lines;
}

Excerpt excerpt_of_item(const InspectItem& item) {
  Excerpt e;
  e.variant = item.name.value_or("?");
  e.triton = item.triton.value_or("?");
  e.compiler = item.compiler.value_or("?");
  e.findings = static_cast<int>(item.finding_count);
  e.attribution = item.attribution.value_or("");
  e.attribution_text = e.attribution.empty() ? "not analysed" : e.attribution;
  e.lines = excerpt_lines_of(item.sass);
  e.early_lines = early_read_lines_of(item.sass);
  e.early_reads = static_cast<int>(item.early_read_count);
  e.early_attribution = item.early_read_attribution.value_or("");
  return e;
}

/// `text` whole when it has at most `most` bytes, else cut at the last clause ("; ")
/// before that, or failing one the last space, with " ..." after: never mid-word or
/// inside a UTF-8 sequence ("...writes registers of )" was a cut at byte 160).
std::string shortened(const std::string& text, std::size_t most) {
  if (text.size() <= most) {
    return text;
  }
  std::size_t cut = text.rfind("; ", most);
  if (cut == std::string::npos || cut < most / 3) {
    cut = text.rfind(' ', most);
  }
  return (cut == std::string::npos ? std::string() : text.substr(0, cut)) + " ...";
}

std::vector<std::string> remedy_lines(const report::HazardRemedies& hazard) {
  std::vector<std::string> lines;
  for (const report::RemedyRecord& x : hazard.remedies) {
    const std::string statics = !x.static_findings    ? "not inspected"
                                : *x.static_findings == 0 ? "static clean"
                                                          : fmt::format("{} static finding(s)", *x.static_findings);
    const std::string reason = x.reason.value_or("");
    lines.push_back(fmt::format("{}: {}, {}, {}{}", x.remedy, report::to_string(x.verdict), statics,
                                x.cost ? fmt::format("{:.2g}x the kernel time", *x.cost)
                                       : std::string("kernel time not measured"),
                                reason.empty() || x.verdict == report::Verdict::pass
                                    ? ""
                                    : " (" + shortened(reason, 200) + ")"));
  }
  return lines;
}

std::string not_swept_sentence(const std::vector<plan::NotSwept>& not_swept) {
  std::vector<std::string> names;
  std::vector<std::string> whys;
  for (const plan::NotSwept& n : not_swept) {
    names.push_back(n.projection);
    const std::string& why = n.why;
    if (!why.empty() && std::find(whys.begin(), whys.end(), why) == whys.end()) {
      whys.push_back(why);
    }
  }
  if (names.empty()) {
    return "";
  }
  return fmt::format("Not swept: {} ({}); this report says nothing about them.", fmt::join(names, ", "),
                     fmt::join(whys, "; "));
}

namespace {

Span text_span(std::string text) { return {Span::Style::text, std::move(text)}; }
Span code_span(std::string text) { return {Span::Style::code, std::move(text)}; }

/// The remedies this report measured (its remedies block, sweep --remedies) and those
/// its own cases measure as neighbours; `hazards`: whether it found any.
RemediesSection remedies_section(const Document& doc, bool hazards) {
  RemediesSection s;
  if (doc.remedies && !doc.remedies->hazards.empty()) {  // its notes are said with its hazards
    s.measured_intro = "Remedies run for each hazardous case (sweep --remedies: the case with one thing changed, in the "
                       "same run):";
    for (const report::HazardRemedies& h : doc.remedies->hazards) {
      ListItem item{{code_span(h.configuration),
                     text_span(fmt::format(", {} tokens ({}, case ", h.tokens, report::to_string(h.verdict))),
                     code_span(h.case_id), text_span(")")},
                    std::vector<Line>{}};
      for (std::string& line : remedy_lines(h)) {
        item.children->push_back({text_span(std::move(line))});
      }
      s.measured.push_back(std::move(item));
    }
    for (const std::string& n : doc.remedies->notes) {
      s.measured.push_back({{text_span("Note: " + n + ".")}, std::nullopt});
    }
  }
  const std::vector<Remedy> neighbours = measure_remedies(doc.cases);
  if (!neighbours.empty()) {
    s.neighbours_intro = "Neighbours in this run's cases (the same case with one thing changed):";
    for (const Remedy& r : neighbours) {
      s.neighbours.push_back({{Span::Style::strong, r.name},
                              text_span(fmt::format(", {}: PASS in {} of the {} hazardous cases whose neighbour ran.",
                                                    r.why, r.clean, r.measured))});
    }
  } else if (hazards) {
    s.no_remedy = {text_span("This run measured no remedy. Add "), code_span("--block-n 32"), text_span(", "),
                   code_span("--num-stages 1"), text_span(", or "),
                   code_span(fmt::format("--ptxas {}", report::fixing_ptxas_version())),
                   text_span(" (or newer) to the sweep to measure them.")};
  }
  return s;
}

}  // namespace

namespace {

/// The headline: one sentence of the outcome, an amplified FAIL said so, a report that
/// stopped short of its plan said first.
std::string headline_of(const Document& doc, std::map<std::string, std::size_t> counts, const std::string& outcome) {
  const std::size_t fails = counts["FAIL"] + counts["fault"] + counts["timeout"] + counts["compile_error"];
  std::string headline;
  if (outcome == "invalid_controls") {
    headline = "INVALID: the controls did not behave, so no case is judged.";
  } else if (outcome == "nothing_compatible") {
    headline = fmt::format(
        "INCOMPATIBLE: none of the {} case(s) could compile: each kernel's PTX is newer than its compiler reads, so "
        "this run judged nothing.",
        counts["incompatible"]);
  } else if (counts["FAIL"] > 0) {
    headline = fmt::format("FAIL: wrong numbers in {} case(s).", counts["FAIL"]);
  } else if (fails > 0) {
    headline = fmt::format("ERROR: {} case(s) faulted, timed out or did not compile.", fails);
  } else if (counts["LATENT"] > 0) {
    headline = fmt::format(
        "LATENT: the SASS that ran has the wgmma register hazard in {} case(s); no run gave wrong numbers.",
        counts["LATENT"]);
  } else {
    headline = fmt::format("PASS: no wrong number and no static hazard in {} case(s).", counts["PASS"]);
  }
  // A FAIL under amplification says so in the headline, never a bare FAIL.
  std::set<int> fail_amplify;
  std::size_t amplified_fails = 0;
  for (const report::CaseRecord& c : doc.cases) {
    if (c.verdict == report::Verdict::fail && c.amplification) {
      ++amplified_fails;
      fail_amplify.insert(c.amplification->amplify);
    }
  }
  if (amplified_fails > 0 && outcome != "invalid_controls") {
    const std::string queued = fmt::format("{} queued wgmma pairs", fmt::join(fail_amplify, " or "));
    headline = amplified_fails == counts["FAIL"]
                   ? fmt::format("FAIL under amplification ({}): wrong numbers in {} case(s).", queued, amplified_fails)
                   : fmt::format("FAIL: wrong numbers in {} case(s), {} of them under amplification ({}).",
                                 counts["FAIL"], amplified_fails, queued);
  }
  if (doc.interrupted) {
    // Stopped short of the plan (a signal, merge --allow-partial): said before anything else.
    headline = fmt::format("INCOMPLETE: {} of {} planned case(s) are here (stopped: {}). Of those: {}",
                           doc.cases.size(), doc.meta.plan.cases, *doc.interrupted, headline);
  }
  return headline;
}

/// The cases the summary names (first failure, minimal failure, first latent case).
std::vector<NotableCase> notable_of(const Document& doc) {
  std::vector<NotableCase> notable;
  const SummaryView& summary = doc.summary;
  for (const auto& [ref, title] : {std::pair{&summary.first_failure, "First failure"},
                                   std::pair{&summary.minimal_failure, "Minimal failure"},
                                   std::pair{&summary.first_latent, "First latent case"}}) {
    if (!*ref) {
      continue;
    }
    for (const report::CaseRecord& c : doc.cases) {
      if (c.id == (*ref)->id.value_or("")) {
        notable.push_back({title, c});
        break;
      }
    }
  }
  return notable;
}

/// The excerpt of one variant the plan's cases ran with a hazard or a FAIL.
Excerpt excerpt_of_variant(const report::VariantRecord& variant) {
  Excerpt e;
  e.variant = variant.variant;
  e.triton = variant.triton;
  e.compiler = variant.compiler;
  if (variant.amplify) {
    e.compiler += fmt::format(" amplified by {} pairs", *variant.amplify);
  }
  e.findings = variant.static_findings.value_or(0);
  e.attribution = variant.attribution.value_or("");
  e.attribution_text = e.attribution == "none" || e.attribution.empty()
                           ? std::string(e.attribution.empty() ? "not analysed" : "no hazard")
                           : strip_note(report::attribution_note(e.attribution));
  const report::ReportedSass sass = variant.sass.record().value_or(report::ReportedSass{});
  e.lines = excerpt_lines_of(sass);
  // A dual-stream variant's early reads (its cases count them among their static findings).
  e.early_lines = early_read_lines_of(sass);
  e.early_reads = static_cast<int>(e.early_lines.size());
  return e;
}

/// Every hazardous variant's excerpt, in report order, and one sentence per (Triton,
/// compiler) with a hazard.
void add_excerpts(const Document& doc, ReportView& v) {
  std::map<std::string, std::pair<int, std::string>> by_stack;  // "Triton X, compiler" -> (variants, attribution)
  std::vector<std::string> stack_order;
  for (const report::VariantRecord& variant : doc.variants) {
    const std::map<std::string, std::size_t> verdicts = variant.case_verdicts.value_or(std::map<std::string, std::size_t>{});
    if (variant.static_findings.value_or(0) <= 0 && (verdicts.count("FAIL") == 0 || verdicts.at("FAIL") == 0)) {
      continue;
    }
    if (variant.case_verdicts && variant.case_verdicts->empty()) {
      continue;  // no case of the plan ran it: a control's kernel (the controls block reports those)
    }
    Excerpt e = excerpt_of_variant(variant);
    const std::string stack = fmt::format("Triton {} under {}", e.triton, e.compiler);
    if (by_stack.count(stack) == 0) {
      stack_order.push_back(stack);
    }
    ++by_stack[stack].first;
    by_stack[stack].second = e.attribution_text;
    v.excerpts.push_back(std::move(e));
  }
  for (const std::string& stack : stack_order) {
    v.attributions.push_back(fmt::format("{}: {} hazardous variant(s); {}.", stack, by_stack[stack].first,
                                         by_stack[stack].second));
  }
}

/// The 3/n sentence of a run of n repeats; "" for none.
std::string bound_sentence(int n) {
  if (n <= 0) {
    return "";
  }
  return fmt::format(
      "LATENT means the SASS that ran has the hazard but none of its {} runs gave a wrong number. With 0 failures "
      "in n runs the 95% upper bound on the per-run failure rate is 3/n (the rule of three): {:.3g} here{}.",
      n, std::min(1.0, 3.0 / n), n < 30 ? ", which bounds nothing useful; --repeats 300 gives 1%" : "");
}

}  // namespace

ReportView view_of(const Document& doc) {
  ReportView v;
  v.environment = environment_rows(doc);
  for (const CompilerView& c : doc.compilers) {
    v.compilers.push_back({c.triton.value_or("any"), c.name.value_or("?"), c.version, short_sha(c.ptxas_sha256),
                           c.error ? "unavailable: " + *c.error : fmt::format("{}", fmt::join(c.options, " "))});
  }
  v.command = command_text(doc.meta.argv);
  const SummaryView& summary = doc.summary;
  v.counts = report::counts_text(summary.counts) + fmt::format(" of {} planned", doc.meta.plan.cases);
  v.not_swept = not_swept_sentence(doc.meta.plan.not_swept);
  v.exit_code = static_cast<int>(summary.exit_code);
  v.outcome = summary.outcome.value_or("?");
  v.headline = headline_of(doc, summary.counts, v.outcome);
  for (const report::CaseRecord& c : doc.cases) {
    if (c.verdict == report::Verdict::pass && c.metrics && std::isfinite(c.metrics->worst_dev_over_tolerance)) {
      v.clean_margins.push_back(c.metrics->worst_dev_over_tolerance);
    }
  }
  v.map = report::verdict_map(doc.cases);
  v.notable = notable_of(doc);
  add_excerpts(doc, v);
  v.remedies = remedies_section(doc, !v.excerpts.empty());
  v.bound = bound_sentence(doc.meta.repeats);
  v.race = doc.controls.race ? doc.controls.race->summary : std::string();
  return v;
}

}  // namespace lp::formats
