#include "backends/opencl/loader.h"

#include <dlfcn.h>

#include <optional>
#include <string>

#include "base/env.h"

namespace kiln::backends::opencl {
StatusOr<Functions> LoadFunctionsFrom(const std::string& library) {
  // Kept open for the life of the process: drivers' threads outlive clients.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    return FailedPrecondition("OpenCL: cannot open the ICD loader ", library, ": ",
                              error != nullptr ? error : "unknown error",
                              " (Debian: apt-get install ocl-icd-libopencl1 and a driver such "
                              "as pocl-opencl-icd)");
  }
  Functions functions;
#define KILN_OPENCL_RESOLVE(name)                                                      \
  functions.name = reinterpret_cast<decltype(&cl##name)>(dlsym(handle, "cl" #name));   \
  if (functions.name == nullptr) {                                                     \
    return FailedPrecondition("OpenCL: ", library,                                     \
                              " has no cl" #name "; Kiln needs an OpenCL 1.2 loader"); \
  }
  KILN_OPENCL_FUNCTIONS(KILN_OPENCL_RESOLVE)
#undef KILN_OPENCL_RESOLVE
  return functions;
}

StatusOr<const Functions*> LoadFunctions() {
  // Leaked on purpose: callbacks from driver threads may run at exit.
  static const auto* loaded = new StatusOr<Functions>(
      LoadFunctionsFrom(GetEnv("KILN_OPENCL_LIBRARY").value_or("libOpenCL.so.1")));
  if (!loaded->ok()) return loaded->status();
  return &loaded->value();
}

}  // namespace kiln::backends::opencl
