// Jobs of several processes, played by several clients in one test process
// that share an in-memory key-value store; collectives between them run on
// Gloo over loopback TCP, as between real processes.
#include "runtime/job.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "runtime/client.h"
#include "runtime/collectives_test_util.h"
#include "runtime/cross_process.h"

namespace kiln::runtime {
namespace {

// What jax.distributed's coordination service gives: write-once keys,
// blocking reads.
class MemoryStore final : public KeyValueStore {
 public:
  Status Put(std::string_view key, std::string_view value) override {
    std::lock_guard lock(mutex_);
    if (!values_.emplace(std::string(key), std::string(value)).second) {
      return Status(StatusCode::kAlreadyExists, StrCat("key ", key, " exists"));
    }
    changed_.notify_all();
    return Status::Ok();
  }
  StatusOr<std::string> Get(std::string_view key, std::chrono::milliseconds timeout) override {
    std::unique_lock lock(mutex_);
    const std::string name(key);
    if (!changed_.wait_for(lock, timeout, [&] { return values_.count(name) > 0; })) {
      return Status(StatusCode::kDeadlineExceeded, StrCat("no key ", key));
    }
    return values_[name];
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string> values_;
};

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { setenv(name, value, 1); }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

// Runs `body(node)` for nodes 0..count-1 at once (processes join together).
template <typename Body>
void ForEachNode(int count, Body body) {
  std::vector<std::thread> threads;
  for (int node = 0; node < count; ++node) threads.emplace_back([&, node] { body(node); });
  for (auto& thread : threads) thread.join();
}

JobOptions Node(int node, int count, std::shared_ptr<KeyValueStore> store) {
  JobOptions job;
  job.node_id = node;
  job.num_nodes = count;
  job.store = std::move(store);
  return job;
}

TEST(JobTest, ProcessesWithTheSameBuildAndDevicesAgree) {
  auto store = std::make_shared<MemoryStore>();
  std::vector<Status> statuses(3);
  ForEachNode(3, [&](int node) {
    JobOptions job = Node(node, 3, store);
    statuses[node] = AgreeOnTopology(job, 2, "kiln 0.1.0 abc");
  });
  for (const Status& status : statuses) EXPECT_TRUE(status.ok()) << status.ToString();
}

TEST(JobTest, ADifferentBuildIsNamedAtInitialization) {
  auto store = std::make_shared<MemoryStore>();
  std::vector<Status> statuses(2);
  ForEachNode(2, [&](int node) {
    JobOptions job = Node(node, 2, store);
    statuses[node] = AgreeOnTopology(job, 2, node == 0 ? "kiln A" : "kiln B");
  });
  EXPECT_EQ(statuses[0].code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(statuses[0].message().find("process 1 runs Kiln build 'kiln B' but process 0 runs "
                                       "'kiln A'"),
            std::string::npos)
      << statuses[0].ToString();
}

TEST(JobTest, ADifferentDeviceCountIsNamedAtInitialization) {
  auto store = std::make_shared<MemoryStore>();
  std::vector<Status> statuses(2);
  ForEachNode(2, [&](int node) {
    JobOptions job = Node(node, 2, store);
    statuses[node] = AgreeOnTopology(job, node == 0 ? 2 : 4, "kiln");
  });
  EXPECT_EQ(statuses[1].code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(statuses[1].message().find("process 0 has 2 Kiln devices but process 1 has 4"),
            std::string::npos)
      << statuses[1].ToString();
}

TEST(JobTest, AProcessThatNeverComesIsADeadline) {
  ScopedEnv wait("KILN_INIT_TIMEOUT_SECONDS", "1");
  auto store = std::make_shared<MemoryStore>();
  JobOptions job = Node(0, 2, store);
  Status status = AgreeOnTopology(job, 2, "kiln");
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_NE(status.message().find("for process 1's Kiln topology"), std::string::npos)
      << status.ToString();
}

TEST(JobTest, AJobWithoutAStoreIsAnError) {
  JobOptions job = Node(0, 2, nullptr);
  EXPECT_EQ(AgreeOnTopology(job, 2, "kiln").code(), StatusCode::kInvalidArgument);
}

TEST(JobTest, TheSecondClientOfAJobMeetsTheOthersSecondClient) {
  auto store = std::make_shared<MemoryStore>();
  for (int round = 0; round < 2; ++round) {
    std::vector<JobOptions> jobs = {Node(0, 2, store), Node(1, 2, store)};
    std::vector<Status> statuses(2);
    ForEachNode(2, [&](int node) { statuses[node] = AgreeOnTopology(jobs[node], 2, "kiln"); });
    for (int node = 0; node < 2; ++node) {
      ASSERT_TRUE(statuses[node].ok()) << statuses[node].ToString();
      EXPECT_EQ(jobs[node].incarnation, round);
    }
  }
}

TEST(JobTest, TheBuildIdNamesTheVersion) {
  EXPECT_EQ(KilnBuildId().rfind("kiln ", 0), 0u) << KilnBuildId();
}

// Two processes of two devices each.
class TwoProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("KILN_GLOO_HOSTNAME", "127.0.0.1", 1);
    setenv("KILN_COLLECTIVE_TIMEOUT_SECONDS", "30", 1);
    auto store = std::make_shared<MemoryStore>();
    clients_.resize(2);
    std::vector<Status> statuses(2);
    ForEachNode(2, [&](int node) {
      ClientOptions options;
      options.num_devices = 2;
      options.job = Node(node, 2, store);
      auto client = Client::Create(options, CreateHostBackend());
      statuses[node] = client.status();
      if (client.ok()) clients_[node] = std::move(client).value();
    });
    for (const Status& status : statuses) ASSERT_TRUE(status.ok()) << status.ToString();
  }
  void TearDown() override {
    unsetenv("KILN_GLOO_HOSTNAME");
    unsetenv("KILN_COLLECTIVE_TIMEOUT_SECONDS");
  }

  std::vector<std::unique_ptr<Client>> clients_;
};

TEST_F(TwoProcessTest, EveryProcessSeesTheJobsDevicesAndAddressesItsOwn) {
  for (int node = 0; node < 2; ++node) {
    const Client& client = *clients_[node];
    EXPECT_EQ(client.process_index(), node);
    ASSERT_EQ(client.devices().size(), 4u);
    ASSERT_EQ(client.addressable_devices().size(), 2u);
    for (int id = 0; id < 4; ++id) {
      const Device& device = *client.devices()[id];
      EXPECT_EQ(device.id(), id);
      EXPECT_EQ(device.process_index(), id / 2);
      EXPECT_EQ(device.local_hardware_id(), id % 2);
      EXPECT_EQ(device.addressable(), id / 2 == node);
      EXPECT_EQ(device.memory_spaces().empty(), id / 2 != node);
    }
    EXPECT_EQ(client.addressable_devices()[0]->id(), node * 2);
    EXPECT_TRUE(client.LookupAddressableDevice(1).ok());
    EXPECT_FALSE(client.LookupAddressableDevice(2).ok());
    EXPECT_EQ(client.topology().num_devices(), 4);
  }
}

// `program` (on 4 replicas) compiled by `client` and launched on its
// addressable devices, device d holding `values(d)`; `keep` holds the
// arguments.
StatusOr<std::vector<LoadedExecutable::Run>> LaunchOnTheJob(
    Client& client, std::string_view program, std::vector<std::unique_ptr<Buffer>>& keep,
    const std::function<std::vector<float>(int device)>& values) {
  KILN_ASSIGN_OR_RETURN(
      std::unique_ptr<LoadedExecutable> loaded,
      client.Compile(
          std::span(reinterpret_cast<const uint8_t*>(program.data()), program.size()), "mlir",
          std::span(reinterpret_cast<const uint8_t*>(kFourReplicas.data()), kFourReplicas.size())));
  std::vector<std::vector<Buffer*>> arguments;
  for (Device* device : loaded->addressable_devices()) {
    std::vector<float> data = values(device->id());
    HostBuffer host{data.data(),
                    Shape{ElementType::kF32, {static_cast<int64_t>(data.size())}},
                    {},
                    HostBufferSemantics::kImmutableOnlyDuringCall};
    KILN_ASSIGN_OR_RETURN(HostTransfer transfer,
                          client.BufferFromHostBuffer(host, device->default_memory_space()));
    keep.push_back(std::move(transfer.buffer));
    arguments.push_back({keep.back().get()});
  }
  return loaded->ExecuteLaunch(arguments, loaded->addressable_devices());
}

// Runs `program` (f32 operand -> `results` f32 elements) on every device of
// the job, device d holding `values(d)`; each device's result.
std::vector<std::vector<float>> RunOnTheJob(
    std::vector<std::unique_ptr<Client>>& clients, std::string_view program, size_t results,
    const std::function<std::vector<float>(int device)>& values, std::vector<Status>& statuses) {
  std::vector<std::vector<float>> outputs(4);
  statuses.assign(4, Status::Ok());
  ForEachNode(2, [&](int node) {
    Client& client = *clients[node];
    std::vector<std::unique_ptr<Buffer>> keep;
    auto runs = LaunchOnTheJob(client, program, keep, values);
    if (!runs.ok()) {
      statuses[node * 2] = runs.status();
      return;
    }
    for (size_t i = 0; i < runs->size(); ++i) {
      const int id = node * 2 + static_cast<int>(i);
      LoadedExecutable::Run& run = (*runs)[i];
      statuses[id] = run.done->Await();
      if (!statuses[id].ok()) continue;
      outputs[id].resize(results);
      const int64_t strides[] = {4};
      auto copied = client.ToHostBuffer(*run.outputs[0], outputs[id].data(), strides);
      statuses[id] = copied.ok() ? (*copied)->Await() : copied.status();
    }
  });
  return outputs;
}

// Runs kAllReduce on every device of the job, device d holding {d, 10d, 20d}.
std::vector<std::vector<float>> AllReduceOnTheJob(std::vector<std::unique_ptr<Client>>& clients,
                                                  std::vector<Status>& statuses) {
  return RunOnTheJob(
      clients, kAllReduce, 3,
      [](int id) {
        const auto d = static_cast<float>(id);
        return std::vector<float>{d, 10 * d, 20 * d};
      },
      statuses);
}

// The statuses of kAllReduce's runs on process 0's devices alone.
std::vector<Status> AllReduceOnProcessZero(Client& client) {
  std::vector<std::unique_ptr<Buffer>> keep;
  auto runs = LaunchOnTheJob(client, kAllReduce, keep, [](int) {
    return std::vector<float>{1, 2, 3};
  });
  if (!runs.ok()) return {runs.status()};
  std::vector<Status> statuses;
  for (auto& run : *runs) statuses.push_back(run.done->Await());
  return statuses;
}

// A collective of the 4 replicas in `order` ("0, 1, 2, 3": process 0's
// devices first; "0, 2, 1, 3": the processes' devices interleaved), on an
// f32 operand of `in` elements with a result of `out`.
std::string Collective(std::string_view op, std::string_view order, int in, int out) {
  const std::string groups = StrCat("replica_groups = dense<[[", order, "]]> : tensor<1x4xi64>");
  const std::string types = StrCat("(tensor<", in, "xf32>) -> tensor<", out, "xf32>");
  const std::string head = StrCat("func.func @main(%x: tensor<", in, "xf32>) -> tensor<", out,
                                  "xf32> {\n");
  const std::string tail = StrCat("  func.return %r : tensor<", out, "xf32>\n}\n");
  const std::string sum = R"mlir(({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }))mlir";
  if (op == "all_gather") {
    return StrCat(head, "  %r = \"stablehlo.all_gather\"(%x) {all_gather_dim = 0 : i64, ", groups,
                  "} : ", types, "\n", tail);
  }
  return StrCat(head, "  %r = \"stablehlo.", op, "\"(%x) ", sum, " {", groups,
                op == "reduce_scatter" ? ", scatter_dimension = 0 : i64" : "", "} : ", types, "\n",
                tail);
}

// Device d's operand of `count` elements: 100 d + i.
std::vector<float> Numbered(int device, int count) {
  std::vector<float> values;
  for (int i = 0; i < count; ++i) values.push_back(static_cast<float>(100 * device + i));
  return values;
}

TEST_F(TwoProcessTest, AnAllReduceAcrossProcessesSumsEveryDevicesOperand) {
  std::vector<Status> statuses;
  auto results = AllReduceOnTheJob(clients_, statuses);
  for (int id = 0; id < 4; ++id) {
    ASSERT_TRUE(statuses[id].ok()) << "device " << id << ": " << statuses[id].ToString();
    EXPECT_EQ(results[id], (std::vector<float>{6, 60, 120})) << "device " << id;
  }
  // The communicators are kept: a second launch reuses them.
  results = AllReduceOnTheJob(clients_, statuses);
  for (int id = 0; id < 4; ++id) {
    ASSERT_TRUE(statuses[id].ok()) << statuses[id].ToString();
    EXPECT_EQ(results[id], (std::vector<float>{6, 60, 120}));
  }
}

// The group orders of the tests below: the processes' devices in turn
// (leaders reduce-scatter or gather their processes' blocks) or
// interleaved (leaders all-reduce; every device gathers itself).
const char* const kOrders[] = {"0, 1, 2, 3", "0, 2, 1, 3"};

std::vector<int> GroupOf(std::string_view order) {
  return order == kOrders[0] ? std::vector<int>{0, 1, 2, 3} : std::vector<int>{0, 2, 1, 3};
}

// Block sizes per device: a few elements (one round of direct exchanges)
// and 512 KB (rings).
const int kBlocks[] = {2, 1 << 17};

TEST_F(TwoProcessTest, AReduceScatterAcrossProcessesGivesEachDeviceItsBlock) {
  for (const char* order : kOrders) {
    for (int block : kBlocks) {
      SCOPED_TRACE(StrCat(order, ", block ", block));
      std::vector<Status> statuses;
      auto results = RunOnTheJob(
          clients_, Collective("reduce_scatter", order, 4 * block, block), block,
          [&](int id) { return Numbered(id, 4 * block); }, statuses);
      const std::vector<int> group = GroupOf(order);
      for (int place = 0; place < 4; ++place) {
        const int id = group[place];
        ASSERT_TRUE(statuses[id].ok()) << "device " << id << ": " << statuses[id].ToString();
        std::vector<float> expected;  // the sum over d of 100 d + i
        for (int i = place * block; i < (place + 1) * block; ++i) {
          expected.push_back(static_cast<float>(600 + 4 * i));
        }
        EXPECT_EQ(results[id], expected) << "device " << id;
      }
    }
  }
}

TEST_F(TwoProcessTest, AnAllGatherAcrossProcessesConcatenatesInGroupOrder) {
  for (const char* order : kOrders) {
    for (int block : kBlocks) {
      SCOPED_TRACE(StrCat(order, ", block ", block));
      std::vector<Status> statuses;
      auto results = RunOnTheJob(
          clients_, Collective("all_gather", order, block, 4 * block), 4 * block,
          [&](int id) { return Numbered(id, block); }, statuses);
      std::vector<float> expected;
      for (int id : GroupOf(order)) {
        for (float value : Numbered(id, block)) expected.push_back(value);
      }
      for (int id = 0; id < 4; ++id) {
        ASSERT_TRUE(statuses[id].ok()) << "device " << id << ": " << statuses[id].ToString();
        EXPECT_EQ(results[id], expected) << "device " << id;
      }
    }
  }
}

TEST_F(TwoProcessTest, AnAllReduceOfAnyGroupOrderSumsEveryOperand) {
  for (const char* order : {"0, 1, 2, 3", "3, 0, 2, 1"}) {
    for (int size : {5, 1 << 17}) {
      SCOPED_TRACE(StrCat(order, ", size ", size));
      std::vector<Status> statuses;
      auto results = RunOnTheJob(
          clients_, Collective("all_reduce", order, size, size), size,
          [&](int id) { return Numbered(id, size); }, statuses);
      std::vector<float> expected;
      for (int i = 0; i < size; ++i) expected.push_back(static_cast<float>(600 + 4 * i));
      for (int id = 0; id < 4; ++id) {
        ASSERT_TRUE(statuses[id].ok()) << "device " << id << ": " << statuses[id].ToString();
        EXPECT_EQ(results[id], expected) << "device " << id;
      }
    }
  }
}

TEST_F(TwoProcessTest, ARemoteDeviceRunsNothingHere) {
  auto loaded = clients_[0]->Compile(
      std::span(reinterpret_cast<const uint8_t*>(kAllReduce.data()), kAllReduce.size()), "mlir",
      std::span(reinterpret_cast<const uint8_t*>(kFourReplicas.data()), kFourReplicas.size()));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->addressable_devices().size(), 2u);
  EXPECT_TRUE((*loaded)->spans_processes());
  std::vector<Buffer*> none;
  auto run = (*loaded)->Execute(none, clients_[0]->devices()[3]);
  EXPECT_EQ(run.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(TwoProcessTest, APeerThatIsGoneFailsTheCollectiveAndNamesIt) {
  std::vector<Status> statuses;
  AllReduceOnTheJob(clients_, statuses);  // connects the communicators
  for (const Status& status : statuses) ASSERT_TRUE(status.ok()) << status.ToString();
  clients_[1].reset();  // process 1 ends: its sockets close
  // Process 0 alone: its devices' all-reduce must fail, not hang.
  statuses = AllReduceOnProcessZero(*clients_[0]);
  ASSERT_EQ(statuses.size(), 2u) << statuses[0].ToString();
  for (const Status& status : statuses) {
    EXPECT_TRUE(status.code() == StatusCode::kUnavailable ||
                status.code() == StatusCode::kDeadlineExceeded)
        << status.ToString();
    EXPECT_NE(status.message().find("process 1"), std::string::npos) << status.ToString();
  }
}

TEST_F(TwoProcessTest, APeerThatNeverComesIsADeadlineNamingIt) {
  ScopedEnv wait("KILN_COLLECTIVE_TIMEOUT_SECONDS", "2");
  // Only process 0 runs the program; process 1 never joins.
  std::vector<Status> statuses = AllReduceOnProcessZero(*clients_[0]);
  ASSERT_EQ(statuses.size(), 2u) << statuses[0].ToString();
  for (const Status& status : statuses) {
    EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
    EXPECT_NE(status.message().find("of process 1 did not join"), std::string::npos)
        << status.ToString();
  }
}

}  // namespace
}  // namespace kiln::runtime
