#include "backends/opencl/backend.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <string>

#include "backends/opencl/codegen.h"
#include "backends/opencl/completions.h"
#include "backends/opencl/driver.h"
#include "backends/opencl/executable.h"
#include "base/env.h"
#include "runtime/block_cache.h"

namespace kiln::backends::opencl {
namespace {

constexpr size_t kHostAlignment = 64;

class Backend final : public runtime::DeviceBackend {
 public:
  // `compiles`: nodes the generated kernels cover run in them; false
  // (KILN_OPENCL_KERNELS=0): every program runs on the host kernels over
  // staged copies.
  Backend(std::shared_ptr<Context> context, bool compiles)
      : context_(std::move(context)),
        compiles_(compiles),
        cache_(CacheOptions(context_->device()),
               [context = context_](void* block) { context->Free(static_cast<cl_mem>(block)); }),
        completions_(std::make_shared<Completions>(context_)) {
    const DeviceInfo& device = context_->device();
    target_.doubles = device.doubles;
    target_.max_work_group_size = device.max_work_group_size;
    target_.compute_units = device.compute_units;
    // KILN_OPENCL_KERNEL_SHAPES=gpu|cpu: the kernels shaped for the other
    // class of device, so CI's PoCL also runs the GPU forms.
    const std::string shapes = GetEnv("KILN_OPENCL_KERNEL_SHAPES").value_or("");
    target_.gpu = shapes.empty() ? device.gpu : shapes == "gpu";
  }

  std::string_view Name() const override { return "opencl"; }
  std::string_view DeviceKind() const override { return context_->device().name; }
  std::vector<runtime::Attribute> DeviceAttributes() const override {
    const DeviceInfo& device = context_->device();
    return {
        {"opencl_platform", device.platform},
        {"opencl_device", device.name},
        {"opencl_vendor", device.vendor},
        {"opencl_version", device.version},
        {"opencl_compute_units", int64_t{device.compute_units}},
        {"opencl_global_memory_bytes", device.global_memory_bytes},
        // jaxlib takes no bool attribute of a device (pjrt_c_api_client.cc
        // aborts on one): 1 or 0.
        {"opencl_kernels", int64_t{compiles_ ? 1 : 0}},
    };
  }
  // Pinned and unpinned host memory are host memory; the device's own is not.
  bool IsHostAddressable(runtime::MemoryKind kind) const override {
    return kind != runtime::MemoryKind::kDevice;
  }
  int64_t MemoryLimitBytes() const override { return context_->device().global_memory_bytes; }

  StatusOr<void*> Allocate(runtime::MemoryKind kind, int, size_t bytes) override {
    if (kind == runtime::MemoryKind::kDevice) {
      if (void* cached = cache_.Take(bytes)) return cached;
      StatusOr<cl_mem> buffer = context_->Allocate(bytes);
      // Out of device memory: give back what the cache holds, and retry.
      if (!buffer.ok() && cache_.Clear() > 0) buffer = context_->Allocate(bytes);
      if (!buffer.ok()) return buffer.status();
      return static_cast<void*>(*buffer);
    }
    const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
    void* data = std::aligned_alloc(kHostAlignment, rounded);
    if (data == nullptr) {
      return ResourceExhausted("out of host memory: could not allocate ", bytes, " bytes");
    }
    return data;
  }
  void Deallocate(runtime::MemoryKind kind, int, void* data, size_t bytes) override {
    if (kind == runtime::MemoryKind::kDevice) {
      cache_.Give(data, bytes);
    } else {
      std::free(data);
    }
  }

  Status CopyHostToDevice(runtime::DeviceAddress destination, const void* host_source,
                          size_t bytes) override {
    return ToDevice(destination, host_source, bytes, /*wait=*/true);
  }
  Status CopyDeviceToHost(void* host_destination, runtime::DeviceAddress source,
                          size_t bytes) override {
    return ToHost(host_destination, source, bytes, /*wait=*/true);
  }
  Status CopyDeviceToDevice(runtime::DeviceAddress destination, runtime::DeviceAddress source,
                            size_t bytes) override {
    return Between(destination, source, bytes, /*wait=*/true);
  }
  // Left on the queue, whose completion (a marker's callback) fires the
  // transfer's event: the device's worker does not wait for the copy.
  Status EnqueueHostToDevice(int, runtime::DeviceAddress destination, const void* host_source,
                             size_t bytes) override {
    return ToDevice(destination, host_source, bytes, /*wait=*/false);
  }
  Status EnqueueDeviceToHost(int, void* host_destination, runtime::DeviceAddress source,
                             size_t bytes) override {
    return ToHost(host_destination, source, bytes, /*wait=*/false);
  }
  Status EnqueueDeviceToDevice(int, runtime::DeviceAddress destination,
                               runtime::DeviceAddress source, size_t bytes) override {
    return Between(destination, source, bytes, /*wait=*/false);
  }

  bool CompilesNodes() const override { return compiles_; }
  bool Supports(const compiler::Graph& graph, const compiler::Node& node) const override {
    return compiles_ && Generates(graph, node, target_);
  }
  StatusOr<std::unique_ptr<runtime::DeviceExecutable>> Compile(
      const compiler::Graph& segment) override {
    return CompileSegment(context_, segment, target_);
  }

  // Every virtual device is the one OpenCL device: one in-order queue.
  StatusOr<std::shared_ptr<runtime::QueueEvent>> Completion(int) override {
    return completions_->Mark();
  }
  uint64_t Synchronize() override { return completions_->Synchronize(); }

  // Collectives: every virtual device's work goes through the one queue, so
  // a member's copies and folds of its peers' operands run after the
  // kernels that wrote them, and before any later work reuses them.
  bool OrdersAcrossDevices() const override { return true; }
  bool Folds(kernels::ReduceOp op, ElementType type) const override {
    return compiles_ && FoldSource(op, type, target_).has_value();
  }
  Status EnqueueFold(int, kernels::ReduceOp op, ElementType type,
                     runtime::DeviceAddress destination, runtime::DeviceAddress source,
                     int64_t count) override {
    if (count <= 0) return Status::Ok();
    std::lock_guard lock(folds_mutex_);
    std::unique_ptr<Kernel>& kernel = folds_[{op, type}];
    if (kernel == nullptr) {
      std::optional<std::string> text = FoldSource(op, type, target_);
      if (!text) {
        return Unimplemented("OpenCL: no fold of ", GetElementTypeInfo(type).name, " by op ",
                             static_cast<int>(op), " on this device");
      }
      KILN_ASSIGN_OR_RETURN(kernel, context_->Build(*text, "fold", kBuildOptions));
    }
    const cl_mem buffers[] = {Buffer(destination), Buffer(source)};
    const cl_ulong offsets[] = {destination.offset, source.offset};
    const auto elements = static_cast<cl_ulong>(count);
    for (unsigned j = 0; j < 2; ++j) {
      KILN_RETURN_IF_ERROR(kernel->SetArgument(2 * j, sizeof(cl_mem), &buffers[j]));
      KILN_RETURN_IF_ERROR(kernel->SetArgument(2 * j + 1, sizeof(cl_ulong), &offsets[j]));
    }
    KILN_RETURN_IF_ERROR(kernel->SetArgument(4, sizeof(cl_ulong), &elements));
    constexpr size_t kGroup = 64;
    const size_t global[] = {(static_cast<size_t>(count) + kGroup - 1) / kGroup * kGroup};
    const size_t local[] = {std::min(kGroup, context_->device().max_work_group_size)};
    return context_->Enqueue(*kernel, global, local);
  }

 private:
  static unsigned char* Host(runtime::DeviceAddress address) {
    return static_cast<unsigned char*>(address.handle) + address.offset;
  }
  static cl_mem Buffer(runtime::DeviceAddress address) {
    return static_cast<cl_mem>(address.handle);
  }

  // The copies, which return once done with `wait`, else once queued.
  // Copies within host memory are made at once either way.
  Status ToDevice(runtime::DeviceAddress destination, const void* host_source, size_t bytes,
                  bool wait) {
    if (bytes == 0) return Status::Ok();
    if (IsHostAddressable(destination.kind)) {
      std::memcpy(Host(destination), host_source, bytes);
      return Status::Ok();
    }
    return context_->Write(Buffer(destination), destination.offset, host_source, bytes, wait);
  }
  Status ToHost(void* host_destination, runtime::DeviceAddress source, size_t bytes, bool wait) {
    if (bytes == 0) return Status::Ok();
    if (IsHostAddressable(source.kind)) {
      std::memcpy(host_destination, Host(source), bytes);
      return Status::Ok();
    }
    return context_->Read(host_destination, Buffer(source), source.offset, bytes, wait);
  }
  Status Between(runtime::DeviceAddress destination, runtime::DeviceAddress source, size_t bytes,
                 bool wait) {
    if (bytes == 0) return Status::Ok();
    const bool host_destination = IsHostAddressable(destination.kind);
    const bool host_source = IsHostAddressable(source.kind);
    if (host_destination && host_source) {
      std::memmove(Host(destination), Host(source), bytes);
      return Status::Ok();
    }
    if (host_destination) return ToHost(Host(destination), source, bytes, wait);
    if (host_source) return ToDevice(destination, Host(source), bytes, wait);
    return context_->Copy(Buffer(destination), destination.offset, Buffer(source), source.offset,
                          bytes, wait);
  }

  // Freed buffers kept for the next allocation of their size: a new
  // buffer's memory is faulted in on its first use, which cost PoCL more
  // than the kernels writing it (docs/performance.md). At most a quarter of
  // the device's memory, and 1 GiB (KILN_OPENCL_BLOCK_CACHE_MB; 0: off).
  static runtime::BlockCache::Options CacheOptions(const DeviceInfo& device) {
    size_t limit = size_t{1024} << 20;
    if (device.global_memory_bytes > 0) {
      limit = std::min(limit, static_cast<size_t>(device.global_memory_bytes) / 4);
    }
    return {.min_bytes = 0,
            .limit_bytes = limit,
            .slots = 64,
            .limit_variable = "KILN_OPENCL_BLOCK_CACHE_MB"};
  }

  std::shared_ptr<Context> context_;
  bool compiles_;
  Target target_;
  runtime::BlockCache cache_;  // after context_: its blocks are freed first
  std::shared_ptr<Completions> completions_;
  // The fold kernels built so far, by op and element type; their arguments
  // are set and their launches queued under the mutex.
  std::mutex folds_mutex_;
  std::map<std::pair<kernels::ReduceOp, ElementType>, std::unique_ptr<Kernel>> folds_;
};

}  // namespace

StatusOr<std::shared_ptr<runtime::DeviceBackend>> CreateBackend() {
  KILN_ASSIGN_OR_RETURN(std::vector<DeviceInfo> devices, ListDevices());
  KILN_ASSIGN_OR_RETURN(DeviceInfo device,
                        ChooseDevice(devices, GetEnv("KILN_OPENCL_DEVICE").value_or("")));
  KILN_ASSIGN_OR_RETURN(std::unique_ptr<Context> context, Context::Create(device));
  const bool compiles = GetEnv("KILN_OPENCL_KERNELS").value_or("1") != "0";
  return std::shared_ptr<runtime::DeviceBackend>(std::make_shared<Backend>(std::move(context),
                                                                           compiles));
}

}  // namespace kiln::backends::opencl
