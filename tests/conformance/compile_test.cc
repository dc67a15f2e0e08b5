// Compiling without a client (PJRT_Compile for a topology) and loading the
// result (PJRT_Client_Load); what an Execute call carries besides its
// arguments: an execute context, and a launch id that
// PJRT_Device_PoisonExecution finds.
#include <cstring>
#include <string>
#include <string_view>

#include "plugin.h"
#include "programs.h"

namespace conformance {
namespace {

TopologyPtr ClientTopologyCopy(PJRT_Client* client) {
  auto get = MAKE_ARGS(PJRT_Client_TopologyDescription_Args);
  get.client = client;
  EXPECT_PJRT_OK(api()->PJRT_Client_TopologyDescription(&get));
  auto serialize = MAKE_ARGS(PJRT_TopologyDescription_Serialize_Args);
  serialize.topology = get.topology;
  Status status = Consume(api()->PJRT_TopologyDescription_Serialize(&serialize));
  if (!status.ok()) return nullptr;
  std::string bytes(serialize.serialized_bytes, serialize.serialized_bytes_size);
  serialize.serialized_topology_deleter(serialize.serialized_topology);
  auto deserialize = MAKE_ARGS(PJRT_TopologyDescription_Deserialize_Args);
  deserialize.serialized_topology = bytes.data();
  deserialize.serialized_topology_size = bytes.size();
  if (!Consume(api()->PJRT_TopologyDescription_Deserialize(&deserialize)).ok()) return nullptr;
  return TopologyPtr(deserialize.topology);
}

// PJRT_Compile of `code` for `topology`, with `options` (kCompileOptions when empty).
Status CompileFor(const PJRT_TopologyDescription* topology, std::string_view code,
                  ExecutablePtr* executable, std::string_view options = kCompileOptions) {
  std::string code_copy(code);
  PJRT_Program program = MakeProgram("mlir", code_copy);
  auto args = MAKE_ARGS(PJRT_Compile_Args);
  args.topology = topology;
  args.program = &program;
  args.compile_options = options.data();
  args.compile_options_size = options.size();
  Status status = Consume(api()->PJRT_Compile(&args));
  if (status.ok()) executable->reset(args.executable);
  return status;
}

Status Load(PJRT_Client* client, PJRT_Executable* executable, LoadedExecutablePtr* loaded) {
  auto args = MAKE_ARGS(PJRT_Client_Load_Args);
  args.client = client;
  args.executable = executable;
  Status status = Consume(api()->PJRT_Client_Load(&args));
  if (status.ok()) loaded->reset(args.loaded_executable);
  return status;
}

class CompileTest : public ClientFixture {
 protected:
  void SetUp() override {
    ClientFixture::SetUp();
    if (HasFatalFailure()) return;
    topology_ = ClientTopologyCopy(client_.get());
    if (topology_ == nullptr) GTEST_SKIP() << "no serializable topology";
    Status status = CompileFor(topology_.get(), kAddProgram, &executable_);
    SKIP_IF_UNIMPLEMENTED(status);
    ASSERT_TRUE(IsOk(status));
  }
  TopologyPtr topology_;
  ExecutablePtr executable_;  // the addition, compiled for topology_
};

TEST_F(CompileTest, CompileForATopologyThenLoadOnAClient) {
  auto outputs = MAKE_ARGS(PJRT_Executable_NumOutputs_Args);
  outputs.executable = executable_.get();
  ASSERT_PJRT_OK(api()->PJRT_Executable_NumOutputs(&outputs));
  EXPECT_EQ(outputs.num_outputs, 1u);
  LoadedExecutablePtr loaded;
  Status status = Load(client_.get(), executable_.get(), &loaded);
  SKIP_IF_UNIMPLEMENTED(status);
  ASSERT_TRUE(IsOk(status));
  EXPECT_EQ(RunAddition(client_.get(), device_, loaded.get()), (std::vector<float>{3.0f, -4.0f}));
}

TEST_F(CompileTest, ACompiledExecutableSerializesAndLoadsElsewhere) {
  auto serialize = MAKE_ARGS(PJRT_Executable_Serialize_Args);
  serialize.executable = executable_.get();
  ASSERT_PJRT_OK(api()->PJRT_Executable_Serialize(&serialize));
  std::string bytes(serialize.serialized_bytes, serialize.serialized_bytes_size);
  serialize.serialized_executable_deleter(serialize.serialized_executable);
  ClientPtr other = MakeClient();
  auto load = MAKE_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  load.client = other.get();
  load.serialized_executable = bytes.data();
  load.serialized_executable_size = bytes.size();
  ASSERT_PJRT_OK(api()->PJRT_Executable_DeserializeAndLoad(&load));
  LoadedExecutablePtr loaded(load.loaded_executable);
  EXPECT_EQ(RunAddition(other.get(), AddressableDevices(other.get())[0], loaded.get()),
            (std::vector<float>{3.0f, -4.0f}));
}

TEST_F(CompileTest, CompilingGarbageForATopologyFailsCleanly) {
  ExecutablePtr executable;
  Status status = CompileFor(topology_.get(), "not a program", &executable);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(executable, nullptr);
}

class ExecuteContextTest : public ClientFixture {};

TEST_F(ExecuteContextTest, CreateUseInExecuteAndDestroy) {
  REQUIRE_SLOT(PJRT_ExecuteContext_Create);
  auto create = MAKE_ARGS(PJRT_ExecuteContext_Create_Args);
  Status status = Consume(api()->PJRT_ExecuteContext_Create(&create));
  SKIP_IF_UNIMPLEMENTED(status);  // execute contexts are optional, but Kiln's
  ASSERT_TRUE(IsOk(status));
  ASSERT_NE(create.context, nullptr);
  LoadedExecutablePtr loaded;
  if (Compile(client_.get(), "mlir", kAddProgram, &loaded).ok()) {
    BufferPtr input = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
    BufferPtr result;
    EventPtr done;
    ASSERT_TRUE(IsOk(ExecuteOnce(loaded.get(), {input.get()}, 1, &result, &done,
                                 {.context = create.context})));
    EXPECT_TRUE(IsOk(Await(done.get())));
    EXPECT_EQ(Read<float>(result.get()), (std::vector<float>{2, 4}));
  }
  auto destroy = MAKE_ARGS(PJRT_ExecuteContext_Destroy_Args);
  destroy.context = create.context;
  EXPECT_PJRT_OK(api()->PJRT_ExecuteContext_Destroy(&destroy));
}

// ------------------------------------------------------ Kiln's promises --

class KilnCompileTest : public CompileTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    CompileTest::SetUp();
  }
};

TEST_F(KilnCompileTest, CompileNeedsALiveTopologyAndAProgram) {
  ExecutablePtr executable;
  Status no_topology = CompileFor(nullptr, kAddProgram, &executable);
  EXPECT_TRUE(HasCode(no_topology, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(no_topology.message, "`topology` is null"));
  auto args = MAKE_ARGS(PJRT_Compile_Args);
  args.topology = topology_.get();
  Status no_program = Consume(api()->PJRT_Compile(&args));
  EXPECT_TRUE(HasCode(no_program, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(no_program.message, "`program` is null"));
}

TEST_F(KilnCompileTest, CompileRefusesMoreDevicesThanTheTopologyHas) {
  PJRT_NamedValue one_device[] = {NamedInt64("num_devices", 1)};
  auto create = MAKE_ARGS(PJRT_TopologyDescription_Create_Args);
  create.create_options = one_device;
  create.num_options = 1;
  ASSERT_PJRT_OK(api()->PJRT_TopologyDescription_Create(&create));
  TopologyPtr topology(create.topology);
  // executable_build_options: num_replicas = 2, num_partitions = 1.
  ExecutablePtr executable;
  Status status = CompileFor(topology.get(), kAddProgram, &executable,
                             std::string_view("\x1a\x04\x20\x02\x28\x01", 6));
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "the topology has 1"));
}

TEST_F(KilnCompileTest, LoadNeedsLiveHandles) {
  LoadedExecutablePtr loaded;
  EXPECT_TRUE(HasCode(Load(nullptr, executable_.get(), &loaded), PJRT_Error_Code_INVALID_ARGUMENT));
  Status no_executable = Load(client_.get(), nullptr, &loaded);
  EXPECT_TRUE(HasCode(no_executable, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(no_executable.message, "`executable` is null"));
  // Loading with other compile options compiles again (2 replicas: 2 devices).
  ClientPtr two = MakeClientWithDevices(2);
  ASSERT_NE(two, nullptr);
  const std::string_view replicas("\x1a\x04\x20\x02\x28\x01", 6);
  auto args = MAKE_ARGS(PJRT_Client_Load_Args);
  args.client = two.get();
  args.executable = executable_.get();
  args.compile_options = replicas.data();
  args.compile_options_size = replicas.size();
  ASSERT_PJRT_OK(api()->PJRT_Client_Load(&args));
  LoadedExecutablePtr replicated(args.loaded_executable);
  auto devices = MAKE_ARGS(PJRT_LoadedExecutable_AddressableDevices_Args);
  devices.executable = replicated.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_AddressableDevices(&devices));
  EXPECT_EQ(devices.num_addressable_devices, 2u);
}

TEST_F(KilnCompileTest, ADestroyedExecuteContextIsInvalidInExecute) {
  auto create = MAKE_ARGS(PJRT_ExecuteContext_Create_Args);
  ASSERT_PJRT_OK(api()->PJRT_ExecuteContext_Create(&create));
  auto destroy = MAKE_ARGS(PJRT_ExecuteContext_Destroy_Args);
  destroy.context = create.context;
  ASSERT_PJRT_OK(api()->PJRT_ExecuteContext_Destroy(&destroy));
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_ExecuteContext_Destroy(&destroy)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(IsOk(Compile(client_.get(), "mlir", kAddProgram, &loaded)));
  BufferPtr input = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  BufferPtr result;
  EventPtr done;
  Status status = ExecuteOnce(loaded.get(), {input.get()}, 1, &result, &done,
                              {.context = create.context});
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_TRUE(Contains(status.message, "options->context"));
  EXPECT_FALSE(IsDeleted(input.get()));
}

// A run waiting for an argument is poisoned by its launch id: its outputs
// and completion carry the error, and it never runs.
TEST_F(KilnCompileTest, PoisonExecutionFailsAWaitingRun) {
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(IsOk(Compile(client_.get(), "mlir", kAddProgram, &loaded)));
  BufferPtr source = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  auto donate = MAKE_ARGS(PJRT_Buffer_DonateWithControlDependency_Args);
  donate.buffer = source.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_DonateWithControlDependency(&donate));
  BufferPtr waiting(donate.out_buffer);  // ready once the callback runs
  BufferPtr result;
  EventPtr done;
  ASSERT_TRUE(IsOk(ExecuteOnce(loaded.get(), {waiting.get()}, 1, &result, &done,
                               {.launch_id = 42})));
  auto poison = MAKE_ARGS(PJRT_Device_PoisonExecution_Args);
  poison.device = device_;
  poison.launch_id = 41;
  poison.error_code = PJRT_Error_Code_ABORTED;
  poison.error_message = "poisoned by the test";
  poison.error_message_size = std::strlen(poison.error_message);
  ASSERT_PJRT_OK(api()->PJRT_Device_PoisonExecution(&poison));
  EXPECT_FALSE(poison.poisoned);  // no run has launch id 41
  poison.launch_id = 42;
  ASSERT_PJRT_OK(api()->PJRT_Device_PoisonExecution(&poison));
  EXPECT_TRUE(poison.poisoned);
  Status status = Await(done.get());
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_ABORTED));
  EXPECT_TRUE(Contains(status.message, "poisoned by the test"));
  EXPECT_TRUE(HasCode(Await(ReadyEvent(result.get()).get()), PJRT_Error_Code_ABORTED));
  auto fire = MAKE_ARGS(PJRT_Buffer_DonateWithControlDependency_Callback_Args);
  fire.callback_data = donate.callback_data;
  donate.dependency_ready_callback(&fire);
  ASSERT_PJRT_OK(api()->PJRT_Device_PoisonExecution(&poison));
  EXPECT_FALSE(poison.poisoned);  // it is finished
  poison.error_code = PJRT_Error_Code_OK;
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Device_PoisonExecution(&poison)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  poison.device = nullptr;
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Device_PoisonExecution(&poison)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

}  // namespace
}  // namespace conformance
