// PJRT_Buffer: what a buffer reports about itself, shapes of every rank, and
// where buffers can be placed.
#include <cstring>
#include <numeric>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

int64_t ElementCount(const std::vector<int64_t>& dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<int64_t>());
}

std::vector<float> Iota(size_t count, float start = 0) {
  std::vector<float> values(count);
  std::iota(values.begin(), values.end(), start);
  return values;
}

class BufferTest : public ClientFixture {};

TEST_F(BufferTest, ReportsItsTypeShapeAndPlace) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, Iota(24), {2, 3, 4});
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(ElementType(buffer.get()), PJRT_Buffer_Type_F32);
  EXPECT_EQ(Dimensions(buffer.get()), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(BufferDevice(buffer.get()), device_);
  EXPECT_EQ(BufferMemory(buffer.get()), DefaultMemory(device_));
  EXPECT_EQ(OnDeviceSize(buffer.get()), 24u * 4);
  EXPECT_FALSE(IsDeleted(buffer.get()));
}

TEST_F(BufferTest, StaticShapesAreUnpaddedAndHaveNoDynamicDimensions) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, Iota(6), {2, 3});
  ASSERT_NE(buffer, nullptr);
  auto unpadded = MAKE_ARGS(PJRT_Buffer_UnpaddedDimensions_Args);
  unpadded.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_UnpaddedDimensions(&unpadded));
  EXPECT_EQ(std::vector<int64_t>(unpadded.unpadded_dims,
                                 unpadded.unpadded_dims + unpadded.num_dims),
            (std::vector<int64_t>{2, 3}));
  auto dynamic = MAKE_ARGS(PJRT_Buffer_DynamicDimensionIndices_Args);
  dynamic.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_DynamicDimensionIndices(&dynamic));
  EXPECT_EQ(dynamic.num_dynamic_dims, 0u);
}

TEST_F(BufferTest, DefaultLayoutIsRowMajorWithoutTiles) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, Iota(24), {2, 3, 4});
  ASSERT_NE(buffer, nullptr);
  auto args = MAKE_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  args.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_GetMemoryLayout(&args));
  ASSERT_EQ(args.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  const PJRT_Buffer_MemoryLayout_Tiled& tiled = args.layout.tiled;
  ASSERT_EQ(tiled.minor_to_major_size, 3u);
  EXPECT_EQ(std::vector<int64_t>(tiled.minor_to_major, tiled.minor_to_major + 3),
            (std::vector<int64_t>{2, 1, 0}));
  EXPECT_EQ(tiled.num_tiles, 0u);
}

TEST_F(BufferTest, ReadyEventFiresWithoutError) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, Iota(4), {4});
  ASSERT_NE(buffer, nullptr);
  auto args = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
  args.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ReadyEvent(&args));
  EventPtr event(args.event);
  ASSERT_NE(event, nullptr);
  EXPECT_TRUE(IsOk(Await(event.get())));
  EXPECT_TRUE(IsReady(event.get()));
  EXPECT_TRUE(IsOk(EventError(event.get())));
}

TEST_F(BufferTest, DeviceMemoryPointersShowTheData) {
  std::vector<float> values = Iota(16, 0.5f);
  BufferPtr buffer = MakeBuffer(client_.get(), device_, values, {4, 4});
  ASSERT_NE(buffer, nullptr);
  auto on_cpu = MAKE_ARGS(PJRT_Buffer_IsOnCpu_Args);
  on_cpu.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_IsOnCpu(&on_cpu));
  if (!on_cpu.is_on_cpu) GTEST_SKIP() << "device memory is not host-readable";

  auto increase = MAKE_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  increase.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_IncreaseExternalReferenceCount(&increase));
  auto opaque = MAKE_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
  opaque.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&opaque));
  ASSERT_NE(opaque.device_memory_ptr, nullptr);
  EXPECT_EQ(std::memcmp(opaque.device_memory_ptr, values.data(), values.size() * sizeof(float)), 0);
  auto unsafe = MAKE_ARGS(PJRT_Buffer_UnsafePointer_Args);
  unsafe.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_UnsafePointer(&unsafe));
  ASSERT_NE(unsafe.buffer_pointer, 0u);
  EXPECT_EQ(std::memcmp(reinterpret_cast<const void*>(unsafe.buffer_pointer), values.data(),
                        values.size() * sizeof(float)),
            0);
  auto decrease = MAKE_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  decrease.buffer = buffer.get();
  EXPECT_PJRT_OK(api()->PJRT_Buffer_DecreaseExternalReferenceCount(&decrease));
}

TEST_F(BufferTest, PlacedByMemoryWithoutADevice) {
  // JAX's way: device = NULL, memory = the device's default memory.
  PJRT_Memory* memory = DefaultMemory(device_);
  std::vector<float> values = Iota(6);
  HostTransfer transfer;
  transfer.data = values.data();
  transfer.dims = {2, 3};
  transfer.memory = memory;
  BufferPtr buffer;
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer)));
  EXPECT_EQ(BufferMemory(buffer.get()), memory);
  EXPECT_EQ(BufferDevice(buffer.get()), device_);
  EXPECT_EQ(Read<float>(buffer.get()), values);
}

TEST_F(BufferTest, PlacedInAnotherMemoryOfTheDevice) {
  PJRT_Memory* other = nullptr;
  for (PJRT_Memory* memory : DeviceMemories(device_)) {
    if (memory != DefaultMemory(device_)) other = memory;
  }
  if (other == nullptr) GTEST_SKIP() << "the device has a single memory";
  std::vector<float> values = Iota(5, 3.0f);
  HostTransfer transfer;
  transfer.data = values.data();
  transfer.dims = {5};
  transfer.memory = other;
  BufferPtr buffer;
  Status status = BufferFromHost(client_.get(), transfer, &buffer);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status)) << "into memory " << MemoryKind(other);
  EXPECT_EQ(BufferMemory(buffer.get()), other);
  EXPECT_EQ(Read<float>(buffer.get()), values);
}

TEST_F(BufferTest, DestroyingANullBufferIsANoOp) {
  auto args = MAKE_ARGS(PJRT_Buffer_Destroy_Args);
  EXPECT_PJRT_OK(api()->PJRT_Buffer_Destroy(&args));
}

TEST_F(BufferTest, ManyBuffersCoexist) {
  std::vector<BufferPtr> buffers;
  for (int i = 0; i < 64; ++i) {
    buffers.push_back(MakeBuffer(client_.get(), device_, std::vector<int32_t>{i, -i}, {2}));
  }
  for (int i = 0; i < 64; ++i) {
    EXPECT_EQ(Read<int32_t>(buffers[i].get()), (std::vector<int32_t>{i, -i}));
  }
}

// ------------------------------------------------------ shapes of any rank --

class BufferShapeTest : public BufferTest,
                        public ::testing::WithParamInterface<std::vector<int64_t>> {};

TEST_P(BufferShapeTest, RoundTripsAndReportsTheShape) {
  const std::vector<int64_t>& dims = GetParam();
  int64_t count = ElementCount(dims);
  std::vector<int32_t> values(static_cast<size_t>(count));
  std::iota(values.begin(), values.end(), -7);
  BufferPtr buffer = MakeBuffer(client_.get(), device_, values, dims);
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(Dimensions(buffer.get()), dims);
  EXPECT_EQ(OnDeviceSize(buffer.get()), static_cast<size_t>(count) * 4);
  EXPECT_EQ(Read<int32_t>(buffer.get()), values);
  auto layout = MAKE_ARGS(PJRT_Buffer_GetMemoryLayout_Args);
  layout.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_GetMemoryLayout(&layout));
  ASSERT_EQ(layout.layout.type, PJRT_Buffer_MemoryLayout_Type_Tiled);
  EXPECT_EQ(layout.layout.tiled.minor_to_major_size, dims.size());
}

std::string ShapeName(const ::testing::TestParamInfo<std::vector<int64_t>>& info) {
  if (info.param.empty()) return "scalar";
  std::string name;
  for (int64_t dim : info.param) name += (name.empty() ? "" : "x") + std::to_string(dim);
  return "d" + name;
}

INSTANTIATE_TEST_SUITE_P(Shapes, BufferShapeTest,
                         ::testing::Values(std::vector<int64_t>{}, std::vector<int64_t>{0},
                                           std::vector<int64_t>{3, 0, 2}, std::vector<int64_t>{1},
                                           std::vector<int64_t>{7}, std::vector<int64_t>{2, 3},
                                           std::vector<int64_t>{2, 3, 4},
                                           std::vector<int64_t>{2, 1, 3, 2},
                                           std::vector<int64_t>{1, 2, 3, 2, 2},
                                           std::vector<int64_t>{2, 2, 1, 3, 1, 2}),
                         ShapeName);

// ------------------------------------------------------ Kiln's promises --

class KilnBufferTest : public BufferTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    BufferTest::SetUp();
  }
};

// Host-backend buffers are host memory the framework may read in place;
// another backend's device memory is not.
TEST_F(KilnBufferTest, BuffersAreOnCpuOnlyOnTheHostBackend) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, Iota(2), {2});
  ASSERT_NE(buffer, nullptr);
  auto args = MAKE_ARGS(PJRT_Buffer_IsOnCpu_Args);
  args.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_IsOnCpu(&args));
  EXPECT_EQ(args.is_on_cpu, KilnBackend(device_) == "host");
}

TEST_F(KilnBufferTest, PinnedHostBuffersKeepTheirValues) {
  PJRT_Memory* pinned = FindMemory(device_, "pinned_host");
  ASSERT_NE(pinned, nullptr);
  std::vector<float> values = Iota(8, -4.0f);
  HostTransfer transfer;
  transfer.data = values.data();
  transfer.dims = {2, 4};
  transfer.memory = pinned;
  BufferPtr buffer;
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer)));
  EXPECT_EQ(BufferMemory(buffer.get()), pinned);
  EXPECT_EQ(BufferDevice(buffer.get()), device_);
  EXPECT_EQ(Read<float>(buffer.get()), values);
}

TEST_F(KilnBufferTest, NonEmptyBuffersHaveNonNullPointers) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, Iota(1), {1});
  ASSERT_NE(buffer, nullptr);
  auto unsafe = MAKE_ARGS(PJRT_Buffer_UnsafePointer_Args);
  unsafe.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_UnsafePointer(&unsafe));
  EXPECT_NE(unsafe.buffer_pointer, 0u);
  auto opaque = MAKE_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
  opaque.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&opaque));
  EXPECT_NE(opaque.device_memory_ptr, nullptr);
}

}  // namespace
}  // namespace conformance
