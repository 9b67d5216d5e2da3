#pragma once
// The race control (docs/race-control.md): hand-written PTX in which the A
// registers of a pending register-A wgmma are overwritten before the
// wgmma.wait_group that retires it, with 16 shared-memory wgmmas queued ahead so
// the tensor pipe is busy. Every output element is 64.0 when the wgmma read the A
// it was issued with; anything else means the tensor core read A registers after
// the instruction that overwrote them: the hazard the LATENT cases have in their
// SASS, shown happening on this GPU.
//
// The parent compiles the embedded PTX (kernels/race/race-control.ptx) with the
// toolkit's ptxas and checks its SASS; a worker runs the cubin
// (worker/race_kernel.hpp); race_outcome() turns both into the report's
// controls.race record.

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "protocol/protocol.hpp"
#include "report/blocks.hpp"

namespace lp::sweep {

/// The embedded race-control PTX (kernels/race/race-control.ptx). Throws lp::Error
/// when the binary was built without it.
std::string_view race_control_ptx();

/// The race control's cubin and what its SASS holds, or why there is none.
struct RaceCubin {
  std::string compiler = "ptxas=toolkit";
  std::string cubin;
  std::optional<std::size_t> findings;
  std::string error;          ///< set when it could not be compiled
  std::string inspect_error;  ///< set when its SASS could not be inspected
};

/// Compiles the race control with the toolkit's ptxas (`findings` unset): CPU work,
/// which the sweep runs in a thread beside the rest of its preparation. Never throws.
RaceCubin compile_race_control();

/// `compiled` with its SASS inspected (with `nvdisasm`, or the one sass::find_nvdisasm
/// finds): `findings`, or `inspect_error`. The worker needs only the cubin, so the
/// sweep runs the race while this runs. Never throws.
RaceCubin inspect_race_control(RaceCubin compiled, const std::optional<std::string>& nvdisasm);

/// The controls.race record. `static_findings` is the number of wgmma hazard
/// findings in the cubin's SASS (nullopt when it could not be inspected); `result`
/// the GPU's answer (worker/race_kernel.hpp), or nullopt with `error` saying why not.
/// "shows" is true when a tile read the overwritten A, false when none did, null
/// when the control could not say (no hazard in its SASS, or no result).
report::RaceRecord race_outcome(const std::string& compiler, std::optional<std::size_t> static_findings,
                                const std::optional<protocol::RaceResult>& result, const std::string& error);

}  // namespace lp::sweep
