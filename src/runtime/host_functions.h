// Functions the host process lends the plugin at run time (today: LAPACK
// and BLAS routines, kernels/lapack.h), registered through the exported
// C entry KilnRegisterHostFunction before or after clients exist.
#pragma once

#include <string_view>

namespace kiln::runtime {

// Stores `function` under `name` ("sgetrf", "zpotrf", "dtrsm", ...) for
// every client of the process; false for a name Kiln does not use or a
// null function (nothing changes). KILN_LAPACK=0 refuses every LAPACK
// routine, so that Kiln's own kernels run.
bool RegisterHostFunction(std::string_view name, void* function);

}  // namespace kiln::runtime
