// The Layouts extension: the memory layouts of buffers, of a client's and a
// topology's arrays, and of an executable's parameters and outputs. Kiln's
// arrays are always dense and row-major, so every layout is the row-major
// one of its rank. XLA's C API client reads executables' layouts through
// this extension; without it, it rebuilds an HLO module from
// PJRT_Executable_OptimizedProgram to find them, which costs JAX several
// milliseconds per compile (docs/framework-notes.md).
#include "capi/call.h"
#include "capi/convert.h"
#include "capi/functions.h"
#include "capi/handles.h"

namespace kiln::capi {

PJRT_Error* Impl::PJRT_Layouts_MemoryLayout_Destroy(PJRT_Layouts_MemoryLayout_Destroy_Args* args) {
  KILN_ARGS(layout);
  if (args->layout == nullptr) return nullptr;  // the header allows null
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Layouts_MemoryLayout* layout, UnwrapLayout(args->layout));
  if (layout->owned_by_executable) {
    return MakeError(InvalidArgument(
        CurrentFunction(),
        ": `layout` belongs to the executable that returned it and lives as "
        "long as that executable; only layouts from a client, topology or buffer are destroyed"));
  }
  UnregisterHandle(layout);
  delete layout;
  return nullptr;
}

PJRT_Error* Impl::PJRT_Layouts_MemoryLayout_Serialize(
    PJRT_Layouts_MemoryLayout_Serialize_Args* args) {
  KILN_ARGS(serialized_layout_deleter);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Layouts_MemoryLayout* layout, UnwrapLayout(args->layout));
  auto* serialized = new PJRT_Layouts_SerializedLayout{layout->text};
  args->serialized_layout = serialized;
  args->serialized_bytes = serialized->bytes.data();
  args->serialized_bytes_size = serialized->bytes.size();
  args->serialized_layout_deleter = [](PJRT_Layouts_SerializedLayout* s) { delete s; };
  return nullptr;
}

namespace {

// The element type must be one Kiln stores; the layout does not depend on it.
Status CheckType(PJRT_Buffer_Type type) { return FromPjrtType(type).status(); }

Status CheckDims(const int64_t* dims, size_t num_dims) {
  if (num_dims > 0 && dims == nullptr) {
    return InvalidArgument(CurrentFunction(), ": `dims` is null but `num_dims` is ", num_dims);
  }
  for (size_t i = 0; i < num_dims; ++i) {
    if (dims[i] < 0) {
      return InvalidArgument(CurrentFunction(), ": dimension ", i, " is ", dims[i],
                             "; expected a size of at least 0");
    }
  }
  return Status::Ok();
}

}  // namespace

PJRT_Error* Impl::PJRT_Layouts_PJRT_Client_GetDefaultLayout(
    PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args* args) {
  KILN_ARGS(layout);
  KILN_CAPI_RETURN_IF_ERROR(UnwrapClient(args->client).status());
  KILN_CAPI_RETURN_IF_ERROR(CheckType(args->type));
  KILN_CAPI_RETURN_IF_ERROR(CheckDims(args->dims, args->num_dims));
  args->layout = NewRowMajorLayout(args->num_dims);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Layouts_PJRT_Topology_GetDefaultLayout(
    PJRT_Layouts_PJRT_Topology_GetDefaultLayout_Args* args) {
  KILN_ARGS(layout);
  KILN_CAPI_RETURN_IF_ERROR(UnwrapTopology(args->topology_description).status());
  KILN_CAPI_RETURN_IF_ERROR(CheckType(args->type));
  KILN_CAPI_RETURN_IF_ERROR(CheckDims(args->dims, args->num_dims));
  args->layout = NewRowMajorLayout(args->num_dims);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Layouts_PJRT_Buffer_MemoryLayout(
    PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args* args) {
  KILN_ARGS(layout);
  // Only liveness: the shape of a buffer whose client is gone is still known
  // (XLA's client aborts on an error here).
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Buffer* buffer, UnwrapBufferForDestroy(args->buffer));
  args->layout = NewRowMajorLayout(buffer->buffer->shape().dims.size());
  return nullptr;
}

PJRT_Error* Impl::PJRT_Layouts_PJRT_Executable_GetOutputLayouts(
    PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args* args) {
  KILN_ARGS(layouts);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_outputs = executable->output_layouts.size();
  args->layouts = executable->output_layouts.data();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Layouts_PJRT_Executable_GetParameterLayouts(
    PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args* args) {
  KILN_ARGS(layouts);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_parameters = executable->parameter_layouts.size();
  args->layouts = executable->parameter_layouts.data();
  return nullptr;
}

}  // namespace kiln::capi
