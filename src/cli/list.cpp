// loraprobe list: the variants of the kernel set, the model presets or the embedded
// configs, as a table or JSON.

#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/kernel_options.hpp"
#include "plan/axes.hpp"
#include "plan/config.hpp"
#include "plan/models.hpp"
#include "plan/plan.hpp"
#include "kernels/kernel_sets.hpp"

namespace lp::cli {

namespace {

struct ListOptions {
  KernelSetOptions kernels;
  std::string filter;
  bool json = false;
  bool models = false;
  bool configs = false;
  std::int64_t tp = 1;
};

/// Most characters of a description list --configs prints (--json has it whole).
constexpr std::size_t k_description_width = 100;

/// A description's first sentence (up to ". " or "? "), cut after a word to fit
/// k_description_width with "..." when longer: one line of a table.
std::string first_sentence(const std::string& text) {
  const std::size_t end = std::min(text.find(". "), text.find("? "));
  std::string line = end == std::string::npos ? text : text.substr(0, end + 1);
  if (line.size() > k_description_width) {
    const std::size_t space = line.rfind(' ', k_description_width - 3);
    line = line.substr(0, space == std::string::npos ? k_description_width - 3 : space) + "...";
  }
  return line;
}

/// list --configs: the embedded configs `--config NAME` takes, each with the cases it
/// plans over the kernel sets here (every embedded Triton set, and --kernel-dir's) and
/// the first sentence of its description.
int list_configs(const ListOptions& o) {
  const auto sets = o.kernels.load();
  std::vector<plan::ConfigListing> rows;
  for (const std::string& name : plan::embedded_config_stems()) {
    const plan::SweepConfig config = plan::load_embedded_config(name);
    rows.push_back({name, config.description, plan::expand_plan(config, sets->versions()).cases.size()});
  }
  if (o.json) {
    fmt::print("{}\n", plan::configs_listing_json(rows).pretty());
    return 0;
  }
  fmt::print("{:<14} {:>6}  {}\n", "config", "cases", "description");
  for (const plan::ConfigListing& row : rows) {
    fmt::print("{:<14} {:>6}  {}\n", row.name, row.cases, first_sentence(row.description));
  }
  fmt::print("{} embedded configs; cases over the Triton sets {}; loraprobe sweep --dry-run --config NAME shows "
             "one's plan\n",
             rows.size(), fmt::join(sets->versions(), ", "));
  return 0;
}

/// list --models: the presets of configs/models.json and the projections each gives,
/// with the kernels vLLM runs for them: a shrink from K to the rank and an expand from
/// the rank into each slice's N, or the fused-MoE LoRA kernels of the routed experts.
int list_models(const ListOptions& o) {
  if (o.json) {
    fmt::print("{}\n", plan::models_listing_json(o.tp).pretty());
    return 0;
  }
  for (const plan::ModelPreset& m : plan::model_presets()) {
    const std::vector<plan::Projection> projections = plan::projections(m, o.tp);
    fmt::print("{}: {}\n", m.name, m.source);
    fmt::print("  {:<27} {:<17} {:<15} {:>6} {:<17} {:>6}\n", "projection", "layer", "op", "slices", "N", "K");
    for (const plan::Projection& p : projections) {
      if (p.kernel == plan::LoraKernel::fused_moe) {
        fmt::print("  {:<27} {:<17} {:<15} {:>6} {:<17} {:>6}  ({} experts, top {}: vLLM's fused-MoE LoRA fast "
                   "path above 64 tokens, one launch; swept with --op expand)\n",
                   p.name, p.layer, "fused_moe", p.out.size(), fmt::format("{}", fmt::join(p.out, "/")), p.in,
                   p.num_experts, p.top_k);
        continue;
      }
      fmt::print("  {:<27} {:<17} {:<15} {:>6} {:<17} {:>6}{}\n", p.name, p.layer, "shrink, expand", p.out.size(),
                 fmt::format("{}", fmt::join(p.out, "/")), p.in, p.source.empty() ? "" : "  (" + p.source + ")");
    }
  }
  fmt::print("per tensor-parallel rank at --tp {}: shrink reads K wide, expand writes N per slice; "
             "sweep --model NAME [--tp N]\n",
             o.tp);
  return 0;
}

int run_list(const ListOptions& o) {
  if (o.models) {
    return list_models(o);
  }
  if (o.configs) {
    return list_configs(o);
  }
  const auto all = o.kernels.load();
  std::vector<kernels::FilterTerm> terms =
      o.filter.empty() ? std::vector<kernels::FilterTerm>{} : kernels::parse_filter(o.filter);
  // `triton` filters the sets, every other key the variants.
  std::vector<std::string> tritons = o.kernels.tritons;
  for (std::string& t : kernels::take_triton_terms(terms)) {
    tritons.push_back(std::move(t));
  }
  KernelSetOptions selection = o.kernels;
  selection.tritons = tritons;
  const std::vector<const kernels::KernelSet*> sets = selection.selected(*all);
  std::vector<std::pair<const kernels::KernelSet*, const kernels::Variant*>> rows;
  for (const kernels::KernelSet* set : sets) {
    for (const kernels::Variant* v : set->filter(terms)) {
      rows.emplace_back(set, v);
    }
  }
  if (rows.empty()) {
    throw kernels::no_filter_match(o.filter, "variant", sets, "'loraprobe list' shows what there is");
  }
  if (o.json) {
    std::vector<kernels::ListedSet> listed;
    for (const kernels::KernelSet* set : sets) {
      listed.push_back({set->origin(), set->triton(), set->variants().size(), set->manifest().ptxas_json()});
    }
    std::vector<std::pair<std::string, const kernels::Variant*>> listed_rows;
    for (const auto& [set, v] : rows) {
      listed_rows.emplace_back(set->triton(), v);
    }
    fmt::print("{}\n", kernels::listing_json(listed, listed_rows).pretty());
    return 0;
  }
  fmt::print("{:<7} {:<58} {:<16} {:<6} {:<4} {:<4} {:>3} {:>3} {:>3} {:>2} {:>2} {:>2} {:<5} {:<3} {:>3} {:>6} {:>4}\n",
             "triton", "id", "role", "op", "in", "w", "bm", "bn", "bk", "nw", "ns", "S", "evenk", "add", "sk", "shared",
             "regs");
  std::size_t rejected = 0;
  for (const auto& [set, v] : rows) {
    const auto& a = v->axes;
    const std::string regs = v->resource_usage.contains("registers") ? v->resource_usage.at("registers").dump() : "-";
    fmt::print("{:<7} {:<58} {:<16} {:<6} {:<4} {:<4} {:>3} {:>3} {:>3} {:>2} {:>2} {:>2} {:<5} {:<3} {:>3} {:>6} {:>4}{}\n",
               set->triton(), v->id, v->role, v->op, plan::format_cell(a, "input_dtype"),
               plan::format_cell(a, "weight_dtype"), plan::format_cell(a, "block_m"), plan::format_cell(a, "block_n"),
               plan::format_cell(a, "block_k"), plan::format_cell(a, "num_warps"), plan::format_cell(a, "num_stages"),
               plan::format_cell(a, "num_slices"), plan::format_cell(a, "even_k"), plan::format_cell(a, "add_inputs"),
               plan::format_cell(a, "split_k"), v->ok() ? std::to_string(v->shared_bytes) : "-", regs,
               v->ok() ? "" : "  rejected: " + v->reason);
    rejected += v->ok() ? 0 : 1;
  }
  fmt::print("{} variants ({} rejected)", rows.size(), rejected);
  for (const kernels::KernelSet* set : sets) {
    fmt::print("{} {} (Triton {}, {})", set == sets.front() ? " in" : ";", set->origin(), set->triton(),
               set->manifest().ptxas.version.empty() ? std::string("?") : set->manifest().ptxas.version);
  }
  fmt::print("\n");
  return 0;
}

}  // namespace

Command add_list_command(CLI::App& app) {
  auto o = std::make_shared<ListOptions>();
  CLI::App* sub = app.add_subcommand(
      "list", "List the variants of the kernel sets (embedded, and --kernel-dir), the model presets or the configs");
  o->kernels.add_to(*sub);
  sub->add_option("--filter", o->filter,
                  "Only variants whose fields equal every key=value (triton, op, role, id, or an axis)");
  sub->add_flag("--json", o->json, "Print JSON instead of a table");
  auto* models = sub->add_flag("--models", o->models,
                               "List the model presets of sweep --model (configs/models.json) and their shapes");
  sub->add_flag("--configs", o->configs,
                "List the embedded sweep configs that --config NAME takes, with the cases each plans")
      ->excludes(models);
  sub->add_option("--tp", o->tp, "With --models: the shapes per rank at this tensor parallelism")
      ->check(CLI::Range(1, 64));
  sub->footer(
      "Examples:\n"
      "  loraprobe list --filter op=expand,block_n=128,num_stages=2,input_dtype=fp32\n"
      "  loraprobe list --json --filter role=positive_control\n"
      "  loraprobe list --filter triton=3.9.0,op=shrink\n"
      "  loraprobe list --models --tp 2\n"
      "  loraprobe list --configs                      # what sweep/inspect --config NAME take\n"
      "  loraprobe list --kernel-dir /tmp/my-kernels   # a set regenerated by scripts/gen_kernels.py --out");
  return {sub, [o] { return run_list(*o); }};
}

}  // namespace lp::cli
