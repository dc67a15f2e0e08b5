// PJRT_TopologyDescription_*.
#include "capi/call.h"
#include "capi/convert.h"
#include "capi/functions.h"
#include "capi/handles.h"
#include "frontend/hlo/shape_proto.h"
#include "version.h"

namespace kiln::capi {
namespace {

// Backs the bytes of PJRT_TopologyDescription_Serialize until its deleter runs.
struct SerializedTopology {
  std::string bytes;
};

void DeleteSerialized(PJRT_SerializedTopology* serialized) {
  delete reinterpret_cast<SerializedTopology*>(serialized);
}

std::string TopologyPlatformVersion() { return StrCat("kiln ", kKilnVersion); }

PJRT_TopologyDescription* NewOwnedTopology(runtime::Topology topology) {
  auto owned = std::make_unique<runtime::Topology>(std::move(topology));
  const runtime::Topology* pointer = owned.get();
  return MakeTopologyHandle(pointer, std::move(owned), TopologyPlatformVersion()).release();
}

}  // namespace

PJRT_Error* Impl::PJRT_TopologyDescription_Create(PJRT_TopologyDescription_Create_Args* args) {
  KILN_ARGS(topology);
  KILN_CAPI_ASSIGN_OR_RETURN(auto options,
                             FromNamedValues(args->create_options, args->num_options));
  KILN_CAPI_ASSIGN_OR_RETURN(auto client_options, runtime::ClientOptions::FromAttributes(options));
  auto backend = runtime::CreateHostBackend();
  args->topology = NewOwnedTopology(runtime::Topology(client_options.num_devices,
                                                      backend->DeviceKind()));
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_Destroy(PJRT_TopologyDescription_Destroy_Args* args) {
  KILN_ARGS(topology);
  if (args->topology == nullptr) return nullptr;  // the header allows null
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  if (topology->owned == nullptr) {
    return MakeError(InvalidArgument(
        "PJRT_TopologyDescription_Destroy: this topology belongs to its client (it came from "
        "PJRT_Client_TopologyDescription) and is freed with the client"));
  }
  for (auto& description : topology->descriptions) UnregisterHandle(description.get());
  DestroyHandle(topology);
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_PlatformName(
    PJRT_TopologyDescription_PlatformName_Args* args) {
  KILN_ARGS(platform_name_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  (void)topology;
  std::string_view name = runtime::Client::platform_name();
  args->platform_name = name.data();
  args->platform_name_size = name.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_PlatformVersion(
    PJRT_TopologyDescription_PlatformVersion_Args* args) {
  KILN_ARGS(platform_version_size);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  args->platform_version = topology->platform_version.c_str();
  args->platform_version_size = topology->platform_version.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_GetDeviceDescriptions(
    PJRT_TopologyDescription_GetDeviceDescriptions_Args* args) {
  KILN_ARGS(num_descriptions);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  args->descriptions = topology->description_list.data();
  args->num_descriptions = topology->description_list.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_Serialize(
    PJRT_TopologyDescription_Serialize_Args* args) {
  KILN_ARGS(serialized_topology_deleter);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  auto* serialized = new SerializedTopology{topology->topology->Serialize()};
  args->serialized_bytes = serialized->bytes.data();
  args->serialized_bytes_size = serialized->bytes.size();
  args->serialized_topology = reinterpret_cast<PJRT_SerializedTopology*>(serialized);
  args->serialized_topology_deleter = &DeleteSerialized;
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_Deserialize(
    PJRT_TopologyDescription_Deserialize_Args* args) {
  KILN_ARGS(topology);
  if (args->serialized_topology == nullptr && args->serialized_topology_size > 0) {
    return MakeError(InvalidArgument("PJRT_TopologyDescription_Deserialize: serialized_topology "
                                     "is null"));
  }
  std::string_view bytes(args->serialized_topology == nullptr ? "" : args->serialized_topology,
                         args->serialized_topology_size);
  KILN_CAPI_ASSIGN_OR_RETURN(runtime::Topology topology, runtime::Topology::Deserialize(bytes));
  args->topology = NewOwnedTopology(std::move(topology));
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_Attributes(
    PJRT_TopologyDescription_Attributes_Args* args) {
  KILN_ARGS(num_attributes);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  args->attributes = topology->attributes.values.data();
  args->num_attributes = topology->attributes.values.size();
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_Fingerprint(
    PJRT_TopologyDescription_Fingerprint_Args* args) {
  KILN_ARGS(fingerprint);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  // FNV-1a of the serialized form: stable across processes and builds.
  uint64_t hash = 1469598103934665603ull;
  for (unsigned char byte : topology->topology->Serialize()) {
    hash = (hash ^ byte) * 1099511628211ull;
  }
  args->fingerprint = hash;
  return nullptr;
}

PJRT_Error* Impl::PJRT_TopologyDescription_GetMemorySpaceKindIds(
    PJRT_TopologyDescription_GetMemorySpaceKindIds_Args* args) {
  KILN_ARGS(num_memory_space_kind_ids);
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  const std::vector<int>& ids = topology->topology->memory_kind_ids();
  args->memory_space_kind_ids = ids.data();
  args->num_memory_space_kind_ids = ids.size();
  return nullptr;
}

// The ShapeProto bytes are the caller's, freed with the deleter handed out.
PJRT_Error* Impl::PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace(
    PJRT_TopologyDescription_MakeCanonicalShapeForMemorySpace_Args* args) {
  KILN_ARGS(serialized_shape_deleter);
  args->serialized_shape = nullptr;
  args->serialized_shape_size = 0;
  args->serialized_shape_deleter = nullptr;
  KILN_CAPI_ASSIGN_OR_RETURN(PJRT_TopologyDescription* topology, UnwrapTopology(args->topology));
  KILN_CAPI_ASSIGN_OR_RETURN(Shape shape,
                             MakeShape(args->element_type, args->dims, args->num_dims));
  KILN_CAPI_RETURN_IF_ERROR(CheckDeviceLayout(args->layout, shape));
  KILN_CAPI_ASSIGN_OR_RETURN(Shape canonical, InFunction(topology->topology->CanonicalShape(
                                                  args->memory_space_kind_id, std::move(shape))));
  std::vector<uint8_t> bytes = frontend::hlo::SerializeArrayShape(canonical);
  char* copy = new char[bytes.size()];
  std::copy(bytes.begin(), bytes.end(), copy);
  args->serialized_shape = copy;
  args->serialized_shape_size = bytes.size();
  args->serialized_shape_deleter = [](const char* serialized) { delete[] serialized; };
  return nullptr;
}

}  // namespace kiln::capi
