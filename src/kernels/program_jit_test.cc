// Generated loop programs (program_jit.h) against C++ computing the same:
// every inline op and type over edge values (wrapping, NaN, signed and
// unsigned orders), windows clamped, saturated and skipped, the loop's
// shape (the body's prologue once, no trips), calls and their failures.
#include "kernels/program_jit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/elementwise.h"

namespace kiln::kernels {
namespace {

using Kind = ProgramStep::Kind;
using Mode = ProgramStep::Mode;

// Slots over a byte arena: each value 8 bytes, at[-1] null.
class Slots {
 public:
  explicit Slots(int count) : memory_(static_cast<size_t>(count) * 8), at_(count + 1) {
    at_[0] = nullptr;
    for (int s = 0; s < count; ++s) at_[static_cast<size_t>(s) + 1] = memory_.data() + 8 * s;
  }
  uint8_t** at() { return at_.data() + 1; }
  template <typename T>
  void Set(int slot, T value) {
    std::memcpy(at()[slot], &value, sizeof(T));
  }
  template <typename T>
  T Get(int slot) {
    T value;
    std::memcpy(&value, at()[slot], sizeof(T));
    return value;
  }
  // Points slot `slot` at other memory.
  void Point(int slot, void* memory) { at()[slot] = static_cast<uint8_t*>(memory); }

 private:
  std::vector<uint8_t> memory_;
  std::vector<uint8_t*> at_;
};

int NoCall(void*, int32_t, uint8_t**) { return 1; }

// Runs `steps` once as the prologue of a loop of no trips (its condition's
// pred at slot `never`, false).
bool RunOnce(const std::vector<ProgramStep>& steps, Slots& slots, int never,
             ProgramCallFn call = &NoCall, void* context = nullptr) {
  ProgramLoop loop;
  loop.prologue = steps;
  loop.proceed = never;
  slots.Set<bool>(never, false);
  std::unique_ptr<ProgramCode> code = CompileProgram(loop, call);
  if (code == nullptr) return false;
  EXPECT_EQ(code->Run(slots.at(), context), 0);
  return true;
}

ProgramStep Scalar(ScalarOp op, ScalarType type, int a, int b, int out, int c = -1);

// Runs `body` as a loop of one trip: slot 41 counts trips (s32), 42 holds
// 1, 43 the condition.
bool RunInLoop(const std::vector<ProgramStep>& body, Slots& slots) {
  slots.Set<int32_t>(41, 0);
  slots.Set<int32_t>(42, 1);
  std::vector<ProgramStep> condition = {Scalar(ScalarOp::kLt, ScalarType::kS32, 41, 42, 43)};
  std::vector<ProgramStep> steps = body;
  steps.push_back(Scalar(ScalarOp::kAdd, ScalarType::kS32, 41, 42, 41));
  ProgramLoop loop;
  loop.condition = condition;
  loop.body = steps;
  loop.proceed = 43;
  std::unique_ptr<ProgramCode> code = CompileProgram(loop, &NoCall);
  if (code == nullptr) return false;
  EXPECT_EQ(code->Run(slots.at(), nullptr), 0);
  EXPECT_EQ(slots.Get<int32_t>(41), 1);
  return true;
}

ProgramStep Scalar(ScalarOp op, ScalarType type, int a, int b, int out, int c) {
  ProgramStep step;
  step.kind = Kind::kScalar;
  step.op = op;
  step.type = type;
  step.a = a;
  step.b = b;
  step.c = c;
  step.out = out;
  step.count = 1;
  return step;
}

template <typename T>
constexpr ScalarType TypeOf() {
  if constexpr (std::is_same_v<T, bool>) return ScalarType::kPred;
  if constexpr (std::is_same_v<T, int32_t>) return ScalarType::kS32;
  if constexpr (std::is_same_v<T, int64_t>) return ScalarType::kS64;
  if constexpr (std::is_same_v<T, uint32_t>) return ScalarType::kU32;
  if constexpr (std::is_same_v<T, uint64_t>) return ScalarType::kU64;
  if constexpr (std::is_same_v<T, float>) return ScalarType::kF32;
  return ScalarType::kF64;
}

// The type integer arithmetic on T wraps in.
template <typename T>
struct WrapOf {
  using type = T;
};
template <>
struct WrapOf<int32_t> {
  using type = uint32_t;
};
template <>
struct WrapOf<int64_t> {
  using type = uint64_t;
};

// What the interpreter computes (loop_program.cc's InlineStep).
template <typename T>
bool Reference(ScalarOp op, T x, T y, T* result) {
  using Wide = typename WrapOf<T>::type;
  switch (op) {
    case ScalarOp::kAdd:
      *result = static_cast<T>(static_cast<Wide>(x) + static_cast<Wide>(y));
      break;
    case ScalarOp::kSubtract:
      *result = static_cast<T>(static_cast<Wide>(x) - static_cast<Wide>(y));
      break;
    case ScalarOp::kMultiply:
      *result = static_cast<T>(static_cast<Wide>(x) * static_cast<Wide>(y));
      break;
    case ScalarOp::kMaximum: *result = std::max(x, y); break;
    case ScalarOp::kMinimum: *result = std::min(x, y); break;
    default:
      if constexpr (std::is_integral_v<T>) {
        if (op == ScalarOp::kAnd) *result = static_cast<T>(x & y);
        if (op == ScalarOp::kOr) *result = static_cast<T>(x | y);
        if (op == ScalarOp::kXor) *result = static_cast<T>(x ^ y);
        return op == ScalarOp::kAnd || op == ScalarOp::kOr || op == ScalarOp::kXor;
      }
      return false;
  }
  return true;
}

bool Compare(ScalarOp op, auto x, auto y) {
  switch (op) {
    case ScalarOp::kEq: return x == y;
    case ScalarOp::kNe: return x != y;
    case ScalarOp::kLt: return x < y;
    case ScalarOp::kLe: return x <= y;
    case ScalarOp::kGt: return x > y;
    default: return x >= y;
  }
}

template <typename T>
void CheckType(const std::vector<T>& values) {
  const ScalarType type = TypeOf<T>();
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kPred = std::is_same_v<T, bool>;
  std::vector<ScalarOp> arithmetic = {ScalarOp::kAnd, ScalarOp::kOr, ScalarOp::kXor};
  if constexpr (kFloat) arithmetic.clear();
  if constexpr (!kPred) {
    arithmetic.insert(arithmetic.end(), {ScalarOp::kAdd, ScalarOp::kSubtract, ScalarOp::kMultiply});
    if constexpr (!kFloat)
      arithmetic.insert(arithmetic.end(), {ScalarOp::kMaximum, ScalarOp::kMinimum});
  }
  const ScalarOp compares[] = {ScalarOp::kEq, ScalarOp::kNe, ScalarOp::kLt,
                               ScalarOp::kLe, ScalarOp::kGt, ScalarOp::kGe};
  for (const T x : values) {
    for (const T y : values) {
      // Slots: 0 x, 1 y, 2 the pred for select, 3.. results, 40 never;
      // 41..44 for the loops below.
      Slots slots(45);
      slots.Set(0, x);
      slots.Set(1, y);
      slots.Set<bool>(2, true);
      std::vector<ProgramStep> steps;
      int out = 3;
      for (const ScalarOp op : arithmetic) steps.push_back(Scalar(op, type, 0, 1, out++));
      for (const ScalarOp op : compares) steps.push_back(Scalar(op, type, 0, 1, out++));
      steps.push_back(Scalar(ScalarOp::kSelect, type, 2, 0, out++, 1));
      steps.push_back(Scalar(ScalarOp::kSelectByOne, type, 2, 1, out++, 0));
      steps.push_back(Scalar(ScalarOp::kMove, type, 1, -1, out++));
      // In place: x = x + y (or x ^ y for pred) into slot 0 last.
      steps.push_back(Scalar(kPred ? ScalarOp::kXor : ScalarOp::kAdd, type, 0, 1, 0));
      if (!RunOnce(steps, slots, 40)) GTEST_SKIP() << "no generated loop programs here";
      out = 3;
      for (const ScalarOp op : arithmetic) {
        T expected{};
        ASSERT_TRUE(Reference(op, x, y, &expected));
        const T got = slots.Get<T>(out++);
        if constexpr (kFloat) {
          if (std::isnan(expected)) {
            EXPECT_TRUE(std::isnan(got)) << static_cast<int>(op);
            continue;
          }
        }
        EXPECT_EQ(got, expected) << "op " << static_cast<int>(op) << " of " << +x << ", " << +y;
      }
      for (const ScalarOp op : compares) {
        EXPECT_EQ(slots.Get<bool>(out++), Compare(op, x, y))
            << "compare " << static_cast<int>(op) << " of " << +x << ", " << +y;
      }
      const T select = slots.Get<T>(out++);
      const T by_one = slots.Get<T>(out++);
      const T moved = slots.Get<T>(out++);
      EXPECT_EQ(std::memcmp(&select, &x, sizeof(T)), 0);
      EXPECT_EQ(std::memcmp(&by_one, &y, sizeof(T)), 0);
      EXPECT_EQ(std::memcmp(&moved, &y, sizeof(T)), 0);
      T in_place{};
      if constexpr (kPred) {
        in_place = x != y;
      } else {
        Reference(ScalarOp::kAdd, x, y, &in_place);
      }
      const T got = slots.Get<T>(0);
      if constexpr (kFloat) {
        if (std::isnan(in_place)) continue;
      }
      EXPECT_EQ(got, in_place);
      // Again as loops of one trip, where the slots the loop uses most live
      // in registers: every op in one body (x and y in registers), then each
      // op three times (its operands and result in registers, the result
      // copied out through memory). Each must leave what the straight run
      // above left.
      for (size_t k = 0; k + 1 < steps.size(); ++k) {
        const ProgramStep& step = steps[k];
        const int bytes = step.op >= ScalarOp::kEq && step.op <= ScalarOp::kGe ? 1 : sizeof(T);
        for (const bool alone : {false, true}) {
          if (!alone && k > 0) break;
          Slots again(45);
          again.Set(0, x);
          again.Set(1, y);
          again.Set<bool>(2, true);
          std::vector<ProgramStep> body;
          if (alone) {
            body = {
                step, step, step,
                Scalar(ScalarOp::kMove, bytes == 1 ? ScalarType::kPred : type, step.out, -1, 44)};
          } else {
            body.assign(steps.begin(), steps.end() - 1);
          }
          ASSERT_TRUE(RunInLoop(body, again));
          for (size_t j = alone ? k : 0; j < (alone ? k + 1 : steps.size() - 1); ++j) {
            const int slot = steps[j].out;
            const size_t size = steps[j].op >= ScalarOp::kEq && steps[j].op <= ScalarOp::kGe
                                    ? 1
                                    : sizeof(T);
            EXPECT_EQ(std::memcmp(again.at()[slot], slots.at()[slot], size), 0)
                << "step " << j << (alone ? " alone" : " in one body") << " of " << +x << ", "
                << +y;
            if (alone) {
              EXPECT_EQ(std::memcmp(again.at()[44], slots.at()[slot], size), 0);
            }
          }
        }
      }
    }
  }
}

TEST(ProgramJit, EveryInlineOpOfEveryTypeAsTheInterpreter) {
  if (!ProgramJitAvailable()) GTEST_SKIP() << "no generated loop programs here";
  CheckType<bool>({false, true});
  CheckType<int32_t>({0, 1, -1, 7, std::numeric_limits<int32_t>::min(),
                      std::numeric_limits<int32_t>::max()});
  CheckType<int64_t>({0, 1, -1, int64_t{1} << 40, std::numeric_limits<int64_t>::min(),
                      std::numeric_limits<int64_t>::max()});
  CheckType<uint32_t>({0u, 1u, 0x7fffffffu, 0x80000000u, 0xffffffffu});
  CheckType<uint64_t>({0u, 1u, uint64_t{1} << 63, ~uint64_t{0}, uint64_t{1} << 33});
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CheckType<float>({0.0f, -0.0f, 1.5f, -2.25f, inf, -inf, nan, 1e-40f});
  CheckType<double>({0.0, -0.0, 1.5, -2.25, static_cast<double>(inf), static_cast<double>(nan),
                     1e300});
}

// Element runs of every length to 40 (whole vectors, tails under masks or
// element by element) and copies of 1 to 1100 bytes, in both instruction
// sets, against C++; in place (out = a) too.
template <typename T>
void CheckRuns(LoopIsa isa, std::vector<ScalarOp> ops) {
  std::mt19937 random(7);
  for (const ScalarOp op : ops) {
    for (int64_t count = 2; count <= 40; ++count) {
      for (const bool in_place : {false, true}) {
        std::vector<T> a(static_cast<size_t>(count) + 1), b(a.size()), out(a.size(), T{});
        for (size_t i = 0; i < a.size(); ++i) {
          a[i] = static_cast<T>(random() % 1000) - static_cast<T>(300);
          b[i] = static_cast<T>(random() % 1000) / static_cast<T>(7);
        }
        std::vector<T> want(a.size());
        for (size_t i = 0; i < a.size(); ++i) {
          want[i] = i < static_cast<size_t>(count) ? T{} : (in_place ? a[i] : T{});
          if (i < static_cast<size_t>(count)) Reference(op, a[i], b[i], &want[i]);
        }
        Slots slots(4);
        slots.Point(0, a.data());
        slots.Point(1, b.data());
        slots.Point(2, in_place ? a.data() : out.data());
        ProgramStep step = Scalar(op, TypeOf<T>(), 0, 1, 2);
        step.count = count;
        ProgramLoop loop;
        std::vector<ProgramStep> steps = {step};
        loop.prologue = steps;
        loop.proceed = 3;
        slots.Set<bool>(3, false);
        std::unique_ptr<ProgramCode> code = CompileProgram(loop, &NoCall, isa);
        if (code == nullptr) GTEST_SKIP() << "this CPU lacks the instruction set";
        EXPECT_EQ(code->Run(slots.at(), nullptr), 0);
        const std::vector<T>& got = in_place ? a : out;
        for (size_t i = 0; i < got.size(); ++i) {
          EXPECT_EQ(got[i], want[i])
              << "op " << static_cast<int>(op) << ", " << count << " elements, element " << i;
        }
      }
    }
  }
}

TEST(ProgramJit, ElementRunsAndCopiesInBothInstructionSets) {
  if (!ProgramJitAvailable()) GTEST_SKIP() << "no generated loop programs here";
  const std::vector<ScalarOp> arithmetic = {ScalarOp::kAdd, ScalarOp::kSubtract,
                                            ScalarOp::kMultiply};
  std::vector<ScalarOp> integer = arithmetic;
  integer.insert(integer.end(), {ScalarOp::kAnd, ScalarOp::kOr, ScalarOp::kXor});
  for (const LoopIsa isa : {LoopIsa::kAvx2, LoopIsa::kAvx512}) {
    CheckRuns<float>(isa, arithmetic);
    CheckRuns<double>(isa, arithmetic);
    CheckRuns<int32_t>(isa, integer);
    // 64-bit products are AVX-512 DQ's (vpmullq): AVX2 code calls the step.
    std::vector<ScalarOp> wide = integer;
    if (isa == LoopIsa::kAvx2) wide.erase(wide.begin() + 2);
    CheckRuns<int64_t>(isa, wide);
    CheckRuns<uint32_t>(isa, integer);
    for (int64_t bytes = 1; bytes <= 1100; bytes += bytes < 80 ? 1 : 37) {
      std::vector<uint8_t> from(static_cast<size_t>(bytes)), to(from.size() + 8, 0xEE);
      for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<uint8_t>(i * 7 + 1);
      Slots slots(3);
      slots.Point(0, from.data());
      slots.Point(1, to.data());
      ProgramStep copy;
      copy.kind = Kind::kCopy;
      copy.a = 0;
      copy.out = 1;
      copy.count = bytes;
      ProgramLoop loop;
      std::vector<ProgramStep> steps = {copy};
      loop.prologue = steps;
      loop.proceed = 2;
      slots.Set<bool>(2, false);
      std::unique_ptr<ProgramCode> code = CompileProgram(loop, &NoCall, isa);
      if (code == nullptr) continue;
      EXPECT_EQ(code->Run(slots.at(), nullptr), 0);
      EXPECT_EQ(std::memcmp(to.data(), from.data(), from.size()), 0) << bytes << " bytes";
      EXPECT_EQ(to[from.size()], 0xEE) << bytes << " bytes";
    }
  }
}

ElementType ElementTypeOf(ScalarType type) {
  switch (type) {
    case ScalarType::kPred: return ElementType::kPred;
    case ScalarType::kS32: return ElementType::kS32;
    case ScalarType::kS64: return ElementType::kS64;
    case ScalarType::kU32: return ElementType::kU32;
    case ScalarType::kU64: return ElementType::kU64;
    case ScalarType::kF32: return ElementType::kF32;
    case ScalarType::kF64: return ElementType::kF64;
  }
  return ElementType::kPred;
}

// Every conversion between the common types, inline or called back, in
// memory and in registers, leaves what kernels::Convert writes.
TEST(ProgramJit, ConversionsAsTheConvertKernel) {
  if (!ProgramJitAvailable()) GTEST_SKIP() << "no generated loop programs here";
  const ScalarType types[] = {ScalarType::kPred, ScalarType::kS32, ScalarType::kS64,
                              ScalarType::kU32,  ScalarType::kU64, ScalarType::kF32,
                              ScalarType::kF64};
  // Bit patterns, each read as every source type (pred only 0 and 1).
  const uint64_t patterns[] = {0,
                               1,
                               7,
                               0xFFFFFFFFu,
                               0x80000000u,
                               0x7FFFFFFFu,
                               0xFFFFFFFFFFFFFFFFu,
                               0x8000000000000000u,
                               0x0000000123456789u,
                               0x3FC00000u,           // 1.5f
                               0x7FC00000u,           // NaN as f32
                               0x3FF8000000000000u,   // 1.5 as f64
                               0x7FF8000000000000u};  // NaN as f64
  int calls = 0;
  auto called = [](void* context, int32_t, uint8_t** at) {
    // The interpreter's kConvert: the test's own call of the kernel.
    auto& step = *static_cast<const ProgramStep*>(context);
    return kernels::Convert(ElementTypeOf(step.type), at[step.a], ElementTypeOf(step.to),
                            at[step.out], 1)
                   .ok()
               ? 0
               : 1;
  };
  for (const ScalarType from : types) {
    for (const ScalarType to : types) {
      for (const uint64_t pattern : patterns) {
        uint64_t source = pattern;
        if (from == ScalarType::kPred) source &= 1;
        uint64_t want = 0;
        ASSERT_TRUE(
            kernels::Convert(ElementTypeOf(from), &source, ElementTypeOf(to), &want, 1).ok());
        ProgramStep step;
        step.kind = Kind::kConvert;
        step.type = from;
        step.to = to;
        step.a = 0;
        step.out = 1;
        step.count = 1;
        step.call = 0;
        for (const bool in_loop : {false, true}) {
          Slots slots(45);
          slots.Set<uint64_t>(0, source);
          slots.Set<uint64_t>(1, 0);
          if (in_loop) {
            // Three times and copied out: the operand and result in registers.
            ProgramStep copy = step;
            copy.kind = Kind::kScalar;
            copy.op = ScalarOp::kMove;
            copy.type = to;
            copy.a = 1;
            copy.out = 44;
            slots.Set<uint64_t>(44, 0);
            ProgramLoop loop;
            std::vector<ProgramStep> condition = {
                Scalar(ScalarOp::kLt, ScalarType::kS32, 41, 42, 43)};
            std::vector<ProgramStep> body = {step, step, step, copy,
                                             Scalar(ScalarOp::kAdd, ScalarType::kS32, 41, 42, 41)};
            slots.Set<int32_t>(41, 0);
            slots.Set<int32_t>(42, 1);
            loop.condition = condition;
            loop.body = body;
            loop.proceed = 43;
            std::unique_ptr<ProgramCode> code = CompileProgram(loop, called);
            ASSERT_NE(code, nullptr);
            ASSERT_EQ(code->Run(slots.at(), &step), 0);
            EXPECT_EQ(std::memcmp(slots.at()[44], &want, 8), 0)
                << "in a loop: " << static_cast<int>(from) << " -> " << static_cast<int>(to)
                << " of " << std::hex << pattern;
          } else {
            ProgramLoop loop;
            std::vector<ProgramStep> steps = {step};
            loop.prologue = steps;
            loop.proceed = 40;
            slots.Set<bool>(40, false);
            std::unique_ptr<ProgramCode> code = CompileProgram(loop, called);
            ASSERT_NE(code, nullptr);
            ASSERT_EQ(code->Run(slots.at(), &step), 0);
          }
          EXPECT_EQ(std::memcmp(slots.at()[1], &want, 8), 0)
              << static_cast<int>(from) << " -> " << static_cast<int>(to) << " of " << std::hex
              << pattern << (in_loop ? " in a loop" : "");
          ++calls;
        }
      }
    }
  }
  EXPECT_GT(calls, 0);
}

ProgramStep WindowStep(Mode mode, int a, int b, int out, int64_t count, int element_bytes) {
  ProgramStep step;
  step.kind = Kind::kWindow;
  step.mode = mode;
  step.a = a;
  step.b = b;
  step.out = out;
  step.count = count;
  step.element_bytes = element_bytes;
  return step;
}

TEST(ProgramJit, WindowsClampTheirStartsAndScattersSkipWhatDoesNotFit) {
  if (!ProgramJitAvailable()) GTEST_SKIP() << "no generated loop programs here";
  // A 4 x 6 f32 array; windows of 1 x 3 (slice, update) and 1 x 1.
  std::vector<float> array(24);
  for (int i = 0; i < 24; ++i) array[static_cast<size_t>(i)] = static_cast<float>(i);
  struct Case {
    int64_t row, column;  // start indices (as s64; the column also as u64 / s32)
    int64_t want_row, want_column;
  };
  const Case cases[] = {{1, 2, 1, 2}, {-5, -1, 0, 0}, {9, 9, 3, 3}, {3, 3, 3, 3}};
  for (const Case& c : cases) {
    for (const ScalarType column_type : {ScalarType::kS32, ScalarType::kS64, ScalarType::kU64}) {
      // Slots: 0 array, 1 row (s64), 2 column, 3 slice (3 floats), 4 view,
      // 5 update source, 6 never, 7 copy of the array.
      Slots slots(8);
      std::vector<float> copy = array;
      std::vector<float> slice(3, -1.0f);
      const float update[3] = {100, 101, 102};
      slots.Point(0, array.data());
      slots.Point(3, slice.data());
      slots.Point(5, const_cast<float*>(update));
      slots.Point(7, copy.data());
      slots.Set<int64_t>(1, c.row);
      if (column_type == ScalarType::kS32) {
        slots.Set<int32_t>(2, static_cast<int32_t>(c.column));
      } else {
        slots.Set<int64_t>(2, c.column);
      }
      std::vector<ProgramStep> steps;
      auto starts = [&](ProgramStep& step, int64_t width) {
        step.starts.push_back({1, ScalarType::kS64, 4 - 1, 6 * 4});
        step.starts.push_back({2, column_type, 6 - width, 4});
      };
      steps.push_back(WindowStep(Mode::kSlice, 0, -1, 3, 3, 4));
      starts(steps.back(), 3);
      steps.push_back(WindowStep(Mode::kView, 0, -1, 4, 1, 4));
      starts(steps.back(), 1);
      steps.push_back(WindowStep(Mode::kUpdate, -1, 5, 7, 3, 4));
      starts(steps.back(), 3);
      ASSERT_TRUE(RunOnce(steps, slots, 6));
      // A u64 start above 2^63 saturates (LoadIndex): it is the last place.
      int64_t column3 = c.want_column,
              column1 = std::min<int64_t>(std::max<int64_t>(c.column, 0), 5);
      if (column_type == ScalarType::kU64 && c.column < 0) column3 = 3, column1 = 5;
      const int64_t at3 = c.want_row * 6 + column3;
      for (int k = 0; k < 3; ++k) {
        EXPECT_EQ(slice[static_cast<size_t>(k)], array[static_cast<size_t>(at3 + k)]);
        EXPECT_EQ(copy[static_cast<size_t>(at3 + k)], update[k]);
      }
      EXPECT_EQ(reinterpret_cast<float*>(slots.at()[4]), array.data() + c.want_row * 6 + column1)
          << c.row << ", " << c.column << " as type " << static_cast<int>(column_type);
    }
  }
  // Scatters of one element: index vectors (row, column) as s32 pairs.
  const int32_t indices[][2] = {{1, 2}, {-1, 0}, {0, 6}, {3, 5}, {4, 0}};
  for (const auto& index : indices) {
    for (const ScalarOp op : {ScalarOp::kMove, ScalarOp::kAdd}) {
      Slots slots(4);
      std::vector<float> copy = array;
      const float value = 0.5f;
      slots.Point(0, const_cast<int32_t*>(index));
      slots.Point(1, const_cast<float*>(&value));
      slots.Point(2, copy.data());
      ProgramStep step = WindowStep(Mode::kScatterOne, 0, 1, 2, 1, 4);
      step.op = op;
      step.type = ScalarType::kF32;
      step.index_type = ScalarType::kS32;
      step.index_stride = 4;
      step.starts.push_back({-1, ScalarType::kS32, 3, 24});
      step.starts.push_back({-1, ScalarType::kS32, 5, 4});
      ASSERT_TRUE(RunOnce({step}, slots, 3));
      const bool fits = index[0] >= 0 && index[0] <= 3 && index[1] >= 0 && index[1] <= 5;
      for (int i = 0; i < 24; ++i) {
        float want = array[static_cast<size_t>(i)];
        if (fits && i == index[0] * 6 + index[1]) want = op == ScalarOp::kMove ? 0.5f : want + 0.5f;
        EXPECT_EQ(copy[static_cast<size_t>(i)], want) << index[0] << ", " << index[1];
      }
    }
  }
}

// Counts its calls; fails the call numbered `fail_at`.
struct Calls {
  std::vector<int32_t> seen;
  int fail_at = -1;
};

int Record(void* context, int32_t index, uint8_t** at) {
  auto& calls = *static_cast<Calls*>(context);
#if defined(__x86_64__)
  // Caller-saved registers are the callee's: the loop's n and 1, held in
  // r10 and r11, must be loaded again after the call.
  asm volatile("mov $-1, %%r10\n\tmov $-1, %%r11" ::: "r10", "r11");
#endif
  calls.seen.push_back(index);
  // Instruction 7: slot 5 += 10 (s32), as the interpreter would.
  if (index == 7) {
    int32_t value;
    std::memcpy(&value, at[5], 4);
    value += 10;
    std::memcpy(at[5], &value, 4);
  }
  return static_cast<int>(calls.seen.size()) - 1 == calls.fail_at ? 1 : 0;
}

void AddRows(const uint8_t* a, const uint8_t* b, const uint8_t*, uint8_t* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    reinterpret_cast<float*>(out)[i] = reinterpret_cast<const float*>(a)[i] +
                                       reinterpret_cast<const float*>(b)[i];
  }
}

// kMaximum on f32 has no inline form: the step function runs.
void MaxRows(const uint8_t* a, const uint8_t* b, const uint8_t*, uint8_t* out, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    reinterpret_cast<float*>(out)[i] = std::max(reinterpret_cast<const float*>(a)[i],
                                                reinterpret_cast<const float*>(b)[i]);
  }
}

TEST(ProgramJit, TheLoopRunsItsBodysPrologueOnceAndStopsAtAFailedCall) {
  if (!ProgramJitAvailable()) GTEST_SKIP() << "no generated loop programs here";
  // Slots: 0 i, 1 n, 2 one, 3 proceed, 4 body-prologue count, 5 calls'
  // sum, 6 a row of 20 floats stepped, 7 a copy of the row, 8 a row of
  // ones, 9 the largest of the row and a row of 3.5.
  for (const int32_t trips : {0, 1, 5}) {
    for (const int fail_at : {-1, 2}) {
      Slots slots(10);
      std::vector<float> row(20, 1.0f), copy(20, 0.0f), ones(20, 1.0f), larger(20, 0.0f);
      slots.Point(6, row.data());
      slots.Point(7, copy.data());
      slots.Point(8, ones.data());
      slots.Point(9, larger.data());
      slots.Set<int32_t>(0, 0);
      slots.Set<int32_t>(1, trips);
      slots.Set<int32_t>(2, 1);
      slots.Set<int32_t>(4, 0);
      slots.Set<int32_t>(5, 0);
      std::vector<ProgramStep> condition = {Scalar(ScalarOp::kLt, ScalarType::kS32, 0, 1, 3)};
      std::vector<ProgramStep> body_prologue = {Scalar(ScalarOp::kAdd, ScalarType::kS32, 4, 2, 4)};
      ProgramStep call;
      call.kind = Kind::kCall;
      call.call = 7;
      ProgramStep step = Scalar(ScalarOp::kAdd, ScalarType::kF32, 6, 8, 6);
      step.count = 20;
      step.step = &AddRows;
      ProgramStep max = Scalar(ScalarOp::kMaximum, ScalarType::kF32, 6, 7, 9);
      max.count = 20;
      max.step = &MaxRows;
      ProgramStep copy_row;
      copy_row.kind = Kind::kCopy;
      copy_row.a = 6;
      copy_row.out = 7;
      copy_row.count = 80;
      std::vector<ProgramStep> body = {call, step, copy_row, max,
                                       Scalar(ScalarOp::kAdd, ScalarType::kS32, 0, 2, 0)};
      ProgramLoop loop;
      loop.condition = condition;
      loop.body_prologue = body_prologue;
      loop.body = body;
      loop.proceed = 3;
      std::unique_ptr<ProgramCode> code = CompileProgram(loop, &Record);
      ASSERT_NE(code, nullptr);
      Calls calls;
      calls.fail_at = fail_at;
      const int result = code->Run(slots.at(), &calls);
      const bool fails = fail_at >= 0 && trips > fail_at;
      EXPECT_EQ(result != 0, fails);
      const int32_t done = fails ? fail_at : trips;  // trips completed
      EXPECT_EQ(slots.Get<int32_t>(0), done);
      EXPECT_EQ(slots.Get<int32_t>(4), trips > 0 ? 1 : 0);
      EXPECT_EQ(calls.seen.size(), static_cast<size_t>(fails ? fail_at + 1 : trips));
      EXPECT_EQ(slots.Get<int32_t>(5), 10 * static_cast<int32_t>(calls.seen.size()));
      EXPECT_EQ(row[19], 1.0f + static_cast<float>(done));
      EXPECT_EQ(copy[0], done > 0 ? 1.0f + static_cast<float>(done) : 0.0f);
      EXPECT_EQ(larger[19], done > 0 ? 1.0f + static_cast<float>(done) : 0.0f);
    }
  }
}

}  // namespace
}  // namespace kiln::kernels
