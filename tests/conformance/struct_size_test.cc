// struct_size handling: callers built against older headers pass smaller
// args structs, newer ones larger; both must work when the fields a function
// needs are inside struct_size, and a too-small struct must be rejected.
#include <cstring>
#include <functional>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

constexpr unsigned char kGarbage = 0xAB;

// An args struct followed by 64 spare bytes, as a newer caller's would be.
template <typename Args>
struct Padded {
  Args args;
  unsigned char tail[64];
};

template <typename Args>
Padded<Args> MakePadded(size_t header_size, unsigned char fill = 0) {
  Padded<Args> padded;
  std::memset(&padded, fill, sizeof(padded));
  std::memset(&padded.args, 0, header_size);
  padded.args.struct_size = header_size;
  return padded;
}

class StructSizeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    device_ = AddressableDevices(client_.get())[0];
    buffer_ = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2, 3}, {3});
    ASSERT_NE(buffer_, nullptr);
  }

  // One call per struct whose struct_size stops short of fields it needs.
  struct Case {
    const char* args_name;
    std::function<Status(size_t struct_size)> call;
    size_t too_small;  // a struct_size lacking needed fields
  };

  std::vector<Case> TooSmallCases() {
    PJRT_Client* client = client_.get();
    PJRT_Buffer* buffer = buffer_.get();
    PJRT_Device* device = device_;
    return {
        {"PJRT_Client_Devices_Args",
         [client](size_t size) {
           auto args = MakeArgs<PJRT_Client_Devices_Args>(size);
           args.client = client;
           return Consume(api()->PJRT_Client_Devices(&args));
         },
         offsetof(PJRT_Client_Devices_Args, devices)},
        {"PJRT_Client_PlatformName_Args",
         [client](size_t size) {
           auto args = MakeArgs<PJRT_Client_PlatformName_Args>(size);
           args.client = client;
           return Consume(api()->PJRT_Client_PlatformName(&args));
         },
         offsetof(PJRT_Client_PlatformName_Args, platform_name)},
        {"PJRT_Buffer_Dimensions_Args",
         [buffer](size_t size) {
           auto args = MakeArgs<PJRT_Buffer_Dimensions_Args>(size);
           args.buffer = buffer;
           return Consume(api()->PJRT_Buffer_Dimensions(&args));
         },
         offsetof(PJRT_Buffer_Dimensions_Args, dims)},
        {"PJRT_Buffer_ToHostBuffer_Args",
         [buffer](size_t size) {
           auto args = MakeArgs<PJRT_Buffer_ToHostBuffer_Args>(size);
           args.src = buffer;
           return Consume(api()->PJRT_Buffer_ToHostBuffer(&args));
         },
         offsetof(PJRT_Buffer_ToHostBuffer_Args, host_layout)},
        {"PJRT_Device_MemoryStats_Args",
         [device](size_t size) {
           auto args = MakeArgs<PJRT_Device_MemoryStats_Args>(size);
           args.device = device;
           return Consume(api()->PJRT_Device_MemoryStats(&args));
         },
         offsetof(PJRT_Device_MemoryStats_Args, bytes_in_use)},
        {"PJRT_Plugin_Attributes_Args",
         [](size_t size) {
           auto args = MakeArgs<PJRT_Plugin_Attributes_Args>(size);
           return Consume(api()->PJRT_Plugin_Attributes(&args));
         },
         offsetof(PJRT_Plugin_Attributes_Args, attributes)},
        {"PJRT_Client_Create_Args",
         [](size_t size) {
           auto args = MakeArgs<PJRT_Client_Create_Args>(size);
           Status status = Consume(api()->PJRT_Client_Create(&args));
           ClientPtr leaked(status.ok() ? args.client : nullptr);
           return status;
         },
         offsetof(PJRT_Client_Create_Args, client)},
    };
  }

  ClientPtr client_;
  PJRT_Device* device_ = nullptr;
  BufferPtr buffer_;
};

TEST_F(StructSizeTest, TooSmallForNeededFieldsIsInvalid) {
  for (const Case& test : TooSmallCases()) {
    SCOPED_TRACE(test.args_name);
    EXPECT_TRUE(HasCode(test.call(test.too_small), PJRT_Error_Code_INVALID_ARGUMENT));
  }
}

TEST_F(StructSizeTest, ZeroIsInvalid) {
  for (const Case& test : TooSmallCases()) {
    SCOPED_TRACE(test.args_name);
    EXPECT_TRUE(HasCode(test.call(0), PJRT_Error_Code_INVALID_ARGUMENT));
  }
}

TEST_F(StructSizeTest, LargerStructsFromNewerCallersWork) {
  auto devices = MakePadded<PJRT_Client_Devices_Args>(PJRT_Client_Devices_Args_STRUCT_SIZE);
  devices.args.struct_size += 64;
  devices.args.client = client_.get();
  ASSERT_PJRT_OK(api()->PJRT_Client_Devices(&devices.args));
  EXPECT_GT(devices.args.num_devices, 0u);

  auto dims = MakePadded<PJRT_Buffer_Dimensions_Args>(PJRT_Buffer_Dimensions_Args_STRUCT_SIZE);
  dims.args.struct_size += 64;
  dims.args.buffer = buffer_.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_Dimensions(&dims.args));
  EXPECT_EQ(dims.args.num_dims, 1u);

  std::vector<float> host = {4, 5, 6, 7};
  int64_t shape[] = {4};
  auto from_host = MakePadded<PJRT_Client_BufferFromHostBuffer_Args>(
      PJRT_Client_BufferFromHostBuffer_Args_STRUCT_SIZE);
  from_host.args.struct_size += 64;
  from_host.args.client = client_.get();
  from_host.args.data = host.data();
  from_host.args.type = PJRT_Buffer_Type_F32;
  from_host.args.dims = shape;
  from_host.args.num_dims = 1;
  from_host.args.device = device_;
  ASSERT_PJRT_OK(api()->PJRT_Client_BufferFromHostBuffer(&from_host.args));
  BufferPtr buffer(from_host.args.buffer);
  EventPtr done(from_host.args.done_with_host_buffer);
  if (done != nullptr) {
    EXPECT_TRUE(IsOk(Await(done.get())));
  }

  std::vector<float> back(4);
  auto to_host = MakePadded<PJRT_Buffer_ToHostBuffer_Args>(
      PJRT_Buffer_ToHostBuffer_Args_STRUCT_SIZE);
  to_host.args.struct_size += 64;
  to_host.args.src = buffer.get();
  to_host.args.dst = back.data();
  to_host.args.dst_size = back.size() * sizeof(float);
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ToHostBuffer(&to_host.args));
  EventPtr copied(to_host.args.event);
  auto await = MakePadded<PJRT_Event_Await_Args>(PJRT_Event_Await_Args_STRUCT_SIZE);
  await.args.struct_size += 64;
  await.args.event = copied.get();
  ASSERT_PJRT_OK(api()->PJRT_Event_Await(&await.args));
  EXPECT_EQ(back, host);

  auto create = MakePadded<PJRT_Client_Create_Args>(PJRT_Client_Create_Args_STRUCT_SIZE);
  create.args.struct_size += 64;
  ASSERT_PJRT_OK(api()->PJRT_Client_Create(&create.args));
  ClientPtr client(create.args.client);
  EXPECT_NE(client, nullptr);

  auto attributes = MakePadded<PJRT_Plugin_Attributes_Args>(
      PJRT_Plugin_Attributes_Args_STRUCT_SIZE);
  attributes.args.struct_size += 64;
  EXPECT_PJRT_OK(api()->PJRT_Plugin_Attributes(&attributes.args));
}

TEST_F(StructSizeTest, ClientCreateFromBeforeTryGetCallbacks) {
  // An older framework's struct ends at `client`; what follows is not its.
  size_t old_size = PJRT_STRUCT_SIZE(PJRT_Client_Create_Args, client);
  auto create = MakePadded<PJRT_Client_Create_Args>(old_size, kGarbage);
  ASSERT_PJRT_OK(api()->PJRT_Client_Create(&create.args));
  ClientPtr client(create.args.client);
  ASSERT_NE(client, nullptr);
  EXPECT_FALSE(Devices(client.get()).empty());
}

TEST_F(StructSizeTest, OlderOutputStructsAreNotWrittenPastTheirEnd) {
  // An older caller's MemoryStats struct holds bytes_in_use only.
  size_t old_size = PJRT_STRUCT_SIZE(PJRT_Device_MemoryStats_Args, bytes_in_use);
  auto stats = MakePadded<PJRT_Device_MemoryStats_Args>(old_size, kGarbage);
  stats.args.device = device_;
  Status status = Consume(api()->PJRT_Device_MemoryStats(&stats.args));
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  const auto* bytes = reinterpret_cast<const unsigned char*>(&stats);
  for (size_t i = old_size; i < sizeof(stats); ++i) {
    ASSERT_EQ(bytes[i], kGarbage) << "byte " << i << " past struct_size " << old_size
                                  << " was written";
  }
}

TEST_F(StructSizeTest, ErrorBufferFromBeforePayloads) {
  REQUIRE_SLOT(PJRT_Client_CreateErrorBuffer);
  size_t old_size = PJRT_STRUCT_SIZE(PJRT_Client_CreateErrorBuffer_Args, buffer);
  auto create = MakePadded<PJRT_Client_CreateErrorBuffer_Args>(old_size, kGarbage);
  int64_t dims[] = {2};
  create.args.client = client_.get();
  create.args.error_code = PJRT_Error_Code_INTERNAL;
  create.args.error_message = "old caller";
  create.args.error_message_size = 10;
  create.args.shape_dims = dims;
  create.args.shape_num_dims = 1;
  create.args.shape_element_type = PJRT_Buffer_Type_F32;
  create.args.memory = DefaultMemory(device_);
  Status status = Consume(api()->PJRT_Client_CreateErrorBuffer(&create.args));
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  BufferPtr buffer(create.args.buffer);
  EXPECT_EQ(Dimensions(buffer.get()), (std::vector<int64_t>{2}));
}

TEST_F(StructSizeTest, UnknownExtensionsAreIgnored) {
  PJRT_Extension_Base extension;
  std::memset(&extension, 0, sizeof(extension));
  extension.struct_size = PJRT_Extension_Base_STRUCT_SIZE;
  extension.type = PJRT_Extension_Type_Unknown;
  extension.next = nullptr;

  auto devices = MAKE_ARGS(PJRT_Client_Devices_Args);
  devices.extension_start = &extension;
  devices.client = client_.get();
  EXPECT_PJRT_OK(api()->PJRT_Client_Devices(&devices));

  auto create = MAKE_ARGS(PJRT_Client_Create_Args);
  create.extension_start = &extension;
  ASSERT_PJRT_OK(api()->PJRT_Client_Create(&create));
  ClientPtr client(create.client);

  std::vector<float> back(3);
  auto to_host = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  to_host.extension_start = &extension;
  to_host.src = buffer_.get();
  to_host.dst = back.data();
  to_host.dst_size = back.size() * sizeof(float);
  ASSERT_PJRT_OK(api()->PJRT_Buffer_ToHostBuffer(&to_host));
  EventPtr event(to_host.event);
  EXPECT_TRUE(IsOk(Await(event.get())));
  EXPECT_EQ(back, (std::vector<float>{1, 2, 3}));
}

// ------------------------------------------------------ Kiln's promises --

class KilnStructSizeTest : public StructSizeTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    StructSizeTest::SetUp();
  }
};

TEST_F(KilnStructSizeTest, RejectionNamesTheArgsStruct) {
  for (const Case& test : TooSmallCases()) {
    for (size_t size : {size_t{0}, test.too_small}) {
      SCOPED_TRACE(std::string(test.args_name) + " with struct_size " + std::to_string(size));
      Status status = test.call(size);
      EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
      EXPECT_TRUE(Contains(status.message, test.args_name));
    }
  }
}

}  // namespace
}  // namespace conformance
