#include "runtime/cross_process.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>

#include <cstdlib>
#include <cstring>
#include <set>

#include "base/env.h"

namespace kiln::runtime {
namespace {

// Gloo's rendezvous over the job's key-value store, under one prefix.
// Gloo's Store reports failures by throwing; so does this adapter
// (gloo::IoException), and CrossProcessCollectives catches them.
class GlooStore final : public gloo::rendezvous::Store {
 public:
  GlooStore(std::shared_ptr<KeyValueStore> store, std::string prefix,
            std::chrono::milliseconds timeout)
      : store_(std::move(store)), prefix_(std::move(prefix)), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    Status status = store_->Put(prefix_ + key, std::string_view(data.data(), data.size()));
    if (!status.ok()) throw gloo::IoException(std::string(status.message()));
  }
  std::vector<char> get(const std::string& key) override {
    StatusOr<std::string> value = Read(key, timeout_);
    return std::vector<char>(value->begin(), value->end());
  }
  void wait(const std::vector<std::string>& keys) override { wait(keys, timeout_); }
  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    for (const std::string& key : keys) (void)Read(key, timeout);
  }

  // The key (Gloo's: a rank's number) whose read failed, and why.
  const std::string& failed_key() const { return failed_key_; }
  const Status& failure() const { return failure_; }

 private:
  StatusOr<std::string> Read(const std::string& key, std::chrono::milliseconds timeout) {
    StatusOr<std::string> value = store_->Get(prefix_ + key, timeout);
    if (!value.ok()) {
      failed_key_ = key;
      failure_ = value.status();
      throw gloo::IoException(std::string(value.status().message()));
    }
    return value;
  }

 private:
  std::shared_ptr<KeyValueStore> store_;
  std::string prefix_;
  std::chrono::milliseconds timeout_;
  std::string failed_key_;
  Status failure_;
};

// Up to this many bytes per member (an all-reduce's or reduce-scatter's
// operand, an all-gather's part) the members exchange directly: every one
// sends to every other at once and folds what it receives, one round
// whatever the clique's size. Above it, rings (n - 1 rounds, each member
// sending about its operand's size in all). Each round costs a few thread
// wake-ups per process; on a host whose cores the processes share, those
// dominate small collectives.
constexpr size_t kDirectBytes = 256 << 10;

// A 16-byte element (c128) for Gloo, which counts elements by type.
struct alignas(16) SixteenBytes {
  uint64_t half[2];
};

// The slot prefix of Kiln's own exchanges (Gloo's algorithms use others;
// a communicator runs one operation at a time anyway).
constexpr uint8_t kKilnSlot = 0x4b;

// Waits for `count` sends posted on `sending` and `count` receives posted
// on `receiving` (the same buffer or two).
void AwaitAll(gloo::transport::UnboundBuffer& sending, gloo::transport::UnboundBuffer& receiving,
              size_t count, std::chrono::milliseconds timeout) {
  for (size_t i = 0; i < count; ++i) {
    if (!receiving.waitRecv(timeout)) throw gloo::IoException("a receive was aborted");
  }
  for (size_t i = 0; i < count; ++i) {
    if (!sending.waitSend(timeout)) throw gloo::IoException("a send was aborted");
  }
}

std::string JoinIds(std::span<const int64_t> ids, const char* separator) {
  std::string text;
  for (size_t i = 0; i < ids.size(); ++i) text += StrCat(i > 0 ? separator : "", ids[i]);
  return text;
}

}  // namespace

struct CrossProcessCollectives::Communicator {
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::string prefix;  // its rendezvous keys' prefix, unique in the job
  uint32_t next_tag = 0;
};

CrossProcessCollectives::CrossProcessCollectives(JobOptions job, int devices_per_process,
                                                 std::shared_ptr<gloo::transport::Device> device)
    : job_(std::move(job)), devices_per_process_(devices_per_process), device_(std::move(device)) {}

CrossProcessCollectives::~CrossProcessCollectives() = default;

StatusOr<std::unique_ptr<CrossProcessCollectives>> CrossProcessCollectives::Create(
    const JobOptions& job, int devices_per_process) {
  gloo::transport::tcp::attr attr;
  if (auto hostname = GetEnv("KILN_GLOO_HOSTNAME")) {
    attr.hostname = *hostname;
  } else if (auto iface = GetEnv("KILN_GLOO_IFACE")) {
    attr.iface = *iface;
  }
  std::shared_ptr<gloo::transport::Device> device;
  try {
    device = gloo::transport::tcp::CreateDevice(attr);
  } catch (const std::exception& error) {
    return Unavailable("Gloo could not open a TCP device on ",
                       attr.hostname.empty()
                           ? (attr.iface.empty() ? "this host's name" : "interface " + attr.iface)
                           : attr.hostname,
                       ": ", error.what(),
                       " (set KILN_GLOO_HOSTNAME to this host's address or KILN_GLOO_IFACE to "
                       "its network interface)");
  }
  auto collectives = std::unique_ptr<CrossProcessCollectives>(
      new CrossProcessCollectives(job, devices_per_process, std::move(device)));
  return collectives;
}

void CrossProcessCollectives::UpdateProcessInfo(std::vector<ProcessInfo> infos) {
  std::lock_guard lock(mutex_);
  processes_ = std::move(infos);
}

std::string CrossProcessCollectives::ProcessStates(std::span<const int64_t> devices) {
  std::set<int> clique;
  for (int64_t device : devices) clique.insert(ProcessOf(device));
  std::lock_guard lock(mutex_);
  std::string text;
  for (const ProcessInfo& info : processes_) {
    if (info.state == "connected" || clique.count(info.process) == 0) continue;
    text += StrCat("; the job reports process ", info.process, " ", info.state,
                   info.error.empty() ? "" : StrCat(" (", info.error, ")"));
  }
  return text;
}

std::string CrossProcessCollectives::Missing(std::span<const int64_t> devices,
                                             const std::string& prefix, bool late) {
  // Every survivor said so under the communicator's prefix (Failed); look
  // for the others for a few seconds: whoever does not answer is gone.
  std::set<int> clique;
  for (int64_t device : devices) clique.insert(ProcessOf(device));
  std::vector<int64_t> missing;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  for (int process : clique) {
    if (process == job_.node_id) continue;
    const auto left = std::max<std::chrono::milliseconds>(
        std::chrono::milliseconds(50),
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                              std::chrono::steady_clock::now()));
    if (!job_.store->Get(StrCat(prefix, "alive/", process), left).ok()) missing.push_back(process);
  }
  if (missing.empty()) {
    return late ? "every process answered afterwards, so one was slower than the time limit"
                : "a connection to a peer broke, though every process still answers";
  }
  return StrCat(missing.size() == 1 ? "process " : "processes ", JoinIds(missing, ", "),
                late ? " did not come" : (missing.size() == 1 ? " is gone" : " are gone"),
                " (it did not answer within 3 s of the failure)");
}

std::string CrossProcessCollectives::CliqueText(std::span<const int64_t> devices) const {
  std::set<int64_t> processes;
  for (int64_t device : devices) processes.insert(ProcessOf(device));
  std::vector<int64_t> list(processes.begin(), processes.end());
  return StrCat("devices [", JoinIds(devices, ", "), "] (processes [", JoinIds(list, ", "), "])");
}

StatusOr<std::shared_ptr<CrossProcessCollectives::Communicator>>
CrossProcessCollectives::CommunicatorFor(std::span<const int64_t> devices, size_t rank,
                                         std::chrono::milliseconds timeout) {
  const std::pair<std::vector<int64_t>, size_t> key(
      std::vector<int64_t>(devices.begin(), devices.end()), rank);
  int generation = 0;
  {
    std::lock_guard lock(mutex_);
    auto found = communicators_.find(key);
    if (found != communicators_.end()) return found->second;
    generation = generations_[key]++;
  }
  // Connecting waits for the clique's other members, which connect from
  // their own threads (and processes): not under the lock.
  auto communicator = std::make_shared<Communicator>();
  try {
    auto context = std::make_shared<gloo::rendezvous::Context>(static_cast<int>(rank),
                                                               static_cast<int>(devices.size()));
    context->setTimeout(timeout);
    communicator->prefix = StrCat("kiln/", job_.incarnation, "/gloo/", JoinIds(devices, ","), "/",
                                  generation, "/");
    GlooStore store(job_.store, communicator->prefix, timeout);
    try {
      context->connectFullMesh(store, device_);
    } catch (const std::exception& error) {
      // A member that never published its address did not come.
      const char* digits = store.failed_key().c_str();
      char* end = nullptr;
      const long member = std::strtol(digits, &end, 10);
      if (!store.failure().ok() && end != digits && *end == '\0' && member >= 0 &&
          static_cast<size_t>(member) < devices.size()) {
        return Status(store.failure().code(),
                      StrCat("connecting ", CliqueText(devices), " through Gloo: device ",
                             devices[static_cast<size_t>(member)], " of process ",
                             ProcessOf(devices[static_cast<size_t>(member)]),
                             " did not join within ", timeout.count() / 1000,
                             " s (KILN_COLLECTIVE_TIMEOUT_SECONDS): ", store.failure().message()));
      }
      throw;
    }
    communicator->context = std::move(context);
  } catch (const std::exception& error) {
    return Unavailable("connecting ", CliqueText(devices), " through Gloo failed: ", error.what());
  }
  std::lock_guard lock(mutex_);
  communicators_[key] = communicator;
  return communicator;
}

Status CrossProcessCollectives::Failed(std::span<const int64_t> devices, size_t rank,
                                       Communicator& communicator, const std::exception& error,
                                       std::chrono::milliseconds timeout, std::string_view what) {
  // Say this process lives, then close the communicator: its peers still
  // waiting fail at once (their connections close) and find the answer.
  Status said = job_.store->Put(StrCat(communicator.prefix, "alive/", job_.node_id), "1");
  (void)said;  // another device of this process may have said it already
  communicator.context.reset();
  {
    std::lock_guard lock(mutex_);
    communicators_.erase({std::vector<int64_t>(devices.begin(), devices.end()), rank});
  }
  const std::string message = error.what();
  const bool late = message.find("imed out") != std::string::npos;
  return Status(late ? StatusCode::kDeadlineExceeded : StatusCode::kUnavailable,
                StrCat(what, " of ", CliqueText(devices), " on device ", devices[rank],
                       " (process ", job_.node_id, ") failed",
                       late ? StrCat(" after ", timeout.count() / 1000,
                                     " s (KILN_COLLECTIVE_TIMEOUT_SECONDS)")
                            : std::string(),
                       ": ", Missing(devices, communicator.prefix, late), " (Gloo: ", message, ")",
                       ProcessStates(devices)));
}

Status CrossProcessCollectives::Run(std::span<const int64_t> devices, size_t rank,
                                    std::chrono::milliseconds timeout, std::string_view what,
                                    FunctionRef<Status(Communicator&)> operation) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<Communicator> communicator,
                        CommunicatorFor(devices, rank, timeout));
  try {
    return operation(*communicator);
  } catch (const std::exception& error) {
    return Failed(devices, rank, *communicator, error, timeout, what);
  }
}

Status CrossProcessCollectives::DirectReduce(Communicator& communicator, size_t rank,
                                             ElementType type, kernels::BinaryOp op, void* data,
                                             int64_t count, bool scatter,
                                             std::chrono::milliseconds timeout) {
  // Every member sends to every other what that one keeps (all of `data`,
  // or its block when scattering) and folds what it receives with its own,
  // in member order: every member of an all-reduce computes the same sum
  // in the same order, so their results agree to the bit.
  gloo::Context& context = *communicator.context;
  const auto members = static_cast<size_t>(context.size);
  const size_t element_bytes = GetElementTypeInfo(type).storage_bytes;
  const int64_t kept = scatter ? count / static_cast<int64_t>(members) : count;
  const size_t kept_bytes = static_cast<size_t>(kept) * element_bytes;
  if (kept == 0 || members < 2) return Status::Ok();
  auto* base = static_cast<uint8_t*>(data);
  // Member m's contribution at m * kept_bytes (this member's own is read
  // where it lies).
  auto incoming = std::make_unique_for_overwrite<uint8_t[]>(kept_bytes * members);
  auto whole = context.createUnboundBuffer(base, static_cast<size_t>(count) * element_bytes);
  auto received = context.createUnboundBuffer(incoming.get(), kept_bytes * members);
  const uint64_t slot = gloo::Slot::build(kKilnSlot, communicator.next_tag++);
  for (size_t peer = 0; peer < members; ++peer) {
    if (peer == rank) continue;
    whole->send(static_cast<int>(peer), slot, scatter ? peer * kept_bytes : 0, kept_bytes);
    received->recv(static_cast<int>(peer), slot, peer * kept_bytes, kept_bytes);
  }
  AwaitAll(*whole, *received, members - 1, timeout);
  uint8_t* own = base + (scatter ? rank * kept_bytes : 0);
  auto part = [&](size_t m) -> const uint8_t* {
    return m == rank ? own : incoming.get() + m * kept_bytes;
  };
  // Fold into member 0's slot of `incoming` (or member 1's when member 0
  // is this one), then copy over this member's part.
  uint8_t* sum = incoming.get() + (rank == 0 ? kept_bytes : 0);
  KILN_RETURN_IF_ERROR(kernels::Binary(op, type, part(0), part(1), sum, kept));
  for (size_t m = 2; m < members; ++m) {
    KILN_RETURN_IF_ERROR(kernels::Binary(op, type, sum, part(m), sum, kept));
  }
  std::memcpy(own, sum, kept_bytes);
  return Status::Ok();
}

Status CrossProcessCollectives::AllReduce(std::span<const int64_t> devices, size_t rank,
                                          ElementType type, kernels::BinaryOp op, void* data,
                                          int64_t count, std::chrono::milliseconds timeout,
                                          std::string_view what) {
  const size_t element_bytes = GetElementTypeInfo(type).storage_bytes;
  if (static_cast<size_t>(count) * element_bytes <= kDirectBytes) {
    return Run(devices, rank, timeout, what, [&](Communicator& communicator) {
      return DirectReduce(communicator, rank, type, op, data, count, /*scatter=*/false, timeout);
    });
  }
  return Run(devices, rank, timeout, what, [&](Communicator& communicator) {
    gloo::AllreduceOptions options(communicator.context);
    const auto elements = static_cast<size_t>(count);
    // Gloo counts elements of the pointer's type: one of the element's size.
    switch (element_bytes) {
      case 1: options.setOutput(static_cast<uint8_t*>(data), elements); break;
      case 2: options.setOutput(static_cast<uint16_t*>(data), elements); break;
      case 4: options.setOutput(static_cast<uint32_t*>(data), elements); break;
      case 8: options.setOutput(static_cast<uint64_t*>(data), elements); break;
      default: options.setOutput(static_cast<SixteenBytes*>(data), elements); break;
    }
    options.setReduceFunction([op, type](void* out, const void* lhs, const void* rhs, size_t n) {
      Status folded = kernels::Binary(op, type, lhs, rhs, out, static_cast<int64_t>(n));
      if (!folded.ok()) throw std::runtime_error(std::string(folded.message()));
    });
    options.setTag(communicator.next_tag++);
    options.setTimeout(timeout);
    gloo::allreduce(options);
    return Status::Ok();
  });
}

Status CrossProcessCollectives::ReduceScatter(std::span<const int64_t> devices, size_t rank,
                                              ElementType type, kernels::BinaryOp op, void* data,
                                              int64_t count, std::chrono::milliseconds timeout,
                                              std::string_view what) {
  const size_t members = devices.size();
  if (count % static_cast<int64_t>(members) != 0) {
    return Internal("ReduceScatter of ", count, " elements in ", members, " blocks");
  }
  if (static_cast<size_t>(count) * GetElementTypeInfo(type).storage_bytes <= kDirectBytes) {
    return Run(devices, rank, timeout, what, [&](Communicator& communicator) {
      return DirectReduce(communicator, rank, type, op, data, count, /*scatter=*/true, timeout);
    });
  }
  return Run(devices, rank, timeout, what, [&](Communicator& communicator) -> Status {
    const int64_t block = count / static_cast<int64_t>(members);
    const size_t block_bytes = static_cast<size_t>(block) * GetElementTypeInfo(type).storage_bytes;
    auto* base = static_cast<uint8_t*>(data);
    auto incoming = std::make_unique_for_overwrite<uint8_t[]>(block_bytes);
    gloo::Context& context = *communicator.context;
    auto whole = context.createUnboundBuffer(base, block_bytes * members);
    auto received = context.createUnboundBuffer(incoming.get(), block_bytes);
    const int next = static_cast<int>((rank + 1) % members);
    const int previous = static_cast<int>((rank + members - 1) % members);
    // One slot per operation: messages between two members of one slot
    // arrive in order, and a member sends step s + 1 only after step s.
    const uint64_t slot = gloo::Slot::build(kKilnSlot, communicator.next_tag++);
    // Step s: send the partial of block rank - s - 1 on, fold the partial
    // of block rank - s - 2 in; after n - 1 steps block `rank` is whole.
    for (size_t step = 0; step + 1 < members; ++step) {
      const size_t sent = (rank + 2 * members - step - 1) % members;
      const size_t folded = (rank + 2 * members - step - 2) % members;
      whole->send(next, slot, sent * block_bytes, block_bytes);
      received->recv(previous, slot, 0, block_bytes);
      if (!received->waitRecv(timeout) || !whole->waitSend(timeout)) {
        throw gloo::IoException("reduce-scatter step aborted");
      }
      uint8_t* target = base + folded * block_bytes;
      KILN_RETURN_IF_ERROR(kernels::Binary(op, type, target, incoming.get(), target, block));
    }
    return Status::Ok();
  });
}

Status CrossProcessCollectives::AllGather(std::span<const int64_t> devices, size_t rank,
                                          std::span<const uint8_t> mine, std::span<uint8_t> all,
                                          std::chrono::milliseconds timeout,
                                          std::string_view what) {
  if (all.size() != mine.size() * devices.size()) {
    return Internal("AllGather of ", mine.size(), " bytes from ", devices.size(), " members into ",
                    all.size());
  }
  if (mine.size() <= kDirectBytes) {
    return Run(devices, rank, timeout, what, [&](Communicator& communicator) {
      // Every member sends its bytes to every other and receives theirs
      // at their places.
      gloo::Context& context = *communicator.context;
      const size_t members = devices.size();
      uint8_t* at = all.data() + rank * mine.size();
      if (mine.data() != at && !mine.empty()) std::memmove(at, mine.data(), mine.size());
      if (mine.empty()) return Status::Ok();
      auto whole = context.createUnboundBuffer(all.data(), all.size());
      const uint64_t slot = gloo::Slot::build(kKilnSlot, communicator.next_tag++);
      for (size_t peer = 0; peer < members; ++peer) {
        if (peer == rank) continue;
        whole->send(static_cast<int>(peer), slot, rank * mine.size(), mine.size());
        whole->recv(static_cast<int>(peer), slot, peer * mine.size(), mine.size());
      }
      AwaitAll(*whole, *whole, members - 1, timeout);
      return Status::Ok();
    });
  }
  return Run(devices, rank, timeout, what, [&](Communicator& communicator) {
    gloo::AllgatherOptions options(communicator.context);
    // Without an input Gloo gathers in place: this member's bytes are
    // already at their place in `all`.
    if (mine.data() != all.data() + rank * mine.size()) {
      options.setInput(const_cast<uint8_t*>(mine.data()), mine.size());
    }
    options.setOutput(all.data(), all.size());
    options.setTag(communicator.next_tag++);
    options.setTimeout(timeout);
    gloo::allgather(options);
    return Status::Ok();
  });
}

}  // namespace kiln::runtime
