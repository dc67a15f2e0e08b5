// The OpenCL entry points Kiln uses, taken from the ICD loader
// (libOpenCL.so.1) at run time rather than linked: the plugin then loads on
// machines without OpenCL, and the OpenCL backend says it is unavailable.
#pragma once

#include <CL/cl.h>

#include <string>

#include "base/status.h"

namespace kiln::backends::opencl {

// One pointer per function, named as the API without its "cl" prefix.
struct Functions {
  // clang-format off
#define KILN_OPENCL_FUNCTIONS(X) \
  X(GetPlatformIDs) \
  X(GetPlatformInfo) \
  X(GetDeviceIDs) \
  X(GetDeviceInfo) \
  X(CreateContext) \
  X(ReleaseContext) \
  X(CreateCommandQueue) \
  X(ReleaseCommandQueue) \
  X(CreateBuffer) \
  X(ReleaseMemObject) \
  X(EnqueueReadBuffer) \
  X(EnqueueWriteBuffer) \
  X(EnqueueCopyBuffer) \
  X(EnqueueFillBuffer) \
  X(CreateProgramWithSource) \
  X(BuildProgram) \
  X(GetProgramBuildInfo) \
  X(RetainProgram) \
  X(ReleaseProgram) \
  X(CreateKernel) \
  X(ReleaseKernel) \
  X(SetKernelArg) \
  X(EnqueueNDRangeKernel) \
  X(Finish) \
  X(WaitForEvents) \
  X(ReleaseEvent) \
  X(GetEventInfo) \
  X(SetEventCallback) \
  X(Flush) \
  X(EnqueueMarkerWithWaitList)
  // clang-format on
#define KILN_OPENCL_POINTER(name) decltype(&cl##name) name = nullptr;
  KILN_OPENCL_FUNCTIONS(KILN_OPENCL_POINTER)
#undef KILN_OPENCL_POINTER
};

// The loaded functions, loaded once per process; FAILED_PRECONDITION naming
// the library and dlerror's message when there is no ICD loader or it lacks
// a function. KILN_OPENCL_LIBRARY names another loader library.
StatusOr<const Functions*> LoadFunctions();
// Loads the functions from `library` (what LoadFunctions does once).
StatusOr<Functions> LoadFunctionsFrom(const std::string& library);

}  // namespace kiln::backends::opencl
