#include "sweep/remedies.hpp"

#include <functional>
#include <map>

#include <fmt/format.h>

#include "families/family.hpp"
#include "plan/axes.hpp"
#include "report/verdict.hpp"
#include "report/verdict_table.hpp"

namespace lp::sweep {

using nlohmann::json;
using report::Verdict;

namespace {

struct Rule {
  std::string name;
  std::string why;
  std::function<bool(plan::Case&)> apply;  ///< false: the case has that already
};

std::vector<Rule> rules(const std::vector<std::string>& tritons, const std::string& ptxas_13_3) {
  std::vector<Rule> out;
  out.push_back({"block_n 32", "the field workaround (vLLM PR #48638)", [](plan::Case& c) {
                   if (!c.expand || c.fused_moe() || c.expand->block_n == 32) {
                     return false;
                   }
                   c.expand->block_n = 32;
                   return true;
                 }});
  out.push_back({"num_stages 1", "no software pipelining, so no MMA in flight across loop trips", [](plan::Case& c) {
                   if (!c.expand || c.fused_moe() || c.expand->num_stages == 1) {
                     return false;
                   }
                   c.expand->num_stages = 1;
                   return true;
                 }});
  out.push_back({"gdc off", "vLLM without dual-stream LoRA: no programmatic dependent launch, so the expand starts "
                            "after the shrink has finished (the dual-stream hazard, triton #11905, cannot happen)",
                 [](plan::Case& c) {
                   if (!c.gdc) {
                     return false;
                   }
                   c.gdc = false;
                   return true;
                 }});
  out.push_back({"bf16 input", "a bf16 shrink buffer, so the expand reads bf16 from shared memory (vLLM PR #47869)",
                 [](plan::Case& c) {
                   if (!family_of(c.op).traits().register_a_remedies || c.input_dtype == DType::bf16) {
                     return false;
                   }
                   c.input_dtype = DType::bf16;
                   return true;
                 }});
  if (!tritons.empty()) {
    const std::string newest = tritons.back();
    out.push_back({"Triton " + newest, "the newest embedded kernel set with its own ptxas", [newest](plan::Case& c) {
                     if (c.triton == newest && c.compiler.kind == compile::CompilerKind::prebuilt) {
                       return false;
                     }
                     c.triton = newest;
                     c.compiler = compile::Compiler::prebuilt();
                     return true;
                   }});
    if (!ptxas_13_3.empty()) {
      const compile::Compiler ptxas = *compile::Compiler::parse(ptxas_13_3);
      // The same PTX through the newer ptxas: whether ptxas can fix it at all.
      out.push_back({ptxas_13_3, fmt::format("the case's own PTX through a {}+ ptxas", report::fixing_ptxas_version()),
                     [ptxas](plan::Case& c) {
                       if (c.compiler == ptxas) {
                         return false;
                       }
                       c.compiler = ptxas;
                       return true;
                     }});
      out.push_back({fmt::format("Triton {} + {}", newest, ptxas_13_3),
                     fmt::format("the newest kernel set through a {}+ ptxas", report::fixing_ptxas_version()),
                     [newest, ptxas](plan::Case& c) {
                       if (c.triton == newest && c.compiler == ptxas) {
                         return false;
                       }
                       c.triton = newest;
                       c.compiler = ptxas;
                       return true;
                     }});
    }
  }
  return out;
}

// A configuration's hazardous cases at its fewest and most tokens.
struct Chosen {
  report::CaseRecord fewest;
  report::CaseRecord most;
};

// Per configuration (every axis but tokens), its hazardous cases at the fewest and
// most tokens, in the order configurations first appear; `order` gets the keys.
std::map<std::string, Chosen> hazards_by_config(const report::CaseStore& records, std::vector<std::string>& order) {
  std::map<std::string, Chosen> by_config;
  for (const report::CaseRecord& r : records) {
    if (r.verdict != Verdict::latent && r.verdict != Verdict::fail) {
      continue;
    }
    AxisValues key = r.axes;
    key.erase("tokens");
    const auto [it, added] = by_config.emplace(key.dump(), Chosen{r, r});
    if (added) {
      order.push_back(key.dump());
      continue;
    }
    // A configuration's FAIL cases come before its LATENT ones: wrong numbers are what a remedy must fix first.
    const auto rank = [](const report::CaseRecord& c) { return c.verdict == Verdict::fail ? 0 : 1; };
    const auto tokens = [](const report::CaseRecord& c) { return c.axes.integer("tokens").value_or(0); };
    auto& [fewest, most] = it->second;
    if (rank(r) < rank(fewest)) {
      fewest = most = r;
      continue;
    }
    if (rank(r) > rank(fewest)) {
      continue;
    }
    if (tokens(r) < tokens(fewest)) {
      fewest = r;
    }
    if (tokens(r) > tokens(most)) {
      most = r;
    }
  }
  return by_config;
}

}  // namespace

RemedyPlan plan_remedies(const report::CaseStore& records,
                         const std::map<std::string, const plan::Case*>& cases, const std::vector<std::string>& tritons,
                         const std::string& ptxas_13_3) {
  RemedyPlan out;
  std::vector<std::string> order;
  std::map<std::string, Chosen> by_config = hazards_by_config(records, order);
  std::map<std::string, std::size_t> record_by_id;
  std::size_t i = 0;
  for (const report::CaseRecord& r : records) {
    record_by_id[r.id] = i++;
  }
  const std::vector<Rule> all = rules(tritons, ptxas_13_3);
  if (ptxas_13_3.empty()) {
    out.notes.push_back(fmt::format("no ptxas {0} or newer in this run: add --ptxas {0} (or newer) to measure that "
                                    "remedy too",
                                    report::fixing_ptxas_version()));
  }
  for (const std::string& key : order) {
    const auto& [fewest, most] = by_config[key];
    std::vector<const report::CaseRecord*> chosen = {&fewest};
    if (most.id != fewest.id) {
      chosen.push_back(&most);
    }
    for (const report::CaseRecord* hazard : chosen) {
      const auto found = cases.find(hazard->id);
      if (found == cases.end()) {
        continue;
      }
      const std::size_t h = out.hazards.size();
      out.hazards.push_back(*hazard);
      for (const Rule& rule : all) {
        plan::Case n = *found->second;
        if (!rule.apply(n)) {
          continue;
        }
        n.id = plan::case_id(n);
        n.own_axes = nullptr;
        RemedyCase rc{h, rule.name, rule.why, n, std::nullopt};
        if (const auto existing = record_by_id.find(n.id); existing != record_by_id.end()) {
          rc.existing = existing->second;
        }
        out.remedies.push_back(std::move(rc));
      }
    }
  }
  return out;
}

report::Remedies remedies_record(const RemedyPlan& plan, const std::vector<report::CaseRecord>& results) {
  auto kernel_ms = [](const report::CaseRecord& r) -> std::optional<double> {
    return r.timing ? r.timing->kernel_ms : std::nullopt;
  };
  report::Remedies out;
  for (std::size_t h = 0; h < plan.hazards.size(); ++h) {
    const report::CaseRecord& hazard = plan.hazards[h];
    report::HazardRemedies entry{plan::row_label(hazard.axes), hazard.id, hazard.axes.integer("tokens").value_or(0),
                                 hazard.verdict, kernel_ms(hazard), {}};
    for (std::size_t i = 0; i < plan.remedies.size(); ++i) {
      const RemedyCase& rc = plan.remedies[i];
      if (rc.hazard != h) {
        continue;
      }
      const report::CaseRecord& r = results[i];
      const std::optional<double> ms = kernel_ms(r);
      const std::optional<double> base = entry.kernel_ms;
      entry.remedies.push_back({rc.name, rc.why, r.id, r.verdict, r.static_findings, ms,
                                ms && base && *base > 0 ? std::optional<double>(*ms / *base) : std::nullopt,
                                rc.existing.has_value(),
                                r.reason.empty() ? std::nullopt : std::optional<std::string>(r.reason)});
    }
    out.hazards.push_back(std::move(entry));
  }
  out.notes = plan.notes;
  return out;
}

std::vector<report::CaseRecord> remedy_results(const RemedyPlan& plan, const report::CaseStore& cases,
                                               const std::map<std::string, report::CaseRecord>& measured,
                                               const std::vector<report::CaseRecord>& ran,
                                               const std::map<std::string, std::size_t>& index_of_id) {
  std::vector<report::CaseRecord> out;
  for (const RemedyCase& rc : plan.remedies) {
    if (rc.existing) {
      out.push_back(cases[*rc.existing]);
    } else if (const auto it = measured.find(rc.neighbour.id); it != measured.end()) {
      out.push_back(it->second);
    } else {
      out.push_back(ran[index_of_id.at(rc.neighbour.id)]);
    }
  }
  return out;
}

}  // namespace lp::sweep
