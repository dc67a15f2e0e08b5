// An exception in a kernel fails its run, not the process: a std::bad_alloc
// thrown on a kernels::ParallelFor worker (the test-only custom_call
// kiln.testing.throw_on_worker, lowered only while KILN_TESTING_FAULTS=1)
// reaches the run's event as RESOURCE_EXHAUSTED through the real execute
// path, and the client then runs the next program.
#include "runtime/executable.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/parallel.h"
#include "runtime/client_test_util.h"

namespace kiln::runtime {
namespace {

// x through the test-only fault: its run throws on a pool worker.
constexpr std::string_view kThrowOnWorker = R"mlir(
func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @kiln.testing.throw_on_worker(%arg0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

// x + x: an ordinary program.
constexpr std::string_view kDouble = R"mlir(
func.func public @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %arg0, %arg0 : tensor<4xf32>
  return %0 : tensor<4xf32>
}
)mlir";

// Sets an environment variable for its lifetime, then unsets it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
};

// Runs programs on a one-device client with f32[4] arguments.
class ExecutableTest : public OneDeviceTest {
 protected:
  // Compiles StableHLO text for the client's device.
  StatusOr<std::unique_ptr<LoadedExecutable>> Compile(std::string_view text) {
    return client_->Compile(std::span(reinterpret_cast<const uint8_t*>(text.data()), text.size()),
                            "mlir", {});
  }

  // Runs `executable` on {1, 2, 3, 4}: the run's status, and its result in
  // `result` when it succeeded.
  Status RunOnRamp(LoadedExecutable& executable, std::vector<float>* result) {
    std::vector<float> data = {1, 2, 3, 4};
    HostBuffer host{data.data(),
                    Shape{ElementType::kF32, {4}},
                    {},
                    HostBufferSemantics::kImmutableOnlyDuringCall};
    KILN_ASSIGN_OR_RETURN(auto transfer, client_->BufferFromHostBuffer(host, space_));
    Buffer* arguments[] = {transfer.buffer.get()};
    KILN_ASSIGN_OR_RETURN(LoadedExecutable::Run run,
                          executable.Execute(arguments, client_->devices()[0]));
    KILN_RETURN_IF_ERROR(run.done->Await());
    result->assign(4, 0.0f);
    KILN_ASSIGN_OR_RETURN(auto read, client_->ToHostBuffer(*run.outputs[0], result->data(),
                                                           DenseByteStrides(std::vector<int64_t>{4},
                                                                            sizeof(float))));
    return read->Await();
  }
};

TEST_F(ExecutableTest, AnExceptionOnAPoolWorkerFailsTheRunAndTheNextProgramRuns) {
  if (kernels::NumThreads() < 2) GTEST_SKIP() << "no pool workers (KILN_NUM_THREADS=1 or one core)";
  std::unique_ptr<LoadedExecutable> faulty;
  {
    ScopedEnv faults("KILN_TESTING_FAULTS", "1");
    auto compiled = Compile(kThrowOnWorker);
    ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
    faulty = std::move(compiled).value();
  }
  auto doubling = Compile(kDouble);
  ASSERT_TRUE(doubling.ok()) << doubling.status().ToString();
  std::vector<float> result;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    Status failed = RunOnRamp(*faulty, &result);
    EXPECT_EQ(failed.code(), StatusCode::kResourceExhausted) << failed.ToString();
    EXPECT_NE(failed.message().find("out of host memory"), std::string::npos) << failed.ToString();
    Status ran = RunOnRamp(**doubling, &result);
    ASSERT_TRUE(ran.ok()) << ran.ToString();
    EXPECT_EQ(result, (std::vector<float>{2, 4, 6, 8}));
  }
}

// x * 0.5 + sin(x) * 0 + 1 over 1M floats, its argument donated to its
// result: enough work to run on the device's queue, not inline.
constexpr std::string_view kDonatedStep = R"mlir(
func.func public @main(%arg0: tensor<1048576xf32> {tf.aliasing_output = 0 : i32}) -> tensor<1048576xf32> {
  %half = stablehlo.constant dense<0.5> : tensor<1048576xf32>
  %one = stablehlo.constant dense<1.0> : tensor<1048576xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1048576xf32>
  %0 = stablehlo.multiply %arg0, %half : tensor<1048576xf32>
  %1 = stablehlo.sine %arg0 : tensor<1048576xf32>
  %2 = stablehlo.multiply %1, %zero : tensor<1048576xf32>
  %3 = stablehlo.add %0, %2 : tensor<1048576xf32>
  %4 = stablehlo.add %3, %one : tensor<1048576xf32>
  return %4 : tensor<1048576xf32>
}
)mlir";

// Steps dispatched one after another without waiting, each donating the
// last one's pending result (a training loop's parameters): every step
// writes its result in place of the one before, as the run before it is
// the only other holder of that memory and the step waits for it. Such
// steps once each took fresh memory (2000 steps of a 4 MB parameter held
// 7.3 GB). The values are the steps' in order.
TEST_F(ExecutableTest, ChainedDonatedStepsWriteInPlaceOfThePendingResult) {
  auto compiled = Compile(kDonatedStep);
  ASSERT_TRUE(compiled.ok()) << compiled.status().ToString();
  constexpr size_t kCount = size_t{1} << 20;
  std::vector<float> data(kCount);
  for (size_t k = 0; k < kCount; ++k) data[k] = static_cast<float>(k % 1000) - 500.0f;
  HostBuffer host{data.data(),
                  Shape{ElementType::kF32, {static_cast<int64_t>(kCount)}},
                  {},
                  HostBufferSemantics::kImmutableOnlyDuringCall};
  auto transfer = client_->BufferFromHostBuffer(host, space_);
  ASSERT_TRUE(transfer.ok()) << transfer.status().ToString();
  std::unique_ptr<Buffer> current = std::move(transfer->buffer);
  std::vector<const void*> places;
  std::shared_ptr<Event> last;
  constexpr int kSteps = 20;
  for (int step = 0; step < kSteps; ++step) {
    Buffer* arguments[] = {current.get()};
    auto run = (*compiled)->Execute(arguments, client_->devices()[0]);
    ASSERT_TRUE(run.ok()) << run.status().ToString();
    current = std::move(run->outputs[0]);
    last = run->done;
    auto memory = current->memory();
    ASSERT_TRUE(memory.ok()) << memory.status().ToString();
    places.push_back((*memory)->data());
  }
  ASSERT_TRUE(last->Await().ok());
  // The first step's argument is the transfer's memory (its own); from the
  // second on, each step's result is the previous one's memory.
  for (int step = 2; step < kSteps; ++step) EXPECT_EQ(places[step], places[1]) << step;
  std::vector<float> result(kCount);
  auto read = client_->ToHostBuffer(
      *current, result.data(),
      DenseByteStrides(std::vector<int64_t>{static_cast<int64_t>(kCount)}, sizeof(float)));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_TRUE((*read)->Await().ok());
  for (size_t k = 0; k < kCount; k += 997) {
    float want = data[k];
    for (int step = 0; step < kSteps; ++step) want = want * 0.5f + 1.0f;
    ASSERT_FLOAT_EQ(result[k], want) << k;
  }
}

TEST_F(ExecutableTest, TheFaultTargetIsUnknownWithoutTheVariable) {
  ::unsetenv("KILN_TESTING_FAULTS");
  auto compiled = Compile(kThrowOnWorker);
  ASSERT_FALSE(compiled.ok());
  EXPECT_EQ(compiled.status().code(), StatusCode::kUnimplemented) << compiled.status().ToString();
  EXPECT_NE(compiled.status().message().find("kiln.testing.throw_on_worker"), std::string::npos)
      << compiled.status().ToString();
  ScopedEnv other("KILN_TESTING_FAULTS", "0");
  EXPECT_EQ(Compile(kThrowOnWorker).status().code(), StatusCode::kUnimplemented);
}

}  // namespace
}  // namespace kiln::runtime
