// Generated f32 loops against the same programs run step by step with the
// tile kernels (which tile_f32_test.cc holds to Unary / Binary).
#include "kernels/loop_jit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "base/env.h"
#include "kernels/float_env.h"
#include "kernels/tile_f32.h"
#include "kernels/vector_math.h"

namespace kiln::kernels {
namespace {

using Kind = LoopStep::Kind;

LoopStep Load(int slot) { return {Kind::kLoad, 0, -1, -1, slot, 0}; }
LoopStep Splat(float value) { return {Kind::kSplat, 0, -1, -1, 0, value}; }
LoopStep Un(UnaryOp op, int a) { return {Kind::kUnary, static_cast<uint8_t>(op), a, -1, 0, 0}; }
LoopStep Bin(BinaryOp op, int a, int b) {
  return {Kind::kBinary, static_cast<uint8_t>(op), a, b, 0, 0};
}
LoopStep Store(int a, int slot) { return {Kind::kStore, 0, a, -1, slot, 0}; }

// The program run step by step over whole arrays with the tile kernels.
std::vector<std::vector<float>> Reference(const std::vector<LoopStep>& steps,
                                          const std::vector<std::vector<float>>& in,
                                          int num_outputs, size_t n) {
  std::vector<std::vector<float>> values(steps.size());
  std::vector<std::vector<float>> out(static_cast<size_t>(num_outputs), std::vector<float>(n));
  for (size_t s = 0; s < steps.size(); ++s) {
    const LoopStep& step = steps[s];
    std::vector<float>& v = values[s];
    v.resize(n);
    switch (step.kind) {
      case Kind::kLoad: v = in[static_cast<size_t>(step.slot)]; break;
      case Kind::kLoadScalar: v.assign(n, in[static_cast<size_t>(step.slot)][0]); break;
      case Kind::kSplat: v.assign(n, step.constant); break;
      case Kind::kStore:
        out[static_cast<size_t>(step.slot)] = values[static_cast<size_t>(step.a)];
        break;
      case Kind::kUnary: {
        const float* args[] = {values[static_cast<size_t>(step.a)].data()};
        TileUnaryF32(static_cast<UnaryOp>(step.op))(args, v.data(), static_cast<int64_t>(n));
        break;
      }
      case Kind::kBinary: {
        const float* args[] = {values[static_cast<size_t>(step.a)].data(),
                               values[static_cast<size_t>(step.b)].data()};
        TileBinaryF32(static_cast<BinaryOp>(step.op))(args, v.data(), static_cast<int64_t>(n));
        break;
      }
    }
  }
  return out;
}

std::vector<float> Values(std::mt19937& random, size_t n) {
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            0.0f,
                            -0.0f,
                            1.0f,
                            2.5f};
  std::uniform_real_distribution<float> uniform(-4.0f, 4.0f);
  std::vector<float> values(n);
  for (float& x : values) {
    x = random() % 6 == 0 ? specials[random() % std::size(specials)] : uniform(random);
  }
  return values;
}

// Same bits (NaN matches NaN), or within `ulps` when a transcendental op is
// in the program (Eigen's packet and scalar forms differ in the last bits,
// and the reference's arrays fold their unaligned heads with the scalar one).
void ExpectClose(const std::vector<float>& expected, const std::vector<float>& actual, int ulps,
                 const std::string& what) {
  for (size_t i = 0; i < expected.size(); ++i) {
    if (std::isnan(expected[i]) && std::isnan(actual[i])) continue;
    const auto a = static_cast<int64_t>(std::bit_cast<int32_t>(expected[i]));
    const auto b = static_cast<int64_t>(std::bit_cast<int32_t>(actual[i]));
    const bool tiny = (std::bit_cast<uint32_t>(expected[i]) & 0x7f800000u) == 0 &&
                      (std::bit_cast<uint32_t>(actual[i]) & 0x7f800000u) == 0;
    if (ulps > 0 && tiny) continue;
    ASSERT_LE(std::abs(a - b), ulps)
        << what << " element " << i << ": " << expected[i] << " (expected) vs " << actual[i];
  }
}

// Whether the program calls a packet form (a transcendental op but exp):
// AVX-512 code has none to call, and CompileLoop writes AVX2 code instead.
bool CallsAPacketForm(const std::vector<LoopStep>& steps) {
  return std::any_of(steps.begin(), steps.end(), [](const LoopStep& step) {
    const auto op = static_cast<UnaryOp>(step.op);
    return step.kind == Kind::kUnary && op != UnaryOp::kExponential &&
           (op == UnaryOp::kLog || op == UnaryOp::kTanh || op == UnaryOp::kLogistic ||
            op == UnaryOp::kLogPlusOne || op == UnaryOp::kExponentialMinusOne ||
            op == UnaryOp::kSine || op == UnaryOp::kCosine);
  });
}

// Compiles `steps` for `isa` and runs them over n elements, and compares
// with Reference. A program AVX-512 code cannot hold is refused there, and
// CompileLoop's choice, AVX2 code, is checked instead.
void Check(const std::vector<LoopStep>& steps, int num_inputs, int num_outputs, size_t n,
           std::mt19937& random, int ulps, const std::string& what, LoopIsa isa) {
  std::unique_ptr<LoopCode> code = CompileLoop(steps, num_inputs, num_outputs, isa);
  if (isa == LoopIsa::kAvx512 && CallsAPacketForm(steps)) {
    ASSERT_EQ(code, nullptr) << what;
    code = CompileLoop(steps, num_inputs, num_outputs);
    ASSERT_NE(code, nullptr) << what;
    ASSERT_EQ(code->lanes(), 8) << what;
  }
  ASSERT_NE(code, nullptr) << what;
  ASSERT_EQ(code->lanes(), isa == LoopIsa::kAvx512 && !CallsAPacketForm(steps) ? 16 : 8);
  std::vector<std::vector<float>> in;
  for (int j = 0; j < num_inputs; ++j) in.push_back(Values(random, n));
  std::vector<std::vector<float>> out(static_cast<size_t>(num_outputs),
                                      std::vector<float>(n, 7.0f));
  std::vector<const float*> in_ptrs;
  for (auto& v : in) in_ptrs.push_back(v.data());
  std::vector<float*> out_ptrs;
  for (auto& v : out) out_ptrs.push_back(v.data());
  code->Run(in_ptrs.data(), out_ptrs.data(), static_cast<int64_t>(n));
  const auto expected = Reference(steps, in, num_outputs, n);
  for (int k = 0; k < num_outputs; ++k) {
    ExpectClose(expected[static_cast<size_t>(k)], out[static_cast<size_t>(k)], ulps,
                what + " output " + std::to_string(k) + " n " + std::to_string(n));
  }
}

// Every test runs once per instruction set, skipping those the machine
// lacks.
class LoopJitTest : public ::testing::TestWithParam<LoopIsa> {
 public:
  static std::string Name(LoopIsa isa) { return isa == LoopIsa::kAvx2 ? "avx2" : "avx512"; }

 protected:
  void SetUp() override {
    if (Compile(std::vector<LoopStep>{Load(0), Store(0, 0)}, 1, 1) == nullptr) {
      GTEST_SKIP() << "no generated " << Name(GetParam())
                   << " code on this machine (needs x86-64 with AVX2 and FMA, AVX-512 F and "
                      "DQ for avx512, and KILN_JIT unset or 1)";
    }
  }
  std::unique_ptr<LoopCode> Compile(const std::vector<LoopStep>& steps, int num_inputs,
                                    int num_outputs) {
    return CompileLoop(steps, num_inputs, num_outputs, GetParam());
  }
  void Check(const std::vector<LoopStep>& steps, int num_inputs, int num_outputs, size_t n,
             int ulps, const std::string& what) {
    kernels::Check(steps, num_inputs, num_outputs, n, random_, ulps, what, GetParam());
  }
  ScopedFlushDenormals flush_;  // as programs run (float_env.h)
  std::mt19937 random_{5};
};

INSTANTIATE_TEST_SUITE_P(Isa, LoopJitTest, ::testing::Values(LoopIsa::kAvx2, LoopIsa::kAvx512),
                         [](const auto& test) { return LoopJitTest::Name(test.param); });

TEST_P(LoopJitTest, EveryOpMatchesItsTileKernel) {
  const BinaryOp binary[] = {BinaryOp::kAdd,    BinaryOp::kSubtract, BinaryOp::kMultiply,
                             BinaryOp::kDivide, BinaryOp::kMaximum,  BinaryOp::kMinimum};
  for (BinaryOp op : binary) {
    ASSERT_TRUE(LoopJitSupports(op));
    for (size_t n : {1u, 7u, 8u, 9u, 15u, 16u, 17u, 64u, 515u}) {
      Check({Load(0), Load(1), Bin(op, 0, 1), Store(2, 0), Bin(op, 1, 0), Store(4, 1)}, 2, 2, n, 0,
            "binary " + std::to_string(static_cast<int>(op)));
    }
  }
  const UnaryOp exact[] = {UnaryOp::kNegate, UnaryOp::kAbs, UnaryOp::kSquare, UnaryOp::kSqrt,
                           UnaryOp::kRsqrt};
  const UnaryOp transcendental[] = {UnaryOp::kExponential, UnaryOp::kLog,
                                    UnaryOp::kTanh,        UnaryOp::kLogistic,
                                    UnaryOp::kLogPlusOne,  UnaryOp::kExponentialMinusOne,
                                    UnaryOp::kSine,        UnaryOp::kCosine};
  for (UnaryOp op : exact) {
    for (size_t n : {1u, 8u, 13u, 515u}) {
      Check({Load(0), Un(op, 0), Store(1, 0)}, 1, 1, n, 0,
            "unary " + std::to_string(static_cast<int>(op)));
    }
  }
  for (UnaryOp op : transcendental) {
    for (size_t n : {1u, 8u, 13u, 515u}) {
      Check({Load(0), Un(op, 0), Store(1, 0)}, 1, 1, n, 4,
            "unary " + std::to_string(static_cast<int>(op)));
    }
  }
}

TEST_P(LoopJitTest, InlineExpIsWithinOneUlpAndKeepsItsSpecialValues) {
  ASSERT_TRUE(LoopJitSupports(UnaryOp::kExponential));
  std::unique_ptr<LoopCode> code = Compile(
      std::vector<LoopStep>{Load(0), Un(UnaryOp::kExponential, 0), Store(1, 0)}, 1, 1);
  ASSERT_NE(code, nullptr);
  const float inf = std::numeric_limits<float>::infinity();
  const float largest = std::bit_cast<float>(0x42b17217u);   // exp finite
  const float smallest = std::bit_cast<float>(0xc2aeac4fu);  // exp normal
  std::vector<float> x = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          inf,
                          -inf,
                          std::nanf(""),
                          largest,
                          std::nextafter(largest, inf),
                          smallest,
                          std::nextafter(smallest, -inf),
                          -100.0f,
                          100.0f,
                          1e-20f};
  std::uniform_real_distribution<float> wide(-87.3f, 88.7f), narrow(-1.0f, 1.0f);
  while (x.size() < 200000) x.push_back(x.size() % 2 ? wide(random_) : narrow(random_));
  std::vector<float> out(x.size());
  const float* in[] = {x.data()};
  float* outs[] = {out.data()};
  code->Run(in, outs, static_cast<int64_t>(x.size()));
  EXPECT_EQ(out[0], 1.0f);
  EXPECT_EQ(out[1], 1.0f);
  EXPECT_EQ(out[4], inf);
  EXPECT_EQ(out[5], 0.0f);
  EXPECT_TRUE(std::isnan(out[6]));
  EXPECT_TRUE(std::isfinite(out[7]));
  EXPECT_EQ(out[8], inf);
  EXPECT_GE(out[9], std::numeric_limits<float>::min());
  EXPECT_EQ(out[10], 0.0f);  // below the normal range: flushed, as programs flush
  EXPECT_EQ(out[11], 0.0f);
  EXPECT_EQ(out[12], inf);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || x[i] < smallest || x[i] > largest) continue;
    const double exact = std::exp(static_cast<double>(x[i]));
    // The spacing of floats at the result, in double (denormals are flushed
    // on this thread, so float arithmetic would give 0 near FLT_MIN).
    const double ulp = std::ldexp(1.0, std::ilogb(static_cast<float>(exact)) - 23);
    const double error = std::abs(out[i] - exact) / ulp;
    EXPECT_LE(error, 1.0) << "exp(" << x[i] << ") = " << out[i] << ", not " << exact;
    worst = std::max(worst, error);
    if (HasFailure()) break;
  }
  EXPECT_LE(worst, 1.0);
}

// vector_math's sixteen-lane exp computes the generated exp's steps: the
// two agree to the bit, on eight lanes and on sixteen, so a fused exp and
// an unfused one give the same values. Fused loops inline exp unless
// vector_math runs sixteen lanes and generated code only eight.
TEST_P(LoopJitTest, SixteenLaneExpIsTheGeneratedExpToTheBit) {
  const bool sixteen = std::string(VectorMathIsa()) == "avx512";
  if (!GetEnv("KILN_JIT").has_value()) {
    EXPECT_EQ(LoopJitInlines(UnaryOp::kExponential),
              LoopJitAvailable(LoopIsa::kAvx512) || !sixteen);
  }
  if (!sixteen) GTEST_SKIP() << "vector_math runs " << VectorMathIsa() << " here";
  std::unique_ptr<LoopCode> code = Compile(
      std::vector<LoopStep>{Load(0), Un(UnaryOp::kExponential, 0), Store(1, 0)}, 1, 1);
  ASSERT_NE(code, nullptr);
  std::uniform_real_distribution<float> wide(-100.0f, 100.0f), narrow(-1.0f, 1.0f);
  std::vector<float> x = {std::nanf(""), std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), -0.0f};
  while (x.size() < 100003) x.push_back(x.size() % 2 ? wide(random_) : narrow(random_));
  std::vector<float> generated(x.size()), vector(x.size());
  const float* in[] = {x.data()};
  float* outs[] = {generated.data()};
  code->Run(in, outs, static_cast<int64_t>(x.size()));
  ASSERT_TRUE(VectorUnary(UnaryOp::kExponential, x.data(), vector.data(),
                          static_cast<int64_t>(x.size())));
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(vector[i]));
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(generated[i]), std::bit_cast<uint32_t>(vector[i]))
        << "exp(" << x[i] << ")";
  }
}

// exp's range checks are quiet comparisons: a NaN input raises no
// floating-point exception flag (found in review: the sixteen-lane code
// first used a signaling predicate).
TEST_P(LoopJitTest, ExpOfNaNRaisesNoInvalidFlag) {
  std::unique_ptr<LoopCode> code = Compile(
      std::vector<LoopStep>{Load(0), Un(UnaryOp::kExponential, 0), Store(1, 0)}, 1, 1);
  ASSERT_NE(code, nullptr);
  std::vector<float> x(32, std::numeric_limits<float>::quiet_NaN()), out(32);
  const float* in[] = {x.data()};
  float* outs[] = {out.data()};
  std::feclearexcept(FE_ALL_EXCEPT);
  code->Run(in, outs, static_cast<int64_t>(x.size()));
  EXPECT_EQ(std::fetestexcept(FE_INVALID), 0);
  for (float value : out) EXPECT_TRUE(std::isnan(value));
}

TEST_P(LoopJitTest, ValuesLiveAcrossACallSurviveIt) {
  // Ten loads stay live across exp and tanh, then are all summed.
  std::vector<LoopStep> steps;
  for (int j = 0; j < 10; ++j) steps.push_back(Load(j));
  steps.push_back(Un(UnaryOp::kExponential, 0));  // 10
  steps.push_back(Un(UnaryOp::kTanh, 10));        // 11
  int sum = 11;
  for (int j = 0; j < 10; ++j) {
    steps.push_back(Bin(BinaryOp::kAdd, sum, j));
    sum = static_cast<int>(steps.size()) - 1;
  }
  steps.push_back(Store(sum, 0));
  steps.push_back(Store(10, 1));
  for (size_t n : {8u, 21u, 512u}) Check(steps, 10, 2, n, 4, "live across calls");
  // Thirteen values live across an inline exp (which uses both scratch
  // registers, and on sixteen lanes the registers of its constants).
  steps.clear();
  for (int j = 0; j < 13; ++j) steps.push_back(Load(j));
  steps.push_back(Un(UnaryOp::kExponential, 0));  // 13
  sum = 13;
  for (int j = 0; j < 13; ++j) {
    steps.push_back(Bin(BinaryOp::kAdd, sum, j));
    sum = static_cast<int>(steps.size()) - 1;
  }
  steps.push_back(Store(sum, 0));
  for (size_t n : {8u, 16u, 37u, 512u}) Check(steps, 13, 1, n, 4, "live across exp");
}

// CompileLoop writes sixteen-lane code where the CPU runs it, and eight-lane
// code for what sixteen lanes cannot hold (a call to a packet form).
TEST_P(LoopJitTest, CompileLoopPicksTheWidestItCanWrite) {
  if (GetEnv("KILN_JIT").has_value()) GTEST_SKIP() << "KILN_JIT is set";
  const int widest = LoopJitAvailable(LoopIsa::kAvx512) ? 16 : 8;
  std::unique_ptr<LoopCode> code = CompileLoop(
      std::vector<LoopStep>{Load(0), Un(UnaryOp::kExponential, 0), Store(1, 0)}, 1, 1);
  ASSERT_NE(code, nullptr);
  EXPECT_EQ(code->lanes(), widest);
  code = CompileLoop(std::vector<LoopStep>{Load(0), Un(UnaryOp::kTanh, 0), Store(1, 0)}, 1, 1);
  ASSERT_NE(code, nullptr);
  EXPECT_EQ(code->lanes(), 8);
}

TEST_P(LoopJitTest, ScalarLoadsBroadcastTheFirstElement) {
  // in[1] holds one element (the tail copy must not read past it).
  const LoopStep scalar = {Kind::kLoadScalar, 0, -1, -1, 1, 0};
  const std::vector<LoopStep> steps = {Load(0), scalar, Bin(BinaryOp::kSubtract, 0, 1),
                                       Store(2, 0)};
  for (size_t n : {3u, 8u, 29u}) {
    std::vector<float> x = Values(random_, n), out(n);
    const float mean = 0.75f;
    std::unique_ptr<LoopCode> code = Compile(steps, 2, 1);
    ASSERT_NE(code, nullptr);
    const float* in[] = {x.data(), &mean};
    float* outs[] = {out.data()};
    code->Run(in, outs, static_cast<int64_t>(n));
    for (size_t i = 0; i < n; ++i) {
      if (std::isnan(x[i])) continue;
      EXPECT_EQ(out[i], x[i] - mean) << i;
    }
  }
  // One input read both ways is refused.
  EXPECT_EQ(Compile(std::vector<LoopStep>{Load(0),
                                          {Kind::kLoadScalar, 0, -1, -1, 0, 0},
                                          Bin(BinaryOp::kAdd, 0, 1),
                                          Store(2, 0)},
                    1, 1),
            nullptr);
}

TEST_P(LoopJitTest, SplatsAndUnusedValues) {
  Check({Load(0), Splat(1.5f), Splat(-0.0f), Bin(BinaryOp::kMultiply, 0, 1), Load(0),
         Bin(BinaryOp::kMaximum, 3, 2), Store(5, 0)},
        1, 1, 100, 0, "splats");
}

TEST_P(LoopJitTest, RandomProgramsMatchTheTileKernels) {
  const BinaryOp binary[] = {BinaryOp::kAdd,    BinaryOp::kSubtract, BinaryOp::kMultiply,
                             BinaryOp::kDivide, BinaryOp::kMaximum,  BinaryOp::kMinimum};
  const UnaryOp unary[] = {UnaryOp::kNegate, UnaryOp::kAbs,     UnaryOp::kSquare,
                           UnaryOp::kSqrt,   UnaryOp::kRsqrt,   UnaryOp::kExponential,
                           UnaryOp::kTanh,   UnaryOp::kLogistic};
  for (int trial = 0; trial < 300; ++trial) {
    const int num_inputs = 1 + static_cast<int>(random_() % 3);
    std::vector<LoopStep> steps;
    for (int j = 0; j < num_inputs; ++j) steps.push_back(Load(j));
    // Sometimes the last of several inputs is one value for every element
    // (a mean), so that ops on it and on splats are hoisted from the loop.
    if (num_inputs > 1 && random_() % 2 == 0) steps.back().kind = Kind::kLoadScalar;
    bool calls = false;
    const int ops = 1 + static_cast<int>(random_() % 12);
    for (int k = 0; k < ops; ++k) {
      const auto pick = [&] { return static_cast<int>(random_() % steps.size()); };
      const int choice = static_cast<int>(random_() % 10);
      if (choice < 5) {
        steps.push_back(Bin(binary[random_() % std::size(binary)], pick(), pick()));
      } else if (choice < 8) {
        const UnaryOp op = unary[random_() % std::size(unary)];
        calls = calls || op == UnaryOp::kExponential || op == UnaryOp::kTanh ||
                op == UnaryOp::kLogistic;
        steps.push_back(Un(op, pick()));
      } else {
        steps.push_back(Splat(static_cast<float>(random_() % 7) - 3.0f));
      }
    }
    const int num_outputs = 1 + static_cast<int>(random_() % 2);
    for (int k = 0; k < num_outputs; ++k) {
      steps.push_back(Store(static_cast<int>(steps.size()) - 1 - k, k));
    }
    // Transcendental results feeding further ops can move by more than the
    // ops' own few ulp, so those programs compare more loosely.
    Check(steps, num_inputs, num_outputs, 8 + random_() % 60, calls ? 64 : 0,
          "trial " + std::to_string(trial));
    if (HasFatalFailure()) return;
  }
}

TEST_P(LoopJitTest, ValuesTheSameForEveryElementAreHoisted) {
  // x * (1 / s) with s read once: the reciprocal is computed before the
  // loop and kept in its register.
  const LoopStep scalar = {Kind::kLoadScalar, 0, -1, -1, 1, 0};
  const std::vector<LoopStep> steps = {
      Load(0),    scalar, Splat(1.0f), Bin(BinaryOp::kDivide, 2, 1), Bin(BinaryOp::kMultiply, 0, 3),
      Store(4, 0)};
  std::unique_ptr<LoopCode> code = Compile(steps, 2, 1);
  ASSERT_NE(code, nullptr);
  const float s = 3.0f;
  std::vector<float> x = Values(random_, 37), out(37);
  const float* in[] = {x.data(), &s};
  float* outs[] = {out.data()};
  code->Run(in, outs, 37);
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i])) continue;
    EXPECT_EQ(out[i], x[i] * (1.0f / s)) << i;
  }
}

TEST_P(LoopJitTest, TooManyHoistedValuesFallBackToTheLoop) {
  // Fourteen splats used one after another in the loop would keep 14
  // registers through it, leaving none for x: the loop then splats each
  // where it is used, and the program still runs.
  std::vector<LoopStep> steps = {Load(0)};
  int sum = 0;
  for (int j = 0; j < 14; ++j) {
    steps.push_back(Splat(static_cast<float>(j) + 0.5f));
    steps.push_back(Bin(BinaryOp::kAdd, sum, static_cast<int>(steps.size()) - 1));
    sum = static_cast<int>(steps.size()) - 1;
  }
  steps.push_back(Store(sum, 0));
  for (size_t n : {8u, 45u}) Check(steps, 1, 1, n, 0, "fourteen splats");
}

TEST_P(LoopJitTest, TooManyLiveValuesIsNullNotWrong) {
  std::vector<LoopStep> steps;
  for (int j = 0; j < 20; ++j) steps.push_back(Load(j));
  int sum = 0;
  for (int j = 1; j < 20; ++j) {
    steps.push_back(Bin(BinaryOp::kAdd, sum, j));
    sum = static_cast<int>(steps.size()) - 1;
  }
  steps.push_back(Store(sum, 0));
  EXPECT_EQ(Compile(steps, 20, 1), nullptr);
}

TEST_P(LoopJitTest, MalformedProgramsAreRefused) {
  EXPECT_EQ(Compile(std::vector<LoopStep>{Load(1), Store(0, 0)}, 1, 1), nullptr);
  EXPECT_EQ(Compile(std::vector<LoopStep>{Load(0), Store(0, 3)}, 1, 1), nullptr);
  EXPECT_EQ(Compile(std::vector<LoopStep>{Load(0), Un(UnaryOp::kNegate, 1), Store(1, 0)}, 1, 1),
            nullptr);
  EXPECT_EQ(Compile(std::vector<LoopStep>{Load(0), Un(UnaryOp::kCbrt, 0), Store(1, 0)}, 1, 1),
            nullptr);
}

}  // namespace
}  // namespace kiln::kernels
