// Kiln's runtime on the OpenCL backend (PoCL on CI): buffers live in
// OpenCL memory, programs run on the host kernels over staged copies, and
// every copy between memory kinds goes through the backend.
#include "backends/opencl/backend.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/client.h"
#include "runtime/executable.h"

namespace kiln::backends::opencl {
namespace {

class OpenClBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto backend = CreateBackend();
    if (!backend.ok()) {
      const char* required = std::getenv("KILN_REQUIRE_OPENCL");
      if (required != nullptr && std::string_view(required) == "1") {
        FAIL() << backend.status().ToString();
      }
      GTEST_SKIP() << backend.status().ToString();
    }
    backend_ = *backend;
    runtime::ClientOptions options;
    options.num_devices = 2;
    auto client = runtime::Client::Create(options, backend_);
    ASSERT_TRUE(client.ok()) << client.status().ToString();
    client_ = std::move(client).value();
    device_ = client_->devices()[0];
  }

  std::unique_ptr<runtime::Buffer> Upload(std::vector<float> values,
                                          runtime::MemoryKind kind = runtime::MemoryKind::kDevice) {
    runtime::HostBuffer host{values.data(),
                             Shape{ElementType::kF32, {static_cast<int64_t>(values.size())}},
                             {},
                             runtime::HostBufferSemantics::kImmutableOnlyDuringCall};
    auto transfer = client_->BufferFromHostBuffer(host, device_->FindMemorySpace(kind));
    EXPECT_TRUE(transfer.ok()) << transfer.status().ToString();
    if (!transfer.ok()) return nullptr;
    EXPECT_TRUE(transfer->buffer->ready_event()->Await().ok());
    return std::move(transfer->buffer);
  }

  std::vector<float> Download(const runtime::Buffer& buffer) {
    std::vector<float> values(static_cast<size_t>(buffer.shape().NumElements()));
    std::vector<int64_t> strides = {sizeof(float)};
    auto done = client_->ToHostBuffer(buffer, values.data(), strides);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    if (done.ok()) {
      EXPECT_TRUE((*done)->Await().ok());
    }
    return values;
  }

  std::unique_ptr<runtime::LoadedExecutable> Compile(const std::string& text) {
    auto loaded = client_->Compile(
        std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir", {});
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? std::move(loaded).value() : nullptr;
  }

  std::shared_ptr<runtime::DeviceBackend> backend_;
  std::unique_ptr<runtime::Client> client_;
  runtime::Device* device_ = nullptr;
};

TEST_F(OpenClBackendTest, DevicesAreTheOpenClDevice) {
  EXPECT_EQ(backend_->Name(), "opencl");
  EXPECT_FALSE(backend_->IsHostAddressable(runtime::MemoryKind::kDevice));
  EXPECT_TRUE(backend_->IsHostAddressable(runtime::MemoryKind::kPinnedHost));
  const runtime::DeviceDescription& description = device_->description();
  EXPECT_EQ(description.kind, backend_->DeviceKind());
  bool named = false;
  for (const runtime::Attribute& attribute : description.attributes) {
    if (attribute.name == "backend") {
      EXPECT_EQ(std::get<std::string>(attribute.value), "opencl");
    }
    if (attribute.name == "opencl_device") {
      named = std::get<std::string>(attribute.value) == description.kind;
    }
  }
  EXPECT_TRUE(named);
}

// x * 2 + 1 on device memory: staged to the host, run, staged back.
TEST_F(OpenClBackendTest, ProgramsRunOverDeviceMemory) {
  auto loaded = Compile(R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %two = stablehlo.constant dense<2.0> : tensor<4xf32>
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.multiply %x, %two : tensor<4xf32>
  %1 = stablehlo.add %0, %one : tensor<4xf32>
  return %1 : tensor<4xf32>
})");
  ASSERT_NE(loaded, nullptr);
  auto x = Upload({1, 2, 3, 4});
  runtime::Buffer* arguments[] = {x.get()};
  auto run = loaded->Execute(arguments, device_);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->done->Await().ok());
  EXPECT_EQ(Download(*run->outputs[0]), (std::vector<float>{3, 5, 7, 9}));
}

// A donated argument written in place: its staged copy starts as the
// argument, and the result lands in the argument's device memory.
TEST_F(OpenClBackendTest, DonatedArgumentsAreUpdatedInPlace) {
  auto loaded = Compile(R"(
func.func @main(%x: tensor<3xf32> {tf.aliasing_output = 0 : i32}) -> tensor<3xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<3xf32>
  %0 = stablehlo.add %x, %one : tensor<3xf32>
  return %0 : tensor<3xf32>
})");
  ASSERT_NE(loaded, nullptr);
  auto x = Upload({10, 20, 30});
  runtime::Buffer* arguments[] = {x.get()};
  auto run = loaded->Execute(arguments, device_);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->done->Await().ok());
  EXPECT_TRUE(x->IsDeleted());
  EXPECT_EQ(Download(*run->outputs[0]), (std::vector<float>{11, 21, 31}));
}

// Device memory to pinned host memory and back, another device's memory,
// and raw copies at an offset, each through the backend.
TEST_F(OpenClBackendTest, CopiesBetweenMemoryKindsAndDevices) {
  auto x = Upload({1, 2, 3, 4, 5});
  auto pinned = client_->CopyToMemorySpace(
      *x, device_->FindMemorySpace(runtime::MemoryKind::kPinnedHost));
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  EXPECT_EQ(Download(**pinned), (std::vector<float>{1, 2, 3, 4, 5}));
  auto back = client_->CopyToMemorySpace(**pinned, device_->default_memory_space());
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(Download(**back), (std::vector<float>{1, 2, 3, 4, 5}));
  auto other = client_->CopyToMemorySpace(**back, client_->devices()[1]->default_memory_space());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(Download(**other), (std::vector<float>{1, 2, 3, 4, 5}));
  float middle[2] = {};
  auto raw = client_->CopyRawToHost(**other, middle, 2 * sizeof(float), sizeof(middle));
  ASSERT_TRUE(raw.ok()) << raw.status().ToString();
  ASSERT_TRUE((*raw)->Await().ok());
  EXPECT_EQ(middle[0], 3);
  EXPECT_EQ(middle[1], 4);
}

}  // namespace
}  // namespace kiln::backends::opencl
