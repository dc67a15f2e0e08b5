// A device's work queue: tasks run in order on its worker; a task may run
// on the caller's thread instead (RunNowIfIdle), only when nothing is
// running or waiting, and tasks enqueued meanwhile wait for it.
#include "runtime/work_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <new>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/parallel.h"
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

// A caller woken by a worker task's event finds the queue free, though the
// worker is still inside that task reporting it: the next small program
// runs inline instead of going back to the worker (a 2000-trip loop took
// twice its time when every call after the first went to the worker).
TEST(WorkQueueTest, RunsNowWhileTheWorkerOnlyReportsItsTask) {
  WorkQueue queue("test-queue");
  auto reported = Event::Create();
  auto release = Event::Create();
  reported->OnReady([&release](const Status&) { (void)release->Await(); });
  EnqueueWhenReady(
      Event::Ready(), &queue, [] { return Status(); }, reported);
  EXPECT_TRUE(reported->Await().ok());
  // The worker is held inside the event's callback, after its work.
  std::thread::id ran_on;
  EXPECT_TRUE(queue.RunNowIfIdle([&] { ran_on = std::this_thread::get_id(); }));
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  // A task that has not finished its work still keeps the queue busy.
  auto hold = Event::Create();
  std::atomic<bool> started{false};
  queue.Enqueue([&] {
    started = true;
    (void)hold->Await();
  });
  release->Set();
  while (!started) std::this_thread::yield();
  EXPECT_FALSE(queue.RunNowIfIdle([] {}));
  hold->Set();
  queue.Drain();
}

// A task whose kernel throws std::bad_alloc on a pool worker (as eig's
// parallel loop could) fails with RESOURCE_EXHAUSTED instead of ending the
// process, and the same queue and pool run the next task.
TEST(WorkQueueTest, AnExceptionOnAPoolWorkerFailsItsTaskOnly) {
  if (kernels::NumThreads() < 2) GTEST_SKIP() << "no pool workers (KILN_NUM_THREADS=1 or one core)";
  WorkQueue queue("test-queue");
  auto failed = Event::Create();
  EnqueueWhenReady(
      Event::Ready(), &queue,
      [] {
        const std::thread::id caller = std::this_thread::get_id();
        std::atomic<bool> thrown{false};
        kernels::ParallelFor(64, 1 << 20, [&](int64_t, int64_t) {
          if (std::this_thread::get_id() != caller) {
            thrown = true;
            throw std::bad_alloc();
          }
          const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
          while (!thrown.load() && std::chrono::steady_clock::now() < deadline)
            std::this_thread::yield();
        });
        return Status::Ok();
      },
      failed);
  Status status = failed->Await();
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted) << status.ToString();
  EXPECT_NE(status.message().find("test-queue"), std::string::npos) << status.ToString();

  auto other = Event::Create();
  EnqueueWhenReady(
      Event::Ready(), &queue, []() -> Status { throw std::runtime_error("bad day"); }, other);
  status = other->Await();
  EXPECT_EQ(status.code(), StatusCode::kInternal) << status.ToString();
  EXPECT_NE(status.message().find("bad day"), std::string::npos) << status.ToString();

  auto next = Event::Create();
  std::atomic<int64_t> items{0};
  EnqueueWhenReady(
      Event::Ready(), &queue,
      [&items] {
        kernels::ParallelFor(64, 1 << 20,
                             [&](int64_t begin, int64_t end) { items += end - begin; });
        return Status::Ok();
      },
      next);
  EXPECT_TRUE(next->Await().ok());
  EXPECT_EQ(items.load(), 64);
}

}  // namespace
}  // namespace kiln::runtime
