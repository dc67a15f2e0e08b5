// An in-order queue of tasks run by one worker thread: a device's stream.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace kiln::runtime {

class WorkQueue {
 public:
  explicit WorkQueue(std::string name);
  // Runs every task already enqueued, then joins the worker.
  ~WorkQueue();
  WorkQueue(const WorkQueue&) = delete;
  WorkQueue& operator=(const WorkQueue&) = delete;

  // Appends a task; tasks run one at a time in enqueue order. Tasks must not throw.
  void Enqueue(std::function<void()> task);
  const std::string& name() const { return name_; }

 private:
  void Run();

  std::string name_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::thread worker_;
};

}  // namespace kiln::runtime
