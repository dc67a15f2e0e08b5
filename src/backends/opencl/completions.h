// The OpenCL backend's asynchronous queue completions
// (runtime::DeviceBackend::Completion): a marker enqueued after a run's
// kernels, whose completion callback (on the driver's thread) hands the
// run's `done` to a thread of the backend's own, since OpenCL forbids
// blocking calls in a callback and `done` fires Kiln's continuations.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "backends/opencl/driver.h"
#include "runtime/device_backend.h"

namespace kiln::backends::opencl {

class Completions : public std::enable_shared_from_this<Completions> {
 public:
  explicit Completions(std::shared_ptr<Context> context);
  // Waits for every completion handed out (Synchronize), then stops.
  ~Completions();
  Completions(const Completions&) = delete;
  Completions& operator=(const Completions&) = delete;

  // The completion of everything enqueued on the context's queue so far.
  StatusOr<std::shared_ptr<runtime::QueueEvent>> Mark();
  // Blocks until every completion handed out has called its `done`;
  // returns how many have in all.
  uint64_t Synchronize();

 private:
  class Event;
  struct Fired {
    cl_event event;
    cl_int status;  // CL_COMPLETE, or the command's negative error code
    std::function<void(Status)> done;
  };
  // Watches `event`: once it completes, `done` runs on the thread.
  void Watch(cl_event event, std::function<void(Status)> done);
  static void CL_CALLBACK OnEvent(cl_event event, cl_int status, void* user);
  void Post(Fired fired);
  void Loop();

  std::shared_ptr<Context> context_;
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<Fired> fired_;
  uint64_t watched_ = 0, delivered_ = 0;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace kiln::backends::opencl
