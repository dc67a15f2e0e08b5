// Kiln's client create options: the device count comes from the
// `num_devices` option, else $KILN_NUM_DEVICES, else 1; anything else a
// client is given is rejected with INVALID_ARGUMENT naming it.
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

constexpr char kEnvName[] = "KILN_NUM_DEVICES";

size_t DeviceCountWith(const std::vector<PJRT_NamedValue>& options) {
  ClientPtr client;
  Status status = CreateClient(options, &client);
  EXPECT_TRUE(IsOk(status));
  if (!status.ok()) return 0;
  size_t count = Devices(client.get()).size();
  EXPECT_EQ(AddressableDevices(client.get()).size(), count);
  return count;
}

Status CreateWith(const std::vector<PJRT_NamedValue>& options) {
  ClientPtr client;
  return CreateClient(options, &client);
}

class KilnClientOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override { SKIP_UNLESS_KILN(); }
};

TEST_F(KilnClientOptionsTest, OneDeviceByDefault) {
  ScopedEnv env(kEnvName, nullptr);
  EXPECT_EQ(DeviceCountWith({}), 1u);
}

TEST_F(KilnClientOptionsTest, EnvironmentSetsTheDeviceCount) {
  ScopedEnv env(kEnvName, "3");
  EXPECT_EQ(DeviceCountWith({}), 3u);
}

TEST_F(KilnClientOptionsTest, OptionSetsTheDeviceCount) {
  ScopedEnv env(kEnvName, nullptr);
  EXPECT_EQ(DeviceCountWith({NamedInt64("num_devices", 4)}), 4u);
}

TEST_F(KilnClientOptionsTest, OptionOverridesTheEnvironment) {
  ScopedEnv env(kEnvName, "3");
  EXPECT_EQ(DeviceCountWith({NamedInt64("num_devices", 2)}), 2u);
}

TEST_F(KilnClientOptionsTest, OptionMayBeADecimalString) {
  ScopedEnv env(kEnvName, nullptr);
  EXPECT_EQ(DeviceCountWith({NamedString("num_devices", "5")}), 5u);
}

TEST_F(KilnClientOptionsTest, AJobOfOneProcessIsAnOrdinaryClient) {
  ScopedEnv env(kEnvName, nullptr);
  EXPECT_EQ(DeviceCountWith({NamedInt64("node_id", 0), NamedInt64("num_nodes", 1)}), 1u);
}

TEST_F(KilnClientOptionsTest, AJobOfSeveralProcessesNeedsTheKeyValueCallbacks) {
  // MAKE_ARGS zeroes the callbacks: a framework that gave none.
  Status status = CreateWith({NamedInt64("node_id", 0), NamedInt64("num_nodes", 2)});
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "kv_get_callback")) << status.message;
}

TEST_F(KilnClientOptionsTest, ANodeOutsideTheJobIsRejected) {
  Status status = CreateWith({NamedInt64("node_id", 2), NamedInt64("num_nodes", 2)});
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "node_id 2")) << status.message;
}

TEST_F(KilnClientOptionsTest, UnknownOptionIsRejectedByName) {
  Status status = CreateWith({NamedInt64("no_such_option_xyz", 1)});
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "no_such_option_xyz"));
}

TEST_F(KilnClientOptionsTest, WrongValueTypesAreRejected) {
  const int64_t list[] = {2};
  for (const PJRT_NamedValue& option :
       {NamedFloat("num_devices", 2.0f), NamedBool("num_devices", true),
        NamedInt64List("num_devices", list, 1)}) {
    SCOPED_TRACE("value type " + std::to_string(option.type));
    Status status = CreateWith({option});
    EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_TRUE(Contains(status.message, "num_devices"));
  }
}

TEST_F(KilnClientOptionsTest, DeviceCountBelowOneIsRejected) {
  for (int64_t count : {0, -1, -100}) {
    SCOPED_TRACE("num_devices = " + std::to_string(count));
    Status status = CreateWith({NamedInt64("num_devices", count)});
    EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_TRUE(Contains(status.message, "num_devices"));
  }
}

TEST_F(KilnClientOptionsTest, NonNumericStringsAreRejected) {
  for (const char* text : {"0", "-2", "two", "", "3x", "99999999999999999999"}) {
    SCOPED_TRACE(std::string("num_devices = \"") + text + "\"");
    EXPECT_TRUE(HasCode(CreateWith({NamedString("num_devices", text)}),
                        PJRT_Error_Code_INVALID_ARGUMENT));
  }
}

TEST_F(KilnClientOptionsTest, TopologyHonoursTheDeviceCountOption) {
  std::vector<PJRT_NamedValue> options = {NamedInt64("num_devices", 3)};
  auto args = MAKE_ARGS(PJRT_TopologyDescription_Create_Args);
  args.create_options = options.data();
  args.num_options = options.size();
  ASSERT_PJRT_OK(api()->PJRT_TopologyDescription_Create(&args));
  TopologyPtr topology(args.topology);
  ASSERT_NE(topology, nullptr);
  auto descriptions = MAKE_ARGS(PJRT_TopologyDescription_GetDeviceDescriptions_Args);
  descriptions.topology = topology.get();
  ASSERT_PJRT_OK(api()->PJRT_TopologyDescription_GetDeviceDescriptions(&descriptions));
  EXPECT_EQ(descriptions.num_descriptions, 3u);
}

}  // namespace
}  // namespace conformance
