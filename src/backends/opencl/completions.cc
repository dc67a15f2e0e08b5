#include "backends/opencl/completions.h"

#include <utility>

namespace kiln::backends::opencl {

// The marker is enqueued when a caller asks to be called back: a caller
// that waits (Wait) costs the queue only a clFinish. Either marks a point
// at or after the run's work, which the in-order queue completes after it.
class Completions::Event final : public runtime::QueueEvent {
 public:
  explicit Event(std::shared_ptr<Completions> owner) : owner_(std::move(owner)) {}

  void OnDone(std::function<void(Status)> done) override {
    if (used_) {
      done(FailedPrecondition("OpenCL: a queue completion was waited for twice"));
      return;
    }
    used_ = true;
    StatusOr<cl_event> marker = owner_->context_->Marker();
    Status flushed = marker.ok() ? owner_->context_->Flush("a queue marker") : marker.status();
    if (!flushed.ok()) {
      if (marker.ok()) owner_->context_->Release(*marker);
      done(std::move(flushed));
      return;
    }
    owner_->Watch(*marker, std::move(done));
  }

  Status Wait() override {
    if (used_) return FailedPrecondition("OpenCL: a queue completion was waited for twice");
    used_ = true;
    return owner_->context_->Finish("the queue's work");
  }

 private:
  std::shared_ptr<Completions> owner_;
  bool used_ = false;
};

Completions::Completions(std::shared_ptr<Context> context)
    : context_(std::move(context)), thread_([this] { Loop(); }) {}

Completions::~Completions() {
  Synchronize();
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  // The last reference may go on the thread itself (a `done` holding it).
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

StatusOr<std::shared_ptr<runtime::QueueEvent>> Completions::Mark() {
  return std::shared_ptr<runtime::QueueEvent>(std::make_shared<Event>(shared_from_this()));
}

// The callback's argument: the watcher and the run's `done`.
struct Watched {
  Completions* owner;
  std::function<void(Status)> done;
};

void Completions::Watch(cl_event event, std::function<void(Status)> done) {
  {
    std::lock_guard lock(mutex_);
    ++watched_;
  }
  auto* watched = new Watched{this, std::move(done)};
  Status registered = context_->OnComplete(event, &Completions::OnEvent, watched);
  if (!registered.ok()) {
    // Without a callback, the event is waited for here.
    Status finished = context_->Finish("a queue marker");
    std::function<void(Status)> run = std::move(watched->done);
    delete watched;
    Post({event, finished.ok() ? CL_COMPLETE : CL_OUT_OF_RESOURCES, std::move(run)});
  }
}

void CL_CALLBACK Completions::OnEvent(cl_event event, cl_int status, void* user) {
  auto* watched = static_cast<Watched*>(user);
  Completions* owner = watched->owner;
  std::function<void(Status)> done = std::move(watched->done);
  delete watched;
  owner->Post({event, status, std::move(done)});
}

void Completions::Post(Fired fired) {
  {
    std::lock_guard lock(mutex_);
    fired_.push_back(std::move(fired));
  }
  wake_.notify_one();
}

void Completions::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !fired_.empty(); });
    if (fired_.empty()) return;  // stopping, with nothing left
    Fired fired = std::move(fired_.front());
    fired_.pop_front();
    lock.unlock();
    context_->Release(fired.event);
    Status status = fired.status == CL_COMPLETE
                        ? Status::Ok()
                        : Internal("OpenCL: a queued kernel or copy failed: ",
                                   ErrorName(fired.status));
    fired.done(std::move(status));
    fired.done = nullptr;
    lock.lock();
    ++delivered_;
    idle_.notify_all();
  }
}

uint64_t Completions::Synchronize() {
  (void)context_->Finish("a synchronization");
  std::unique_lock lock(mutex_);
  idle_.wait(lock, [&] { return delivered_ == watched_; });
  return delivered_;
}

}  // namespace kiln::backends::opencl
