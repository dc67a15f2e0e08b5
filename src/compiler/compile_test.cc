// What Compile decides about a whole program: whether a call runs on the
// caller's thread (Program::run_inline) or goes to its device's worker, and
// whether the kernels' workers poll between its nodes
// (Program::keep_workers_warm).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "compiler/lowering.h"
#include "compiler/lowering_test_util.h"
#include "ffi/registry.h"
#include "kernels/program_jit.h"

namespace kiln::compiler {
namespace {

using testing::CompileText;
using testing::Main;

// x * 2 + 1 over `n` floats.
std::string ScaleAndShift(int64_t n) {
  const std::string type = "tensor<" + std::to_string(n) + "xf32>";
  return Main("%x: " + type, type,
              "  %two = stablehlo.constant dense<2.0> : " + type +
                  "\n"
                  "  %one = stablehlo.constant dense<1.0> : " +
                  type +
                  "\n"
                  "  %0 = stablehlo.multiply %x, %two : " +
                  type +
                  "\n"
                  "  %1 = stablehlo.add %0, %one : " +
                  type +
                  "\n"
                  "  return %1 : " +
                  type);
}

// A call of up to about a hundred microseconds of work costs less on the
// caller's thread than handed to the device's worker and back (two thread
// wake-ups): 16,384 floats took 32-65 us through JAX that way, 28-34 us
// inline.
TEST(CompileTest, MidSizedProgramsRunOnTheCallersThread) {
  for (const int64_t n : {1, 1024, 16384, 65536, 262144}) {
    SCOPED_TRACE(n);
    auto program = CompileText(ScaleAndShift(n));
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    EXPECT_TRUE((*program)->run_inline);
  }
}

// Larger calls go to the device's worker, so that the caller can go on
// (JAX traces and dispatches the next call meanwhile).
TEST(CompileTest, LargeProgramsRunOnTheDevicesWorker) {
  for (const int64_t n : {1 << 20, 1 << 22}) {
    SCOPED_TRACE(n);
    auto program = CompileText(ScaleAndShift(n));
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    EXPECT_FALSE((*program)->run_inline);
  }
}

// A program of one node (x * 2 + 1 fuses into one loop) leaves the
// workers to sleep after it; one with a reduction after the loop, or a
// while loop whose body runs several nodes, keeps them polling.
TEST(CompileTest, WorkersPollBetweenNodesOnlyWhenThereIsANextNode) {
  auto one = CompileText(ScaleAndShift(1 << 20));
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ((*one)->graph->nodes.size(), 1u);
  EXPECT_FALSE((*one)->keep_workers_warm);

  auto two = CompileText(
      Main("%x: tensor<512x512xf32>", "tensor<512xf32>",
           "  %zero = stablehlo.constant dense<0.0> : tensor<f32>\n"
           "  %0 = stablehlo.dot_general %x, %x, contracting_dims = [1] x [0]"
           " : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>\n"
           "  %1 = stablehlo.reduce(%0 init: %zero) applies stablehlo.add"
           " across dimensions = [1] : (tensor<512x512xf32>, tensor<f32>)"
           " -> tensor<512xf32>\n"
           "  return %1 : tensor<512xf32>"));
  ASSERT_TRUE(two.ok()) << two.status().ToString();
  EXPECT_GT((*two)->graph->nodes.size(), 1u);
  EXPECT_TRUE((*two)->keep_workers_warm);
}

// A while loop whose condition and body are one node each runs two nodes
// per iteration: its workers poll too. (Its body's reduce_precision is an
// op loop programs do not run: the loop below without it is one node.)
TEST(CompileTest, WorkersPollInAWhileLoopOfOneNodeBodies) {
  auto loop = CompileText(R"(
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %limit = stablehlo.constant dense<1.0e6> : tensor<f32>
  %0 = stablehlo.while(%v = %x) : tensor<f32>
  cond {
    %1 = stablehlo.compare LT, %v, %limit, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = stablehlo.reduce_precision %v, format = e5m10 : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }
  return %0 : tensor<f32>
}
)");
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const Graph& graph = *(*loop)->graph;
  ASSERT_EQ(graph.nodes.size(), 1u);
  ASSERT_EQ(graph.nodes[0].regions.size(), 2u);
  for (const auto& region : graph.nodes[0].regions) ASSERT_EQ(region->nodes.size(), 1u);
  EXPECT_TRUE((*loop)->keep_workers_warm);
}

// The same loop on f32 is a loop program: one node with no regions, whose
// trips run on the calling thread, and a call of it runs on the caller's
// thread (the loop program was once marked as having side effects, which
// sent every call to the device's worker: twice a 2000-trip loop's time).
TEST(CompileTest, AWhileLoopOfSmallBodiesIsOneLoopProgram) {
  auto loop = CompileText(R"(
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %limit = stablehlo.constant dense<1.0e6> : tensor<f32>
  %0 = stablehlo.while(%v = %x) : tensor<f32>
  cond {
    %1 = stablehlo.compare LT, %v, %limit, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = stablehlo.add %v, %v : tensor<f32>
    stablehlo.return %2 : tensor<f32>
  }
  return %0 : tensor<f32>
}
)");
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const Graph& graph = *(*loop)->graph;
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_TRUE(graph.nodes[0].regions.empty());
  // The compare, and the add writing the carry itself (no copy at the end
  // of the trip).
  const std::string& detail = graph.nodes[0].detail;
  EXPECT_TRUE(detail == "loop program: 2 instructions" ||
              detail.starts_with("loop program: 2 instructions, "))
      << detail;
  // Where xbyak was built in and KILN_JIT allows it, the loop is machine code.
  EXPECT_EQ(detail.ends_with(" bytes of machine code"), kernels::ProgramJitAvailable()) << detail;
  EXPECT_FALSE((*loop)->keep_workers_warm);
  EXPECT_FALSE(graph.nodes[0].has_side_effects);
  EXPECT_TRUE((*loop)->run_inline);
}

XLA_FFI_Error* NoopHandler(XLA_FFI_CallFrame*) { return nullptr; }

// A user's FFI handler runs on the caller's thread as XLA's CPU client runs
// it, in a loop's body too: the loop node carries the handler's side
// effect without sending the program to the device's worker (a fori_loop
// of 1000 no-op calls took 144 ns a trip that way, 89 inline; XLA 83).
TEST(CompileTest, AnFfiCallInALoopBodyStillRunsOnTheCallersThread) {
  XLA_FFI_Handler_Bundle bundle{};
  bundle.execute = &NoopHandler;
  ASSERT_TRUE(ffi::Registry::Global().RegisterTyped("compile_test_noop", "kiln", bundle, 0).ok());
  auto loop = CompileText(R"(
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %trips = stablehlo.constant dense<1000> : tensor<i32>
  %0:2 = stablehlo.while(%i = %zero, %v = %x) : tensor<i32>, tensor<f32>
  cond {
    %1 = stablehlo.compare LT, %i, %trips, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %2 = stablehlo.custom_call @compile_test_noop(%v) {api_version = 4 : i32} : (tensor<f32>) -> tensor<f32>
    %3 = stablehlo.add %i, %one : tensor<i32>
    stablehlo.return %3, %2 : tensor<i32>, tensor<f32>
  }
  return %0#1 : tensor<f32>
}
)");
  ASSERT_TRUE(loop.ok()) << loop.status().ToString();
  const Graph& graph = *(*loop)->graph;
  ASSERT_EQ(graph.nodes.size(), 1u);
  EXPECT_TRUE(graph.nodes[0].has_side_effects);  // never folded nor dropped
  EXPECT_TRUE(graph.nodes[0].side_effects_run_inline);
  EXPECT_TRUE((*loop)->run_inline);
}

// Signed sub-byte integers arrive as ml_dtypes holds them (only their own
// bits: -2 as s4 is 0x0E) and leave so; in between the kernels see them
// sign-extended. Taken for whole bytes, 0x0E converted to s8 was 14.
TEST(CompileTest, SubByteIntegersCrossTheProgramBoundaryInTheHostsForm) {
  const std::string text = Main("%x: tensor<4xi4>", "(tensor<4xi8>, tensor<4xi4>)", R"(
  %wide = stablehlo.convert %x : (tensor<4xi4>) -> tensor<4xi8>
  %doubled = stablehlo.add %x, %x : tensor<4xi4>
  return %wide, %doubled : tensor<4xi8>, tensor<4xi4>)");
  auto results = testing::Run(text, {testing::Array::Of<uint8_t>({0x01, 0x0E, 0x08, 0xF7})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].As<int8_t>(), (std::vector<int8_t>{1, -2, -8, 7}));
  // 2, -4, -16 wrapped to 0, 14 wrapped to -2: in the host's form.
  EXPECT_EQ((*results)[1].As<uint8_t>(), (std::vector<uint8_t>{0x02, 0x0C, 0x00, 0x0E}));
}

// jaxlib's serializer folds broadcasts of scalar constants into splats
// (jax.random.normal of 4M floats holds several of 16 MiB). Expanded, each
// cost a copy and a scan of every byte at compile time (0.5 s for that
// program) and its size in the executable; they are broadcasts of their
// element, whether used in a loop, by a non-pointwise op or returned.
TEST(CompileTest, LargeSplatConstantsAreNotExpanded) {
  const std::string text = Main("%x: tensor<4x65536xf32>",
                                "(tensor<4x65536xf32>, tensor<4x4xf32>, tensor<4x65536xi16>)", R"(
  %three = stablehlo.constant dense<3.0> : tensor<4x65536xf32>
  %sevens = stablehlo.constant dense<7> : tensor<4x65536xi16>
  %sum = stablehlo.add %x, %three : tensor<4x65536xf32>
  %gram = stablehlo.dot_general %three, %x, contracting_dims = [1] x [1] : (tensor<4x65536xf32>, tensor<4x65536xf32>) -> tensor<4x4xf32>
  return %sum, %gram, %sevens : tensor<4x65536xf32>, tensor<4x4xf32>, tensor<4x65536xi16>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  size_t constant_bytes = 0;
  for (const auto& value : (*program)->graph->values) {
    if (value.constant) constant_bytes += value.constant->size();
  }
  EXPECT_LE(constant_bytes, kMaxFoldedBytes);
  std::vector<float> x(4 * 65536, 0.5f);
  auto results = testing::Run(text, {testing::Array::Of(x)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  ASSERT_EQ(results->size(), 3u);
  EXPECT_EQ((*results)[0].As<float>(), std::vector<float>(4 * 65536, 3.5f));
  EXPECT_EQ((*results)[1].As<float>(), std::vector<float>(16, 3.0f * 0.5f * 65536));
  EXPECT_EQ((*results)[2].As<int16_t>(), std::vector<int16_t>(4 * 65536, 7));
}

// jaxlib serializes lax.top_k as the composite "chlo.top_k" whose
// decomposition sorts each row whole; Kiln lowers the composite as top-k
// itself (one node, no sort), with the decomposition's results: largest
// first by the total order (NaN first), ties by position.
TEST(CompileTest, TopKCompositeIsTopKNotItsSort) {
  const std::string text = R"(module @m {
  func.func public @main(%arg0: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
    %0:2 = stablehlo.composite "chlo.top_k" %arg0 {composite_attributes = {is_stable = true, k = 2 : i64}, decomposition = @chlo.top_k.impl, version = 1 : i32} : (tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>)
    return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xi32>
  }
  func.func private @chlo.top_k.impl(%arg0: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x2xi32>) {
    %0 = stablehlo.iota dim = 1 : tensor<2x6xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %4 = stablehlo.compare GT, %arg1, %arg2, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %4 : tensor<i1>
    }) : (tensor<2x6xf32>, tensor<2x6xi32>) -> (tensor<2x6xf32>, tensor<2x6xi32>)
    %2 = stablehlo.slice %1#0 [0:2, 0:2] : (tensor<2x6xf32>) -> tensor<2x2xf32>
    %3 = stablehlo.slice %1#1 [0:2, 0:2] : (tensor<2x6xi32>) -> tensor<2x2xi32>
    return %2, %3 : tensor<2x2xf32>, tensor<2x2xi32>
  }
}
)";
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  ASSERT_EQ((*program)->graph->nodes.size(), 1u);
  EXPECT_EQ((*program)->graph->nodes[0].op, "stablehlo.composite");
  const std::vector<float> x = {1, 5, 3, 5, 0, 2, NAN, -1, 4, 4, 9, -0.0f};
  auto results = testing::Run(text, {testing::Array::Of(x)});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  const std::vector<float> values = (*results)[0].As<float>();
  EXPECT_EQ(values[0], 5);
  EXPECT_EQ(values[1], 5);
  EXPECT_TRUE(std::isnan(values[2]));
  EXPECT_EQ(values[3], 9);
  EXPECT_EQ((*results)[1].As<int32_t>(), (std::vector<int32_t>{1, 3, 0, 4}));
}

// A broadcast that only adds dimensions of size 1 ([n] to [n, 1]: a
// scatter's index vector, jnp.expand_dims) reads its operand in order: a
// view whose output aliases its input, not a strided copy (1M indices: 0.7
// ms before); a transpose stays a copy.
TEST(CompileTest, ReadsInOrderUnderUnitDimensionsAreViews) {
  const std::string text = Main("%x: tensor<6xi32>, %y: tensor<2x3xi32>",
                                "(tensor<6x1xi32>, tensor<1x6x1xi32>, tensor<3x2xi32>)", R"(
  %a = stablehlo.broadcast_in_dim %x, dims = [0] : (tensor<6xi32>) -> tensor<6x1xi32>
  %b = stablehlo.broadcast_in_dim %a, dims = [1, 2] : (tensor<6x1xi32>) -> tensor<1x6x1xi32>
  %t = stablehlo.transpose %y, dims = [1, 0] : (tensor<2x3xi32>) -> tensor<3x2xi32>
  return %a, %b, %t : tensor<6x1xi32>, tensor<1x6x1xi32>, tensor<3x2xi32>)");
  auto program = CompileText(text);
  ASSERT_TRUE(program.ok()) << program.status().ToString();
  int views = 0, copies = 0;
  for (const Node& node : (*program)->graph->nodes) {
    (node.output_aliases_input ? views : copies) += 1;
  }
  EXPECT_EQ(views, 2);
  EXPECT_EQ(copies, 1);
  auto results = testing::Run(text, {testing::Array::Of<int32_t>({1, 2, 3, 4, 5, 6}),
                                     testing::Array::Of<int32_t>({1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(results.ok()) << results.status().ToString();
  EXPECT_EQ((*results)[0].As<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ((*results)[1].As<int32_t>(), (std::vector<int32_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ((*results)[2].As<int32_t>(), (std::vector<int32_t>{1, 4, 2, 5, 3, 6}));
}

}  // namespace
}  // namespace kiln::compiler
