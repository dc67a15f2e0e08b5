#include "runtime/device.h"

namespace kiln::runtime {

DeviceDescription MakeDeviceDescription(int id, std::string_view kind) {
  DeviceDescription description;
  description.id = id;
  description.process_index = 0;
  description.kind = std::string(kind);
  description.debug_string = StrCat("kiln:", id);
  description.to_string = StrCat("KilnDevice(id=", id, ")");
  description.attributes = {
      {"backend", std::string("host")},
      {"coords", std::vector<int64_t>{id}},
  };
  return description;
}

Device::Device(Client* client, int id, std::string_view kind)
    : client_(client),
      description_(MakeDeviceDescription(id, kind)),
      queue_(StrCat("kiln-dev", id)) {}

MemorySpace* Device::FindMemorySpace(MemoryKind kind) const {
  for (MemorySpace* space : memory_spaces_) {
    if (space->kind() == kind) return space;
  }
  return nullptr;
}

}  // namespace kiln::runtime
