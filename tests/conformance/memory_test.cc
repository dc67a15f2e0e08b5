// PJRT_Memory: its getters and, since API 0.107, the function table each
// PJRT_Memory starts with (user data that frameworks attach to a memory).
#include <map>
#include <set>
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

// The first minor version whose PJRT_Memory starts with a function table.
constexpr int kMemoryFunctionTableMinor = 107;

int KindId(PJRT_Memory* memory) {
  auto args = MAKE_ARGS(PJRT_Memory_Kind_Id_Args);
  args.memory = memory;
  EXPECT_PJRT_OK(api()->PJRT_Memory_Kind_Id(&args));
  return args.kind_id;
}

class MemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClientWithDevices(2);
    if (client_ == nullptr) client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    memories_ = AddressableMemories(client_.get());
    ASSERT_FALSE(memories_.empty());
  }
  ClientPtr client_;
  std::vector<PJRT_Memory*> memories_;
};

TEST_F(MemoryTest, IdsAreUnique) {
  std::set<int> ids;
  for (PJRT_Memory* memory : memories_) {
    EXPECT_TRUE(ids.insert(MemoryId(memory)).second)
        << "memory id " << MemoryId(memory) << " is used twice";
  }
}

TEST_F(MemoryTest, StringsAreNonEmpty) {
  for (PJRT_Memory* memory : memories_) {
    EXPECT_FALSE(MemoryKind(memory).empty());
    auto debug = MAKE_ARGS(PJRT_Memory_DebugString_Args);
    debug.memory = memory;
    ASSERT_PJRT_OK(api()->PJRT_Memory_DebugString(&debug));
    EXPECT_NE(debug.debug_string, nullptr);
    EXPECT_GT(debug.debug_string_size, 0u);
    auto text = MAKE_ARGS(PJRT_Memory_ToString_Args);
    text.memory = memory;
    ASSERT_PJRT_OK(api()->PJRT_Memory_ToString(&text));
    EXPECT_NE(text.to_string, nullptr);
    EXPECT_GT(text.to_string_size, 0u);
  }
}

TEST_F(MemoryTest, KindIdsFollowKinds) {
  REQUIRE_SLOT(PJRT_Memory_Kind_Id);
  std::map<std::string, int> id_of_kind;
  std::map<int, std::string> kind_of_id;
  for (PJRT_Memory* memory : memories_) {
    std::string kind = MemoryKind(memory);
    int id = KindId(memory);
    auto [kind_entry, new_kind] = id_of_kind.emplace(kind, id);
    EXPECT_EQ(kind_entry->second, id) << "kind " << kind << " has two ids";
    auto [id_entry, new_id] = kind_of_id.emplace(id, kind);
    EXPECT_EQ(id_entry->second, kind) << "kind id " << id << " has two kinds";
  }
}

TEST_F(MemoryTest, AddressableByDevicesOfTheClient) {
  std::vector<PJRT_Device*> devices = Devices(client_.get());
  std::set<PJRT_Device*> client_devices(devices.begin(), devices.end());
  for (PJRT_Memory* memory : memories_) {
    auto args = MAKE_ARGS(PJRT_Memory_AddressableByDevices_Args);
    args.memory = memory;
    ASSERT_PJRT_OK(api()->PJRT_Memory_AddressableByDevices(&args));
    EXPECT_GT(args.num_devices, 0u);
    for (size_t i = 0; i < args.num_devices; ++i) {
      EXPECT_EQ(client_devices.count(args.devices[i]), 1u);
    }
  }
}

// ---------------------------------------------------- the function table --

class MemoryTableTest : public MemoryTest {
 protected:
  void SetUp() override {
    if (api()->pjrt_api_version.minor_version < kMemoryFunctionTableMinor) {
      GTEST_SKIP() << "memories have no function table before 0." << kMemoryFunctionTableMinor;
    }
    MemoryTest::SetUp();
  }
};

// Keys are addresses, as frameworks use them (not const: distinct objects).
int kFirstKey = 0;
int kSecondKey = 0;

TEST_F(MemoryTableTest, EveryMemoryHasAValidTable) {
  for (PJRT_Memory* memory : memories_) {
    const PJRT_Memory_FunctionTable* table = memory->vtable;
    ASSERT_NE(table, nullptr) << "a PJRT_Memory must start with its table";
    EXPECT_GE(table->struct_size, static_cast<size_t>(PJRT_Memory_FunctionTable_STRUCT_SIZE));
    EXPECT_EQ(table->instance_struct_size, static_cast<size_t>(PJRT_Memory_STRUCT_SIZE));
    EXPECT_NE(table->get_user_data, nullptr);
    EXPECT_NE(table->set_user_data, nullptr);
  }
}

TEST_F(MemoryTableTest, UserDataIsKeptPerMemoryAndKey) {
  ASSERT_GE(memories_.size(), 2u);
  PJRT_Memory* first = memories_[0];
  PJRT_Memory* second = memories_[1];
  int first_value = 1;
  int second_value = 2;
  EXPECT_EQ(first->vtable->get_user_data(first, &kFirstKey), nullptr)
      << "no user data before any is set";
  first->vtable->set_user_data(first, &kFirstKey, &first_value, nullptr);
  first->vtable->set_user_data(first, &kSecondKey, &second_value, nullptr);
  EXPECT_EQ(first->vtable->get_user_data(first, &kFirstKey), &first_value);
  EXPECT_EQ(first->vtable->get_user_data(first, &kSecondKey), &second_value);
  EXPECT_EQ(second->vtable->get_user_data(second, &kFirstKey), nullptr)
      << "user data belongs to one memory";
}

int destructor_calls = 0;
void CountDestructorCall(void* data) {
  EXPECT_EQ(data, &destructor_calls);
  ++destructor_calls;
}

TEST_F(MemoryTableTest, UserDataDestructorRunsOnceAtClientDestroy) {
  destructor_calls = 0;
  PJRT_Memory* memory = memories_[0];
  memory->vtable->set_user_data(memory, &kFirstKey, &destructor_calls, &CountDestructorCall);
  EXPECT_EQ(memory->vtable->get_user_data(memory, &kFirstKey), &destructor_calls);
  EXPECT_EQ(destructor_calls, 0) << "the destructor ran too early";
  client_.reset();
  EXPECT_EQ(destructor_calls, 1);
}

// ------------------------------------------------------ Kiln's promises --

class KilnMemoryTest : public MemoryTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    MemoryTest::SetUp();
  }
};

TEST_F(KilnMemoryTest, PinnedHostIsAddressableOnlyByItsDevice) {
  for (PJRT_Device* device : AddressableDevices(client_.get())) {
    for (const char* kind : {"device", "pinned_host", "unpinned_host"}) {
      PJRT_Memory* memory = FindMemory(device, kind);
      ASSERT_NE(memory, nullptr) << kind;
      auto args = MAKE_ARGS(PJRT_Memory_AddressableByDevices_Args);
      args.memory = memory;
      ASSERT_PJRT_OK(api()->PJRT_Memory_AddressableByDevices(&args));
      ASSERT_EQ(args.num_devices, 1u) << kind;
      EXPECT_EQ(args.devices[0], device) << kind;
    }
  }
}

TEST_F(KilnMemoryTest, KindIdsDifferBetweenTheThreeKinds) {
  PJRT_Device* device = AddressableDevices(client_.get())[0];
  const int ids[] = {KindId(FindMemory(device, "device")),
                     KindId(FindMemory(device, "pinned_host")),
                     KindId(FindMemory(device, "unpinned_host"))};
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);
  EXPECT_NE(ids[0], ids[2]);
}

}  // namespace
}  // namespace conformance
