// ParallelForStatus: every item runs once when nothing fails, and the
// first failure comes back. ParallelFor with workers kept polling
// (KeepWorkersWarm) and without, in turns.
#include "kernels/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace kiln::kernels {
namespace {

TEST(ParallelForStatusTest, RunsEveryItemOnceWhenNothingFails) {
  std::vector<std::atomic<int>> runs(100000);
  Status status = ParallelForStatus(100000, 1000, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) runs[static_cast<size_t>(i)].fetch_add(1);
    return Status::Ok();
  });
  ASSERT_TRUE(status.ok()) << status.ToString();
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << i;
}

TEST(ParallelForStatusTest, ReturnsTheFailure) {
  Status status = ParallelForStatus(100000, 1000, [&](int64_t begin, int64_t end) {
    return begin <= 50000 && 50000 < end ? InvalidArgument("item 50000 failed") : Status::Ok();
  });
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("item 50000 failed"), std::string::npos) << status.ToString();
}

// A std::bad_alloc thrown in a chunk on a pool worker comes back to the
// caller (it ended the process before), and the pool runs the next job.
TEST(ParallelForTest, AWorkersExceptionIsRethrownOnTheCaller) {
  if (NumThreads() < 2) GTEST_SKIP() << "no pool workers (KILN_NUM_THREADS=1 or one core)";
  for (int round = 0; round < 20; ++round) {
    const std::thread::id caller = std::this_thread::get_id();
    std::atomic<bool> thrown{false};
    bool caught = false;
    try {
      ParallelFor(64, 1 << 20, [&](int64_t, int64_t) {
        if (std::this_thread::get_id() != caller) {
          thrown = true;
          throw std::bad_alloc();
        }
        // Keep the caller's chunks busy until a worker has taken one.
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!thrown.load() && std::chrono::steady_clock::now() < deadline) {
          std::this_thread::yield();
        }
      });
    } catch (const std::bad_alloc&) {
      caught = true;
    }
    ASSERT_TRUE(thrown.load()) << "no worker joined the job in round " << round;
    ASSERT_TRUE(caught) << round;
    std::vector<std::atomic<int>> runs(4096);
    ParallelFor(4096, 1000, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) runs[static_cast<size_t>(i)].fetch_add(1);
    });
    for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1) << i;
  }
}

// Jobs back to back, with workers that poll between them and workers that
// sleep, and scopes ending while workers poll: every item runs once, and
// no job is waited for after it is gone (the caller's poll for the last
// worker; ASan checks the stack the job lives on).
TEST(ParallelForTest, WarmAndSleepingWorkersRunEveryItemOnce) {
  std::vector<std::atomic<int>> runs(4096);
  for (int round = 0; round < 200; ++round) {
    std::optional<KeepWorkersWarm> warm;
    if (round % 2 == 0) warm.emplace();
    for (int call = 0; call < 5; ++call) {
      ParallelFor(4096, 64, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) runs[static_cast<size_t>(i)].fetch_add(1);
      });
    }
  }
  for (size_t i = 0; i < runs.size(); ++i) ASSERT_EQ(runs[i].load(), 1000) << i;
}

}  // namespace
}  // namespace kiln::kernels
