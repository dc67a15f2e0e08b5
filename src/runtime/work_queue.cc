#include "runtime/work_queue.h"

#include <pthread.h>

#include "base/exception.h"
#include "runtime/device_backend.h"

namespace kiln::runtime {

WorkQueue::WorkQueue(std::string name) : name_(std::move(name)) {
  worker_ = std::thread([this] { Run(); });
  // Thread names help in gdb and perf; Linux limits them to 15 characters.
  pthread_setname_np(worker_.native_handle(), name_.substr(0, 15).c_str());
}

WorkQueue::~WorkQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void WorkQueue::Enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  wake_.notify_one();
}

bool WorkQueue::RunNowIfIdle(FunctionRef<void()> task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || inline_running_ || !tasks_.empty() ||
        (worker_running_ && !worker_finishing_)) {
      return false;
    }
    inline_running_ = true;
  }
  task();
  bool enqueued_meanwhile = false;
  {
    std::lock_guard lock(mutex_);
    inline_running_ = false;
    ++completed_;
    enqueued_meanwhile = !tasks_.empty();
  }
  idle_.notify_all();
  // The worker waits for tasks enqueued while this one ran; waking it for
  // none cost two context switches per inline run (a quarter of a small
  // program's dispatch time in perf).
  if (enqueued_meanwhile) wake_.notify_one();
  return true;
}

uint64_t WorkQueue::Drain() {
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [this] { return tasks_.empty() && !worker_running_ && !inline_running_; });
  return completed_;
}

void WorkQueue::WorkerFinishing() {
  if (std::this_thread::get_id() != worker_.get_id()) return;
  std::lock_guard lock(mutex_);
  worker_finishing_ = true;
}

void WorkQueue::Run() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      // Not while a task runs inline (RunNowIfIdle): tasks stay in order.
      wake_.wait(lock, [this] { return (stopping_ || !tasks_.empty()) && !inline_running_; });
      if (tasks_.empty()) return;  // stopping, and everything enqueued has run
      task = std::move(tasks_.front());
      tasks_.pop_front();
      worker_running_ = true;
      worker_finishing_ = false;
    }
    task();
    task = nullptr;  // release what the task captured before reporting idle
    {
      std::lock_guard lock(mutex_);
      worker_running_ = false;
      worker_finishing_ = false;
      ++completed_;
    }
    idle_.notify_all();
  }
}

Status RunTask(FunctionRef<Status()> work, std::string_view what) {
  try {
    return work();
  } catch (...) {
    return StatusFromCurrentException(StrCat("a task on ", what));
  }
}

void EnqueueWhenReady(const std::shared_ptr<Event>& ready, WorkQueue* queue,
                      std::function<Status()> work, std::shared_ptr<Event> done) {
  ready->OnReady([queue, work = std::move(work),
                  done = std::move(done)](const Status& status) mutable {
    if (!status.ok()) {
      work = nullptr;
      done->Set(status);
      return;
    }
    queue->Enqueue([work = std::move(work), done = std::move(done), queue]() mutable {
      Status result = RunTask(work, queue->name());
      work = nullptr;
      queue->WorkerFinishing();
      done->Set(std::move(result));
    });
  });
}

void EnqueueDeviceWork(const std::shared_ptr<Event>& ready, WorkQueue* queue,
                       DeviceBackend* backend, int ordinal, std::function<Status()> work,
                       std::shared_ptr<Event> done, std::function<Status(Status)> then) {
  // Runs `then`, releases it, and fires `done`.
  auto finish = [then = std::move(then), done = std::move(done)](Status status) mutable {
    status = RunTask([&] { return then(std::move(status)); }, "a device copy's completion");
    then = nullptr;
    done->Set(std::move(status));
  };
  ready->OnReady([queue, backend, ordinal, work = std::move(work),
                  finish = std::move(finish)](const Status& status) mutable {
    if (!status.ok()) {
      work = nullptr;
      finish(status);
      return;
    }
    queue->Enqueue([queue, backend, ordinal, work = std::move(work),
                    finish = std::move(finish)]() mutable {
      Status result = RunTask(work, queue->name());
      work = nullptr;
      std::shared_ptr<QueueEvent> pending;
      if (result.ok()) {
        StatusOr<std::shared_ptr<QueueEvent>> completion = backend->Completion(ordinal);
        if (completion.ok()) {
          pending = std::move(*completion);
        } else {
          result = completion.status();
        }
      }
      queue->WorkerFinishing();
      if (pending == nullptr) {
        finish(std::move(result));
      } else {
        pending->OnDone(std::move(finish));
      }
    });
  });
}

}  // namespace kiln::runtime
