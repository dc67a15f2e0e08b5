#include "capi/key_value_store.h"

#include <algorithm>
#include <limits>
#include <string>

#include "capi/error.h"

namespace kiln::capi {
namespace {

// What the callbacks use to report an error: a Kiln error, read back below.
PJRT_Error* CallbackError(PJRT_Error_Code code, const char* message, size_t size) {
  return MakeError(StatusFromPjrt(code, message, size));
}
PJRT_CallbackError callback_error = CallbackError;

// The status a callback returned (OK for null), destroying the error.
Status Consume(PJRT_Error* error) {
  if (error == nullptr) return Status::Ok();
  Status status = ErrorStatus(error);
  PJRT_Error_Destroy_Args destroy{PJRT_Error_Destroy_Args_STRUCT_SIZE, nullptr, error};
  ErrorDestroy(&destroy);
  if (status.ok()) return Internal("the key-value callback failed without a message");
  return status;
}

class CallbackStore final : public runtime::KeyValueStore {
 public:
  explicit CallbackStore(const PJRT_Client_Create_Args& args)
      : get_(args.kv_get_callback),
        get_arg_(args.kv_get_user_arg),
        put_(args.kv_put_callback),
        put_arg_(args.kv_put_user_arg) {}

  Status Put(std::string_view key, std::string_view value) override {
    PJRT_KeyValuePutCallback_Args args{};
    args.struct_size = PJRT_KeyValuePutCallback_Args_STRUCT_SIZE;
    args.key = key.data();
    args.key_size = key.size();
    args.value = value.data();
    args.value_size = value.size();
    args.callback_error = &callback_error;
    args.user_arg = put_arg_;
    return Consume(put_(&args));
  }

  StatusOr<std::string> Get(std::string_view key, std::chrono::milliseconds timeout) override {
    PJRT_KeyValueGetCallback_Args args{};
    args.struct_size = PJRT_KeyValueGetCallback_Args_STRUCT_SIZE;
    args.key = key.data();
    args.key_size = key.size();
    args.timeout_in_ms = static_cast<int>(std::min<int64_t>(timeout.count(),
                                                            std::numeric_limits<int>::max()));
    args.callback_error = &callback_error;
    args.user_arg = get_arg_;
    KILN_RETURN_IF_ERROR(Consume(get_(&args)));
    std::string value(args.value == nullptr ? "" : std::string(args.value, args.value_size));
    if (args.value != nullptr && args.value_deleter_callback != nullptr) {
      args.value_deleter_callback(args.value);
    }
    return value;
  }

 private:
  PJRT_KeyValueGetCallback get_;
  void* get_arg_;
  PJRT_KeyValuePutCallback put_;
  void* put_arg_;
};

}  // namespace

StatusOr<std::shared_ptr<runtime::KeyValueStore>> KeyValueStoreFrom(
    const PJRT_Client_Create_Args& args) {
  if (args.kv_get_callback == nullptr || args.kv_put_callback == nullptr) {
    return InvalidArgument("PJRT_Client_Create: a job of several processes (num_nodes > 1) needs "
                           "kv_get_callback and kv_put_callback; found ",
                           args.kv_get_callback == nullptr ? "no kv_get_callback" : "",
                           args.kv_get_callback == nullptr && args.kv_put_callback == nullptr
                               ? " and "
                               : "",
                           args.kv_put_callback == nullptr ? "no kv_put_callback" : "");
  }
  return std::shared_ptr<runtime::KeyValueStore>(std::make_shared<CallbackStore>(args));
}

}  // namespace kiln::capi
