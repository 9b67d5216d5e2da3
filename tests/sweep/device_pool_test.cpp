// The GPU pool of --devices (sweep/device_pool) with made-up callbacks: no worker,
// no GPU. Each test orders the slots' threads through what the callbacks wait for,
// so the outcome does not depend on timing.
#include "sweep/device_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>

#include "util/error.hpp"

namespace lp::sweep {
namespace {

using report::CaseRecord;
using report::Verdict;

CaseRecord record_of(std::size_t task, Verdict verdict) {
  CaseRecord r;
  r.index = task;
  r.verdict = verdict;
  r.reason = verdict == Verdict::fault ? "made-up fault" : "";
  return r;
}

/// Waits (at most 10 s, then fails the test) until `ready` holds.
template <class Pred>
void wait_for(Pred ready) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!ready()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "the pool stalled";
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(DevicePool, TasksHandedBackByARetiringGpuRunOnAGpuThatHadDrainedTheQueue) {
  // GPU 1 faults every task. Its third (retiring) fault comes only once GPU 0 has
  // finished everything else and found the queue empty, so the tasks GPU 1 then hands
  // back must still be run by GPU 0, not recorded as lost.
  constexpr std::size_t count = 10;
  std::vector<DeviceSlot> slots(2);
  slots[0].device = 0;
  slots[1].device = 1;
  std::atomic<int> gpu1_runs{0};
  std::atomic<std::size_t> done_count{0};
  std::mutex m;
  std::map<std::size_t, CaseRecord> records;
  std::size_t lost = 0;
  PoolCallbacks callbacks;
  callbacks.run = [&](DeviceSlot& slot, std::size_t task, const std::vector<std::size_t>& ahead) {
    if (slot.device == 0) {
      wait_for([&] { return gpu1_runs.load() >= 2; });  // GPU 1 takes its share first
      return record_of(task, Verdict::pass);
    }
    if (++gpu1_runs == 3) {
      // Every task but this one and those behind it has its record: GPU 0 is idle.
      wait_for([&] { return done_count.load() == count - 1 - ahead.size(); });
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return record_of(task, Verdict::fault);
  };
  callbacks.done = [&](std::size_t task, const CaseRecord& r) {
    std::lock_guard<std::mutex> lock(m);
    EXPECT_TRUE(records.emplace(task, r).second) << "task " << task << " recorded twice";
    ++done_count;
    return true;
  };
  callbacks.lost = [&](std::size_t task, const std::string& why) {
    ++lost;
    CaseRecord r = record_of(task, Verdict::incomplete);
    r.reason = why;
    return r;
  };
  run_on_devices(slots, count, callbacks);
  EXPECT_EQ(lost, 0U);
  ASSERT_EQ(records.size(), count);
  std::size_t faults = 0;
  for (const auto& [task, r] : records) {
    faults += r.verdict == Verdict::fault ? 1 : 0;
    EXPECT_EQ(r.device, r.verdict == Verdict::fault ? 1 : 0) << "task " << task;
  }
  EXPECT_EQ(faults, 3U);
  EXPECT_EQ(slots[1].retired.rfind("3 faults or timeouts in a row (the last: made-up fault)", 0), 0U);
  EXPECT_TRUE(slots[0].retired.empty());
  EXPECT_EQ(slots[0].cases + slots[1].cases, count);
}

TEST(DevicePool, WhenEveryGpuRetiresTheRestIsLostInPlanOrder) {
  constexpr std::size_t count = 12;
  std::vector<DeviceSlot> slots(2);
  slots[1].device = 1;
  std::vector<std::size_t> order;
  std::size_t lost = 0;
  PoolCallbacks callbacks;
  callbacks.run = [](DeviceSlot&, std::size_t task, const std::vector<std::size_t>&) {
    return record_of(task, Verdict::timeout);
  };
  callbacks.done = [&](std::size_t task, const CaseRecord& r) {
    order.push_back(task);
    lost += r.verdict == Verdict::incomplete ? 1 : 0;
    return true;
  };
  callbacks.lost = [](std::size_t task, const std::string& why) {
    CaseRecord r = record_of(task, Verdict::incomplete);
    r.reason = why;
    EXPECT_NE(why.find("GPU 0: 3 faults or timeouts in a row"), std::string::npos) << why;
    EXPECT_NE(why.find("GPU 1: 3 faults or timeouts in a row"), std::string::npos) << why;
    return r;
  };
  run_on_devices(slots, count, callbacks);
  ASSERT_EQ(order.size(), count);  // every task has a record
  EXPECT_EQ(lost, count - 6);      // three timeouts on each GPU, then none left to run
  // The lost ones come last, ascending.
  for (std::size_t i = 7; i < count; ++i) {
    EXPECT_LT(order[i - 1], order[i]);
  }
}

TEST(DevicePool, DoneSayingStopEndsEverySlotWithoutLosingTheRest) {
  // --stop-on-first-failure: the rest is neither run nor recorded as lost.
  std::vector<DeviceSlot> slots(2);
  slots[1].device = 1;
  std::atomic<std::size_t> runs{0};
  std::size_t lost = 0;
  PoolCallbacks callbacks;
  callbacks.run = [&](DeviceSlot&, std::size_t task, const std::vector<std::size_t>&) {
    ++runs;
    if (task != 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the stop comes long before the end
    }
    return record_of(task, task == 0 ? Verdict::fail : Verdict::pass);
  };
  callbacks.done = [](std::size_t task, const CaseRecord&) { return task != 0; };
  callbacks.lost = [&](std::size_t task, const std::string&) {
    ++lost;
    return record_of(task, Verdict::incomplete);
  };
  run_on_devices(slots, 1000, callbacks);
  EXPECT_EQ(lost, 0U);
  EXPECT_LT(runs.load(), 1000U);
}

TEST(DevicePool, ParseDevicesNamesWhatIsWrong) {
  EXPECT_EQ(parse_devices("all", 3), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(parse_devices("2, 0,2", 3), (std::vector<int>{0, 2}));
  EXPECT_THROW(parse_devices("3", 3), UsageError);
  EXPECT_THROW(parse_devices("0,,1", 3), UsageError);
  EXPECT_THROW(parse_devices("-1", 3), UsageError);
  try {
    parse_devices("0,5", 2);
    FAIL() << "GPU 5 of 2 was accepted";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--devices 0,5: GPU 5 is not there (2 GPU(s): 0 to 1)");
  }
}

}  // namespace
}  // namespace lp::sweep
