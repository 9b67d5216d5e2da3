// Issue 3 on the device: every embedded cubin and every PTX loads with the driver
// (cuModuleLoadData; PTX through the driver's JIT) and every entry resolves.

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>

#include <fmt/format.h>

#include "cuda/check.hpp"
#include "cuda/context.hpp"
#include "cuda/driver.hpp"
#include "cuda/module.hpp"
#include "kernels/kernel_set.hpp"
#include "util/parallel.hpp"

namespace lp::kernels {
namespace {

TEST(KernelSetOnDevice, EveryCubinAndPtxLoadsAndEveryEntryResolves) {
  if (!has_cuda_device()) {
    GTEST_SKIP() << "skipped: no GPU";
  }
  const KernelSet set = KernelSet::embedded();
  PrimaryContext context(0);
  context.make_current();
  std::vector<const Variant*> ok;
  for (const Variant& v : set.variants()) {
    if (v.ok()) {
      ok.push_back(&v);
    }
  }
  std::atomic<std::size_t> cubins{0};
  std::atomic<std::size_t> ptxs{0};
  std::mutex failures_mutex;
  std::vector<std::string> failures;
  const auto start = std::chrono::steady_clock::now();
  parallel_for(ok.size(), 0, [&](std::size_t i) {
    const Variant& v = *ok[i];
    try {
      LP_CU_CHECK(driver().cuCtxSetCurrent(context.get()));
      {
        const Module cubin(set.contents(*v.cubin));
        EXPECT_NE(cubin.function(v.entry), nullptr);
        ++cubins;
      }
      {
        const Module ptx(set.contents(*v.ptx));  // JIT by the driver's own ptxas
        EXPECT_NE(ptx.function(v.entry), nullptr);
        ++ptxs;
      }
    } catch (const std::exception& e) {
      const std::lock_guard lock(failures_mutex);
      failures.push_back(v.id + ": " + e.what());
    }
  });
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("kernel set {}: {} ok variants; {} cubins loaded, {} PTX JIT-loaded, every entry resolved; "
             "Triton {}, {}; {:.1f} s\n",
             set.origin(), ok.size(), cubins.load(), ptxs.load(), set.manifest().triton_version,
             set.manifest().ptxas.value("version", std::string("?")), seconds);
  for (std::size_t i = 0; i < std::min<std::size_t>(failures.size(), 20); ++i) {
    ADD_FAILURE() << failures[i];
  }
  EXPECT_EQ(cubins.load(), ok.size());
  EXPECT_EQ(ptxs.load(), ok.size());
}

}  // namespace
}  // namespace lp::kernels
