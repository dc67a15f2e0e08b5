#include "runtime/collectives.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "frontend/proto/wire.h"
#include "runtime/client.h"
#include "runtime/collectives_test_util.h"
#include "runtime/device_backend.h"

namespace kiln::runtime {
namespace {

using namespace std::chrono_literals;

// Runs `body(process)` on one thread per process and returns their statuses.
template <typename Body>
std::vector<Status> RunProcesses(int64_t count, Body body) {
  std::vector<Status> statuses(static_cast<size_t>(count));
  std::vector<std::thread> threads;
  for (int64_t p = 0; p < count; ++p) {
    threads.emplace_back([&, p] { statuses[static_cast<size_t>(p)] = body(p); });
  }
  for (auto& thread : threads) thread.join();
  return statuses;
}

// Each member publishes its own value and sums everyone's.
Status SumOf(compiler::DeviceCollectives* member, std::span<const int64_t> group, int64_t* value,
             int64_t* sum) {
  void* mine[] = {value};
  const int64_t bytes[] = {sizeof(int64_t)};
  return member->Meet(group, mine, bytes, [&](std::span<void* const> all) {
    *sum = 0;
    for (void* pointer : all) *sum += *static_cast<int64_t*>(pointer);
    return Status::Ok();
  });
}

TEST(LaunchTest, MembersOfAGroupSeeEachOthersOperands) {
  Launch launch({0, 1, 2, 3});
  std::vector<int64_t> values = {1, 10, 100, 1000}, sums(4);
  const int64_t group[] = {0, 1, 2, 3};
  auto statuses = RunProcesses(4, [&](int64_t p) {
    return SumOf(launch.Member(p), group, &values[static_cast<size_t>(p)],
                 &sums[static_cast<size_t>(p)]);
  });
  for (int p = 0; p < 4; ++p) {
    EXPECT_TRUE(statuses[p].ok()) << statuses[p].ToString();
    EXPECT_EQ(sums[p], 1111);
  }
}

TEST(LaunchTest, DisjointGroupsMeetSeparatelyAndInProgramOrder) {
  Launch launch({0, 1, 2, 3});
  std::vector<int64_t> values = {1, 2, 3, 4};
  std::vector<std::vector<int64_t>> sums(4);
  auto statuses = RunProcesses(4, [&](int64_t p) -> Status {
    // First collective: pairs {0, 1} and {2, 3}; second: everyone.
    const int64_t pair[] = {p < 2 ? 0 : 2, p < 2 ? 1 : 3};
    const int64_t all[] = {0, 1, 2, 3};
    int64_t sum = 0;
    KILN_RETURN_IF_ERROR(SumOf(launch.Member(p), pair, &values[static_cast<size_t>(p)], &sum));
    sums[static_cast<size_t>(p)].push_back(sum);
    KILN_RETURN_IF_ERROR(SumOf(launch.Member(p), all, &values[static_cast<size_t>(p)], &sum));
    sums[static_cast<size_t>(p)].push_back(sum);
    return Status::Ok();
  });
  for (int p = 0; p < 4; ++p) ASSERT_TRUE(statuses[p].ok()) << statuses[p].ToString();
  EXPECT_EQ(sums[0], (std::vector<int64_t>{3, 10}));
  EXPECT_EQ(sums[1], (std::vector<int64_t>{3, 10}));
  EXPECT_EQ(sums[2], (std::vector<int64_t>{7, 10}));
  EXPECT_EQ(sums[3], (std::vector<int64_t>{7, 10}));
}

TEST(LaunchTest, AMissingMemberIsADeadlineNotAHang) {
  Launch launch({0, 1}, 100ms);
  int64_t value = 1, sum = 0;
  const int64_t group[] = {0, 1};
  const auto start = std::chrono::steady_clock::now();
  Status status = SumOf(launch.Member(0), group, &value, &sum);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("1 of 2 arrived"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find("KILN_COLLECTIVE_TIMEOUT_SECONDS"), std::string::npos);
  // The launch is over: the late member fails at once instead of waiting.
  EXPECT_EQ(SumOf(launch.Member(1), group, &value, &sum).code(), StatusCode::kDeadlineExceeded);
}

TEST(LaunchTest, AFailedRunReleasesItsWaitingPeers) {
  Launch launch({0, 1});
  int64_t value = 1, sum = 0;
  const int64_t group[] = {0, 1};
  std::thread failing([&] {
    std::this_thread::sleep_for(50ms);
    launch.Abort(ResourceExhausted("device 1 ran out of memory"));
  });
  Status status = SumOf(launch.Member(0), group, &value, &sum);
  failing.join();
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(status.message().find("another device's run"), std::string::npos);
  EXPECT_NE(status.message().find("ran out of memory"), std::string::npos);
  EXPECT_EQ(launch.cause().message(), "device 1 ran out of memory");
}

TEST(LaunchTest, AGroupNeedingAProcessOutsideTheLaunchFailsAtOnce) {
  Launch launch({2});
  int64_t value = 1, sum = 0;
  const int64_t group[] = {2, 3};
  Status status = SumOf(launch.Member(2), group, &value, &sum);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("process 3 is not run by this launch"), std::string::npos)
      << status.message();
  EXPECT_EQ(launch.Member(3), nullptr);
}

TEST(LaunchTest, ProgramsThatDisagreeOnTheGroupAreAnError) {
  Launch launch({0, 1, 2}, 2s);
  std::vector<int64_t> values = {1, 2, 3}, sums(3);
  auto statuses = RunProcesses(2, [&](int64_t p) {
    // Both start their first collective at process 0, with different groups.
    const std::vector<int64_t> group = p == 0 ? std::vector<int64_t>{0, 1}
                                              : std::vector<int64_t>{0, 1, 2};
    return SumOf(launch.Member(p), group, &values[static_cast<size_t>(p)],
                 &sums[static_cast<size_t>(p)]);
  });
  const bool disagreement = statuses[0].code() == StatusCode::kInvalidArgument ||
                            statuses[1].code() == StatusCode::kInvalidArgument;
  EXPECT_TRUE(disagreement) << statuses[0].ToString() << " / " << statuses[1].ToString();
}

// Programs with collectives on 4 replicas, run through the runtime
// (kAllReduce and kFourReplicas: collectives_test_util.h).
constexpr std::string_view kGatherReplicaIds = R"mlir(
func.func @main(%x: tensor<2xf32>) -> (tensor<8xf32>, tensor<4xui32>) {
  %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<2xf32>) -> tensor<8xf32>
  %id = stablehlo.replica_id : tensor<ui32>
  %ids0 = stablehlo.reshape %id : (tensor<ui32>) -> tensor<1xui32>
  %ids = "stablehlo.all_gather"(%ids0) {all_gather_dim = 0 : i64, replica_groups = dense<[[3, 2, 1, 0]]> : tensor<1x4xi64>} : (tensor<1xui32>) -> tensor<4xui32>
  func.return %g, %ids : tensor<8xf32>, tensor<4xui32>
}
)mlir";

class LaunchExecutableTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ClientOptions options;
    options.num_devices = 4;
    auto client = Client::Create(options, CreateHostBackend());
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
  }

  std::unique_ptr<LoadedExecutable> Compile(std::string_view text) {
    auto options = std::span(reinterpret_cast<const uint8_t*>(kFourReplicas.data()),
                             kFourReplicas.size());
    auto loaded = client_->Compile(
        std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir", options);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? std::move(loaded).value() : nullptr;
  }

  std::unique_ptr<Buffer> Upload(std::vector<float>& data, int device) {
    HostBuffer host{data.data(),
                    Shape{ElementType::kF32, {static_cast<int64_t>(data.size())}},
                    {},
                    HostBufferSemantics::kImmutableOnlyDuringCall};
    auto transfer = client_->BufferFromHostBuffer(
        host, client_->devices()[device]->default_memory_space());
    EXPECT_TRUE(transfer.ok()) << transfer.status().ToString();
    return std::move(transfer->buffer);
  }

  template <typename T>
  std::vector<T> Download(const Buffer& buffer) {
    std::vector<T> data(static_cast<size_t>(buffer.shape().NumElements()));
    auto done = client_->ToHostBuffer(buffer, data.data(),
                                      DenseByteStrides(buffer.shape().dims, sizeof(T)));
    EXPECT_TRUE(done.ok());
    EXPECT_TRUE((*done)->Await().ok());
    return data;
  }

  // Runs `loaded` on the 4 devices, device d with {d, 10d, 100d, ...}.
  StatusOr<std::vector<LoadedExecutable::Run>> Launch4(LoadedExecutable& loaded, int64_t size,
                                                       std::vector<std::unique_ptr<Buffer>>& keep) {
    std::vector<std::vector<Buffer*>> arguments(4);
    std::vector<Device*> devices;
    for (int d = 0; d < 4; ++d) {
      std::vector<float> data;
      for (int64_t i = 0; i < size; ++i) {
        data.push_back(static_cast<float>(d) * static_cast<float>(i == 0 ? 1 : 10 * i));
      }
      keep.push_back(Upload(data, d));
      arguments[d].push_back(keep.back().get());
      devices.push_back(client_->devices()[d]);
    }
    return loaded.ExecuteLaunch(arguments, devices);
  }

  std::unique_ptr<Client> client_;
};

TEST_F(LaunchExecutableTest, AllReduceSumsTheDevicesOperands) {
  auto loaded = Compile(kAllReduce);
  ASSERT_NE(loaded, nullptr);
  std::vector<std::unique_ptr<Buffer>> keep;
  auto runs = Launch4(*loaded, 3, keep);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  for (auto& run : *runs) {
    ASSERT_TRUE(run.done->Await().ok()) << run.done->Await().ToString();
    EXPECT_EQ(Download<float>(*run.outputs[0]), (std::vector<float>{6, 60, 120}));
  }
}

// Large enough that the members fold a slice each and copy each other's.
constexpr std::string_view kAllReduceLarge = R"mlir(
func.func @main(%x: tensor<65537xf32>) -> tensor<65537xf32> {
  %r = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<65537xf32>) -> tensor<65537xf32>
  func.return %r : tensor<65537xf32>
}
)mlir";

TEST_F(LaunchExecutableTest, ALargeAllReduceFoldsInSlicesAndEveryMemberGetsTheWhole) {
  auto loaded = Compile(kAllReduceLarge);
  ASSERT_NE(loaded, nullptr);
  std::vector<std::unique_ptr<Buffer>> keep;
  auto runs = Launch4(*loaded, 65537, keep);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  for (auto& run : *runs) {
    ASSERT_TRUE(run.done->Await().ok()) << run.done->Await().ToString();
    std::vector<float> sums = Download<float>(*run.outputs[0]);
    ASSERT_EQ(sums.size(), 65537u);
    for (size_t i = 0; i < sums.size(); ++i) {
      // Device d holds d * (i == 0 ? 1 : 10 i); the four devices sum to 6x that.
      const float expected = 6.0f * static_cast<float>(i == 0 ? 1 : 10 * i);
      ASSERT_EQ(sums[i], expected) << "element " << i;
    }
  }
}

TEST_F(LaunchExecutableTest, AllGatherConcatenatesInGroupOrder) {
  auto loaded = Compile(kGatherReplicaIds);
  ASSERT_NE(loaded, nullptr);
  std::vector<std::unique_ptr<Buffer>> keep;
  auto runs = Launch4(*loaded, 2, keep);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  for (auto& run : *runs) {
    ASSERT_TRUE(run.done->Await().ok());
    EXPECT_EQ(Download<float>(*run.outputs[0]), (std::vector<float>{0, 0, 1, 10, 2, 20, 3, 30}));
    EXPECT_EQ(Download<uint32_t>(*run.outputs[1]), (std::vector<uint32_t>{3, 2, 1, 0}));
  }
}

TEST_F(LaunchExecutableTest, OneDeviceOfAReplicatedProgramCannotMeetItsPeers) {
  auto loaded = Compile(kAllReduce);
  ASSERT_NE(loaded, nullptr);
  std::vector<float> data = {1, 2, 3};
  auto argument = Upload(data, 1);
  Buffer* arguments[] = {argument.get()};
  auto run = loaded->Execute(arguments, client_->devices()[1]);
  ASSERT_TRUE(run.ok());
  Status status = run->done->Await();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(status.message().find("no peers"), std::string::npos) << status.message();
}

// num_replicas = 4 with an explicit device assignment (replica r on device
// 3 - r), as PyTorch/XLA sends: each device runs the replica the
// assignment gives it, and the collective meets in replica order.
TEST_F(LaunchExecutableTest, AnExplicitDeviceAssignmentPlacesTheReplicas) {
  frontend::proto::Writer devices;
  const int64_t ids[] = {3, 2, 1, 0};
  devices.PackedVarints(1, ids);  // replica_device_ids of the one computation
  frontend::proto::Writer assignment;
  assignment.Varint(1, 4);  // replica_count
  assignment.Varint(2, 1);  // computation_count
  assignment.Bytes(3, devices.bytes());
  frontend::proto::Writer build;
  build.Varint(4, 4);  // num_replicas
  build.Varint(5, 1);  // num_partitions
  build.Bytes(9, assignment.bytes());
  frontend::proto::Writer options;
  options.Bytes(3, build.bytes());
  auto loaded = client_->Compile(
      std::span(reinterpret_cast<const uint8_t*>(kGatherReplicaIds.data()),
                kGatherReplicaIds.size()),
      "mlir", options.bytes());
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->device_assignment(),
            (std::vector<std::vector<int64_t>>{{3}, {2}, {1}, {0}}));
  // Device d holds {d, 10d}; replica r runs on device 3 - r.
  std::vector<std::unique_ptr<Buffer>> keep;
  std::vector<std::vector<Buffer*>> arguments(4);
  std::vector<Device*> order;
  for (int replica = 0; replica < 4; ++replica) {
    const int device = 3 - replica;
    std::vector<float> data = {static_cast<float>(device), static_cast<float>(10 * device)};
    keep.push_back(Upload(data, device));
    arguments[replica].push_back(keep.back().get());
    order.push_back(client_->devices()[device]);
  }
  auto runs = (*loaded)->ExecuteLaunch(arguments, order);
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  for (auto& run : *runs) {
    ASSERT_TRUE(run.done->Await().ok());
    // Gathered in replica order: replica 0 is device 3.
    EXPECT_EQ(Download<float>(*run.outputs[0]), (std::vector<float>{3, 30, 2, 20, 1, 10, 0, 0}));
    EXPECT_EQ(Download<uint32_t>(*run.outputs[1]), (std::vector<uint32_t>{3, 2, 1, 0}));
  }
}

// Launches of two programs from several threads at once: queues see the
// launches in one order, so they meet without deadlock, and every launch
// gives the same results.
TEST_F(LaunchExecutableTest, ConcurrentLaunchesFromSeveralThreadsMeetWithoutDeadlock) {
  auto reduce = Compile(kAllReduce);
  auto gather = Compile(kGatherReplicaIds);
  ASSERT_NE(reduce, nullptr);
  ASSERT_NE(gather, nullptr);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        std::vector<std::unique_ptr<Buffer>> keep;
        const bool use_reduce = (t + i) % 2 == 0;
        auto runs = Launch4(use_reduce ? *reduce : *gather, use_reduce ? 3 : 2, keep);
        if (!runs.ok()) {
          ++wrong;
          continue;
        }
        for (auto& run : *runs) {
          if (!run.done->Await().ok()) {
            ++wrong;
            continue;
          }
          const std::vector<float> expected = use_reduce
                                                  ? std::vector<float>{6, 60, 120}
                                                  : std::vector<float>{0, 0, 1, 10, 2, 20, 3, 30};
          if (Download<float>(*run.outputs[0]) != expected) ++wrong;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace kiln::runtime
