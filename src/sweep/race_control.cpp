#include "sweep/race_control.hpp"

#include <cmath>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "cuda/memory.hpp"
#include "cuda/module.hpp"
#include "cuda/stream.hpp"
#include "kernels/embedded.hpp"
#include "util/error.hpp"

namespace lp::sweep {

using nlohmann::json;

namespace {

constexpr unsigned k_threads = 128;           // one warpgroup per tile
constexpr unsigned k_outputs_per_thread = 4;  // the m64n8k16 accumulators
constexpr unsigned k_keep_per_thread = 8;     // 32 bytes: the kernel stores 16-byte vectors
constexpr unsigned k_smem_bytes = 32 * 1024;
constexpr std::uint32_t k_a_old = 0x3F803F80U;  // bf16x2 (1.0, 1.0): the A the wgmma is issued with
constexpr std::uint32_t k_a_new = 0x40404040U;  // bf16x2 (3.0, 3.0): what the next trip writes

}  // namespace

json RaceResult::to_json() const {
  json seen = json::object();
  for (const auto& [v, n] : values) {
    seen[fmt::format("{}", v)] = n;
  }
  return {{"ctas", ctas},
          {"launches", launches},
          {"tiles", tiles},
          {"late_tiles", late_tiles},
          {"late_elements", late_elements},
          {"launches_with_late", launches_with_late},
          {"unwritten", unwritten},
          {"values", seen}};
}

RaceResult RaceResult::from_json(const json& j) {
  try {
    RaceResult r;
    r.ctas = j.at("ctas").get<unsigned>();
    r.launches = j.at("launches").get<unsigned>();
    r.tiles = j.at("tiles").get<std::uint64_t>();
    r.late_tiles = j.at("late_tiles").get<std::uint64_t>();
    r.late_elements = j.at("late_elements").get<std::uint64_t>();
    r.launches_with_late = j.at("launches_with_late").get<std::uint64_t>();
    r.unwritten = j.at("unwritten").get<std::uint64_t>();
    for (const auto& [v, n] : j.at("values").items()) {
      r.values[std::stof(v)] = n.get<std::uint64_t>();
    }
    return r;
  } catch (const std::exception& e) {
    throw Error(fmt::format("malformed race-control result: {}", e.what()));
  }
}

std::string_view race_control_ptx() {
  const std::optional<std::string_view> ptx = kernels::embedded_file("race/race-control.ptx");
  if (!ptx) {
    throw Error("this loraprobe was built without kernels/race/race-control.ptx");
  }
  return *ptx;
}

RaceResult run_race_kernel(std::string_view cubin, unsigned ctas, unsigned launches, const Stream& stream) {
  const Module module(cubin);
  CUfunction fn = module.function("race_control");
  const std::size_t outputs = std::size_t{ctas} * k_threads * k_outputs_per_thread;
  DeviceBuffer out(outputs * sizeof(float));
  DeviceBuffer keep(std::size_t{ctas} * k_threads * k_keep_per_thread * sizeof(std::uint32_t));
  std::vector<float> host(outputs);
  CUdeviceptr out_ptr = out.get();
  CUdeviceptr keep_ptr = keep.get();
  std::uint32_t a_old = k_a_old;
  std::uint32_t a_new = k_a_new;
  std::uint32_t zero = 0;   // unknown to ptxas: keeps the overwrite after the filler chain
  std::uint32_t trips = 2;  // a run-time trip count, so ptxas keeps the loop
  void* args[] = {&out_ptr, &keep_ptr, &a_old, &a_new, &zero, &trips};
  LaunchConfig config;
  config.grid[0] = ctas;
  config.block[0] = k_threads;
  config.shared_bytes = k_smem_bytes;
  RaceResult r;
  r.ctas = ctas;
  r.launches = launches;
  r.tiles = std::uint64_t{ctas} * launches;
  for (unsigned launch = 0; launch < launches; ++launch) {
    out.fill_u8(0xFF, stream);  // NaN everywhere: an element nothing wrote stays NaN
    launch_kernel(fn, config, args, stream.get());
    out.copy_to_host(host.data(), host.size() * sizeof(float), stream);
    stream.synchronize();
    bool any_late = false;
    for (unsigned cta = 0; cta < ctas; ++cta) {
      std::uint64_t late_here = 0;
      const float* tile = host.data() + std::size_t{cta} * k_threads * k_outputs_per_thread;
      for (std::size_t i = 0; i < std::size_t{k_threads} * k_outputs_per_thread; ++i) {
        if (std::isnan(tile[i])) {
          ++r.unwritten;
          continue;
        }
        ++r.values[tile[i]];
        late_here += tile[i] != k_race_clean_value ? 1 : 0;
      }
      r.late_elements += late_here;
      r.late_tiles += late_here > 0 ? 1 : 0;
      any_late = any_late || late_here > 0;
    }
    r.launches_with_late += any_late ? 1 : 0;
  }
  return r;
}

json race_outcome(const std::string& compiler, std::optional<std::size_t> static_findings,
                  const std::optional<RaceResult>& result, const std::string& error) {
  json out = {{"ran", result.has_value()},
              {"compiler", compiler},
              {"static_findings", static_findings ? json(*static_findings) : json()},
              {"result", result ? result->to_json() : json()},
              {"shows", nullptr}};
  if (!result) {
    out["summary"] = fmt::format("the race control did not run: {}", error);
    return out;
  }
  if (result->unwritten > 0) {
    out["summary"] = fmt::format("the race control left {} elements unwritten: its result says nothing",
                                 result->unwritten);
    return out;
  }
  if (!static_findings || *static_findings == 0) {
    out["summary"] = fmt::format(
        "the race control's SASS ({}) {}: it cannot show the race here", compiler,
        static_findings ? "has no wgmma hazard (ptxas serialised its wgmma)" : "could not be inspected");
    return out;
  }
  out["shows"] = result->late_tiles > 0;
  if (result->late_tiles > 0) {
    out["summary"] = fmt::format(
        "this GPU reads wgmma A registers late: {} of {} tiles ({} of {} launches) read the A written after the "
        "wgmma; the LATENT cases are a real risk here",
        result->late_tiles, result->tiles, result->launches_with_late, result->launches);
  } else {
    out["summary"] = fmt::format(
        "this GPU did not read wgmma A registers late in {} tiles ({} launches) of the race control; LATENT "
        "remains a static proof without a run-time witness here",
        result->tiles, result->launches);
  }
  return out;
}

}  // namespace lp::sweep
