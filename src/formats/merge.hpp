#pragma once
// loraprobe merge: the reports (or, for shards that died, the journals) of the
// shards of one plan (sweep --shard I/N) put back together into the report one
// unsharded run would have written, apart from timestamps, argv and environment.
// The parts must share the plan (its sha256 and size), the shard count, loraprobe's
// version, the schema, the kernel sets, the config and --fail-on; every shard must
// be there once, each whole, unless --allow-partial marks the result incomplete.
// The summary (counts, first and minimal failure, exit code) is computed afresh;
// every part's environment and controls are kept under meta.merged.parts.

#include <string>
#include <vector>

#include "report/report.hpp"

namespace lp::formats {

struct MergeOptions {
  bool allow_partial = false;  ///< a missing shard, or a journal that stops short, is not an error
};

/// Throws lp::InputError ("<file>:<pointer>: ...") for a part that cannot be merged,
/// lp::UsageError naming the missing shards when the union is not the whole plan.
report::Report merge_reports(const std::vector<std::string>& paths, const MergeOptions& options);

}  // namespace lp::formats
