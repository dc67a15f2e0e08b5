#include "runtime/device_plan.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace kiln::runtime {

StatusOr<std::shared_ptr<const DevicePlan>> DevicePlan::Build(const compiler::Program& program,
                                                              DeviceBackend& backend) {
  if (!backend.CompilesNodes() || !program.unfused_graph) {
    return std::shared_ptr<const DevicePlan>();
  }
  // Collectives and other nodes with side effects run in host segments, in
  // program order, with the run's environment (its launch's meeting place,
  // host transfers, feeds): their operands cross to the host and back.
  const compiler::Graph& graph = *program.unfused_graph;
  bool any = false;
  for (const compiler::Node& node : graph.nodes) {
    any = any || (!node.has_side_effects && backend.Supports(graph, node));
  }
  if (!any) return std::shared_ptr<const DevicePlan>();
  auto plan = std::make_shared<DevicePlan>();
  plan->graph_ = program.unfused_graph;
  plan->split_ = compiler::SplitGraph(graph, [&](const compiler::Node& node) {
    return !node.has_side_effects && backend.Supports(graph, node);
  });
  for (compiler::Segment& segment : plan->split_.segments) {
    if (segment.on_device) {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceExecutable> code,
                            backend.Compile(*segment.graph));
      plan->executables_.push_back(std::move(code));
      continue;
    }
    compiler::FuseElementwise(*segment.graph);
    compiler::PlanBuffers(*segment.graph, /*intermediates_in_results=*/true);
    plan->executables_.push_back(nullptr);
  }
  return std::shared_ptr<const DevicePlan>(std::move(plan));
}

namespace {

// Where one value of the split graph is during a run: its device memory
// and its host copy, each present or not, and what the run allocated.
struct Slot {
  DeviceAddress device;
  bool on_device = false;
  bool owns_device = false;
  void* host = nullptr;
  size_t device_bytes = 0;
};

struct FreeAligned {
  void operator()(unsigned char* block) const { ::operator delete[](block, std::align_val_t(64)); }
};

// The memory one run allocates, given back when the run ends.
class RunMemory {
 public:
  RunMemory(DeviceBackend& backend, int ordinal) : backend_(backend), ordinal_(ordinal) {}
  ~RunMemory() {
    for (const auto& [handle, bytes] : device_) {
      backend_.Deallocate(MemoryKind::kDevice, ordinal_, handle, bytes);
    }
  }
  RunMemory(const RunMemory&) = delete;
  RunMemory& operator=(const RunMemory&) = delete;

  StatusOr<DeviceAddress> Device(size_t bytes) {
    bytes = std::max<size_t>(bytes, 64);
    KILN_ASSIGN_OR_RETURN(void* handle, backend_.Allocate(MemoryKind::kDevice, ordinal_, bytes));
    device_.emplace_back(handle, bytes);
    return DeviceAddress{handle, MemoryKind::kDevice, 0};
  }
  void* Host(size_t bytes) {
    host_.emplace_back(new (std::align_val_t(64)) unsigned char[std::max<size_t>(bytes, 64)]);
    return host_.back().get();
  }

 private:
  DeviceBackend& backend_;
  int ordinal_;
  std::vector<std::pair<void*, size_t>> device_;
  std::vector<std::unique_ptr<unsigned char[], FreeAligned>> host_;
};

}  // namespace

Status DevicePlan::Run(DeviceBackend& backend, int ordinal,
                       std::span<const DeviceAddress> parameters,
                       std::span<const DeviceAddress> results, compiler::ExecutionEnv& env) const {
  const compiler::Graph& graph = *graph_;
  if (parameters.size() != graph.parameters.size() || results.size() != graph.results.size()) {
    return Internal("a split plan of ", graph.parameters.size(), " parameters and ",
                    graph.results.size(), " results run with ", parameters.size(), " and ",
                    results.size());
  }
  RunMemory memory(backend, ordinal);
  std::vector<Slot> slots(graph.values.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    Slot& slot = slots[static_cast<size_t>(graph.parameters[i])];
    slot.device = parameters[i];
    slot.on_device = true;
  }
  // A result a device segment computes goes straight into the caller's
  // memory, unless that memory is also a parameter's (read until later).
  std::vector<int64_t> direct(graph.values.size(), -1);
  for (size_t r = 0; r < results.size(); ++r) {
    const compiler::ValueId value = graph.results[r];
    const bool shared = std::any_of(parameters.begin(), parameters.end(),
                                    [&](const DeviceAddress& p) {
                                      return p.handle == results[r].handle;
                                    });
    const bool repeated = std::count(graph.results.begin(), graph.results.end(), value) > 1;
    if (!shared && !repeated) direct[static_cast<size_t>(value)] = static_cast<int64_t>(r);
  }
  auto cross = [&](const compiler::Crossing& crossing) -> Status {
    Slot& slot = slots[static_cast<size_t>(crossing.value)];
    const compiler::ValueInfo& info = graph.values[static_cast<size_t>(crossing.value)];
    if (crossing.to_device) {
      if (const int64_t r = direct[static_cast<size_t>(crossing.value)]; r >= 0) {
        slot.device = results[static_cast<size_t>(r)];
      } else {
        KILN_ASSIGN_OR_RETURN(slot.device, memory.Device(info.bytes));
      }
      slot.on_device = true;
      const void* source = info.constant ? info.constant->data() : slot.host;
      if (info.bytes == 0) return Status::Ok();
      return backend.CopyHostToDevice(slot.device, source, info.bytes);
    }
    slot.host = memory.Host(info.bytes);
    if (info.bytes == 0) return Status::Ok();
    return backend.CopyDeviceToHost(slot.host, slot.device, info.bytes);
  };
  size_t next_crossing = 0;
  auto cross_before = [&](size_t s) -> Status {
    while (next_crossing < split_.crossings.size() && split_.crossings[next_crossing].before == s) {
      KILN_RETURN_IF_ERROR(cross(split_.crossings[next_crossing++]));
    }
    return Status::Ok();
  };
  std::vector<DeviceAddress> device_in, device_out;
  std::vector<const void*> host_in;
  std::vector<void*> host_out;
  for (size_t s = 0; s < split_.segments.size(); ++s) {
    KILN_RETURN_IF_ERROR(cross_before(s));
    const compiler::Segment& segment = split_.segments[s];
    if (segment.on_device) {
      device_in.clear();
      device_out.clear();
      for (compiler::ValueId in : segment.inputs)
        device_in.push_back(slots[static_cast<size_t>(in)].device);
      for (compiler::ValueId out : segment.outputs) {
        Slot& slot = slots[static_cast<size_t>(out)];
        if (const int64_t r = direct[static_cast<size_t>(out)]; r >= 0) {
          slot.device = results[static_cast<size_t>(r)];
        } else {
          KILN_ASSIGN_OR_RETURN(slot.device,
                                memory.Device(graph.values[static_cast<size_t>(out)].bytes));
        }
        slot.on_device = true;
        device_out.push_back(slot.device);
      }
      KILN_RETURN_IF_ERROR(executables_[s]->Run(ordinal, device_in, device_out));
      continue;
    }
    host_in.clear();
    host_out.clear();
    for (compiler::ValueId in : segment.inputs)
      host_in.push_back(slots[static_cast<size_t>(in)].host);
    for (compiler::ValueId out : segment.outputs) {
      Slot& slot = slots[static_cast<size_t>(out)];
      slot.host = memory.Host(graph.values[static_cast<size_t>(out)].bytes);
      host_out.push_back(slot.host);
    }
    KILN_RETURN_IF_ERROR(compiler::Execute(*segment.graph, host_in, host_out, env));
  }
  KILN_RETURN_IF_ERROR(cross_before(split_.segments.size()));
  for (size_t r = 0; r < results.size(); ++r) {
    const Slot& slot = slots[static_cast<size_t>(graph.results[r])];
    const size_t bytes = graph.values[static_cast<size_t>(graph.results[r])].bytes;
    if (bytes == 0 ||
        (slot.device.handle == results[r].handle && slot.device.offset == results[r].offset)) {
      continue;
    }
    KILN_RETURN_IF_ERROR(backend.CopyDeviceToDevice(results[r], slot.device, bytes));
  }
  return Status::Ok();
}

}  // namespace kiln::runtime
