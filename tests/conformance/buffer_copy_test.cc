// Copies out of a buffer: PJRT_Buffer_CopyRawToHost, CopyToDevice and
// CopyToMemory.
#include <cstring>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

std::vector<float> Sequence(size_t count) {
  std::vector<float> values(count);
  for (size_t n = 0; n < count; ++n) values[n] = 1.5f * static_cast<float>(n);
  return values;
}

// CopyRawToHost of [offset, offset + size) into `dst`; the error may come
// from the call or from its event.
Status CopyRaw(PJRT_Buffer* buffer, void* dst, int64_t offset, int64_t size) {
  auto args = MAKE_ARGS(PJRT_Buffer_CopyRawToHost_Args);
  args.buffer = buffer;
  args.dst = dst;
  args.offset = offset;
  args.transfer_size = size;
  Status status = Consume(api()->PJRT_Buffer_CopyRawToHost(&args));
  if (!status.ok()) return status;
  EXPECT_NE(args.event, nullptr) << "CopyRawToHost returned no event";
  if (args.event == nullptr) return status;
  EventPtr event(args.event);
  return Await(event.get());
}

Status CopyToDevice(PJRT_Buffer* buffer, PJRT_Device* device, BufferPtr* copy) {
  auto args = MAKE_ARGS(PJRT_Buffer_CopyToDevice_Args);
  args.buffer = buffer;
  args.dst_device = device;
  Status status = Consume(api()->PJRT_Buffer_CopyToDevice(&args));
  if (status.ok()) {
    EXPECT_NE(args.dst_buffer, nullptr);
    copy->reset(args.dst_buffer);
  }
  return status;
}

Status CopyToMemory(PJRT_Buffer* buffer, PJRT_Memory* memory, BufferPtr* copy) {
  auto args = MAKE_ARGS(PJRT_Buffer_CopyToMemory_Args);
  args.buffer = buffer;
  args.dst_memory = memory;
  Status status = Consume(api()->PJRT_Buffer_CopyToMemory(&args));
  if (status.ok()) {
    EXPECT_NE(args.dst_buffer, nullptr);
    copy->reset(args.dst_buffer);
  }
  return status;
}

class CopyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClientWithDevices(2);
    if (client_ == nullptr) client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    devices_ = AddressableDevices(client_.get());
    values_ = Sequence(12);
    buffer_ = MakeBuffer(client_.get(), devices_[0], values_, {3, 4});
    ASSERT_NE(buffer_, nullptr);
  }
  ClientPtr client_;
  std::vector<PJRT_Device*> devices_;
  std::vector<float> values_;
  BufferPtr buffer_;
};

TEST_F(CopyTest, RawCopyOfTheWholeBuffer) {
  std::vector<float> dst(12, -1.0f);
  Status status = CopyRaw(buffer_.get(), dst.data(), 0, 48);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(dst, values_);
}

TEST_F(CopyTest, RawCopyOfARange) {
  std::vector<float> dst(4, -1.0f);
  Status status = CopyRaw(buffer_.get(), dst.data(), 8, 16);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(dst, std::vector<float>(values_.begin() + 2, values_.begin() + 6));
}

TEST_F(CopyTest, RawCopyOutOfRangeFails) {
  std::vector<float> dst(16, -1.0f);
  struct Range {
    int64_t offset, size;
  };
  for (Range range : {Range{40, 16}, Range{0, 52}, Range{48, 1}, Range{-4, 8}, Range{4, -4}}) {
    SCOPED_TRACE("offset " + std::to_string(range.offset) + ", size " + std::to_string(range.size));
    Status status = CopyRaw(buffer_.get(), dst.data(), range.offset, range.size);
    SKIP_IF_UNIMPLEMENTED(status);
    EXPECT_TRUE(HasCodeIn(status,
                          {PJRT_Error_Code_INVALID_ARGUMENT, PJRT_Error_Code_OUT_OF_RANGE}));
  }
}

TEST_F(CopyTest, CopyToAnotherDevice) {
  if (devices_.size() < 2) GTEST_SKIP() << "needs 2 devices";
  BufferPtr copy;
  ASSERT_TRUE(IsOk(CopyToDevice(buffer_.get(), devices_[1], &copy)));
  EXPECT_EQ(BufferDevice(copy.get()), devices_[1]);
  EXPECT_EQ(BufferMemory(copy.get()), DefaultMemory(devices_[1]));
  EXPECT_EQ(Dimensions(copy.get()), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(ElementType(copy.get()), PJRT_Buffer_Type_F32);
  EXPECT_EQ(Read<float>(copy.get()), values_);
  buffer_.reset();  // the copy does not depend on its source
  EXPECT_EQ(Read<float>(copy.get()), values_);
}

TEST_F(CopyTest, CopyAcrossEveryPairOfDevices) {
  if (devices_.size() < 2) GTEST_SKIP() << "needs 2 devices";
  BufferPtr there;
  ASSERT_TRUE(IsOk(CopyToDevice(buffer_.get(), devices_[1], &there)));
  BufferPtr back;
  ASSERT_TRUE(IsOk(CopyToDevice(there.get(), devices_[0], &back)));
  EXPECT_EQ(BufferDevice(back.get()), devices_[0]);
  EXPECT_EQ(Read<float>(back.get()), values_);
}

TEST_F(CopyTest, CopyToAnotherMemoryAndBack) {
  PJRT_Device* device = devices_[0];
  PJRT_Memory* home = DefaultMemory(device);
  PJRT_Memory* other = nullptr;
  for (PJRT_Memory* memory : DeviceMemories(device)) {
    if (memory != home) other = memory;
  }
  if (other == nullptr) GTEST_SKIP() << "the device has a single memory";
  BufferPtr away;
  Status status = CopyToMemory(buffer_.get(), other, &away);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status)) << "to memory " << MemoryKind(other);
  EXPECT_EQ(BufferMemory(away.get()), other);
  EXPECT_EQ(Read<float>(away.get()), values_);
  BufferPtr back;
  ASSERT_TRUE(IsOk(CopyToMemory(away.get(), home, &back)));
  EXPECT_EQ(BufferMemory(back.get()), home);
  EXPECT_EQ(Read<float>(back.get()), values_);
}

// ------------------------------------------------------ Kiln's promises --

class KilnCopyTest : public CopyTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    CopyTest::SetUp();
  }
};

TEST_F(KilnCopyTest, CopyToPinnedHostAndBack) {
  PJRT_Memory* pinned = FindMemory(devices_[0], "pinned_host");
  ASSERT_NE(pinned, nullptr);
  BufferPtr away;
  ASSERT_TRUE(IsOk(CopyToMemory(buffer_.get(), pinned, &away)));
  EXPECT_EQ(MemoryKind(BufferMemory(away.get())), "pinned_host");
  EXPECT_EQ(BufferDevice(away.get()), devices_[0]);
  EXPECT_EQ(Read<float>(away.get()), values_);
  BufferPtr back;
  ASSERT_TRUE(IsOk(CopyToMemory(away.get(), FindMemory(devices_[0], "device"), &back)));
  EXPECT_EQ(Read<float>(back.get()), values_);
}

TEST_F(KilnCopyTest, CopyToMemoryOfAnotherDevice) {
  PJRT_Memory* pinned = FindMemory(devices_[1], "pinned_host");
  ASSERT_NE(pinned, nullptr);
  BufferPtr away;
  ASSERT_TRUE(IsOk(CopyToMemory(buffer_.get(), pinned, &away)));
  EXPECT_EQ(BufferDevice(away.get()), devices_[1]);
  EXPECT_EQ(Read<float>(away.get()), values_);
}

// Another client's devices and memories are refused, never used.
TEST_F(KilnCopyTest, AnotherClientsDevicesAndMemoriesAreInvalid) {
  ClientPtr other = MakeClientWithDevices(2);
  ASSERT_NE(other, nullptr);
  PJRT_Device* foreign_device = AddressableDevices(other.get())[1];
  PJRT_Memory* foreign_memory = DefaultMemory(foreign_device);
  BufferPtr copy;
  EXPECT_TRUE(HasCode(CopyToDevice(buffer_.get(), foreign_device, &copy),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(HasCode(CopyToMemory(buffer_.get(), foreign_memory, &copy),
                      PJRT_Error_Code_INVALID_ARGUMENT));

  HostTransfer transfer;
  transfer.data = values_.data();
  transfer.dims = {3, 4};
  transfer.device = foreign_device;
  BufferPtr buffer;
  EXPECT_TRUE(HasCode(BufferFromHost(client_.get(), transfer, &buffer),
                      PJRT_Error_Code_INVALID_ARGUMENT))
      << "a device of another client";
  transfer.device = nullptr;
  transfer.memory = foreign_memory;
  EXPECT_TRUE(HasCode(BufferFromHost(client_.get(), transfer, &buffer),
                      PJRT_Error_Code_INVALID_ARGUMENT))
      << "a memory of another client";
  // Both stay usable.
  EXPECT_EQ(Read<float>(buffer_.get()), values_);
  EXPECT_EQ(AddressableDevices(other.get()).size(), 2u);
}

}  // namespace
}  // namespace conformance
