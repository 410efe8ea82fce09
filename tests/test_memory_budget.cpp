// solvers/memory_budget.h: the memory a run needs, item by item from the grid, and the refusal
// when it does not fit (both numbers and a hint), and MemAvailable read from /proc/meminfo text.
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "io/errors.h"
#include "io/host_memory.h"
#include "solvers/memory_budget.h"

namespace rtm {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kGiB = 1ull << 30;

uint64_t item(const std::vector<MemoryItem>& items, const std::string& what) {
  for (const MemoryItem& i : items)
    if (i.what == what) return i.bytes;
  ADD_FAILURE() << "no item " << what;
  return 0;
}

bool has_item(const std::vector<MemoryItem>& items, const std::string& what) {
  for (const MemoryItem& i : items)
    if (i.what == what) return true;
  return false;
}

RunMemoryPlan plan_for(int n, int nt) {
  RunMemoryPlan plan;
  plan.layout = make_layout(n, n, n);
  plan.nt = nt;
  plan.receivers = 100;
  return plan;
}

std::string refusal(const RunMemoryPlan& plan, uint64_t device_free, uint64_t host_available) {
  try {
    check_memory_fits(estimate_run_memory(plan), plan, device_free, host_available, "rtm migrate");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryBudget, ItemsFollowFromTheGrid) {
  RunMemoryPlan plan = plan_for(100, 1000);
  const GridLayout& g = plan.layout;
  const uint64_t padded = uint64_t(g.size), interior = 1000000;
  const MemoryEstimate boundary = estimate_run_memory(plan);
  EXPECT_EQ(item(boundary.device, "wavefields"), 2 * 2 * padded * 4); // source + receiver fields
  EXPECT_EQ(item(boundary.device, "v2dt2"), 2 * padded * 4);
  EXPECT_EQ(item(boundary.device, "image and illumination"), 2 * padded * 4);
  // 6 faces of 4 layers of 100x100 cells, float32, every step
  EXPECT_EQ(item(boundary.device, "boundary store"), 1000ull * 6 * 4 * 10000 * 4);
  EXPECT_FALSE(has_item(boundary.host, "snapshots"));
  EXPECT_EQ(item(boundary.host, "shot gathers"), 100ull * 1000 * 4);

  plan.storage = SourceWavefieldStorage::snapshots;
  plan.snapshot_interval = 8;
  const MemoryEstimate snapshots = estimate_run_memory(plan);
  EXPECT_FALSE(has_item(snapshots.device, "boundary store"));
  EXPECT_EQ(item(snapshots.host, "snapshots"), 125ull * interior * 4); // ceil(1000 / 8)

  plan.field_bytes = 2; // half-precision storage halves the wavefields and v2dt2
  EXPECT_EQ(item(estimate_run_memory(plan).device, "wavefields"), 2 * 2 * padded * 2);

  plan.migration = false; // modeling: one propagator, no image
  const MemoryEstimate modeling = estimate_run_memory(plan);
  EXPECT_EQ(item(modeling.device, "wavefields"), 2 * padded * 2);
  EXPECT_FALSE(has_item(modeling.device, "image and illumination"));
  EXPECT_FALSE(has_item(modeling.host, "snapshots"));
}

TEST(MemoryBudget, RunThatFitsIsAccepted) {
  const RunMemoryPlan plan = plan_for(100, 1000);
  EXPECT_EQ(refusal(plan, 80 * kGiB, 100 * kGiB), "");
  EXPECT_EQ(refusal(plan, 0, 0), "") << "0 means unknown: nothing is checked";
}

TEST(MemoryBudget, GpuOverflowIsRefusedWithBothNumbersAndAHint) {
  RunMemoryPlan plan = plan_for(1000, 4000); // 1000^3 with boundary saving over 4000 steps
  const MemoryEstimate e = estimate_run_memory(plan);
  ASSERT_GT(e.device_bytes(), 80 * kGiB);
  const std::string message = refusal(plan, 80 * kGiB, 1000 * kGiB);
  EXPECT_THAT(message, HasSubstr("rtm migrate: this run needs " + gib_string(e.device_bytes()) +
                                 " of GPU memory but 80.00 GiB are free"));
  EXPECT_THAT(message, HasSubstr("largest: boundary store"));
  EXPECT_THAT(message, HasSubstr("snapshots in host memory"));
  EXPECT_THAT(message, HasSubstr("more ranks"));
}

TEST(MemoryBudget, HostOverflowIsRefusedWithBothNumbersAndAHint) {
  RunMemoryPlan plan = plan_for(500, 3000);
  plan.storage = SourceWavefieldStorage::snapshots;
  plan.snapshot_interval = 2; // 1500 snapshots of 0.47 GiB
  const MemoryEstimate e = estimate_run_memory(plan);
  const std::string message = refusal(plan, 80 * kGiB, 64 * kGiB);
  EXPECT_THAT(message, HasSubstr("needs " + gib_string(e.host_bytes()) +
                                 " of host memory but 64.00 GiB are available"));
  EXPECT_THAT(message, HasSubstr("largest: snapshots"));
  EXPECT_THAT(message, HasSubstr("fewer snapshots (a snapshot interval above the present 2 steps)"));
}

TEST(MemoryBudget, HeadroomOfFivePercent) {
  const RunMemoryPlan plan = plan_for(200, 500);
  const uint64_t need = estimate_run_memory(plan).device_bytes();
  EXPECT_EQ(refusal(plan, uint64_t(double(need) / 0.95) + 1, 0), "");
  EXPECT_NE(refusal(plan, need, 0), "") << "no headroom left";
}

TEST(MemoryBudget, MemAvailableIsReadFromMeminfo) {
  std::istringstream meminfo("MemTotal:       32780416 kB\nMemFree:         1234567 kB\n"
                             "MemAvailable:   24000000 kB\nBuffers:          100 kB\n");
  EXPECT_EQ(parse_mem_available(meminfo), 24000000ull * 1024);
  std::istringstream old_kernel("MemTotal: 100 kB\nMemFree: 50 kB\n");
  EXPECT_EQ(parse_mem_available(old_kernel), 0u);
  std::istringstream garbage("MemAvailable: lots\n");
  EXPECT_EQ(parse_mem_available(garbage), 0u);
  EXPECT_GT(host_available_bytes(), 0u) << "this test runs on Linux, which has /proc/meminfo";
}

} // namespace
} // namespace rtm
