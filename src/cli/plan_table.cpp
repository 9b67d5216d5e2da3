#include "cli/plan_table.hpp"

#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace lp::cli {

using nlohmann::json;

namespace {

}  // namespace

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
  for (const plan::NotSwept& n : p.not_swept) {
    out += fmt::format("  not swept: {}: {}\n", n.projection, n.why);
  }
  out += fmt::format("  repeats per case: {}, seed: {}\n", config.repeats.value, config.seed.value);
  out += fmt::format("{:>5} {:<12} {:<7} {:<11} {:>6} {:>4} {:<15} {:>4} {:<4} {:<4} {:<3} {:>3} {:>3} {:>3} {:>2} "
                     "{:>2} {:>3} {:<5} {:>3} {}\n",
                     "#", "id", "triton", "op", "tokens", "rank", "hidden", "lora", "in", "w", "add", "bm", "bn", "bk", "nw",
                     "ns", "sk", "evenk", "amp", "compiler");
  fmt::print(file, "{}", out);
  // One line at a time: a plan of millions of cases is never held as text.
  for (const plan::Case& c : p.cases) {
    const AxisValues a = c.axes();
    fmt::print(file, "{:>5} {:<12} {:<7} {:<11} {:>6} {:>4} {:<15} {:>4} {:<4} {:<4} {:<3} {:>3} {:>3} {:>3} {:>2} "
                       "{:>2} {:>3} {:<5} {:>3} {}\n",
                       c.index, c.id, c.triton, plan::format_cell(a, "op"), c.tokens, c.rank, plan::format_cell(a, "hidden"), c.num_loras,
                       plan::format_cell(a, "input_dtype"), plan::format_cell(a, "weight_dtype"), plan::format_cell(a, "add_inputs"), plan::format_cell(a, "block_m"),
                       plan::format_cell(a, "block_n"), plan::format_cell(a, "block_k"), plan::format_cell(a, "num_warps"), plan::format_cell(a, "num_stages"),
                       c.shrink ? std::to_string(c.shrink->split_k) : "-", plan::format_cell(a, "even_k"), c.amplify,
                       c.compiler.to_string());
  }
}

void print_plan_json(std::FILE* file, const plan::SweepConfig& config, const plan::Plan& p) {
  json head = {{"config", config.to_json()},       {"count", p.cases.size()},
               {"combinations", p.combinations},   {"not_applicable", plan::not_applicable_json(p.not_applicable)},
               {"excluded_by_rule", p.excluded_by_rule}, {"duplicates", p.duplicates}};
  if (!p.not_swept.empty()) {
    head["not_swept"] = plan::not_swept_json(p.not_swept);
  }
  std::string text = head.dump(2);
  text.resize(text.size() - 2);  // drop the closing "\n}": the cases follow
  fmt::print(file, "{},\n  \"cases\": [", text);
  // One case per line, written as it goes.
  for (std::size_t i = 0; i < p.cases.size(); ++i) {
    fmt::print(file, "{}\n    {}", i == 0 ? "" : ",", plan::case_to_json(p.cases[i]).dump());
  }
  fmt::print(file, "{}]\n}}\n", p.cases.empty() ? "" : "\n  ");
}

}  // namespace lp::cli
