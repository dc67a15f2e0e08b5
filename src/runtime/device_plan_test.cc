// Collectives in a backend's device memory (DevicePlan's collective
// segments), through the interface alone: a backend that compiles no node
// but folds f32 sums, with no order across its devices' queues, so that
// each member waits for its queue around the meeting.
#include "runtime/device_plan.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/elementwise.h"
#include "runtime/client.h"
#include "runtime/executable.h"

namespace kiln::runtime {
namespace {

// The host backend's memory and copies, plus f32 sums in place.
class FoldingBackend final : public DeviceBackend {
 public:
  std::string_view Name() const override { return "folding"; }
  std::string_view DeviceKind() const override { return "folding"; }
  bool IsHostAddressable(MemoryKind kind) const override { return host_->IsHostAddressable(kind); }
  int64_t MemoryLimitBytes() const override { return host_->MemoryLimitBytes(); }
  StatusOr<void*> Allocate(MemoryKind kind, int ordinal, size_t bytes) override {
    return host_->Allocate(kind, ordinal, bytes);
  }
  void Deallocate(MemoryKind kind, int ordinal, void* data, size_t bytes) override {
    host_->Deallocate(kind, ordinal, data, bytes);
  }
  Status CopyHostToDevice(DeviceAddress destination, const void* source, size_t bytes) override {
    return host_->CopyHostToDevice(destination, source, bytes);
  }
  Status CopyDeviceToHost(void* destination, DeviceAddress source, size_t bytes) override {
    return host_->CopyDeviceToHost(destination, source, bytes);
  }
  Status CopyDeviceToDevice(DeviceAddress destination, DeviceAddress source,
                            size_t bytes) override {
    return host_->CopyDeviceToDevice(destination, source, bytes);
  }

  bool CompilesNodes() const override { return true; }
  bool Folds(kernels::ReduceOp op, ElementType type) const override {
    return op == kernels::ReduceOp::kAdd && type == ElementType::kF32;
  }
  Status EnqueueFold(int, kernels::ReduceOp, ElementType type, DeviceAddress destination,
                     DeviceAddress source, int64_t count) override {
    ++folds;
    auto* out = static_cast<unsigned char*>(destination.handle) + destination.offset;
    const auto* in = static_cast<const unsigned char*>(source.handle) + source.offset;
    return kernels::Binary(kernels::BinaryOp::kAdd, type, out, in, out, count);
  }
  StatusOr<std::shared_ptr<QueueEvent>> Completion(int) override {
    ++completions;
    return std::shared_ptr<QueueEvent>();
  }

  std::atomic<int> folds = 0, completions = 0;

 private:
  std::shared_ptr<DeviceBackend> host_ = CreateHostBackend();
};

TEST(DevicePlanTest, CollectivesRunInDeviceMemoryThroughTheBackendsFolds) {
  auto backend = std::make_shared<FoldingBackend>();
  ClientOptions options;
  options.num_devices = 2;
  auto client = Client::Create(options, backend);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  // A sum the backend folds, a maximum it does not, a gather of blocks, a
  // scatter of them, and a sum large enough to be folded in slices.
  const std::string text = R"(
func.func @main(%x: tensor<6xf32>, %y: tensor<65536xf32>)
    -> (tensor<6xf32>, tensor<6xf32>, tensor<12xf32>, tensor<3xf32>, tensor<65536xf32>) {
  %sum = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<6xf32>) -> tensor<6xf32>
  %top = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<6xf32>) -> tensor<6xf32>
  %all = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<6xf32>) -> tensor<12xf32>
  %part = "stablehlo.reduce_scatter"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<6xf32>) -> tensor<3xf32>
  %big = "stablehlo.all_reduce"(%y) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<65536xf32>) -> tensor<65536xf32>
  return %sum, %top, %all, %part, %big
      : tensor<6xf32>, tensor<6xf32>, tensor<12xf32>, tensor<3xf32>, tensor<65536xf32>
})";
  // A CompileOptionsProto: num_replicas = 2, num_partitions = 1.
  constexpr std::string_view kTwoReplicas = "\x1a\x04\x20\x02\x28\x01";
  auto loaded = (*client)->Compile(
      std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir",
      std::span(reinterpret_cast<const uint8_t*>(kTwoReplicas.data()), kTwoReplicas.size()));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const DevicePlan* plan = (*loaded)->device_plan();
  ASSERT_NE(plan, nullptr);
  // Every collective but the maximum in a segment of its own on the
  // device; the maximum on the host, its operand and result crossing.
  const compiler::SplitPlan& split = plan->split();
  ASSERT_EQ(split.segments.size(), 5u) << plan->Listing();
  for (size_t s = 0; s < split.segments.size(); ++s) {
    EXPECT_EQ(split.segments[s].collective, s != 1) << plan->Listing();
  }
  EXPECT_FALSE(split.segments[1].on_device) << plan->Listing();
  EXPECT_EQ(split.CrossingBytes(), 2 * 6 * sizeof(float)) << plan->Listing();

  std::vector<std::unique_ptr<Buffer>> inputs;
  std::vector<std::vector<Buffer*>> arguments(2);
  std::vector<Device*> devices;
  for (int d = 0; d < 2; ++d) {
    Device* device = (*client)->devices()[static_cast<size_t>(d)];
    std::vector<float> x = {1, 2, 3, 4, 5, 6};
    for (float& v : x) v *= static_cast<float>(d == 0 ? 1 : -2);
    std::vector<float> y(65536);
    for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 1000) * (d + 1);
    for (const std::vector<float>* values : {&x, &y}) {
      HostBuffer host{values->data(),
                      Shape{ElementType::kF32, {static_cast<int64_t>(values->size())}},
                      {},
                      HostBufferSemantics::kImmutableOnlyDuringCall};
      auto transfer = (*client)->BufferFromHostBuffer(host, device->default_memory_space());
      ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
      inputs.push_back(std::move(transfer->buffer));
      arguments[static_cast<size_t>(d)].push_back(inputs.back().get());
    }
    devices.push_back(device);
  }
  auto runs = (*loaded)->ExecuteLaunch(arguments, devices, {});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  auto read = [](const Buffer& buffer) {
    auto memory = buffer.memory();
    EXPECT_TRUE(memory.ok());
    std::vector<float> values(static_cast<size_t>(buffer.shape().NumElements()));
    std::memcpy(values.data(), (*memory)->data(), values.size() * sizeof(float));
    return values;
  };
  for (size_t d = 0; d < runs->size(); ++d) {
    auto& run = (*runs)[d];
    ASSERT_TRUE(run.done->Await().ok()) << run.done->Await().ToString();
    EXPECT_EQ(read(*run.outputs[0]), (std::vector<float>{-1, -2, -3, -4, -5, -6}));
    EXPECT_EQ(read(*run.outputs[1]), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    EXPECT_EQ(read(*run.outputs[2]),
              (std::vector<float>{1, 2, 3, 4, 5, 6, -2, -4, -6, -8, -10, -12}));
    EXPECT_EQ(read(*run.outputs[3]),
              d == 0 ? (std::vector<float>{-1, -2, -3}) : (std::vector<float>{-4, -5, -6}));
    const std::vector<float> big = read(*run.outputs[4]);
    for (size_t i = 0; i < big.size(); i += 997) {
      ASSERT_EQ(big[i], 3 * static_cast<float>(i % 1000)) << i;
    }
  }
  // One fold per member for each sum and the scatter; each member waited
  // for its queue before each of its five meetings (the large sum meets
  // twice) and after its work in each.
  EXPECT_EQ(backend->folds, 2 * 3);
  EXPECT_GE(backend->completions, 2 * (4 + 5));
}

}  // namespace
}  // namespace kiln::runtime
