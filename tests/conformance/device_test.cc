// PJRT_Device and PJRT_DeviceDescription.
#include <algorithm>
#include <set>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

std::string Kind(PJRT_DeviceDescription* description) {
  auto args = MAKE_ARGS(PJRT_DeviceDescription_Kind_Args);
  args.device_description = description;
  EXPECT_PJRT_OK(api()->PJRT_DeviceDescription_Kind(&args));
  if (args.device_kind == nullptr) return "";
  return std::string(args.device_kind, args.device_kind_size);
}

std::string ToString(PJRT_DeviceDescription* description) {
  auto args = MAKE_ARGS(PJRT_DeviceDescription_ToString_Args);
  args.device_description = description;
  EXPECT_PJRT_OK(api()->PJRT_DeviceDescription_ToString(&args));
  if (args.to_string == nullptr) return "";
  return std::string(args.to_string, args.to_string_size);
}

std::string DebugString(PJRT_DeviceDescription* description) {
  auto args = MAKE_ARGS(PJRT_DeviceDescription_DebugString_Args);
  args.device_description = description;
  EXPECT_PJRT_OK(api()->PJRT_DeviceDescription_DebugString(&args));
  if (args.debug_string == nullptr) return "";
  return std::string(args.debug_string, args.debug_string_size);
}

// Frameworks abort on attribute values other than string, int64, int64 list.
void ExpectFrameworkTypes(const PJRT_NamedValue* values, size_t count) {
  if (count > 0) {
    ASSERT_NE(values, nullptr);
  }
  std::set<std::string> names;
  for (size_t i = 0; i < count; ++i) {
    const PJRT_NamedValue& value = values[i];
    std::string name = ValueName(value);
    EXPECT_FALSE(name.empty());
    EXPECT_TRUE(names.insert(name).second) << "duplicate attribute " << name;
    EXPECT_TRUE(value.type == PJRT_NamedValue_kString || value.type == PJRT_NamedValue_kInt64 ||
                value.type == PJRT_NamedValue_kInt64List)
        << "attribute " << name << " has type " << value.type;
  }
}

class DeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClientWithDevices(2);
    if (client_ == nullptr) client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    devices_ = AddressableDevices(client_.get());
    ASSERT_FALSE(devices_.empty());
  }
  ClientPtr client_;
  std::vector<PJRT_Device*> devices_;
};

TEST_F(DeviceTest, DescriptionsDescribeEachDevice) {
  auto client_index = MAKE_ARGS(PJRT_Client_ProcessIndex_Args);
  client_index.client = client_.get();
  ASSERT_PJRT_OK(api()->PJRT_Client_ProcessIndex(&client_index));
  for (PJRT_Device* device : devices_) {
    PJRT_DeviceDescription* description = Description(device);
    ASSERT_NE(description, nullptr);
    auto index = MAKE_ARGS(PJRT_DeviceDescription_ProcessIndex_Args);
    index.device_description = description;
    ASSERT_PJRT_OK(api()->PJRT_DeviceDescription_ProcessIndex(&index));
    EXPECT_EQ(index.process_index, client_index.process_index)
        << "an addressable device belongs to the client's process";
    EXPECT_FALSE(Kind(description).empty());
    EXPECT_FALSE(ToString(description).empty());
    EXPECT_FALSE(DebugString(description).empty());
  }
}

TEST_F(DeviceTest, DescriptionAttributesHaveFrameworkTypes) {
  for (PJRT_Device* device : devices_) {
    auto args = MAKE_ARGS(PJRT_DeviceDescription_Attributes_Args);
    args.device_description = Description(device);
    ASSERT_PJRT_OK(api()->PJRT_DeviceDescription_Attributes(&args));
    ExpectFrameworkTypes(args.attributes, args.num_attributes);
  }
}

TEST_F(DeviceTest, GetAttributesHaveFrameworkTypes) {
  REQUIRE_SLOT(PJRT_Device_GetAttributes);
  for (PJRT_Device* device : devices_) {
    auto args = MAKE_ARGS(PJRT_Device_GetAttributes_Args);
    args.device = device;
    ASSERT_PJRT_OK(api()->PJRT_Device_GetAttributes(&args));
    ExpectFrameworkTypes(args.attributes, args.num_attributes);
    if (args.attributes_deleter != nullptr) {
      args.attributes_deleter(args.device_attributes);
    }
  }
}

TEST_F(DeviceTest, AddressableDevicesAreAddressable) {
  for (PJRT_Device* device : devices_) {
    auto args = MAKE_ARGS(PJRT_Device_IsAddressable_Args);
    args.device = device;
    ASSERT_PJRT_OK(api()->PJRT_Device_IsAddressable(&args));
    EXPECT_TRUE(args.is_addressable);
  }
}

TEST_F(DeviceTest, LocalHardwareIdsAreDistinct) {
  std::set<int> ids;
  for (PJRT_Device* device : devices_) {
    auto args = MAKE_ARGS(PJRT_Device_LocalHardwareId_Args);
    args.device = device;
    ASSERT_PJRT_OK(api()->PJRT_Device_LocalHardwareId(&args));
    if (args.local_hardware_id >= 0) {
      EXPECT_TRUE(ids.insert(args.local_hardware_id).second)
          << "two devices share local hardware id " << args.local_hardware_id;
    }
  }
}

TEST_F(DeviceTest, DefaultMemoryIsAmongTheDevicesMemories) {
  for (PJRT_Device* device : devices_) {
    std::vector<PJRT_Memory*> memories = DeviceMemories(device);
    EXPECT_FALSE(memories.empty());
    PJRT_Memory* memory = DefaultMemory(device);
    ASSERT_NE(memory, nullptr);
    EXPECT_NE(std::find(memories.begin(), memories.end(), memory), memories.end());
  }
}

TEST_F(DeviceTest, MemoriesAreAddressableByTheirDevice) {
  for (PJRT_Device* device : devices_) {
    for (PJRT_Memory* memory : DeviceMemories(device)) {
      auto args = MAKE_ARGS(PJRT_Memory_AddressableByDevices_Args);
      args.memory = memory;
      ASSERT_PJRT_OK(api()->PJRT_Memory_AddressableByDevices(&args));
      std::vector<PJRT_Device*> by(args.devices, args.devices + args.num_devices);
      EXPECT_NE(std::find(by.begin(), by.end(), device), by.end())
          << "memory " << MemoryKind(memory) << " of device " << DeviceId(device);
    }
  }
}

TEST_F(DeviceTest, MemoryStatsFollowBuffers) {
  PJRT_Device* device = devices_[0];
  PJRT_Device_MemoryStats_Args before;
  Status status = MemoryStats(device, &before);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  constexpr int64_t kElements = 256 * 1024;  // 1 MiB of F32
  std::vector<float> values(kElements, 1.5f);
  BufferPtr buffer = MakeBuffer(client_.get(), device, values, {kElements});
  ASSERT_NE(buffer, nullptr);
  PJRT_Device_MemoryStats_Args with;
  ASSERT_TRUE(IsOk(MemoryStats(device, &with)));
  EXPECT_GE(with.bytes_in_use, before.bytes_in_use + kElements * 4);
  if (with.peak_bytes_in_use_is_set) {
    EXPECT_GE(with.peak_bytes_in_use, with.bytes_in_use);
  }
  buffer.reset();
  PJRT_Device_MemoryStats_Args after;
  ASSERT_TRUE(IsOk(MemoryStats(device, &after)));
  EXPECT_LE(after.bytes_in_use, with.bytes_in_use - kElements * 4);
}

// ------------------------------------------------------ Kiln's promises --

class KilnDeviceTest : public DeviceTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    DeviceTest::SetUp();
  }
};

// The host backend's devices are "kiln-cpu"; another backend's are named
// for its hardware (OpenCL: the device's CL_DEVICE_NAME).
TEST_F(KilnDeviceTest, KindNamesTheHardware) {
  for (PJRT_Device* device : devices_) {
    const std::string backend = KilnBackend(device);
    ASSERT_FALSE(backend.empty()) << "Kiln's devices name their backend";
    if (backend == "host") {
      EXPECT_EQ(Kind(Description(device)), "kiln-cpu");
    } else {
      EXPECT_FALSE(Kind(Description(device)).empty());
      EXPECT_NE(Kind(Description(device)), "kiln-cpu");
    }
  }
}

TEST_F(KilnDeviceTest, ToStringNamesTheId) {
  for (PJRT_Device* device : devices_) {
    std::string text = ToString(Description(device));
    EXPECT_TRUE(Contains(text, "id=" + std::to_string(DeviceId(device))));
  }
}

TEST_F(KilnDeviceTest, EachDeviceHasDevicePinnedAndUnpinnedHostMemory) {
  for (PJRT_Device* device : devices_) {
    std::multiset<std::string> kinds;
    for (PJRT_Memory* memory : DeviceMemories(device)) {
      kinds.insert(MemoryKind(memory));
    }
    EXPECT_EQ(kinds, (std::multiset<std::string>{"device", "pinned_host", "unpinned_host"}));
    EXPECT_EQ(MemoryKind(DefaultMemory(device)), "device");
  }
}

TEST_F(KilnDeviceTest, MemoryStatsReportAPeak) {
  PJRT_Device_MemoryStats_Args stats;
  ASSERT_TRUE(IsOk(MemoryStats(devices_[0], &stats)));
  EXPECT_TRUE(stats.peak_bytes_in_use_is_set);
  EXPECT_GE(stats.peak_bytes_in_use, stats.bytes_in_use);
  EXPECT_GE(stats.bytes_in_use, 0);
}

TEST_F(KilnDeviceTest, GetAttributesReturnsADeleter) {
  auto args = MAKE_ARGS(PJRT_Device_GetAttributes_Args);
  args.device = devices_[0];
  ASSERT_PJRT_OK(api()->PJRT_Device_GetAttributes(&args));
  ASSERT_NE(args.attributes_deleter, nullptr);
  args.attributes_deleter(args.device_attributes);
}

TEST_F(DeviceTest, AsyncTrackingEventCreateAndDestroy) {
  REQUIRE_SLOT(PJRT_Device_CreateAsyncTrackingEvent);
  const std::string description = "copying shards from the dataset";
  auto create = MAKE_ARGS(PJRT_Device_CreateAsyncTrackingEvent_Args);
  create.device = devices_[0];
  create.description = description.data();
  create.description_size = description.size();
  Status status = Consume(api()->PJRT_Device_CreateAsyncTrackingEvent(&create));
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  // A plugin without tracking may return a null event; destroying it is a no-op.
  auto destroy = MAKE_ARGS(PJRT_AsyncTrackingEvent_Destroy_Args);
  destroy.event = create.event;
  EXPECT_PJRT_OK(api()->PJRT_AsyncTrackingEvent_Destroy(&destroy));
}

TEST_F(KilnDeviceTest, AsyncTrackingEventsAreRealHandles) {
  auto create = MAKE_ARGS(PJRT_Device_CreateAsyncTrackingEvent_Args);
  create.device = devices_[0];
  ASSERT_PJRT_OK(api()->PJRT_Device_CreateAsyncTrackingEvent(&create));  // no description
  ASSERT_NE(create.event, nullptr);
  auto destroy = MAKE_ARGS(PJRT_AsyncTrackingEvent_Destroy_Args);
  destroy.event = create.event;
  EXPECT_PJRT_OK(api()->PJRT_AsyncTrackingEvent_Destroy(&destroy));
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_AsyncTrackingEvent_Destroy(&destroy)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  create.device = nullptr;
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Device_CreateAsyncTrackingEvent(&create)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  create.device = devices_[0];
  create.description_size = 5;  // with a null description
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Device_CreateAsyncTrackingEvent(&create)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

}  // namespace
}  // namespace conformance
