// sweep --shard: the partition of a plan (a union that is exactly the plan, disjoint,
// deterministic, balanced) over many plans, and the forms of --shard, by hand and from
// a scheduler's environment.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "plan/config.hpp"
#include "plan/shard.hpp"
#include "util/error.hpp"

namespace lp::plan {
namespace {

Plan plan_of_axes(const std::string& axes) {
  const std::string text = fmt::format(R"({{"name": "shard-test", "axes": {{{}}}, "repeats": 3, "seed": 1}})", axes);
  return expand_plan(parse_config(text, "shard-test.json"), {"3.6.0", "3.7.1", "3.8.0", "3.9.0"});
}

TEST(Shard, EveryPlanSplitsIntoDisjointBalancedDeterministicParts) {
  const std::vector<std::string> plans = {
      R"("triton": ["3.6.0"], "op": ["expand"], "tokens": [16])",
      R"("op": ["expand"], "tokens": {"from": 16, "to": 8192, "mul": 2}, "rank": [16, 64])",
      R"("op": ["expand", "shrink"], "tokens": [16, 4096, 65536], "hidden": [2048, 8192], "block_n": [32, 128])",
      R"("op": ["expand"], "num_slices": [3], "hidden": [[4096, 1024, 1024]], "tokens": {"from": 1, "to": 1000, "step": 37})",
  };
  for (const std::string& axes : plans) {
    const Plan whole = plan_of_axes(axes);
    ASSERT_FALSE(whole.cases.empty()) << axes;
    std::uint64_t total = 0;
    std::uint64_t costliest = 0;
    for (const Case& c : whole.cases) {
      total += case_cost(c);
      costliest = std::max(costliest, case_cost(c));
    }
    for (const std::size_t count : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{8}, std::size_t{64}}) {
      SCOPED_TRACE(fmt::format("{} / {} shards", axes, count));
      EXPECT_EQ(assign_shards(whole, count), assign_shards(plan_of_axes(axes), count));  // deterministic
      std::multiset<std::string> union_ids;
      std::uint64_t max_load = 0;
      if (count > whole.cases.size()) {
        // A shard would be empty: refused, as merge refuses such a count.
        Plan part = plan_of_axes(axes);
        EXPECT_THROW(keep_shard(part, {0, count}), UsageError);
        continue;
      }
      for (std::size_t i = 0; i < count; ++i) {
        Plan part = plan_of_axes(axes);
        keep_shard(part, {i, count});
        std::uint64_t load = 0;
        std::size_t last = 0;
        for (const Case& c : part.cases) {
          union_ids.insert(c.id);
          load += case_cost(c);
          EXPECT_TRUE(last == 0 || c.index > last) << "plan order";
          last = c.index;
        }
        max_load = std::max(max_load, load);
      }
      std::multiset<std::string> plan_ids;
      for (const Case& c : whole.cases) {
        plan_ids.insert(c.id);
      }
      EXPECT_EQ(union_ids, plan_ids);  // exactly the plan: nothing lost, nothing twice
      // The stated bound: no shard's cost exceeds the mean by more than the costliest case.
      EXPECT_LE(static_cast<double>(max_load), static_cast<double>(total) / static_cast<double>(count) +
                                                    static_cast<double>(costliest));
    }
  }
}

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const char* name) -> std::optional<std::string> {
    const auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

std::string refusal(const std::string& text, const std::map<std::string, std::string>& vars = {}) {
  try {
    const Shard s = parse_shard(text, env_of(vars));
    return fmt::format("{}/{}", s.index, s.count);
  } catch (const UsageError& e) {
    return e.what();
  }
}

TEST(Shard, ByHandAndFromTheScheduler) {
  EXPECT_EQ(refusal("3/8"), "3/8");
  EXPECT_EQ(refusal("0/1"), "0/1");
  EXPECT_EQ(refusal("8/8"), "--shard 8/8: index 8 of 8 shards: 0 <= I < N");
  EXPECT_EQ(refusal("0/0"), "--shard 0/0: index 0 of 0 shards: 0 <= I < N");
  EXPECT_EQ(refusal("3"), "--shard 3: write I/N (0 <= I < N), auto/N or auto");
  EXPECT_EQ(refusal("1/x"), "--shard 1/x: the count after '/' must be a whole number (--shard 3/8)");
  // Slurm: the array task, its count, and an array that does not start at 0.
  EXPECT_EQ(refusal("auto", {{"SLURM_ARRAY_TASK_ID", "5"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}), "5/8");
  EXPECT_EQ(refusal("auto/8", {{"SLURM_ARRAY_TASK_ID", "5"}}), "5/8");
  EXPECT_EQ(refusal("auto", {{"SLURM_ARRAY_TASK_ID", "6"}, {"SLURM_ARRAY_TASK_MIN", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}),
            "5/8");
  EXPECT_EQ(refusal("auto/4", {{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}),
            "--shard auto/4: SLURM_ARRAY_TASK_COUNT=8 says otherwise");
  EXPECT_EQ(refusal("auto", {{"SLURM_ARRAY_TASK_ID", "8"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}),
            "--shard auto: index 8 of 8 shards: 0 <= I < N");
  EXPECT_EQ(refusal("auto", {{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "8"}}),
            "--shard auto: SLURM_ARRAY_TASK_ID=x is not a whole number");
  // Kubernetes: the index only; the count is the command's.
  EXPECT_EQ(refusal("auto/8", {{"JOB_COMPLETION_INDEX", "7"}}), "7/8");
  EXPECT_EQ(refusal("auto", {{"JOB_COMPLETION_INDEX", "7"}}),
            "--shard auto: no count: SLURM_ARRAY_TASK_COUNT is not set; write --shard auto/N (N: the array's size, a "
            "Kubernetes Job's completions)");
  EXPECT_EQ(refusal("auto/8", {{"JOB_COMPLETION_INDEX", "2"}, {"SLURM_ARRAY_TASK_ID", "3"}}),
            "--shard auto/8: SLURM_ARRAY_TASK_ID gives index 3 and JOB_COMPLETION_INDEX 2; unset one");
  EXPECT_EQ(refusal("auto/8"),
            "--shard auto/8: neither SLURM_ARRAY_TASK_ID (a Slurm array job) nor JOB_COMPLETION_INDEX (a Kubernetes "
            "Indexed Job) is set");
}

}  // namespace
}  // namespace lp::plan
