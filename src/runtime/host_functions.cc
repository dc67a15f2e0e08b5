#include "runtime/host_functions.h"

#include "base/env.h"
#include "kernels/lapack.h"

namespace kiln::runtime {

bool RegisterHostFunction(std::string_view name, void* function) {
  if (function == nullptr || GetEnv("KILN_LAPACK") == "0") return false;
  return kernels::lapack::Register(name, function);
}

}  // namespace kiln::runtime
