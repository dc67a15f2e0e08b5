// PJRT_TopologyDescription: the client's, created ones, and their
// serialization.
#include <algorithm>
#include <set>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

std::string TopologyPlatformName(const PJRT_TopologyDescription* topology) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_PlatformName_Args);
  args.topology = topology;
  EXPECT_PJRT_OK(api()->PJRT_TopologyDescription_PlatformName(&args));
  if (args.platform_name == nullptr) return "";
  return std::string(args.platform_name, args.platform_name_size);
}

std::vector<PJRT_DeviceDescription*> DescriptionsOf(const PJRT_TopologyDescription* topology) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args);
  args.topology = topology;
  EXPECT_PJRT_OK(api()->PJRT_TopologyDescription_GetDeviceDescriptions(&args));
  if (args.num_descriptions == 0) return {};
  return {args.descriptions, args.descriptions + args.num_descriptions};
}

int DescriptionId(PJRT_DeviceDescription* description) {
  auto args = MAKE_ARGS(PJRT_DeviceDescription_Id_Args);
  args.device_description = description;
  EXPECT_PJRT_OK(api()->PJRT_DeviceDescription_Id(&args));
  return args.id;
}

// Serialize's bytes, copied; the deleter is called exactly once.
Status Serialize(PJRT_TopologyDescription* topology, std::string* bytes) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Serialize_Args);
  args.topology = topology;
  Status status = Consume(api()->PJRT_TopologyDescription_Serialize(&args));
  if (!status.ok()) return status;
  EXPECT_NE(args.serialized_bytes, nullptr);
  EXPECT_NE(args.serialized_topology_deleter, nullptr);
  if (args.serialized_bytes != nullptr) {
    bytes->assign(args.serialized_bytes, args.serialized_bytes_size);
  }
  if (args.serialized_topology_deleter != nullptr) {
    args.serialized_topology_deleter(args.serialized_topology);
  }
  return status;
}

Status Deserialize(const std::string& bytes, TopologyPtr* topology) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Deserialize_Args);
  args.serialized_topology = bytes.data();
  args.serialized_topology_size = bytes.size();
  Status status = Consume(api()->PJRT_TopologyDescription_Deserialize(&args));
  if (status.ok()) {
    EXPECT_NE(args.topology, nullptr);
    topology->reset(args.topology);
  }
  return status;
}

class TopologyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_SLOT(PJRT_Client_TopologyDescription);
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    auto args = MAKE_ARGS(PJRT_Client_TopologyDescription_Args);
    args.client = client_.get();
    Status status = Consume(api()->PJRT_Client_TopologyDescription(&args));
    // Frameworks tolerate any error here; Kiln promises a topology.
    if (!status.ok() && !IsKiln()) GTEST_SKIP() << "no topology: " << status;
    ASSERT_TRUE(IsOk(status));
    topology_ = args.topology;  // owned by the client
    ASSERT_NE(topology_, nullptr);
  }
  ClientPtr client_;
  PJRT_TopologyDescription* topology_ = nullptr;
};

TEST_F(TopologyTest, PlatformNameMatchesTheClients) {
  EXPECT_EQ(TopologyPlatformName(topology_), PlatformName(client_.get()));
}

TEST_F(TopologyTest, PlatformVersionIsNonEmpty) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_PlatformVersion_Args);
  args.topology = topology_;
  ASSERT_PJRT_OK(api()->PJRT_TopologyDescription_PlatformVersion(&args));
  ASSERT_NE(args.platform_version, nullptr);
  EXPECT_GT(args.platform_version_size, 0u);
}

TEST_F(TopologyTest, DescribesTheClientsDevices) {
  std::set<int> described;
  for (PJRT_DeviceDescription* description : DescriptionsOf(topology_)) {
    described.insert(DescriptionId(description));
  }
  std::set<int> devices;
  for (PJRT_Device* device : Devices(client_.get())) {
    devices.insert(DeviceId(device));
  }
  EXPECT_EQ(described, devices);
}

TEST_F(TopologyTest, AttributesAreWellFormed) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Attributes_Args);
  args.topology = topology_;
  ASSERT_PJRT_OK(api()->PJRT_TopologyDescription_Attributes(&args));
  for (size_t i = 0; i < args.num_attributes; ++i) {
    EXPECT_FALSE(ValueName(args.attributes[i]).empty());
  }
}

TEST_F(TopologyTest, SerializeThenDeserializeKeepsTheDevices) {
  REQUIRE_SLOT(PJRT_TopologyDescription_Deserialize);
  std::string bytes;
  Status status = Serialize(topology_, &bytes);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_FALSE(bytes.empty());
  TopologyPtr copy;
  status = Deserialize(bytes, &copy);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(DescriptionsOf(copy.get()).size(), DescriptionsOf(topology_).size());
  EXPECT_EQ(TopologyPlatformName(copy.get()), TopologyPlatformName(topology_));
}

TEST(CreatedTopologyTest, CreateWithoutOptionsThenDestroy) {
  ScopedEnv env("KILN_NUM_DEVICES", nullptr);
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Create_Args);
  Status status = Consume(api()->PJRT_TopologyDescription_Create(&args));
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  TopologyPtr topology(args.topology);
  ASSERT_NE(topology, nullptr);
  EXPECT_FALSE(DescriptionsOf(topology.get()).empty());
  EXPECT_FALSE(TopologyPlatformName(topology.get()).empty());
}

TEST(CreatedTopologyTest, DestroyingANullTopologyIsANoOp) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Destroy_Args);
  EXPECT_PJRT_OK(api()->PJRT_TopologyDescription_Destroy(&args));
}

// ------------------------------------------------------ Kiln's promises --

TEST(KilnTopologyTest, CreatedTopologyIsKilnsWithOneDeviceByDefault) {
  SKIP_UNLESS_KILN();
  ScopedEnv env("KILN_NUM_DEVICES", nullptr);
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Create_Args);
  ASSERT_PJRT_OK(api()->PJRT_TopologyDescription_Create(&args));
  TopologyPtr topology(args.topology);
  EXPECT_EQ(TopologyPlatformName(topology.get()), "kiln");
  EXPECT_EQ(DescriptionsOf(topology.get()).size(), 1u);
}

TEST(KilnTopologyTest, RoundTripKeepsADeviceCountOfFour) {
  SKIP_UNLESS_KILN();
  std::vector<PJRT_NamedValue> options = {NamedInt64("num_devices", 4)};
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Create_Args);
  args.create_options = options.data();
  args.num_options = options.size();
  ASSERT_PJRT_OK(api()->PJRT_TopologyDescription_Create(&args));
  TopologyPtr topology(args.topology);
  std::string bytes;
  ASSERT_TRUE(IsOk(Serialize(topology.get(), &bytes)));
  TopologyPtr copy;
  ASSERT_TRUE(IsOk(Deserialize(bytes, &copy)));
  EXPECT_EQ(DescriptionsOf(copy.get()).size(), 4u);
}

TEST(KilnTopologyTest, DeserializingGarbageIsInvalid) {
  SKIP_UNLESS_KILN();
  for (const std::string& bytes : {std::string(), std::string("not a topology"),
                                   std::string(7, '\xff'), std::string(1, '\0')}) {
    TopologyPtr topology;
    EXPECT_TRUE(HasCode(Deserialize(bytes, &topology), PJRT_Error_Code_INVALID_ARGUMENT))
        << bytes.size() << " bytes";
  }
}

// ------------------------------------------- memory kinds of a topology --

std::vector<int> MemoryKindIds(const PJRT_TopologyDescription* topology) {
  auto args = MAKE_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args);
  args.topology = topology;
  Status status = Consume(api()->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args));
  if (!status.ok()) return {};
  return std::vector<int>(args.memory_space_kind_ids,
                          args.memory_space_kind_ids + args.num_memory_space_kind_ids);
}

// The serialized ShapeProto of f32[2,3] in memory of kind `kind_id`.
Status CanonicalShape(const PJRT_TopologyDescription* topology, int kind_id, std::string* bytes) {
  const int64_t dims[] = {2, 3};
  auto args = MAKE_ARGS(PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args);
  args.topology = topology;
  args.memory_space_kind_id = kind_id;
  args.dims = dims;
  args.num_dims = 2;
  args.element_type = PJRT_Buffer_Type_F32;
  Status status = Consume(api()->PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(&args));
  if (!status.ok()) return status;
  bytes->assign(args.serialized_shape, args.serialized_shape_size);
  EXPECT_NE(args.serialized_shape_deleter, nullptr);
  args.serialized_shape_deleter(args.serialized_shape);
  return status;
}

TEST_F(TopologyTest, EveryDeviceMemoryKindHasACanonicalShape) {
  REQUIRE_SLOT(PJRT_TopologyDescription_GetMemorySpaceKindIds);
  auto args = MAKE_ARGS(PJRT_TopologyDescription_GetMemorySpaceKindIds_Args);
  args.topology = topology_;
  Status status = Consume(api()->PJRT_TopologyDescription_GetMemorySpaceKindIds(&args));
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  std::vector<int> ids = MemoryKindIds(topology_);
  for (PJRT_Device* device : Devices(client_.get())) {
    for (PJRT_Memory* memory : DeviceMemories(device)) {
      auto kind = MAKE_ARGS(PJRT_Memory_Kind_Id_Args);
      kind.memory = memory;
      ASSERT_PJRT_OK(api()->PJRT_Memory_Kind_Id(&kind));
      EXPECT_NE(std::find(ids.begin(), ids.end(), kind.kind_id), ids.end()) << kind.kind_id;
    }
  }
  std::string bytes;
  status = CanonicalShape(topology_, ids.empty() ? 0 : ids[0], &bytes);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_FALSE(bytes.empty());
}

TEST(KilnTopologyTest, CanonicalShapesAreRowMajorShapeProtos) {
  SKIP_UNLESS_KILN();
  ClientPtr client = MakeClient();
  auto get = MAKE_ARGS(PJRT_Client_TopologyDescription_Args);
  get.client = client.get();
  ASSERT_PJRT_OK(api()->PJRT_Client_TopologyDescription(&get));
  EXPECT_EQ(MemoryKindIds(get.topology), (std::vector<int>{0, 1, 2}));
  for (int kind_id : {0, 1, 2}) {
    std::string bytes;
    ASSERT_TRUE(IsOk(CanonicalShape(get.topology, kind_id, &bytes)));
    // element_type F32 (11), dimensions {2, 3} packed, layout {minor_to_major {1, 0}},
    // is_dynamic_dimension {false, false} packed.
    EXPECT_EQ(bytes, std::string("\x10\x0b\x1a\x02\x02\x03\x2a\x04\x0a\x02\x01\x00"
                                 "\x32\x02\x00\x00",
                                 16));
  }
  std::string bytes;
  Status unknown = CanonicalShape(get.topology, 7, &bytes);
  EXPECT_TRUE(HasCode(unknown, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(unknown.message, "1 (pinned_host)"));
  EXPECT_TRUE(HasCode(CanonicalShape(nullptr, 0, &bytes), PJRT_Error_Code_INVALID_ARGUMENT));
}

}  // namespace
}  // namespace conformance
