#include "runtime/device_plan.h"

#include <algorithm>
#include <cstring>
#include <new>

namespace kiln::runtime {

namespace {

// Where `node` runs. Collectives the backend can run in its memory
// (DeviceBackend::Folds) are segments of their own; other nodes with side
// effects run in host segments, in program order, with the run's
// environment (its launch's meeting place, host transfers, feeds): their
// operands cross to the host and back.
compiler::Side SideOf(const DeviceBackend& backend, const compiler::Graph& graph,
                      const compiler::Node& node) {
  if (const compiler::DeviceCollective* collective = node.collective.get()) {
    bool device = true;
    for (compiler::ValueId in : node.inputs) {
      const compiler::ValueInfo& info = graph.values[static_cast<size_t>(in)];
      device = device && !info.constant &&
               (collective->kind == compiler::DeviceCollective::Kind::kAllGather ||
                backend.Folds(collective->op, info.shape.element_type));
    }
    if (device) return compiler::Side::kDeviceCollective;
  }
  if (!node.has_side_effects && backend.Supports(graph, node)) return compiler::Side::kDevice;
  return compiler::Side::kHost;
}

}  // namespace

StatusOr<std::shared_ptr<const DevicePlan>> DevicePlan::Build(const compiler::Program& program,
                                                              DeviceBackend& backend) {
  if (!backend.CompilesNodes() || !program.unfused_graph) {
    return std::shared_ptr<const DevicePlan>();
  }
  const compiler::Graph& graph = *program.unfused_graph;
  bool any = false;
  for (const compiler::Node& node : graph.nodes) {
    any = any || SideOf(backend, graph, node) != compiler::Side::kHost;
  }
  if (!any) return std::shared_ptr<const DevicePlan>();
  auto plan = std::make_shared<DevicePlan>();
  plan->graph_ = program.unfused_graph;
  plan->split_ = compiler::SplitGraph(graph, [&](const compiler::Node& node) {
    return SideOf(backend, graph, node);
  });
  for (compiler::Segment& segment : plan->split_.segments) {
    if (segment.on_device && !segment.collective) {
      KILN_ASSIGN_OR_RETURN(std::unique_ptr<DeviceExecutable> code,
                            backend.Compile(*segment.graph));
      plan->executables_.push_back(std::move(code));
      continue;
    }
    // Host segments, and collectives, which run on the host when their
    // group has members in other processes.
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

// From this size of a result on, an all_reduce's members each fold a
// slice of it, then copy each other's slices (two meetings), as the host
// kernels do: otherwise each of n members folds n - 1 whole operands.
constexpr size_t kSlicedReductionBytes = 128 << 10;

// Runs the one node of collective segment `segment` over device memory
// (`in` and `out` its parameters and results): the group's runs meet, and
// each writes its own results from every member's operands with the
// backend's copies and folds. False, having done nothing, when the group
// has members in other processes.
StatusOr<bool> RunCollective(DeviceBackend& backend, int ordinal, const compiler::Segment& segment,
                             std::span<const DeviceAddress> in, std::span<const DeviceAddress> out,
                             compiler::ExecutionEnv& env) {
  using Kind = compiler::DeviceCollective::Kind;
  const compiler::Graph& graph = *segment.graph;
  const compiler::Node& node = graph.nodes.front();
  const compiler::DeviceCollective& collective = *node.collective;
  KILN_ASSIGN_OR_RETURN(compiler::DeviceCollective::Membership membership,
                        collective.membership(env));
  const std::vector<int64_t>& group = membership.group;
  const size_t size = std::max<size_t>(group.size(), 1), count = node.inputs.size();
  const size_t rank = group.empty() ? 0 : membership.rank;
  if (size > 1 && env.collectives == nullptr) {
    return FailedPrecondition("the collective's group has ", size,
                              " processes but this run has no peers (it was not launched on "
                              "the program's devices together)");
  }
  if (size > 1 && !env.collectives->AllInProcess(group)) return false;
  // Per operand: its memory, its result's (unused: nothing reads it, on
  // any member), and their shapes.
  std::vector<DeviceAddress> addresses(2 * count);
  std::vector<bool> used(count, false);
  bool sliced = collective.kind == Kind::kAllReduce && size > 1;
  for (size_t k = 0; k < count; ++k) {
    const auto p = std::find(graph.parameters.begin(), graph.parameters.end(), node.inputs[k]);
    addresses[k] = in[static_cast<size_t>(p - graph.parameters.begin())];
    const auto r = std::find(graph.results.begin(), graph.results.end(), node.outputs[k]);
    if (r != graph.results.end()) {
      addresses[count + k] = out[static_cast<size_t>(r - graph.results.begin())];
      used[k] = true;
    }
    const size_t operand = graph.shape(node.inputs[k]).ByteSize();
    const Shape& result = graph.shape(node.outputs[k]);
    const size_t expected = collective.kind == Kind::kAllGather       ? operand * size
                            : collective.kind == Kind::kReduceScatter ? operand / size
                                                                      : operand;
    if (result.ByteSize() != expected ||
        (collective.kind == Kind::kReduceScatter && operand % size != 0)) {
      return InvalidArgument(node.op, ": result ", k, " is ", result.ToString(), " for ", size,
                             " processes' ", graph.shape(node.inputs[k]).ToString(), "; expected ",
                             expected, " bytes");
    }
    sliced = sliced && result.ByteSize() >= kSlicedReductionBytes;
  }
  // Member m's operand k and result k in a meeting's `all`.
  auto operand_of = [&](std::span<void* const> all, size_t m, size_t k) {
    return *static_cast<const DeviceAddress*>(all[m * 2 * count + k]);
  };
  auto result_of = [&](std::span<void* const> all, size_t m, size_t k) {
    return *static_cast<const DeviceAddress*>(all[m * 2 * count + count + k]);
  };
  auto at = [](DeviceAddress address, size_t offset) {
    address.offset += offset;
    return address;
  };
  // Writes `elements` elements at `destination`: the members' operands k
  // from byte `offset` on, folded in group order.
  auto fold = [&](std::span<void* const> all, size_t k, DeviceAddress destination, size_t offset,
                  int64_t elements) -> Status {
    const ElementType type = graph.shape(node.inputs[k]).element_type;
    const size_t bytes = static_cast<size_t>(elements) * GetElementTypeInfo(type).storage_bytes;
    if (bytes == 0) return Status::Ok();
    KILN_RETURN_IF_ERROR(backend.EnqueueDeviceToDevice(ordinal, destination,
                                                       at(operand_of(all, 0, k), offset), bytes));
    for (size_t m = 1; m < size; ++m) {
      KILN_RETURN_IF_ERROR(backend.EnqueueFold(ordinal, collective.op, type, destination,
                                               at(operand_of(all, m, k), offset), elements));
    }
    return Status::Ok();
  };
  // The elements [begin, end) of result k that member `member` folds when sliced.
  auto slice = [&](size_t k, size_t member) {
    const auto total = static_cast<size_t>(graph.shape(node.outputs[k]).NumElements());
    return std::pair<size_t, size_t>{total * member / size, total * (member + 1) / size};
  };
  // This member's results from every member's memory (`all`): the whole
  // collective, or, sliced, its own slices of the fold.
  auto write = [&](std::span<void* const> all) -> Status {
    for (size_t k = 0; k < count; ++k) {
      if (!used[k]) continue;
      const Shape& result = graph.shape(node.outputs[k]);
      const size_t element = GetElementTypeInfo(result.element_type).storage_bytes;
      const DeviceAddress mine = result_of(all, rank, k);
      switch (collective.kind) {
        case Kind::kAllGather: {
          const size_t bytes = graph.shape(node.inputs[k]).ByteSize();
          for (size_t m = 0; m < size && bytes > 0; ++m) {
            KILN_RETURN_IF_ERROR(backend.EnqueueDeviceToDevice(ordinal, at(mine, m * bytes),
                                                               operand_of(all, m, k), bytes));
          }
          break;
        }
        case Kind::kReduceScatter:
          KILN_RETURN_IF_ERROR(fold(all, k, mine, rank * result.ByteSize(), result.NumElements()));
          break;
        case Kind::kAllReduce:
          if (!sliced) {
            KILN_RETURN_IF_ERROR(fold(all, k, mine, 0, result.NumElements()));
            break;
          }
          const auto [begin, end] = slice(k, rank);
          KILN_RETURN_IF_ERROR(fold(all, k, at(mine, begin * element), begin * element,
                                    static_cast<int64_t>(end - begin)));
          break;
      }
    }
    return Status::Ok();
  };
  // Sliced: the slices the other members folded, from their results.
  auto copy_slices = [&](std::span<void* const> all) -> Status {
    for (size_t k = 0; k < count; ++k) {
      if (!used[k]) continue;
      const size_t element =
          GetElementTypeInfo(graph.shape(node.outputs[k]).element_type).storage_bytes;
      for (size_t m = 0; m < size; ++m) {
        const auto [begin, end] = slice(k, m);
        if (m == rank || end == begin) continue;
        KILN_RETURN_IF_ERROR(backend.EnqueueDeviceToDevice(
            ordinal, at(result_of(all, rank, k), begin * element),
            at(result_of(all, m, k), begin * element), (end - begin) * element));
      }
    }
    return Status::Ok();
  };
  std::vector<void*> mine(2 * count);
  for (size_t i = 0; i < mine.size(); ++i) mine[i] = &addresses[i];
  if (size == 1) {
    KILN_RETURN_IF_ERROR(write(mine));
    return true;
  }
  // Without one order across devices' queues, peers read this member's
  // memory only once it is written, and reuse theirs only once this member
  // has read it.
  const bool ordered = backend.OrdersAcrossDevices();
  auto drain = [&]() -> Status {
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<QueueEvent> pending, backend.Completion(ordinal));
    return pending ? pending->Wait() : Status::Ok();
  };
  if (!ordered) KILN_RETURN_IF_ERROR(drain());
  const std::vector<int64_t> bytes(mine.size(), static_cast<int64_t>(sizeof(DeviceAddress)));
  auto meet = [&](FunctionRef<Status(std::span<void* const>)> work) {
    return env.collectives->Meet(group, mine, bytes, [&](std::span<void* const> all) -> Status {
      KILN_RETURN_IF_ERROR(work(all));
      return ordered ? Status::Ok() : drain();
    });
  };
  KILN_RETURN_IF_ERROR(meet(write));
  if (sliced) KILN_RETURN_IF_ERROR(meet(copy_slices));
  return true;
}

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
      if (!segment.collective) {
        KILN_RETURN_IF_ERROR(executables_[s]->Run(ordinal, device_in, device_out));
        continue;
      }
      KILN_ASSIGN_OR_RETURN(bool ran,
                            RunCollective(backend, ordinal, segment, device_in, device_out, env));
      if (ran) continue;
      // Its group meets other processes: on the host, over copies.
      host_in.clear();
      host_out.clear();
      for (size_t i = 0; i < device_in.size(); ++i) {
        const size_t bytes = graph.values[static_cast<size_t>(segment.inputs[i])].bytes;
        void* host = memory.Host(bytes);
        KILN_RETURN_IF_ERROR(backend.CopyDeviceToHost(host, device_in[i], bytes));
        host_in.push_back(host);
      }
      for (compiler::ValueId out : segment.outputs) {
        host_out.push_back(memory.Host(graph.values[static_cast<size_t>(out)].bytes));
      }
      KILN_RETURN_IF_ERROR(compiler::Execute(*segment.graph, host_in, host_out, env));
      for (size_t o = 0; o < device_out.size(); ++o) {
        const size_t bytes = graph.values[static_cast<size_t>(segment.outputs[o])].bytes;
        KILN_RETURN_IF_ERROR(backend.CopyHostToDevice(device_out[o], host_out[o], bytes));
      }
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
