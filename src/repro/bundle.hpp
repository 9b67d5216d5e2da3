#pragma once
// Repro bundles: everything a Triton or NVIDIA engineer needs to see one hazardous
// kernel for themselves, in one folder, made without a GPU from a report and the
// kernel sets (`loraprobe repro`, `sweep --save-repro`):
//   kernel.ptx      the PTX the case's Triton generated
//   kernel.cubin    the cubin that ran (the set's prebuilt one, or compiled again here
//                   by the report's ptxas, its sha256 checked against the report)
//   kernel.sass     nvdisasm's listing, the race marked: the in-flight HGMMA, the wait
//                   that leaves it in flight, and every instruction that touches it
//   ptxas.txt       the exact ptxas command line, its version and sha256
//   case.json       a sweep config of exactly this case (same id, seed and repeats)
//   case-record.json the case as the report holds it
//   README.md       the command that re-runs exactly this case, and a paragraph ready
//                   to paste into a Triton or NVIDIA bug report

#include <optional>
#include <string>
#include <vector>

#include "formats/document.hpp"

namespace lp::repro {

struct BundleOptions {
  std::vector<std::string> kernel_dirs;  ///< --kernel-dir sets besides the embedded ones
  std::optional<std::string> nvdisasm;   ///< path; otherwise searched
  /// --ptxas specs the user trusts: a case compiled by a ptxas is rebuilt with the
  /// binary here whose sha256 the report recorded, found among these, the toolkit's
  /// and .tools'; never by the path the report names (it may come from anyone).
  std::vector<std::string> ptxas;
};

struct Bundle {
  std::string dir;
  std::vector<std::string> files;  ///< names written, in order
  std::vector<std::string> notes;  ///< what the bundle could not hold, and why
};

/// Writes the bundle of case `case_id` of `report` into `dir` (created). Throws
/// lp::UsageError for a case the report does not have, one without a kernel variant,
/// or one whose ptxas (by sha256) is not among the trusted ones (the message says
/// which --ptxas to pass); lp::EnvironmentError when its kernel set is not here.
Bundle write_bundle(const formats::Document& report, const std::string& case_id, const std::string& dir,
                    const BundleOptions& options);

/// sweep --save-repro: one bundle per (variant, Triton, compiler) with a FAIL or
/// LATENT case, for its first such case, in DIR/<variant>-t<triton>-<compiler>.
std::vector<Bundle> save_bundles(const formats::Document& report, const std::string& dir,
                                 const BundleOptions& options);

}  // namespace lp::repro
