#include "programs.h"

namespace conformance {

const std::string_view kAddProgram = R"mlir(
module @kiln_conformance {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.add %arg0, %arg0 : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
)mlir";

// kAddProgram as MLIR bytecode of the StableHLO dialect (not a portable
// artifact), as jaxlib's MLIR bindings write it (write_bytecode, version 6):
// 210 bytes from tests/data/make_stablehlo_bytecode.py --fixture add.
const std::string_view kAddProgramStablehloBytecode(
    "\x4d\x4c\xef\x52\x0d\x4d\x4c\x49\x52\x32\x34\x2e\x30\x2e\x30\x67"
    "\x69\x74\x00\x01\x1f\x07\x01\x05\x09\x09\x01\x03\x0f\x03\x05\x07"
    "\x13\x05\x03\x17\x03\x23\x11\x07\x01\x11\x0b\x13\x0b\x0b\x13\x13"
    "\x13\x13\x01\x07\x13\x17\x07\x02\x49\x05\x0d\x17\x01\x01\x01\x0d"
    "\x03\x05\x0f\x17\x01\x05\x03\x17\x01\x05\x23\x17\x01\x07\x11\x17"
    "\x01\x09\x07\x1b\x03\x09\x05\x05\x03\x01\x03\x01\x0b\x04\x4d\x05"
    "\x01\x50\x03\x01\x07\x04\x3d\x03\x01\x05\x03\x50\x09\x03\x07\x04"
    "\x29\x03\x05\x0b\x03\x03\x0b\x00\x07\x06\x0d\x03\x01\x05\x01\x01"
    "\x05\x04\x0f\x03\x03\x06\x03\x01\x05\x01\x00\x73\x11\x0b\x05\x09"
    "\x0f\x0f\x15\x0b\x11\x62\x75\x69\x6c\x74\x69\x6e\x00\x66\x75\x6e"
    "\x63\x00\x73\x74\x61\x62\x6c\x65\x68\x6c\x6f\x00\x6d\x6f\x64\x75"
    "\x6c\x65\x00\x72\x65\x74\x75\x72\x6e\x00\x61\x64\x64\x00\x2d\x00"
    "\x6d\x61\x69\x6e\x00\x08\x17\x05\x05\x01\x01\x0d\x01\x05\x01\x01"
    "\x07\x01",
    210);

const std::string_view kCompileOptions = "\x1a\x04\x20\x01\x28\x01";

PJRT_Program MakeProgram(std::string_view format, std::string& code) {
  auto program = MAKE_ARGS(PJRT_Program);
  program.code = code.data();
  program.code_size = code.size();
  program.format = format.data();
  program.format_size = format.size();
  return program;
}

Status Compile(PJRT_Client* client, std::string_view format, std::string_view code,
               LoadedExecutablePtr* executable) {
  std::string code_copy(code);  // PJRT_Program.code is not const
  PJRT_Program program = MakeProgram(format, code_copy);
  auto args = MAKE_ARGS(PJRT_Client_Compile_Args);
  args.client = client;
  args.program = &program;
  args.compile_options = kCompileOptions.data();
  args.compile_options_size = kCompileOptions.size();
  Status status = Consume(api()->PJRT_Client_Compile(&args));
  if (status.ok()) {
    EXPECT_NE(args.executable, nullptr);
    executable->reset(args.executable);
  } else {
    EXPECT_EQ(args.executable, nullptr) << "a failed compile returned an executable";
  }
  return status;
}

Status ExecuteOnce(PJRT_LoadedExecutable* loaded, std::vector<PJRT_Buffer*> arguments,
                   size_t num_args, BufferPtr* result, EventPtr* done,
                   const ExecuteExtras& extras) {
  PJRT_Buffer* const* argument_lists[1] = {arguments.data()};
  PJRT_Buffer* results[1] = {nullptr};
  PJRT_Buffer** output_lists[1] = {results};
  PJRT_Event* complete[1] = {nullptr};
  auto options = MAKE_ARGS(PJRT_ExecuteOptions);
  options.non_donatable_input_indices = extras.non_donatable.data();
  options.num_non_donatable_input_indices = extras.non_donatable.size();
  options.launch_id = extras.launch_id;
  options.context = extras.context;
  auto execute = MAKE_ARGS(PJRT_LoadedExecutable_Execute_Args);
  execute.executable = loaded;
  execute.options = &options;
  execute.argument_lists = argument_lists;
  execute.num_devices = 1;
  execute.num_args = num_args;
  execute.output_lists = output_lists;
  execute.device_complete_events = complete;
  Status status = Consume(api()->PJRT_LoadedExecutable_Execute(&execute));
  result->reset(results[0]);
  done->reset(complete[0]);
  return status;
}

std::vector<float> RunAddition(PJRT_Client* client, PJRT_Device* device,
                               PJRT_LoadedExecutable* loaded) {
  BufferPtr input = MakeBuffer(client, device, std::vector<float>{1.5f, -2}, {2});
  EXPECT_NE(input, nullptr);
  BufferPtr result;
  EventPtr done;
  EXPECT_TRUE(IsOk(ExecuteOnce(loaded, {input.get()}, 1, &result, &done)));
  if (done == nullptr || result == nullptr) return {};
  EXPECT_TRUE(IsOk(Await(done.get())));
  return Read<float>(result.get());
}

}  // namespace conformance
