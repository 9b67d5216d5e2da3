#pragma once
// --kernel-dir and --triton, shared by every subcommand that reads the kernel sets.

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/validators.hpp"
#include "kernels/kernel_sets.hpp"
#include "util/error.hpp"

namespace lp::cli {

struct KernelSetOptions {
  std::vector<std::string> kernel_dirs;
  std::vector<std::string> tritons;  ///< --triton values; empty or "all": every set

  void add_to(CLI::App& sub) {
    sub.add_option("--kernel-dir", kernel_dirs,
                   "Add the kernel set in DIR (made by scripts/gen_kernels.py --out DIR) under the Triton version its "
                   "manifest records; it replaces an embedded set of that version (repeatable)")
        ->check(non_empty());
    sub.add_option("--triton", tritons,
                   "Only the kernel sets of these Triton versions (comma-separated, or all; default all)")
        ->delimiter(',');
  }
  /// The embedded sets plus the --kernel-dir ones.
  [[nodiscard]] std::shared_ptr<const kernels::KernelSets> load() const {
    return std::make_shared<const kernels::KernelSets>(kernels::KernelSets::load(kernel_dirs));
  }
  /// The sets --triton names, in version order. Throws lp::UsageError for a version
  /// without a set.
  [[nodiscard]] std::vector<const kernels::KernelSet*> selected(const kernels::KernelSets& sets) const {
    std::vector<const kernels::KernelSet*> out;
    const bool all = tritons.empty() || std::find(tritons.begin(), tritons.end(), "all") != tritons.end();
    for (const std::string& t : tritons) {
      if (t != "all" && sets.find(t) == nullptr) {
        throw UsageError(fmt::format("--triton {}: no kernel set of that Triton here (sets: {}; add one with "
                                     "--kernel-dir)",
                                     t, sets.versions_text()));
      }
    }
    for (const kernels::KernelSet& s : sets.all()) {
      if (all || std::find(tritons.begin(), tritons.end(), s.triton()) != tritons.end()) {
        out.push_back(&s);
      }
    }
    return out;
  }
};

}  // namespace lp::cli
