#pragma once
// The Python that `loraprobe check` runs with the user's interpreter, embedded in the
// binary (cmake/embed_tree.cmake): the kernel generator (scripts/gen_kernels.py,
// scripts/kernelgen/), loraprobe's kernel sources (kernels/triton/), vLLM's defaults
// (configs/vllm/defaults.json) and the probe (scripts/check/probe.py). A wheel install
// has no source tree; these files are laid out in a temporary folder as in a checkout.

#include <span>
#include <string>
#include <string_view>

namespace lp::stack {

/// One embedded file: its path relative to the source tree, and its text.
struct TreeFile {
  std::string_view path;
  std::string_view text;
};

/// Every embedded file, in the order src/stack/CMakeLists.txt lists them.
std::span<const TreeFile> python_tree();

/// The text of the embedded file at `path`; throws lp::Error when there is none.
std::string_view tree_file(std::string_view path);

/// Writes every embedded file under `dir`, folders made, as in a checkout. Throws
/// lp::Error when a file cannot be written.
void write_python_tree(const std::string& dir);

}  // namespace lp::stack
