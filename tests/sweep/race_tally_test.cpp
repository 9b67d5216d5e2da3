// The race control's host-side count (worker/race_kernel.hpp), on outputs made up
// here: the same tally whatever the number of threads, runs split across them
// included.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "util/error.hpp"
#include "worker/race_kernel.hpp"

namespace lp {
namespace {

using protocol::k_race_clean_value;
using protocol::RaceResult;

constexpr unsigned k_tiles = 6;
constexpr std::size_t k_per_tile = 8;

/// Tile 1 has one late element, tile 2 two unwritten ones, tile 3 is late throughout
/// with the value the hazard leaves (near 1e37); the rest are clean.
std::vector<float> one_launch() {
  std::vector<float> out(k_tiles * k_per_tile, k_race_clean_value);
  out[1 * k_per_tile + 4] = 65.0F;
  out[2 * k_per_tile + 0] = std::nanf("");
  out[2 * k_per_tile + 7] = std::nanf("");
  for (std::size_t i = 0; i < k_per_tile; ++i) {
    out[3 * k_per_tile + i] = 1.0e37F;
  }
  return out;
}

TEST(RaceTally, CountsLateTilesUnwrittenElementsAndEveryValueWhateverTheThreads) {
  for (const std::size_t threads : {1U, 2U, 3U, 4U, 16U}) {
    RaceResult r;
    worker::tally_race_launch(one_launch(), k_tiles, threads, r);
    EXPECT_EQ(r.late_tiles, 2U) << threads << " threads";
    EXPECT_EQ(r.late_elements, 1U + k_per_tile) << threads << " threads";
    EXPECT_EQ(r.unwritten, 2U) << threads << " threads";
    EXPECT_EQ(r.launches_with_late, 1U) << threads << " threads";
    const std::map<float, std::uint64_t> expected = {
        {k_race_clean_value, k_tiles * k_per_tile - 1 - 2 - k_per_tile}, {65.0F, 1}, {1.0e37F, k_per_tile}};
    EXPECT_EQ(r.values, expected) << threads << " threads";
  }
}

TEST(RaceTally, LaunchesAddUpAndACleanOneIsNotLate) {
  RaceResult r;
  worker::tally_race_launch(one_launch(), k_tiles, 2, r);
  worker::tally_race_launch(std::vector<float>(k_tiles * k_per_tile, k_race_clean_value), k_tiles, 2, r);
  EXPECT_EQ(r.launches_with_late, 1U);
  EXPECT_EQ(r.late_tiles, 2U);
  EXPECT_EQ(r.values.at(k_race_clean_value), 2 * k_tiles * k_per_tile - 1 - 2 - k_per_tile);
}

TEST(RaceTally, OutputsThatDoNotMakeWholeTilesAreAnError) {
  RaceResult r;
  EXPECT_THROW(worker::tally_race_launch(std::vector<float>(k_tiles * k_per_tile + 1), k_tiles, 1, r), Error);
  EXPECT_THROW(worker::tally_race_launch(std::vector<float>(8), 0, 1, r), Error);
}

}  // namespace
}  // namespace lp
