#pragma once
// The magnitudes of generated inputs (verify/inputs.hpp draws them on the device);
// the tolerance model bounds errors with the same numbers, so they live here, in
// the host model both sides share.

namespace lp {

/// Magnitude range of generated values: |v| in [lo, hi], sign uniform.
struct ValueRange {
  float lo;
  float hi;
};

inline constexpr ValueRange k_activation_range{0.25f, 2.0f};
inline constexpr ValueRange k_weight_range{0.02f, 0.1f};

}  // namespace lp
