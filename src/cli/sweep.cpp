// loraprobe sweep: expand a config into cases and (on a Hopper GPU) run them.

#include <fmt/format.h>

#include <iostream>
#include <map>

#include "cli/commands.hpp"
#include "cli/plan_table.hpp"
#include "plan/config.hpp"
#include "plan/plan.hpp"
#include "report/verdict.hpp"
#include "util/error.hpp"

namespace lp::cli {

namespace {

/// Everything `loraprobe sweep` takes; JSON config and flags fill the same struct.
struct SweepOptions {
  std::string config_path;
  std::map<plan::AxisId, std::vector<std::string>> axis_flags;
  std::optional<std::int64_t> repeats;
  std::optional<std::uint64_t> seed;
  bool dry_run = false;
  bool json = false;
  bool show_config = false;
};

plan::SweepConfig resolve_config(const SweepOptions& o) {
  plan::SweepConfig config = o.config_path.empty() ? plan::load_default_config() : plan::load_config_file(o.config_path);
  for (const auto& [id, texts] : o.axis_flags) {
    const plan::AxisInfo& axis = plan::axis_info(id);
    std::vector<nlohmann::json> values;
    for (const std::string& text : texts) {
      for (nlohmann::json& v : plan::parse_flag_values(axis, text)) {
        if (std::find(values.begin(), values.end(), v) != values.end()) {
          throw UsageError(fmt::format("{} {}: duplicate value {}", axis.flag, text, plan::format_value(v)));
        }
        values.push_back(std::move(v));
      }
    }
    plan::override_axis(config, id, std::move(values), std::string(axis.flag));
  }
  if (o.repeats) {
    if (*o.repeats < 1 || *o.repeats > 100000) {
      throw UsageError(fmt::format("--repeats {}: expected a whole number in [1, 100000]", *o.repeats));
    }
    config.repeats = {*o.repeats, {plan::Origin::Kind::flag, "--repeats"}};
  }
  if (o.seed) {
    config.seed = {*o.seed, {plan::Origin::Kind::flag, "--seed"}};
  }
  return config;
}

int run_sweep(const SweepOptions& o) {
  const plan::SweepConfig config = resolve_config(o);
  const plan::Plan p = plan::expand_plan(config);
  if (o.show_config) {
    if (o.json) {
      fmt::print("{}\n", config.to_json().dump(2));
    } else {
      fmt::print("{}", plan::format_config(config));
    }
    if (!o.dry_run) {
      return 0;
    }
  }
  if (o.dry_run) {
    if (o.json) {
      fmt::print("{}\n", plan_to_json(config, p).dump(2));
    } else {
      fmt::print("{}", format_plan(config, p));
    }
    return 0;
  }
  throw NotBuiltYet("running a sweep on the GPU (use --dry-run to print the plan)");
}

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sub = app.add_subcommand("sweep", "Run a sweep of LoRA kernel configurations and compare each with cuBLAS");
  sub->add_option("-c,--config", o->config_path, "Sweep config (JSON, configs/schema/config.schema.json); "
                                                 "default: the embedded configs/default.json");
  for (const plan::AxisInfo& axis : plan::axis_table()) {
    const plan::AxisId id = axis.id;
    auto* opt = sub->add_option_function<std::vector<std::string>>(
        std::string(axis.flag), [o, id](const std::vector<std::string>& v) { o->axis_flags[id] = v; },
        fmt::format("Override axis {}: {}", axis.key, axis.description));
    opt->group("Axes (replace the config's values; lists '256,384', ranges '16..8192*2' or '16..128+16')");
    opt->allow_extra_args(false);
    if (axis.kind == plan::AxisKind::compiler) {
      opt->take_all();
    }
  }
  sub->add_option("--repeats", o->repeats, "Runs per case (fresh poison each time)");
  sub->add_option("--seed", o->seed, "Seed of all generated inputs");
  sub->add_flag("--dry-run", o->dry_run, "Print the plan (case count and table) without running anything");
  sub->add_flag("--json", o->json, "With --dry-run or --show-config: print JSON instead of a table");
  sub->add_flag("--show-config", o->show_config, "Print every setting with its origin (default, file, flag)");
  sub->footer(
      "Examples:\n"
      "  loraprobe sweep --dry-run                                  # the embedded default plan\n"
      "  loraprobe sweep --dry-run --config configs/seed-48590.json # the reported conditions\n"
      "  loraprobe sweep --config configs/ci-gate.json --compiler ptxas=/opt/cuda-13.3/bin/ptxas\n"
      "  loraprobe sweep --tokens 256,384 --block-n 32,128 --num-stages 2 --show-config\n"
      "Exit codes: 0 clean, 1 failures, 2 usage or config error, 3 environment error.");
  return {sub, [o] { return run_sweep(*o); }};
}

}  // namespace lp::cli
