#include "runtime/execution_tracker.h"

#include <gtest/gtest.h>

#include "runtime/async_tracking_event.h"

namespace kiln::runtime {
namespace {

TEST(ExecutionTrackerTest, PoisonFailsTheEarliestUnfinishedRunOfALaunch) {
  ExecutionTracker tracker;
  auto first = Event::Create();
  auto second = Event::Create();
  auto other = Event::Create();
  tracker.Track(7, first);
  tracker.Track(7, second);
  tracker.Track(8, other);
  tracker.Track(0, Event::Create());  // no launch id: not tracked
  EXPECT_EQ(tracker.size(), 3u);
  EXPECT_TRUE(tracker.Poison(7, Internal("poisoned")));
  EXPECT_EQ(first->TryGetStatus()->message(), "poisoned");
  EXPECT_FALSE(second->IsReady());
  second->Set();  // finished: dropped, so the next poison finds nothing
  EXPECT_FALSE(tracker.Poison(7, Internal("late")));
  EXPECT_TRUE(second->TryGetStatus()->ok());
  EXPECT_FALSE(tracker.Poison(9, Internal("unknown")));
  EXPECT_EQ(tracker.size(), 1u);
}

TEST(ExecutionTrackerTest, RunsOutlivingTheTrackerFinishCleanly) {
  auto done = Event::Create();
  {
    ExecutionTracker tracker;
    tracker.Track(3, done);
  }
  EXPECT_TRUE(done->Set());
}

TEST(AsyncTrackingEventTest, LiveEventsAreListedOldestFirst) {
  auto activities = std::make_shared<AsyncActivities>();
  auto first = std::make_unique<AsyncTrackingEvent>(activities, "fetching shards");
  {
    AsyncTrackingEvent second(activities, "staging batch 3");
    EXPECT_EQ(activities->Describe(),
              (std::vector<std::string>{"fetching shards", "staging batch 3"}));
  }
  EXPECT_EQ(activities->Describe(), std::vector<std::string>{"fetching shards"});
  activities.reset();  // the event keeps what it needs
  first.reset();
}

}  // namespace
}  // namespace kiln::runtime
