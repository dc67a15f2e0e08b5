// A memory space of one device: its "device", "pinned_host" or "unpinned_host"
// memory (as XLA's CPU client has them).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/device_memory.h"

namespace kiln::runtime {

class Device;

// Owned by the Client; lives as long as the client.
class MemorySpace {
 public:
  MemorySpace(int id, MemoryKind kind, Device* device, std::shared_ptr<DeviceBackend> backend);

  int id() const { return id_; }
  MemoryKind kind() const { return kind_; }
  // "device", "pinned_host" or "unpinned_host": the strings JAX uses as memory kinds.
  std::string_view kind_name() const;
  // A small integer identifying the kind across the platform.
  int kind_id() const { return static_cast<int>(kind_); }
  // The device that addresses this memory space.
  Device* device() const { return device_; }
  const std::string& debug_string() const { return debug_string_; }
  const std::string& to_string() const { return to_string_; }
  const std::shared_ptr<MemoryCounters>& counters() const { return counters_; }
  const std::shared_ptr<DeviceBackend>& backend() const { return backend_; }

  StatusOr<std::shared_ptr<DeviceMemory>> Allocate(size_t bytes);

 private:
  int id_;
  MemoryKind kind_;
  Device* device_;
  std::shared_ptr<DeviceBackend> backend_;
  std::shared_ptr<MemoryCounters> counters_ = std::make_shared<MemoryCounters>();
  std::string debug_string_;
  std::string to_string_;
};

std::string_view MemoryKindName(MemoryKind kind);
// The kind JAX names `name` ("device", "pinned_host", "unpinned_host").
std::optional<MemoryKind> MemoryKindNamed(std::string_view name);

}  // namespace kiln::runtime
