// The end of a buffer: Delete, Destroy, external references that outlive a
// Delete, and buffers destroyed while work on them is in flight.
#include <chrono>
#include <cstring>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

using std::chrono::seconds;

void Delete(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_Delete_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_Delete(&args));
}

Status IncreaseReferences(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_IncreaseExternalReferenceCount_Args);
  args.buffer = buffer;
  return Consume(api()->PJRT_Buffer_IncreaseExternalReferenceCount(&args));
}

Status DecreaseReferences(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_DecreaseExternalReferenceCount_Args);
  args.buffer = buffer;
  return Consume(api()->PJRT_Buffer_DecreaseExternalReferenceCount(&args));
}

void* DataPointer(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_OpaqueDeviceMemoryDataPointer_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_OpaqueDeviceMemoryDataPointer(&args));
  return args.device_memory_ptr;
}

int64_t BytesInUse(PJRT_Device* device) {
  PJRT_Device_MemoryStats_Args stats;
  EXPECT_TRUE(IsOk(MemoryStats(device, &stats)));
  return stats.bytes_in_use;
}

class LifetimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClientWithDevices(2);
    if (client_ == nullptr) client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    devices_ = AddressableDevices(client_.get());
    device_ = devices_[0];
  }
  ClientPtr client_;
  std::vector<PJRT_Device*> devices_;
  PJRT_Device* device_ = nullptr;
};

TEST_F(LifetimeTest, DeleteMarksTheBufferDeleted) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  ASSERT_NE(buffer, nullptr);
  EXPECT_FALSE(IsDeleted(buffer.get()));
  Delete(buffer.get());
  EXPECT_TRUE(IsDeleted(buffer.get()));
}

TEST_F(LifetimeTest, ReadingADeletedBufferFails) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  ASSERT_NE(buffer, nullptr);
  Delete(buffer.get());
  std::vector<uint8_t> bytes;
  Status status = ToHost(buffer.get(), &bytes);  // from the call or its event
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message, "deleted"));
}

TEST_F(LifetimeTest, CopyingADeletedBufferFails) {
  if (devices_.size() < 2) GTEST_SKIP() << "needs 2 devices";
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  ASSERT_NE(buffer, nullptr);
  Delete(buffer.get());
  auto args = MAKE_ARGS(PJRT_Buffer_CopyToDevice_Args);
  args.buffer = buffer.get();
  args.dst_device = devices_[1];
  Status status = Consume(api()->PJRT_Buffer_CopyToDevice(&args));
  BufferPtr copy(args.dst_buffer);
  if (status.ok() && copy != nullptr) {
    // The error may instead surface on the copy.
    auto ready = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
    ready.buffer = copy.get();
    ASSERT_PJRT_OK(api()->PJRT_Buffer_ReadyEvent(&ready));
    EventPtr event(ready.event);
    status = Await(event.get());
  }
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(Contains(status.message, "deleted"));
}

TEST_F(LifetimeTest, ReadyEventOfADeletedBufferCarriesAnError) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1}, {1});
  ASSERT_NE(buffer, nullptr);
  Delete(buffer.get());
  auto args = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
  args.buffer = buffer.get();
  Status status = Consume(api()->PJRT_Buffer_ReadyEvent(&args));
  if (status.ok()) {
    // "If the buffer has been deleted ... the returned event will immediately
    // indicate an error."
    EventPtr event(args.event);
    ASSERT_NE(event, nullptr);
    status = Await(event.get());
  }
  EXPECT_FALSE(status.ok());
}

TEST_F(LifetimeTest, DecreaseWithoutIncreaseFails) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1}, {1});
  ASSERT_NE(buffer, nullptr);
  EXPECT_FALSE(DecreaseReferences(buffer.get()).ok());
  ASSERT_TRUE(IsOk(IncreaseReferences(buffer.get())));
  ASSERT_TRUE(IsOk(DecreaseReferences(buffer.get())));
  EXPECT_FALSE(DecreaseReferences(buffer.get()).ok()) << "the count is back to 0";
}

TEST_F(LifetimeTest, ExternalReferenceKeepsDeletedMemoryReadable) {
  constexpr int64_t kElements = 64 * 1024;  // 256 KiB of F32
  std::vector<float> values(kElements);
  for (int64_t n = 0; n < kElements; ++n) values[n] = static_cast<float>(n) * 0.5f;
  BufferPtr buffer = MakeBuffer(client_.get(), device_, values, {kElements});
  ASSERT_NE(buffer, nullptr);
  auto on_cpu = MAKE_ARGS(PJRT_Buffer_IsOnCpu_Args);
  on_cpu.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_IsOnCpu(&on_cpu));
  if (!on_cpu.is_on_cpu) GTEST_SKIP() << "device memory is not host-readable";
  PJRT_Device_MemoryStats_Args stats;
  Status stats_status = MemoryStats(device_, &stats);
  bool has_stats = stats_status.ok();
  if (!has_stats && IsKiln()) ADD_FAILURE() << "MemoryStats: " << stats_status;

  // As numpy does with a jax.Array: reference, then read through the pointer.
  ASSERT_TRUE(IsOk(IncreaseReferences(buffer.get())));
  ASSERT_TRUE(IsOk(IncreaseReferences(buffer.get())));
  const void* data = DataPointer(buffer.get());
  ASSERT_NE(data, nullptr);
  int64_t in_use_before_delete = has_stats ? BytesInUse(device_) : 0;
  Delete(buffer.get());
  EXPECT_TRUE(IsDeleted(buffer.get()));
  EXPECT_EQ(std::memcmp(data, values.data(), kElements * sizeof(float)), 0)
      << "memory under an external reference changed after Delete";
  if (has_stats) {
    EXPECT_EQ(BytesInUse(device_), in_use_before_delete)
        << "memory under an external reference was released by Delete";
  }
  ASSERT_TRUE(IsOk(DecreaseReferences(buffer.get())));
  EXPECT_EQ(std::memcmp(data, values.data(), kElements * sizeof(float)), 0)
      << "one reference is still held";
  if (has_stats) {
    EXPECT_EQ(BytesInUse(device_), in_use_before_delete);
  }
  ASSERT_TRUE(IsOk(DecreaseReferences(buffer.get())));
  if (has_stats) {
    EXPECT_LE(BytesInUse(device_),
              in_use_before_delete - kElements * static_cast<int64_t>(sizeof(float)))
        << "the last reference is gone: the memory is released";
  }
}

TEST_F(LifetimeTest, DestroyWhileAHostTransferIsInFlight) {
  constexpr size_t kElements = 16 * 1024 * 1024;  // 64 MiB of F32
  std::vector<float> host(kElements, 3.0f);
  HostTransfer transfer;
  transfer.data = host.data();
  transfer.dims = {static_cast<int64_t>(kElements)};
  transfer.semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  transfer.device = device_;
  BufferPtr buffer;
  EventPtr done;
  Watchdog watchdog(seconds(120), "Buffer_Destroy during a host transfer");
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
  buffer.reset();
  ASSERT_NE(done, nullptr);
  Await(done.get());  // success or an error, but it must come
  EXPECT_TRUE(IsReady(done.get()));
}

TEST_F(LifetimeTest, DestroyWhileACopyToHostIsInFlight) {
  constexpr size_t kElements = 16 * 1024 * 1024;  // 64 MiB of F32
  std::vector<float> values(kElements);
  for (size_t n = 0; n < kElements; ++n) values[n] = static_cast<float>(n % 1021);
  BufferPtr buffer = MakeBuffer(client_.get(), device_, values, {static_cast<int64_t>(kElements)});
  ASSERT_NE(buffer, nullptr);
  std::vector<float> dst(kElements, -1.0f);
  auto args = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = buffer.get();
  args.dst = dst.data();
  args.dst_size = kElements * sizeof(float);
  Watchdog watchdog(seconds(120), "Buffer_Destroy during ToHostBuffer");
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ToHostBuffer(&args));
  EventPtr event(args.event);
  buffer.reset();  // the copy in flight keeps the memory alive
  ASSERT_NE(event, nullptr);
  ASSERT_TRUE(IsOk(Await(event.get())));
  EXPECT_EQ(dst, values);
}

// ------------------------------------------------------ Kiln's promises --

class KilnLifetimeTest : public LifetimeTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    LifetimeTest::SetUp();
  }
};

TEST_F(KilnLifetimeTest, ReadingADeletedBufferIsAFailedPrecondition) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  ASSERT_NE(buffer, nullptr);
  Delete(buffer.get());
  std::vector<uint8_t> bytes;
  Status status = ToHost(buffer.get(), &bytes);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_FAILED_PRECONDITION));
  EXPECT_TRUE(Contains(status.message, "deleted"));
}

TEST_F(KilnLifetimeTest, CopyingADeletedBufferIsAFailedPrecondition) {
  BufferPtr buffer = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  ASSERT_NE(buffer, nullptr);
  Delete(buffer.get());
  auto args = MAKE_ARGS(PJRT_Buffer_CopyToDevice_Args);
  args.buffer = buffer.get();
  args.dst_device = devices_[1];
  Status status = Consume(api()->PJRT_Buffer_CopyToDevice(&args));
  BufferPtr copy(args.dst_buffer);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_FAILED_PRECONDITION));
  EXPECT_TRUE(Contains(status.message, "deleted"));
}

TEST_F(KilnLifetimeTest, ClientDestroyWhileAHostTransferIsInFlight) {
  constexpr size_t kElements = 16 * 1024 * 1024;  // 64 MiB of F32
  std::vector<float> host(kElements, 5.0f);
  HostTransfer transfer;
  transfer.data = host.data();
  transfer.dims = {static_cast<int64_t>(kElements)};
  transfer.semantics = PJRT_HostBufferSemantics_kImmutableUntilTransferCompletes;
  transfer.device = device_;
  BufferPtr buffer;
  EventPtr done;
  Watchdog watchdog(seconds(120), "Client_Destroy during a host transfer");
  ASSERT_TRUE(IsOk(BufferFromHost(client_.get(), transfer, &buffer, &done)));
  buffer.reset();
  client_.reset();  // events are the caller's: `done` outlives the client
  ASSERT_NE(done, nullptr);
  Await(done.get());
  EXPECT_TRUE(IsReady(done.get()));
}

}  // namespace
}  // namespace conformance
