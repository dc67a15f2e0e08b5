// PJRT_Client_CreateBuffersForAsyncHostToDevice and the
// PJRT_AsyncHostToDeviceTransferManager_* family: buffers made first whose
// bytes arrive later, in pieces.
#include <cstring>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

struct ManagerDeleter {
  void operator()(PJRT_AsyncHostToDeviceTransferManager* manager) const {
    auto args = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args);
    args.transfer_manager = manager;
    EXPECT_PJRT_OK(api()->PJRT_AsyncHostToDeviceTransferManager_Destroy(&args));
  }
};
using ManagerPtr = std::unique_ptr<PJRT_AsyncHostToDeviceTransferManager, ManagerDeleter>;

struct Spec {
  PJRT_Buffer_Type type;
  std::vector<int64_t> dims;
};

Status CreateManager(PJRT_Client* client, PJRT_Memory* memory, const std::vector<Spec>& specs,
                     ManagerPtr* manager) {
  std::vector<PJRT_ShapeSpec> shape_specs;
  for (const Spec& spec : specs) {
    auto shape = MAKE_ARGS(PJRT_ShapeSpec);
    shape.dims = spec.dims.data();
    shape.num_dims = spec.dims.size();
    shape.element_type = spec.type;
    shape_specs.push_back(shape);
  }
  auto args = MAKE_ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args);
  args.client = client;
  args.shape_specs = shape_specs.data();
  args.num_shape_specs = shape_specs.size();
  args.memory = memory;
  Status status = Consume(api()->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args));
  if (status.ok()) manager->reset(args.transfer_manager);
  return status;
}

// One piece; `done` (if given) receives done_with_h2d_transfer, else it is awaited.
Status TransferData(PJRT_AsyncHostToDeviceTransferManager* manager, int index, const void* data,
                    int64_t offset, int64_t size, bool is_last, EventPtr* done = nullptr) {
  auto args = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferData_Args);
  args.transfer_manager = manager;
  args.buffer_index = index;
  args.data = data;
  args.offset = offset;
  args.transfer_size = size;
  args.is_last_transfer = is_last;
  Status status = Consume(api()->PJRT_AsyncHostToDeviceTransferManager_TransferData(&args));
  if (!status.ok()) return status;
  EventPtr event(args.done_with_h2d_transfer);
  EXPECT_NE(event, nullptr) << "TransferData returned no event";
  if (done != nullptr) {
    *done = std::move(event);
    return status;
  }
  return event == nullptr ? status : Await(event.get());
}

Status Retrieve(PJRT_AsyncHostToDeviceTransferManager* manager, int index, BufferPtr* buffer) {
  auto args = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer_Args);
  args.transfer_manager = manager;
  args.buffer_index = index;
  Status status = Consume(api()->PJRT_AsyncHostToDeviceTransferManager_RetrieveBuffer(&args));
  if (status.ok()) buffer->reset(args.buffer_out);
  return status;
}

Status BufferSize(PJRT_AsyncHostToDeviceTransferManager* manager, int index, size_t* size) {
  auto args = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferSize_Args);
  args.transfer_manager = manager;
  args.buffer_index = index;
  Status status = Consume(api()->PJRT_AsyncHostToDeviceTransferManager_BufferSize(&args));
  *size = args.buffer_size;
  return status;
}

Status SetBufferError(PJRT_AsyncHostToDeviceTransferManager* manager, int index,
                      PJRT_Error_Code code, std::string_view message) {
  auto args = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_SetBufferError_Args);
  args.transfer_manager = manager;
  args.buffer_index = index;
  args.error_code = code;
  args.error_message = message.data();
  args.error_message_size = message.size();
  return Consume(api()->PJRT_AsyncHostToDeviceTransferManager_SetBufferError(&args));
}

class AsyncTransferTest : public ClientFixture {
 protected:
  void SetUp() override {
    ClientFixture::SetUp();
    if (HasFatalFailure()) return;
    Status status = CreateManager(client_.get(), DefaultMemory(device_),
                                  {{PJRT_Buffer_Type_F32, {4}}, {PJRT_Buffer_Type_S32, {2}}},
                                  &manager_);
    SKIP_IF_UNIMPLEMENTED(status);
    ASSERT_TRUE(IsOk(status));
  }
  ManagerPtr manager_;
};

TEST_F(AsyncTransferTest, ReportsItsBuffersAndDevice) {
  auto count = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_BufferCount_Args);
  count.transfer_manager = manager_.get();
  ASSERT_PJRT_OK(api()->PJRT_AsyncHostToDeviceTransferManager_BufferCount(&count));
  EXPECT_EQ(count.buffer_count, 2u);
  size_t size = 0;
  ASSERT_TRUE(IsOk(BufferSize(manager_.get(), 0, &size)));
  EXPECT_EQ(size, 16u);
  ASSERT_TRUE(IsOk(BufferSize(manager_.get(), 1, &size)));
  EXPECT_EQ(size, 8u);
  auto device = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_Device_Args);
  device.transfer_manager = manager_.get();
  ASSERT_PJRT_OK(api()->PJRT_AsyncHostToDeviceTransferManager_Device(&device));
  EXPECT_EQ(device.device_out, device_);
}

TEST_F(AsyncTransferTest, BufferIsReadyOnlyWhenItsLastPieceLands) {
  BufferPtr buffer;
  ASSERT_TRUE(IsOk(Retrieve(manager_.get(), 0, &buffer)));
  EXPECT_EQ(Dimensions(buffer.get()), (std::vector<int64_t>{4}));
  EXPECT_EQ(ElementType(buffer.get()), PJRT_Buffer_Type_F32);
  EventPtr ready = ReadyEvent(buffer.get());
  const std::vector<float> values = {1.5f, -2.0f, 3.25f, 8.0f};
  // The second half first, then the first half marked last.
  ASSERT_TRUE(IsOk(TransferData(manager_.get(), 0, values.data() + 2, 8, 8, false)));
  EXPECT_FALSE(IsReady(ready.get()));
  ASSERT_TRUE(IsOk(TransferData(manager_.get(), 0, values.data(), 0, 8, true)));
  EXPECT_TRUE(IsOk(Await(ready.get())));
  EXPECT_EQ(Read<float>(buffer.get()), values);
}

TEST_F(AsyncTransferTest, TransferLiteralFillsAWholeBufferFromAHostLayout) {
  ManagerPtr manager;
  ASSERT_TRUE(IsOk(CreateManager(client_.get(), DefaultMemory(device_),
                                 {{PJRT_Buffer_Type_F32, {2, 3}}}, &manager)));
  // Column-major host data: element (i, j) at i + 2 * j.
  const std::vector<float> column_major = {0, 3, 1, 4, 2, 5};
  const int64_t minor_to_major[] = {0, 1};
  auto layout = MAKE_ARGS(PJRT_Buffer_MemoryLayout);
  layout.type = PJRT_Buffer_MemoryLayout_Type_Tiled;
  layout.tiled.struct_size = PJRT_Buffer_MemoryLayout_Tiled_STRUCT_SIZE;
  layout.tiled.minor_to_major = minor_to_major;
  layout.tiled.minor_to_major_size = 2;
  const int64_t dims[] = {2, 3};
  auto args = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_TransferLiteral_Args);
  args.transfer_manager = manager.get();
  args.buffer_index = 0;
  args.data = column_major.data();
  args.shape_dims = dims;
  args.shape_num_dims = 2;
  args.shape_element_type = PJRT_Buffer_Type_F32;
  args.shape_layout = &layout;
  ASSERT_PJRT_OK(api()->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EventPtr done(args.done_with_h2d_transfer);
  ASSERT_NE(done, nullptr);
  EXPECT_TRUE(IsOk(Await(done.get())));
  BufferPtr buffer;
  ASSERT_TRUE(IsOk(Retrieve(manager.get(), 0, &buffer)));
  EXPECT_EQ(Read<float>(buffer.get()), (std::vector<float>{0, 1, 2, 3, 4, 5}));

  args.shape_num_dims = 1;  // f32[2] is not the buffer's shape
  args.shape_layout = nullptr;
  Status wrong = Consume(api()->PJRT_AsyncHostToDeviceTransferManager_TransferLiteral(&args));
  EXPECT_TRUE(HasCode(wrong, PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(AsyncTransferTest, SetBufferErrorReachesTheReadyEvent) {
  BufferPtr buffer;
  ASSERT_TRUE(IsOk(Retrieve(manager_.get(), 1, &buffer)));
  EventPtr ready = ReadyEvent(buffer.get());
  ASSERT_TRUE(IsOk(SetBufferError(manager_.get(), 1, PJRT_Error_Code_DATA_LOSS, "disk on fire")));
  Status status = Await(ready.get());
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_DATA_LOSS));
  EXPECT_TRUE(Contains(status.message, "disk on fire"));
  const int32_t values[2] = {1, 2};
  EXPECT_TRUE(HasCode(TransferData(manager_.get(), 1, values, 0, 8, true),
                      PJRT_Error_Code_FAILED_PRECONDITION));
  std::vector<uint8_t> bytes;
  EXPECT_FALSE(ToHost(buffer.get(), &bytes).ok());
}

TEST_F(AsyncTransferTest, ABufferIsRetrievedOnce) {
  BufferPtr first, second;
  ASSERT_TRUE(IsOk(Retrieve(manager_.get(), 0, &first)));
  Status again = Retrieve(manager_.get(), 0, &second);
  EXPECT_TRUE(HasCodeIn(again,
                        {PJRT_Error_Code_FAILED_PRECONDITION, PJRT_Error_Code_INVALID_ARGUMENT}));
  EXPECT_EQ(second, nullptr);
}

// ------------------------------------------------------ Kiln's promises --

class KilnAsyncTransferTest : public AsyncTransferTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    AsyncTransferTest::SetUp();
  }
};

TEST_F(KilnAsyncTransferTest, IndicesOffsetsAndSizesOutOfRangeAreInvalid) {
  const float values[4] = {};
  Status index = TransferData(manager_.get(), 2, values, 0, 4, false);
  EXPECT_TRUE(HasCode(index, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(index.message, "buffer_index is 2; expected 0 to 1"));
  Status past = TransferData(manager_.get(), 0, values, 12, 8, false);
  EXPECT_TRUE(HasCode(past, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(past.message, "offset + transfer_size <= 16"));
  EXPECT_TRUE(HasCode(TransferData(manager_.get(), 0, values, -4, 4, false),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(HasCode(TransferData(manager_.get(), 0, nullptr, 0, 4, false),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  size_t size = 0;
  EXPECT_TRUE(HasCode(BufferSize(manager_.get(), -1, &size), PJRT_Error_Code_INVALID_ARGUMENT));
  BufferPtr buffer;
  EXPECT_TRUE(HasCode(Retrieve(manager_.get(), 5, &buffer), PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(HasCode(SetBufferError(manager_.get(), 7, PJRT_Error_Code_INTERNAL, "x"),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(HasCode(SetBufferError(manager_.get(), 0, PJRT_Error_Code_OK, ""),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(KilnAsyncTransferTest, NothingIsSentAfterTheLastPiece) {
  const float values[4] = {1, 2, 3, 4};
  ASSERT_TRUE(IsOk(TransferData(manager_.get(), 0, values, 0, 16, true)));
  Status late = TransferData(manager_.get(), 0, values, 0, 4, false);
  EXPECT_TRUE(HasCode(late, PJRT_Error_Code_FAILED_PRECONDITION));
  EXPECT_TRUE(Contains(late.message, "takes no more transfers"));
  EXPECT_TRUE(HasCode(SetBufferError(manager_.get(), 0, PJRT_Error_Code_INTERNAL, "late"),
                      PJRT_Error_Code_FAILED_PRECONDITION));
}

TEST_F(KilnAsyncTransferTest, DestroyingTheManagerFailsBuffersStillWaiting) {
  BufferPtr waiting;
  ASSERT_TRUE(IsOk(Retrieve(manager_.get(), 0, &waiting)));
  EventPtr ready = ReadyEvent(waiting.get());
  manager_.reset();
  EXPECT_TRUE(HasCode(Await(ready.get()), PJRT_Error_Code_CANCELLED));
}

TEST_F(KilnAsyncTransferTest, MetadataValuesAreStrings) {
  PJRT_NamedValue entries[] = {NamedString("source", "dataset-7")};
  auto args = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_AddMetadata_Args);
  args.transfer_manager = manager_.get();
  args.transfer_metadata = entries;
  args.num_metadata = 1;
  EXPECT_PJRT_OK(api()->PJRT_AsyncHostToDeviceTransferManager_AddMetadata(&args));
  entries[0] = NamedInt64("shard", 3);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_AsyncHostToDeviceTransferManager_AddMetadata(&args)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(KilnAsyncTransferTest, BadCreateArgumentsAreInvalid) {
  ManagerPtr manager;
  Status no_memory = CreateManager(client_.get(), nullptr, {{PJRT_Buffer_Type_F32, {1}}}, &manager);
  EXPECT_TRUE(HasCode(no_memory, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(no_memory.message, "`memory` is null"));
  Status negative = CreateManager(client_.get(), DefaultMemory(device_),
                                  {{PJRT_Buffer_Type_F32, {-1}}}, &manager);
  EXPECT_TRUE(HasCode(negative, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(negative.message, "shape_specs[0]"));
  auto args = MAKE_ARGS(PJRT_Client_CreateBuffersForAsyncHostToDevice_Args);
  args.client = client_.get();
  args.memory = DefaultMemory(device_);
  args.num_shape_specs = 1;  // with a null array
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Client_CreateBuffersForAsyncHostToDevice(&args)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(KilnAsyncTransferTest, DestroyedManagersAreInvalidAndNullIsANoOp) {
  auto destroy = MAKE_ARGS(PJRT_AsyncHostToDeviceTransferManager_Destroy_Args);
  EXPECT_PJRT_OK(api()->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
  PJRT_AsyncHostToDeviceTransferManager* gone = manager_.release();
  destroy.transfer_manager = gone;
  EXPECT_PJRT_OK(api()->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy));
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_AsyncHostToDeviceTransferManager_Destroy(&destroy)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  size_t size = 0;
  Status status = BufferSize(gone, 0, &size);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "transfer_manager"));
}

TEST_F(KilnAsyncTransferTest, AManagerOutlivingItsClientOnlyDestroys) {
  client_.reset();
  size_t size = 0;
  EXPECT_TRUE(HasCode(BufferSize(manager_.get(), 0, &size), PJRT_Error_Code_FAILED_PRECONDITION));
  manager_.reset();  // the deleter expects OK
}

}  // namespace
}  // namespace conformance
