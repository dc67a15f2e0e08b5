// PJRT_Plugin_* and PJRT_Error_*.
#include "capi/call.h"
#include "capi/functions.h"
#include "capi/handles.h"
#include "version.h"

namespace kiln::capi {
namespace {

// The StableHLO versions Kiln accepts in PJRT_Client_Compile. JAX serializes
// to `stablehlo_current_version`, clamped to its own; docs/architecture.md.
constexpr int64_t kStablehloCurrent[] = {1, 22, 0};
constexpr int64_t kStablehloMinimum[] = {0, 9, 0};

const NamedValues& PluginAttributes() {
  static const auto* values = new NamedValues(ToNamedValues({
      {"xla_version", int64_t{2}},
      {"stablehlo_current_version",
       std::vector<int64_t>(std::begin(kStablehloCurrent), std::end(kStablehloCurrent))},
      {"stablehlo_minimum_version",
       std::vector<int64_t>(std::begin(kStablehloMinimum), std::end(kStablehloMinimum))},
      {"supports_executable_serialization", true},
      {"kiln_version", std::string(kKilnVersion)},
  }));
  return *values;
}

}  // namespace

void Impl::PJRT_Error_Destroy(PJRT_Error_Destroy_Args* args) { ErrorDestroy(args); }
void Impl::PJRT_Error_Message(PJRT_Error_Message_Args* args) { ErrorMessage(args); }

PJRT_Error* Impl::PJRT_Error_GetCode(PJRT_Error_GetCode_Args* args) {
  KILN_ARGS(code);
  return ErrorGetCode(args);
}

PJRT_Error* Impl::PJRT_Error_ForEachPayload(PJRT_Error_ForEachPayload_Args* args) {
  KILN_ARGS(user_arg);
  return ErrorForEachPayload(args);
}

PJRT_Error* Impl::PJRT_Plugin_Initialize(PJRT_Plugin_Initialize_Args* args) {
  KILN_ARGS(extension_start);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Plugin_Attributes(PJRT_Plugin_Attributes_Args* args) {
  KILN_ARGS(num_attributes);
  const NamedValues& attributes = PluginAttributes();
  args->attributes = attributes.values.data();
  args->num_attributes = attributes.values.size();
  return nullptr;
}

}  // namespace kiln::capi
