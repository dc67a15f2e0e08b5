// Infeed, outfeed and channels between devices: programs run by the runtime
// on a device read its infeed and fill its outfeed; a recv waits for the
// matching send from another device's program; empty queues fail after the
// timeout instead of hanging; mismatched entries are INVALID_ARGUMENT.
#include "runtime/feeds.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "compiler/compile.h"
#include "frontend/text/parser.h"
#include "ir/verifier.h"
#include "runtime/client.h"

namespace kiln::runtime {
namespace {

FeedArray ArrayOf(std::vector<float> values) {
  FeedArray array{Shape{ElementType::kF32, {static_cast<int64_t>(values.size())}}, {}};
  array.bytes.resize(values.size() * sizeof(float));
  std::memcpy(array.bytes.data(), values.data(), array.bytes.size());
  return array;
}

std::vector<float> Floats(const std::vector<uint8_t>& bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

constexpr char kDoubleTheInfeed[] = R"(
func.func @main() -> tensor<3xf32> {
  %t = stablehlo.after_all : !stablehlo.token
  %in:2 = "stablehlo.infeed"(%t) : (!stablehlo.token) -> (tensor<3xf32>, !stablehlo.token)
  %y = stablehlo.add %in#0, %in#0 : tensor<3xf32>
  %done = "stablehlo.outfeed"(%y, %in#1) : (tensor<3xf32>, !stablehlo.token) -> !stablehlo.token
  func.return %y : tensor<3xf32>
})";

TEST(FeedsTest, ProgramsOnADeviceReadItsInfeedAndFillItsOutfeed) {
  ClientOptions options;
  options.num_devices = 2;
  auto client = Client::Create(options, CreateHostBackend());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const std::string text = kDoubleTheInfeed;
  auto executable = (*client)->Compile(
      std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir", {});
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  Feeds& feeds = (*client)->feeds();
  feeds.PushInfeed(0, {ArrayOf({1, 2, 3})});
  feeds.PushInfeed(0, {ArrayOf({4, 5, 6})});
  Device* device = (*client)->devices()[0];
  for (const std::vector<float>& expected : {std::vector<float>{2, 4, 6}, {8, 10, 12}}) {
    auto run = (*executable)->Execute({}, device);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_TRUE(run->done->Await().ok());
    std::optional<FeedEntry> out = feeds.PopOutfeed(0);
    ASSERT_TRUE(out.has_value());
    ASSERT_EQ(out->size(), 1u);
    EXPECT_EQ(Floats((*out)[0].bytes), expected);
  }
  EXPECT_FALSE(feeds.PopOutfeed(0).has_value());
  EXPECT_FALSE(feeds.PopOutfeed(1).has_value());  // device 1's outfeed is its own
}

TEST(FeedsTest, AnEmptyInfeedFailsTheRunAfterTheTimeout) {
  ClientOptions options;
  options.num_devices = 1;
  auto client = Client::Create(options, CreateHostBackend());
  ASSERT_TRUE(client.ok());
  (*client)->feeds().set_timeout(std::chrono::milliseconds(50));
  const std::string text = kDoubleTheInfeed;
  auto executable = (*client)->Compile(
      std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir", {});
  ASSERT_TRUE(executable.ok());
  auto run = (*executable)->Execute({}, (*client)->devices()[0]);
  ASSERT_TRUE(run.ok());
  Status status = run->done->Await();
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_NE(status.message().find("infeed of device 0"), std::string::npos) << status.ToString();
  // A queued entry of the wrong shape is named.
  (*client)->feeds().PushInfeed(0, {ArrayOf({1, 2})});
  auto again = (*executable)->Execute({}, (*client)->devices()[0]);
  ASSERT_TRUE(again.ok());
  status = again->done->Await();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_NE(status.message().find("f32[2], the op expects f32[3]"), std::string::npos)
      << status.ToString();
}

// Compiles `text` and runs it with `feeds` as its device's queues.
Status RunWithFeeds(const std::string& text, compiler::DeviceFeeds* feeds,
                    std::vector<float>* result) {
  KILN_ASSIGN_OR_RETURN(ir::Module module, frontend::text::ParseModule(text));
  KILN_RETURN_IF_ERROR(ir::Verify(module));
  KILN_ASSIGN_OR_RETURN(auto program, compiler::Compile(module, frontend::CompileOptions{}));
  std::vector<void*> results;
  if (result != nullptr) {
    result->assign(static_cast<size_t>(program->result_shapes[0].NumElements()), 0.0f);
    results.push_back(result->data());
  }
  compiler::ExecutionEnv env;
  env.feeds = feeds;
  return compiler::Execute(*program->graph, {}, results, env);
}

TEST(FeedsTest, ARecvWaitsForTheSendOfAnotherDevice) {
  Feeds feeds;
  feeds.set_timeout(std::chrono::seconds(20));
  const std::string receiver = R"(
func.func @main() -> tensor<2xf32> {
  %t = stablehlo.after_all : !stablehlo.token
  %r:2 = "stablehlo.recv"(%t) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, is_host_transfer = false} : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
  func.return %r#0 : tensor<2xf32>
})";
  const std::string sender = R"(
func.func @main() {
  %t = stablehlo.after_all : !stablehlo.token
  %x = stablehlo.constant dense<[7.0, 8.0]> : tensor<2xf32>
  %s = "stablehlo.send"(%x, %t) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 1>, is_host_transfer = false} : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
  func.return
})";
  std::vector<float> received;
  Status receive_status;
  std::thread device1([&] {
    receive_status = RunWithFeeds(receiver, feeds.ForDevice(1), &received);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the recv is waiting
  Status send_status = RunWithFeeds(sender, feeds.ForDevice(0), nullptr);
  device1.join();
  ASSERT_TRUE(send_status.ok()) << send_status.ToString();
  ASSERT_TRUE(receive_status.ok()) << receive_status.ToString();
  EXPECT_EQ(received, (std::vector<float>{7, 8}));

  // Nothing sent: the recv gives up after the timeout, naming the channel.
  feeds.set_timeout(std::chrono::milliseconds(20));
  Status lonely = RunWithFeeds(receiver, feeds.ForDevice(1), &received);
  EXPECT_EQ(lonely.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(lonely.message().find("channel 5"), std::string::npos) << lonely.ToString();
}

TEST(FeedsTest, WithoutQueuesTheOpsFailCleanly) {
  std::vector<float> result;
  Status status = RunWithFeeds(kDoubleTheInfeed, nullptr, &result);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition) << status.ToString();
}

}  // namespace
}  // namespace kiln::runtime
