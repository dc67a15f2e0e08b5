// A Kiln device: its description, its memory spaces and its work queue.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/async_tracking_event.h"
#include "runtime/attribute.h"
#include "runtime/execution_tracker.h"
#include "runtime/memory_space.h"
#include "runtime/work_queue.h"

namespace kiln::runtime {

class Client;

// What PJRT_DeviceDescription reports; available without a client (topologies).
struct DeviceDescription {
  int id = 0;
  int process_index = 0;
  std::string kind;
  std::string debug_string;
  std::string to_string;
  std::vector<Attribute> attributes;
};

// Device `id` of process `process_index`.
DeviceDescription MakeDeviceDescription(int id, std::string_view kind, int process_index = 0);

// Owned by the Client; lives as long as the client.
class Device {
 public:
  // A device of this process: addressable, with a work queue.
  Device(Client* client, int id, std::string_view kind, int process_index = 0,
         int local_hardware_id = -1);
  // A device of another process of the job: described, never addressed
  // (no memory spaces, no queue).
  static std::unique_ptr<Device> Remote(Client* client, int id, std::string_view kind,
                                        int process_index, int local_hardware_id);

  Client* client() const { return client_; }
  int id() const { return description_.id; }
  int local_hardware_id() const { return local_hardware_id_; }
  // The device's number with its backend (DeviceBackend's `ordinal`).
  int ordinal() const { return local_hardware_id_ > 0 ? local_hardware_id_ : 0; }
  bool addressable() const { return queue_.has_value(); }
  int process_index() const { return description_.process_index; }
  const DeviceDescription& description() const { return description_; }
  // Names the backend the device runs on (its "backend" attribute) and
  // appends the backend's own attributes; the client calls it once, before
  // the device is shared.
  void DescribeBackend(std::string_view backend, std::span<const Attribute> attributes);

  // The device's memory spaces, default first; set once by the client.
  const std::vector<MemorySpace*>& memory_spaces() const { return memory_spaces_; }
  MemorySpace* default_memory_space() const { return memory_spaces_.front(); }
  MemorySpace* FindMemorySpace(MemoryKind kind) const;
  void AddMemorySpace(MemorySpace* space) { memory_spaces_.push_back(space); }

  // Transfers (and later executions) for this device run here, in order.
  // Addressable devices only.
  WorkQueue& queue() { return *queue_; }

  // Unfinished runs by launch id (PJRT_Device_PoisonExecution).
  ExecutionTracker& executions() { return executions_; }
  // A tracking event listed in async_activities() while it lives
  // (PJRT_Device_CreateAsyncTrackingEvent).
  std::unique_ptr<AsyncTrackingEvent> CreateAsyncTrackingEvent(std::string description) {
    return std::make_unique<AsyncTrackingEvent>(activities_, std::move(description));
  }
  const AsyncActivities& async_activities() const { return *activities_; }

 private:
  Device(Client* client, DeviceDescription description, int local_hardware_id, bool addressable);

  Client* client_;
  DeviceDescription description_;
  int local_hardware_id_;
  std::vector<MemorySpace*> memory_spaces_;
  ExecutionTracker executions_;
  std::shared_ptr<AsyncActivities> activities_ = std::make_shared<AsyncActivities>();
  std::optional<WorkQueue> queue_;
};

}  // namespace kiln::runtime
