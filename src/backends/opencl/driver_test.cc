// The OpenCL driver layer on a real driver (CI: PoCL on the CPU, installed
// by the Makefile). Without a device the device tests skip, unless
// KILN_REQUIRE_OPENCL=1 (CTest sets it), where a missing driver fails.
#include "backends/opencl/driver.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <vector>

namespace kiln::backends::opencl {
namespace {

bool Required() {
  const char* required = std::getenv("KILN_REQUIRE_OPENCL");
  return required != nullptr && std::string_view(required) == "1";
}

class OpenClDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto devices = ListDevices();
    if (!devices.ok() || devices->empty()) {
      const std::string why = devices.ok() ? "no OpenCL device" : devices.status().ToString();
      if (Required()) FAIL() << why;
      GTEST_SKIP() << why;
    }
    auto chosen = ChooseDevice(*devices, "");
    ASSERT_TRUE(chosen.ok()) << chosen.status().ToString();
    auto context = Context::Create(*chosen);
    ASSERT_TRUE(context.ok()) << context.status().ToString();
    context_ = std::move(context).value();
  }
  std::unique_ptr<Context> context_;
};

TEST_F(OpenClDriverTest, DevicesDescribeThemselves) {
  const DeviceInfo& device = context_->device();
  EXPECT_FALSE(device.name.empty());
  EXPECT_FALSE(device.platform.empty());
  EXPECT_GT(device.global_memory_bytes, 0);
  EXPECT_GT(device.max_allocation_bytes, 0);
  EXPECT_GT(device.compute_units, 0);
  EXPECT_NE(device.Describe().find(device.name), std::string::npos);
}

// Data written to device memory, a kernel built from OpenCL C run over it,
// and the result read back; copies between buffers at offsets.
TEST_F(OpenClDriverTest, AKernelRunsOverDeviceMemory) {
  constexpr size_t kCount = 1000;
  std::vector<float> x(kCount), y(kCount);
  std::iota(x.begin(), x.end(), 0.0f);
  std::iota(y.begin(), y.end(), 100.0f);
  auto a = context_->Allocate(kCount * sizeof(float));
  auto b = context_->Allocate(kCount * sizeof(float));
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(context_->Write(*a, 0, x.data(), kCount * sizeof(float)).ok());
  ASSERT_TRUE(context_->Write(*b, 0, y.data(), kCount * sizeof(float)).ok());
  auto kernel = context_->Build(R"(
__kernel void axpy(__global const float* x, __global float* y, float a) {
  const size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
})",
                                "axpy");
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  const float scale = 2.0f;
  ASSERT_TRUE((*kernel)->SetArgument(0, sizeof(cl_mem), &*a).ok());
  ASSERT_TRUE((*kernel)->SetArgument(1, sizeof(cl_mem), &*b).ok());
  ASSERT_TRUE((*kernel)->SetArgument(2, sizeof(float), &scale).ok());
  const size_t global[] = {kCount};
  ASSERT_TRUE(context_->Run(**kernel, global).ok());
  std::vector<float> out(kCount);
  ASSERT_TRUE(context_->Read(out.data(), *b, 0, kCount * sizeof(float)).ok());
  for (size_t i = 0; i < kCount; ++i) ASSERT_EQ(out[i], 2.0f * x[i] + y[i]) << i;
  // Copy the first ten results over elements 500..509 of the other buffer.
  ASSERT_TRUE(context_->Copy(*a, 500 * sizeof(float), *b, 0, 10 * sizeof(float)).ok());
  float copied[10];
  ASSERT_TRUE(context_->Read(copied, *a, 500 * sizeof(float), sizeof(copied)).ok());
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(copied[i], out[i]);
  context_->Free(*a);
  context_->Free(*b);
}

TEST_F(OpenClDriverTest, AKernelThatDoesNotBuildCarriesTheBuildLog) {
  auto kernel = context_->Build("__kernel void broken(__global float* y) { y[0] = undeclared; }",
                                "broken");
  ASSERT_FALSE(kernel.ok());
  EXPECT_EQ(kernel.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(kernel.status().message().find("clBuildProgram of kernel broken"), std::string::npos)
      << kernel.status().ToString();
  EXPECT_NE(kernel.status().message().find("undeclared"), std::string::npos)
      << kernel.status().ToString();
  auto missing = context_->Build("__kernel void present(__global float* y) { y[0] = 1.0f; }",
                                 "absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("CL_INVALID_KERNEL_NAME"), std::string::npos)
      << missing.status().ToString();
}

TEST_F(OpenClDriverTest, BadAllocationsAndCopiesAreErrors) {
  const auto too_big = static_cast<size_t>(context_->device().max_allocation_bytes) + 1;
  auto huge = context_->Allocate(too_big);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  EXPECT_FALSE(context_->Allocate(0).ok());
  auto small = context_->Allocate(64);
  ASSERT_TRUE(small.ok());
  char bytes[128] = {};
  Status beyond = context_->Read(bytes, *small, 32, 64);  // 32 bytes past the end
  EXPECT_FALSE(beyond.ok());
  EXPECT_NE(beyond.message().find("clEnqueueReadBuffer"), std::string::npos) << beyond.ToString();
  context_->Free(*small);
}

TEST(OpenClDriverChoiceTest, DevicesAreChosenByIndexOrName) {
  std::vector<DeviceInfo> devices(3);
  devices[0].platform = "Portable Computing Language";
  devices[0].name = "pthread-cpu";
  devices[1].platform = "NVIDIA CUDA";
  devices[1].name = "NVIDIA H200";
  devices[1].platform_index = 1;
  devices[1].gpu = true;
  devices[2].platform = "NVIDIA CUDA";
  devices[2].name = "NVIDIA H100";
  devices[2].platform_index = 1;
  devices[2].device_index = 1;
  devices[2].gpu = true;
  EXPECT_EQ(ChooseDevice(devices, "")->name, "NVIDIA H200");  // the first GPU
  EXPECT_EQ(ChooseDevice(devices, "1:1")->name, "NVIDIA H100");
  EXPECT_EQ(ChooseDevice(devices, "portable")->name, "pthread-cpu");
  EXPECT_EQ(ChooseDevice(devices, "h100")->name, "NVIDIA H100");
  auto absent = ChooseDevice(devices, "2:0");
  ASSERT_FALSE(absent.ok());
  EXPECT_EQ(absent.status().code(), StatusCode::kNotFound);
  EXPECT_NE(absent.status().message().find("1:1 NVIDIA CUDA / NVIDIA H100"), std::string::npos)
      << absent.status().ToString();
  EXPECT_EQ(ChooseDevice({}, "").status().code(), StatusCode::kNotFound);
}

TEST(OpenClLoaderTest, AMissingOrWrongLoaderIsAnError) {
  auto missing = LoadFunctionsFrom("/nonexistent/libOpenCL.so.1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(missing.status().message().find("/nonexistent/libOpenCL.so.1"), std::string::npos);
  auto wrong = LoadFunctionsFrom("libc.so.6");  // loads, but has no clGetPlatformIDs
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("clGetPlatformIDs"), std::string::npos)
      << wrong.status().ToString();
}

}  // namespace
}  // namespace kiln::backends::opencl
