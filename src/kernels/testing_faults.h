// Faults on purpose, for tests of how a failing kernel fails its run
// (docs/architecture.md, "Work off the calling thread"). Programs reach them
// only through the custom_call target kiln.testing.throw_on_worker, which
// the compiler lowers only while KILN_TESTING_FAULTS=1 is set.
#pragma once

#include "base/status.h"

namespace kiln::kernels {

// Runs a ParallelFor whose chunks throw std::bad_alloc when they run on a
// pool worker; the caller's own chunks wait (up to 10 s) for a worker to
// throw, so the exception is a worker's, rethrown here on the calling
// thread. FAILED_PRECONDITION, without throwing, when no worker ran a chunk
// (a pool of one thread has none, and ParallelFor runs inline on a worker).
Status ThrowOnWorker();

}  // namespace kiln::kernels
