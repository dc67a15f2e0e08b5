// PJRT_Client: creation, identity, devices, memories, device assignment.
#include <algorithm>
#include <set>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

int ProcessIndex(PJRT_Client* client) {
  auto args = MAKE_ARGS(PJRT_Client_ProcessIndex_Args);
  args.client = client;
  EXPECT_PJRT_OK(api()->PJRT_Client_ProcessIndex(&args));
  return args.process_index;
}

Status LookupDevice(PJRT_Client* client, int id, PJRT_Device** device) {
  auto args = MAKE_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client;
  args.id = id;
  Status status = Consume(api()->PJRT_Client_LookupDevice(&args));
  *device = args.device;
  return status;
}

// Client_DefaultDeviceAssignment into `assignment` (resized to r × p).
Status DefaultAssignment(PJRT_Client* client, int replicas, int partitions,
                         std::vector<int>* assignment) {
  assignment->assign(static_cast<size_t>(std::max(replicas * partitions, 1)), -1);
  auto args = MAKE_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  args.client = client;
  args.num_replicas = replicas;
  args.num_partitions = partitions;
  args.default_assignment_size = assignment->size();
  args.default_assignment = assignment->data();
  return Consume(api()->PJRT_Client_DefaultDeviceAssignment(&args));
}

std::set<int> DeviceIds(const std::vector<PJRT_Device*>& devices) {
  std::set<int> ids;
  for (PJRT_Device* device : devices) ids.insert(DeviceId(device));
  return ids;
}

class ClientTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
  }
  ClientPtr client_;
};

TEST_F(ClientTest, PlatformNameIsNonEmpty) { EXPECT_FALSE(PlatformName(client_.get()).empty()); }

TEST_F(ClientTest, PlatformVersionIsNonEmpty) {
  auto args = MAKE_ARGS(PJRT_Client_PlatformVersion_Args);
  args.client = client_.get();
  ASSERT_PJRT_OK(api()->PJRT_Client_PlatformVersion(&args));
  ASSERT_NE(args.platform_version, nullptr);
  EXPECT_GT(args.platform_version_size, 0u);
}

TEST_F(ClientTest, ProcessIndexIsZeroInOneProcess) { EXPECT_EQ(ProcessIndex(client_.get()), 0); }

TEST_F(ClientTest, HasAtLeastOneDevice) {
  EXPECT_FALSE(Devices(client_.get()).empty());
  EXPECT_FALSE(AddressableDevices(client_.get()).empty());
}

TEST_F(ClientTest, DevicesAreAllAddressableInOneProcess) {
  std::vector<PJRT_Device*> devices = Devices(client_.get());
  std::vector<PJRT_Device*> addressable = AddressableDevices(client_.get());
  EXPECT_EQ(std::set<PJRT_Device*>(devices.begin(), devices.end()),
            std::set<PJRT_Device*>(addressable.begin(), addressable.end()));
  EXPECT_EQ(DeviceIds(devices).size(), devices.size()) << "ids are unique";
}

TEST_F(ClientTest, DeviceListsAreStableAcrossCalls) {
  EXPECT_EQ(Devices(client_.get()), Devices(client_.get()));
  EXPECT_EQ(AddressableMemories(client_.get()), AddressableMemories(client_.get()));
}

TEST_F(ClientTest, LookupDeviceFindsEveryDevice) {
  for (PJRT_Device* device : Devices(client_.get())) {
    PJRT_Device* found = nullptr;
    ASSERT_TRUE(IsOk(LookupDevice(client_.get(), DeviceId(device), &found)));
    EXPECT_EQ(found, device);
  }
}

TEST_F(ClientTest, LookupDeviceRejectsUnknownIds) {
  for (int id : {-1, 1 << 20}) {
    PJRT_Device* found = nullptr;
    EXPECT_TRUE(HasCodeIn(LookupDevice(client_.get(), id, &found),
                          {PJRT_Error_Code_INVALID_ARGUMENT, PJRT_Error_Code_NOT_FOUND}))
        << "id " << id;
  }
}

TEST_F(ClientTest, LookupAddressableDeviceByLocalHardwareId) {
  for (PJRT_Device* device : AddressableDevices(client_.get())) {
    auto id = MAKE_ARGS(PJRT_Device_LocalHardwareId_Args);
    id.device = device;
    ASSERT_PJRT_OK(api()->PJRT_Device_LocalHardwareId(&id));
    if (id.local_hardware_id < 0) continue;  // "-1 if undefined"
    auto lookup = MAKE_ARGS(PJRT_Client_LookupAddressableDevice_Args);
    lookup.client = client_.get();
    lookup.local_hardware_id = id.local_hardware_id;
    ASSERT_PJRT_OK(api()->PJRT_Client_LookupAddressableDevice(&lookup));
    EXPECT_EQ(lookup.addressable_device, device);
  }
}

TEST_F(ClientTest, AddressableMemoriesIncludeEveryDevicesMemories) {
  std::vector<PJRT_Memory*> memories = AddressableMemories(client_.get());
  std::set<PJRT_Memory*> client_memories(memories.begin(), memories.end());
  EXPECT_EQ(client_memories.size(), memories.size()) << "no duplicates";
  for (PJRT_Device* device : AddressableDevices(client_.get())) {
    for (PJRT_Memory* memory : DeviceMemories(device)) {
      EXPECT_EQ(client_memories.count(memory), 1u)
          << "memory " << MemoryKind(memory) << " of device " << DeviceId(device)
          << " is not among the client's memories";
    }
  }
}

TEST_F(ClientTest, DefaultAssignmentOfOneDevice) {
  std::vector<int> assignment;
  ASSERT_TRUE(IsOk(DefaultAssignment(client_.get(), 1, 1, &assignment)));
  EXPECT_EQ(DeviceIds(Devices(client_.get())).count(assignment[0]), 1u)
      << "assigned id " << assignment[0] << " is not a device id";
}

TEST(ClientAssignmentTest, AssignmentsUseDistinctDevices) {
  ASSIGN_CLIENT_WITH_DEVICES(client, 4);
  std::set<int> ids = DeviceIds(Devices(client.get()));
  for (auto [replicas, partitions] :
       std::vector<std::pair<int, int>>{{4, 1}, {1, 4}, {2, 2}, {3, 1}}) {
    SCOPED_TRACE(std::to_string(replicas) + " replicas × " + std::to_string(partitions) +
                 " partitions");
    std::vector<int> assignment;
    ASSERT_TRUE(IsOk(DefaultAssignment(client.get(), replicas, partitions, &assignment)));
    std::set<int> used(assignment.begin(), assignment.end());
    EXPECT_EQ(used.size(), assignment.size()) << "a device is used twice";
    for (int id : assignment) EXPECT_EQ(ids.count(id), 1u) << "id " << id;
  }
}

TEST_F(ClientTest, AssignmentLargerThanTheDevicesFails) {
  int devices = static_cast<int>(Devices(client_.get()).size());
  std::vector<int> assignment;
  Status status = DefaultAssignment(client_.get(), devices + 1, 1, &assignment);
  EXPECT_FALSE(status.ok()) << devices + 1 << " replicas on " << devices << " devices";
}

TEST(ClientLifetimeTest, TwoClientsAreIndependent) {
  ClientPtr first = MakeClient();
  ClientPtr second = MakeClient();
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(first.get(), second.get());
  std::vector<PJRT_Device*> first_devices = Devices(first.get());
  first.reset();
  EXPECT_EQ(Devices(second.get()).size(), first_devices.size());
  std::vector<float> values = {1, 2, 3};
  BufferPtr buffer = MakeBuffer(second.get(), Devices(second.get())[0], values, {3});
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(Read<float>(buffer.get()), values);
}

TEST(ClientLifetimeTest, CreateAndDestroyRepeatedly) {
  for (int i = 0; i < 20; ++i) {
    ClientPtr client = MakeClient();
    ASSERT_NE(client, nullptr);
  }
}

TEST(ClientLifetimeTest, DestroyingANullClientIsANoOp) {
  auto args = MAKE_ARGS(PJRT_Client_Destroy_Args);
  EXPECT_PJRT_OK(api()->PJRT_Client_Destroy(&args));
}

// ------------------------------------------------------ Kiln's promises --

class KilnClientTest : public ClientTest {};

TEST_F(KilnClientTest, PlatformNameIsKiln) {
  SKIP_UNLESS_KILN();
  EXPECT_EQ(PlatformName(client_.get()), "kiln");
}

TEST(KilnClientDevicesTest, DeviceIdsAreDense) {
  SKIP_UNLESS_KILN();
  ClientPtr client = MakeClientWithDevices(4);
  ASSERT_NE(client, nullptr);
  std::vector<PJRT_Device*> devices = Devices(client.get());
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(AddressableDevices(client.get()), devices);
  EXPECT_EQ(DeviceIds(devices), (std::set<int>{0, 1, 2, 3}));
}

TEST(KilnClientDevicesTest, MemoriesAreDeviceThenPinnedHostThenUnpinnedHost) {
  SKIP_UNLESS_KILN();
  constexpr int kDevices = 3;
  ClientPtr client = MakeClientWithDevices(kDevices);
  ASSERT_NE(client, nullptr);
  std::vector<PJRT_Memory*> memories = AddressableMemories(client.get());
  ASSERT_EQ(memories.size(), 3u * kDevices);
  for (PJRT_Device* device : Devices(client.get())) {
    int id = DeviceId(device);
    PJRT_Memory* device_memory = FindMemory(device, "device");
    PJRT_Memory* pinned = FindMemory(device, "pinned_host");
    ASSERT_NE(device_memory, nullptr) << "device " << id;
    PJRT_Memory* unpinned = FindMemory(device, "unpinned_host");
    ASSERT_NE(pinned, nullptr) << "device " << id;
    ASSERT_NE(unpinned, nullptr) << "device " << id;
    EXPECT_EQ(MemoryId(device_memory), id);
    EXPECT_EQ(MemoryId(pinned), kDevices + id);
    EXPECT_EQ(MemoryId(unpinned), 2 * kDevices + id);
  }
}

TEST_F(KilnClientTest, AssignmentLargerThanTheDevicesIsInvalid) {
  SKIP_UNLESS_KILN();
  int devices = static_cast<int>(Devices(client_.get()).size());
  std::vector<int> assignment;
  EXPECT_TRUE(HasCode(DefaultAssignment(client_.get(), 1, devices + 1, &assignment),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(KilnClientTest, AssignmentIntoTooSmallAnArrayIsInvalid) {
  SKIP_UNLESS_KILN();
  ClientPtr client = MakeClientWithDevices(2);
  ASSERT_NE(client, nullptr);
  int out[1] = {-1};
  auto args = MAKE_ARGS(PJRT_Client_DefaultDeviceAssignment_Args);
  args.client = client.get();
  args.num_replicas = 2;
  args.num_partitions = 1;
  args.default_assignment_size = 1;
  args.default_assignment = out;
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Client_DefaultDeviceAssignment(&args)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

// ------------------------------------------------- host memory mappings --

Status DmaMap(PJRT_Client* client, void* data, size_t size) {
  auto args = MAKE_ARGS(PJRT_Client_DmaMap_Args);
  args.client = client;
  args.data = data;
  args.size = size;
  return Consume(api()->PJRT_Client_DmaMap(&args));
}

Status DmaUnmap(PJRT_Client* client, void* data) {
  auto args = MAKE_ARGS(PJRT_Client_DmaUnmap_Args);
  args.client = client;
  args.data = data;
  return Consume(api()->PJRT_Client_DmaUnmap(&args));
}

TEST_F(ClientTest, DmaMapThenUnmap) {
  std::vector<char> host(4096);
  Status status = DmaMap(client_.get(), host.data(), host.size());
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_TRUE(IsOk(DmaUnmap(client_.get(), host.data())));
}

TEST_F(KilnClientTest, DmaMappingsAreTracked) {
  SKIP_UNLESS_KILN();
  std::vector<char> host(4096);
  EXPECT_TRUE(HasCode(DmaUnmap(client_.get(), host.data()), PJRT_Error_Code_INVALID_ARGUMENT));
  ASSERT_TRUE(IsOk(DmaMap(client_.get(), host.data(), 1024)));
  Status twice = DmaMap(client_.get(), host.data(), 1024);
  EXPECT_TRUE(HasCode(twice, PJRT_Error_Code_FAILED_PRECONDITION));
  EXPECT_TRUE(Contains(twice.message, "already mapped"));
  Status overlap = DmaMap(client_.get(), host.data() + 512, 1024);
  EXPECT_TRUE(HasCode(overlap, PJRT_Error_Code_FAILED_PRECONDITION));
  EXPECT_TRUE(Contains(overlap.message, "overlaps"));
  EXPECT_TRUE(IsOk(DmaMap(client_.get(), host.data() + 1024, 1024)));  // adjacent
  EXPECT_TRUE(HasCode(DmaUnmap(client_.get(), host.data() + 8), PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(IsOk(DmaUnmap(client_.get(), host.data())));
  EXPECT_TRUE(IsOk(DmaUnmap(client_.get(), host.data() + 1024)));
  EXPECT_TRUE(HasCode(DmaUnmap(client_.get(), host.data()), PJRT_Error_Code_INVALID_ARGUMENT));
  Status null_data = DmaMap(client_.get(), nullptr, 16);
  EXPECT_TRUE(HasCode(null_data, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(null_data.message, "`data` is null"));
  Status zero = DmaMap(client_.get(), host.data(), 0);
  EXPECT_TRUE(HasCode(zero, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(zero.message, "`size` is 0"));
  EXPECT_TRUE(HasCode(DmaMap(nullptr, host.data(), 16), PJRT_Error_Code_INVALID_ARGUMENT));
}

}  // namespace
}  // namespace conformance
