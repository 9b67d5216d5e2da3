#pragma once
// Splitting one plan over many machines (sweep --shard I/N) the way schedulers hand
// out work: a Slurm array job or a Kubernetes Indexed Job gives each task an index,
// and every task computes the same deterministic partition of the same plan and runs
// its part. `loraprobe merge` puts the reports back together (formats/merge.hpp).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace lp::plan {

/// Shard `index` of `count` (0 <= index < count).
struct Shard {
  std::size_t index = 0;
  std::size_t count = 1;
};

/// Reads an environment variable: nullopt when unset (a seam for tests).
using EnvLookup = std::function<std::optional<std::string>(const char*)>;
EnvLookup process_env();

/// "I/N", "auto/N" or "auto". auto takes the index from SLURM_ARRAY_TASK_ID (minus
/// SLURM_ARRAY_TASK_MIN when set) or JOB_COMPLETION_INDEX (a Kubernetes Indexed
/// Job), and for plain "auto" the count from SLURM_ARRAY_TASK_COUNT. Throws
/// lp::UsageError naming the flag, the variables and their values when the text is
/// malformed, the variables are missing, disagree, or give an index past the count.
Shard parse_shard(const std::string& text, const EnvLookup& env);

/// A case's estimated cost for balancing: tokens x the output's width over all its
/// slices (the repeats are the same for every case of a plan).
std::uint64_t case_cost(const Case& c);

/// The shard each case goes to: the costliest first, each to the least loaded shard
/// (ties: plan order, then the lowest shard). Deterministic, a function of the plan
/// alone; no shard's cost exceeds the mean by more than the costliest case.
std::vector<std::size_t> assign_shards(const Plan& plan, std::size_t count);

/// sha256 of the plan's case ids in order: what every shard of one plan shares.
std::string plan_sha256(const Plan& plan);

/// Keeps the cases of `shard` (plan order, indexes and ids unchanged). Throws
/// lp::UsageError when the count exceeds the plan's cases (a shard would be empty).
void keep_shard(Plan& plan, const Shard& shard);

/// What every shard of one plan shares, for `merge` to check: a report's meta.shard and
/// a journal header's shard (their JSON form is the report's, report/blocks.hpp).
struct ShardRecord {
  std::size_t index = 0;
  std::size_t count = 1;
  std::string plan_sha256;  ///< of the plan before sharding (after --case)
  std::size_t plan_cases = 0;

  [[nodiscard]] bool operator==(const ShardRecord&) const = default;
};

/// The plan a sweep runs, the same for its dry run and its run.
struct PlannedRun {
  Plan plan;
  /// The index after the whole plan's last case (before --case and --shard): where the
  /// controls' indexes start, the same in every shard and with --case.
  std::size_t next_index = 0;
  std::optional<ShardRecord> shard;
};

/// `config` expanded against the kernel sets' Triton versions, cut to `only_cases`
/// (--case; empty: all) and to `shard` (--shard). Throws lp::UsageError for an id not in
/// the plan or a shard count above its cases.
PlannedRun plan_for(const SweepConfig& config, const std::vector<std::string>& versions,
                    const std::vector<std::string>& only_cases, const std::optional<Shard>& shard);

/// Throws lp::UsageError "<config>: the plan has no case: ..." for an empty plan.
void require_cases(const Plan& plan, const SweepConfig& config);

}  // namespace lp::plan
