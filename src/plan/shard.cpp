#include "plan/shard.hpp"

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <numeric>

#include <fmt/format.h>

#include "util/error.hpp"
#include "util/sha256.hpp"

namespace lp::plan {

namespace {

std::optional<std::size_t> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  return static_cast<std::size_t>(std::stoull(text));
}

std::size_t env_number(const EnvLookup& env, const char* name) {
  const std::optional<std::string> v = env(name);
  const std::optional<std::size_t> n = v ? whole_number(*v) : std::nullopt;
  if (!n) {
    throw UsageError(fmt::format("--shard auto: {}={} is not a whole number", name, v.value_or("")));
  }
  return *n;
}

}  // namespace

EnvLookup process_env() {
  return [](const char* name) -> std::optional<std::string> {
    const char* v = std::getenv(name);
    return v == nullptr ? std::nullopt : std::optional<std::string>(v);
  };
}

Shard parse_shard(const std::string& text, const EnvLookup& env) {
  const std::size_t slash = text.find('/');
  const std::string first = text.substr(0, slash);
  const std::string second = slash == std::string::npos ? std::string() : text.substr(slash + 1);
  Shard s;
  // The count written after '/', if any (a bool and a number: GCC 12 cannot follow an
  // optional's payload through the branches below and warns of an uninitialized read).
  const std::optional<std::size_t> written = slash == std::string::npos ? std::nullopt : whole_number(second);
  const bool has_count = written.has_value();
  const std::size_t count = written.value_or(0);
  if (slash != std::string::npos && !has_count) {
    throw UsageError(fmt::format("--shard {}: the count after '/' must be a whole number (--shard 3/8)", text));
  }
  if (first != "auto") {
    const std::optional<std::size_t> index = whole_number(first);
    if (!index || !has_count) {
      throw UsageError(fmt::format("--shard {}: write I/N (0 <= I < N), auto/N or auto", text));
    }
    s.index = *index;
    s.count = count;
  } else {
    // The scheduler's index: Slurm's array task, or a Kubernetes Indexed Job's.
    const bool slurm = env("SLURM_ARRAY_TASK_ID").has_value();
    const bool k8s = env("JOB_COMPLETION_INDEX").has_value();
    if (!slurm && !k8s) {
      throw UsageError(fmt::format("--shard {}: neither SLURM_ARRAY_TASK_ID (a Slurm array job) nor "
                                   "JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set",
                                   text));
    }
    std::optional<std::size_t> slurm_index;
    if (slurm) {
      const std::size_t id = env_number(env, "SLURM_ARRAY_TASK_ID");
      const std::size_t min = env("SLURM_ARRAY_TASK_MIN") ? env_number(env, "SLURM_ARRAY_TASK_MIN") : 0;
      if (id < min) {
        throw UsageError(fmt::format("--shard {}: SLURM_ARRAY_TASK_ID={} is below SLURM_ARRAY_TASK_MIN={}", text, id,
                                     min));
      }
      slurm_index = id - min;
    }
    if (k8s) {
      const std::size_t k = env_number(env, "JOB_COMPLETION_INDEX");
      if (slurm_index && *slurm_index != k) {
        throw UsageError(fmt::format("--shard {}: SLURM_ARRAY_TASK_ID gives index {} and JOB_COMPLETION_INDEX {}; "
                                     "unset one",
                                     text, *slurm_index, k));
      }
      slurm_index = k;
    }
    s.index = *slurm_index;
    const bool slurm_count = env("SLURM_ARRAY_TASK_COUNT").has_value();
    if (!has_count && !slurm_count) {
      throw UsageError(fmt::format("--shard {}: no count: SLURM_ARRAY_TASK_COUNT is not set; write --shard auto/N "
                                   "(N: the array's size, a Kubernetes Job's completions)",
                                   text));
    }
    // The count written (auto/N), else the array's; both given, they must agree.
    s.count = has_count ? count : env_number(env, "SLURM_ARRAY_TASK_COUNT");
    if (has_count && slurm_count && env_number(env, "SLURM_ARRAY_TASK_COUNT") != s.count) {
      throw UsageError(fmt::format("--shard {}: SLURM_ARRAY_TASK_COUNT={} says otherwise", text,
                                   env_number(env, "SLURM_ARRAY_TASK_COUNT")));
    }
  }
  if (s.count == 0 || s.index >= s.count) {
    throw UsageError(fmt::format("--shard {}: index {} of {} shards: 0 <= I < N", text, s.index, s.count));
  }
  return s;
}

std::uint64_t case_cost(const Case& c) {
  // The output's width over all slices: one size per slice, or one size for them all.
  const std::uint64_t slices = static_cast<std::uint64_t>(std::max(1, c.num_slices));
  std::uint64_t width = 0;
  if (c.hidden.size() >= slices) {
    for (const std::int64_t h : c.hidden) {
      width += static_cast<std::uint64_t>(std::max<std::int64_t>(h, 1));
    }
  } else {
    width = static_cast<std::uint64_t>(std::max<std::int64_t>(c.hidden.empty() ? 1 : c.hidden.front(), 1)) * slices;
  }
  return static_cast<std::uint64_t>(std::max<std::int64_t>(c.tokens, 1)) * width;
}

std::vector<std::size_t> assign_shards(const Plan& plan, std::size_t count) {
  std::vector<std::size_t> order(plan.cases.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::vector<std::uint64_t> cost(plan.cases.size());
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    cost[i] = case_cost(plan.cases[i]);
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<std::uint64_t> load(count, 0);
  std::vector<std::size_t> out(plan.cases.size(), 0);
  for (const std::size_t i : order) {
    const std::size_t to = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    out[i] = to;
    load[to] += cost[i];
  }
  return out;
}

std::string plan_sha256(const Plan& plan) {
  std::string ids;
  ids.reserve(plan.cases.size() * 12);
  for (const Case& c : plan.cases) {
    ids += c.id;
  }
  return sha256_hex(ids);
}

void keep_shard(Plan& plan, const Shard& shard) {
  // More shards than cases would leave some empty; `merge` refuses such counts (a forged
  // count is how a merge of too few parts would pass for complete).
  if (shard.count > std::max<std::size_t>(plan.cases.size(), 1)) {
    throw UsageError(fmt::format("--shard {}/{}: the plan has {} case(s), so at most {} shard(s)", shard.index,
                                 shard.count, plan.cases.size(), std::max<std::size_t>(plan.cases.size(), 1)));
  }
  const std::vector<std::size_t> to = assign_shards(plan, shard.count);
  std::deque<Case> kept;
  for (std::size_t i = 0; i < plan.cases.size(); ++i) {
    if (to[i] == shard.index) {
      kept.push_back(std::move(plan.cases[i]));
    }
  }
  plan.cases = std::move(kept);
}

PlannedRun plan_for(const SweepConfig& config, const std::vector<std::string>& versions,
                    const std::vector<std::string>& only_cases, const std::optional<Shard>& shard) {
  PlannedRun run;
  run.plan = expand_plan(config, versions);
  run.next_index = run.plan.cases.empty() ? 0 : run.plan.cases.back().index + 1;
  if (!only_cases.empty()) {
    keep_only(run.plan, only_cases);
  }
  if (shard) {
    run.shard = ShardRecord{shard->index, shard->count, plan_sha256(run.plan), run.plan.cases.size()};
    keep_shard(run.plan, *shard);
  }
  return run;
}

void require_cases(const Plan& plan, const SweepConfig& config) {
  if (plan.cases.empty()) {
    throw UsageError(fmt::format("{}: the plan has no case: every combination is excluded or not applicable "
                                 "(sweep --dry-run shows the counts)",
                                 config.source.empty() ? config.name : config.source));
  }
}

}  // namespace lp::plan
