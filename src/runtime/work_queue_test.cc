// A device's work queue: tasks run in order on its worker; a task may run
// on the caller's thread instead (RunNowIfIdle), only when nothing is
// running or waiting, and tasks enqueued meanwhile wait for it.
#include "runtime/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "runtime/event.h"

namespace kiln::runtime {
namespace {

TEST(WorkQueueTest, RunsNowOnTheCallersThreadWhenIdle) {
  WorkQueue queue("test-queue");
  std::thread::id ran_on;
  EXPECT_TRUE(queue.RunNowIfIdle([&] { ran_on = std::this_thread::get_id(); }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  EXPECT_EQ(queue.Drain(), 1u);
}

TEST(WorkQueueTest, DoesNotRunNowWhileATaskRunsOrWaits) {
  WorkQueue queue("test-queue");
  auto release = Event::Create();
  std::atomic<bool> started{false};
  queue.Enqueue([&] {
    started = true;
    (void)release->Await();
  });
  queue.Enqueue([] {});
  while (!started) std::this_thread::yield();
  bool ran = false;
  EXPECT_FALSE(queue.RunNowIfIdle([&] { ran = true; }));
  EXPECT_FALSE(ran);
  release->Set();
  queue.Drain();
  EXPECT_TRUE(queue.RunNowIfIdle([&] { ran = true; }));
  EXPECT_TRUE(ran);
}

TEST(WorkQueueTest, TasksEnqueuedDuringAnInlineRunRunAfterIt) {
  WorkQueue queue("test-queue");
  std::vector<int> order;
  std::atomic<bool> inside{false};
  auto enqueued = Event::Create();
  std::thread other([&] {
    while (!inside) std::this_thread::yield();
    queue.Enqueue([&] { order.push_back(2); });
    enqueued->Set();
  });
  EXPECT_TRUE(queue.RunNowIfIdle([&] {
    inside = true;
    (void)enqueued->Await();
    // The worker must not start the queued task while this one runs.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    order.push_back(1);
  }));
  other.join();
  queue.Drain();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace kiln::runtime
