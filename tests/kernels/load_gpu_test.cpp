// Issue 3 on the device: every cubin of every embedded Triton set and every PTX loads
// with the driver (cuModuleLoadData; PTX through the driver's JIT) and every entry
// resolves. A PTX whose .version is newer than the driver's JIT takes (Triton 3.9's
// 9.4 on a CUDA 13.0 driver) is counted as such, not as a failure: its cubin must load.

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include <fmt/format.h>

#include "support/gpu.hpp"
#include "cuda/check.hpp"
#include "cuda/context.hpp"
#include "cuda/driver.hpp"
#include "cuda/module.hpp"
#include "kernels/kernel_sets.hpp"
#include "util/parallel.hpp"

namespace lp::kernels {
namespace {

TEST(KernelSetOnDevice, EveryCubinAndPtxLoadsAndEveryEntryResolves) {
  LP_REQUIRE_GPU();
  const KernelSets sets = KernelSets::load();
  PrimaryContext context(0);
  context.make_current();
  for (const KernelSet& set : sets.all()) {
    std::vector<const Variant*> ok;
    for (const Variant& v : set.variants()) {
      if (v.ok()) {
        ok.push_back(&v);
      }
    }
    std::atomic<std::size_t> cubins{0};
    std::atomic<std::size_t> ptxs{0};
    std::atomic<std::size_t> ptx_too_new{0};
    std::mutex failures_mutex;
    std::vector<std::string> failures;
    const auto start = std::chrono::steady_clock::now();
    parallel_for(ok.size(), 0, [&](std::size_t i) {
      const Variant& v = *ok[i];
      try {
        LP_CU_CHECK(driver().cuCtxSetCurrent(context.get()));
        const Module cubin(set.contents(*v.cubin));
        EXPECT_NE(cubin.function(v.entry), nullptr);
        ++cubins;
      } catch (const std::exception& e) {
        const std::lock_guard lock(failures_mutex);
        failures.push_back(v.id + " (cubin): " + e.what());
        return;
      }
      try {
        const Module ptx(set.contents(*v.ptx));  // JIT by the driver's own ptxas
        EXPECT_NE(ptx.function(v.entry), nullptr);
        ++ptxs;
      } catch (const std::exception& e) {
        if (std::string(e.what()).find("UNSUPPORTED_PTX_VERSION") != std::string::npos) {
          ++ptx_too_new;
          return;
        }
        const std::lock_guard lock(failures_mutex);
        failures.push_back(v.id + " (PTX): " + e.what());
      }
    });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("kernel set {}: {} ok variants; {} cubins loaded, {} PTX JIT-loaded, {} PTX newer than the driver's "
               "JIT; every entry resolved; Triton {}, {}; {:.1f} s\n",
               set.origin(), ok.size(), cubins.load(), ptxs.load(), ptx_too_new.load(), set.triton(),
               set.manifest().ptxas.version, seconds);
    for (std::size_t i = 0; i < std::min<std::size_t>(failures.size(), 20); ++i) {
      ADD_FAILURE() << failures[i];
    }
    EXPECT_EQ(cubins.load(), ok.size()) << set.origin();
    EXPECT_EQ(ptxs.load() + ptx_too_new.load(), ok.size()) << set.origin();
  }
}

}  // namespace
}  // namespace lp::kernels
