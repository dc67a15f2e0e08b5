#include "runtime/collectives.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <thread>

#include "base/env.h"
#include "kernels/parallel.h"
#include "runtime/cross_process.h"

namespace kiln::runtime {
namespace {

std::string IdsText(std::span<const int64_t> ids) {
  std::string text = "[";
  for (size_t i = 0; i < ids.size(); ++i) text += StrCat(i > 0 ? ", " : "", ids[i]);
  return text + "]";
}

}  // namespace

std::chrono::milliseconds CollectiveTimeout() {
  if (auto value = GetEnv("KILN_COLLECTIVE_TIMEOUT_SECONDS")) {
    auto parsed = ParseInt64(*value, "KILN_COLLECTIVE_TIMEOUT_SECONDS", 0, 24 * 3600);
    if (parsed.ok()) return std::chrono::seconds(*parsed);
  }
  return std::chrono::seconds(300);
}

// One process's view: counts its collectives so that the n-th of each
// member meet.
class Launch::MemberImpl final : public compiler::DeviceCollectives {
 public:
  MemberImpl(Launch* launch, int64_t process) : launch_(launch), process_(process) {}

  Status Meet(std::span<const int64_t> group, std::span<void* const> mine,
              std::span<const int64_t> bytes,
              FunctionRef<Status(std::span<void* const> all)> work) override {
    const int64_t sequence = sequence_++;
    if (launch_->link_.transport != nullptr && !launch_->AllLocal(group)) {
      return launch_->MeetAcross(process_, sequence, group, mine, bytes, work);
    }
    return launch_->Meet(process_, sequence, group, mine, work);
  }

  bool AllInProcess(std::span<const int64_t> group) override {
    return launch_->link_.transport == nullptr || launch_->AllLocal(group);
  }

  // Between processes, a ring (Gloo's all-reduce) moves 2(n-1)/n of the
  // data per member where gathering every operand moves n-1 times it.
  bool ReducesInPlace(std::span<const int64_t> group, ElementType, kernels::BinaryOp) override {
    return launch_->link_.transport != nullptr && !launch_->AllLocal(group);
  }
  Status AllReduce(std::span<const int64_t> group, ElementType type, kernels::BinaryOp op,
                   void* data, int64_t count) override {
    return launch_->ReduceAcross(process_, sequence_++, group, type, op, data, count,
                                 /*scatter=*/false);
  }
  Status ReduceScatter(std::span<const int64_t> group, ElementType type, kernels::BinaryOp op,
                       void* data, int64_t count) override {
    return launch_->ReduceAcross(process_, sequence_++, group, type, op, data, count,
                                 /*scatter=*/true);
  }
  // Between processes, Gloo gathers straight into the result.
  bool GathersInPlace(std::span<const int64_t> group) override {
    return launch_->link_.transport != nullptr && !launch_->AllLocal(group);
  }
  Status AllGather(std::span<const int64_t> group, const void* data, int64_t bytes,
                   void* out) override {
    return launch_->AllGatherAcross(process_, sequence_++, group, data, bytes, out);
  }

 private:
  Launch* launch_;
  int64_t process_;
  int64_t sequence_ = 0;
};

struct Launch::Meeting {
  std::vector<int64_t> group;
  size_t width = 0;
  std::vector<void*> pointers;  // member m's pointer i at m * width + i
  size_t arrived = 0;
  size_t finished = 0;  // members whose work returned
  size_t left = 0;      // members out of the meeting
};

Launch::Launch(std::vector<int64_t> processes, std::chrono::milliseconds timeout)
    : processes_(std::move(processes)), timeout_(timeout) {
  for (int64_t process : processes_) {
    members_.push_back(std::make_unique<MemberImpl>(this, process));
  }
}

Launch::Launch(std::vector<int64_t> processes, CrossProcessLink link,
               std::chrono::milliseconds timeout)
    : Launch(std::move(processes), timeout) {
  link_ = std::move(link);
}

Launch::~Launch() = default;

bool Launch::AllLocal(std::span<const int64_t> group) const {
  for (int64_t peer : group) {
    if (std::find(processes_.begin(), processes_.end(), peer) == processes_.end()) return false;
  }
  return true;
}

Status Launch::Across(int64_t sequence, FunctionRef<Status(const std::string& what)> transfer) {
  {
    std::lock_guard lock(mutex_);
    if (!aborted_.ok()) return aborted_;
  }
  Status status = transfer(StrCat("collective #", sequence + 1));
  if (!status.ok()) Abort(status);
  return status;
}

StatusOr<Launch::Tiers> Launch::TiersOf(int64_t process, int64_t sequence,
                                        std::span<const int64_t> group) const {
  Tiers tiers;
  tiers.group.rank = group.size();
  std::vector<int> order;  // processes in the order of their first member
  std::vector<size_t> counts;
  bool consecutive = true;
  for (size_t m = 0; m < group.size(); ++m) {
    const auto flattened = static_cast<size_t>(group[m]);
    if (group[m] < 0 || flattened >= link_.device_of.size()) {
      return InvalidArgument("collective #", sequence + 1, " meets process ", group[m],
                             " but the program runs ", link_.device_of.size(), " processes");
    }
    const int64_t device = link_.device_of[flattened];
    tiers.group.devices.push_back(device);
    if (group[m] == process) {
      tiers.group.rank = m;
      tiers.local_rank = tiers.local.size();
    }
    if (std::find(processes_.begin(), processes_.end(), group[m]) != processes_.end()) {
      tiers.local.push_back(group[m]);
    }
    const int owner = link_.transport->ProcessOf(device);
    const auto found = std::find(order.begin(), order.end(), owner);
    if (found == order.end()) {
      order.push_back(owner);
      counts.push_back(1);
      tiers.leaders.devices.push_back(device);
    } else {
      consecutive = consecutive && found + 1 == order.end();
      ++counts[static_cast<size_t>(found - order.begin())];
    }
  }
  if (tiers.group.rank == group.size()) {
    return Internal("process ", process, " is not in its own group ", IdsText(group));
  }
  const int here = link_.transport->ProcessOf(tiers.group.devices[tiers.group.rank]);
  tiers.leaders.rank = static_cast<size_t>(std::find(order.begin(), order.end(), here) -
                                           order.begin());
  if (counts[tiers.leaders.rank] != tiers.local.size()) {
    return FailedPrecondition("collective #", sequence + 1, " meets ", counts[tiers.leaders.rank],
                              " devices of this process, but this launch runs ", tiers.local.size(),
                              " of them (", IdsText(tiers.local),
                              "); run the program on all its devices here at once");
  }
  tiers.blocked = consecutive && std::all_of(counts.begin(), counts.end(),
                                             [&](size_t count) { return count == counts[0]; });
  return tiers;
}

Status Launch::Tiered(
    int64_t process, int64_t sequence, const Tiers& tiers, std::span<void* const> mine,
    FunctionRef<Status(std::span<void* const> all)> gather,
    FunctionRef<Status(std::span<void* const> all, const std::string& what)> transfer,
    FunctionRef<Status(std::span<void* const> all)> scatter) {
  if (tiers.local.size() == 1) {
    KILN_RETURN_IF_ERROR(gather(mine));
    return Across(sequence, [&](const std::string& what) { return transfer(mine, what); });
  }
  const bool leader = tiers.local_rank == 0;
  KILN_RETURN_IF_ERROR(Meet(process, sequence, tiers.local, mine, gather, /*phase=*/1));
  // The others wait in the meeting while the leader transfers; when it
  // fails, the launch is aborted before they leave, and the next meeting
  // fails them with its status.
  KILN_RETURN_IF_ERROR(Meet(
      process, sequence, tiers.local, mine,
      [&](std::span<void* const> all) -> Status {
        if (!leader) return Status::Ok();
        return Across(sequence, [&](const std::string& what) { return transfer(all, what); });
      },
      /*phase=*/2));
  return Meet(
      process, sequence, tiers.local, mine,
      [&](std::span<void* const> all) { return leader ? Status::Ok() : scatter(all); },
      /*phase=*/3);
}

Status Launch::ReduceAcross(int64_t process, int64_t sequence, std::span<const int64_t> group,
                            ElementType type, kernels::BinaryOp op, void* data, int64_t count,
                            bool scatter) {
  KILN_ASSIGN_OR_RETURN(Tiers tiers, TiersOf(process, sequence, group));
  const auto element = static_cast<int64_t>(GetElementTypeInfo(type).storage_bytes);
  const auto members = static_cast<int64_t>(tiers.local.size());
  // Blocks of one process's members lie together in the leader's operand:
  // a reduce-scatter between leaders leaves each leader its process's.
  // Otherwise the leaders all-reduce the whole operand.
  const bool ring = scatter && tiers.blocked;
  void* mine[] = {data};
  return Tiered(
      process, sequence, tiers, mine,
      [&](std::span<void* const> all) -> Status {
        // Every member folds its slice of the members' operands into the
        // leader's (reading only that slice of each).
        const auto rank = static_cast<int64_t>(tiers.local_rank);
        const int64_t begin = count * rank / members;
        const int64_t end = count * (rank + 1) / members;
        if (end == begin) return Status::Ok();
        auto* into = static_cast<uint8_t*>(all[0]) + begin * element;
        for (int64_t m = 1; m < members; ++m) {
          const auto* peer = static_cast<const uint8_t*>(all[static_cast<size_t>(m)]);
          KILN_RETURN_IF_ERROR(kernels::Binary(op, type, into, peer + begin * element, into,
                                               end - begin));
        }
        return Status::Ok();
      },
      [&](std::span<void* const> all, const std::string& what) {
        const Clique& leaders = tiers.leaders;
        return ring ? link_.transport->ReduceScatter(leaders.devices, leaders.rank, type, op,
                                                     all[0], count, timeout_, what)
                    : link_.transport->AllReduce(leaders.devices, leaders.rank, type, op, all[0],
                                                 count, timeout_, what);
      },
      [&](std::span<void* const> all) -> Status {
        const auto* result = static_cast<const uint8_t*>(all[0]);
        if (!scatter) {
          std::memcpy(data, result, static_cast<size_t>(count * element));
          return Status::Ok();
        }
        const int64_t block = count / static_cast<int64_t>(group.size()) * element;
        const int64_t at = static_cast<int64_t>(tiers.group.rank) * block;
        std::memcpy(static_cast<uint8_t*>(data) + at, result + at, static_cast<size_t>(block));
        return Status::Ok();
      });
}

Status Launch::AllGatherAcross(int64_t process, int64_t sequence, std::span<const int64_t> group,
                               const void* data, int64_t bytes, void* out) {
  KILN_ASSIGN_OR_RETURN(Tiers tiers, TiersOf(process, sequence, group));
  const auto size = static_cast<size_t>(bytes);
  const size_t total = size * group.size();
  if (!tiers.blocked) {
    // Processes' members interleave: every device is a rank of its own.
    return Across(sequence, [&](const std::string& what) {
      return link_.transport->AllGather(tiers.group.devices, tiers.group.rank,
                                        std::span(static_cast<const uint8_t*>(data), size),
                                        std::span(static_cast<uint8_t*>(out), total), timeout_,
                                        what);
    });
  }
  // Each member writes its bytes into the leader's result at its place;
  // the leaders gather their processes' parts in place.
  const size_t part = size * tiers.local.size();
  void* mine[] = {const_cast<void*>(data), out};
  return Tiered(
      process, sequence, tiers, mine,
      [&](std::span<void* const> all) -> Status {
        uint8_t* at = static_cast<uint8_t*>(all[1]) + tiers.group.rank * size;
        if (size > 0 && at != data) std::memmove(at, data, size);
        return Status::Ok();
      },
      [&](std::span<void* const> all, const std::string& what) {
        auto* result = static_cast<uint8_t*>(all[1]);
        const Clique& leaders = tiers.leaders;
        return link_.transport->AllGather(leaders.devices, leaders.rank,
                                          std::span(result + leaders.rank * part, part),
                                          std::span(result, total), timeout_, what);
      },
      [&](std::span<void* const> all) -> Status {
        if (total > 0) std::memcpy(out, all[1], total);
        return Status::Ok();
      });
}

Status Launch::MeetAcross(int64_t process, int64_t sequence, std::span<const int64_t> group,
                          std::span<void* const> mine, std::span<const int64_t> bytes,
                          FunctionRef<Status(std::span<void* const> all)> work) {
  // Each member's operands back to back, gathered into every member.
  std::vector<size_t> offsets;
  size_t width = 0;
  for (size_t i = 0; i < mine.size(); ++i) {
    offsets.push_back(width);
    width += static_cast<size_t>(bytes[i]);
  }
  // One operand is sent from where it lies; several are packed first.
  // (Buffers left uninitialized: they are overwritten whole.)
  std::unique_ptr<uint8_t[]> packed;
  const auto* sent = static_cast<const uint8_t*>(mine.empty() ? nullptr : mine[0]);
  if (mine.size() > 1) {
    packed = std::make_unique_for_overwrite<uint8_t[]>(width);
    for (size_t i = 0; i < mine.size(); ++i) {
      if (bytes[i] > 0) {
        std::memcpy(packed.get() + offsets[i], mine[i], static_cast<size_t>(bytes[i]));
      }
    }
    sent = packed.get();
  }
  auto gathered = std::make_unique_for_overwrite<uint8_t[]>(width * group.size());
  KILN_RETURN_IF_ERROR(AllGatherAcross(process, sequence, group, sent, static_cast<int64_t>(width),
                                       gathered.get()));
  const auto rank = static_cast<size_t>(std::find(group.begin(), group.end(), process) -
                                        group.begin());
  std::vector<void*> all(group.size() * mine.size());
  for (size_t m = 0; m < group.size(); ++m) {
    for (size_t i = 0; i < mine.size(); ++i) {
      all[m * mine.size() + i] = m == rank ? mine[i] : gathered.get() + m * width + offsets[i];
    }
  }
  return work(all);
}

compiler::DeviceCollectives* Launch::Member(int64_t process) {
  for (size_t i = 0; i < processes_.size(); ++i) {
    if (processes_[i] == process) return members_[i].get();
  }
  return nullptr;
}

void Launch::Abort(const Status& status) {
  std::lock_guard lock(mutex_);
  if (aborted_.ok()) {
    cause_ = status;
    aborted_ = Status(status.code(),
                      StrCat("another device's run of this launch failed: ", status.message()));
  }
  changed_.notify_all();
}

Status Launch::cause() {
  std::lock_guard lock(mutex_);
  return cause_;
}

Status Launch::Meet(int64_t process, int64_t sequence, std::span<const int64_t> group,
                    std::span<void* const> mine,
                    FunctionRef<Status(std::span<void* const> all)> work, int phase) {
  for (int64_t peer : group) {
    if (std::find(processes_.begin(), processes_.end(), peer) == processes_.end()) {
      return FailedPrecondition("collective #", sequence + 1, " of process ", process,
                                " meets processes ", IdsText(group), ", but process ", peer,
                                " is not run by this launch (it runs ", IdsText(processes_),
                                "); run the program on all its devices at once");
    }
  }
  const auto rank = static_cast<size_t>(std::find(group.begin(), group.end(), process) -
                                        group.begin());
  if (rank == group.size()) {
    return Internal("process ", process, " is not in its own group ", IdsText(group));
  }
  std::unique_lock lock(mutex_);
  if (!aborted_.ok()) return aborted_;
  const std::tuple<int64_t, int, int64_t> key(sequence, phase, group.front());
  std::shared_ptr<Meeting>& slot = meetings_[key];
  if (slot == nullptr) {
    slot = std::make_shared<Meeting>();
    slot->group.assign(group.begin(), group.end());
    slot->width = mine.size();
    slot->pointers.assign(group.size() * mine.size(), nullptr);
  }
  std::shared_ptr<Meeting> meeting = slot;
  if (!std::equal(group.begin(), group.end(), meeting->group.begin(), meeting->group.end()) ||
      meeting->width != mine.size()) {
    return InvalidArgument("the devices' programs disagree at collective #", sequence + 1,
                           ": process ", process, " meets ", IdsText(group), " with ", mine.size(),
                           " operands, another member expects ", IdsText(meeting->group), " with ",
                           meeting->width);
  }
  std::copy(mine.begin(), mine.end(), meeting->pointers.begin() + rank * mine.size());
  // Waiters need to know only when the last member comes (or an abort).
  if (++meeting->arrived == group.size()) changed_.notify_all();
  const auto deadline = std::chrono::steady_clock::now() + timeout_;
  while (meeting->arrived < group.size() && aborted_.ok()) {
    if (changed_.wait_until(lock, deadline) == std::cv_status::timeout &&
        meeting->arrived < group.size() && aborted_.ok()) {
      const Status late(StatusCode::kDeadlineExceeded,
                        StrCat("collective #", sequence + 1, " of processes ", IdsText(group), ": ",
                               meeting->arrived, " of ", group.size(), " arrived within ",
                               timeout_.count() / 1000,
                               " s (KILN_COLLECTIVE_TIMEOUT_SECONDS sets the wait)"));
      aborted_ = late;
      cause_ = late;
      changed_.notify_all();
      return late;
    }
  }
  if (meeting->arrived < group.size()) return aborted_;
  lock.unlock();
  Status status;
  {
    // The members work at once, each on its own thread: when they are as
    // many as the kernels' pool has threads, they already fill the cores,
    // and splitting each member's work again only adds hand-offs (1 MB
    // all-reduces of 4 devices on 2 cores: 0.45-0.5 ms split, ~0.4 not).
    std::optional<kernels::SerialKernelsScope> serial;
    if (static_cast<int64_t>(group.size()) >= kernels::NumThreads()) serial.emplace();
    status = work(meeting->pointers);
  }
  lock.lock();
  // Every member has arrived and is running its work, which ends: wait for
  // all of them (even on abort) so that nobody reuses memory a peer reads.
  if (++meeting->finished == group.size()) changed_.notify_all();
  changed_.wait(lock, [&] { return meeting->finished == group.size(); });
  if (++meeting->left == group.size()) meetings_.erase(key);
  return status;
}

namespace {

// send / recv with is_host_transfer between the grid's processes.
class ChannelHost final : public compiler::HostTransfer {
 public:
  explicit ChannelHost(compiler::DeviceFeeds* feeds) : feeds_(feeds) {}
  Status Send(int64_t channel, const Shape& shape, const void* data) override {
    return feeds_->Send(channel, std::span(&shape, 1), std::span(&data, 1));
  }
  Status Recv(int64_t channel, const Shape& shape, void* data) override {
    return feeds_->Recv(channel, std::span(&shape, 1), std::span(&data, 1));
  }

 private:
  compiler::DeviceFeeds* feeds_;
};

}  // namespace

void GridRunner::PushInfeed(std::span<const Shape> shapes, std::span<const void* const> data) {
  FeedEntry entry;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const auto* bytes = static_cast<const uint8_t*>(data[i]);
    entry.push_back({shapes[i], std::vector<uint8_t>(
                                    bytes, bytes + static_cast<size_t>(shapes[i].ByteSize()))});
  }
  feeds_.PushInfeed(0, std::move(entry));
}

Status GridRunner::RunAll(
    int64_t count, FunctionRef<Status(int64_t process, compiler::DeviceCollectives* collectives,
                                      compiler::DeviceFeeds* feeds, compiler::HostTransfer* host)>
                       run) {
  std::vector<int64_t> processes;
  for (int64_t p = 0; p < count; ++p) processes.push_back(p);
  Launch launch(std::move(processes));
  compiler::DeviceFeeds* feeds = feeds_.ForDevice(0);
  ChannelHost host(feeds);
  const std::chrono::milliseconds saved = feeds_.timeout();
  feeds_.set_timeout(std::max(saved, std::chrono::milliseconds(30000)));
  std::vector<Status> statuses(static_cast<size_t>(count));
  std::vector<std::thread> threads;
  for (int64_t p = 0; p < count; ++p) {
    threads.emplace_back([&, p] {
      Status status = run(p, launch.Member(p), feeds, &host);
      if (!status.ok()) launch.Abort(status);
      statuses[static_cast<size_t>(p)] = std::move(status);
    });
  }
  for (std::thread& thread : threads) thread.join();
  feeds_.set_timeout(saved);
  // The failure that aborted the others, named by its process.
  const Status cause = launch.cause();
  if (cause.ok()) return Status::Ok();
  for (int64_t p = 0; p < count; ++p) {
    const Status& status = statuses[static_cast<size_t>(p)];
    if (status.message() == cause.message()) {
      return Status(status.code(), StrCat("process ", p, ": ", status.message()));
    }
  }
  return cause;
}

}  // namespace kiln::runtime
