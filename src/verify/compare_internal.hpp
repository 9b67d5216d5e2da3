#pragma once
// Glue between the public comparison API and its two implementations (host twin in
// compare.cpp, device kernel in compare_device.cu). Not for use outside src/verify.

#include <cstddef>

#include "verify/compare.hpp"
#include "verify/compare_element.hpp"

namespace lp::compare_detail {

/// The POD layout the kernel and the twin index with. Throws lp::Error for a tile
/// shape that is not positive.
KernelLayout kernel_layout(const CompareLayout& layout, const TileShape& tile);

/// The per-element rule from a spec and the dtype's poison.
ElementRule element_rule(const CompareSpec& spec);

/// Throws lp::Error unless a buffer of `bytes` holds exactly the layout's elements of `dtype`.
void check_size(const CompareLayout& layout, DType dtype, std::size_t bytes, const char* what);

/// A block with zero counters and no first bad element.
MetricsBlock empty_block();

/// The public metrics from a filled block.
CompareMetrics to_metrics(const CompareLayout& layout, const CompareSpec& spec, const MetricsBlock& block);

}  // namespace lp::compare_detail
