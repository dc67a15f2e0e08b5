#include "runtime/buffer.h"

#include <gtest/gtest.h>

#include <cstring>

#include "runtime/client_test_util.h"

namespace kiln::runtime {
namespace {

class BufferTest : public OneDeviceTest {
 protected:
  std::unique_ptr<Buffer> Make(Shape shape) {
    auto buffer = client_->CreateUninitializedBuffer(std::move(shape), space_);
    EXPECT_TRUE(buffer.ok());
    return std::move(buffer).value();
  }
};

TEST_F(BufferTest, BitcastMovesTheMemoryIntoANewShape) {
  auto source = Make(Shape{ElementType::kF32, {4}});
  void* data = source->unsafe_data();
  auto bitcast = source->Bitcast(Shape{ElementType::kU16, {2, 4}});
  ASSERT_TRUE(bitcast.ok()) << bitcast.status().ToString();
  EXPECT_EQ((*bitcast)->unsafe_data(), data);
  EXPECT_EQ((*bitcast)->ready_event(), source->ready_event());
  EXPECT_TRUE(source->IsDeleted());
  EXPECT_EQ((*bitcast)->Bitcast(Shape{ElementType::kU16, {9}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ((*bitcast)->Bitcast(Shape{ElementType::kS4, {32}}).status().code(),
            StatusCode::kUnimplemented);
  EXPECT_TRUE((*bitcast)->Bitcast(Shape{ElementType::kPred, {16}}).ok());  // a byte each
}

TEST_F(BufferTest, DonationWithADependencyWaitsForBoth) {
  auto source = Make(Shape{ElementType::kS8, {3}});
  auto dependency = Event::Create();
  auto donated = source->DonateWithControlDependency(dependency);
  ASSERT_TRUE(donated.ok());
  EXPECT_TRUE(source->IsDeleted());
  EXPECT_FALSE((*donated)->ready_event()->IsReady());
  dependency->Set(Internal("producer failed"));
  EXPECT_EQ((*donated)->ready_event()->Await().message(), "producer failed");
  EXPECT_EQ(source->DonateWithControlDependency(dependency).status().code(),
            StatusCode::kFailedPrecondition);
}

TEST_F(BufferTest, AnAliasReadsTheMemoryOfTheBufferThatFulfillsIt) {
  auto alias = client_->CreateAliasBuffer(Shape{ElementType::kS32, {2}}, space_);
  ASSERT_TRUE(alias.ok());
  EXPECT_EQ(alias->buffer->unsafe_data(), nullptr);  // pending
  auto real = Make(Shape{ElementType::kS32, {2}});
  const int32_t values[2] = {5, -6};
  std::memcpy(real->unsafe_data(), values, sizeof(values));
  auto wrong = Make(Shape{ElementType::kS32, {3}});
  // A wrong buffer fails the alias; the promise is kept once.
  auto second = client_->CreateAliasBuffer(Shape{ElementType::kS32, {2}}, space_);
  EXPECT_EQ(second->promise->Fulfill(*wrong).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(second->buffer->ready_event()->Await().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(wrong->IsDeleted());
  ASSERT_TRUE(alias->promise->Fulfill(*real).ok());
  ASSERT_TRUE(alias->buffer->ready_event()->Await().ok());
  EXPECT_EQ(std::memcmp(alias->buffer->unsafe_data(), values, sizeof(values)), 0);
  EXPECT_TRUE(real->IsDeleted());
  EXPECT_EQ(alias->promise->Fail(Internal("late")).code(), StatusCode::kFailedPrecondition);
}

TEST_F(BufferTest, AliasesChainAndNeverLoop) {
  const Shape shape{ElementType::kF32, {2}};
  auto first = client_->CreateAliasBuffer(shape, space_);
  auto second = client_->CreateAliasBuffer(shape, space_);
  // The first takes the second's (still pending) memory and readiness.
  ASSERT_TRUE(first->promise->Fulfill(*second->buffer).ok());
  EXPECT_FALSE(first->buffer->ready_event()->IsReady());
  auto third = client_->CreateAliasBuffer(shape, space_);
  EXPECT_EQ(third->promise->Fulfill(*third->buffer).code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(third->buffer->IsDeleted());
  auto real = Make(shape);
  const float values[2] = {1.5f, 2.5f};
  std::memcpy(real->unsafe_data(), values, sizeof(values));
  ASSERT_TRUE(second->promise->Fulfill(*real).ok());
  ASSERT_TRUE(first->buffer->ready_event()->Await().ok());
  EXPECT_EQ(std::memcmp(first->buffer->unsafe_data(), values, sizeof(values)), 0);
}

TEST_F(BufferTest, RawCopyWaitsForItsDestination) {
  auto buffer = Make(Shape{ElementType::kU8, {4}});
  std::memcpy(buffer->unsafe_data(), "kiln", 4);
  auto copy = client_->CopyRawToHostFuture(*buffer, 1, 3);
  ASSERT_TRUE(copy.ok());
  EXPECT_FALSE(copy->done->IsReady());
  char out[3] = {};
  ASSERT_TRUE(copy->destination->Provide(out).ok());
  ASSERT_TRUE(copy->done->Await().ok());
  EXPECT_EQ(std::string(out, 3), "iln");
  EXPECT_EQ(copy->destination->Provide(out).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(client_->CopyRawToHostFuture(*buffer, 2, 3).status().code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace kiln::runtime
