// PJRT_Error: its API functions and, since API 0.107, the function table every
// error starts with (frameworks may call through it instead of the API).
#include <string>

#include "plugin.h"

namespace conformance {
namespace {

// The first minor version whose PJRT_Error starts with a function table.
constexpr int kErrorFunctionTableMinor = 107;

constexpr int kUnknownDeviceId = 987654;

// A real error, produced the same way on any plugin: looking up a device id
// that does not exist.
PJRT_Error* LookUpUnknownDevice(PJRT_Client* client) {
  auto args = MAKE_ARGS(PJRT_Client_LookupDevice_Args);
  args.client = client;
  args.id = kUnknownDeviceId;
  return api()->PJRT_Client_LookupDevice(&args);
}

std::string MessageOf(const PJRT_Error* error) {
  auto args = MAKE_ARGS(PJRT_Error_Message_Args);
  args.error = error;
  api()->PJRT_Error_Message(&args);
  if (args.message == nullptr) return "";
  return std::string(args.message, args.message_size);
}

void Destroy(PJRT_Error* error) {
  auto args = MAKE_ARGS(PJRT_Error_Destroy_Args);
  args.error = error;
  api()->PJRT_Error_Destroy(&args);
}

// Counts payload visits and checks each payload's key.
void CountPayload(const char* key, size_t key_size, const char* value, size_t value_size,
                  void* user_arg) {
  EXPECT_NE(key, nullptr);
  EXPECT_GT(key_size, 0u);
  if (value_size > 0) {
    EXPECT_NE(value, nullptr);
  }
  ++*static_cast<int*>(user_arg);
}

class ErrorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    client_ = MakeClient();
    ASSERT_NE(client_, nullptr);
  }
  ClientPtr client_;
};

TEST_F(ErrorTest, UnknownDeviceLookupFails) {
  PJRT_Error* error = LookUpUnknownDevice(client_.get());
  ASSERT_NE(error, nullptr);
  Status status = Consume(error);
  EXPECT_TRUE(HasCodeIn(status, {PJRT_Error_Code_INVALID_ARGUMENT, PJRT_Error_Code_NOT_FOUND}));
  EXPECT_FALSE(status.message.empty());
}

TEST_F(ErrorTest, MessageAndCodeAreStableAcrossCalls) {
  PJRT_Error* error = LookUpUnknownDevice(client_.get());
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(MessageOf(error), MessageOf(error));
  auto first = MAKE_ARGS(PJRT_Error_GetCode_Args);
  first.error = error;
  EXPECT_EQ(api()->PJRT_Error_GetCode(&first), nullptr);
  auto second = MAKE_ARGS(PJRT_Error_GetCode_Args);
  second.error = error;
  EXPECT_EQ(api()->PJRT_Error_GetCode(&second), nullptr);
  EXPECT_EQ(first.code, second.code);
  EXPECT_NE(first.code, PJRT_Error_Code_OK);
  Destroy(error);
}

TEST_F(ErrorTest, DestroyingANullErrorIsANoOp) {
  Destroy(nullptr);  // "`error` can be nullptr"
}

TEST_F(ErrorTest, ErrorsAreIndependentObjects) {
  PJRT_Error* first = LookUpUnknownDevice(client_.get());
  PJRT_Error* second = LookUpUnknownDevice(client_.get());
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  std::string expected = MessageOf(second);
  Destroy(first);
  EXPECT_EQ(MessageOf(second), expected);
  Destroy(second);
}

TEST_F(ErrorTest, ErrorsOutliveTheirClient) {
  PJRT_Error* error = LookUpUnknownDevice(client_.get());
  ASSERT_NE(error, nullptr);
  std::string expected = MessageOf(error);
  client_.reset();
  EXPECT_EQ(MessageOf(error), expected);
  EXPECT_FALSE(Consume(error).ok());
}

TEST_F(ErrorTest, ForEachPayloadVisitsWellFormedPayloads) {
  REQUIRE_SLOT(PJRT_Error_ForEachPayload);
  PJRT_Error* error = LookUpUnknownDevice(client_.get());
  ASSERT_NE(error, nullptr);
  int visits = 0;
  auto args = MAKE_ARGS(PJRT_Error_ForEachPayload_Args);
  args.error = error;
  args.visitor = &CountPayload;
  args.user_arg = &visits;
  EXPECT_PJRT_OK(api()->PJRT_Error_ForEachPayload(&args));
  Destroy(error);
}

TEST_F(ErrorTest, FunctionTableAgreesWithTheApi) {
  if (api()->pjrt_api_version.minor_version < kErrorFunctionTableMinor) {
    GTEST_SKIP() << "errors have no function table before 0." << kErrorFunctionTableMinor;
  }
  PJRT_Error* error = LookUpUnknownDevice(client_.get());
  ASSERT_NE(error, nullptr);
  const PJRT_Error_FunctionTable* table = error->vtable;
  ASSERT_NE(table, nullptr) << "a PJRT_Error must start with its function table";
  EXPECT_GE(table->struct_size, static_cast<size_t>(PJRT_Error_FunctionTable_STRUCT_SIZE));
  ASSERT_NE(table->destroy, nullptr);
  ASSERT_NE(table->message, nullptr);
  ASSERT_NE(table->get_code, nullptr);
  ASSERT_NE(table->for_each_payload, nullptr);

  const char* message = nullptr;
  size_t message_size = 0;
  table->message(error, &message, &message_size);
  ASSERT_NE(message, nullptr);
  EXPECT_EQ(std::string(message, message_size), MessageOf(error));

  auto code = MAKE_ARGS(PJRT_Error_GetCode_Args);
  code.error = error;
  ASSERT_EQ(api()->PJRT_Error_GetCode(&code), nullptr);
  EXPECT_EQ(table->get_code(error), code.code);

  int visits = 0;
  table->for_each_payload(error, &CountPayload, &visits);
  if (HAS_SLOT(PJRT_Error_ForEachPayload)) {
    int api_visits = 0;
    auto args = MAKE_ARGS(PJRT_Error_ForEachPayload_Args);
    args.error = error;
    args.visitor = &CountPayload;
    args.user_arg = &api_visits;
    EXPECT_PJRT_OK(api()->PJRT_Error_ForEachPayload(&args));
    EXPECT_EQ(visits, api_visits);
  }
  table->destroy(error);  // frees it: the sanitizer build checks for leaks
}

TEST_F(ErrorTest, EveryErrorHasAFunctionTable) {
  if (api()->pjrt_api_version.minor_version < kErrorFunctionTableMinor) {
    GTEST_SKIP() << "errors have no function table before 0." << kErrorFunctionTableMinor;
  }
  // Errors from different paths (a client call, an event) share the layout.
  PJRT_Error* from_call = LookUpUnknownDevice(client_.get());
  ASSERT_NE(from_call, nullptr);
  EXPECT_NE(from_call->vtable, nullptr);
  Destroy(from_call);
  if (!HAS_SLOT(PJRT_Event_Create) || !HAS_SLOT(PJRT_Event_Set)) return;
  EventPtr event = CreateEvent();
  ASSERT_NE(event, nullptr);
  ASSERT_TRUE(IsOk(SetEvent(event.get(), PJRT_Error_Code_ABORTED, "stop")));
  auto args = MAKE_ARGS(PJRT_Event_Error_Args);
  args.event = event.get();
  PJRT_Error* from_event = api()->PJRT_Event_Error(&args);
  ASSERT_NE(from_event, nullptr);
  ASSERT_NE(from_event->vtable, nullptr);
  EXPECT_EQ(from_event->vtable->get_code(from_event), PJRT_Error_Code_ABORTED);
  from_event->vtable->destroy(from_event);
}

// ------------------------------------------------------ Kiln's promises --

class KilnErrorTest : public ErrorTest {};

TEST_F(KilnErrorTest, ErrorsCarryNoPayloads) {
  SKIP_UNLESS_KILN();
  PJRT_Error* error = LookUpUnknownDevice(client_.get());
  ASSERT_NE(error, nullptr);
  int visits = 0;
  auto args = MAKE_ARGS(PJRT_Error_ForEachPayload_Args);
  args.error = error;
  args.visitor = &CountPayload;
  args.user_arg = &visits;
  EXPECT_PJRT_OK(api()->PJRT_Error_ForEachPayload(&args));
  error->vtable->for_each_payload(error, &CountPayload, &visits);
  EXPECT_EQ(visits, 0);
  Destroy(error);
}

TEST_F(KilnErrorTest, UnknownDeviceMessageNamesTheId) {
  SKIP_UNLESS_KILN();
  Status status = Consume(LookUpUnknownDevice(client_.get()));
  EXPECT_TRUE(Contains(status.message, std::to_string(kUnknownDeviceId)));
}

}  // namespace
}  // namespace conformance
