#include "runtime/client.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

namespace kiln::runtime {
namespace {

std::unique_ptr<Client> MakeClient(int devices) {
  ClientOptions options;
  options.num_devices = devices;
  auto client = Client::Create(options, CreateHostBackend());
  EXPECT_TRUE(client.ok()) << client.status().ToString();
  return std::move(client).value();
}

TEST(ClientOptionsTest, OptionBeatsEnvironmentBeatsDefault) {
  ::unsetenv("KILN_NUM_DEVICES");
  EXPECT_EQ(ClientOptions::FromAttributes({})->num_devices, kDefaultNumDevices);
  ::setenv("KILN_NUM_DEVICES", "3", 1);
  EXPECT_EQ(ClientOptions::FromAttributes({})->num_devices, 3);
  std::vector<Attribute> options = {{"num_devices", std::string("5")}};
  EXPECT_EQ(ClientOptions::FromAttributes(options)->num_devices, 5);
  ::setenv("KILN_NUM_DEVICES", "zero", 1);
  EXPECT_EQ(ClientOptions::FromAttributes({}).status().code(), StatusCode::kInvalidArgument);
  ::unsetenv("KILN_NUM_DEVICES");
  std::vector<Attribute> wrong_type = {{"num_devices", 2.5f}};
  EXPECT_EQ(ClientOptions::FromAttributes(wrong_type).status().code(),
            StatusCode::kInvalidArgument);
  std::vector<Attribute> unknown = {{"colour", int64_t{1}}};
  auto status = ClientOptions::FromAttributes(unknown).status();
  EXPECT_NE(status.message().find("colour"), std::string::npos);
}

TEST(ClientTest, DevicesAndMemorySpaces) {
  auto client = MakeClient(3);
  ASSERT_EQ(client->devices().size(), 3u);
  ASSERT_EQ(client->memory_spaces().size(), 9u);
  for (Device* device : client->devices()) {
    EXPECT_EQ(device->default_memory_space()->kind(), MemoryKind::kDevice);
    EXPECT_EQ(device->FindMemorySpace(MemoryKind::kPinnedHost)->id(), 3 + device->id());
    EXPECT_EQ(device->FindMemorySpace(MemoryKind::kUnpinnedHost)->id(), 6 + device->id());
  }
  EXPECT_FALSE(client->LookupDevice(3).ok());
  EXPECT_EQ(client->DefaultDeviceAssignment(3, 1).value(), (std::vector<int>{0, 1, 2}));
  EXPECT_FALSE(client->DefaultDeviceAssignment(2, 2).ok());
}

TEST(ClientTest, AsyncTransferRoundTripAndStats) {
  auto client = MakeClient(2);
  std::vector<float> data(1000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i) * 0.5f;
  HostBuffer host{data.data(),
                  Shape{ElementType::kF32, {10, 100}},
                  {},
                  HostBufferSemantics::kImmutableUntilTransferCompletes};
  MemorySpace* space = client->devices()[1]->default_memory_space();
  auto transfer = client->BufferFromHostBuffer(host, space);
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  EXPECT_TRUE(transfer->done_with_host_buffer->Await().ok());
  EXPECT_EQ(space->counters()->bytes_in_use.load(), 4000);

  std::vector<float> back(1000, -1.0f);
  auto done = client->ToHostBuffer(*transfer->buffer, back.data(),
                                   DenseByteStrides(host.shape.dims, 4));
  ASSERT_TRUE(done.ok());
  EXPECT_TRUE((*done)->Await().ok());
  EXPECT_EQ(back, data);

  transfer->buffer->Delete();
  EXPECT_EQ(space->counters()->bytes_in_use.load(), 0);
  EXPECT_EQ(transfer->buffer->memory().status().code(), StatusCode::kFailedPrecondition);
}

TEST(ClientTest, ExternalReferenceDefersFree) {
  auto client = MakeClient(1);
  auto buffer = client->CreateUninitializedBuffer(Shape{ElementType::kS32, {4}},
                                                  client->devices()[0]->default_memory_space());
  ASSERT_TRUE(buffer.ok());
  auto counters = client->devices()[0]->default_memory_space()->counters();
  ASSERT_TRUE((*buffer)->IncreaseExternalReferenceCount().ok());
  (*buffer)->Delete();
  EXPECT_TRUE((*buffer)->IsDeleted());
  EXPECT_NE((*buffer)->unsafe_data(), nullptr);
  EXPECT_EQ(counters->bytes_in_use.load(), 16);
  ASSERT_TRUE((*buffer)->DecreaseExternalReferenceCount().ok());
  EXPECT_EQ(counters->bytes_in_use.load(), 0);
  EXPECT_FALSE((*buffer)->DecreaseExternalReferenceCount().ok());
}

TEST(ClientTest, ErrorBufferPropagatesToCopiesAndReads) {
  auto client = MakeClient(2);
  auto buffer = client->CreateErrorBuffer(Shape{ElementType::kF32, {2}},
                                          client->devices()[0]->default_memory_space(),
                                          Internal("upstream failed"));
  ASSERT_TRUE(buffer.ok());
  auto copy = client->CopyToMemorySpace(**buffer, client->devices()[1]->default_memory_space());
  ASSERT_TRUE(copy.ok());
  EXPECT_EQ((*copy)->ready_event()->Await().message(), "upstream failed");
  float out[2];
  auto read = client->ToHostBuffer(**buffer, out, DenseByteStrides(std::vector<int64_t>{2}, 4));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ((*read)->Await().code(), StatusCode::kInternal);
}

}  // namespace
}  // namespace kiln::runtime

namespace kiln::runtime {
namespace {

// Copies chained across queues while the client is destroyed: every queue must
// drain before any is torn down (run under ASan in `make test`).
TEST(ClientTest, DestroyWhileChainedCopiesAreInFlight) {
  std::vector<float> data(1 << 16, 1.0f);
  std::vector<std::unique_ptr<Buffer>> buffers;
  {
    auto client = MakeClient(4);
    HostBuffer host{data.data(),
                    Shape{ElementType::kF32, {1 << 16}},
                    {},
                    HostBufferSemantics::kImmutableUntilTransferCompletes};
    for (int round = 0; round < 8; ++round) {
      auto transfer = client->BufferFromHostBuffer(host,
                                                   client->devices()[3]->default_memory_space());
      ASSERT_TRUE(transfer.ok());
      std::unique_ptr<Buffer> current = std::move(transfer->buffer);
      for (int hop = 2; hop >= 0; --hop) {
        auto copy = client->CopyToMemorySpace(*current,
                                              client->devices()[hop]->default_memory_space());
        ASSERT_TRUE(copy.ok());
        buffers.push_back(std::move(current));
        current = std::move(copy).value();
      }
      buffers.push_back(std::move(current));
    }
  }
  // The client is gone; its buffers still report a settled state and free cleanly.
  for (auto& buffer : buffers) EXPECT_TRUE(buffer->ready_event()->Await().ok());
  buffers.clear();
}

}  // namespace
}  // namespace kiln::runtime

namespace kiln::runtime {
namespace {

constexpr std::string_view kDouble = R"mlir(
func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
  return %0 : tensor<2xf32>
}
)mlir";

std::span<const uint8_t> Bytes(std::string_view text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

// executable_build_options with num_replicas = `replicas`, num_partitions = 1.
std::vector<uint8_t> ReplicaOptions(uint8_t replicas) {
  return {0x1a, 0x04, 0x20, replicas, 0x28, 0x01};
}

TEST(CompileForTopologyTest, CompiledWithoutAClientThenLoaded) {
  Topology topology(2, "kiln-cpu");
  const std::vector<uint8_t> two = ReplicaOptions(2);
  auto program = CompileForTopology(topology, Bytes(kDouble), "mlir", two);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  EXPECT_EQ(CompileForTopology(topology, Bytes(kDouble), "mlir", ReplicaOptions(3)).status().code(),
            StatusCode::kInvalidArgument);
  // A client with too few devices cannot load it; one with enough runs it.
  auto small = MakeClient(1);
  EXPECT_EQ(small->Load(*program, {}).status().code(), StatusCode::kInvalidArgument);
  auto loaded = small->Load(*program, ReplicaOptions(1));  // compiled again for one replica
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->addressable_devices().size(), 1u);
  auto client = MakeClient(2);
  auto both = client->Load(*program, {});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ((*both)->addressable_devices().size(), 2u);
}

TEST(TopologyTest, MemoryKindsAndCanonicalShapes) {
  Topology topology(1, "kiln-cpu");
  EXPECT_EQ(topology.memory_kind_ids(), (std::vector<int>{0, 1, 2}));
  auto shape = topology.CanonicalShape(2, Shape{ElementType::kF16, {3, 4}});
  ASSERT_TRUE(shape.ok());
  EXPECT_EQ(shape->dims, (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(topology.CanonicalShape(3, Shape{ElementType::kF16, {3}}).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(topology.CanonicalShape(0, Shape{ElementType::kF16, {-3}}).status().code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kiln::runtime
