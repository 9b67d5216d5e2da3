#include "cli/plan_table.hpp"

#include <cstdio>

#include <fmt/format.h>

namespace lp::cli {

// The columns: "sg" is the FP8 families' scale group (0: per-tensor scales; "-" for the
// families without scales).
void print_plan(std::FILE* file, const plan::SweepConfig& config, const plan::Plan& p) {
  std::string out = fmt::format("plan: {} cases from {} combinations of {}{}\n", p.cases.size(), p.combinations,
                                config.name, config.source.empty() ? "" : " (" + config.source + ")");
  for (const plan::Dropped& d : p.not_applicable) {
    out += fmt::format("  not applicable: {} ({})\n", d.count, d.reason);
  }
  for (std::size_t r = 0; r < p.excluded_by_rule.size(); ++r) {
    out += fmt::format("  excluded by {}: {}\n", config.exclude.value[r].pointer, p.excluded_by_rule[r]);
  }
  if (p.duplicates > 0) {
    out += fmt::format("  collapsed: {} (an axis that does not apply to the op, or equal once \"vllm\" is resolved)\n",
                       p.duplicates);
  }
  if (p.added_by_vllm > 0) {
    out += fmt::format("  added: {} (vLLM's own knobs for a projection, which the config's knob values do not name)\n",
                       p.added_by_vllm);
  }
  if (p.shared_by_projections > 0) {
    out += fmt::format("  shared by projections: {} (one shape of two projections is one case, labelled with both)\n",
                       p.shared_by_projections);
  }
  if (config.model.value) {
    out += fmt::format("  fused-MoE NPID_FACTOR planned for {} SMs ({})\n",
                       config.sm_count.value > 0 ? config.sm_count.value : plan::k_default_sm_count,
                       config.sm_count.value > 0 ? config.sm_count.origin.describe()
                                                 : "without --sm-count; a run takes its GPU's");
  }
  for (const plan::NotSwept& n : p.not_swept) {
    out += fmt::format("  not swept: {}: {}\n", n.projection, n.why);
  }
  if (p.without_variant && p.without_variant->empty()) {
    out += "  variants: every case has one in its kernel set\n";
  } else if (p.without_variant) {
    std::size_t total = 0;
    for (const plan::Dropped& d : *p.without_variant) {
      total += d.count;
    }
    out += fmt::format("  without a variant: {} of {} cases (a run records them as skipped):\n", total,
                       p.cases.size());
    // The commonest reasons; --json lists them all.
    constexpr std::size_t k_reasons_shown = 12;
    for (std::size_t i = 0; i < p.without_variant->size() && i < k_reasons_shown; ++i) {
      out += fmt::format("    {} {}\n", (*p.without_variant)[i].count, (*p.without_variant)[i].reason);
    }
    if (p.without_variant->size() > k_reasons_shown) {
      out += fmt::format("    ... {} more reasons (--dry-run --json: without_variant)\n",
                         p.without_variant->size() - k_reasons_shown);
    }
  }
  out += fmt::format("  repeats per case: {}, seed: {}\n", config.repeats.value, config.seed.value);
  out += fmt::format("{:>5} {:<12} {:<7} {:<11} {:>6} {:>4} {:<15} {:>4} {:<4} {:<4} {:<3} {:>3} {:>3} {:>3} {:>2} "
                     "{:>2} {:>3} {:<5} {:>3} {:>4} {}\n",
                     "#", "id", "triton", "op", "tokens", "rank", "hidden", "lora", "in", "w", "add", "bm", "bn", "bk", "nw",
                     "ns", "sk", "evenk", "amp", "sg", "compiler");
  fmt::print(file, "{}", out);
  // One line at a time: a plan of millions of cases is never held as text.
  for (const plan::Case& c : p.cases) {
    const AxisValues a = c.axes();
    fmt::print(file, "{:>5} {:<12} {:<7} {:<11} {:>6} {:>4} {:<15} {:>4} {:<4} {:<4} {:<3} {:>3} {:>3} {:>3} {:>2} "
                       "{:>2} {:>3} {:<5} {:>3} {:>4} {}\n",
                       c.index, c.id, c.triton, plan::format_cell(a, "op"), c.tokens, c.rank, plan::format_cell(a, "hidden"), c.num_loras,
                       plan::format_cell(a, "input_dtype"), plan::format_cell(a, "weight_dtype"), plan::format_cell(a, "add_inputs"), plan::format_cell(a, "block_m"),
                       plan::format_cell(a, "block_n"), plan::format_cell(a, "block_k"), plan::format_cell(a, "num_warps"), plan::format_cell(a, "num_stages"),
                       c.shrink ? std::to_string(c.shrink->split_k) : "-", plan::format_cell(a, "even_k"), c.amplify,
                       plan::format_cell(a, "scale_group"), c.compiler.to_string());
  }
}

}  // namespace lp::cli
