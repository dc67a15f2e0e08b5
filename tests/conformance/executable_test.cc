// Compilation and executables. A plugin that cannot compile yet must fail
// cleanly; one that can must run a small StableHLO program.
#include <map>
#include <string>
#include <string_view>

#include "plugin.h"
#include "programs.h"
#include "xla/pjrt/c/pjrt_c_api_layouts_extension.h"

namespace conformance {
namespace {

class ExecutableTest : public ClientFixture {};

// Protobuf wire format, enough to write the HloModuleProto below.
void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out += static_cast<char>(value | 0x80);
    value >>= 7;
  }
  out += static_cast<char>(value);
}
void PutInt(std::string& out, uint32_t field, uint64_t value) {
  PutVarint(out, uint64_t{field} << 3);
  PutVarint(out, value);
}
void PutBytes(std::string& out, uint32_t field, std::string_view bytes) {
  PutVarint(out, (uint64_t{field} << 3) | 2);
  PutVarint(out, bytes.size());
  out += bytes;
}

// kAddProgram as a serialized HloModuleProto (PJRT_Program format "hlo", what
// PyTorch/XLA compiles): computation 1 "main" holding parameter 0 (id 1) and
// add(1, 1) (id 2, the root), over f32[2] (PrimitiveType F32 = 11).
std::string AddProgramAsHlo() {
  std::string shape;
  PutInt(shape, 2, 11);
  PutBytes(shape, 3, std::string_view("\x02", 1));  // packed dimensions {2}
  std::string parameter, add;
  PutBytes(parameter, 1, "x");
  PutBytes(parameter, 2, "parameter");
  PutBytes(parameter, 3, shape);
  PutInt(parameter, 9, 0);
  PutInt(parameter, 35, 1);
  PutBytes(add, 1, "y");
  PutBytes(add, 2, "add");
  PutBytes(add, 3, shape);
  PutInt(add, 35, 2);
  PutBytes(add, 36, std::string_view("\x01\x01", 2));  // operand_ids {1, 1}, packed
  std::string computation;
  PutBytes(computation, 1, "main");
  PutBytes(computation, 2, parameter);
  PutBytes(computation, 2, add);
  PutInt(computation, 5, 1);
  PutInt(computation, 6, 2);
  std::string program_shape;  // host_program_shape: (f32[2]) -> f32[2]
  PutBytes(program_shape, 1, shape);
  PutBytes(program_shape, 2, shape);
  std::string module;
  PutBytes(module, 1, "kiln_conformance");
  PutBytes(module, 2, "main");
  PutBytes(module, 3, computation);
  PutBytes(module, 4, program_shape);
  PutInt(module, 6, 1);
  return module;
}

TEST_F(ExecutableTest, CompilingGarbageFailsCleanly) {
  LoadedExecutablePtr executable;
  Status status = Compile(client_.get(), "mlir", std::string_view("not a program\0\xff\x01", 16),
                          &executable);
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(status.message.empty());
}

TEST_F(ExecutableTest, UnknownProgramFormatFails) {
  LoadedExecutablePtr executable;
  Status status = Compile(client_.get(), "klingon", kAddProgram, &executable);
  EXPECT_FALSE(status.ok());
}

TEST_F(ExecutableTest, CompileAndRunAnHloModuleProto) {
  LoadedExecutablePtr loaded;
  Status status = Compile(client_.get(), "hlo", AddProgramAsHlo(), &loaded);
  if (!status.ok()) {
    if (IsKiln()) ADD_FAILURE() << "Kiln reads format \"hlo\": " << status;
    GTEST_SKIP() << "cannot compile format \"hlo\": " << status;
  }
  EXPECT_EQ(RunAddition(client_.get(), device_, loaded.get()), (std::vector<float>{3.0f, -4.0f}));

  // XLA's client reads the optimized program back after every compile and
  // accepts "hlo_with_config" or "mlir"; PyTorch/XLA compiles HLO and needs
  // the former (an HloModuleProtoWithConfig, module as field 1).
  auto get = MAKE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_GetExecutable(&get));
  ExecutablePtr executable(get.executable);
  auto program = MAKE_ARGS(PJRT_Program);
  auto optimized = MAKE_ARGS(PJRT_Executable_OptimizedProgram_Args);
  optimized.executable = executable.get();
  optimized.program = &program;
  ASSERT_PJRT_OK(api()->PJRT_Executable_OptimizedProgram(&optimized));  // size query
  std::string code(program.code_size, '\0');
  program.code = code.data();
  ASSERT_PJRT_OK(api()->PJRT_Executable_OptimizedProgram(&optimized));
  const std::string format(program.format, program.format_size);
  EXPECT_TRUE(format == "hlo_with_config" || format == "mlir") << format;
  if (IsKiln()) {
    EXPECT_EQ(format, "hlo_with_config");
    const std::string module = AddProgramAsHlo();
    EXPECT_NE(code.find(module), std::string::npos) << "the module is not inside";
  }
}

TEST_F(ExecutableTest, CompileAndRunAnAddition) {
  LoadedExecutablePtr loaded;
  Status status = Compile(client_.get(), "mlir", kAddProgram, &loaded);
  if (!status.ok()) {
    if (IsKiln()) {
      // Kiln's contract for now: compilation is UNIMPLEMENTED, and says so.
      EXPECT_TRUE(HasCode(status, PJRT_Error_Code_UNIMPLEMENTED));
      EXPECT_FALSE(status.message.empty());
    }
    GTEST_SKIP() << "cannot compile: " << status;
  }
  auto get = MAKE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_GetExecutable(&get));
  ExecutablePtr executable(get.executable);

  auto outputs = MAKE_ARGS(PJRT_Executable_NumOutputs_Args);
  outputs.executable = executable.get();
  ASSERT_PJRT_OK(api()->PJRT_Executable_NumOutputs(&outputs));
  ASSERT_EQ(outputs.num_outputs, 1u);
  auto replicas = MAKE_ARGS(PJRT_Executable_NumReplicas_Args);
  replicas.executable = executable.get();
  ASSERT_PJRT_OK(api()->PJRT_Executable_NumReplicas(&replicas));
  EXPECT_EQ(replicas.num_replicas, 1u);
  auto name = MAKE_ARGS(PJRT_Executable_Name_Args);
  name.executable = executable.get();
  ASSERT_PJRT_OK(api()->PJRT_Executable_Name(&name));
  EXPECT_GT(name.executable_name_size, 0u);

  EXPECT_EQ(RunAddition(client_.get(), device_, loaded.get()), (std::vector<float>{3.0f, -4.0f}));

  auto remove = MAKE_ARGS(PJRT_LoadedExecutable_Delete_Args);
  remove.executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_Delete(&remove));
  auto deleted = MAKE_ARGS(PJRT_LoadedExecutable_IsDeleted_Args);
  deleted.executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_IsDeleted(&deleted));
  EXPECT_TRUE(deleted.is_deleted);
}

// Format "mlir" is any MLIR module: XLA's plugins also read bytecode of the
// StableHLO dialect itself, not only portable artifacts (VHLO) and text.
TEST_F(ExecutableTest, CompileAndRunStablehloDialectBytecode) {
  LoadedExecutablePtr loaded;
  Status status = Compile(client_.get(), "mlir", kAddProgramStablehloBytecode, &loaded);
  if (!status.ok()) {
    if (IsKiln()) ADD_FAILURE() << "Kiln reads StableHLO-dialect bytecode: " << status;
    GTEST_SKIP() << "cannot compile StableHLO-dialect bytecode: " << status;
  }
  EXPECT_EQ(RunAddition(client_.get(), device_, loaded.get()), (std::vector<float>{3.0f, -4.0f}));
}

// Serialize then DeserializeAndLoad runs identically; a corrupted copy is
// rejected.
TEST_F(ExecutableTest, SerializationRoundTripRunsIdentically) {
  LoadedExecutablePtr loaded;
  if (!Compile(client_.get(), "mlir", kAddProgram, &loaded).ok()) {
    GTEST_SKIP() << "the plugin cannot compile the addition";
  }
  auto get = MAKE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_GetExecutable(&get));
  ExecutablePtr executable(get.executable);
  auto serialize = MAKE_ARGS(PJRT_Executable_Serialize_Args);
  serialize.executable = executable.get();
  Status status = Consume(api()->PJRT_Executable_Serialize(&serialize));
  if (status.code == PJRT_Error_Code_UNIMPLEMENTED) GTEST_SKIP() << status;
  ASSERT_TRUE(status.ok()) << status;
  std::string bytes(serialize.serialized_bytes, serialize.serialized_bytes_size);
  serialize.serialized_executable_deleter(serialize.serialized_executable);

  auto load = MAKE_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  load.client = client_.get();
  load.serialized_executable = bytes.data();
  load.serialized_executable_size = bytes.size();
  ASSERT_PJRT_OK(api()->PJRT_Executable_DeserializeAndLoad(&load));
  LoadedExecutablePtr reloaded(load.loaded_executable);
  EXPECT_EQ(RunAddition(client_.get(), device_, reloaded.get()), (std::vector<float>{3.0f, -4.0f}));

  std::string corrupted = bytes;
  corrupted[corrupted.size() / 2] ^= 0x20;
  load.serialized_executable = corrupted.data();
  load.loaded_executable = nullptr;
  EXPECT_FALSE(Consume(api()->PJRT_Executable_DeserializeAndLoad(&load)).ok());
  EXPECT_EQ(load.loaded_executable, nullptr);
}

TEST_F(ExecutableTest, DeserializingGarbageFailsCleanly) {
  std::string bytes = "definitely not an executable";
  auto args = MAKE_ARGS(PJRT_Executable_DeserializeAndLoad_Args);
  args.client = client_.get();
  args.serialized_executable = bytes.data();
  args.serialized_executable_size = bytes.size();
  Status status = Consume(api()->PJRT_Executable_DeserializeAndLoad(&args));
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(args.loaded_executable, nullptr);
}

TEST_F(ExecutableTest, DestroyingNullExecutablesIsANoOp) {
  auto executable = MAKE_ARGS(PJRT_Executable_Destroy_Args);
  EXPECT_PJRT_OK(api()->PJRT_Executable_Destroy(&executable));
  auto loaded = MAKE_ARGS(PJRT_LoadedExecutable_Destroy_Args);
  EXPECT_PJRT_OK(api()->PJRT_LoadedExecutable_Destroy(&loaded));
}

// ------------------------------------------------------ Kiln's promises --

class KilnExecutableTest : public ExecutableTest {
 protected:
  void SetUp() override {
    SKIP_UNLESS_KILN();
    ExecutableTest::SetUp();
  }
};

TEST_F(KilnExecutableTest, CompileErrorsAreInvalidOrUnimplemented) {
  LoadedExecutablePtr executable;
  Status garbage = Compile(client_.get(), "mlir", "not a program", &executable);
  EXPECT_TRUE(HasCodeIn(garbage,
                        {PJRT_Error_Code_INVALID_ARGUMENT, PJRT_Error_Code_UNIMPLEMENTED}));
  Status format = Compile(client_.get(), "klingon", kAddProgram, &executable);
  EXPECT_TRUE(HasCodeIn(format, {PJRT_Error_Code_INVALID_ARGUMENT, PJRT_Error_Code_UNIMPLEMENTED}));
}

// Compile reads and verifies the program before anything else, so every
// reader and verifier error reaches the framework with its position.
TEST_F(KilnExecutableTest, CompileReportsReadAndVerifyErrors) {
  LoadedExecutablePtr executable;
  Status text = Compile(client_.get(), "mlir", "func.func @main() {\n  %0 = \n}", &executable);
  EXPECT_TRUE(HasCode(text, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(text.message.find("PJRT_Client_Compile: "), std::string::npos) << text.message;
  EXPECT_NE(text.message.find("3:1"), std::string::npos) << text.message;

  Status truncated = Compile(client_.get(), "mlir", std::string_view("ML\xefR\x0d", 5),
                             &executable);
  EXPECT_TRUE(HasCode(truncated, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(truncated.message.find("byte 5"), std::string::npos) << truncated.message;

  std::string unknown(kAddProgram);
  unknown.replace(unknown.find("stablehlo.add %arg0, %arg0 : tensor<2xf32>"), 43,
                  "\"kiln.frobnicate\"(%arg0) : (tensor<2xf32>) -> tensor<2xf32>");
  Status op = Compile(client_.get(), "mlir", unknown, &executable);
  EXPECT_TRUE(HasCode(op, PJRT_Error_Code_UNIMPLEMENTED));
  EXPECT_NE(op.message.find("'kiln.frobnicate'"), std::string::npos) << op.message;

  std::string wrong(kAddProgram);
  wrong.replace(wrong.find("return %0 : tensor<2xf32>"), 25, "return %0 : tensor<3xf32>");
  Status verify = Compile(client_.get(), "mlir", wrong, &executable);
  EXPECT_TRUE(HasCode(verify, PJRT_Error_Code_INVALID_ARGUMENT));

  // An HloModuleProto named "abc" with no computations.
  Status hlo = Compile(client_.get(), "hlo",
                       "\x0a\x03"
                       "abc",
                       &executable);
  EXPECT_TRUE(HasCode(hlo, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(hlo.message.find("HloModuleProto"), std::string::npos) << hlo.message;
}

// Execute checks every argument before running anything, and says what it
// expected and what it found.
TEST_F(KilnExecutableTest, ExecuteRejectsBadArgumentsBeforeRunning) {
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(Compile(client_.get(), "mlir", kAddProgram, &loaded).ok());
  auto execute_with = [&](PJRT_Buffer* argument, size_t num_args) {
    BufferPtr result;
    EventPtr done;
    Status status = ExecuteOnce(loaded.get(), {argument}, num_args, &result, &done);
    EXPECT_EQ(result, nullptr);
    EXPECT_EQ(done, nullptr);
    return status;
  };
  BufferPtr wrong_shape = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2, 3}, {3});
  Status shape = execute_with(wrong_shape.get(), 1);
  EXPECT_TRUE(HasCode(shape, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(shape.message.find("argument 0 must be f32[2], found f32[3]"), std::string::npos)
      << shape.message;

  BufferPtr good = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  Status count = execute_with(good.get(), 0);
  EXPECT_TRUE(HasCode(count, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(count.message.find("takes 1 arguments, found 0"), std::string::npos) << count.message;

  auto remove = MAKE_ARGS(PJRT_Buffer_Delete_Args);
  remove.buffer = good.get();
  ASSERT_PJRT_OK(api()->PJRT_Buffer_Delete(&remove));
  Status deleted = execute_with(good.get(), 1);
  EXPECT_TRUE(HasCode(deleted, PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(KilnExecutableTest, CompileWithoutAProgramIsInvalid) {
  auto args = MAKE_ARGS(PJRT_Client_Compile_Args);
  args.client = client_.get();
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Client_Compile(&args)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

TEST_F(KilnExecutableTest, ExecuteWithoutAnExecutableIsInvalid) {
  BufferPtr input = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  ASSERT_NE(input, nullptr);
  BufferPtr result;
  EventPtr done;
  EXPECT_TRUE(HasCode(ExecuteOnce(nullptr, {input.get()}, 1, &result, &done),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_EQ(result, nullptr);
  EXPECT_EQ(done, nullptr);
}

TEST_F(KilnExecutableTest, QueriesWithoutAnExecutableAreInvalid) {
  auto name = MAKE_ARGS(PJRT_Executable_Name_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Executable_Name(&name)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  auto outputs = MAKE_ARGS(PJRT_Executable_NumOutputs_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_Executable_NumOutputs(&outputs)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  auto get = MAKE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_LoadedExecutable_GetExecutable(&get)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  auto deleted = MAKE_ARGS(PJRT_LoadedExecutable_IsDeleted_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_LoadedExecutable_IsDeleted(&deleted)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  auto remove = MAKE_ARGS(PJRT_LoadedExecutable_Delete_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_LoadedExecutable_Delete(&remove)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

// y = x + x where x may be donated and overwritten with y.
constexpr std::string_view kDonatingProgram = R"mlir(
module @donating {
  func.func public @main(%arg0: tensor<2xf32> {tf.aliasing_output = 0 : i32}) -> tensor<2xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
)mlir";

bool IsDeleted(PJRT_Buffer* buffer) {
  auto args = MAKE_ARGS(PJRT_Buffer_IsDeleted_Args);
  args.buffer = buffer;
  EXPECT_PJRT_OK(api()->PJRT_Buffer_IsDeleted(&args));
  return args.is_deleted;
}

// A donated argument reports itself deleted; the caller can exclude it with
// non_donatable_input_indices; a donated buffer cannot be passed again.
TEST_F(KilnExecutableTest, DonationDeletesTheArgumentUnlessExcluded) {
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(Compile(client_.get(), "mlir", kDonatingProgram, &loaded).ok());
  BufferPtr kept = MakeBuffer(client_.get(), device_, std::vector<float>{1.5f, -2}, {2});
  BufferPtr result;
  EventPtr done;
  ASSERT_TRUE(IsOk(ExecuteOnce(loaded.get(), {kept.get()}, 1, &result, &done,
                               {.non_donatable = {0}})));
  ASSERT_TRUE(IsOk(Await(done.get())));
  EXPECT_FALSE(IsDeleted(kept.get()));
  EXPECT_EQ(Read<float>(result.get()), (std::vector<float>{3, -4}));

  ASSERT_TRUE(IsOk(ExecuteOnce(loaded.get(), {kept.get()}, 1, &result, &done)));
  EXPECT_TRUE(IsDeleted(kept.get()));
  ASSERT_TRUE(IsOk(Await(done.get())));
  EXPECT_EQ(Read<float>(result.get()), (std::vector<float>{3, -4}));

  BufferPtr again;
  Status reuse = ExecuteOnce(loaded.get(), {kept.get()}, 1, &again, &done);
  EXPECT_TRUE(HasCode(reuse, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(reuse.message.find("deleted or donated"), std::string::npos) << reuse.message;

  Status range = ExecuteOnce(loaded.get(), {result.get()}, 1, &again, &done,
                             {.non_donatable = {3}});
  EXPECT_TRUE(HasCode(range, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(range.message.find("non-donatable input index 3"), std::string::npos) << range.message;
  EXPECT_FALSE(IsDeleted(result.get()));
}

TEST_F(KilnExecutableTest, ExecuteRejectsNullArgumentAndOutputRows) {
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(Compile(client_.get(), "mlir", kAddProgram, &loaded).ok());
  PJRT_Buffer* const* argument_lists[1] = {nullptr};
  PJRT_Buffer* results[1] = {nullptr};
  PJRT_Buffer** output_lists[1] = {results};
  auto options = MAKE_ARGS(PJRT_ExecuteOptions);
  auto execute = MAKE_ARGS(PJRT_LoadedExecutable_Execute_Args);
  execute.executable = loaded.get();
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  Status row = Consume(api()->PJRT_LoadedExecutable_Execute(&execute));
  EXPECT_TRUE(HasCode(row, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(row.message.find("argument_lists[0]"), std::string::npos) << row.message;

  BufferPtr input = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  PJRT_Buffer* arguments[1] = {input.get()};
  argument_lists[0] = arguments;
  output_lists[0] = nullptr;
  Status outputs = Consume(api()->PJRT_LoadedExecutable_Execute(&execute));
  EXPECT_TRUE(HasCode(outputs, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(outputs.message.find("output_lists[0]"), std::string::npos) << outputs.message;
}

// A program with no results (a jitted function returning None) runs with no
// room for outputs: jaxlib passes the data() of empty vectors, null both for
// each device's list and, with no devices' lists to fill, possibly for the
// array of lists.
TEST_F(ExecutableTest, AProgramWithoutResultsRunsWithNullOutputLists) {
  constexpr const char* kNoResults = R"(
module @no_results {
  func.func public @main(%arg0: tensor<2xf32>) {
    %0 = stablehlo.sine %arg0 : tensor<2xf32>
    return
  }
})";
  LoadedExecutablePtr loaded;
  Status status = Compile(client_.get(), "mlir", kNoResults, &loaded);
  if (!status.ok()) GTEST_SKIP() << "cannot compile: " << status;
  BufferPtr input = MakeBuffer(client_.get(), device_, std::vector<float>{1, 2}, {2});
  PJRT_Buffer* arguments[1] = {input.get()};
  PJRT_Buffer* const* argument_lists[1] = {arguments};
  PJRT_Buffer** output_lists[1] = {nullptr};
  PJRT_Event* complete[1] = {nullptr};
  auto options = MAKE_ARGS(PJRT_ExecuteOptions);
  auto execute = MAKE_ARGS(PJRT_LoadedExecutable_Execute_Args);
  execute.executable = loaded.get();
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  execute.device_complete_events = complete;
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_Execute(&execute));
  EventPtr done(complete[0]);
  EXPECT_TRUE(IsOk(Await(done.get())));

  execute.output_lists = nullptr;
  complete[0] = nullptr;
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_Execute(&execute));
  EventPtr again(complete[0]);
  EXPECT_TRUE(IsOk(Await(again.get())));
}

TEST_F(KilnExecutableTest, CostAnalysisCountsTheProgramsWork) {
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(Compile(client_.get(), "mlir", kAddProgram, &loaded).ok());
  auto get = MAKE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_GetExecutable(&get));
  auto cost = MAKE_ARGS(PJRT_Executable_GetCostAnalysis_Args);
  cost.executable = get.executable;
  ASSERT_PJRT_OK(api()->PJRT_Executable_GetCostAnalysis(&cost));
  std::map<std::string, float> values;
  for (size_t i = 0; i < cost.num_properties; ++i) {
    const PJRT_NamedValue& property = cost.properties[i];
    ASSERT_EQ(property.type, PJRT_NamedValue_kFloat);
    values[std::string(property.name, property.name_size)] = property.float_value;
  }
  EXPECT_EQ(values["flops"], 2);            // one add per element
  EXPECT_EQ(values["bytes accessed"], 24);  // two 8-byte operands, one 8-byte result
  auto destroy = MAKE_ARGS(PJRT_Executable_Destroy_Args);
  destroy.executable = get.executable;
  ASSERT_PJRT_OK(api()->PJRT_Executable_Destroy(&destroy));
}

// --- Host transfers: stablehlo.send / recv to the host (JAX's callbacks) ---

// y = recv(channel 3) + x after send(x, channel 2).
constexpr std::string_view kHostProgram = R"mlir(
module @kiln_host_transfer {
  func.func public @main(%x: tensor<2xf32>) -> tensor<2xf32> {
    %t0 = "stablehlo.create_token"() : () -> !stablehlo.token
    %t1 = "stablehlo.send"(%x, %t0) {channel_handle = #stablehlo.channel_handle<handle = 2, type = 2>, is_host_transfer = true} : (tensor<2xf32>, !stablehlo.token) -> !stablehlo.token
    %r:2 = "stablehlo.recv"(%t1) {channel_handle = #stablehlo.channel_handle<handle = 3, type = 3>, is_host_transfer = true} : (!stablehlo.token) -> (tensor<2xf32>, !stablehlo.token)
    %y = stablehlo.add %r#0, %x : tensor<2xf32>
    return %y : tensor<2xf32>
  }
}
)mlir";

// What the test's host callbacks saw and do.
struct Host {
  std::vector<float> sent;
  std::vector<float> reply = {10.0f, 20.0f};
  bool fail_send = false;
  bool overrun = false;
  Status add_chunk_status;
};

PJRT_Error* OnSend(PJRT_Chunk* chunk, PJRT_CallbackError* callback_error, size_t, bool,
                   void* user) {
  auto& host = *static_cast<Host*>(user);
  const auto* data = static_cast<const float*>(chunk->data);
  host.sent.assign(data, data + chunk->size / sizeof(float));
  chunk->deleter(chunk->data, chunk->deleter_arg);
  if (host.fail_send) {
    const std::string message = "the callback refused";
    return (*callback_error)(PJRT_Error_Code_ABORTED, message.data(), message.size());
  }
  return nullptr;
}

void OnRecv(PJRT_CopyToDeviceStream* stream, void* user) {
  auto& host = *static_cast<Host*>(user);
  auto total = MAKE_ARGS(PJRT_CopyToDeviceStream_TotalBytes_Args);
  total.stream = stream;
  EXPECT_PJRT_OK(api()->PJRT_CopyToDeviceStream_TotalBytes(&total));
  EXPECT_EQ(total.total_bytes, 8);
  std::vector<float> payload = host.reply;
  if (host.overrun) payload.push_back(30.0f);
  PJRT_Chunk chunk{payload.data(), payload.size() * sizeof(float), nullptr, nullptr};
  auto add = MAKE_ARGS(PJRT_CopyToDeviceStream_AddChunk_Args);
  add.stream = stream;
  add.chunk = &chunk;
  host.add_chunk_status = Consume(api()->PJRT_CopyToDeviceStream_AddChunk(&add));
  if (add.transfer_complete != nullptr) EventPtr(add.transfer_complete).reset();
  auto destroy = MAKE_ARGS(PJRT_CopyToDeviceStream_Destroy_Args);
  destroy.stream = stream;
  EXPECT_PJRT_OK(api()->PJRT_CopyToDeviceStream_Destroy(&destroy));
}

// Runs the host program on {1.5, -2}; `host` null: no callbacks at all.
// Returns the run's status (the completion event's) and the output.
Status RunWithHost(PJRT_Client* client, PJRT_Device* device, PJRT_LoadedExecutable* loaded,
                   Host* host, std::vector<float>* output) {
  BufferPtr input = MakeBuffer(client, device, std::vector<float>{1.5f, -2}, {2});
  PJRT_Buffer* arguments[1] = {input.get()};
  PJRT_Buffer* const* argument_lists[1] = {arguments};
  PJRT_Buffer* results[1] = {nullptr};
  PJRT_Buffer** output_lists[1] = {results};
  PJRT_Event* complete[1] = {nullptr};
  PJRT_SendCallbackInfo send{2, host, OnSend};
  PJRT_RecvCallbackInfo recv{3, host, OnRecv};
  PJRT_SendCallbackInfo* sends[1] = {&send};
  PJRT_RecvCallbackInfo* recvs[1] = {&recv};
  auto options = MAKE_ARGS(PJRT_ExecuteOptions);
  if (host != nullptr) {
    options.send_callbacks = sends;
    options.recv_callbacks = recvs;
    options.num_send_ops = 1;
    options.num_recv_ops = 1;
  }
  auto execute = MAKE_ARGS(PJRT_LoadedExecutable_Execute_Args);
  execute.executable = loaded;
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  execute.device_complete_events = complete;
  Status status = Consume(api()->PJRT_LoadedExecutable_Execute(&execute));
  BufferPtr result(results[0]);
  EventPtr done(complete[0]);
  if (!status.ok()) return status;
  status = Await(done.get());
  if (status.ok()) *output = Read<float>(result.get());
  return status;
}

class HostTransferTest : public ClientFixture {
 protected:
  void SetUp() override {
    ClientFixture::SetUp();
    Status status = Compile(client_.get(), "mlir", kHostProgram, &loaded_);
    if (!status.ok()) GTEST_SKIP() << "cannot compile host transfers: " << status;
  }
  LoadedExecutablePtr loaded_;
};

TEST_F(HostTransferTest, SendAndRecvReachTheCallbacks) {
  Host host;
  std::vector<float> output;
  ASSERT_TRUE(IsOk(RunWithHost(client_.get(), device_, loaded_.get(), &host, &output)));
  EXPECT_EQ(host.sent, (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(output, (std::vector<float>{11.5f, 18.0f}));
  // Again: the same executable, fresh callbacks state.
  host.reply = {1.0f, 1.0f};
  ASSERT_TRUE(IsOk(RunWithHost(client_.get(), device_, loaded_.get(), &host, &output)));
  EXPECT_EQ(output, (std::vector<float>{2.5f, -1.0f}));
}

TEST_F(HostTransferTest, ACallbackErrorFailsTheRunWithItsMessage) {
  Host host;
  host.fail_send = true;
  std::vector<float> output;
  Status status = RunWithHost(client_.get(), device_, loaded_.get(), &host, &output);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_ABORTED)) << status;
  EXPECT_NE(status.message.find("the callback refused"), std::string::npos) << status;
}

TEST_F(HostTransferTest, AnOverrunningChunkIsRefusedAndTheRunFails) {
  Host host;
  host.overrun = true;
  std::vector<float> output;
  Status status = RunWithHost(client_.get(), device_, loaded_.get(), &host, &output);
  EXPECT_TRUE(HasCode(host.add_chunk_status, PJRT_Error_Code_INVALID_ARGUMENT))
      << host.add_chunk_status;
  EXPECT_FALSE(status.ok());
  if (IsKiln()) {
    EXPECT_NE(status.message.find("after 0 of 8 bytes"), std::string::npos) << status;
  }
}

TEST_F(HostTransferTest, RunWithoutCallbacksFailsCleanly) {
  SKIP_UNLESS_KILN();
  std::vector<float> output;
  Status status = RunWithHost(client_.get(), device_, loaded_.get(), nullptr, &output);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_FAILED_PRECONDITION)) << status;
  EXPECT_NE(status.message.find("no host callbacks"), std::string::npos) << status;
}

TEST_F(ClientFixture, StreamFunctionsRejectANullStream) {
  SKIP_UNLESS_KILN();
  auto total = MAKE_ARGS(PJRT_CopyToDeviceStream_TotalBytes_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_CopyToDeviceStream_TotalBytes(&total)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  auto add = MAKE_ARGS(PJRT_CopyToDeviceStream_AddChunk_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_CopyToDeviceStream_AddChunk(&add)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
  auto destroy = MAKE_ARGS(PJRT_CopyToDeviceStream_Destroy_Args);
  EXPECT_TRUE(HasCode(Consume(api()->PJRT_CopyToDeviceStream_Destroy(&destroy)),
                      PJRT_Error_Code_INVALID_ARGUMENT));
}

// The Layouts extension, if the plugin chains one from PJRT_Api.
const PJRT_Layouts_Extension* LayoutsExtension() {
  for (const PJRT_Extension_Base* base = api()->extension_start; base != nullptr;
       base = base->next) {
    if (base->type == PJRT_Extension_Type_Layouts) {
      return reinterpret_cast<const PJRT_Layouts_Extension*>(base);
    }
  }
  return nullptr;
}

// A layout's serialized bytes (XLA's layout text).
std::string SerializeLayout(const PJRT_Layouts_Extension& layouts,
                            PJRT_Layouts_MemoryLayout* layout) {
  auto args = MAKE_ARGS(PJRT_Layouts_MemoryLayout_Serialize_Args);
  args.layout = layout;
  Status status = Consume(layouts.PJRT_Layouts_MemoryLayout_Serialize(&args));
  EXPECT_TRUE(IsOk(status));
  if (!status.ok()) return "";
  std::string bytes(args.serialized_bytes, args.serialized_bytes_size);
  args.serialized_layout_deleter(args.serialized_layout);
  return bytes;
}

Status DestroyLayout(const PJRT_Layouts_Extension& layouts, PJRT_Layouts_MemoryLayout* layout) {
  auto args = MAKE_ARGS(PJRT_Layouts_MemoryLayout_Destroy_Args);
  args.layout = layout;
  return Consume(layouts.PJRT_Layouts_MemoryLayout_Destroy(&args));
}

// Two parameters and two results of ranks 2 and 0.
constexpr std::string_view kRanksProgram = R"mlir(
module @kiln_layouts {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>)
      -> (tensor<3x2xf32>, tensor<f32>) {
    %0 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %1 = stablehlo.add %arg1, %arg1 : tensor<f32>
    return %0, %1 : tensor<3x2xf32>, tensor<f32>
  }
}
)mlir";

// XLA's C API client reads executables' layouts through this extension
// (else it rebuilds HLO from the optimized program); every layout is dense
// row-major, serialized as XLA's layout text.
TEST_F(KilnExecutableTest, LayoutsExtensionDescribesRowMajorArrays) {
  const PJRT_Layouts_Extension* layouts = LayoutsExtension();
  ASSERT_NE(layouts, nullptr) << "Kiln chains the Layouts extension";
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(IsOk(Compile(client_.get(), "mlir", kRanksProgram, &loaded)));
  auto get = MAKE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_GetExecutable(&get));
  ExecutablePtr executable(get.executable);

  auto parameters = MAKE_ARGS(PJRT_Layouts_PJRT_Executable_GetParameterLayouts_Args);
  parameters.executable = executable.get();
  ASSERT_PJRT_OK(layouts->PJRT_Layouts_PJRT_Executable_GetParameterLayouts(&parameters));
  ASSERT_EQ(parameters.num_parameters, 2u);
  EXPECT_EQ(SerializeLayout(*layouts, parameters.layouts[0]), "{1,0}");
  EXPECT_EQ(SerializeLayout(*layouts, parameters.layouts[1]), "{}");
  auto outputs = MAKE_ARGS(PJRT_Layouts_PJRT_Executable_GetOutputLayouts_Args);
  outputs.executable = executable.get();
  ASSERT_PJRT_OK(layouts->PJRT_Layouts_PJRT_Executable_GetOutputLayouts(&outputs));
  ASSERT_EQ(outputs.num_outputs, 2u);
  EXPECT_EQ(SerializeLayout(*layouts, outputs.layouts[0]), "{1,0}");
  EXPECT_EQ(SerializeLayout(*layouts, outputs.layouts[1]), "{}");
  // The executable's layouts are its own.
  EXPECT_TRUE(HasCode(DestroyLayout(*layouts, outputs.layouts[0]),
                      PJRT_Error_Code_INVALID_ARGUMENT));

  auto fallback = MAKE_ARGS(PJRT_Layouts_PJRT_Client_GetDefaultLayout_Args);
  const int64_t dims[] = {4, 5, 6};
  fallback.client = client_.get();
  fallback.type = PJRT_Buffer_Type_F32;
  fallback.dims = dims;
  fallback.num_dims = 3;
  ASSERT_PJRT_OK(layouts->PJRT_Layouts_PJRT_Client_GetDefaultLayout(&fallback));
  EXPECT_EQ(SerializeLayout(*layouts, fallback.layout), "{2,1,0}");
  EXPECT_TRUE(IsOk(DestroyLayout(*layouts, fallback.layout)));
  EXPECT_TRUE(HasCode(DestroyLayout(*layouts, fallback.layout), PJRT_Error_Code_INVALID_ARGUMENT))
      << "a destroyed layout is not live";
  EXPECT_TRUE(IsOk(DestroyLayout(*layouts, nullptr)));
  const int64_t negative[] = {2, -1};
  fallback.dims = negative;
  fallback.num_dims = 2;
  EXPECT_TRUE(HasCode(Consume(layouts->PJRT_Layouts_PJRT_Client_GetDefaultLayout(&fallback)),
                      PJRT_Error_Code_INVALID_ARGUMENT));

  BufferPtr buffer = MakeBuffer<float>(client_.get(), device_, {1, 2, 3, 4}, {2, 2});
  ASSERT_NE(buffer, nullptr);
  auto of_buffer = MAKE_ARGS(PJRT_Layouts_PJRT_Buffer_MemoryLayout_Args);
  of_buffer.buffer = buffer.get();
  ASSERT_PJRT_OK(layouts->PJRT_Layouts_PJRT_Buffer_MemoryLayout(&of_buffer));
  EXPECT_EQ(SerializeLayout(*layouts, of_buffer.layout), "{1,0}");
  EXPECT_TRUE(IsOk(DestroyLayout(*layouts, of_buffer.layout)));
}

}  // namespace
}  // namespace conformance

namespace conformance {
namespace {

// Host offload: results land in the memory kind the program asks for, on
// the result's attribute or through an annotate_device_placement custom
// call (JAX's forms), and the executable reports the kinds.
constexpr const char* kHostOffloadProgram = R"(
module @host_offload {
  func.func public @main(%arg0: tensor<2xf32> {mhlo.memory_kind = "pinned_host"})
      -> (tensor<2xf32> {mhlo.memory_kind = "pinned_host"}, tensor<2xf32>, tensor<2xf32>) {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    %1 = stablehlo.custom_call @annotate_device_placement(%0) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "unpinned_host"}} : (tensor<2xf32>) -> tensor<2xf32>
    return %0, %1, %0 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
  }
})";

std::vector<std::string> Kinds(const char* const* kinds, const size_t* sizes, size_t count) {
  std::vector<std::string> result;
  for (size_t i = 0; i < count; ++i) result.emplace_back(kinds[i], sizes[i]);
  return result;
}

TEST_F(KilnExecutableTest, ResultsLandInTheMemoryKindsTheProgramAsksFor) {
  LoadedExecutablePtr loaded;
  ASSERT_TRUE(Compile(client_.get(), "mlir", kHostOffloadProgram, &loaded).ok());
  auto get = MAKE_ARGS(PJRT_LoadedExecutable_GetExecutable_Args);
  get.loaded_executable = loaded.get();
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_GetExecutable(&get));
  ExecutablePtr executable(get.executable);
  auto outputs = MAKE_ARGS(PJRT_Executable_OutputMemoryKinds_Args);
  outputs.executable = executable.get();
  ASSERT_PJRT_OK(api()->PJRT_Executable_OutputMemoryKinds(&outputs));
  EXPECT_EQ(Kinds(outputs.memory_kinds, outputs.memory_kind_sizes, outputs.num_outputs),
            (std::vector<std::string>{"pinned_host", "unpinned_host", "device"}));
  auto parameters = MAKE_ARGS(PJRT_Executable_ParameterMemoryKinds_Args);
  parameters.executable = executable.get();
  ASSERT_PJRT_OK(api()->PJRT_Executable_ParameterMemoryKinds(&parameters));
  EXPECT_EQ(Kinds(parameters.memory_kinds, parameters.memory_kind_sizes, parameters.num_parameters),
            (std::vector<std::string>{"pinned_host"}));

  BufferPtr input = MakeBuffer(client_.get(), device_, std::vector<float>{1.5f, -2}, {2});
  PJRT_Buffer* arguments[1] = {input.get()};
  PJRT_Buffer* const* argument_lists[1] = {arguments};
  PJRT_Buffer* results[3] = {nullptr, nullptr, nullptr};
  PJRT_Buffer** output_lists[1] = {results};
  PJRT_Event* complete[1] = {nullptr};
  auto options = MAKE_ARGS(PJRT_ExecuteOptions);
  auto execute = MAKE_ARGS(PJRT_LoadedExecutable_Execute_Args);
  execute.executable = loaded.get();
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = 1;
  execute.output_lists = output_lists;
  execute.device_complete_events = complete;
  ASSERT_PJRT_OK(api()->PJRT_LoadedExecutable_Execute(&execute));
  EventPtr done(complete[0]);
  std::vector<BufferPtr> owned;
  for (PJRT_Buffer* result : results) owned.emplace_back(result);
  ASSERT_TRUE(IsOk(Await(done.get())));
  const char* expected[] = {"pinned_host", "unpinned_host", "device"};
  for (size_t r = 0; r < 3; ++r) {
    auto memory = MAKE_ARGS(PJRT_Buffer_Memory_Args);
    memory.buffer = owned[r].get();
    ASSERT_PJRT_OK(api()->PJRT_Buffer_Memory(&memory));
    EXPECT_EQ(memory.memory, FindMemory(device_, expected[r])) << "result " << r;
    EXPECT_EQ(Read<float>(owned[r].get()), (std::vector<float>{3, -4}));
  }
}

TEST_F(KilnExecutableTest, AnUnknownMemoryKindIsInvalid) {
  std::string program = kHostOffloadProgram;
  program.replace(program.find("\"pinned_host\""), 13, "\"sparse_core\"");
  LoadedExecutablePtr loaded;
  Status status = Compile(client_.get(), "mlir", program, &loaded);
  EXPECT_TRUE(HasCode(status, PJRT_Error_Code_INVALID_ARGUMENT));
  EXPECT_NE(status.message.find("memory kind \"sparse_core\""), std::string::npos)
      << status.message;
}

}  // namespace
}  // namespace conformance
