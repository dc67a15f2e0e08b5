// Work splitting for kernels: one process-wide pool of worker threads (as
// many as the machine has cores) shared by every device, so N virtual
// devices on a small machine do not oversubscribe it.
#pragma once

#include <cstdint>

#include "base/function_ref.h"
#include "base/status.h"

namespace kiln::kernels {

// What ParallelFor runs: body(begin, end), by reference (no allocation).
using RangeFn = FunctionRef<void(int64_t begin, int64_t end)>;

// Runs body(begin, end) over [0, count) in contiguous chunks, on the calling
// thread and the pool's workers. `cost_per_item` is a rough count of
// arithmetic operations per item; work below a few tens of thousands of
// operations in total runs inline, since waking a thread costs more.
// Allocates nothing: the job lives on the caller's stack while it runs.
// Called from inside a pool worker it runs inline (no nested splitting).
void ParallelFor(int64_t count, int64_t cost_per_item, RangeFn body);

// ParallelFor for work that can fail: each chunk runs under a
// SerialKernelsScope (the kernels it calls stay on its thread), chunks that
// start after a failure are skipped, and the first failure is returned.
Status ParallelForStatus(int64_t count, int64_t cost_per_item,
                         FunctionRef<Status(int64_t begin, int64_t end)> body);

// While one lives on a thread, ParallelFor calls on that thread run inline:
// for callers that already split the work and call kernels on pieces of it
// (a fused loop runs its members' kernels tile by tile inside its own
// ParallelFor). Nests.
class SerialKernelsScope {
 public:
  SerialKernelsScope();
  ~SerialKernelsScope();
  SerialKernelsScope(const SerialKernelsScope&) = delete;
  SerialKernelsScope& operator=(const SerialKernelsScope&) = delete;
};

// While one lives anywhere in the process, a pool worker that runs out of
// jobs polls for the next one for up to 100 us before it sleeps; a program
// run holds one (runtime/executable.cc), whose nodes come one after another.
// Outside program runs workers sleep at once, leaving the cores to the
// framework's threads.
class KeepWorkersWarm {
 public:
  KeepWorkersWarm();
  ~KeepWorkersWarm();
  KeepWorkersWarm(const KeepWorkersWarm&) = delete;
  KeepWorkersWarm& operator=(const KeepWorkersWarm&) = delete;
};

// While one lives anywhere in the process, pool workers that run out of
// jobs sleep at once instead of polling (KeepWorkersWarm): for calls into
// a library with threads of its own (the host's LAPACK on OpenBLAS, whose
// threads then have the cores to themselves; a 256 x 256 f64 inverse
// spent 7% of its time in Kiln's polling workers and 23% in OpenBLAS's,
// 1.6-1.9 ms against XLA's 0.95 on 2 cores).
class QuietPoolWorkers {
 public:
  // Does nothing unless `active` (a kernel that calls LAPACK only when the
  // host lent it).
  explicit QuietPoolWorkers(bool active = true);
  ~QuietPoolWorkers();
  QuietPoolWorkers(const QuietPoolWorkers&) = delete;
  QuietPoolWorkers& operator=(const QuietPoolWorkers&) = delete;

 private:
  bool active_;
};

// Threads ParallelFor may use (KILN_NUM_THREADS, default: the cores the
// process may run on).
int NumThreads();

}  // namespace kiln::kernels
