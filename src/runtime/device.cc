#include "runtime/device.h"

namespace kiln::runtime {

DeviceDescription MakeDeviceDescription(int id, std::string_view kind, int process_index) {
  DeviceDescription description;
  description.id = id;
  description.process_index = process_index;
  description.kind = std::string(kind);
  description.debug_string = StrCat("kiln:", id);
  description.to_string = StrCat("KilnDevice(id=", id, ")");
  description.attributes = {
      {"backend", std::string("host")},
      {"coords", std::vector<int64_t>{id}},
  };
  return description;
}

Device::Device(Client* client, DeviceDescription description, int local_hardware_id,
               bool addressable)
    : client_(client), description_(std::move(description)), local_hardware_id_(local_hardware_id) {
  if (addressable) queue_.emplace(StrCat("kiln-dev", description_.id));
}

Device::Device(Client* client, int id, std::string_view kind, int process_index,
               int local_hardware_id)
    : Device(client, MakeDeviceDescription(id, kind, process_index),
             local_hardware_id < 0 ? id : local_hardware_id, /*addressable=*/true) {}

std::unique_ptr<Device> Device::Remote(Client* client, int id, std::string_view kind,
                                       int process_index, int local_hardware_id) {
  return std::unique_ptr<Device>(new Device(client, MakeDeviceDescription(id, kind, process_index),
                                            local_hardware_id, /*addressable=*/false));
}

void Device::DescribeBackend(std::string_view backend, std::span<const Attribute> attributes) {
  for (Attribute& attribute : description_.attributes) {
    if (attribute.name == "backend") attribute.value = std::string(backend);
  }
  description_.attributes.insert(description_.attributes.end(), attributes.begin(),
                                 attributes.end());
}

MemorySpace* Device::FindMemorySpace(MemoryKind kind) const {
  for (MemorySpace* space : memory_spaces_) {
    if (space->kind() == kind) return space;
  }
  return nullptr;
}

}  // namespace kiln::runtime
