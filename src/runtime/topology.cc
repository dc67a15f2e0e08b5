#include "runtime/topology.h"

#include <algorithm>

#include "base/env.h"
#include "runtime/client.h"

namespace kiln::runtime {
namespace {

constexpr std::string_view kMagic = "kiln-topology/1;";

}  // namespace

Topology::Topology(int num_devices, std::string_view device_kind, int num_processes)
    : device_kind_(device_kind) {
  const int per_process = std::max(1, num_devices / std::max(1, num_processes));
  for (int id = 0; id < num_devices; ++id) {
    descriptions_.push_back(MakeDeviceDescription(id, device_kind, id / per_process));
  }
  attributes_ = {
      {"num_devices", int64_t{num_devices}},
      {"device_kind", std::string(device_kind)},
      {"num_processes", int64_t{num_processes}},
  };
  for (MemoryKind kind : kMemoryKinds) memory_kind_ids_.push_back(static_cast<int>(kind));
}

StatusOr<Shape> Topology::CanonicalShape(int kind_id, Shape shape) const {
  if (std::find(memory_kind_ids_.begin(), memory_kind_ids_.end(), kind_id) ==
      memory_kind_ids_.end()) {
    std::string known;
    for (MemoryKind kind : kMemoryKinds) {
      known += StrCat(known.empty() ? "" : ", ", static_cast<int>(kind), " (", MemoryKindName(kind),
                      ")");
    }
    return InvalidArgument("memory space kind id ", kind_id,
                           " is not one of this topology's: ", known);
  }
  KILN_RETURN_IF_ERROR(ValidateDims(shape.dims,
                                    GetElementTypeInfo(shape.element_type).storage_bytes,
                                    "canonical shape"));
  return shape;
}

// Format: "kiln-topology/1;devices=<n>;kind=<kind>".
std::string Topology::Serialize() const {
  return StrCat(kMagic, "devices=", num_devices(), ";kind=", device_kind_);
}

StatusOr<Topology> Topology::Deserialize(std::string_view bytes) {
  if (bytes.substr(0, kMagic.size()) != kMagic) {
    return InvalidArgument("not a serialized Kiln topology: expected it to start with \"", kMagic,
                           "\" (", bytes.size(), " bytes given)");
  }
  std::string_view rest = bytes.substr(kMagic.size());
  constexpr std::string_view kDevices = "devices=";
  size_t separator = rest.find(";kind=");
  if (rest.substr(0, kDevices.size()) != kDevices || separator == std::string_view::npos) {
    return InvalidArgument("malformed Kiln topology: expected \"devices=<n>;kind=<kind>\" after \"",
                           kMagic, "\"");
  }
  KILN_ASSIGN_OR_RETURN(int64_t devices,
                        ParseInt64(rest.substr(kDevices.size(), separator - kDevices.size()),
                                   "serialized topology device count", 1, kMaxDevices));
  std::string_view kind = rest.substr(separator + 6);
  if (kind.empty()) return InvalidArgument("malformed Kiln topology: empty device kind");
  return Topology(static_cast<int>(devices), kind);
}

}  // namespace kiln::runtime
