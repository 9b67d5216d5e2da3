// The race control on a Hopper GPU (docs/race-control.md): compiled with the
// toolkit's ptxas and run through the code the sweep uses.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/gpu.hpp"
#include "compile/ptxas.hpp"
#include "cuda/context.hpp"
#include "cuda/device_info.hpp"
#include "cuda/driver.hpp"
#include "cuda/stream.hpp"
#include "sweep/race_control.hpp"
#include "worker/race_kernel.hpp"

namespace lp::sweep {
namespace {

TEST(RaceControlOnGpu, EveryTileReadsTheOverwrittenAAndEveryElementIsWritten) {
  LP_REQUIRE_GPU();
  const compile::PtxasInfo ptxas = compile::resolve_ptxas("toolkit");
  const std::string cubin = compile::compile_with_ptxas(ptxas, race_control_ptx(), "race-control").cubin;
  init_driver(false);
  PrimaryContext context(0);
  context.make_current();
  const Stream stream;
  const protocol::RaceResult r = worker::run_race_kernel(cubin, protocol::k_race_ctas, protocol::k_race_launches, stream);
  EXPECT_EQ(r.unwritten, 0U);
  EXPECT_EQ(r.tiles, std::uint64_t{protocol::k_race_ctas} * protocol::k_race_launches);
  // Measured on the H200: every tile of every launch (docs/race-control.md). The
  // control is chosen so that it shows in every run; a GPU that reads A at issue
  // would give 0 here, and this test would say so.
  EXPECT_EQ(r.late_tiles, r.tiles) << protocol::to_json(r).dump();
  EXPECT_EQ(r.launches_with_late, protocol::k_race_launches);
  // Only values a tile can hold: 64 (old A) and 64 + d for A values read late.
  for (const auto& [value, count] : r.values) {
    EXPECT_GE(value, 48.0F) << value;
    EXPECT_LE(value, 96.0F) << value;
  }
}

}  // namespace
}  // namespace lp::sweep
