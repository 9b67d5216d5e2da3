#include "formats/merge.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "formats/document.hpp"
#include "report/journal.hpp"
#include "util/error.hpp"
#include "util/json_in.hpp"
#include "util/sha256.hpp"

namespace lp::formats {

using nlohmann::json;
using report::CaseRecord;

namespace {

/// What every part of one plan must share, as each part says it.
constexpr std::array<const char*, 6> k_identity = {"schema_version", "version",      "git_sha",
                                                   "kernel_sets",    "config_sha256", "fail_on"};

struct Part {
  std::string path;
  bool journal = false;
  std::string pointer_prefix;  ///< "/meta" for a report, "" for a journal's header line
  json identity = json::object();
  report::ShardRecord shard;  ///< checked by shard_of
  report::Meta meta;  ///< a report's (a journal has none)
  std::set<report::Verdict> fail_on;  ///< a report's
  report::Environment environment;
  std::optional<report::Controls> controls;  ///< a journal's, once its controls ran
  report::Tolerances tolerances;
  std::vector<report::VariantRecord> variants;
  report::CaseStore cases;
  std::size_t planned = 0;  ///< the shard's own case count
};

bool is_journal(const std::string& path) { return path.size() > 6 && path.substr(path.size() - 6) == ".jsonl"; }

/// The shard record of a part (read with index < count), and count <= plan_cases: at
/// least one case per shard, as sweep --shard makes them, so no forged count passes a
/// merge for complete or makes it allocate per shard.
report::ShardRecord shard_of(const std::string& path, const std::string& pointer_prefix,
                             const std::optional<report::ShardRecord>& shard) {
  if (!shard) {
    throw InputError(path, pointer_prefix + "/shard", "missing: not a shard of a sweep (sweep --shard I/N writes one)");
  }
  const std::size_t most = std::max<std::size_t>(shard->plan_cases, 1);
  if (shard->count > most) {
    throw InputError(path, pointer_prefix + "/shard/count",
                     whole_out_of_range(1, static_cast<std::int64_t>(most), std::to_string(shard->count)));
  }
  return *shard;
}

Part read_report_part(const std::string& path) {
  Document doc = read_document(path);
  if (doc.kind != DocumentKind::report) {
    throw InputError(path, "/meta/command", "an inspect document; merge joins sweep reports");
  }
  const std::string version = text(*doc.json, "schema_version");
  if (version.substr(0, version.find('.')) != std::string(report::schema_version()).substr(0, 1)) {
    throw InputError(path, "/schema_version",
                     fmt::format("report {}: shards are reports of schema {} (sweep --shard)", version,
                                 report::schema_version()));
  }
  Part p;
  p.path = path;
  p.pointer_prefix = "/meta";
  p.meta = std::move(doc.meta);
  p.fail_on = std::move(doc.fail_on);
  p.shard = shard_of(path, p.pointer_prefix, p.meta.shard);
  // As a journal's header says them, to compare the two kinds of part alike.
  const json full_meta = p.meta.to_json();
  for (const char* key : k_identity) {
    p.identity[key] = key == std::string("schema_version") ? member(*doc.json, key) : member(full_meta, key);
  }
  json fail_on = json::array();
  for (const report::Verdict v : p.fail_on) {
    fail_on.push_back(report::to_string(v));
  }
  p.identity["fail_on"] = std::move(fail_on);
  p.environment = std::move(doc.environment);
  p.controls = std::move(doc.controls);
  p.tolerances = std::move(doc.tolerances);
  p.variants = std::move(doc.variants);
  p.cases = std::move(doc.cases);
  p.planned = p.meta.plan.cases;
  return p;
}

Part read_journal_part(const std::string& path) {
  report::JournalContents j = report::read_journal(path);
  Part p;
  p.path = path;
  p.journal = true;
  p.shard = shard_of(path, p.pointer_prefix, j.header.shard);
  const json header = j.header.to_json();
  for (const char* key : k_identity) {
    p.identity[key] = member(header, key);
  }
  if (j.controls) {
    p.controls = *j.controls;
  }
  for (auto& [id, c] : j.cases) {
    p.cases.push_back(std::move(c));
  }
  p.planned = j.header.cases;
  return p;
}

std::string shard_text(const report::ShardRecord& shard) {
  return fmt::format("shard {} of {}", shard.index, shard.count);
}

/// The variants of all parts: one entry per (variant, Triton, compiler, amplify), in the
/// order an unsharded run writes them (its images' keys, sweep/images.hpp image_key),
/// with the case verdicts summed.
std::vector<report::VariantRecord> merged_variants(const std::vector<Part>& parts) {
  std::map<std::string, report::VariantRecord> by_key;
  for (const Part& p : parts) {
    for (const report::VariantRecord& v : p.variants) {
      const std::string key = fmt::format("{}/{}|{}{}", v.triton, v.variant, v.compiler,
                                          v.amplify ? fmt::format("|amplify={}", *v.amplify) : std::string());
      auto [it, added] = by_key.emplace(key, v);
      if (added || !v.case_verdicts) {
        continue;
      }
      std::map<std::string, std::size_t>& sum = it->second.case_verdicts.emplace(it->second.case_verdicts.value_or(
          std::map<std::string, std::size_t>{}));
      for (const auto& [verdict, n] : *v.case_verdicts) {
        sum[verdict] += n;
      }
    }
  }
  std::vector<report::VariantRecord> out;
  for (auto& [key, v] : by_key) {
    out.push_back(std::move(v));
  }
  return out;
}

/// "" when the merged cases, in plan order, are exactly the plan's: as many as it
/// planned, and their ids hash to its plan_sha256 (plan/shard.hpp). Else what differs.
std::string plan_mismatch(const report::CaseStore& cases, const report::ShardRecord& shard) {
  std::string ids;
  for (const CaseRecord& c : cases) {
    ids += c.id;
  }
  if (cases.size() != shard.plan_cases) {
    return fmt::format("the parts hold {} case(s), the plan {} (plan sha256 {})", cases.size(), shard.plan_cases,
                       shard.plan_sha256.substr(0, 12));
  }
  if (sha256_hex(ids) != shard.plan_sha256) {
    return fmt::format("the parts' {} case ids are not the plan's: they hash to {}, the plan to {}", cases.size(),
                       sha256_hex(ids).substr(0, 12), shard.plan_sha256.substr(0, 12));
  }
  return "";
}

/// The same plan, loraprobe, schema, kernel sets, config and --fail-on in every part.
void require_one_sweep(const std::vector<Part>& parts) {
  const Part& first = parts.front();
  for (const Part& p : parts) {
    const auto same = [&](const char* key, const json& mine, const json& theirs) {
      if (mine != theirs) {
        throw InputError(p.path, p.pointer_prefix + "/shard/" + key,
                         fmt::format("{}, but {} has {}: shards of different plans", mine.dump(), first.path,
                                     theirs.dump()));
      }
    };
    same("plan_sha256", p.shard.plan_sha256, first.shard.plan_sha256);
    same("plan_cases", p.shard.plan_cases, first.shard.plan_cases);
    same("count", p.shard.count, first.shard.count);
    for (const char* key : k_identity) {
      if (p.identity[key] != first.identity[key]) {
        throw InputError(p.path, (key == std::string("schema_version") && !p.journal ? "" : p.pointer_prefix) + "/" + key,
                         fmt::format("{}, but {} has {}: merge the shards of one sweep", p.identity[key].dump(),
                                     first.path, first.identity[key].dump()));
      }
    }
  }
}

/// The parts by shard index, and what was merged: the shards missing, those that
/// stopped short, and (neither) whether the cases are the plan's.
struct Shards {
  std::map<std::size_t, const Part*> by_index;
  std::vector<std::string> short_parts;
  std::vector<std::size_t> missing;
  std::string not_the_plan;

  [[nodiscard]] bool incomplete() const { return !missing.empty() || !short_parts.empty() || !not_the_plan.empty(); }
};

/// Each part under its shard index, once; one that stopped short refused unless
/// --allow-partial, which lists it.
Shards index_shards(const std::vector<Part>& parts, const MergeOptions& options) {
  Shards s;
  for (const Part& p : parts) {
    const auto [it, added] = s.by_index.emplace(p.shard.index, &p);
    if (!added) {
      throw InputError(p.path, p.pointer_prefix + "/shard/index",
                       fmt::format("{} again (also {}): give each shard once, its report or its journal",
                                   shard_text(p.shard), it->second->path));
    }
    if (p.cases.size() != p.planned) {
      const std::string what =
          fmt::format("{}: holds {} of the {} cases of {}", p.path, p.cases.size(), p.planned, shard_text(p.shard));
      if (!options.allow_partial) {
        throw UsageError(fmt::format("merge: {} (a shard that stopped: sweep --resume its journal, or merge "
                                     "--allow-partial)",
                                     what));
      }
      s.short_parts.push_back(what);
    }
  }
  return s;
}

/// The shards of `first`'s plan that no part is; refused unless --allow-partial.
std::vector<std::size_t> missing_shards(const Part& first, const Shards& s, const MergeOptions& options) {
  // Each missing shard is listed (meta.merged.missing_shards): a count far above the parts
  // given is no merge of one sweep, and is refused before the list is built.
  constexpr std::size_t k_max_missing = 4096;
  const std::size_t count = first.shard.count;
  if (count - s.by_index.size() > k_max_missing) {
    throw InputError(first.path, first.pointer_prefix + "/shard/count",
                     fmt::format("{} shards, {} given: more than {} missing", count, s.by_index.size(), k_max_missing));
  }
  std::vector<std::size_t> missing;
  for (std::size_t i = 0; i < count; ++i) {
    if (s.by_index.count(i) == 0) {
      missing.push_back(i);
    }
  }
  if (!missing.empty() && !options.allow_partial) {
    throw UsageError(fmt::format("merge: shard(s) {} of {} missing (plan sha256 {}); give every shard's report or "
                                 "journal, or --allow-partial",
                                 fmt::join(missing, ", "), count, first.shard.plan_sha256.substr(0, 12)));
  }
  return missing;
}

/// The first report among the parts (a journal holds no environment, variants or tolerances).
const Part& base_part(const Shards& s) {
  for (const auto& [index, p] : s.by_index) {
    if (!p->journal) {
      return *p;
    }
  }
  throw UsageError("merge: only journals given; at least one shard's report is needed (a journal holds no "
                   "environment, variants or tolerances)");
}

/// Every part's cases in plan order; a case in two parts refused.
report::CaseStore cases_in_plan_order(const Shards& s) {
  std::map<std::string, std::string> seen_ids;  // id -> part
  // Plan order: (index, part, position in the part).
  std::vector<std::tuple<std::size_t, const Part*, std::size_t>> order;
  for (const auto& [index, p] : s.by_index) {
    std::size_t at = 0;
    for (const CaseRecord& c : p->cases) {
      const auto [it, added] = seen_ids.emplace(c.id, p->path);
      if (!added) {
        throw InputError(p->path, "/cases", fmt::format("case {} is also in {}: parts of one plan share no case", c.id,
                                                        it->second));
      }
      order.emplace_back(c.index, p, at++);
    }
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) < std::get<0>(b); });
  report::CaseStore cases;
  cases.reserve(order.size());
  for (const auto& [index, p, at] : order) {
    cases.push_back(p->cases[at]);
  }
  return cases;
}

/// meta: the base part's, the shard record replaced by what was merged (meta.merged),
/// its times the span of the reports'; and the controls valid only where every part's were.
void record_merge(report::Report& r, const Part& base, const Shards& s) {
  r.meta = base.meta;
  r.meta.shard.reset();
  r.meta.phases_s.reset();
  r.meta.problems.reset();
  r.meta.plan.cases = base.shard.plan_cases;
  std::string started = base.meta.started_at;
  std::string finished = base.meta.finished_at.value_or("");
  report::MergedRecord merged;
  bool controls_valid = true;
  for (const auto& [index, p] : s.by_index) {
    if (!p->journal) {
      started = std::min(started, p->meta.started_at);
      finished = std::max(finished, p->meta.finished_at.value_or(""));
    }
    if (p->controls && p->controls->valid) {
      controls_valid = controls_valid && *p->controls->valid;
    }
    merged.parts.push_back({p->path, p->journal ? "journal" : "report", p->shard, p->cases.size(),
                            p->journal ? std::nullopt : std::optional<report::Environment>(p->environment),
                            p->controls});
  }
  r.meta.started_at = started;
  r.meta.finished_at = finished;
  merged.missing_shards = s.missing;
  merged.short_parts = s.short_parts;
  merged.not_the_plan = s.not_the_plan.empty() ? std::nullopt : std::optional<std::string>(s.not_the_plan);
  merged.incomplete = s.incomplete();
  r.meta.merged = merged.to_json_text();
  r.controls = base.controls.value_or(report::Controls{});
  if (r.controls.valid) {
    r.controls.valid = controls_valid;
  }
}

}  // namespace

report::Report merge_reports(const std::vector<std::string>& paths, const MergeOptions& options) {
  if (paths.empty()) {
    throw UsageError("merge: no part given");
  }
  std::vector<Part> parts;
  for (const std::string& path : paths) {
    parts.push_back(is_journal(path) ? read_journal_part(path) : read_report_part(path));
  }
  require_one_sweep(parts);
  const Part& first = parts.front();
  Shards shards = index_shards(parts, options);
  shards.missing = missing_shards(first, shards, options);
  const Part& base = base_part(shards);
  report::Report r;
  r.cases = cases_in_plan_order(shards);
  // Shard records and case counts can be forged to agree with too few cases; with no
  // shard missing and none short, the ids must still be the plan's.
  if (shards.missing.empty() && shards.short_parts.empty()) {
    shards.not_the_plan = plan_mismatch(r.cases, first.shard);
  }
  if (!shards.not_the_plan.empty() && !options.allow_partial) {
    throw UsageError(
        fmt::format("merge: {}; give every shard's report or journal, or --allow-partial", shards.not_the_plan));
  }
  record_merge(r, base, shards);
  if (shards.incomplete()) {
    r.stop(fmt::format("merged with --allow-partial: {} of {} cases, {} shard(s) missing{}", r.cases.size(),
                       first.shard.plan_cases, shards.missing.size(),
                       shards.not_the_plan.empty() ? "" : "; " + shards.not_the_plan));
  }
  r.environment = base.environment;
  r.tolerances = base.tolerances;
  std::vector<Part> all;
  for (const auto& [index, p] : shards.by_index) {
    all.push_back(*p);
  }
  r.variants = merged_variants(all);
  r.fail_on = base.fail_on;
  return r;
}

}  // namespace lp::formats
