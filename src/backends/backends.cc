#include "backends/backends.h"

#include "base/env.h"

#ifdef KILN_HAVE_OPENCL
#include "backends/opencl/backend.h"
#endif

namespace kiln::backends {

std::vector<std::string> Available() {
  std::vector<std::string> names = {"host"};
#ifdef KILN_HAVE_OPENCL
  names.push_back("opencl");
#endif
  return names;
}

StatusOr<std::shared_ptr<runtime::DeviceBackend>> Create(std::string_view name) {
  std::string chosen(name);
  if (chosen.empty()) chosen = GetEnv("KILN_BACKEND").value_or("host");
  if (chosen.empty() || chosen == "host") return runtime::CreateHostBackend();
#ifdef KILN_HAVE_OPENCL
  if (chosen == "opencl") {
    StatusOr<std::shared_ptr<runtime::DeviceBackend>> backend = opencl::CreateBackend();
    if (!backend.ok()) {
      return Status(backend.status().code(),
                    StrCat("KILN_BACKEND=opencl: ", backend.status().message()));
    }
    return backend;
  }
#endif
  std::string names;
  for (const std::string& available : Available())
    names += StrCat(names.empty() ? "" : ", ", available);
  return InvalidArgument("KILN_BACKEND=", chosen,
                         " is not a backend of this build of Kiln; it has: ", names);
}

}  // namespace kiln::backends
