#include "kernels/parallel.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "base/env.h"
#include "kernels/float_env.h"

namespace kiln::kernels {
namespace {

// Total work (items x cost) below which splitting does not pay.
constexpr int64_t kMinParallelCost = 1 << 15;

// How long a worker that ran out of jobs polls for the next one before
// sleeping, while a program runs (KeepWorkersWarm); and how long a caller
// polls for the workers still inside its job. Waking a sleeping thread
// costs tens of microseconds on a VM, as much as a small node's work, and
// a running program's nodes come one after another.
constexpr auto kSpin = std::chrono::microseconds(100);

// KeepWorkersWarm and QuietPoolWorkers objects alive in the process.
std::atomic<int> warm_scopes{0};
std::atomic<int> quiet_scopes{0};

// Whether an idle worker polls for the next job rather than sleeping.
bool PollForJobs() {
  return warm_scopes.load(std::memory_order_relaxed) > 0 &&
         quiet_scopes.load(std::memory_order_relaxed) == 0;
}

// Polls `ready` (pausing between reads) until it returns true or kSpin has
// passed; its last answer.
template <typename Ready>
bool SpinUntil(Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (int polls = 1;; ++polls) {
    if (ready()) return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
    if (polls % 64 == 0 && std::chrono::steady_clock::now() >= deadline) return ready();
  }
}

thread_local bool in_pool_worker = false;
thread_local int serial_scopes = 0;  // SerialKernelsScope objects alive on this thread

int DetectThreads() {
  if (auto value = GetEnv("KILN_NUM_THREADS")) {
    auto parsed = ParseInt64(*value, "KILN_NUM_THREADS", 1, 1024);
    if (parsed.ok()) return static_cast<int>(*parsed);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// One ParallelFor call: chunks of [0, count) handed out by an atomic counter.
// It lives on the caller's stack and is linked into the pool's list while
// workers may join it; `users` (guarded by the pool's mutex) counts the
// workers inside, and the caller returns only once it is unlinked and no
// worker is inside, so no worker touches it after it is gone.
struct Job {
  RangeFn body;
  int64_t count = 0;
  int64_t step = 0;
  int64_t chunks = 0;
  std::atomic<int64_t> next_chunk{0};
  // Workers inside: changed under the pool's mutex, polled without it by a
  // caller waiting for them.
  std::atomic<int> users{0};
  std::condition_variable idle;
  // The first exception a worker's chunk threw (guarded by the pool's
  // mutex); the caller rethrows it once no worker is inside.
  std::exception_ptr error;
  Job* prev = nullptr;
  Job* next = nullptr;
  bool linked = false;

  // Runs chunks until none is left.
  void RunChunks() {
    for (;;) {
      const int64_t chunk = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (chunk >= chunks) return;
      const int64_t begin = chunk * step;
      body(begin, std::min(count, begin + step));
    }
  }
  bool exhausted() const { return next_chunk.load(std::memory_order_relaxed) >= chunks; }
};

// Workers sleep until a job is linked, join the oldest one with chunks left,
// and run its chunks beside its caller.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) {
      workers_.emplace_back([this] {
        FlushDenormalsOnThisThread();  // as the programs' own threads (float_env.h)
        in_pool_worker = true;
        Work();
      });
    }
  }

  // Runs `job` on the calling thread and any idle workers; returns when all
  // its chunks are done. An exception thrown by a chunk, on the caller or on
  // a worker, skips the chunks not yet started and is rethrown here on the
  // calling thread once no worker is inside (the first one when several
  // threw), so the run that called ParallelFor fails (runtime/executable.cc
  // and runtime/work_queue.cc turn it into a Status) and the pool stays usable.
  void Run(Job& job) {
    {
      std::lock_guard lock(mutex_);
      Link(job);
    }
    wake_.notify_all();
    try {
      job.RunChunks();
    } catch (...) {
      // Take the remaining chunks away from the workers, wait for those
      // inside, then let the caller see the error.
      job.next_chunk.store(job.chunks);
      Finish(job);
      throw;
    }
    Finish(job);
    // Finish took the mutex after the last worker left: `error` is settled.
    if (job.error) std::rethrow_exception(job.error);
  }

 private:
  void Finish(Job& job) {
    std::unique_lock lock(mutex_);
    if (job.linked) Unlink(job);
    if (job.users.load() == 0) return;
    lock.unlock();
    SpinUntil([&job] { return job.users.load(std::memory_order_acquire) == 0; });
    // Even when the poll saw no user left, the last one may still be
    // notifying `idle`: the job outlives it only once the mutex is ours.
    lock.lock();
    job.idle.wait(lock, [&job] { return job.users.load() == 0; });
  }

  void Link(Job& job) {
    job.prev = tail_;
    job.next = nullptr;
    (tail_ ? tail_->next : head_) = &job;
    tail_ = &job;
    job.linked = true;
    linked_.fetch_add(1, std::memory_order_release);
  }
  void Unlink(Job& job) {
    (job.prev ? job.prev->next : head_) = job.next;
    (job.next ? job.next->prev : tail_) = job.prev;
    job.linked = false;
    linked_.fetch_sub(1, std::memory_order_relaxed);
  }

  void Work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      if (head_ == nullptr && PollForJobs()) {
        lock.unlock();
        SpinUntil([this] { return linked_.load(std::memory_order_acquire) > 0 || !PollForJobs(); });
        lock.lock();
      }
      wake_.wait(lock, [this] { return head_ != nullptr; });
      Job& job = *head_;
      if (job.exhausted()) {
        Unlink(job);
        continue;
      }
      ++job.users;
      lock.unlock();
      // An exception (std::bad_alloc in a kernel's scratch) must not end the
      // process: the worker keeps it for the caller, who rethrows it on its
      // own thread, where the program's run turns it into its error.
      std::exception_ptr error;
      try {
        job.RunChunks();
      } catch (...) {
        error = std::current_exception();
        job.next_chunk.store(job.chunks);  // the job has failed: skip the rest
      }
      lock.lock();
      if (error && !job.error) job.error = std::move(error);
      if (job.linked) Unlink(job);
      if (--job.users == 0) job.idle.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::atomic<int> linked_{0};  // jobs in the list, polled without the mutex
  Job* head_ = nullptr;
  Job* tail_ = nullptr;
  std::vector<std::thread> workers_;
};

Pool& GetPool() {
  // Never destroyed: workers are detached from static destruction order.
  static Pool* pool = new Pool(NumThreads());
  return *pool;
}

}  // namespace

QuietPoolWorkers::QuietPoolWorkers(bool active) : active_(active) {
  if (active_) quiet_scopes.fetch_add(1, std::memory_order_relaxed);
}
QuietPoolWorkers::~QuietPoolWorkers() {
  if (active_) quiet_scopes.fetch_sub(1, std::memory_order_relaxed);
}

KeepWorkersWarm::KeepWorkersWarm() { warm_scopes.fetch_add(1, std::memory_order_relaxed); }
KeepWorkersWarm::~KeepWorkersWarm() { warm_scopes.fetch_sub(1, std::memory_order_relaxed); }

SerialKernelsScope::SerialKernelsScope() { ++serial_scopes; }
SerialKernelsScope::~SerialKernelsScope() { --serial_scopes; }

int NumThreads() {
  static const int threads = DetectThreads();
  return threads;
}

void ParallelFor(int64_t count, int64_t cost_per_item, RangeFn body) {
  if (count <= 0) return;
  // Small work first: the thread-local checks cost a __tls_get_addr call
  // each in a shared library, and an interpreted loop's scalar kernels
  // come here once per trip.
  const int64_t cost = count * std::max<int64_t>(cost_per_item, 1);
  if (cost < kMinParallelCost || count == 1) {
    body(0, count);
    return;
  }
  const int threads = NumThreads();
  if (threads == 1 || in_pool_worker || serial_scopes > 0) {
    body(0, count);
    return;
  }
  const int64_t chunks = std::min<int64_t>(count, std::min<int64_t>(threads * 4,
                                                                    cost / kMinParallelCost + 1));
  Job job{body};
  job.count = count;
  job.step = (count + chunks - 1) / chunks;
  job.chunks = (count + job.step - 1) / job.step;
  GetPool().Run(job);
}

}  // namespace kiln::kernels

namespace kiln::kernels {

Status ParallelForStatus(int64_t count, int64_t cost_per_item,
                         FunctionRef<Status(int64_t begin, int64_t end)> body) {
  std::atomic<bool> failed{false};
  Status first = Status::Ok();
  std::mutex mutex;
  ParallelFor(count, cost_per_item, [&](int64_t begin, int64_t end) {
    if (failed.load(std::memory_order_relaxed)) return;
    SerialKernelsScope serial;
    Status status = body(begin, end);
    if (!status.ok() && !failed.exchange(true)) {
      std::lock_guard lock(mutex);
      first = std::move(status);
    }
  });
  return first;
}

}  // namespace kiln::kernels
