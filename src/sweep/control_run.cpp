#include "sweep/control_run.hpp"

#include <fmt/format.h>

namespace lp::sweep {

using report::Verdict;

void ControlRun::start_race() {
  if (!m_request.controls || m_race_inspected.valid()) {
    return;
  }
  auto compiled = std::make_shared<std::promise<RaceCubin>>();
  m_race_cubin = compiled->get_future();
  m_race_inspected = std::async(std::launch::async, [compiled, nvdisasm = m_request.nvdisasm] {
    RaceCubin cubin = compile_race_control();
    compiled->set_value(cubin);
    return inspect_race_control(std::move(cubin), nvdisasm);
  });
}

std::size_t ControlRun::make_entries(const plan::Plan& plan, const kernels::KernelSets& sets,
                                     const std::vector<std::string>& tritons, std::uint64_t seed,
                                     std::size_t first_index, ImageSet& images) {
  std::size_t next_index = first_index;
  for (const std::string& triton : tritons) {
    m_pairs.push_back(control_entries(sets.at(triton), seed, next_index, m_cases, images));
    next_index += 2;
  }
  for (AmplifiedControlEntry& a :
       amplified_control_entries(plan, sets, tritons, seed, next_index, m_cases, images, m_amplified_notes)) {
    Pending& pending = m_amplified.emplace_back();
    pending.pair.triton = a.triton;
    pending.role = a.role;
    pending.entry = std::move(a.entry);
  }
  return next_index;
}

void ControlRun::settle(const ImageSet& images) {
  for (Pending& a : m_amplified) {
    std::vector<Entry> one = {a.entry};
    settle_amplification(one, images);
    a.entry = std::move(one.front());
  }
}

bool ControlRun::run(EntryRunner& runner, Workers& workers) {
  bool valid = true;
  for (const ControlEntries& pair : m_pairs) {
    Pending& ran = m_ran.emplace_back();
    ran.entries = &pair;
    ran.pair.triton = pair.triton;
    ran.pair.positive = runner.run(workers.first(), pair.positive, {}, ran.positive);
    ran.pair.negative = runner.run(workers.first(), pair.negative, {}, ran.negative);
    valid = valid && control_problem(ran.pair).empty();
  }
  for (Pending& a : m_amplified) {
    a.pair.positive = runner.run(workers.first(), a.entry, {}, a.positive);
    valid = valid && a.pair.positive.verdict == Verdict::pass;
  }
  // The race control says whether this GPU shows the hazard at run time; it never
  // makes a run invalid (a GPU that does not show it is a finding, not a broken detector).
  run_race(workers);
  m_pending = true;
  return valid;
}

std::optional<report::Controls> ControlRun::take_record(EntryRunner& runner) {
  if (!m_pending) {
    return std::nullopt;
  }
  m_pending = false;
  std::vector<ControlPair> pairs;
  for (Pending& ran : m_ran) {
    ControlPair& pair = pairs.emplace_back(ran.pair);
    pair.positive = runner.final_record(ran.entries->positive, ran.pair.positive, ran.positive);
    pair.negative = runner.final_record(ran.entries->negative, ran.pair.negative, ran.negative);
  }
  std::vector<AmplifiedControl> amplified;
  for (Pending& a : m_amplified) {
    amplified.push_back(
        {a.pair.triton, a.role, a.entry.amplify, runner.final_record(a.entry, a.pair.positive, a.positive)});
  }
  return controls_record(pairs, amplified, m_amplified_notes, race_record());
}

void ControlRun::run_race(Workers& workers) {
  start_race();
  const RaceCubin compiled = m_race_cubin.get();
  if (!compiled.error.empty()) {
    m_race_error = compiled.error;
    return;
  }
  DeviceSlot& slot = workers.first();
  workers.ensure_worker(slot);
  m_race_result = slot.client->race({compiled.cubin, protocol::k_race_ctas, protocol::k_race_launches},
                                    m_request.case_timeout, m_race_error);
}

report::RaceRecord ControlRun::race_record() {
  const RaceCubin inspected = m_race_inspected.get();
  if (!inspected.inspect_error.empty()) {
    fmt::print(stderr, "sweep: warning: the race control's SASS could not be inspected: {}\n",
               inspected.inspect_error);
  }
  return race_outcome(inspected.compiler, inspected.findings, m_race_result, m_race_error);
}

}  // namespace lp::sweep
