// Null and stale handles. Kiln rejects a null client, buffer, device, memory,
// event, topology or executable with INVALID_ARGUMENT, and keeps a registry of
// live buffers so that a destroyed buffer passed again is rejected without
// touching freed memory. Other plugins may crash on these: all Kiln's.
#include <cstring>
#include <string>
#include <string_view>

#include "api_functions.h"
#include "plugin.h"

namespace conformance {
namespace {

// Functions of the handle families whose zero-filled args hold a required
// null handle (creators and destroyers, which accept null, are left out).
std::vector<ApiFunction> FunctionsTakingAHandle() {
  static constexpr std::string_view kFamilies[] = {
      "PJRT_Client_",
      "PJRT_Buffer_",
      "PJRT_Device_",
      "PJRT_DeviceDescription_",
      "PJRT_Memory_",
      "PJRT_Event_",
      "PJRT_Executable_",
      "PJRT_LoadedExecutable_",
      "PJRT_TopologyDescription_",
  };
  static constexpr std::string_view kExcluded[] = {
      "PJRT_Client_Create",
      "PJRT_Event_Create",
      "PJRT_TopologyDescription_Create",
      "PJRT_TopologyDescription_Deserialize",
  };
  std::vector<ApiFunction> functions;
  for (const ApiFunction& function : ApiFunctions()) {
    std::string_view name = function.name;
    bool in_family = false;
    for (std::string_view family : kFamilies) {
      in_family = in_family || name.rfind(family, 0) == 0;
    }
    bool excluded = name.size() >= 8 && name.substr(name.size() - 8) == "_Destroy";
    for (std::string_view skip : kExcluded) excluded = excluded || name == skip;
    if (in_family && !excluded) functions.push_back(function);
  }
  return functions;
}

class KilnNullHandleTest : public ::testing::TestWithParam<ApiFunction> {
 protected:
  void SetUp() override { SKIP_UNLESS_KILN(); }
};

TEST_P(KilnNullHandleTest, IsInvalidArgument) {
  const ApiFunction& function = GetParam();
  alignas(std::max_align_t) unsigned char storage[kMaxArgsSize] = {};
  size_t size = function.args_size;
  std::memcpy(storage, &size, sizeof(size));
  Status status = Consume(function.call(storage));
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_FALSE(status.message.empty());
}

std::string FunctionName(const ::testing::TestParamInfo<ApiFunction>& info) {
  return std::string(info.param.name).substr(std::strlen("PJRT_"));
}

INSTANTIATE_TEST_SUITE_P(HandleFunctions, KilnNullHandleTest,
                         ::testing::ValuesIn(FunctionsTakingAHandle()), FunctionName);

// ------------------------------------------------------------ destroyed --

class KilnStaleHandleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
    PJRT_Device* device = AddressableDevices(client_.get())[0];
    // The live buffer exists first, so the stale address cannot be reused.
    live_ = MakeBuffer(client_.get(), device, std::vector<float>{3, 4}, {2});
    ASSERT_NE(live_, nullptr);
    BufferPtr buffer = MakeBuffer(client_.get(), device, std::vector<float>{1, 2}, {2});
    ASSERT_NE(buffer, nullptr);
    stale_ = buffer.get();
    buffer.reset();  // destroyed: `stale_` now names nothing
  }

  void ExpectNotLive(const Status& status) {
    EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
    EXPECT_TRUE(Contains(status.message, "not a live"));
  }

  ClientPtr client_;
  BufferPtr live_;
  PJRT_Buffer* stale_ = nullptr;
};

TEST_F(KilnStaleHandleTest, QueriesOfADestroyedBufferAreInvalid) {
  auto dims = MAKE_ARGS(PJRT_Buffer_Dimensions_Args);
  dims.buffer = stale_;
  ExpectNotLive(Consume(api()->PJRT_Buffer_Dimensions(&dims)));
  auto deleted = MAKE_ARGS(PJRT_Buffer_IsDeleted_Args);
  deleted.buffer = stale_;
  ExpectNotLive(Consume(api()->PJRT_Buffer_IsDeleted(&deleted)));
  auto type = MAKE_ARGS(PJRT_Buffer_ElementType_Args);
  type.buffer = stale_;
  ExpectNotLive(Consume(api()->PJRT_Buffer_ElementType(&type)));
}

TEST_F(KilnStaleHandleTest, ReadingADestroyedBufferIsInvalid) {
  float dst[2];
  auto args = MAKE_ARGS(PJRT_Buffer_ToHostBuffer_Args);
  args.src = stale_;
  args.dst = dst;
  args.dst_size = sizeof(dst);
  ExpectNotLive(Consume(api()->PJRT_Buffer_ToHostBuffer(&args)));
  EXPECT_EQ(args.event, nullptr);
}

TEST_F(KilnStaleHandleTest, DestroyingTwiceIsInvalid) {
  auto args = MAKE_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = stale_;
  ExpectNotLive(Consume(api()->PJRT_Buffer_Destroy(&args)));
}

TEST_F(KilnStaleHandleTest, OtherBuffersAreUnaffected) {
  auto args = MAKE_ARGS(PJRT_Buffer_Destroy_Args);
  args.buffer = stale_;
  Consume(api()->PJRT_Buffer_Destroy(&args));
  Consume(api()->PJRT_Buffer_Destroy(&args));
  EXPECT_FALSE(IsDeleted(live_.get()));
  EXPECT_EQ(Read<float>(live_.get()), (std::vector<float>{3, 4}));
}

}  // namespace
}  // namespace conformance
