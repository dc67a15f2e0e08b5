// PJRT_Event: user events (Create/Set), readiness, errors, callbacks, and
// events shared by several threads.
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "plugin.h"

namespace conformance {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr int kThreads = 8;

class EventTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_SLOT(PJRT_Event_Create);
    REQUIRE_SLOT(PJRT_Event_Set);
    event_ = CreateEvent();
    ASSERT_NE(event_, nullptr);
  }
  EventPtr event_;
};

TEST_F(EventTest, NewEventIsNotReady) {
  EXPECT_FALSE(IsReady(event_.get()));
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_OK, "")));
}

TEST_F(EventTest, SetWithOkMakesItReadyWithoutError) {
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_OK, "")));
  EXPECT_TRUE(IsReady(event_.get()));
  EXPECT_TRUE(IsOk(EventError(event_.get())));
  EXPECT_TRUE(IsOk(Await(event_.get())));
}

TEST_F(EventTest, SetWithAnErrorCarriesCodeAndMessage) {
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_RESOURCE_EXHAUSTED, "out of tea")));
  EXPECT_TRUE(IsReady(event_.get()));
  Status error = EventError(event_.get());
  EXPECT_TRUE(HasCode(error, PJRT_Error_Code_RESOURCE_EXHAUSTED));
  EXPECT_EQ(error.message, "out of tea");
  Status awaited = Await(event_.get());
  EXPECT_TRUE(HasCode(awaited, PJRT_Error_Code_RESOURCE_EXHAUSTED));
  EXPECT_EQ(awaited.message, "out of tea");
}

TEST_F(EventTest, EveryErrorCodeRoundTrips) {
  event_.reset();
  for (int code = PJRT_Error_Code_CANCELLED; code <= PJRT_Error_Code_UNAUTHENTICATED; ++code) {
    auto error_code = static_cast<PJRT_Error_Code>(code);
    SCOPED_TRACE(CodeName(error_code));
    EventPtr event = CreateEvent();
    std::string message = std::string("code ") + CodeName(error_code);
    ASSERT_TRUE(IsOk(SetEvent(event.get(), error_code, message)));
    Status status = EventError(event.get());
    EXPECT_TRUE(HasCode(status, error_code));
    EXPECT_EQ(status.message, message);
  }
}

TEST_F(EventTest, LongMessagesAreKeptWhole) {
  std::string message;
  for (int i = 0; message.size() < 10000; ++i) message += std::to_string(i) + ";";
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_INTERNAL, message)));
  EXPECT_EQ(Await(event_.get()).message, message);
}

TEST_F(EventTest, MessageIsCopiedAtSet) {
  std::string message = "original message";
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_ABORTED, message)));
  message.assign(message.size(), 'x');  // "can be freed after the function returns"
  EXPECT_EQ(EventError(event_.get()).message, "original message");
}

TEST_F(EventTest, EventErrorsAreIndependentCopies) {
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_ABORTED, "twice")));
  auto args = MAKE_ARGS(PJRT_Event_Error_Args);
  args.event = event_.get();
  PJRT_Error* first = api()->PJRT_Event_Error(&args);
  PJRT_Error* second = api()->PJRT_Event_Error(&args);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(Consume(first).message, "twice");
  EXPECT_EQ(Consume(second).message, "twice");  // still valid after the first
  EXPECT_EQ(Await(event_.get()).message, "twice");
}

TEST_F(EventTest, OnReadyRunsOnceWhenSet) {
  CallbackRecorder recorder;
  ASSERT_TRUE(IsOk(recorder.Register(event_.get())));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(recorder.count(), 0) << "called before the event was set";
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_OK, "")));
  ASSERT_TRUE(recorder.WaitFor(1, seconds(10)));
  std::this_thread::sleep_for(milliseconds(20));
  ASSERT_EQ(recorder.count(), 1);
  EXPECT_TRUE(IsOk(recorder.statuses()[0])) << "success passes a null error";
}

TEST_F(EventTest, OnReadyAfterReadyStillRunsOnce) {
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_OK, "")));
  CallbackRecorder recorder;
  ASSERT_TRUE(IsOk(recorder.Register(event_.get())));
  ASSERT_TRUE(recorder.WaitFor(1, seconds(10)));
  std::this_thread::sleep_for(milliseconds(20));
  ASSERT_EQ(recorder.count(), 1);
  EXPECT_TRUE(IsOk(recorder.statuses()[0]));
}

TEST_F(EventTest, OnReadyReceivesTheError) {
  CallbackRecorder recorder;
  ASSERT_TRUE(IsOk(recorder.Register(event_.get())));
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_CANCELLED, "stopped")));
  ASSERT_TRUE(recorder.WaitFor(1, seconds(10)));
  Status status = recorder.statuses()[0];
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_CANCELLED));
  EXPECT_EQ(status.message, "stopped");
}

TEST_F(EventTest, EveryCallbackRuns) {
  CallbackRecorder before;
  CallbackRecorder after;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(IsOk(before.Register(event_.get())));
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_OK, "")));
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(IsOk(after.Register(event_.get())));
  ASSERT_TRUE(before.WaitFor(5, seconds(10)));
  ASSERT_TRUE(after.WaitFor(5, seconds(10)));
  std::this_thread::sleep_for(milliseconds(20));
  EXPECT_EQ(before.count(), 5);
  EXPECT_EQ(after.count(), 5);
}

TEST_F(EventTest, ManyThreadsAwaitOneEvent) {
  Watchdog watchdog(seconds(30), "threads awaiting one user event");
  std::atomic<int> returned{0};
  std::vector<std::thread> threads;
  std::vector<Status> results(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      results[t] = Await(event_.get());
      ++returned;
    });
  }
  std::this_thread::sleep_for(milliseconds(50));
  EXPECT_EQ(returned.load(), 0) << "Await returned before the event was set";
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_UNAVAILABLE, "gone")));
  for (std::thread& thread : threads) thread.join();
  for (const Status& result : results) {
    EXPECT_TRUE(HasCode(result, PJRT_Error_Code_UNAVAILABLE));
    EXPECT_EQ(result.message, "gone");
  }
}

TEST_F(EventTest, CallbacksRegisteredConcurrentlyWithSetRunOnceEach) {
  Watchdog watchdog(seconds(30), "concurrent OnReady registrations");
  constexpr int kPerThread = 50;
  std::vector<CallbackRecorder> recorders(kThreads);
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      while (!go) std::this_thread::yield();
      for (int i = 0; i < kPerThread; ++i) {
        EXPECT_TRUE(IsOk(recorders[t].Register(event_.get())));
      }
    });
  }
  go = true;
  std::this_thread::sleep_for(milliseconds(1));
  ASSERT_TRUE(IsOk(SetEvent(event_.get(), PJRT_Error_Code_OK, "")));
  for (std::thread& thread : threads) thread.join();
  for (CallbackRecorder& recorder : recorders) {
    ASSERT_TRUE(recorder.WaitFor(kPerThread, seconds(10)));
  }
  std::this_thread::sleep_for(milliseconds(20));
  for (CallbackRecorder& recorder : recorders) {
    EXPECT_EQ(recorder.count(), kPerThread);
  }
}

TEST_F(EventTest, DestroyingANullEventIsANoOp) {
  auto args = MAKE_ARGS(PJRT_Event_Destroy_Args);
  EXPECT_PJRT_OK(api()->PJRT_Event_Destroy(&args));
}

TEST_F(EventTest, DestroyingAnUnsetEventIsAllowed) {
  event_.reset();  // never set: must not leak or wait
}

// ------------------------------------------ events of real transfers --

class TransferEventTest : public ClientFixture {};

TEST_F(TransferEventTest, ManyThreadsAwaitOneTransfer) {
  constexpr size_t kElements = 8 * 1024 * 1024;  // 32 MiB of F32
  std::vector<float> host(kElements, 1.25f);
  HostTransfer transfer;
  transfer.data = host.data();
  transfer.dims = {static_cast<int64_t>(kElements)};
  transfer.semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  transfer.device = device_;
  BufferPtr buffer;
  EventPtr done;
  Watchdog watchdog(seconds(120), "threads awaiting a transfer");
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
  ASSERT_NE(done, nullptr);
  std::vector<Status> results(kThreads);
  std::vector<CallbackRecorder> recorders(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      EXPECT_TRUE(IsOk(recorders[t].Register(done.get())));
      results[t] = Await(done.get());
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_TRUE(IsOk(results[t]));
    ASSERT_TRUE(recorders[t].WaitFor(1, seconds(10)));
    EXPECT_EQ(recorders[t].count(), 1);
  }
  auto ready = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ReadyEvent(&ready));
  EventPtr ready_event(ready.event);
  threads.clear();
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] { results[t] = Await(ready_event.get()); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const Status& result : results) EXPECT_TRUE(IsOk(result));
  EXPECT_EQ(Read<float>(buffer.get()), host);
}

TEST_F(TransferEventTest, ReadyEventsAreIndependentHandles) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1}, {1});
  ASSERT_NE(buffer, nullptr);
  auto first = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
  first.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ReadyEvent(&first));
  auto second = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
  second.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ReadyEvent(&second));
  EventPtr first_event(first.event);
  EventPtr second_event(second.event);
  first_event.reset();
  EXPECT_TRUE(IsOk(Await(second_event.get())));
  buffer.reset();  // an event may outlive its buffer
  EXPECT_TRUE(IsReady(second_event.get()));
}

}  // namespace
}  // namespace conformance
