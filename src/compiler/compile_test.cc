// What Compile decides about a whole program: whether a call runs on the
// caller's thread (Program::run_inline) or goes to its device's worker.
#include <gtest/gtest.h>

#include <string>

#include "compiler/lowering_test_util.h"

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
                  "  %one = stablehlo.constant dense<1.0> : " + type +
                  "\n"
                  "  %0 = stablehlo.multiply %x, %two : " + type +
                  "\n"
                  "  %1 = stablehlo.add %0, %one : " + type +
                  "\n"
                  "  return %1 : " + type);
}

// A call of a few tens of microseconds of work costs less on the caller's
// thread than handed to the device's worker and back (two thread wake-ups):
// 16,384 floats took 43-72 us through JAX that way, 20-36 us inline.
TEST(CompileTest, MidSizedProgramsRunOnTheCallersThread) {
  for (const int64_t n : {1, 1024, 16384}) {
    SCOPED_TRACE(n);
    auto program = CompileText(ScaleAndShift(n));
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    EXPECT_TRUE((*program)->run_inline);
  }
}

// Larger calls go to the device's worker, so that the caller can go on
// (JAX traces and dispatches the next call meanwhile).
TEST(CompileTest, LargeProgramsRunOnTheDevicesWorker) {
  for (const int64_t n : {65536, 1 << 20}) {
    SCOPED_TRACE(n);
    auto program = CompileText(ScaleAndShift(n));
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    EXPECT_FALSE((*program)->run_inline);
  }
}

}  // namespace
}  // namespace kiln::compiler
