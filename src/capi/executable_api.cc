// PJRT_Executable and PJRT_LoadedExecutable: queries answered from the
// compiled program, and Execute.
#include <cstddef>
#include <cstring>
#include <span>

#include "base/small_vector.h"
#include "capi/functions.h"
#include "capi/handles.h"
#include "frontend/compile_options.h"

namespace kiln::capi {

PJRT_Error* Impl::PJRT_Executable_Destroy(PJRT_Executable_Destroy_Args* args) {
  KILN_ARGS(executable);
  return DestroyLiveHandle(args->executable, [](auto* handle) { return UnwrapExecutable(handle); });
}

PJRT_Error* Impl::PJRT_Executable_Name(PJRT_Executable_Name_Args* args) {
  KILN_ARGS(executable_name_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->executable_name = executable->program->name.data();
  args->executable_name_size = executable->program->name.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_NumReplicas(PJRT_Executable_NumReplicas_Args* args) {
  KILN_ARGS(num_replicas);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_replicas = static_cast<size_t>(executable->program->options.num_replicas);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_NumPartitions(PJRT_Executable_NumPartitions_Args* args) {
  KILN_ARGS(num_partitions);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_partitions = static_cast<size_t>(executable->program->options.num_partitions);
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_NumOutputs(PJRT_Executable_NumOutputs_Args* args) {
  KILN_ARGS(num_outputs);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_outputs = executable->program->result_shapes.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_SizeOfGeneratedCodeInBytes(
    PJRT_Executable_SizeOfGeneratedCodeInBytes_Args* args) {
  KILN_ARGS(size_in_bytes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  // Kiln generates no machine code: the plan's nodes call precompiled kernels.
  args->size_in_bytes = static_cast<int64_t>(executable->program->graph->nodes.size() *
                                             sizeof(compiler::Node));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_OutputElementTypes(
    PJRT_Executable_OutputElementTypes_Args* args) {
  KILN_ARGS(num_output_types);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->output_types = executable->output_types.data();
  args->num_output_types = executable->output_types.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_OutputDimensions(PJRT_Executable_OutputDimensions_Args* args) {
  KILN_ARGS(dim_sizes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_outputs = executable->output_ranks.size();
  args->dims = executable->output_dims.data();
  args->dim_sizes = executable->output_ranks.data();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_OutputMemoryKinds(PJRT_Executable_OutputMemoryKinds_Args* args) {
  KILN_ARGS(memory_kind_sizes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_outputs = executable->output_memory_kinds.size();
  args->memory_kinds = executable->output_memory_kinds.data();
  args->memory_kind_sizes = executable->output_memory_kind_sizes.data();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_ParameterMemoryKinds(
    PJRT_Executable_ParameterMemoryKinds_Args* args) {
  KILN_ARGS(memory_kind_sizes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_parameters = executable->parameter_memory_kinds.size();
  args->memory_kinds = executable->parameter_memory_kinds.data();
  args->memory_kind_sizes = executable->parameter_memory_kind_sizes.data();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_Fingerprint(PJRT_Executable_Fingerprint_Args* args) {
  KILN_ARGS(executable_fingerprint_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->executable_fingerprint = executable->fingerprint.data();
  args->executable_fingerprint_size = executable->fingerprint.size();
  return nullptr;
}

// The Shardings extension: serialized xla.OpSharding per parameter and
// output (replicated for a program that is not partitioned).
PJRT_Error* Impl::PJRT_Shardings_PJRT_Executable_ParameterShardings(
    PJRT_Shardings_PJRT_Executable_ParameterShardings_Args* args) {
  KILN_ARGS(sharding_sizes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_parameters = executable->parameter_shardings.bytes.size();
  args->shardings = executable->parameter_shardings.data.data();
  args->sharding_sizes = executable->parameter_shardings.sizes.data();
  return nullptr;
}

PJRT_Error* Impl::PJRT_Shardings_PJRT_Executable_OutputShardings(
    PJRT_Shardings_PJRT_Executable_OutputShardings_Args* args) {
  KILN_ARGS(sharding_sizes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_outputs = executable->output_shardings.bytes.size();
  args->shardings = executable->output_shardings.data.data();
  args->sharding_sizes = executable->output_shardings.sizes.data();
  return nullptr;
}

// The program as StableHLO text (format "mlir"): first call with a null
// `code` for the size, then with a buffer of that size. A partitioned
// program is reported as what each device runs, as XLA does.
PJRT_Error* Impl::PJRT_Executable_OptimizedProgram(PJRT_Executable_OptimizedProgram_Args* args) {
  KILN_ARGS(program);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  if (args->program == nullptr) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `program` is null"));
  }
  PJRT_Program& program = *args->program;
  const compiler::Program& compiled = *executable->program;
  // A partitioned program is reported as what each device runs (the
  // listing, StableHLO text); any other program read from HLO as that HLO
  // (XLA's client converts it back exactly, where Kiln's text may hold
  // CHLO), and the rest as StableHLO text.
  const bool hlo = !compiled.hlo_with_config.empty() && compiled.listing.empty();
  const std::vector<uint8_t>& with_config = executable->optimized_hlo.empty()
                                                ? compiled.hlo_with_config
                                                : executable->optimized_hlo;
  const std::string_view text =
      hlo ? std::string_view(reinterpret_cast<const char*>(with_config.data()), with_config.size())
          : std::string_view(compiled.listing.empty() ? compiled.text : compiled.listing);
  static constexpr char kMlir[] = "mlir";
  static constexpr char kHloWithConfig[] = "hlo_with_config";
  program.format = hlo ? kHloWithConfig : kMlir;
  program.format_size = hlo ? sizeof(kHloWithConfig) - 1 : sizeof(kMlir) - 1;
  if (program.code == nullptr) {
    program.code_size = text.size();
    return nullptr;
  }
  if (program.code_size < text.size()) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `code` holds ", program.code_size,
                                     " bytes, the program needs ", text.size()));
  }
  std::memcpy(program.code, text.data(), text.size());
  program.code_size = text.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_LoadedExecutable_Destroy(PJRT_LoadedExecutable_Destroy_Args* args) {
  KILN_ARGS(executable);
  return DestroyLiveHandle(args->executable,
                           [](auto* handle) { return UnwrapLoadedExecutable(handle); });
}

PJRT_Error* Impl::PJRT_LoadedExecutable_GetExecutable(
    PJRT_LoadedExecutable_GetExecutable_Args* args) {
  KILN_ARGS(executable);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_LoadedExecutable* loaded,
                             UnwrapLoadedExecutable(args->loaded_executable, "loaded_executable"));
  args->executable = NewExecutable(loaded->executable->shared_program());
  return nullptr;
}

PJRT_Error* Impl::PJRT_LoadedExecutable_AddressableDevices(
    PJRT_LoadedExecutable_AddressableDevices_Args* args) {
  KILN_ARGS(num_addressable_devices);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_LoadedExecutable* executable,
                             UnwrapLoadedExecutable(args->executable));
  args->addressable_devices = executable->addressable_devices.data();
  args->num_addressable_devices = executable->addressable_devices.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_LoadedExecutable_AddressableDeviceLogicalIds(
    PJRT_LoadedExecutable_AddressableDeviceLogicalIds_Args* args) {
  KILN_ARGS(num_addressable_device_logical_ids);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_LoadedExecutable* executable,
                             UnwrapLoadedExecutable(args->executable));
  args->addressable_device_logical_ids = executable->logical_ids.data();
  args->num_addressable_device_logical_ids = executable->logical_ids.size();
  return nullptr;
}

}  // namespace kiln::capi

// Back the bytes GetDeviceAssignment, Serialize and GetCompileOptions hand
// out until the caller's deleter runs.
struct PJRT_DeviceAssignmentSerialized {
  std::vector<uint8_t> bytes;
};
struct PJRT_SerializedExecutable {
  std::vector<uint8_t> bytes;
};
struct PJRT_SerializedCompileOptions {
  std::vector<uint8_t> bytes;
};

namespace kiln::capi {

PJRT_Error* Impl::PJRT_LoadedExecutable_GetDeviceAssignment(
    PJRT_LoadedExecutable_GetDeviceAssignment_Args* args) {
  KILN_ARGS(serialized_device_assignment_deleter);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_LoadedExecutable* executable,
                             UnwrapLoadedExecutable(args->executable));
  auto* serialized = new PJRT_DeviceAssignmentSerialized{
      frontend::SerializeDeviceAssignment(executable->executable->device_assignment())};
  args->serialized_bytes = reinterpret_cast<const char*>(serialized->bytes.data());
  args->serialized_bytes_size = serialized->bytes.size();
  args->serialized_device_assignment = serialized;
  args->serialized_device_assignment_deleter = [](PJRT_DeviceAssignmentSerialized* bytes) {
    delete bytes;
  };
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_Serialize(PJRT_Executable_Serialize_Args* args) {
  KILN_ARGS(serialized_executable_deleter);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable,
                             UnwrapExecutable(const_cast<PJRT_Executable*>(args->executable)));
  auto* serialized = new PJRT_SerializedExecutable{
      runtime::SerializeExecutable(*executable->program)};
  args->serialized_bytes = reinterpret_cast<const char*>(serialized->bytes.data());
  args->serialized_bytes_size = serialized->bytes.size();
  args->serialized_executable = serialized;
  args->serialized_executable_deleter = [](PJRT_SerializedExecutable* bytes) { delete bytes; };
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_DeserializeAndLoad(
    PJRT_Executable_DeserializeAndLoad_Args* args) {
  KILN_ARGS(loaded_executable);
  args->loaded_executable = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Client* client, UnwrapClient(args->client));
  if (args->serialized_executable == nullptr && args->serialized_executable_size > 0) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `serialized_executable` is null"));
  }
  std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(args->serialized_executable),
                                 args->serialized_executable_size);
  std::span<const uint8_t> options;
  if (KILN_HAS_FIELD(overridden_serialized_compile_options_size) &&
      args->overridden_serialized_compile_options != nullptr) {
    options = {reinterpret_cast<const uint8_t*>(args->overridden_serialized_compile_options),
               args->overridden_serialized_compile_options_size};
  }
  auto loaded = client->client->DeserializeAndLoad(bytes, options);
  if (!loaded.ok()) {
    return MakeError(Status(loaded.status().code(),
                            StrCat(CurrentFunction(), ": ", loaded.status().message())));
  }
  args->loaded_executable = NewLoadedExecutable(client, std::move(*loaded));
  return nullptr;
}

PJRT_Error* Impl::PJRT_Executable_GetCompileOptions(PJRT_Executable_GetCompileOptions_Args* args) {
  KILN_ARGS(serialized_compile_options_deleter);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  auto* serialized = new PJRT_SerializedCompileOptions{executable->program->options.serialized};
  args->serialized_bytes = reinterpret_cast<const char*>(serialized->bytes.data());
  args->serialized_bytes_size = serialized->bytes.size();
  args->serialized_compile_options = serialized;
  args->serialized_compile_options_deleter = [](PJRT_SerializedCompileOptions* bytes) {
    delete bytes;
  };
  return nullptr;
}

// The compiler's static estimate (compiler/cost_analysis.h).
PJRT_Error* Impl::PJRT_Executable_GetCostAnalysis(PJRT_Executable_GetCostAnalysis_Args* args) {
  KILN_ARGS(properties);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  args->num_properties = executable->cost_properties.size();
  args->properties = executable->cost_properties.data();
  return nullptr;
}

// Sizes from the buffer plan: arguments, outputs and the arena (temp);
// aliased arguments are counted once.
PJRT_Error* Impl::PJRT_Executable_GetCompiledMemoryStats(
    PJRT_Executable_GetCompiledMemoryStats_Args* args) {
  KILN_ARGS(peak_memory_in_bytes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Executable* executable, UnwrapExecutable(args->executable));
  const compiler::Program& program = *executable->program;
  int64_t arguments = 0;
  for (const Shape& shape : program.parameter_shapes) arguments += shape.ByteSize();
  int64_t outputs = 0;
  for (const Shape& shape : program.result_shapes) outputs += shape.ByteSize();
  args->generated_code_size_in_bytes = 0;
  args->argument_size_in_bytes = arguments;
  args->output_size_in_bytes = outputs;
  int64_t aliased = 0;
  for (size_t i = 0; i < program.parameter_shapes.size(); ++i) {
    if (program.parameter_aliased_result[i] >= 0) aliased += program.parameter_shapes[i].ByteSize();
  }
  args->alias_size_in_bytes = aliased;
  args->temp_size_in_bytes = program.graph->arena_bytes;
  args->host_generated_code_size_in_bytes = 0;
  args->host_argument_size_in_bytes = 0;
  args->host_output_size_in_bytes = 0;
  args->host_alias_size_in_bytes = 0;
  args->host_temp_size_in_bytes = 0;
  args->peak_memory_in_bytes = arguments + outputs - aliased + program.graph->arena_bytes;
  if (KILN_HAS_FIELD(peak_unpadded_heap_bytes)) {
    args->total_size_in_bytes = args->peak_memory_in_bytes;
    args->total_allocation_bytes = args->peak_memory_in_bytes;
    args->indefinite_allocations = 0;
    args->peak_unpadded_heap_bytes = args->peak_memory_in_bytes;
  }
  return nullptr;
}

PJRT_Error* Impl::PJRT_LoadedExecutable_Delete(PJRT_LoadedExecutable_Delete_Args* args) {
  KILN_ARGS(executable);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_LoadedExecutable* executable,
                             UnwrapLoadedExecutable(args->executable));
  executable->executable->Delete();
  return nullptr;
}

PJRT_Error* Impl::PJRT_LoadedExecutable_IsDeleted(PJRT_LoadedExecutable_IsDeleted_Args* args) {
  KILN_ARGS(is_deleted);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_LoadedExecutable* executable,
                             UnwrapLoadedExecutable(args->executable));
  args->is_deleted = executable->executable->IsDeleted();
  return nullptr;
}

namespace {

// True when the caller's execute options (maybe from an older header) reach `end`.
bool OptionsReach(const PJRT_ExecuteOptions* options, size_t end) {
  return options != nullptr && options->struct_size >= end;
}
#define KILN_OPTIONS_REACH(field) \
  OptionsReach(options, offsetof(PJRT_ExecuteOptions, field) + sizeof(options->field))

// The runtime's options of an Execute call: arguments it may not donate,
// host callbacks, launch id and execute context.
StatusOr<runtime::ExecuteOptions> RunOptions(const PJRT_ExecuteOptions* options) {
  runtime::ExecuteOptions run;
  if (options == nullptr) return run;
  run.host = [options](size_t d) { return HostTransferFor(options, d); };
  if (KILN_OPTIONS_REACH(launch_id)) run.launch_id = options->launch_id;
  if (KILN_OPTIONS_REACH(num_non_donatable_input_indices) &&
      options->num_non_donatable_input_indices > 0) {
    if (options->non_donatable_input_indices == nullptr) {
      return InvalidArgument(CurrentFunction(),
                             ": `options->non_donatable_input_indices` is null "
                             "but its count is ",
                             options->num_non_donatable_input_indices);
    }
    run.non_donatable = std::span(options->non_donatable_input_indices,
                                  options->num_non_donatable_input_indices);
  }
  if (KILN_OPTIONS_REACH(context) && options->context != nullptr) {
    KILN_ASSIGN_OR_RETURN(auto* context,
                          UnwrapExecuteContext(options->context, "options->context"));
    run.context = context->context;
  }
  return run;
}
#undef KILN_OPTIONS_REACH

// Unwraps `args->argument_lists[d]` into `arguments`; the arguments' names
// are formatted only for an error (every call passes here).
template <typename List>
Status UnwrapArguments(const PJRT_LoadedExecutable_Execute_Args* args, size_t d, size_t num_outputs,
                       List& arguments) {
  if (args->num_args > 0 && args->argument_lists[d] == nullptr) {
    return InvalidArgument(CurrentFunction(), ": `argument_lists[", d, "]` is null; expected ",
                           args->num_args, " arguments");
  }
  if (num_outputs > 0 && args->output_lists[d] == nullptr) {
    return InvalidArgument(CurrentFunction(), ": `output_lists[", d,
                           "]` is null; expected room for ", num_outputs, " outputs");
  }
  for (size_t i = 0; i < args->num_args; ++i) {
    StatusOr<PJRT_Buffer*> buffer = UnwrapBuffer(args->argument_lists[d][i], "argument");
    if (!buffer.ok()) {
      return UnwrapBuffer(args->argument_lists[d][i], StrCat("argument_lists[", d, "][", i, "]"))
          .status();
    }
    arguments.push_back((*buffer)->buffer.get());
  }
  return Status::Ok();
}

// Hands run `d`'s outputs and completion event to the caller.
void ReturnRun(PJRT_LoadedExecutable_Execute_Args* args, PJRT_Client* client, size_t d,
               runtime::LoadedExecutable::Run& run) {
  for (size_t o = 0; o < run.outputs.size(); ++o) {
    args->output_lists[d][o] = NewBuffer(client, std::move(run.outputs[o]));
  }
  if (args->device_complete_events != nullptr) {
    args->device_complete_events[d] = NewEvent(run.done);
  }
}

// The common call, one device: what a jitted call of a small program costs
// is mostly this path, so it keeps its lists on the stack.
PJRT_Error* ExecuteOnOneDevice(PJRT_LoadedExecutable_Execute_Args* args,
                               PJRT_LoadedExecutable* executable, runtime::Device* device,
                               const runtime::ExecuteOptions& options) {
  runtime::LoadedExecutable& loaded = *executable->executable;
  SmallVector<runtime::Buffer*, 16> arguments;
  KILN_CAPI_RETURN_IF_ERROR(UnwrapArguments(args, 0, loaded.program().result_shapes.size(),
                                            arguments));
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::LoadedExecutable::Run run,
                             loaded.ExecuteOne(arguments, device, options));
  ReturnRun(args, executable->client, 0, run);
  return nullptr;
}

}  // namespace

PJRT_Error* Impl::PJRT_ExecuteContext_Create(PJRT_ExecuteContext_Create_Args* args) {
  KILN_ARGS(context);
  args->context = NewHandle<PJRT_ExecuteContext>(HandleKind::kExecuteContext,
                                                 std::make_shared<runtime::ExecuteContext>());
  return nullptr;
}

PJRT_Error* Impl::PJRT_ExecuteContext_Destroy(PJRT_ExecuteContext_Destroy_Args* args) {
  KILN_ARGS(context);
  // Runs still using the context keep the runtime object alive.
  return DestroyLiveHandle(args->context,
                           [](auto* handle) { return UnwrapExecuteContext(handle); });
}

// Runs the program once per device of `argument_lists`: on the executable's
// addressable devices in order, or on `execute_device` alone.
PJRT_Error* Impl::PJRT_LoadedExecutable_Execute(PJRT_LoadedExecutable_Execute_Args* args) {
  KILN_ARGS(device_complete_events);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_LoadedExecutable* executable,
                             UnwrapLoadedExecutable(args->executable));
  runtime::LoadedExecutable& loaded = *executable->executable;
  std::span<runtime::Device* const> devices = loaded.addressable_devices();
  runtime::Device* chosen = nullptr;
  PJRT_Device* execute_device = KILN_HAS_FIELD(execute_device) ? args->execute_device : nullptr;
  if (execute_device != nullptr) {
    KILN_CAPI_ASSIGN_OR_RETURN(PJRT_Device* device, UnwrapAddressableDevice(execute_device, "execute_device"));
    chosen = device->device;
    devices = std::span(&chosen, 1);
  }
  if (args->num_devices != devices.size()) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `num_devices` is ", args->num_devices,
                                     ", expected ", devices.size(),
                                     " (the executable's addressable devices)"));
  }
  // A process with none of the program's devices (a job whose program runs
  // elsewhere) runs nothing: jaxlib passes empty lists, which may be null.
  if (args->num_args > 0 && args->argument_lists == nullptr && !devices.empty()) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `argument_lists` is null"));
  }
  // A program without results needs no room for them: jaxlib passes the
  // data() of empty vectors, which may be null at either level.
  const size_t num_outputs = loaded.program().result_shapes.size();
  if (args->output_lists == nullptr && num_outputs > 0 && !devices.empty()) {
    return MakeError(InvalidArgument(CurrentFunction(), ": `output_lists` is null; expected ",
                                     devices.size(), " preallocated output arrays"));
  }
  const PJRT_ExecuteOptions* options = args->options;
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::ExecuteOptions run_options, RunOptions(options));
  if (devices.size() == 1) return ExecuteOnOneDevice(args, executable, devices[0], run_options);
  // Check every argument before running anything.
  std::vector<std::vector<runtime::Buffer*>> arguments(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) {
    KILN_CAPI_RETURN_IF_ERROR(UnwrapArguments(args, d, num_outputs, arguments[d]));
  }
  KILN_CAPI_ASSIGN_OR_RETURN(
      std::vector<runtime::LoadedExecutable::Run> runs,
      loaded.ExecuteLaunch(arguments, devices, run_options));
  for (size_t d = 0; d < devices.size(); ++d) ReturnRun(args, executable->client, d, runs[d]);
  return nullptr;
}

}  // namespace kiln::capi
