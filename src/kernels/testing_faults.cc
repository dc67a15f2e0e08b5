#include "kernels/testing_faults.h"

#include <atomic>
#include <chrono>
#include <new>
#include <thread>

#include "kernels/parallel.h"

namespace kiln::kernels {

Status ThrowOnWorker() {
  if (NumThreads() < 2) {
    return FailedPrecondition("kiln.testing.throw_on_worker needs a pool worker, and ",
                              "KILN_NUM_THREADS=1 (or one core) leaves none");
  }
  const std::thread::id caller = std::this_thread::get_id();
  std::atomic<bool> thrown{false};
  // Four chunks per thread, each costly enough that ParallelFor splits them.
  const int64_t chunks = 4 * static_cast<int64_t>(NumThreads());
  ParallelFor(chunks, int64_t{1} << 20, [&](int64_t, int64_t) {
    if (std::this_thread::get_id() != caller) {
      thrown = true;
      throw std::bad_alloc();
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!thrown.load() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::yield();
    }
  });
  return FailedPrecondition("kiln.testing.throw_on_worker: no pool worker ran a chunk "
                            "within 10 s");
}

}  // namespace kiln::kernels
