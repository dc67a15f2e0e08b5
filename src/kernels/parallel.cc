#include "kernels/parallel.h"

#include <sched.h>

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "base/env.h"
#include "kernels/float_env.h"

namespace kiln::kernels {
namespace {

// Total work (items x cost) below which splitting does not pay.
constexpr int64_t kMinParallelCost = 1 << 15;

thread_local bool in_pool_worker = false;

int DetectThreads() {
  if (auto value = GetEnv("KILN_NUM_THREADS")) {
    auto parsed = ParseInt64(*value, "KILN_NUM_THREADS", 1, 1024);
    if (parsed.ok()) return static_cast<int>(*parsed);
  }
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

// Workers take chunks from one queue; ParallelFor's caller runs chunks too
// and waits for the rest.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int i = 1; i < threads; ++i) {
      workers_.emplace_back([this] {
        FlushDenormalsOnThisThread();  // as the programs' own threads (float_env.h)
        Work();
      });
    }
  }
  ~Pool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& worker : workers_) worker.join();
  }

  void Submit(std::function<void()> task) {
    {
      std::lock_guard lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

  // Runs one queued task on the calling thread, if any.
  bool RunOne() {
    std::function<void()> task;
    {
      std::lock_guard lock(mutex_);
      if (tasks_.empty()) return false;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
    return true;
  }

 private:
  void Work() {
    in_pool_worker = true;
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

Pool& GetPool() {
  static Pool* pool = new Pool(NumThreads());  // never destroyed: workers outlive statics
  return *pool;
}

}  // namespace

int NumThreads() {
  static const int threads = DetectThreads();
  return threads;
}

void ParallelFor(int64_t count, int64_t cost_per_item,
                 const std::function<void(int64_t, int64_t)>& body) {
  if (count <= 0) return;
  const int threads = NumThreads();
  const int64_t cost = count * std::max<int64_t>(cost_per_item, 1);
  if (threads == 1 || in_pool_worker || cost < kMinParallelCost || count == 1) {
    body(0, count);
    return;
  }
  const int64_t chunks = std::min<int64_t>(count, std::min<int64_t>(threads * 4,
                                                                   cost / kMinParallelCost + 1));
  const int64_t step = (count + chunks - 1) / chunks;
  struct Shared {
    std::mutex mutex;
    std::condition_variable done;
    int64_t pending = 0;
  } shared;
  Pool& pool = GetPool();
  int64_t submitted = 0;
  for (int64_t begin = step; begin < count; begin += step) ++submitted;
  shared.pending = submitted;
  for (int64_t begin = step; begin < count; begin += step) {
    const int64_t end = std::min(count, begin + step);
    pool.Submit([&shared, &body, begin, end] {
      body(begin, end);
      std::lock_guard lock(shared.mutex);
      if (--shared.pending == 0) shared.done.notify_one();
    });
  }
  body(0, std::min(count, step));
  // Help with queued chunks (ours or another caller's) instead of sleeping.
  for (;;) {
    {
      std::lock_guard lock(shared.mutex);
      if (shared.pending == 0) return;
    }
    if (!pool.RunOne()) break;
  }
  std::unique_lock lock(shared.mutex);
  shared.done.wait(lock, [&shared] { return shared.pending == 0; });
}

}  // namespace kiln::kernels
