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
// toolkit's ptxas and checks its SASS; a worker runs the cubin; race_outcome()
// turns both into the report's controls.race record.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace lp {
class Stream;
}

namespace lp::sweep {

/// What the race-control kernel produced over `launches` launches of `ctas` tiles.
struct RaceResult {
  unsigned ctas = 0;
  unsigned launches = 0;
  std::uint64_t tiles = 0;               ///< ctas * launches
  std::uint64_t late_tiles = 0;          ///< tiles with any element other than 64.0
  std::uint64_t late_elements = 0;
  std::uint64_t launches_with_late = 0;  ///< launches in which at least one tile was late
  std::uint64_t unwritten = 0;           ///< elements still NaN poison after the launch
  std::map<float, std::uint64_t> values; ///< every written value, with its count

  [[nodiscard]] nlohmann::json to_json() const;
  /// Throws lp::Error on a malformed record.
  static RaceResult from_json(const nlohmann::json& j);
};

/// The launch the sweep's control uses: 132 SMs x 32 tiles, 20 launches.
inline constexpr unsigned k_race_ctas = 132 * 32;
inline constexpr unsigned k_race_launches = 20;
/// The value of every element of a tile that read the A it was issued with.
inline constexpr float k_race_clean_value = 64.0F;

/// The embedded race-control PTX (kernels/race/race-control.ptx). Throws lp::Error
/// when the binary was built without it.
std::string_view race_control_ptx();

/// Worker side: loads `cubin` into the current context and runs it `launches`
/// times over `ctas` tiles, output poisoned before each launch. Throws
/// lp::CudaError (lp::StickyCudaError after a fault in the kernel).
RaceResult run_race_kernel(std::string_view cubin, unsigned ctas, unsigned launches, const Stream& stream);

/// Parent side: the controls.race record. `static_findings` is the number of
/// wgmma hazard findings in the cubin's SASS (nullopt when it could not be
/// inspected); `result` the GPU's answer, or nullopt with `error` saying why not.
/// "shows" is true when a tile read the overwritten A, false when none did, null
/// when the control could not say (no hazard in its SASS, or no result).
nlohmann::json race_outcome(const std::string& compiler, std::optional<std::size_t> static_findings,
                            const std::optional<RaceResult>& result, const std::string& error);

}  // namespace lp::sweep
