// The devices a client (or a compile-only topology) has: the runtime form of
// PJRT_TopologyDescription.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/attribute.h"
#include "runtime/device.h"

namespace kiln::runtime {

class Topology {
 public:
  // `num_devices` virtual devices of `device_kind` in one process.
  Topology(int num_devices, std::string_view device_kind);

  // Reads what Serialize wrote; INVALID_ARGUMENT for anything else.
  static StatusOr<Topology> Deserialize(std::string_view bytes);
  std::string Serialize() const;

  int num_devices() const { return static_cast<int>(descriptions_.size()); }
  const std::string& device_kind() const { return device_kind_; }
  const std::vector<DeviceDescription>& descriptions() const { return descriptions_; }
  const std::vector<Attribute>& attributes() const { return attributes_; }

 private:
  std::string device_kind_;
  std::vector<DeviceDescription> descriptions_;
  std::vector<Attribute> attributes_;
};

}  // namespace kiln::runtime
