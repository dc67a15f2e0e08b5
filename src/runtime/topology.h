// The devices a client (or a compile-only topology) has: the runtime form of
// PJRT_TopologyDescription.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/element_type.h"
#include "runtime/attribute.h"
#include "runtime/device.h"

namespace kiln::runtime {

class Topology {
 public:
  // `num_devices` virtual devices of `device_kind`, split evenly over
  // `num_processes` processes (device id order).
  Topology(int num_devices, std::string_view device_kind, int num_processes = 1);

  // Reads what Serialize wrote; INVALID_ARGUMENT for anything else.
  static StatusOr<Topology> Deserialize(std::string_view bytes);
  std::string Serialize() const;

  int num_devices() const { return static_cast<int>(descriptions_.size()); }
  const std::string& device_kind() const { return device_kind_; }
  const std::vector<DeviceDescription>& descriptions() const { return descriptions_; }
  const std::vector<Attribute>& attributes() const { return attributes_; }
  // The kind ids of every device's memory spaces (MemorySpace::kind_id),
  // in the order devices list them: device, pinned_host, unpinned_host.
  const std::vector<int>& memory_kind_ids() const { return memory_kind_ids_; }
  // The shape an array of `shape` has in memory of kind `kind_id`: Kiln
  // keeps every memory dense and row-major, so the shape itself.
  // INVALID_ARGUMENT for a kind id the topology lacks or invalid dims.
  StatusOr<Shape> CanonicalShape(int kind_id, Shape shape) const;

 private:
  std::string device_kind_;
  std::vector<DeviceDescription> descriptions_;
  std::vector<Attribute> attributes_;
  std::vector<int> memory_kind_ids_;
};

}  // namespace kiln::runtime
