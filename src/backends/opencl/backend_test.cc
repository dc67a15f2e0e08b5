// Kiln's runtime on the OpenCL backend (PoCL on CI): buffers live in
// OpenCL memory, programs run in generated kernels where the backend covers
// their nodes and on the host kernels elsewhere, and every copy between
// memory kinds goes through the backend.
#include "backends/opencl/backend.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/types.h"
#include "runtime/async_transfer_manager.h"
#include "runtime/client.h"
#include "runtime/device_plan.h"
#include "runtime/event.h"
#include "runtime/executable.h"

namespace kiln::backends::opencl {
namespace {

// Whether `loaded` runs as one segment of generated kernels, copying
// nothing between device and host.
::testing::AssertionResult AllOnDevice(const runtime::LoadedExecutable* loaded) {
  if (loaded == nullptr) return ::testing::AssertionFailure() << "no executable";
  if (loaded->device_plan() == nullptr) return ::testing::AssertionFailure() << "no device plan";
  const compiler::SplitPlan& split = loaded->device_plan()->split();
  if (split.segments.size() != 1 || !split.segments[0].on_device || split.CrossingBytes() != 0) {
    return ::testing::AssertionFailure() << loaded->device_plan()->Listing();
  }
  return ::testing::AssertionSuccess();
}

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

  template <typename T>
  std::unique_ptr<runtime::Buffer> UploadAs(std::vector<T> values, ElementType type,
                                            std::vector<int64_t> dims) {
    runtime::HostBuffer host{values.data(),
                             Shape{type, std::move(dims)},
                             {},
                             runtime::HostBufferSemantics::kImmutableOnlyDuringCall};
    auto transfer = client_->BufferFromHostBuffer(host, device_->default_memory_space());
    EXPECT_TRUE(transfer.ok()) << transfer.status().ToString();
    if (!transfer.ok()) return nullptr;
    EXPECT_TRUE(transfer->buffer->ready_event()->Await().ok());
    return std::move(transfer->buffer);
  }

  template <typename T>
  std::vector<T> DownloadAs(const runtime::Buffer& buffer) {
    std::vector<T> values(static_cast<size_t>(buffer.shape().NumElements()));
    auto done = client_->CopyRawToHost(buffer, values.data(), 0, values.size() * sizeof(T));
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    if (done.ok()) {
      EXPECT_TRUE((*done)->Await().ok());
    }
    return values;
  }

  // Runs `loaded` on `arguments`; its outputs.
  std::vector<std::unique_ptr<runtime::Buffer>> Run(runtime::LoadedExecutable& loaded,
                                                    std::vector<runtime::Buffer*> arguments) {
    auto run = loaded.Execute(arguments, device_);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    if (!run.ok()) return {};
    EXPECT_TRUE(run->done->Await().ok()) << run->done->Await().ToString();
    return std::move(run->outputs);
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

  // `text` compiled for `replicas` replicas (num_partitions = 1).
  std::unique_ptr<runtime::LoadedExecutable> CompileReplicated(const std::string& text,
                                                               uint8_t replicas) {
    // A CompileOptionsProto: field 3 (ExecutableBuildOptionsProto) holding
    // num_replicas (field 4) and num_partitions (field 5).
    const uint8_t options[] = {0x1a, 0x04, 0x20, replicas, 0x28, 0x01};
    auto loaded = client_->Compile(
        std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir", options);
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return loaded.ok() ? std::move(loaded).value() : nullptr;
  }

  void RunElementwiseReductionAndGemm();
  void RunReductions();
  void RunConvolutions();

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

// A chain of maps over a broadcast, a row reduction of it, a GEMM with it,
// and its rows less their sums (a broadcast along the other dimension):
// one segment of generated kernels, with nothing copied to the host.
void OpenClBackendTest::RunElementwiseReductionAndGemm() {
  auto loaded = Compile(R"(
func.func @main(%x: tensor<37x45xf32>, %b: tensor<45xf32>, %w: tensor<45x29xf32>)
    -> (tensor<37x45xf32>, tensor<37xf32>, tensor<37x29xf32>, tensor<37x45xf32>) {
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<45xf32>) -> tensor<37x45xf32>
  %0 = stablehlo.multiply %x, %bb : tensor<37x45xf32>
  %1 = stablehlo.tanh %0 : tensor<37x45xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %2 = stablehlo.reduce(%1 init: %z) applies stablehlo.add across dimensions = [1]
      : (tensor<37x45xf32>, tensor<f32>) -> tensor<37xf32>
  %3 = stablehlo.dot_general %1, %w, contracting_dims = [1] x [0]
      : (tensor<37x45xf32>, tensor<45x29xf32>) -> tensor<37x29xf32>
  %s = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<37xf32>) -> tensor<37x45xf32>
  %4 = stablehlo.subtract %1, %s : tensor<37x45xf32>
  return %1, %2, %3, %4 : tensor<37x45xf32>, tensor<37xf32>, tensor<37x29xf32>, tensor<37x45xf32>
})");
  ASSERT_TRUE(AllOnDevice(loaded.get()));

  std::vector<float> x(37 * 45), b(45), w(45 * 29);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.5f + 0.01f * static_cast<float>(i);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::cos(0.11f * static_cast<float>(i));
  auto xs = UploadAs(x, ElementType::kF32, {37, 45});
  auto bs = UploadAs(b, ElementType::kF32, {45});
  auto ws = UploadAs(w, ElementType::kF32, {45, 29});
  auto outputs = Run(*loaded, {xs.get(), bs.get(), ws.get()});
  ASSERT_EQ(outputs.size(), 4u);
  const std::vector<float> h = DownloadAs<float>(*outputs[0]);
  const std::vector<float> sums = DownloadAs<float>(*outputs[1]);
  const std::vector<float> product = DownloadAs<float>(*outputs[2]);
  const std::vector<float> centred = DownloadAs<float>(*outputs[3]);
  for (size_t r = 0; r < 37; ++r) {
    double sum = 0;
    for (size_t c = 0; c < 45; ++c) {
      const float want = std::tanh(x[r * 45 + c] * b[c]);
      ASSERT_NEAR(h[r * 45 + c], want, 2e-6) << r << "," << c;
      sum += want;
    }
    EXPECT_NEAR(sums[r], sum, 1e-4) << r;
    for (size_t c = 0; c < 45; ++c) {
      ASSERT_EQ(centred[r * 45 + c], h[r * 45 + c] - sums[r]) << r << "," << c;
    }
    for (size_t n = 0; n < 29; ++n) {
      double dot = 0;
      for (size_t k = 0; k < 45; ++k) dot += std::tanh(x[r * 45 + k] * b[k]) * w[k * 29 + n];
      ASSERT_NEAR(product[r * 29 + n], dot, 1e-4) << r << "," << n;
    }
  }
}

TEST_F(OpenClBackendTest, ElementwiseReductionAndGemmRunInGeneratedKernels) {
  RunElementwiseReductionAndGemm();
}

// The kernels shaped for a GPU (work-group trees, local-memory GEMM
// tiles), run on PoCL so that CI checks them too.
class OpenClGpuShapesTest : public OpenClBackendTest {
 protected:
  void SetUp() override {
    setenv("KILN_OPENCL_KERNEL_SHAPES", "gpu", 1);
    OpenClBackendTest::SetUp();
    unsetenv("KILN_OPENCL_KERNEL_SHAPES");
  }
};

TEST_F(OpenClGpuShapesTest, ElementwiseReductionAndGemmRunInGeneratedKernels) {
  RunElementwiseReductionAndGemm();
}

TEST_F(OpenClGpuShapesTest, ReductionsOverAnyConsecutiveDimensions) { RunReductions(); }

TEST_F(OpenClGpuShapesTest, ConvolutionsRunInGeneratedKernels) { RunConvolutions(); }

// Reductions over leading and middle dimensions, over a reshape (a view no
// kernel copies; its 64 rows split in parts on a CPU device), and over rows
// too long for the rows' count (split in parts, folded in a second
// kernel), all in generated kernels.
void OpenClBackendTest::RunReductions() {
  auto loaded = Compile(R"(
func.func @main(%x: tensor<8x8x40xf32>, %i: tensor<3x70000xi32>)
    -> (tensor<8x40xf32>, tensor<40xf32>, tensor<40xf32>, tensor<i32>, tensor<3xi32>) {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %low = stablehlo.constant dense<-1.0e30> : tensor<f32>
  %zi = stablehlo.constant dense<0> : tensor<i32>
  %lowi = stablehlo.constant dense<-2147483648> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1]
      : (tensor<8x8x40xf32>, tensor<f32>) -> tensor<8x40xf32>
  %1 = stablehlo.reduce(%x init: %low) applies stablehlo.maximum across dimensions = [0, 1]
      : (tensor<8x8x40xf32>, tensor<f32>) -> tensor<40xf32>
  %r = stablehlo.reshape %x : (tensor<8x8x40xf32>) -> tensor<64x40xf32>
  %2 = stablehlo.reduce(%r init: %z) applies stablehlo.add across dimensions = [0]
      : (tensor<64x40xf32>, tensor<f32>) -> tensor<40xf32>
  %3 = stablehlo.reduce(%i init: %zi) applies stablehlo.add across dimensions = [0, 1]
      : (tensor<3x70000xi32>, tensor<i32>) -> tensor<i32>
  %4 = stablehlo.reduce(%i init: %lowi) applies stablehlo.maximum across dimensions = [1]
      : (tensor<3x70000xi32>, tensor<i32>) -> tensor<3xi32>
  return %0, %1, %2, %3, %4
      : tensor<8x40xf32>, tensor<40xf32>, tensor<40xf32>, tensor<i32>, tensor<3xi32>
})");
  ASSERT_TRUE(AllOnDevice(loaded.get()));

  std::vector<float> x(8 * 8 * 40);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.7f * static_cast<float>(k));
  std::vector<int32_t> ints(3 * 70000);
  for (size_t k = 0; k < ints.size(); ++k) {
    ints[k] = static_cast<int32_t>((k * 2654435761u) % 20001) - 10000;
  }
  ints[2 * 70000 + 69999] = 123456;  // the last row's maximum, in its last part
  auto xs = UploadAs(x, ElementType::kF32, {8, 8, 40});
  auto is = UploadAs(ints, ElementType::kS32, {3, 70000});
  auto outputs = Run(*loaded, {xs.get(), is.get()});
  ASSERT_EQ(outputs.size(), 5u);
  const std::vector<float> middle = DownloadAs<float>(*outputs[0]);
  const std::vector<float> maxima = DownloadAs<float>(*outputs[1]);
  const std::vector<float> columns = DownloadAs<float>(*outputs[2]);
  for (size_t j = 0; j < 40; ++j) {
    float most = -1e30f;
    double column = 0;
    for (size_t o = 0; o < 8; ++o) {
      double sum = 0;
      for (size_t s = 0; s < 8; ++s) {
        const float v = x[(o * 8 + s) * 40 + j];
        sum += v;
        most = std::max(most, v);
      }
      column += sum;
      EXPECT_NEAR(middle[o * 40 + j], sum, 1e-5) << o << "," << j;
    }
    EXPECT_EQ(maxima[j], most) << j;
    EXPECT_NEAR(columns[j], column, 1e-4) << j;
  }
  int64_t total = 0;
  std::vector<int32_t> row_max(3, std::numeric_limits<int32_t>::min());
  for (size_t k = 0; k < ints.size(); ++k) {
    total += ints[k];
    row_max[k / 70000] = std::max(row_max[k / 70000], ints[k]);
  }
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[3]), std::vector<int32_t>{static_cast<int32_t>(total)});
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[4]), row_max);
}

TEST_F(OpenClBackendTest, ReductionsOverAnyConsecutiveDimensions) { RunReductions(); }

// A 2-D convolution of a 2 x 7 x 8 x `channels` NHWC image by an HWIO
// kernel [kh][kw][channels / groups][outputs]: strides, low padding and
// window dilation per spatial dimension; output feature o reads input
// group o / (outputs / groups).
struct Conv2d {
  int64_t channels, kh, kw, outputs, groups, sy, sx, py, px, dy, dx;
};

double ReferenceConv(const std::vector<float>& image, const std::vector<float>& kernel,
                     const Conv2d& c, int64_t n, int64_t oy, int64_t ox, int64_t o) {
  const int64_t per_group = c.channels / c.groups;
  const int64_t first = o / (c.outputs / c.groups) * per_group;
  double sum = 0;
  for (int64_t ky = 0; ky < c.kh; ++ky) {
    for (int64_t kx = 0; kx < c.kw; ++kx) {
      const int64_t row = oy * c.sy + ky * c.dy - c.py, col = ox * c.sx + kx * c.dx - c.px;
      if (row < 0 || row >= 7 || col < 0 || col >= 8) continue;
      for (int64_t i = 0; i < per_group; ++i) {
        sum += image[static_cast<size_t>(((n * 7 + row) * 8 + col) * c.channels + first + i)] *
               kernel[static_cast<size_t>(((ky * c.kw + kx) * per_group + i) * c.outputs + o)];
      }
    }
  }
  return sum;
}

// Convolutions on the device: one with strides, padding and a dilated
// window (its column matrix in a temporary, then the GEMM), one with
// two feature groups (a column-matrix node, then a batched GEMM), and a
// depthwise one with two outputs per feature (a kernel of its own), checked
// against loops over the definition.
void OpenClBackendTest::RunConvolutions() {
  auto loaded = Compile(R"(
func.func @main(%x: tensor<2x7x8x3xf32>, %w: tensor<3x2x3x4xf32>, %y: tensor<2x7x8x4xf32>,
                %g: tensor<3x3x2x6xf32>, %d: tensor<3x3x1x8xf32>)
    -> (tensor<2x4x8x4xf32>, tensor<2x7x8x6xf32>, tensor<2x7x8x8xf32>) {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [0, 2]], rhs_dilate = [1, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x7x8x3xf32>, tensor<3x2x3x4xf32>) -> tensor<2x4x8x4xf32>
  %1 = stablehlo.convolution(%y, %g) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 2 : i64} : (tensor<2x7x8x4xf32>, tensor<3x3x2x6xf32>) -> tensor<2x7x8x6xf32>
  %2 = stablehlo.convolution(%y, %d) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [2, 0]]} {batch_group_count = 1 : i64, feature_group_count = 4 : i64} : (tensor<2x7x8x4xf32>, tensor<3x3x1x8xf32>) -> tensor<2x7x8x8xf32>
  return %0, %1, %2 : tensor<2x4x8x4xf32>, tensor<2x7x8x6xf32>, tensor<2x7x8x8xf32>
})");
  ASSERT_TRUE(AllOnDevice(loaded.get()));

  std::vector<float> x(2 * 7 * 8 * 3), w(3 * 2 * 3 * 4), y(2 * 7 * 8 * 4), g(3 * 3 * 2 * 6),
      d(3 * 3 * 8);
  for (size_t k = 0; k < x.size(); ++k) x[k] = std::sin(0.3f * static_cast<float>(k));
  for (size_t k = 0; k < w.size(); ++k) w[k] = std::cos(0.7f * static_cast<float>(k));
  for (size_t k = 0; k < y.size(); ++k) y[k] = std::sin(0.45f * static_cast<float>(k)) + 0.1f;
  for (size_t k = 0; k < g.size(); ++k) g[k] = std::cos(0.9f * static_cast<float>(k)) - 0.2f;
  for (size_t k = 0; k < d.size(); ++k) d[k] = std::sin(1.3f * static_cast<float>(k)) + 0.3f;
  auto xs = UploadAs(x, ElementType::kF32, {2, 7, 8, 3});
  auto ws = UploadAs(w, ElementType::kF32, {3, 2, 3, 4});
  auto ys = UploadAs(y, ElementType::kF32, {2, 7, 8, 4});
  auto gs = UploadAs(g, ElementType::kF32, {3, 3, 2, 6});
  auto ds = UploadAs(d, ElementType::kF32, {3, 3, 1, 8});
  auto outputs = Run(*loaded, {xs.get(), ws.get(), ys.get(), gs.get(), ds.get()});
  ASSERT_EQ(outputs.size(), 3u);
  const std::vector<float> strided = DownloadAs<float>(*outputs[0]);
  const std::vector<float> grouped = DownloadAs<float>(*outputs[1]);
  const std::vector<float> depthwise = DownloadAs<float>(*outputs[2]);
  // Each output against the definition, over an output of `rows` x 8.
  auto check = [](const std::vector<float>& out, int64_t rows, const std::vector<float>& image,
                  const std::vector<float>& kernel, const Conv2d& conv) {
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t oy = 0; oy < rows; ++oy) {
        for (int64_t ox = 0; ox < 8; ++ox) {
          for (int64_t o = 0; o < conv.outputs; ++o) {
            const size_t at = static_cast<size_t>(((n * rows + oy) * 8 + ox) * conv.outputs + o);
            ASSERT_NEAR(out[at], ReferenceConv(image, kernel, conv, n, oy, ox, o), 1e-5)
                << n << "," << oy << "," << ox << "," << o;
          }
        }
      }
    }
  };
  check(strided, 4, x, w, {3, 3, 2, 4, 1, 2, 1, 1, 0, 1, 2});
  // Output features 0-2 read input features 0-1; 3-5 read 2-3.
  check(grouped, 7, y, g, {4, 3, 3, 6, 2, 1, 1, 1, 1, 1, 1});
  // Depthwise, two outputs per input feature: o reads feature o / 2.
  check(depthwise, 7, y, d, {4, 3, 3, 8, 4, 1, 1, 1, 2, 1, 1});
}

TEST_F(OpenClBackendTest, ConvolutionsRunInGeneratedKernels) { RunConvolutions(); }

// Collectives between the backend's devices, in device memory: an
// all_reduce (a sum, and a maximum that keeps a NaN) and an all_gather
// between device segments, with nothing copied to the host.
TEST_F(OpenClBackendTest, CollectivesRunInDeviceMemory) {
  const std::string text = R"(
func.func @main(%x: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>, tensor<2x1000xf32>) {
  %e = stablehlo.exponential %x : tensor<1000xf32>
  %r = "stablehlo.all_reduce"(%e) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1000xf32>) -> tensor<1000xf32>
  %m = stablehlo.multiply %r, %r : tensor<1000xf32>
  %top = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1000xf32>) -> tensor<1000xf32>
  %row = stablehlo.reshape %e : (tensor<1000xf32>) -> tensor<1x1000xf32>
  %g = "stablehlo.all_gather"(%row) {all_gather_dim = 0 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<1x1000xf32>) -> tensor<2x1000xf32>
  %n = stablehlo.negate %g : tensor<2x1000xf32>
  return %m, %top, %n : tensor<1000xf32>, tensor<1000xf32>, tensor<2x1000xf32>
})";
  auto compiled = CompileReplicated(text, 2);
  ASSERT_NE(compiled, nullptr);
  runtime::LoadedExecutable& loaded = *compiled;
  ASSERT_NE(loaded.device_plan(), nullptr);
  const compiler::SplitPlan& split = loaded.device_plan()->split();
  int collectives = 0;
  for (const compiler::Segment& segment : split.segments) {
    EXPECT_TRUE(segment.on_device) << loaded.device_plan()->Listing();
    collectives += segment.collective ? 1 : 0;
  }
  EXPECT_EQ(collectives, 3) << loaded.device_plan()->Listing();
  EXPECT_EQ(split.CrossingBytes(), 0u) << loaded.device_plan()->Listing();

  std::vector<std::unique_ptr<runtime::Buffer>> inputs;
  std::vector<std::vector<runtime::Buffer*>> arguments(2);
  std::vector<runtime::Device*> devices;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int d = 0; d < 2; ++d) {
    device_ = client_->devices()[static_cast<size_t>(d)];
    std::vector<float> x(1000);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * static_cast<float>(i) * (d + 1);
    if (d == 1) x[7] = nan;
    inputs.push_back(UploadAs(x, ElementType::kF32, {1000}));
    arguments[static_cast<size_t>(d)].push_back(inputs.back().get());
    devices.push_back(device_);
  }
  auto runs = loaded.ExecuteLaunch(arguments, devices, {});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  for (auto& run : *runs) {
    ASSERT_TRUE(run.done->Await().ok()) << run.done->Await().ToString();
    const std::vector<float> y = DownloadAs<float>(*run.outputs[0]);
    const std::vector<float> top = DownloadAs<float>(*run.outputs[1]);
    const std::vector<float> gathered = DownloadAs<float>(*run.outputs[2]);
    EXPECT_TRUE(std::isnan(y[7]));
    EXPECT_TRUE(std::isnan(top[7]));
    EXPECT_TRUE(std::isnan(gathered[1007]));
    for (size_t i = 0; i < y.size(); i += 111) {
      if (i == 7) continue;
      const double first = std::exp(0.001 * static_cast<double>(i));
      const double second = std::exp(0.002 * static_cast<double>(i));
      ASSERT_NEAR(y[i], (first + second) * (first + second),
                  1e-4 * (first + second) * (first + second))
          << i;
      ASSERT_FLOAT_EQ(top[i], 0.002f * static_cast<float>(i)) << i;
      ASSERT_NEAR(gathered[i], -first, 1e-5 * first) << i;
      ASSERT_NEAR(gathered[1000 + i], -second, 1e-5 * second) << i;
    }
  }
}

// A sum over four devices large enough that each member folds a slice and
// copies the others' (two meetings), and a reduce_scatter of it.
TEST_F(OpenClBackendTest, LargeSumsFoldInSlicesAndScatter) {
  runtime::ClientOptions options;
  options.num_devices = 4;
  auto four = runtime::Client::Create(options, backend_);
  ASSERT_TRUE(four.ok()) << four.status().ToString();
  client_ = std::move(four).value();
  const std::string text = R"(
func.func @main(%x: tensor<65536xi32>) -> (tensor<65536xi32>, tensor<16384xi32>) {
  %sum = "stablehlo.all_reduce"(%x) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<65536xi32>) -> tensor<65536xi32>
  %part = "stablehlo.reduce_scatter"(%sum) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = stablehlo.maximum %a, %b : tensor<i32>
    stablehlo.return %s : tensor<i32>
  }) {scatter_dimension = 0 : i64,
      replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>} : (tensor<65536xi32>) -> tensor<16384xi32>
  return %sum, %part : tensor<65536xi32>, tensor<16384xi32>
})";
  auto compiled = CompileReplicated(text, 4);
  ASSERT_NE(compiled, nullptr);
  runtime::LoadedExecutable& loaded = *compiled;
  ASSERT_NE(loaded.device_plan(), nullptr);
  const compiler::SplitPlan& split = loaded.device_plan()->split();
  ASSERT_EQ(split.segments.size(), 2u) << loaded.device_plan()->Listing();
  EXPECT_TRUE(split.segments[0].collective && split.segments[1].collective);
  EXPECT_EQ(split.CrossingBytes(), 0u);

  std::vector<std::unique_ptr<runtime::Buffer>> inputs;
  std::vector<std::vector<runtime::Buffer*>> arguments(4);
  std::vector<runtime::Device*> devices;
  for (int d = 0; d < 4; ++d) {
    device_ = client_->devices()[static_cast<size_t>(d)];
    std::vector<int32_t> x(65536);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<int32_t>(i) * (d + 1);
    inputs.push_back(UploadAs(x, ElementType::kS32, {65536}));
    arguments[static_cast<size_t>(d)].push_back(inputs.back().get());
    devices.push_back(device_);
  }
  auto runs = loaded.ExecuteLaunch(arguments, devices, {});
  ASSERT_TRUE(runs.ok()) << runs.status().ToString();
  for (size_t d = 0; d < runs->size(); ++d) {
    auto& run = (*runs)[d];
    ASSERT_TRUE(run.done->Await().ok()) << run.done->Await().ToString();
    const std::vector<int32_t> sum = DownloadAs<int32_t>(*run.outputs[0]);
    const std::vector<int32_t> part = DownloadAs<int32_t>(*run.outputs[1]);
    for (size_t i = 0; i < sum.size(); ++i) {
      ASSERT_EQ(sum[i], 10 * static_cast<int32_t>(i)) << i;
    }
    // Every member's sum is the same: the maximum is the sum's block d.
    for (size_t i = 0; i < part.size(); ++i) {
      ASSERT_EQ(part[i], 10 * static_cast<int32_t>(d * 16384 + i)) << i;
    }
  }
}

// A sort (no generated kernel) between two device segments: its operand
// is copied to the host and its result back, as the plan lists.
TEST_F(OpenClBackendTest, UnsupportedNodesRunOnTheHostWithExplicitCopies) {
  auto loaded = Compile(R"(
func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.negate %x : tensor<6xf32>
  %1 = "stablehlo.sort"(%0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare LT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }) {dimension = 0 : i64} : (tensor<6xf32>) -> tensor<6xf32>
  %2 = stablehlo.add %1, %x : tensor<6xf32>
  return %2 : tensor<6xf32>
})");
  ASSERT_NE(loaded, nullptr);
  ASSERT_NE(loaded->device_plan(), nullptr);
  const compiler::SplitPlan& split = loaded->device_plan()->split();
  ASSERT_EQ(split.segments.size(), 3u);
  EXPECT_FALSE(split.segments[1].on_device);
  EXPECT_EQ(split.CrossingBytes(), 2 * 6 * sizeof(float));
  const std::string listing = loaded->device_plan()->Listing();
  EXPECT_NE(listing.find("stablehlo.sort"), std::string::npos) << listing;
  auto x = UploadAs<float>({3, -1, 4, 1, -5, 9}, ElementType::kF32, {6});
  auto outputs = Run(*loaded, {x.get()});
  ASSERT_EQ(outputs.size(), 1u);
  // sort(-x) = [-9, -4, -3, -1, 1, 5]
  EXPECT_EQ(DownloadAs<float>(*outputs[0]), (std::vector<float>{-6, -5, 1, 0, -4, 14}));
}

// Integer arithmetic wraps, comparisons and selects give pred, float to
// integer conversion saturates (NaN to 0), max propagates NaN, and
// denormals are flushed as XLA's CPU backend flushes them.
// f16 and bf16 maps, conversions and broadcasts run in generated kernels
// (loaded and stored as 16 bits, computed in float, rounded after every
// op) and give the host kernels' results to the bit.
TEST_F(OpenClBackendTest, HalfAndBfloat16MatchTheHostKernels) {
  const std::string text = R"(
func.func @main(%x: tensor<64x300xf16>, %y: tensor<300xbf16>) -> (tensor<64x300xf16>, tensor<300xbf16>, tensor<64x300xf32>) {
  %e = stablehlo.exponential %x : tensor<64x300xf16>
  %t = stablehlo.tanh %e : tensor<64x300xf16>
  %c = stablehlo.convert %y : (tensor<300xbf16>) -> tensor<300xf16>
  %b = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<300xf16>) -> tensor<64x300xf16>
  %m = stablehlo.multiply %t, %b : tensor<64x300xf16>
  %d = stablehlo.divide %x, %b : tensor<64x300xf16>
  %a = stablehlo.add %m, %d : tensor<64x300xf16>
  %s = stablehlo.sqrt %y : tensor<300xbf16>
  %l = stablehlo.log %s : tensor<300xbf16>
  %w = stablehlo.convert %a : (tensor<64x300xf16>) -> tensor<64x300xf32>
  return %a, %l, %w : tensor<64x300xf16>, tensor<300xbf16>, tensor<64x300xf32>
})";
  auto loaded = Compile(text);
  ASSERT_TRUE(AllOnDevice(loaded.get()));
  auto host_client = runtime::Client::Create({}, runtime::CreateHostBackend());
  ASSERT_TRUE(host_client.ok()) << host_client.status().ToString();
  auto on_host = (*host_client)
                     ->Compile(std::span(reinterpret_cast<const uint8_t*>(text.data()),
                                         text.size()),
                               "mlir", {});
  ASSERT_TRUE(on_host.ok()) << on_host.status().ToString();

  // f16 values over [-3, 3] and bf16 ones over (0, 50], with a NaN and an
  // infinity in each.
  std::vector<uint16_t> x(64 * 300), y(300);
  for (size_t i = 0; i < x.size(); ++i) {
    const float value = -3.0f + 6.0f * static_cast<float>(i % 977) / 977.0f;
    x[i] = Eigen::numext::bit_cast<uint16_t>(static_cast<kernels::half>(value));
  }
  for (size_t i = 0; i < y.size(); ++i) {
    const float value = 0.17f * static_cast<float>(i + 1);
    y[i] = Eigen::numext::bit_cast<uint16_t>(static_cast<kernels::bfloat16>(value));
  }
  x[5] = 0x7e00;  // f16 NaN
  x[6] = 0x7c00;  // f16 +inf
  y[7] = 0x7fc0;  // bf16 NaN
  y[8] = 0x7f80;  // bf16 +inf
  auto x_device = UploadAs(x, ElementType::kF16, {64, 300});
  auto y_device = UploadAs(y, ElementType::kBF16, {300});
  std::vector<std::unique_ptr<runtime::Buffer>> outputs = Run(*loaded,
                                                              {x_device.get(), y_device.get()});
  ASSERT_EQ(outputs.size(), 3u);

  runtime::Device* host_device = (*host_client)->devices()[0];
  std::vector<std::unique_ptr<runtime::Buffer>> host_inputs;
  const std::pair<const std::vector<uint16_t>*, Shape> sources[] = {
      {&x, Shape{ElementType::kF16, {64, 300}}}, {&y, Shape{ElementType::kBF16, {300}}}};
  for (const auto& [data, shape] : sources) {
    runtime::HostBuffer host{
        data->data(), shape, {}, runtime::HostBufferSemantics::kImmutableOnlyDuringCall};
    auto transfer = (*host_client)->BufferFromHostBuffer(host, host_device->default_memory_space());
    ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
    host_inputs.push_back(std::move(transfer->buffer));
  }
  std::vector<runtime::Buffer*> host_arguments = {host_inputs[0].get(), host_inputs[1].get()};
  auto host_run = (*on_host)->Execute(host_arguments, host_device);
  ASSERT_TRUE(host_run.ok()) << host_run.status().ToString();
  ASSERT_TRUE(host_run->done->Await().ok());
  for (size_t r = 0; r < outputs.size(); ++r) {
    std::vector<uint8_t> device_bytes(outputs[r]->shape().ByteSize());
    auto read = client_->CopyRawToHost(*outputs[r], device_bytes.data(), 0,
                                       static_cast<int64_t>(device_bytes.size()));
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ASSERT_TRUE((*read)->Await().ok());
    auto memory = host_run->outputs[r]->memory();
    ASSERT_TRUE(memory.ok());
    const auto* host_bytes = static_cast<const uint8_t*>((*memory)->data());
    ASSERT_EQ(device_bytes.size(), outputs[r]->shape().ByteSize());
    size_t differ = 0;
    for (size_t i = 0; i < device_bytes.size(); ++i) differ += device_bytes[i] != host_bytes[i];
    EXPECT_EQ(differ, 0u) << "result " << r;
  }
}

// A select whose predicate is one element runs in the generated kernel of
// the maps around it, reading the predicate for every element.
TEST_F(OpenClBackendTest, ScalarPredicateSelectsRunInGeneratedKernels) {
  auto loaded = Compile(R"(
func.func @main(%p: tensor<i1>, %x: tensor<1000xf32>, %y: tensor<1000xf32>) -> tensor<1000xf32> {
  %e = stablehlo.exponential %x : tensor<1000xf32>
  %s = stablehlo.select %p, %e, %y : (tensor<i1>, tensor<1000xf32>, tensor<1000xf32>) -> tensor<1000xf32>
  %n = stablehlo.negate %s : tensor<1000xf32>
  return %n : tensor<1000xf32>
})");
  ASSERT_TRUE(AllOnDevice(loaded.get()));
  std::vector<float> x(1000), y(1000);
  for (size_t i = 0; i < x.size(); ++i) {
    x[i] = 0.001f * static_cast<float>(i);
    y[i] = static_cast<float>(i);
  }
  auto x_device = UploadAs(x, ElementType::kF32, {1000});
  auto y_device = UploadAs(y, ElementType::kF32, {1000});
  for (uint8_t pick : {uint8_t{1}, uint8_t{0}}) {
    auto p = UploadAs(std::vector<uint8_t>{pick}, ElementType::kPred, {});
    std::vector<std::unique_ptr<runtime::Buffer>> outputs = Run(*loaded, {p.get(), x_device.get(),
                                                                          y_device.get()});
    ASSERT_EQ(outputs.size(), 1u);
    const std::vector<float> got = Download(*outputs[0]);
    for (size_t i = 0; i < got.size(); i += 37) {
      const float want = pick ? -std::exp(x[i]) : -y[i];
      ASSERT_NEAR(got[i], want, 1e-5f * std::fabs(want)) << i << " pick " << int{pick};
    }
  }
}

TEST_F(OpenClBackendTest, GeneratedKernelsKeepXlaSemantics) {
  auto loaded = Compile(R"(
func.func @main(%i: tensor<4xi32>, %f: tensor<4xf32>)
    -> (tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>) {
  %big = stablehlo.constant dense<2147483647> : tensor<4xi32>
  %0 = stablehlo.add %i, %big : tensor<4xi32>
  %zero = stablehlo.constant dense<0.0> : tensor<4xf32>
  %p = stablehlo.compare GT, %f, %zero : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = stablehlo.convert %f : (tensor<4xf32>) -> tensor<4xi32>
  %2 = stablehlo.select %p, %1, %0 : tensor<4xi1>, tensor<4xi32>
  %3 = stablehlo.maximum %f, %zero : tensor<4xf32>
  %tiny = stablehlo.constant dense<1.0e-20> : tensor<4xf32>
  %4 = stablehlo.multiply %f, %tiny : tensor<4xf32>
  return %0, %2, %3, %4 : tensor<4xi32>, tensor<4xi32>, tensor<4xf32>, tensor<4xf32>
})");
  ASSERT_NE(loaded, nullptr);
  ASSERT_NE(loaded->device_plan(), nullptr);
  EXPECT_EQ(loaded->device_plan()->split().CrossingBytes(), 0u);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto i = UploadAs<int32_t>({1, -1, 5, 0}, ElementType::kS32, {4});
  auto f = UploadAs<float>({3e9f, nan, -2.5f, 1e-20f}, ElementType::kF32, {4});
  auto outputs = Run(*loaded, {i.get(), f.get()});
  ASSERT_EQ(outputs.size(), 4u);
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[0]),
            (std::vector<int32_t>{std::numeric_limits<int32_t>::min(), 2147483646,
                                  std::numeric_limits<int32_t>::min() + 4, 2147483647}));
  // f > 0 picks convert(f): 3e9 saturates; NaN > 0 is false; 1e-20 > 0 converts to 0.
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[1]),
            (std::vector<int32_t>{2147483647, 2147483646, std::numeric_limits<int32_t>::min() + 4,
                                  0}));
  const std::vector<float> maxima = DownloadAs<float>(*outputs[2]);
  EXPECT_EQ(maxima[0], 3e9f);
  EXPECT_TRUE(std::isnan(maxima[1]));
  EXPECT_EQ(maxima[2], 0.0f);
  // 1e-20 * 1e-20 is below the smallest normal float: flushed to zero.
  const std::vector<float> products = DownloadAs<float>(*outputs[3]);
  EXPECT_EQ(products[3], 0.0f);
  EXPECT_FLOAT_EQ(products[0], 3e9f * 1e-20f);
}

// Integer division, remainder and shifts as XLA's CPU backend computes
// them: x / 0 is -1 and x % 0 is x, the most negative value / -1 is itself
// and % -1 is 0, shifts by the width or more give 0 (or the sign).
TEST_F(OpenClBackendTest, IntegerDivisionAndShiftsKeepXlaSemantics) {
  auto loaded = Compile(R"(
func.func @main(%a: tensor<6xi32>, %b: tensor<6xi32>, %c: tensor<4xi8>, %d: tensor<4xi8>)
    -> (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
        tensor<4xi8>, tensor<4xi8>) {
  %0 = stablehlo.divide %a, %b : tensor<6xi32>
  %1 = stablehlo.remainder %a, %b : tensor<6xi32>
  %2 = stablehlo.shift_left %a, %b : tensor<6xi32>
  %3 = stablehlo.shift_right_logical %a, %b : tensor<6xi32>
  %4 = stablehlo.shift_right_arithmetic %a, %b : tensor<6xi32>
  %5 = stablehlo.divide %c, %d : tensor<4xi8>
  %6 = stablehlo.remainder %c, %d : tensor<4xi8>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<6xi32>, tensor<6xi32>, tensor<6xi32>,
      tensor<6xi32>, tensor<6xi32>, tensor<4xi8>, tensor<4xi8>
})");
  ASSERT_TRUE(AllOnDevice(loaded.get()));
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  auto a = UploadAs<int32_t>({7, -7, kMin, 5, -1, 100}, ElementType::kS32, {6});
  auto b = UploadAs<int32_t>({2, 2, -1, 0, 33, 3}, ElementType::kS32, {6});
  auto c = UploadAs<int8_t>({-128, 9, -9, 4}, ElementType::kS8, {4});
  auto d = UploadAs<int8_t>({-1, 0, 4, -3}, ElementType::kS8, {4});
  auto outputs = Run(*loaded, {a.get(), b.get(), c.get(), d.get()});
  ASSERT_EQ(outputs.size(), 7u);
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[0]), (std::vector<int32_t>{3, -3, kMin, -1, 0, 33}));
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[1]), (std::vector<int32_t>{1, -1, 0, 5, -1, 1}));
  // A shift amount is read unsigned: -1 is 2^32 - 1, past the width.
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[2]), (std::vector<int32_t>{28, -28, 0, 5, 0, 800}));
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[3]), (std::vector<int32_t>{1, 1073741822, 0, 5, 0, 12}));
  EXPECT_EQ(DownloadAs<int32_t>(*outputs[4]), (std::vector<int32_t>{1, -2, -1, 5, -1, 12}));
  EXPECT_EQ(DownloadAs<int8_t>(*outputs[5]), (std::vector<int8_t>{-128, -1, -2, -1}));
  EXPECT_EQ(DownloadAs<int8_t>(*outputs[6]), (std::vector<int8_t>{0, 9, -1, 1}));
}

// Arrays of no elements: a reduction over an empty dimension gives its
// init, and a product over an empty contraction zeros. The runtime hands a
// zero-byte argument a placeholder that is no buffer; kernels get a real
// one (PoCL aborted the process on the placeholder), and launches of no
// work items are skipped.
TEST_F(OpenClBackendTest, EmptyArraysGiveInitsAndZeros) {
  auto loaded = Compile(R"(
func.func @main(%x: tensor<5x0xf32>, %y: tensor<0x7xf32>) -> (tensor<5xf32>, tensor<5x7xf32>) {
  %init = stablehlo.constant dense<-3.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [1]
      : (tensor<5x0xf32>, tensor<f32>) -> tensor<5xf32>
  %1 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0]
      : (tensor<5x0xf32>, tensor<0x7xf32>) -> tensor<5x7xf32>
  return %0, %1 : tensor<5xf32>, tensor<5x7xf32>
})");
  ASSERT_TRUE(AllOnDevice(loaded.get()));
  auto x = UploadAs<float>({}, ElementType::kF32, {5, 0});
  auto y = UploadAs<float>({}, ElementType::kF32, {0, 7});
  auto outputs = Run(*loaded, {x.get(), y.get()});
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_EQ(DownloadAs<float>(*outputs[0]), std::vector<float>(5, -3.0f));
  EXPECT_EQ(DownloadAs<float>(*outputs[1]), std::vector<float>(35, 0.0f));
}

// exp(x)^2 over 2^20 elements: too large to run inline.
constexpr const char* kSquaredExp = R"(
func.func @main(%x: tensor<1048576xf32>) -> tensor<1048576xf32> {
  %0 = stablehlo.exponential %x : tensor<1048576xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<1048576xf32>
  return %1 : tensor<1048576xf32>
})";

// The framework may drop an executable while its run is still queued:
// the run keeps its plan and kernels alive.
TEST_F(OpenClBackendTest, ARunOutlivesItsExecutable) {
  auto loaded = Compile(kSquaredExp);
  ASSERT_NE(loaded, nullptr);
  ASSERT_NE(loaded->device_plan(), nullptr);
  auto x = UploadAs(std::vector<float>(1 << 20, 0.5f), ElementType::kF32, {1 << 20});
  runtime::Buffer* arguments[] = {x.get()};
  auto run = loaded->Execute(arguments, device_);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  loaded.reset();
  ASSERT_TRUE(run->done->Await().ok()) << run->done->Await().ToString();
  const std::vector<float> y = DownloadAs<float>(*run->outputs[0]);
  EXPECT_NEAR(y[0], std::exp(1.0f), 1e-6);
  EXPECT_NEAR(y.back(), std::exp(1.0f), 1e-6);
}

// Runs leave their kernels on the device's queue: the run's event fires
// from the queue's completion (DeviceBackend::Completion), and a run reading
// another's output is ordered after it. Two chained runs, then the
// interface itself.
TEST_F(OpenClBackendTest, RunsCompleteThroughQueueEvents) {
  auto loaded = Compile(kSquaredExp);
  ASSERT_NE(loaded, nullptr);
  const uint64_t delivered = backend_->Synchronize();
  auto x = UploadAs(std::vector<float>(1 << 20, 0.1f), ElementType::kF32, {1 << 20});
  runtime::Buffer* first_arguments[] = {x.get()};
  auto first = loaded->Execute(first_arguments, device_);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  runtime::Buffer* second_arguments[] = {first->outputs[0].get()};
  auto second = loaded->Execute(second_arguments, device_);
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  ASSERT_TRUE(second->done->Await().ok()) << second->done->Await().ToString();
  ASSERT_TRUE(first->done->Await().ok());
  // Both runs' events came from queue completions.
  EXPECT_GE(backend_->Synchronize(), delivered + 2);
  const std::vector<float> y = DownloadAs<float>(*second->outputs[0]);
  const float once = std::exp(0.2f);
  EXPECT_NEAR(y.front(), std::exp(2 * once), 1e-4);
  EXPECT_NEAR(y.back(), std::exp(2 * once), 1e-4);

  auto completion = backend_->Completion(0);
  ASSERT_TRUE(completion.ok()) << completion.status().ToString();
  ASSERT_NE(*completion, nullptr);
  auto fired = runtime::Event::Create();
  (*completion)->OnDone([fired](Status status) { fired->Set(std::move(status)); });
  EXPECT_TRUE(fired->Await().ok());
  EXPECT_EQ((*completion)->Wait().code(), StatusCode::kFailedPrecondition);
  auto waited = backend_->Completion(0);
  ASSERT_TRUE(waited.ok());
  EXPECT_TRUE((*waited)->Wait().ok());
}

// Transfers are left on the queue, and each one's event fires from a queue
// completion: dense and strided arrays to the device and back, between
// devices, raw reads, and the pieces of an asynchronous transfer.
TEST_F(OpenClBackendTest, TransfersCompleteThroughQueueEvents) {
  const uint64_t delivered = backend_->Synchronize();
  // A 3x4 array given column-major (as its transpose's strides) and as rows.
  std::vector<float> columns(12), rows(12);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 4; ++j) {
      columns[static_cast<size_t>(j * 3 + i)] = static_cast<float>(10 * i + j);
      rows[static_cast<size_t>(i * 4 + j)] = static_cast<float>(10 * i + j);
    }
  }
  const Shape shape{ElementType::kF32, {3, 4}};
  std::vector<std::unique_ptr<runtime::Buffer>> uploaded;
  const std::pair<const float*, std::vector<int64_t>> sources[] = {{columns.data(), {4, 12}},
                                                                   {rows.data(), {}}};
  for (const auto& [data, strides] : sources) {
    runtime::HostBuffer host{data, shape, strides,
                             runtime::HostBufferSemantics::kImmutableUntilTransferCompletes};
    auto transfer = client_->BufferFromHostBuffer(host, device_->default_memory_space());
    ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
    ASSERT_TRUE(transfer->done_with_host_buffer->Await().ok());
    ASSERT_TRUE(transfer->buffer->ready_event()->Await().ok());
    uploaded.push_back(std::move(transfer->buffer));
  }
  for (const auto& buffer : uploaded) {
    // Read back dense, and into the column-major layout.
    EXPECT_EQ(DownloadAs<float>(*buffer), rows);
    std::vector<float> transposed(12);
    const int64_t strides[] = {4, 12};
    auto done = client_->ToHostBuffer(*buffer, transposed.data(), strides);
    ASSERT_TRUE(done.ok()) << done.status().ToString();
    ASSERT_TRUE((*done)->Await().ok());
    EXPECT_EQ(transposed, columns);
  }
  auto other = client_->CopyToMemorySpace(*uploaded[0],
                                          client_->devices()[1]->default_memory_space());
  ASSERT_TRUE(other.ok()) << other.status().ToString();
  EXPECT_EQ(DownloadAs<float>(**other), rows);

  // Two pieces of one buffer, then a literal laid out column-major.
  auto manager = runtime::AsyncHostToDeviceTransferManager::Create({shape, shape},
                                                                   device_->default_memory_space());
  ASSERT_TRUE(manager.ok()) << manager.status().ToString();
  auto head = (*manager)->TransferData(0, rows.data(), 0, 20, /*is_last=*/false);
  auto tail = (*manager)->TransferData(0, rows.data() + 5, 20, 28, /*is_last=*/true);
  const int64_t column_strides[] = {4, 12};
  auto literal = (*manager)->TransferLiteral(1, columns.data(), shape, column_strides);
  for (auto* event : {&head, &tail, &literal}) {
    ASSERT_TRUE(event->ok()) << event->status().ToString();
    ASSERT_TRUE((**event)->Await().ok());
  }
  for (int index : {0, 1}) {
    auto buffer = (*manager)->RetrieveBuffer(index);
    ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
    ASSERT_TRUE((*buffer)->ready_event()->Await().ok());
    EXPECT_EQ(DownloadAs<float>(**buffer), rows) << "buffer " << index;
  }
  // 2 uploads, 4 reads, a copy between devices, 3 reads, 3 pieces.
  EXPECT_GE(backend_->Synchronize(), delivered + 13);
}

// KILN_OPENCL_KERNELS=0: no generated kernels, every program on the host
// kernels over staged copies.
TEST(OpenClKernelsOffTest, ProgramsStayOnTheHostKernels) {
  setenv("KILN_OPENCL_KERNELS", "0", 1);
  auto backend = CreateBackend();
  unsetenv("KILN_OPENCL_KERNELS");
  if (!backend.ok()) GTEST_SKIP() << backend.status().ToString();
  EXPECT_FALSE((*backend)->CompilesNodes());
  runtime::ClientOptions options;
  auto client = runtime::Client::Create(options, *backend);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const std::string text = R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.exponential %x : tensor<4xf32>
  return %0 : tensor<4xf32>
})";
  auto loaded = (*client)->Compile(
      std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir", {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->device_plan(), nullptr);
}

}  // namespace
}  // namespace kiln::backends::opencl
