#include "capi/handles.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "base/pointer_map.h"
#include "capi/convert.h"
#include "frontend/hlo/hlo_reader.h"
#include "frontend/proto/wire.h"

namespace kiln::capi {
namespace {

// The live handles, in stripes by address, each behind a spin lock: every
// C API call checks its handles here, and a jitted call of a small program
// makes about sixteen calls. One reader-writer lock over one map was a
// sixth of the plugin's time per call (pthread_rwlock on each check,
// measured on a 2-core Zen 5); a stripe's lock is one exchange and a store.
inline void Pause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

class Registry {
 public:
  template <typename Body>
  auto With(const void* handle, Body&& body) {
    Stripe& stripe = stripes_[(reinterpret_cast<uintptr_t>(handle) >> 4) % kStripes];
    while (stripe.busy.exchange(true, std::memory_order_acquire)) {
      while (stripe.busy.load(std::memory_order_relaxed)) Pause();
    }
    struct Unlock {
      std::atomic<bool>& busy;
      ~Unlock() { busy.store(false, std::memory_order_release); }
    } unlock{stripe.busy};
    return body(stripe.live);
  }

 private:
  static constexpr size_t kStripes = 64;
  struct alignas(64) Stripe {
    std::atomic<bool> busy{false};
    PointerMap<HandleKind> live;
  };
  std::array<Stripe, kStripes> stripes_;
};

Registry& GetRegistry() {
  // Leaked on purpose: handles may be released during static destruction.
  static auto* registry = new Registry;
  return *registry;
}

std::string_view KindName(HandleKind kind) {
  switch (kind) {
    case HandleKind::kClient: return "PJRT_Client";
    case HandleKind::kDevice: return "PJRT_Device";
    case HandleKind::kDeviceDescription: return "PJRT_DeviceDescription";
    case HandleKind::kMemory: return "PJRT_Memory";
    case HandleKind::kBuffer: return "PJRT_Buffer";
    case HandleKind::kEvent: return "PJRT_Event";
    case HandleKind::kTopology: return "PJRT_TopologyDescription";
    case HandleKind::kExecutable: return "PJRT_Executable";
    case HandleKind::kLoadedExecutable: return "PJRT_LoadedExecutable";
    case HandleKind::kLayout: return "PJRT_Layouts_MemoryLayout";
    case HandleKind::kTransferManager: return "PJRT_AsyncHostToDeviceTransferManager";
    case HandleKind::kExecuteContext: return "PJRT_ExecuteContext";
    case HandleKind::kAsyncTrackingEvent: return "PJRT_AsyncTrackingEvent";
    case HandleKind::kAliasCallback: return "PJRT_FulfillAliasBufferCallback";
    case HandleKind::kRawCopyCallback: return "PJRT_Buffer_CopyRawToHostFuture callback_data";
    case HandleKind::kDonationCallback:
      return "PJRT_Buffer_DonateWithControlDependency callback_data";
  }
  return "handle";
}

template <typename T>
StatusOr<T*> Unwrap(const void* handle, HandleKind kind, std::string_view what) {
  if (handle == nullptr) {
    return InvalidArgument(CurrentFunction(), ": `", what, "` is null; expected a live ",
                           KindName(kind));
  }
  if (!IsLiveHandle(handle, kind)) {
    return InvalidArgument(CurrentFunction(), ": `", what, "` (", handle, ") is not a live Kiln ",
                           KindName(kind),
                           ": it was destroyed, belongs to a destroyed client, or is not a ",
                           KindName(kind), " at all");
  }
  return static_cast<T*>(const_cast<void*>(handle));
}

}  // namespace

void RegisterHandle(const void* handle, HandleKind kind) {
  GetRegistry().With(handle, [&](PointerMap<HandleKind>& live) { live.Insert(handle, kind); });
}

void UnregisterHandle(const void* handle) {
  GetRegistry().With(handle, [&](PointerMap<HandleKind>& live) { live.Erase(handle); });
}

bool IsLiveHandle(const void* handle, HandleKind kind) {
  return GetRegistry().With(handle, [&](PointerMap<HandleKind>& live) {
    const HandleKind* found = live.Find(handle);
    return found != nullptr && *found == kind;
  });
}

bool TakeHandle(const void* handle, HandleKind kind) {
  return GetRegistry().With(handle, [&](PointerMap<HandleKind>& live) {
    const HandleKind* found = live.Find(handle);
    if (found == nullptr || *found != kind) return false;
    live.Erase(handle);
    return true;
  });
}

NamedValues ToNamedValues(std::vector<runtime::Attribute> attributes) {
  NamedValues result;
  result.storage = std::move(attributes);
  for (const runtime::Attribute& attribute : result.storage) {
    PJRT_NamedValue value{};
    value.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    value.name = attribute.name.c_str();
    value.name_size = attribute.name.size();
    if (const auto* text = std::get_if<std::string>(&attribute.value)) {
      value.type = PJRT_NamedValue_kString;
      value.string_value = text->c_str();
      value.value_size = text->size();
    } else if (const auto* number = std::get_if<int64_t>(&attribute.value)) {
      value.type = PJRT_NamedValue_kInt64;
      value.int64_value = *number;
      value.value_size = 1;
    } else if (const auto* list = std::get_if<std::vector<int64_t>>(&attribute.value)) {
      value.type = PJRT_NamedValue_kInt64List;
      value.int64_array_value = list->data();
      value.value_size = list->size();
    } else if (const auto* real = std::get_if<float>(&attribute.value)) {
      value.type = PJRT_NamedValue_kFloat;
      value.float_value = *real;
      value.value_size = 1;
    } else {
      value.type = PJRT_NamedValue_kBool;
      value.bool_value = std::get<bool>(attribute.value);
      value.value_size = 1;
    }
    result.values.push_back(value);
  }
  return result;
}

KilnMemory::~KilnMemory() {
  for (auto& [key, entry] : user_data) {
    if (entry.dtor != nullptr) entry.dtor(entry.data);
  }
}

std::unique_ptr<PJRT_TopologyDescription> MakeTopologyHandle(
    const runtime::Topology* topology, std::unique_ptr<runtime::Topology> owned,
    std::string platform_version) {
  auto handle = std::make_unique<PJRT_TopologyDescription>();
  handle->owned = std::move(owned);
  handle->topology = topology;
  handle->platform_version = std::move(platform_version);
  for (const runtime::DeviceDescription& description : topology->descriptions()) {
    auto entry = std::make_unique<PJRT_DeviceDescription>();
    entry->description = &description;
    entry->attributes = ToNamedValues(description.attributes);
    RegisterHandle(entry.get(), HandleKind::kDeviceDescription);
    handle->description_list.push_back(entry.get());
    handle->descriptions.push_back(std::move(entry));
  }
  handle->attributes = ToNamedValues(topology->attributes());
  RegisterHandle(handle.get(), HandleKind::kTopology);
  return handle;
}

namespace {

// kDescending[64 - rank, 64) is the row-major minor_to_major of that rank,
// shared by every buffer of rank up to 64.
constexpr size_t kSharedRanks = 64;
constexpr std::array<int64_t, kSharedRanks> kDescending = [] {
  std::array<int64_t, kSharedRanks> values{};
  for (size_t i = 0; i < kSharedRanks; ++i) values[i] = static_cast<int64_t>(kSharedRanks - 1 - i);
  return values;
}();

}  // namespace

PJRT_Buffer* NewBuffer(PJRT_Client* client, std::unique_ptr<runtime::Buffer> buffer) {
  auto* handle = new PJRT_Buffer{std::move(buffer), client, client->alive, {}};
  const size_t rank = handle->buffer->shape().dims.size();
  if (rank > kSharedRanks) {
    for (size_t i = 0; i < rank; ++i)
      handle->minor_to_major.push_back(static_cast<int64_t>(rank - 1 - i));
  }
  RegisterHandle(handle, HandleKind::kBuffer);
  return handle;
}

std::span<const int64_t> MinorToMajor(const PJRT_Buffer& buffer) {
  const size_t rank = buffer.buffer->shape().dims.size();
  if (rank > kSharedRanks) return buffer.minor_to_major;
  return std::span(kDescending).subspan(kSharedRanks - rank);
}

PJRT_Event* NewEvent(std::shared_ptr<runtime::Event> event) {
  auto* handle = new PJRT_Event{std::move(event)};
  RegisterHandle(handle, HandleKind::kEvent);
  return handle;
}

namespace {

// `sharding` as a serialized xla.OpSharding over the mesh's logical device
// ids: REPLICATED (an empty message) when whole, else OTHER with the tile
// assignment compiler::AssignTiles makes (partial sums as last_tile_dims
// UNREDUCED, devices sharing a tile as replicate_on_last_tile_dim, or
// last_tile_dims REPLICATED after an unreduced one).
std::string OpShardingBytes(const std::optional<compiler::TensorSharding>& sharding) {
  if (!sharding || sharding->IsReplicated()) return std::string();
  const compiler::TileAssignment assigned = compiler::AssignTiles(*sharding);
  frontend::proto::Writer writer;
  writer.Varint(1, 3);                        // type = OTHER
  writer.PackedVarints(3, assigned.tiles);    // tile_assignment_dimensions
  writer.PackedVarints(4, assigned.devices);  // tile_assignment_devices
  if (!assigned.partial) {
    if (assigned.replicated) writer.Varint(6, 1);  // replicate_on_last_tile_dim
  } else {
    std::vector<int64_t> last_tile_dims = {6};             // UNREDUCED
    if (assigned.replicated) last_tile_dims.push_back(0);  // REPLICATED
    writer.PackedVarints(8, last_tile_dims);
  }
  const auto& bytes = writer.bytes();
  return std::string(bytes.begin(), bytes.end());
}

void FillShardings(const std::vector<std::optional<compiler::TensorSharding>>& shardings,
                   size_t count, PJRT_Executable::Shardings& out) {
  for (size_t i = 0; i < count; ++i) {
    out.bytes.push_back(OpShardingBytes(i < shardings.size() ? shardings[i] : std::nullopt));
  }
  for (const std::string& bytes : out.bytes) {
    out.data.push_back(bytes.data());
    out.sizes.push_back(bytes.size());
  }
}

}  // namespace

std::string RowMajorLayoutText(size_t rank) {
  std::string text = "{";
  for (size_t i = rank; i-- > 0;) {
    text += std::to_string(i);
    if (i > 0) text += ',';
  }
  return text + "}";
}

PJRT_Layouts_MemoryLayout* NewRowMajorLayout(size_t rank) {
  auto* layout = new PJRT_Layouts_MemoryLayout{RowMajorLayoutText(rank), false};
  RegisterHandle(layout, HandleKind::kLayout);
  return layout;
}

PJRT_Executable* NewExecutable(std::shared_ptr<const compiler::Program> program) {
  auto* handle = new PJRT_Executable;
  auto add_layout = [handle](const Shape& shape) {
    handle->layout_storage.push_back(std::make_unique<PJRT_Layouts_MemoryLayout>(
        PJRT_Layouts_MemoryLayout{RowMajorLayoutText(shape.dims.size()), true}));
    RegisterHandle(handle->layout_storage.back().get(), HandleKind::kLayout);
    return handle->layout_storage.back().get();
  };
  for (const Shape& shape : program->parameter_shapes) {
    handle->parameter_layouts.push_back(add_layout(shape));
  }
  for (const Shape& shape : program->result_shapes) {
    handle->output_layouts.push_back(add_layout(shape));
  }
  FillShardings(program->parameter_shardings, program->parameter_shapes.size(),
                handle->parameter_shardings);
  FillShardings(program->result_shardings, program->result_shapes.size(), handle->output_shardings);
  if (program->partitioned && !program->hlo_with_config.empty() && program->listing.empty()) {
    // OptimizedProgram reports the listing; without one (a bug), the HLO
    // with the shardings PyTorch/XLA reads (its own when this fails).
    StatusOr<std::vector<uint8_t>> optimized = frontend::hlo::WithSpmdShardings(
        program->hlo_with_config, handle->parameter_shardings.bytes,
        handle->output_shardings.bytes);
    if (optimized.ok()) handle->optimized_hlo = std::move(optimized).value();
  }
  for (const Shape& shape : program->result_shapes) {
    handle->output_types.push_back(ToPjrtType(shape.element_type));
    handle->output_dims.insert(handle->output_dims.end(), shape.dims.begin(), shape.dims.end());
    handle->output_ranks.push_back(shape.dims.size());
  }
  // The kinds' strings live in the program, which the handle keeps.
  for (const std::string& kind : program->result_memory_kinds) {
    handle->output_memory_kinds.push_back(kind.c_str());
    handle->output_memory_kind_sizes.push_back(kind.size());
  }
  for (const std::string& kind : program->parameter_memory_kinds) {
    handle->parameter_memory_kinds.push_back(kind.c_str());
    handle->parameter_memory_kind_sizes.push_back(kind.size());
  }
  char fingerprint[17];
  std::snprintf(fingerprint, sizeof(fingerprint), "%016llx",
                static_cast<unsigned long long>(program->fingerprint));
  handle->fingerprint = fingerprint;
  // Named as XLA's cost analysis names them (JAX reads "flops").
  const std::pair<const char*, double> costs[] = {
      {"flops", program->cost.flops},
      {"transcendentals", program->cost.transcendentals},
      {"bytes accessed", program->cost.bytes_accessed},
  };
  for (const auto& [name, value] : costs) {
    PJRT_NamedValue property{};
    property.struct_size = PJRT_NamedValue_STRUCT_SIZE;
    property.name = name;
    property.name_size = std::strlen(name);
    property.type = PJRT_NamedValue_kFloat;
    property.float_value = static_cast<float>(value);
    property.value_size = 1;
    handle->cost_properties.push_back(property);
  }
  handle->program = std::move(program);
  RegisterHandle(handle, HandleKind::kExecutable);
  return handle;
}

PJRT_LoadedExecutable* NewLoadedExecutable(PJRT_Client* client,
                                           std::unique_ptr<runtime::LoadedExecutable> loaded) {
  auto* handle = new PJRT_LoadedExecutable;
  for (runtime::Device* device : loaded->addressable_devices()) {
    handle->addressable_devices.push_back(client->FindDevice(device));
  }
  const int partitions = loaded->num_partitions();
  for (size_t i = 0; i < handle->addressable_devices.size(); ++i) {
    const int index = static_cast<int>(i);
    handle->logical_ids.push_back({index / partitions, index % partitions});
  }
  handle->executable = std::move(loaded);
  handle->client = client;
  RegisterHandle(handle, HandleKind::kLoadedExecutable);
  return handle;
}

StatusOr<PJRT_Executable*> UnwrapExecutable(PJRT_Executable* handle, std::string_view what) {
  return Unwrap<PJRT_Executable>(handle, HandleKind::kExecutable, what);
}

StatusOr<PJRT_Layouts_MemoryLayout*> UnwrapLayout(PJRT_Layouts_MemoryLayout* handle,
                                                  std::string_view what) {
  return Unwrap<PJRT_Layouts_MemoryLayout>(handle, HandleKind::kLayout, what);
}

StatusOr<PJRT_LoadedExecutable*> UnwrapLoadedExecutable(PJRT_LoadedExecutable* handle,
                                                        std::string_view what) {
  return Unwrap<PJRT_LoadedExecutable>(handle, HandleKind::kLoadedExecutable, what);
}

StatusOr<PJRT_Client*> UnwrapClient(PJRT_Client* handle, std::string_view what) {
  return Unwrap<PJRT_Client>(handle, HandleKind::kClient, what);
}
StatusOr<PJRT_Device*> UnwrapDevice(PJRT_Device* handle, std::string_view what) {
  return Unwrap<PJRT_Device>(handle, HandleKind::kDevice, what);
}
StatusOr<PJRT_Device*> UnwrapAddressableDevice(PJRT_Device* handle, std::string_view what) {
  KILN_ASSIGN_OR_RETURN(PJRT_Device * device, UnwrapDevice(handle, what));
  if (!device->device->addressable()) {
    const runtime::Client& client = *device->client->client;
    return InvalidArgument(CurrentFunction(), ": `", what, "` is ",
                           device->device->description().debug_string, " of process ",
                           device->device->process_index(), "; process ", client.process_index(),
                           " addresses only its own devices");
  }
  return device;
}
StatusOr<KilnMemory*> UnwrapMemory(PJRT_Memory* handle, std::string_view what) {
  return Unwrap<KilnMemory>(static_cast<const void*>(handle), HandleKind::kMemory, what);
}
namespace {

// FAILED_PRECONDITION when the client `handle` belongs to is gone.
template <typename T>
StatusOr<T*> CheckClientAlive(T* handle, std::string_view what, std::string_view destroy) {
  if (handle->client_alive.expired()) {
    return FailedPrecondition(CurrentFunction(), ": `", what,
                              "` belongs to a client that has "
                              "been destroyed; only ",
                              destroy, " is allowed on it");
  }
  return handle;
}

}  // namespace

StatusOr<PJRT_Buffer*> UnwrapBuffer(PJRT_Buffer* handle, std::string_view what) {
  KILN_ASSIGN_OR_RETURN(auto* buffer, Unwrap<PJRT_Buffer>(handle, HandleKind::kBuffer, what));
  return CheckClientAlive(buffer, what, "PJRT_Buffer_Destroy");
}

StatusOr<PJRT_AsyncHostToDeviceTransferManager*> UnwrapTransferManager(
    PJRT_AsyncHostToDeviceTransferManager* handle) {
  KILN_ASSIGN_OR_RETURN(auto* manager, UnwrapTransferManagerForDestroy(handle));
  return CheckClientAlive(manager, "transfer_manager",
                          "PJRT_AsyncHostToDeviceTransferManager_Destroy");
}

StatusOr<PJRT_AsyncHostToDeviceTransferManager*> UnwrapTransferManagerForDestroy(
    PJRT_AsyncHostToDeviceTransferManager* handle) {
  return Unwrap<PJRT_AsyncHostToDeviceTransferManager>(handle, HandleKind::kTransferManager,
                                                       "transfer_manager");
}

StatusOr<PJRT_ExecuteContext*> UnwrapExecuteContext(PJRT_ExecuteContext* handle,
                                                    std::string_view what) {
  return Unwrap<PJRT_ExecuteContext>(handle, HandleKind::kExecuteContext, what);
}

StatusOr<PJRT_AsyncTrackingEvent*> UnwrapAsyncTrackingEvent(PJRT_AsyncTrackingEvent* handle) {
  return Unwrap<PJRT_AsyncTrackingEvent>(handle, HandleKind::kAsyncTrackingEvent, "event");
}

StatusOr<PJRT_FulfillAliasBufferCallback*> UnwrapAliasCallback(
    PJRT_FulfillAliasBufferCallback* handle) {
  return Unwrap<PJRT_FulfillAliasBufferCallback>(handle, HandleKind::kAliasCallback,
                                                 "fulfill_alias_buffer_cb");
}

StatusOr<PJRT_Buffer*> UnwrapBufferForDestroy(PJRT_Buffer* handle) {
  return Unwrap<PJRT_Buffer>(handle, HandleKind::kBuffer, "buffer");
}
StatusOr<PJRT_Event*> UnwrapEvent(PJRT_Event* handle, std::string_view what) {
  return Unwrap<PJRT_Event>(handle, HandleKind::kEvent, what);
}
StatusOr<PJRT_DeviceDescription*> UnwrapDescription(const PJRT_DeviceDescription* handle) {
  return Unwrap<PJRT_DeviceDescription>(handle, HandleKind::kDeviceDescription,
                                        "device_description");
}
StatusOr<PJRT_TopologyDescription*> UnwrapTopology(const PJRT_TopologyDescription* handle,
                                                   std::string_view what) {
  return Unwrap<PJRT_TopologyDescription>(handle, HandleKind::kTopology, what);
}

}  // namespace kiln::capi

PJRT_Executable::~PJRT_Executable() {
  for (const auto& layout : layout_storage) kiln::capi::UnregisterHandle(layout.get());
}
