#include "backends/opencl/driver.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace kiln::backends::opencl {
namespace {

// The platform or device string `param` (without its trailing NUL).
template <typename Getter, typename Object>
std::string InfoString(Getter getter, Object object, cl_uint param) {
  size_t size = 0;
  if (getter(object, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return std::string();
  std::string text(size, '\0');
  if (getter(object, param, size, text.data(), nullptr) != CL_SUCCESS) return std::string();
  while (!text.empty() && text.back() == '\0') text.pop_back();
  return text;
}

template <typename T>
T DeviceValue(const Functions& cl, cl_device_id device, cl_device_info param) {
  T value{};
  if (cl.GetDeviceInfo(device, param, sizeof(value), &value, nullptr) != CL_SUCCESS) return T{};
  return value;
}

std::string Lower(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower;
}

}  // namespace

std::string ErrorName(cl_int code) {
  switch (code) {
#define KILN_CL_ERROR(name) \
  case name: return #name;
    KILN_CL_ERROR(CL_DEVICE_NOT_FOUND)
    KILN_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    KILN_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    KILN_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    KILN_CL_ERROR(CL_OUT_OF_RESOURCES)
    KILN_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    KILN_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    KILN_CL_ERROR(CL_INVALID_VALUE)
    KILN_CL_ERROR(CL_INVALID_DEVICE)
    KILN_CL_ERROR(CL_INVALID_CONTEXT)
    KILN_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    KILN_CL_ERROR(CL_INVALID_MEM_OBJECT)
    KILN_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    KILN_CL_ERROR(CL_INVALID_PROGRAM)
    KILN_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    KILN_CL_ERROR(CL_INVALID_KERNEL_NAME)
    KILN_CL_ERROR(CL_INVALID_KERNEL)
    KILN_CL_ERROR(CL_INVALID_ARG_INDEX)
    KILN_CL_ERROR(CL_INVALID_ARG_VALUE)
    KILN_CL_ERROR(CL_INVALID_ARG_SIZE)
    KILN_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    KILN_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    KILN_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    KILN_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
    KILN_CL_ERROR(CL_INVALID_EVENT)
    KILN_CL_ERROR(CL_INVALID_OPERATION)
    KILN_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    KILN_CL_ERROR(CL_INVALID_PLATFORM)
    KILN_CL_ERROR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
#undef KILN_CL_ERROR
    case -1001: return "CL_PLATFORM_NOT_FOUND_KHR";
    default: return StrCat("CL error ", code);
  }
}

Status Error(std::string_view call, cl_int code) {
  const bool memory = code == CL_MEM_OBJECT_ALLOCATION_FAILURE || code == CL_OUT_OF_RESOURCES ||
                      code == CL_OUT_OF_HOST_MEMORY;
  const std::string message = StrCat("OpenCL: ", call, " failed: ", ErrorName(code));
  return memory ? ResourceExhausted(message) : Internal(message);
}

std::string DeviceInfo::Describe() const {
  return StrCat(platform_index, ":", device_index, " ", platform, " / ", name);
}

StatusOr<std::vector<DeviceInfo>> ListDevices() {
  KILN_ASSIGN_OR_RETURN(const Functions* cl, LoadFunctions());
  cl_uint count = 0;
  cl_int status = cl->GetPlatformIDs(0, nullptr, &count);
  if (status == -1001 || count == 0) return std::vector<DeviceInfo>();  // no ICD installed
  if (status != CL_SUCCESS) return Error("clGetPlatformIDs", status);
  std::vector<cl_platform_id> platforms(count);
  status = cl->GetPlatformIDs(count, platforms.data(), nullptr);
  if (status != CL_SUCCESS) return Error("clGetPlatformIDs", status);
  std::vector<DeviceInfo> devices;
  for (cl_uint p = 0; p < count; ++p) {
    cl_uint device_count = 0;
    if (cl->GetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &device_count) !=
            CL_SUCCESS ||
        device_count == 0) {
      continue;
    }
    std::vector<cl_device_id> ids(device_count);
    if (cl->GetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, device_count, ids.data(), nullptr) !=
        CL_SUCCESS) {
      continue;
    }
    const std::string platform = InfoString(cl->GetPlatformInfo, platforms[p], CL_PLATFORM_NAME);
    for (cl_uint d = 0; d < device_count; ++d) {
      DeviceInfo info;
      info.platform_index = static_cast<int>(p);
      info.device_index = static_cast<int>(d);
      info.platform = platform;
      info.name = InfoString(cl->GetDeviceInfo, ids[d], CL_DEVICE_NAME);
      info.vendor = InfoString(cl->GetDeviceInfo, ids[d], CL_DEVICE_VENDOR);
      info.version = InfoString(cl->GetDeviceInfo, ids[d], CL_DEVICE_VERSION);
      info.gpu = (DeviceValue<cl_device_type>(*cl, ids[d], CL_DEVICE_TYPE) & CL_DEVICE_TYPE_GPU) !=
                 0;
      info.global_memory_bytes = static_cast<int64_t>(
          DeviceValue<cl_ulong>(*cl, ids[d], CL_DEVICE_GLOBAL_MEM_SIZE));
      info.max_allocation_bytes = static_cast<int64_t>(
          DeviceValue<cl_ulong>(*cl, ids[d], CL_DEVICE_MAX_MEM_ALLOC_SIZE));
      info.compute_units = static_cast<int>(DeviceValue<cl_uint>(*cl, ids[d],
                                                                 CL_DEVICE_MAX_COMPUTE_UNITS));
      const std::string extensions = InfoString(cl->GetDeviceInfo, ids[d], CL_DEVICE_EXTENSIONS);
      info.max_work_group_size = DeviceValue<size_t>(*cl, ids[d], CL_DEVICE_MAX_WORK_GROUP_SIZE);
      info.doubles = extensions.find("cl_khr_fp64") != std::string::npos;
      info.halves = extensions.find("cl_khr_fp16") != std::string::npos;
      info.platform_id = platforms[p];
      info.id = ids[d];
      devices.push_back(std::move(info));
    }
  }
  return devices;
}

StatusOr<DeviceInfo> ChooseDevice(std::span<const DeviceInfo> devices, std::string_view spec) {
  auto none = [&](std::string_view why) {
    std::string listed;
    for (const DeviceInfo& device : devices) listed += StrCat("\n  ", device.Describe());
    if (devices.empty()) listed = " none (is an OpenCL driver installed?)";
    return NotFound("OpenCL: ", why, "; the devices are:", listed);
  };
  if (devices.empty()) return none("no OpenCL device");
  if (spec.empty()) {
    for (const DeviceInfo& device : devices) {
      if (device.gpu) return device;
    }
    return devices.front();
  }
  // "P:D": indices.
  if (const size_t colon = spec.find(':'); colon != std::string_view::npos) {
    int platform = -1, device = -1;
    const std::string_view p = spec.substr(0, colon), d = spec.substr(colon + 1);
    const bool parsed = std::from_chars(p.data(), p.data() + p.size(), platform).ptr ==
                            p.data() + p.size() &&
                        std::from_chars(d.data(), d.data() + d.size(), device).ptr ==
                            d.data() + d.size() &&
                        !p.empty() && !d.empty();
    if (parsed) {
      for (const DeviceInfo& info : devices) {
        if (info.platform_index == platform && info.device_index == device) return info;
      }
      return none(StrCat("KILN_OPENCL_DEVICE=", spec, " names no device"));
    }
  }
  const std::string wanted = Lower(spec);
  for (const DeviceInfo& info : devices) {
    if (Lower(StrCat(info.platform, " / ", info.name)).find(wanted) != std::string::npos) {
      return info;
    }
  }
  return none(StrCat("KILN_OPENCL_DEVICE=", spec, " matches no device"));
}

Kernel::~Kernel() {
  if (kernel_ != nullptr) cl_->ReleaseKernel(kernel_);
  if (program_ != nullptr) cl_->ReleaseProgram(program_);
}

Status Kernel::SetArgument(unsigned index, size_t size, const void* value) {
  const cl_int status = cl_->SetKernelArg(kernel_, index, size, value);
  if (status != CL_SUCCESS) {
    return Error(StrCat("clSetKernelArg(", name_, ", argument ", index, ")"), status);
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<Context>> Context::Create(const DeviceInfo& device) {
  KILN_ASSIGN_OR_RETURN(const Functions* cl, LoadFunctions());
  const cl_context_properties properties[] = {
      CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(device.platform_id), 0};
  cl_int status = CL_SUCCESS;
  cl_context context = cl->CreateContext(properties, 1, &device.id, nullptr, nullptr, &status);
  if (status != CL_SUCCESS)
    return Error(StrCat("clCreateContext(", device.Describe(), ")"), status);
  cl_command_queue queue = cl->CreateCommandQueue(context, device.id, 0, &status);
  if (status != CL_SUCCESS) {
    cl->ReleaseContext(context);
    return Error(StrCat("clCreateCommandQueue(", device.Describe(), ")"), status);
  }
  return std::unique_ptr<Context>(new Context(cl, device, context, queue));
}

Context::~Context() {
  cl_->Finish(queue_);
  cl_->ReleaseCommandQueue(queue_);
  cl_->ReleaseContext(context_);
}

StatusOr<cl_mem> Context::Allocate(size_t bytes) {
  if (bytes == 0) return InvalidArgument("OpenCL: an allocation of 0 bytes");
  if (device_.max_allocation_bytes > 0 &&
      bytes > static_cast<size_t>(device_.max_allocation_bytes)) {
    return ResourceExhausted("OpenCL: ", bytes, " bytes exceed ", device_.name,
                             "'s largest allocation (", device_.max_allocation_bytes, " bytes)");
  }
  cl_int status = CL_SUCCESS;
  cl_mem buffer = cl_->CreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &status);
  if (status != CL_SUCCESS) return Error(StrCat("clCreateBuffer of ", bytes, " bytes"), status);
  return buffer;
}

void Context::Free(cl_mem buffer) {
  if (buffer != nullptr) cl_->ReleaseMemObject(buffer);
}

Status Context::Write(cl_mem destination, size_t offset, const void* source, size_t bytes,
                      bool wait) {
  if (bytes == 0) return Status::Ok();
  const cl_int status = cl_->EnqueueWriteBuffer(queue_, destination, wait ? CL_TRUE : CL_FALSE,
                                                offset, bytes, source, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    return Error(StrCat("clEnqueueWriteBuffer of ", bytes, " bytes at ", offset), status);
  }
  return Status::Ok();
}

Status Context::Read(void* destination, cl_mem source, size_t offset, size_t bytes, bool wait) {
  if (bytes == 0) return Status::Ok();
  const cl_int status = cl_->EnqueueReadBuffer(queue_, source, wait ? CL_TRUE : CL_FALSE, offset,
                                               bytes, destination, 0, nullptr, nullptr);
  if (status != CL_SUCCESS) {
    return Error(StrCat("clEnqueueReadBuffer of ", bytes, " bytes at ", offset), status);
  }
  return Status::Ok();
}

Status Context::Copy(cl_mem destination, size_t destination_offset, cl_mem source,
                     size_t source_offset, size_t bytes, bool wait) {
  if (bytes == 0) return Status::Ok();
  cl_int status = cl_->EnqueueCopyBuffer(queue_, source, destination, source_offset,
                                         destination_offset, bytes, 0, nullptr, nullptr);
  if (status == CL_SUCCESS && wait) status = cl_->Finish(queue_);
  if (status != CL_SUCCESS)
    return Error(StrCat("clEnqueueCopyBuffer of ", bytes, " bytes"), status);
  return Status::Ok();
}

StatusOr<std::unique_ptr<Kernel>> Context::Build(std::string_view source, std::string_view name,
                                                 std::string_view options) {
  const std::string_view names[] = {name};
  KILN_ASSIGN_OR_RETURN(std::vector<std::unique_ptr<Kernel>> kernels,
                        BuildKernels(source, names, options));
  return std::move(kernels.front());
}

StatusOr<std::vector<std::unique_ptr<Kernel>>> Context::BuildKernels(
    std::string_view source, std::span<const std::string_view> names, std::string_view options) {
  const char* text = source.data();
  const size_t length = source.size();
  const std::string what = names.size() == 1 ? StrCat("kernel ", names.front())
                                             : StrCat(names.size(), " kernels");
  cl_int status = CL_SUCCESS;
  cl_program program = cl_->CreateProgramWithSource(context_, 1, &text, &length, &status);
  if (status != CL_SUCCESS) return Error("clCreateProgramWithSource", status);
  const std::string flags(options);
  status = cl_->BuildProgram(program, 1, &device_.id, flags.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::string log;
    size_t size = 0;
    if (cl_->GetProgramBuildInfo(program, device_.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) ==
            CL_SUCCESS &&
        size > 0) {
      log.resize(size);
      cl_->GetProgramBuildInfo(program, device_.id, CL_PROGRAM_BUILD_LOG, size, log.data(),
                               nullptr);
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    cl_->ReleaseProgram(program);
    return InvalidArgument("OpenCL: clBuildProgram of ", what, " on ", device_.name,
                           " failed: ", ErrorName(status), "; build log:\n", log);
  }
  // Each kernel holds a reference to the program; this function's is
  // released on the way out.
  std::vector<std::unique_ptr<Kernel>> kernels;
  for (std::string_view name : names) {
    const std::string kernel_name(name);
    cl_kernel kernel = cl_->CreateKernel(program, kernel_name.c_str(), &status);
    if (status != CL_SUCCESS) {
      cl_->ReleaseProgram(program);
      return Error(StrCat("clCreateKernel(", name, ")"), status);
    }
    cl_->RetainProgram(program);
    kernels.push_back(std::unique_ptr<Kernel>(new Kernel(cl_, program, kernel, kernel_name)));
  }
  cl_->ReleaseProgram(program);
  return kernels;
}

Status Context::Run(const Kernel& kernel, std::span<const size_t> global) {
  KILN_RETURN_IF_ERROR(Enqueue(kernel, global));
  return Finish(kernel.name_);
}

Status Context::Enqueue(const Kernel& kernel, std::span<const size_t> global,
                        std::span<const size_t> local) {
  if (global.empty() || global.size() > 3 || (!local.empty() && local.size() != global.size())) {
    return InvalidArgument("OpenCL: a kernel runs over 1 to 3 dimensions, found ", global.size(),
                           " global and ", local.size(), " local");
  }
  // No work items: nothing to run (OpenCL 1.2 refuses an empty range, and
  // PoCL aborted the process on one).
  for (size_t size : global) {
    if (size == 0) return Status::Ok();
  }
  const cl_int status = cl_->EnqueueNDRangeKernel(queue_, kernel.get(),
                                                  static_cast<cl_uint>(global.size()), nullptr,
                                                  global.data(),
                                                  local.empty() ? nullptr : local.data(), 0,
                                                  nullptr, nullptr);
  if (status != CL_SUCCESS) {
    return Error(StrCat("clEnqueueNDRangeKernel(", kernel.name_, ")"), status);
  }
  return Status::Ok();
}

Status Context::Finish(std::string_view after) {
  const cl_int status = cl_->Finish(queue_);
  if (status != CL_SUCCESS) return Error(StrCat("clFinish after ", after), status);
  return Status::Ok();
}

Status Context::Flush(std::string_view after) {
  const cl_int status = cl_->Flush(queue_);
  if (status != CL_SUCCESS) return Error(StrCat("clFlush after ", after), status);
  return Status::Ok();
}

StatusOr<cl_event> Context::Marker() {
  cl_event event = nullptr;
  const cl_int status = cl_->EnqueueMarkerWithWaitList(queue_, 0, nullptr, &event);
  if (status != CL_SUCCESS) return Error("clEnqueueMarkerWithWaitList", status);
  return event;
}

Status Context::OnComplete(cl_event event, void(CL_CALLBACK* callback)(cl_event, cl_int, void*),
                           void* user) {
  const cl_int status = cl_->SetEventCallback(event, CL_COMPLETE, callback, user);
  if (status != CL_SUCCESS) return Error("clSetEventCallback", status);
  return Status::Ok();
}

void Context::Release(cl_event event) {
  if (event != nullptr) cl_->ReleaseEvent(event);
}

Status Context::Wait(cl_event event) {
  const cl_int status = cl_->WaitForEvents(1, &event);
  if (status != CL_SUCCESS) return Error("clWaitForEvents on the queue's work", status);
  return Status::Ok();
}

}  // namespace kiln::backends::opencl
