// The interface a hardware backend fills. Kiln's runtime objects (client,
// devices, memory spaces, buffers) reach device memory only through it, so a
// new backend replaces this class and the kernels, and keeps everything else.
// docs/architecture.md, "Adding a backend", walks through it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/graph.h"
#include "runtime/attribute.h"

namespace kiln::runtime {

// The memory kinds every Kiln device exposes.
enum class MemoryKind : uint8_t {
  kDevice,        // the device's own memory; the default memory space
  kPinnedHost,    // host memory the device can reach; JAX's "pinned_host"
  kUnpinnedHost,  // ordinary host memory; JAX's "unpinned_host"
};
// Every kind, in the order each device lists its memory spaces.
inline constexpr MemoryKind kMemoryKinds[] = {MemoryKind::kDevice, MemoryKind::kPinnedHost,
                                              MemoryKind::kUnpinnedHost};

// A place in memory a backend allocated: the handle its Allocate returned
// (a host pointer for host memory, a cl_mem for OpenCL device memory), the
// memory's kind, and a byte offset into it. Only the backend reads a
// handle of memory that is not host-addressable.
struct DeviceAddress {
  void* handle = nullptr;
  MemoryKind kind = MemoryKind::kDevice;
  size_t offset = 0;
};

// The completion of work a backend left on a device's queue
// (DeviceBackend::Completion).
class QueueEvent {
 public:
  virtual ~QueueEvent() = default;
  // Calls `done` once, with the work's status, when it has completed: on
  // any thread, or at once if it has. `done` may run Kiln's continuations
  // (which enqueue device work and copies): a backend whose driver calls
  // back on a thread that must not do so hands `done` to a thread of its own.
  virtual void OnDone(std::function<void(Status)> done) = 0;
  // Blocks until the work has completed; its status. For a caller that
  // waits anyway (a small program run on the caller's thread), which a
  // driver's own wait serves sooner than a callback. Not after OnDone.
  virtual Status Wait() = 0;
};

// Code a backend compiled for a segment of a plan (compiler/split.h): a run
// of nodes it supports, as a graph of their own.
class DeviceExecutable {
 public:
  virtual ~DeviceExecutable() = default;
  // Runs on device `ordinal`: `parameters[i]` holds the segment graph's
  // parameter i and `results[i]` receives its result i (dense, row-major),
  // all in the device's memory (kDevice). Returns once the results are
  // written, or queued on the device's queue ahead of any later copy.
  // A result's memory is never a parameter's.
  virtual Status Run(int ordinal, std::span<const DeviceAddress> parameters,
                     std::span<const DeviceAddress> results) = 0;
};

class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;

  // The backend's name as KILN_BACKEND and device attributes give it: "host".
  virtual std::string_view Name() const = 0;
  // The PJRT device kind string, e.g. "kiln-cpu".
  virtual std::string_view DeviceKind() const = 0;
  // Attributes every device of this backend reports besides Kiln's own
  // (PJRT_DeviceDescription_Attributes): the hardware's name, vendor, ...
  virtual std::vector<Attribute> DeviceAttributes() const { return {}; }
  // True when memory of `kind` is ordinary host memory: the runtime and the
  // host kernels read and write it through its handle, and for kDevice the
  // framework may read it in place (PJRT_Buffer_IsOnCpu) and Kiln may alias
  // host buffers with it. Otherwise programs run on staged host copies.
  virtual bool IsHostAddressable(MemoryKind kind) const = 0;
  bool MemoryIsHostAddressable() const { return IsHostAddressable(MemoryKind::kDevice); }
  // Bytes a device may allocate in total, reported in memory stats.
  virtual int64_t MemoryLimitBytes() const = 0;

  // Allocates `bytes` (> 0) of `kind` memory for device `ordinal`, aligned to
  // at least 64 bytes. RESOURCE_EXHAUSTED when it cannot.
  virtual StatusOr<void*> Allocate(MemoryKind kind, int ordinal, size_t bytes) = 0;
  virtual void Deallocate(MemoryKind kind, int ordinal, void* data, size_t bytes) = 0;

  // Dense byte copies between any kinds of memory, ordered after the work
  // queued on the device before them; they return once done. The runtime
  // makes them where it reads or reuses the memory next (a program the host
  // kernels run over staged copies, a copy PJRT wants done within the call).
  virtual Status CopyHostToDevice(DeviceAddress destination, const void* host_source,
                                  size_t bytes) = 0;
  virtual Status CopyDeviceToHost(void* host_destination, DeviceAddress source, size_t bytes) = 0;
  virtual Status CopyDeviceToDevice(DeviceAddress destination, DeviceAddress source,
                                    size_t bytes) = 0;
  // The same copies, left on device `ordinal`'s in-order queue (see
  // "Asynchronous queues" below): a backend may return once a copy is
  // enqueued. The runtime then keeps the host memory as it is, and the
  // device memory allocated, until a Completion(ordinal) asked after the
  // copy has called back, and fires the transfer's PJRT event from it.
  // The defaults run the copies above.
  virtual Status EnqueueHostToDevice(int ordinal, DeviceAddress destination,
                                     const void* host_source, size_t bytes) {
    (void)ordinal;
    return CopyHostToDevice(destination, host_source, bytes);
  }
  virtual Status EnqueueDeviceToHost(int ordinal, void* host_destination, DeviceAddress source,
                                     size_t bytes) {
    (void)ordinal;
    return CopyDeviceToHost(host_destination, source, bytes);
  }
  virtual Status EnqueueDeviceToDevice(int ordinal, DeviceAddress destination, DeviceAddress source,
                                       size_t bytes) {
    (void)ordinal;
    return CopyDeviceToDevice(destination, source, bytes);
  }

  // Compiling nodes into the backend's own code (docs/porting.md). A backend
  // that does not (the host backend: its memory is the host kernels') runs
  // every program on the host kernels, over staged copies when its memory
  // is not host-addressable. One that does is asked, at compile time, which
  // of a program's nodes it runs (Supports: the node's description in
  // compiler/graph.h, and its values' shapes in `graph`); the program is
  // then split into segments (compiler/split.h), each run of supported
  // nodes compiled by Compile and the rest run by the host kernels, with the
  // copies between them made explicit.
  virtual bool CompilesNodes() const { return false; }
  virtual bool Supports(const compiler::Graph& graph, const compiler::Node& node) const {
    (void)graph, (void)node;
    return false;
  }
  virtual StatusOr<std::unique_ptr<DeviceExecutable>> Compile(const compiler::Graph& segment) {
    (void)segment;
    return Unimplemented("backend ", Name(), " does not compile nodes");
  }

  // Asynchronous queues. A DeviceExecutable's Run may return once its work
  // is enqueued on device `ordinal`'s in-order queue (every later kernel
  // and copy of the device runs after it, and device memory freed
  // meanwhile is reused only by later work). After such a run the runtime
  // asks for the completion of everything enqueued so far and fires the
  // run's PJRT event when it comes, keeping the run's buffers until then;
  // the device's worker goes on to its next task meanwhile. Null: all of it
  // has completed (the default, for a backend whose Run returns when done).
  virtual StatusOr<std::shared_ptr<QueueEvent>> Completion(int ordinal) {
    (void)ordinal;
    return std::shared_ptr<QueueEvent>();
  }
  // Blocks until every completion handed out has called its `done`;
  // returns how many have in all. The client calls it while it shuts down.
  virtual uint64_t Synchronize() { return 0; }

  // Collectives between the backend's devices, in their memory. The runtime
  // meets the devices' runs, as it does for the host kernels, and moves the
  // data with the backend's copies (EnqueueDeviceToDevice, which reads any
  // of the client's devices' memory) and folds: an all_gather of
  // consecutive blocks, and an all_reduce whose body is one op Folds
  // accepts, then run in device memory between device segments, with no
  // copy to the host (Node::collective; the others run on the host). A
  // group with members in other processes meets on the host instead.
  // Folds: whether EnqueueFold takes `op` over `type`.
  virtual bool Folds(kernels::ReduceOp op, ElementType type) const {
    (void)op, (void)type;
    return false;
  }
  // destination[i] = op(destination[i], source[i]) for `count` elements of
  // `type`, as a reduction by `op` combines them (NaN propagates through
  // maximum and minimum); left on device `ordinal`'s queue like a copy.
  virtual Status EnqueueFold(int ordinal, kernels::ReduceOp op, ElementType type,
                             DeviceAddress destination, DeviceAddress source, int64_t count) {
    (void)ordinal, (void)op, (void)type, (void)destination, (void)source, (void)count;
    return Unimplemented("backend ", Name(), " has no folds in device memory");
  }
  // True when work queued for any device runs after everything queued
  // before it for every device (one in-order queue for them all, as the
  // OpenCL backend has). Otherwise a collective's member waits for its
  // queue's completion before its peers read its operands, and again
  // before they may reuse theirs.
  virtual bool OrdersAcrossDevices() const { return false; }
};

// The backend of Kiln's virtual devices: device memory is host memory.
std::shared_ptr<DeviceBackend> CreateHostBackend();

}  // namespace kiln::runtime
