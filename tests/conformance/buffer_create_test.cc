// Buffers not made from host data: CreateUninitializedBuffer,
// CreateViewOfDeviceBuffer and CreateErrorBuffer.
#include <atomic>
#include <cstring>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

class CreateBufferTest : public ClientFixture {};

// ------------------------------------------------------------ uninitialized --

Status CreateUninitialized(PJRT_Client* client, PJRT_Device* device, PJRT_Memory* memory,
                           PJRT_Buffer_Type type, const std::vector<int64_t>& dims,
                           BufferPtr* buffer) {
  auto args = MAKE_ARGS(PJRT_Client_CreateUninitializedBuffer_Args);
  args.client = client;
  args.shape_dims = dims.data();
  args.shape_num_dims = dims.size();
  args.shape_element_type = type;
  args.device = device;
  args.memory = memory;
  Status status = Consume(api()->PJRT_Client_CreateUninitializedBuffer(&args));
  if (status.ok()) {
    EXPECT_NE(args.buffer, nullptr);
    buffer->reset(args.buffer);
  }
  return status;
}

TEST_F(CreateBufferTest, UninitializedBufferHasTheShapeAskedFor) {
  BufferPtr buffer;
  Status status = CreateUninitialized(client_.get(), device_, nullptr, PJRT_Buffer_Type_S16, {4, 5},
                                      &buffer);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(ElementType(buffer.get()), PJRT_Buffer_Type_S16);
  EXPECT_EQ(Dimensions(buffer.get()), (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(BufferDevice(buffer.get()), device_);
  EXPECT_EQ(OnDeviceSize(buffer.get()), 40u);
  std::vector<uint8_t> bytes;
  ASSERT_TRUE(IsOk(ToHost(buffer.get(), &bytes)));  // any values, but readable
  EXPECT_EQ(bytes.size(), 40u);
}

TEST_F(CreateBufferTest, UninitializedBufferInAMemory) {
  PJRT_Memory* memory = DefaultMemory(device_);
  BufferPtr buffer;
  Status status = CreateUninitialized(client_.get(), nullptr, memory, PJRT_Buffer_Type_F64, {3},
                                      &buffer);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(BufferMemory(buffer.get()), memory);
  EXPECT_EQ(BufferDevice(buffer.get()), device_);
}

// ------------------------------------------------------------------- views --

struct DeleteRecord {
  std::atomic<int> calls{0};
  void* pointer = nullptr;
};

void RecordDelete(void* device_buffer_ptr, void* user_arg) {
  auto* record = static_cast<DeleteRecord*>(user_arg);
  record->pointer = device_buffer_ptr;
  ++record->calls;
}

Status CreateView(PJRT_Client* client, PJRT_Device* device, PJRT_Memory* memory, void* data,
                  const std::vector<int64_t>& dims, DeleteRecord* record, BufferPtr* buffer) {
  auto args = MAKE_ARGS(PJRT_Client_CreateViewOfDeviceBuffer_Args);
  args.client = client;
  args.device_buffer_ptr = data;
  args.dims = dims.data();
  args.num_dims = dims.size();
  args.element_type = PJRT_Buffer_Type_F32;
  args.device = device;
  args.memory = memory;
  args.on_delete_callback = &RecordDelete;
  args.on_delete_callback_arg = record;
  Status status = Consume(api()->PJRT_Client_CreateViewOfDeviceBuffer(&args));
  if (status.ok()) {
    EXPECT_NE(args.buffer, nullptr);
    buffer->reset(args.buffer);
  }
  return status;
}

// A view's pointer is device memory: host memory only where the device's
// memory is the host's (Kiln's host backend); elsewhere a host pointer
// views pinned host memory.
PJRT_Memory* HostPointerMemory(PJRT_Device* device) {
  return KilnBackend(device) == "host" || KilnBackend(device).empty()
             ? DefaultMemory(device)
             : FindMemory(device, "pinned_host");
}

TEST_F(CreateBufferTest, ViewShowsTheCallersMemory) {
  alignas(64) float data[6] = {1, 2, 3, 4, 5, 6};
  DeleteRecord record;
  BufferPtr view;
  PJRT_Memory* memory = HostPointerMemory(device_);
  Status status = CreateView(client_.get(), memory == DefaultMemory(device_) ? device_ : nullptr,
                             memory == DefaultMemory(device_) ? nullptr : memory, data, {2, 3},
                             &record, &view);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(Dimensions(view.get()), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(BufferDevice(view.get()), device_);
  EXPECT_EQ(Read<float>(view.get()), std::vector<float>(data, data + 6));
  EXPECT_EQ(record.calls, 0) << "deleted while the view is alive";
  view.reset();
  EXPECT_EQ(record.calls, 1) << "on_delete_callback runs once, at destroy";
  EXPECT_EQ(record.pointer, data);
}

TEST_F(CreateBufferTest, ViewByMemoryCallsBackOnceAfterDelete) {
  alignas(64) float data[4] = {9, 8, 7, 6};
  DeleteRecord record;
  BufferPtr view;
  Status status = CreateView(client_.get(), nullptr, HostPointerMemory(device_), data, {4}, &record,
                             &view);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(Read<float>(view.get()), std::vector<float>(data, data + 4));
  auto remove = MAKE_ARGS(PJRT_Buffer_Delete_Args);
  remove.buffer = view.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_Delete(&remove));
  view.reset();
  EXPECT_EQ(record.calls, 1);
}

// ------------------------------------------------------------------ errors --

Status CreateErrorBuffer(PJRT_Client* client, PJRT_Memory* memory, PJRT_Error_Code code,
                         const std::string& message, BufferPtr* buffer) {
  auto args = MAKE_ARGS(PJRT_Client_CreateErrorBuffer_Args);
  args.client = client;
  args.error_code = code;
  args.error_message = message.data();
  args.error_message_size = message.size();
  int64_t dims[] = {2, 2};
  args.shape_dims = dims;
  args.shape_num_dims = 2;
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.memory = memory;
  Status status = Consume(api()->PJRT_Client_CreateErrorBuffer(&args));
  if (status.ok()) {
    EXPECT_NE(args.buffer, nullptr);
    buffer->reset(args.buffer);
  }
  return status;
}

TEST_F(CreateBufferTest, ErrorBufferCarriesItsError) {
  const std::string message = "the producer failed: step 3 of 7";
  BufferPtr buffer;
  Status status = CreateErrorBuffer(client_.get(), DefaultMemory(device_),
                                    PJRT_Error_Code_DATA_LOSS, message, &buffer);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(Dimensions(buffer.get()), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ElementType(buffer.get()), PJRT_Buffer_Type_F32);

  auto ready = MAKE_ARGS(PJRT_Buffer_ReadyEvent_Args);
  ready.buffer = buffer.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ReadyEvent(&ready));
  EventPtr event(ready.event);
  Status awaited = Await(event.get());
  EXPECT_TRUE(HasCode(awaited, PJRT_Error_Code_DATA_LOSS));
  EXPECT_TRUE(Contains(awaited.message, message));
  Status error = EventError(event.get());
  EXPECT_TRUE(HasCode(error, PJRT_Error_Code_DATA_LOSS));
  EXPECT_TRUE(Contains(error.message, message));
}

TEST_F(CreateBufferTest, ReadingAnErrorBufferYieldsItsError) {
  BufferPtr buffer;
  Status status = CreateErrorBuffer(client_.get(), DefaultMemory(device_), PJRT_Error_Code_ABORTED,
                                    "aborted upstream", &buffer);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  std::vector<uint8_t> bytes;
  Status read = ToHost(buffer.get(), &bytes);  // from the call or its event
  EXPECT_TRUE(HasCode(read, PJRT_Error_Code_ABORTED));
  EXPECT_TRUE(Contains(read.message, "aborted upstream"));
}

}  // namespace
}  // namespace conformance
