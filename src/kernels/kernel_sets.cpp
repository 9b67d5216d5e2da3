#include "kernels/kernel_sets.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/error.hpp"
#include "util/release.hpp"

namespace lp::kernels {

namespace {

Release release_of(const KernelSet& set) {
  // parse_manifest refused any triton_version that is not a release.
  return parse_release(set.triton()).value_or(Release{});
}

}  // namespace

KernelSets KernelSets::load(const std::vector<std::string>& kernel_dirs) {
  KernelSets out;
  out.m_sets = KernelSet::embedded_sets();
  std::vector<std::string> from_dirs;
  for (const std::string& dir : kernel_dirs) {
    KernelSet set = KernelSet::from_directory(dir);
    if (std::find(from_dirs.begin(), from_dirs.end(), set.triton()) != from_dirs.end()) {
      throw UsageError(fmt::format("--kernel-dir {}: a second set of Triton {}; give one folder per Triton version",
                                   dir, set.triton()));
    }
    from_dirs.push_back(set.triton());
    std::erase_if(out.m_sets, [&](const KernelSet& s) { return s.triton() == set.triton(); });
    out.m_sets.push_back(std::move(set));
  }
  std::sort(out.m_sets.begin(), out.m_sets.end(),
            [](const KernelSet& a, const KernelSet& b) { return release_of(a) < release_of(b); });
  for (std::size_t i = 1; i < out.m_sets.size(); ++i) {
    if (out.m_sets[i].triton() == out.m_sets[i - 1].triton()) {
      throw Error(fmt::format("two embedded kernel sets record Triton {} ({} and {})", out.m_sets[i].triton(),
                              out.m_sets[i - 1].origin(), out.m_sets[i].origin()));
    }
  }
  return out;
}

std::vector<std::string> KernelSets::versions() const {
  std::vector<std::string> out;
  for (const KernelSet& s : m_sets) {
    out.push_back(s.triton());
  }
  return out;
}

std::string KernelSets::versions_text() const {
  std::vector<std::string> out;
  for (const KernelSet& s : m_sets) {
    out.push_back(s.triton());
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

const KernelSet* KernelSets::find(std::string_view triton) const {
  for (const KernelSet& s : m_sets) {
    if (s.triton() == triton) {
      return &s;
    }
  }
  return nullptr;
}

const KernelSet& KernelSets::at(std::string_view triton) const {
  if (const KernelSet* s = find(triton)) {
    return *s;
  }
  throw UsageError(fmt::format("no kernel set of Triton {} (sets: {}; add one with --kernel-dir)", triton,
                               versions_text()));
}

}  // namespace lp::kernels
