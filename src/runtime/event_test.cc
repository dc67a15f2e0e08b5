#include "runtime/event.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace kiln::runtime {
namespace {

TEST(EventTest, SetMakesReadyAndRunsCallbacksOnce) {
  auto event = Event::Create();
  int calls = 0;
  event->OnReady([&](const Status& status) {
    EXPECT_TRUE(status.ok());
    ++calls;
  });
  EXPECT_FALSE(event->IsReady());
  EXPECT_TRUE(event->Set());
  EXPECT_FALSE(event->Set(Internal("second set is ignored")));
  EXPECT_TRUE(event->IsReady());
  EXPECT_TRUE(event->Await().ok());
  EXPECT_EQ(calls, 1);
}

TEST(EventTest, CallbackAfterReadyRunsImmediatelyWithError) {
  auto event = Event::Ready(InvalidArgument("bad"));
  Status seen;
  event->OnReady([&](const Status& status) { seen = status; });
  EXPECT_EQ(seen.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(seen.message(), "bad");
}

TEST(EventTest, ManyThreadsAwaitOneEvent) {
  auto event = Event::Create();
  std::atomic<int> woke{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 8; ++i) {
    waiters.emplace_back([&] {
      if (event->Await().code() == StatusCode::kAborted) ++woke;
    });
  }
  event->Set(Status(StatusCode::kAborted, "done"));
  for (auto& waiter : waiters) waiter.join();
  EXPECT_EQ(woke.load(), 8);
}

TEST(EventTest, AfterAllCarriesFirstErrorAndWaitsForAll) {
  std::vector<std::shared_ptr<Event>> events = {Event::Create(), Event::Create(), Event::Create()};
  auto joined = Event::AfterAll(events);
  events[1]->Set(NotFound("missing"));
  EXPECT_FALSE(joined->IsReady());
  events[0]->Set();
  events[2]->Set(Internal("later"));
  ASSERT_TRUE(joined->IsReady());
  EXPECT_EQ(joined->Await().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Event::AfterAll({})->IsReady());
}

}  // namespace
}  // namespace kiln::runtime
