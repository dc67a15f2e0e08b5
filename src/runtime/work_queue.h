// An in-order queue of tasks run by one worker thread: a device's stream.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "base/function_ref.h"
#include "base/status.h"
#include "runtime/event.h"

namespace kiln::runtime {

class WorkQueue {
 public:
  explicit WorkQueue(std::string name);
  // Runs every task already enqueued, then joins the worker.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Appends a task; tasks run one at a time in enqueue order. Tasks must not
  // throw: those that can fail run their work under RunTask.
  void Enqueue(std::function<void()> task);
  // Runs `task` on the calling thread, now, if the queue is idle (no task
  // running or waiting), holding the queue's place so that tasks enqueued
  // meanwhile run after it; false (and nothing run) otherwise. For small
  // programs, where handing the work to the worker and the result back
  // would cost more than the work (docs/execution.md).
  bool RunNowIfIdle(FunctionRef<void()> task);
  // Blocks until every task enqueued so far (and any they enqueue here) has
  // run; returns how many tasks this queue has run in all.
  uint64_t Drain();
  // Called by a task on the worker once its work is done and all that is
  // left is reporting it (setting its event): from then on RunNowIfIdle
  // may run a task inline beside it. Without this, a caller woken by the
  // event raced the worker to the idle state and lost most times, so that
  // once a small program went to the worker every later call did too. A
  // no-op on any thread but the worker.
  void WorkerFinishing();
  const std::string& name() const { return name_; }

 private:
  void Run();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  std::condition_variable idle_;
  bool stopping_ = false;
  bool worker_running_ = false;    // the worker runs a task
  bool worker_finishing_ = false;  // ... which has done its work (WorkerFinishing)
  bool inline_running_ = false;    // a task runs inline (RunNowIfIdle)
  uint64_t completed_ = 0;
  std::thread worker_;
};

// Runs `work` and returns its status, or the exception it threw as a
// Status (StatusFromCurrentException; `what` names the queue or program):
// a task must not let one reach the worker thread, which would end the process.
Status RunTask(FunctionRef<Status()> work, std::string_view what);

// Runs `work` on `queue` once `ready` fires, then sets `done` with its status
// (or with `ready`'s error, without running it). `work` and what it captured
// are released before `done` fires, so a waiter sees memory already freed
// when it deletes a buffer.
void EnqueueWhenReady(const std::shared_ptr<Event>& ready, WorkQueue* queue,
                      std::function<Status()> work, std::shared_ptr<Event> done);

class DeviceBackend;
// As EnqueueWhenReady, for work that may leave copies on `backend`'s queue
// for device `ordinal` (DeviceBackend::EnqueueHostToDevice and the like):
// `done` fires when the backend's completion of that queue, asked after
// `work`, calls back (DeviceBackend::Completion). Before it, `then` runs
// with the status so far (on whichever thread calls back, and also when
// `ready` or `work` failed) and gives the status `done` fires with: a copy
// out of the staging memory `work` read into, say. What `then` captured
// lives until then: the memory the copies read or write. `work` is
// released when it returns, `then` before `done` fires.
void EnqueueDeviceWork(const std::shared_ptr<Event>& ready, WorkQueue* queue,
                       DeviceBackend* backend, int ordinal, std::function<Status()> work,
                       std::shared_ptr<Event> done, std::function<Status(Status)> then);

}  // namespace kiln::runtime
