#pragma once
// --kernel-dir, shared by every subcommand that reads the kernel set.

#include <string>

#include <CLI/CLI.hpp>

#include "kernels/kernel_set.hpp"

namespace lp::cli {

struct KernelSetOptions {
  std::string kernel_dir;

  void add_to(CLI::App& sub) {
    sub.add_option("--kernel-dir", kernel_dir,
                   "Use the kernel set in DIR (DIR/manifest.json, same format) instead of the embedded one");
  }
  /// The embedded set, or the one in --kernel-dir.
  [[nodiscard]] kernels::KernelSet load() const {
    return kernel_dir.empty() ? kernels::KernelSet::embedded() : kernels::KernelSet::from_directory(kernel_dir);
  }
};

}  // namespace lp::cli
