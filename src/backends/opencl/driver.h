// The OpenCL driver as the OpenCL backend uses it: the devices there are,
// and per device a context with one in-order queue, memory, copies and
// kernels built from OpenCL C. Every failure is a Status naming the OpenCL
// call and the driver's error (and a build log for a kernel that does not
// build); nothing here throws or aborts.
#pragma once

#include <CL/cl.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/opencl/loader.h"
#include "base/status.h"

namespace kiln::backends::opencl {

// The name of an OpenCL error code ("CL_OUT_OF_RESOURCES"), or "CL error N".
std::string ErrorName(cl_int code);
// A failed call as a Status: `call` ("clCreateBuffer of 64 bytes") and the
// error; RESOURCE_EXHAUSTED for the out-of-memory codes.
Status Error(std::string_view call, cl_int code);

struct DeviceInfo {
  int platform_index = 0;            // in clGetPlatformIDs' order
  int device_index = 0;              // in the platform's clGetDeviceIDs order
  std::string platform;              // CL_PLATFORM_NAME
  std::string name;                  // CL_DEVICE_NAME
  std::string vendor;                // CL_DEVICE_VENDOR
  std::string version;               // CL_DEVICE_VERSION
  bool gpu = false;                  // CL_DEVICE_TYPE_GPU
  int64_t global_memory_bytes = 0;   // CL_DEVICE_GLOBAL_MEM_SIZE
  int64_t max_allocation_bytes = 0;  // CL_DEVICE_MAX_MEM_ALLOC_SIZE
  int compute_units = 0;             // CL_DEVICE_MAX_COMPUTE_UNITS
  size_t max_work_group_size = 0;    // CL_DEVICE_MAX_WORK_GROUP_SIZE
  bool doubles = false;              // cl_khr_fp64
  bool halves = false;               // cl_khr_fp16
  cl_platform_id platform_id = nullptr;
  cl_device_id id = nullptr;

  // "P:D platform / name" as KILN_OPENCL_DEVICE and `kiln` list it.
  std::string Describe() const;
};

// Every device of every platform. A platform whose devices cannot be
// listed is skipped (an ICD with no device reports CL_DEVICE_NOT_FOUND).
StatusOr<std::vector<DeviceInfo>> ListDevices();

// The device `spec` names: "P:D" (platform and device indices) or text
// found in "platform / name" (case-insensitive). Empty: the first GPU, else
// the first device. NOT_FOUND lists the devices there are.
StatusOr<DeviceInfo> ChooseDevice(std::span<const DeviceInfo> devices, std::string_view spec);

// A kernel built from OpenCL C, with its program; released with it.
class Kernel {
 public:
  ~Kernel();
  Kernel(const Kernel&) = delete;
  Kernel& operator=(const Kernel&) = delete;

  // Sets argument `index` to `size` bytes at `value` (a cl_mem is passed as
  // a pointer to it, as clSetKernelArg takes it).
  Status SetArgument(unsigned index, size_t size, const void* value);
  cl_kernel get() const { return kernel_; }
  const std::string& name() const { return name_; }

 private:
  friend class Context;
  Kernel(const Functions* cl, cl_program program, cl_kernel kernel, std::string name)
      : cl_(cl), program_(program), kernel_(kernel), name_(std::move(name)) {}
  const Functions* cl_;
  cl_program program_;
  cl_kernel kernel_;
  std::string name_;
};

// One device's context and in-order command queue. Thread-safe as OpenCL
// objects are (1.2: every call but clSetKernelArg on one kernel).
class Context {
 public:
  static StatusOr<std::unique_ptr<Context>> Create(const DeviceInfo& device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceInfo& device() const { return device_; }

  // A buffer of `bytes` (> 0) of device memory. RESOURCE_EXHAUSTED when the
  // device has no room (beyond its largest allocation, or out of memory).
  StatusOr<cl_mem> Allocate(size_t bytes);
  void Free(cl_mem buffer);

  // Copies, ordered on the queue after everything before them. With
  // `wait`, they return once done; without, once queued, and the host
  // memory must stay as it is until they complete (Marker, Finish).
  Status Write(cl_mem destination, size_t offset, const void* source, size_t bytes,
               bool wait = true);
  Status Read(void* destination, cl_mem source, size_t offset, size_t bytes, bool wait = true);
  Status Copy(cl_mem destination, size_t destination_offset, cl_mem source, size_t source_offset,
              size_t bytes, bool wait = true);

  // Builds `source` and takes kernel `name` from it; a program that does
  // not build is INVALID_ARGUMENT carrying the driver's build log.
  StatusOr<std::unique_ptr<Kernel>> Build(std::string_view source, std::string_view name,
                                          std::string_view options = "");
  // Build for several kernels of one program (one compile of `source`).
  StatusOr<std::vector<std::unique_ptr<Kernel>>> BuildKernels(
      std::string_view source, std::span<const std::string_view> names,
      std::string_view options = "");
  // Runs `kernel` over `global` work items (local size left to the driver)
  // and waits for it.
  Status Run(const Kernel& kernel, std::span<const size_t> global);
  // Queues `kernel` over `global` work items in work-groups of `local`
  // (empty: the driver's choice) without waiting for it.
  Status Enqueue(const Kernel& kernel, std::span<const size_t> global,
                 std::span<const size_t> local = {});
  // Waits for everything queued; `after` names the work in an error.
  Status Finish(std::string_view after);
  // Submits everything queued to the device without waiting for it.
  Status Flush(std::string_view after);
  // An event that completes when everything queued before it has; the
  // caller releases it (Release).
  StatusOr<cl_event> Marker();
  // Calls `callback(event, status, user)` on the driver's thread once
  // `event` completes (status CL_COMPLETE, or a negative error code).
  Status OnComplete(cl_event event, void(CL_CALLBACK* callback)(cl_event, cl_int, void*),
                    void* user);
  void Release(cl_event event);
  // Blocks until `event` completes; an error when its command failed.
  Status Wait(cl_event event);

 private:
  Context(const Functions* cl, DeviceInfo device, cl_context context, cl_command_queue queue)
      : cl_(cl), device_(std::move(device)), context_(context), queue_(queue) {}
  const Functions* cl_;
  DeviceInfo device_;
  cl_context context_;
  cl_command_queue queue_;
};

}  // namespace kiln::backends::opencl
