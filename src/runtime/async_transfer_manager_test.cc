#include "runtime/async_transfer_manager.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "runtime/client_test_util.h"

namespace kiln::runtime {
namespace {

class AsyncTransferManagerTest : public OneDeviceTest {
 protected:
  void SetUp() override {
    OneDeviceTest::SetUp();
    if (HasFatalFailure()) return;
    auto manager = AsyncHostToDeviceTransferManager::Create(
        {Shape{ElementType::kS32, {1000}}, Shape{ElementType::kF32, {2, 2}}}, space_);
    ASSERT_TRUE(manager.ok()) << manager.status().ToString();
    manager_ = std::move(manager).value();
  }
  std::unique_ptr<AsyncHostToDeviceTransferManager> manager_;
};

TEST_F(AsyncTransferManagerTest, PiecesFromManyThreadsLandBeforeTheBufferIsReady) {
  EXPECT_EQ(manager_->buffer_count(), 2u);
  EXPECT_EQ(*manager_->buffer_size(0), 4000u);
  EXPECT_EQ(space_->counters()->bytes_in_use.load(), 4016);
  auto buffer = manager_->RetrieveBuffer(0);
  ASSERT_TRUE(buffer.ok());
  std::vector<int32_t> values(1000);
  for (int i = 0; i < 1000; ++i) values[i] = i * 7;
  // Ten pieces of 100 elements from ten threads; the one marked last is
  // sent after the others were, and the buffer waits for all of them.
  std::vector<std::thread> senders;
  for (int piece = 1; piece < 10; ++piece) {
    senders.emplace_back([&, piece] {
      auto done = manager_->TransferData(0, values.data() + piece * 100, piece * 400, 400, false);
      ASSERT_TRUE(done.ok());
      EXPECT_TRUE((*done)->Await().ok());
    });
  }
  for (auto& sender : senders) sender.join();
  EXPECT_FALSE((*buffer)->ready_event()->IsReady());
  ASSERT_TRUE(manager_->TransferData(0, values.data(), 0, 400, true).ok());
  ASSERT_TRUE((*buffer)->ready_event()->Await().ok());
  EXPECT_EQ(std::memcmp((*buffer)->unsafe_data(), values.data(), 4000), 0);
  EXPECT_EQ(manager_->RetrieveBuffer(0).status().code(), StatusCode::kFailedPrecondition);
}

TEST_F(AsyncTransferManagerTest, LiteralsUseTheirStridesAndMustMatchTheShape) {
  const float column_major[4] = {1, 3, 2, 4};  // (i, j) at i + 2 j
  const int64_t strides[2] = {4, 8};
  auto done = manager_->TransferLiteral(1, column_major, Shape{ElementType::kF32, {2, 2}}, strides);
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE((*done)->Await().ok());
  auto buffer = manager_->RetrieveBuffer(1);
  ASSERT_TRUE((*buffer)->ready_event()->Await().ok());
  const auto* data = static_cast<const float*>((*buffer)->unsafe_data());
  EXPECT_EQ(std::vector<float>(data, data + 4), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(manager_->TransferLiteral(0, column_major, Shape{ElementType::kF32, {2, 2}}, {})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
}

TEST_F(AsyncTransferManagerTest, ErrorsAndMetadata) {
  EXPECT_EQ(manager_->SetBufferError(1, Status::Ok()).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(manager_->SetBufferError(1, Internal("source went away")).ok());
  auto buffer = manager_->RetrieveBuffer(1);
  EXPECT_EQ((*buffer)->ready_event()->Await().message(), "source went away");
  EXPECT_EQ(manager_->SetBufferError(1, Internal("again")).code(), StatusCode::kFailedPrecondition);
  const std::pair<std::string, std::string> first[] = {{"a", "1"}, {"b", "2"}};
  const std::pair<std::string, std::string> second[] = {{"b", "3"}};
  manager_->AddMetadata(first);
  manager_->AddMetadata(second);
  EXPECT_EQ(manager_->metadata(), (std::map<std::string, std::string>{{"a", "1"}, {"b", "3"}}));
}

TEST_F(AsyncTransferManagerTest, DestroyedManagerCancelsWaitingBuffersAndFreesTheRest) {
  auto waiting = manager_->RetrieveBuffer(0);
  manager_.reset();
  EXPECT_EQ((*waiting)->ready_event()->Await().code(), StatusCode::kCancelled);
  EXPECT_EQ(space_->counters()->bytes_in_use.load(), 4000);  // buffer 1 was never retrieved
  waiting->reset();
  EXPECT_EQ(space_->counters()->bytes_in_use.load(), 0);
}

}  // namespace
}  // namespace kiln::runtime
