#pragma once
// All the kernel sets of a run, one per Triton version: the embedded ones
// (kernels/sets/triton-<version>/) and the --kernel-dir ones. A --kernel-dir set
// joins the `triton` axis under the version its manifest records and takes the place
// of an embedded set of the same version. Sorted by version (3.10.0 after 3.9.0).

#include <string>
#include <string_view>
#include <vector>

#include "kernels/kernel_set.hpp"

namespace lp::kernels {

class KernelSets {
 public:
  /// The embedded sets, with each folder of `kernel_dirs` added (or replacing the
  /// embedded set of its version). Throws lp::UsageError when two folders record the
  /// same Triton version, and as KernelSet::from_directory does.
  static KernelSets load(const std::vector<std::string>& kernel_dirs = {});

  [[nodiscard]] const std::vector<KernelSet>& all() const { return m_sets; }
  /// The Triton versions, in order.
  [[nodiscard]] std::vector<std::string> versions() const;
  /// The set of a Triton version, or nullptr.
  [[nodiscard]] const KernelSet* find(std::string_view triton) const;
  /// The set of a Triton version; throws lp::UsageError naming the versions there are.
  [[nodiscard]] const KernelSet& at(std::string_view triton) const;
  /// The newest version's set (the one a user upgrading to is likeliest to run).
  [[nodiscard]] const KernelSet& newest() const { return m_sets.back(); }
  /// "3.6.0, 3.7.1, 3.8.0, 3.9.0".
  [[nodiscard]] std::string versions_text() const;

 private:
  std::vector<KernelSet> m_sets;
};

}  // namespace lp::kernels
