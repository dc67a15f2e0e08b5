// Checks the promise of the buffer plan (docs/execution.md): once a program
// has run, later runs of it allocate no memory. Every heap allocation of the
// process (malloc and everything built on it: operator new, Eigen, the
// standard library) is counted while a program runs, on every thread.
//
// The programs are the JAX programs of tests/data/text (small shapes, every
// op family JAX emits) and a set of large ones below, big enough that the
// kernels split work across threads and the GEMM packs its operands.
//
// Kernels keep scratch memory per thread (kernels/scratch.h, the GEMM's
// packing buffers), grown on a thread's first use; which pool thread runs
// which chunk varies between runs, so the program tests run with
// KILN_NUM_THREADS=1 (tests/CMakeLists.txt) to be deterministic, and
// ParallelForAllocatesNothing checks the pool itself with its threads.
//
// malloc is replaced for the whole binary through glibc's __libc_* entry
// points, so this test is not built with sanitizers (which replace malloc
// themselves).
#include <dlfcn.h>
#include <execinfo.h>
#include <gtest/gtest.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compiler/compile.h"
#include "compiler/executor.h"
#include "frontend/text/parser.h"
#include "ir/verifier.h"
#include "kernels/parallel.h"
#include "runtime/client.h"
#include "runtime/executable.h"

extern "C" {
void* __libc_malloc(size_t size);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* pointer, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
void __libc_free(void* pointer);
}

namespace {

std::atomic<bool> counting{false};
std::atomic<int64_t> allocations{0};
// KILN_ALLOC_BACKTRACE=1 prints where each counted allocation comes from
// (offsets into their binary: `addr2line -f -C -e kiln_steady_state_test`).
const bool print_backtraces = std::getenv("KILN_ALLOC_BACKTRACE") != nullptr;
thread_local bool in_count = false;

void Count() {
  if (!counting.load(std::memory_order_relaxed) || in_count) return;
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (print_backtraces) {
    in_count = true;
    void* frames[24];
    const int depth = backtrace(frames, 24);
    for (int i = 0; i < depth; ++i) {
      Dl_info info;
      char line[64];
      const bool found = dladdr(frames[i], &info) != 0 && info.dli_fbase != nullptr;
      const auto offset = reinterpret_cast<uintptr_t>(frames[i]) -
                          (found ? reinterpret_cast<uintptr_t>(info.dli_fbase) : 0);
      const int length = std::snprintf(line, sizeof(line), "%#lx\n",
                                       static_cast<unsigned long>(offset));
      (void)!write(STDERR_FILENO, line, static_cast<size_t>(length));
    }
    (void)!write(STDERR_FILENO, "--\n", 3);
    in_count = false;
  }
}

}  // namespace

extern "C" {
void* malloc(size_t size) {
  Count();
  return __libc_malloc(size);
}
void* calloc(size_t count, size_t size) {
  Count();
  return __libc_calloc(count, size);
}
void* realloc(void* pointer, size_t size) {
  Count();
  return __libc_realloc(pointer, size);
}
void free(void* pointer) { __libc_free(pointer); }
void* memalign(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
void* aligned_alloc(size_t alignment, size_t size) {
  Count();
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, size_t alignment, size_t size) {
  Count();
  void* pointer = __libc_memalign(alignment, size);
  if (pointer == nullptr) return ENOMEM;
  *out = pointer;
  return 0;
}
}  // extern "C"

namespace kiln::compiler {
namespace {

// Fills an argument with small values that keep loops finite and indices
// mostly in range: 1, 2, 3, 1, 2, 3, ... in the element type (zero bytes for
// types without a plain C++ counterpart).
std::vector<uint8_t> Argument(const Shape& shape) {
  std::vector<uint8_t> bytes(std::max<size_t>(shape.ByteSize(), 1));
  const int64_t count = shape.NumElements();
  auto fill = [&]<typename T>(T) {
    T* data = reinterpret_cast<T*>(bytes.data());
    for (int64_t i = 0; i < count; ++i) data[i] = static_cast<T>(1 + i % 3);
  };
  switch (shape.element_type) {
    case ElementType::kPred:
      fill(uint8_t{});
      for (auto& b : bytes) b &= 1;
      break;
    case ElementType::kS8:
    case ElementType::kU8: fill(uint8_t{}); break;
    case ElementType::kS16:
    case ElementType::kU16: fill(uint16_t{}); break;
    case ElementType::kS32:
    case ElementType::kU32: fill(uint32_t{}); break;
    case ElementType::kS64:
    case ElementType::kU64: fill(uint64_t{}); break;
    case ElementType::kF32: fill(float{}); break;
    case ElementType::kF64: fill(double{}); break;
    default: break;
  }
  return bytes;
}

struct Outcome {
  bool ran = false;         // the program compiled and ran (warm-up)
  std::string why_not;      // when it did not
  int64_t allocations = 0;  // in the measured runs
};

// Compiles `text`, runs it twice to warm up, then counts the allocations of
// three more runs in the same environment.
Outcome Measure(const std::string& text) {
  Outcome outcome;
  // KILN_STEADY_STATE_ONLY=text: measure only programs containing `text`
  // (with KILN_ALLOC_BACKTRACE, to look at one program's allocations).
  if (const char* only = std::getenv("KILN_STEADY_STATE_ONLY");
      only != nullptr && text.find(only) == std::string::npos) {
    return {true, "", 0};
  }
  auto module = frontend::text::ParseModule(text);
  if (!module.ok()) return {false, module.status().ToString(), 0};
  if (Status status = ir::Verify(*module); !status.ok()) return {false, status.ToString(), 0};
  auto program = Compile(*module, frontend::CompileOptions{});
  if (!program.ok()) return {false, program.status().ToString(), 0};
  std::vector<std::vector<uint8_t>> arguments;
  std::vector<const void*> parameters;
  for (const Shape& shape : (*program)->parameter_shapes) {
    arguments.push_back(Argument(shape));
  }
  for (const auto& argument : arguments) parameters.push_back(argument.data());
  std::vector<std::vector<uint8_t>> outputs;
  std::vector<void*> results;
  for (const Shape& shape : (*program)->result_shapes) {
    outputs.emplace_back(std::max<size_t>(shape.ByteSize(), 1));
  }
  for (auto& output : outputs) results.push_back(output.data());
  ExecutionEnv env;
  for (int run = 0; run < 2; ++run) {
    if (Status status = Execute(*(*program)->graph, parameters, results, env); !status.ok()) {
      return {false, status.ToString(), 0};
    }
  }
  allocations.store(0);
  counting.store(true);
  Status status;
  for (int run = 0; run < 3 && status.ok(); ++run) {
    status = Execute(*(*program)->graph, parameters, results, env);
  }
  counting.store(false);
  if (!status.ok()) return {false, status.ToString(), 0};
  outcome.ran = true;
  outcome.allocations = allocations.load();
  return outcome;
}

TEST(SteadyStateTest, CountingSeesAllocations) {
  // The counter itself works: a vector's growth is seen.
  allocations.store(0);
  counting.store(true);
  std::vector<int>* vector = new std::vector<int>(100);
  counting.store(false);
  delete vector;
  EXPECT_GE(allocations.load(), 2);
}

TEST(SteadyStateTest, ParallelForAllocatesNothing) {
  if (kernels::NumThreads() < 2) GTEST_SKIP() << "one thread: ParallelFor runs inline";
  std::vector<int64_t> sums(kernels::NumThreads() * 64, 0);
  auto body = [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) sums[static_cast<size_t>(i)] += i;
  };
  kernels::ParallelFor(static_cast<int64_t>(sums.size()), 1 << 20, body);  // starts the pool
  allocations.store(0);
  counting.store(true);
  for (int run = 0; run < 100; ++run) {
    kernels::ParallelFor(static_cast<int64_t>(sums.size()), 1 << 20, body);
  }
  counting.store(false);
  EXPECT_EQ(allocations.load(), 0);
  for (size_t i = 0; i < sums.size(); ++i) EXPECT_EQ(sums[i], 101 * static_cast<int64_t>(i));
}

TEST(SteadyStateTest, JaxProgramsAllocateNothingOnceWarm) {
  const std::filesystem::path dir = KILN_TEXT_CORPUS_DIR;
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no text corpus at " << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".mlir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  int ran = 0;
  for (const auto& file : files) {
    std::ifstream stream(file);
    std::stringstream text;
    text << stream.rdbuf();
    const Outcome outcome = Measure(text.str());
    if (!outcome.ran) {
      // Programs that need more than one device or a host (collectives,
      // callbacks) do not run here; say which.
      std::printf("  %s: not run here: %s\n", file.filename().c_str(),
                  outcome.why_not.substr(0, 160).c_str());
      continue;
    }
    ++ran;
    EXPECT_EQ(outcome.allocations, 0) << file.filename() << " allocated in steady state";
  }
  EXPECT_GE(ran, 50) << "too few corpus programs ran";
}

// Large programs: work split across threads, GEMM packing, big sorts, FFTs.
struct LargeProgram {
  const char* name;
  const char* text;
};

const LargeProgram kLargePrograms[] = {
    {"elementwise", R"(
func.func @main(%a: tensor<512x512xf32>, %b: tensor<512x512xf32>) -> tensor<512x512xf32> {
  %0 = stablehlo.multiply %a, %b : tensor<512x512xf32>
  %1 = stablehlo.exponential %0 : tensor<512x512xf32>
  %2 = stablehlo.add %1, %a : tensor<512x512xf32>
  return %2 : tensor<512x512xf32>
})"},
    {"dot", R"(
func.func @main(%a: tensor<384x512xf32>, %b: tensor<512x256xf32>) -> tensor<384x256xf32> {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<384x512xf32>, tensor<512x256xf32>) -> tensor<384x256xf32>
  return %0 : tensor<384x256xf32>
})"},
    {"batched_dot_f64", R"(
func.func @main(%a: tensor<4x128x300xf64>, %b: tensor<4x300x200xf64>) -> tensor<4x128x200xf64> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<4x128x300xf64>, tensor<4x300x200xf64>) -> tensor<4x128x200xf64>
  return %0 : tensor<4x128x200xf64>
})"},
    {"conv", R"(
func.func @main(%x: tensor<8x32x32x16xf32>, %w: tensor<3x3x16x32xf32>) -> tensor<8x32x32x32xf32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<8x32x32x16xf32>, tensor<3x3x16x32xf32>) -> tensor<8x32x32x32xf32>
  return %0 : tensor<8x32x32x32xf32>
})"},
    {"reduce", R"(
func.func @main(%x: tensor<1024x1024xf32>) -> (tensor<1024xf32>, tensor<1024xf32>) {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.reduce(%x init: %zero) applies stablehlo.add across dimensions = [0] : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  %1 = stablehlo.reduce(%x init: %zero) applies stablehlo.maximum across dimensions = [1] : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<1024xf32>
  return %0, %1 : tensor<1024xf32>, tensor<1024xf32>
})"},
    {"reduce_window", R"(
func.func @main(%x: tensor<8x64x64x16xf32>) -> tensor<8x32x32x16xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %0 = "stablehlo.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.maximum %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) {window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<8x64x64x16xf32>, tensor<f32>) -> tensor<8x32x32x16xf32>
  return %0 : tensor<8x32x32x16xf32>
})"},
    {"sort", R"(
func.func @main(%x: tensor<64x4096xf32>, %i: tensor<64x4096xi32>) -> (tensor<64x4096xf32>, tensor<64x4096xi32>) {
  %0:2 = "stablehlo.sort"(%x, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>):
    %lt = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {dimension = 1 : i64, is_stable = true} : (tensor<64x4096xf32>, tensor<64x4096xi32>) -> (tensor<64x4096xf32>, tensor<64x4096xi32>)
  return %0#0, %0#1 : tensor<64x4096xf32>, tensor<64x4096xi32>
})"},
    {"gather_scatter", R"(
func.func @main(%table: tensor<4096x64xf32>, %ids: tensor<2048x1xi32>, %updates: tensor<2048x64xf32>) -> (tensor<2048x64xf32>, tensor<4096x64xf32>) {
  %0 = "stablehlo.gather"(%table, %ids) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 64>, indices_are_sorted = false} : (tensor<4096x64xf32>, tensor<2048x1xi32>) -> tensor<2048x64xf32>
  %1 = "stablehlo.scatter"(%table, %ids, %updates) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, indices_are_sorted = false, unique_indices = false} : (tensor<4096x64xf32>, tensor<2048x1xi32>, tensor<2048x64xf32>) -> tensor<4096x64xf32>
  return %0, %1 : tensor<2048x64xf32>, tensor<4096x64xf32>
})"},
    {"fft", R"(
func.func @main(%x: tensor<64x1000xf32>) -> tensor<64x501xcomplex<f32>> {
  %0 = stablehlo.fft %x, type = RFFT, length = [1000] : (tensor<64x1000xf32>) -> tensor<64x501xcomplex<f32>>
  return %0 : tensor<64x501xcomplex<f32>>
})"},
    {"transpose_pad_concat", R"(
func.func @main(%x: tensor<256x512xf32>) -> tensor<1026x258xf32> {
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<256x512xf32>) -> tensor<512x256xf32>
  %1 = stablehlo.pad %0, %zero, low = [1, 1], high = [0, 1], interior = [0, 0] : (tensor<512x256xf32>, tensor<f32>) -> tensor<513x258xf32>
  %2 = stablehlo.concatenate %1, %1, dim = 0 : (tensor<513x258xf32>, tensor<513x258xf32>) -> tensor<1026x258xf32>
  return %2 : tensor<1026x258xf32>
})"},
    {"causal_mask", R"(
func.func @main(%s: tensor<4x256x256xf32>) -> tensor<4x256x256xf32> {
  %r = stablehlo.iota dim = 0 : tensor<256x256xi32>
  %c = stablehlo.iota dim = 1 : tensor<256x256xi32>
  %m = stablehlo.compare GE, %r, %c, SIGNED : (tensor<256x256xi32>, tensor<256x256xi32>) -> tensor<256x256xi1>
  %mb = stablehlo.broadcast_in_dim %m, dims = [1, 2] : (tensor<256x256xi1>) -> tensor<4x256x256xi1>
  %low = stablehlo.constant dense<-1.0e9> : tensor<f32>
  %lows = stablehlo.broadcast_in_dim %low, dims = [] : (tensor<f32>) -> tensor<4x256x256xf32>
  %0 = stablehlo.select %mb, %s, %lows : tensor<4x256x256xi1>, tensor<4x256x256xf32>
  return %0 : tensor<4x256x256xf32>
})"},
    {"while_with_dot", R"(
func.func @main(%x: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %0:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i32>, tensor<128x128xf32>
  cond {
    %limit = stablehlo.constant dense<4> : tensor<i32>
    %c = stablehlo.compare LT, %i, %limit, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %next = stablehlo.add %i, %one : tensor<i32>
    %d = stablehlo.dot_general %acc, %x, contracting_dims = [1] x [0] : (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
    %t = stablehlo.tanh %d : tensor<128x128xf32>
    stablehlo.return %next, %t : tensor<i32>, tensor<128x128xf32>
  }
  return %0#1 : tensor<128x128xf32>
})"},
    {"rng", R"(
func.func @main(%key: tensor<2xui64>) -> (tensor<2xui64>, tensor<256x1024xui32>) {
  %0:2 = stablehlo.rng_bit_generator %key, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<256x1024xui32>)
  return %0#0, %0#1 : tensor<2xui64>, tensor<256x1024xui32>
})"},
    {"cholesky_solve", R"(
func.func @main(%a: tensor<8x64x64xf32>, %b: tensor<8x64x32xf32>) -> (tensor<8x64x64xf32>, tensor<8x64x32xf32>) {
  %0 = stablehlo.cholesky %a, lower = true : tensor<8x64x64xf32>
  %1 = "stablehlo.triangular_solve"(%0, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<8x64x64xf32>, tensor<8x64x32xf32>) -> tensor<8x64x32xf32>
  return %0, %1 : tensor<8x64x64xf32>, tensor<8x64x32xf32>
})"},
};

TEST(SteadyStateTest, LargeProgramsAllocateNothingOnceWarm) {
  for (const LargeProgram& program : kLargePrograms) {
    const Outcome outcome = Measure(program.text);
    ASSERT_TRUE(outcome.ran) << program.name << ": " << outcome.why_not;
    EXPECT_EQ(outcome.allocations, 0) << program.name << " allocated in steady state";
  }
}

// What one call of a small program allocates in the runtime, on top of the
// (allocation-free) run: only what the caller keeps. For x + 1 on f32[4]
// that is the output buffer (its record and shape), its memory (record
// and data), the run's completion event, and the lists of the run's
// inputs, outputs and output buffers: 8 blocks. Before the dispatch path
// was trimmed (issue 30) the inline run's closure, its hand-off to the
// queue, the launch-id tracking, the donation flags, the memory spaces and
// the parameter and result tables allocated besides.
TEST(SteadyStateTest, AnExecuteAllocatesOnlyWhatTheCallerKeeps) {
  runtime::ClientOptions options;
  options.num_devices = 1;
  auto client = runtime::Client::Create(options, runtime::CreateHostBackend());
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const std::string text = R"(
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1.0> : tensor<4xf32>
  %0 = stablehlo.add %x, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
})";
  auto loaded = (*client)->Compile(
      std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()), "mlir", {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  runtime::Device* device = (*client)->devices()[0];
  std::vector<float> data = {1, 2, 3, 4};
  runtime::HostBuffer host{data.data(),
                           Shape{ElementType::kF32, {4}},
                           {},
                           runtime::HostBufferSemantics::kImmutableOnlyDuringCall};
  auto transfer = (*client)->BufferFromHostBuffer(host, device->default_memory_space());
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  std::unique_ptr<runtime::Buffer> argument = std::move(transfer->buffer);
  ASSERT_TRUE(argument->ready_event()->Await().ok());
  runtime::Buffer* arguments[] = {argument.get()};
  runtime::ExecuteOptions execute;
  execute.launch_id = 7;  // as JAX passes one with every call
  auto run_once = [&] {
    auto run = (*loaded)->ExecuteOne(arguments, device, execute);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    ASSERT_TRUE(run->done->Await().ok());
  };
  for (int i = 0; i < 20; ++i) run_once();
  constexpr int kCalls = 100;
  allocations = 0;
  counting = true;
  for (int i = 0; i < kCalls; ++i) run_once();
  counting = false;
  EXPECT_LE(allocations.load(), 8 * kCalls) << allocations.load() / double(kCalls) << " a call";
}

}  // namespace
}  // namespace kiln::compiler
