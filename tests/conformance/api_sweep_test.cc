// Sweeps over every function of the table with malformed calls. Kiln promises
// that nothing reachable from input crashes: zero-filled args, struct_size 0
// and null args all come back as errors (or, where null handles are allowed,
// as success). Other plugins may crash on these, so all of it is Kiln's.
#include <cstring>
#include <string>
#include <string_view>

#include "api_functions.h"
#include "plugin.h"

namespace conformance {
namespace {

// Zero-filled storage for any args struct.
struct ArgsStorage {
  alignas(std::max_align_t) unsigned char bytes[kMaxArgsSize];
  ArgsStorage() { std::memset(bytes, 0, sizeof(bytes)); }
  void set_struct_size(size_t size) { std::memcpy(bytes, &size, sizeof(size)); }
  template <typename Args>
  Args* as() {
    return reinterpret_cast<Args*>(bytes);
  }
};

bool Named(const ApiFunction& function, std::string_view name) { return name == function.name; }

// Functions whose args hold a PJRT_Error* that must be a real error.
bool TakesAnError(const ApiFunction& function) {
  return std::string_view(function.name).rfind("PJRT_Error_", 0) == 0;
}

// Destroys whatever a creator function returned when it succeeded.
void ReleaseOutputs(const ApiFunction& function, ArgsStorage& storage) {
  if (Named(function, "PJRT_Client_Create")) {
    ClientPtr release(storage.as<PJRT_Client_Create_Args>()->client);
  } else if (Named(function, "PJRT_TopologyDescription_Create")) {
    TopologyPtr release(storage.as<PJRT_TopologyDescription_Create_Args>()->topology);
  } else if (Named(function, "PJRT_TopologyDescription_Deserialize")) {
    TopologyPtr release(storage.as<PJRT_TopologyDescription_Deserialize_Args>()->topology);
  } else if (Named(function, "PJRT_Event_Create")) {
    EventPtr release(storage.as<PJRT_Event_Create_Args>()->event);
  } else if (Named(function, "PJRT_ExecuteContext_Create")) {
    auto args = MAKE_ARGS(PJRT_ExecuteContext_Destroy_Args);
    args.context = storage.as<PJRT_ExecuteContext_Create_Args>()->context;
    EXPECT_PJRT_OK(api()->PJRT_ExecuteContext_Destroy(&args));
  }
}

// A real error to put into PJRT_Error_* args.
PJRT_Error* MakeAnError() {
  auto args = MAKE_ARGS(PJRT_Event_Set_Args);  // struct_size 0 below
  args.struct_size = 0;
  PJRT_Error* error = api()->PJRT_Event_Set(&args);
  EXPECT_NE(error, nullptr) << "PJRT_Event_Set with struct_size 0 succeeded";
  return error;
}

class KilnApiSweepTest : public ::testing::TestWithParam<ApiFunction> {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    ASSERT_TRUE(HasSlot(GetParam().offset)) << GetParam().name << " is null";
  }
};

TEST_P(KilnApiSweepTest, ZeroFilledArgsNeverCrash) {
  const ApiFunction& function = GetParam();
  if (TakesAnError(function)) GTEST_SKIP() << "needs a real PJRT_Error";
  ArgsStorage storage;
  storage.set_struct_size(function.args_size);
  Status status = Consume(function.call(storage.bytes));
  if (status.ok()) {
    ReleaseOutputs(function, storage);
  } else {
    EXPECT_FALSE(status.message.empty())
        << function.name << " returned " << CodeName(status.code) << " with an empty message";
  }
}

TEST_P(KilnApiSweepTest, StructSizeZeroIsInvalid) {
  const ApiFunction& function = GetParam();
  if (function.returns_void) GTEST_SKIP() << "returns no error";
  ArgsStorage storage;
  storage.set_struct_size(0);
  PJRT_Error* real_error = nullptr;
  if (TakesAnError(function)) {
    // PJRT_Error_GetCode_Args and PJRT_Error_ForEachPayload_Args hold the
    // error right after extension_start.
    real_error = MakeAnError();
    std::memcpy(storage.bytes + 2 * sizeof(void*), &real_error, sizeof(real_error));
  }
  Status status = Consume(function.call(storage.bytes));
  if (status.ok()) ReleaseOutputs(function, storage);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, std::string(function.name) + "_Args"));
  Consume(real_error);
}

TEST_P(KilnApiSweepTest, NullArgsAreInvalid) {
  const ApiFunction& function = GetParam();
  if (function.returns_void) GTEST_SKIP() << "returns no error";
  Status status = Consume(function.call(nullptr));
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
}

std::string FunctionName(const ::testing::TestParamInfo<ApiFunction>& info) {
  return std::string(info.param.name).substr(std::strlen("PJRT_"));
}

INSTANTIATE_TEST_SUITE_P(AllFunctions, KilnApiSweepTest, ::testing::ValuesIn(ApiFunctions()),
                         FunctionName);

}  // namespace
}  // namespace conformance
