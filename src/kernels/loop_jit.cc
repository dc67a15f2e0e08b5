// CompileLoop: a straight-line f32 program as an x86-64 loop over eight
// elements at a time (AVX2) or sixteen (AVX-512). The generated function is
//
//   void loop(const float* const* in, float* const* out, int64_t n)
//
// for n a positive multiple of the lane count: rbx, r12, r13 keep in, out,
// n across calls; r14 counts elements; r15 holds addresses. Each value
// lives in one of registers 0..13 from its step to its last use (14 and 15
// are scratch for max/min and constants). With AVX2 a transcendental op
// other than exp calls vector_math's packet form with the value in ymm0;
// every ymm register is caller-saved under the SysV ABI, so live values are
// spilled to the frame (32 bytes per value, 32-aligned) around the call.
// With AVX-512 there is no sixteen-lane packet form to call, so such
// programs get AVX2 code; exp's constants live in zmm16..zmm28 through the
// loop, and comparisons select through mask register k1. Instructions are
// encoded (loop_jit_assembler.h) with three-byte VEX or four-byte EVEX
// prefixes and SIB addressing with 32-bit displacements throughout (never
// scaled by EVEX's disp8*N), which keeps the encoder small: Intel SDM vol.
// 2, sections 2.1, 2.3 and 2.7.
#include "kernels/loop_jit.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/env.h"
#include "base/small_vector.h"
#include "kernels/loop_jit_assembler.h"
#include "kernels/vector_math.h"

#if defined(__x86_64__) && defined(KILN_VECTOR_MATH_AVX2) && defined(__linux__)
#define KILN_LOOP_JIT 1
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace kiln::kernels {

bool LoopJitEnabled() {
  static const bool enabled = [] {
    const std::optional<std::string> value = GetEnv("KILN_JIT");
    return !value.has_value() ||
           !(*value == "0" || *value == "false" || *value == "off" || *value == "no");
  }();
  return enabled;
}

bool LoopJitAvailable(LoopIsa isa) {
#ifdef KILN_VECTOR_MATH_AVX2
  static const bool avx2 = UseAvx2Variants();
  // AVX-512 F for the sixteen-lane ops, DQ for vandps / vxorps on zmm.
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") &&
                             __builtin_cpu_supports("avx512dq");
  return isa == LoopIsa::kAvx2 ? avx2 : avx512;
#else
  (void)isa;
  return false;
#endif
}

bool WideLoopsAllowed() {
  static const bool allowed = GetEnv("KILN_JIT").value_or("") != "avx2";
  return allowed;
}

namespace {

// The instruction set CompileLoop tries first.
bool WideLoops() {
  return LoopJitEnabled() && WideLoopsAllowed() && LoopJitAvailable(LoopIsa::kAvx512);
}

}  // namespace

namespace {

constexpr int kMaxArrays = kMaxLoopArrays;

bool IsTranscendental(UnaryOp op) {
  switch (op) {
    case UnaryOp::kExponential:
    case UnaryOp::kLog:
    case UnaryOp::kTanh:
    case UnaryOp::kLogistic:
    case UnaryOp::kLogPlusOne:
    case UnaryOp::kExponentialMinusOne:
    case UnaryOp::kSine:
    case UnaryOp::kCosine: return true;
    default: return false;
  }
}

}  // namespace

#ifdef KILN_LOOP_JIT

namespace {

using loop_jit_internal::Assembler;
using loop_jit_internal::Mem;
using enum loop_jit_internal::Gpr;

// kMask: the opmask register AVX-512 code selects with.
constexpr int kScratchMask = 14, kScratch = 15, kAllocatable = 14, kMask = 1;
constexpr uint8_t kCmpGeOq = 0x1D, kCmpLeOq = 0x12, kCmpUnordQ = 0x03, kCmpGtOq = 0x1E,
                  kCmpLtOq = 0x11, kCmpNltUq = 0x15;
constexpr uint8_t kAddPs = 0x58, kMulPs = 0x59, kSubPs = 0x5C, kDivPs = 0x5E, kSqrtPs = 0x51,
                  kAndPs = 0x54, kAndnPs = 0x55, kXorPs = 0x57, kPaddD = 0xFE;

// The constants of the generated exp, sixteen copies each (memory operands
// are whole vectors; AVX2 code reads the first eight, AVX-512 code loads
// all sixteen into zmm16 and up before the loop). exp(x) = 2^n * e^t with
// n = round(x / ln 2) (rounded by adding 1.5 * 2^23, whose low bits then
// hold n), t = x - n ln 2
// in two parts (ln2_hi has 15 significant bits, so n * ln2_hi is exact),
// e^t = 1 + t + t^2 (c2 + c3 t + ... + c6 t^4) on |t| <= ln 2 / 2, with
// c2..c6 fitted for least maximum relative error (0.88 ulp at most over
// 10^7 samples, against 0.5 for correct rounding), and 2^n added to the
// result's exponent field. Beyond ln(FLT_MAX) the result is inf; below
// ln(FLT_MIN) it is 0, as the flushed denormals of programs are.
enum ExpConstant : int {
  kLog2e,
  kRoundBias,
  kLn2Hi,
  kLn2Lo,
  kC6,
  kC5,
  kC4,
  kC3,
  kC2,
  kOneC,
  kOverflowAbove,
  kZeroBelow,
  kInfinity,
  kExpConstants
};
constexpr int kExpLanes = 16;
struct alignas(64) ExpTable {
  float values[kExpConstants][kExpLanes];
};
const ExpTable& ExpConstants() {
  static const ExpTable table = [] {
    const uint32_t bits[kExpConstants] = {
        0x3fb8aa3b,                                                  // log2(e)
        0x4b400000,                                                  // 1.5 * 2^23
        0x3f317200,                                                  // ln 2, high part
        0x35bfbe8e,                                                  // ln 2 - high part
        0x3ab51225, 0x3c091cea, 0x3d2aac79, 0x3e2aaa49, 0x3efffffe,  // c6 .. c2
        0x3f800000,                                                  // 1
        0x42b17217,  // the largest float whose exp is finite
        0xc2aeac4f,  // the smallest float whose exp is a normal float
        0x7f800000,  // inf
    };
    ExpTable made{};
    for (int c = 0; c < kExpConstants; ++c) {
      for (float& lane : made.values[c]) lane = std::bit_cast<float>(bits[c]);
    }
    return made;
  }();
  return table;
}

// Writes the loop for `steps`; false when the values do not fit in registers
// or a step is not supported. `constants` holds every broadcast value and
// must outlive the code (the code reads them by address).
class LoopWriter {
 public:
  LoopWriter(std::span<const LoopStep> steps, float* constants)
      : steps_(steps), constants_(constants) {}

  // `hoist`: values the same for every element (splats, scalar loads and
  // ops on those alone) are computed once before the loop, and those the
  // loop uses keep their registers through it.
  bool Write(Assembler& as, bool hoist) {
    const auto count = static_cast<int>(steps_.size());
    last_use_.assign(steps_.size(), -1);
    for (int s = 0; s < count; ++s) {
      for (int operand : {steps_[s].a, steps_[s].b}) {
        if (operand >= 0) last_use_[static_cast<size_t>(operand)] = s;
      }
    }
    invariant_.assign(steps_.size(), false);
    pinned_.assign(steps_.size(), false);
    if (hoist) {
      for (int s = 0; s < count; ++s) {
        const LoopStep& step = steps_[static_cast<size_t>(s)];
        const auto invariant = [&](int operand) {
          return operand < 0 || invariant_[static_cast<size_t>(operand)];
        };
        switch (step.kind) {
          case LoopStep::Kind::kSplat:
          case LoopStep::Kind::kLoadScalar: invariant_[static_cast<size_t>(s)] = true; break;
          case LoopStep::Kind::kUnary:
            invariant_[static_cast<size_t>(s)] = invariant(step.a) &&
                                                 !IsTranscendental(static_cast<UnaryOp>(step.op));
            break;
          case LoopStep::Kind::kBinary:
            invariant_[static_cast<size_t>(s)] = invariant(step.a) && invariant(step.b);
            break;
          default: break;
        }
        if (!invariant_[static_cast<size_t>(s)]) {
          for (int operand : {step.a, step.b}) {
            if (operand >= 0 && invariant_[static_cast<size_t>(operand)]) {
              pinned_[static_cast<size_t>(operand)] = true;
            }
          }
        }
      }
    }
    reg_of_.assign(steps_.size(), -1);
    const int32_t frame = 32 * (count + 1);
    as.Push(kRbp);
    as.Mov(kRbp, kRsp);
    for (int r : {kRbx, kR12, kR13, kR14, kR15}) as.Push(r);
    as.Sub(kRsp, frame);
    as.And(kRsp, -32);
    as.Mov(kRbx, kRdi);
    as.Mov(kR12, kRsi);
    as.Mov(kR13, kRdx);
    as.Xor(kR14, kR14);
    if (as.wide() && UsesExp()) {
      as.MovImm64(kR15, reinterpret_cast<uint64_t>(&ExpConstants()));
      for (int c = 0; c < kExpConstants; ++c) {
        as.Vmovups(kExpRegisters + c, Mem{kR15, -1, c * kExpLanes * 4});
      }
    }
    for (int s = 0; s < count; ++s) {
      if (invariant_[static_cast<size_t>(s)] && !WriteStep(as, s)) return false;
    }
    const size_t top = as.size();
    for (int s = 0; s < count; ++s) {
      if (!invariant_[static_cast<size_t>(s)] && !WriteStep(as, s)) return false;
    }
    as.Add(kR14, as.wide() ? 16 : 8);
    as.Cmp(kR14, kR13);
    as.JumpIfBelow(top);
    as.Vzeroupper();
    as.Lea(kRsp, Mem{kRbp, -1, -40});
    for (int r : {kR15, kR14, kR13, kR12, kRbx}) as.Pop(r);
    as.Pop(kRbp);
    as.Ret();
    return true;
  }

  // Constants the loop needs besides the splats: 1.0f, the sign bit and
  // everything but the sign bit (appended after the splats by the caller).
  static constexpr int kOne = 0, kSignBit = 1, kAbsMask = 2;

 private:
  // AVX-512 code keeps exp's constants in zmm16..zmm28 (caller-saved).
  static constexpr int kExpRegisters = 16;

  bool UsesExp() const {
    return std::any_of(steps_.begin(), steps_.end(), [](const LoopStep& step) {
      return step.kind == LoopStep::Kind::kUnary &&
             static_cast<UnaryOp>(step.op) == UnaryOp::kExponential;
    });
  }

  // A value whose last use is step `s` gives its register back.
  void Release(int s, int value) {
    if (value >= 0 && !pinned_[static_cast<size_t>(value)] &&
        last_use_[static_cast<size_t>(value)] == s && reg_of_[static_cast<size_t>(value)] >= 0) {
      free_ &= ~(1u << reg_of_[static_cast<size_t>(value)]);
      reg_of_[static_cast<size_t>(value)] = -1;
    }
  }
  int Allocate(int value) {
    for (int r = 0; r < kAllocatable; ++r) {
      if ((free_ & (1u << r)) == 0) {
        free_ |= 1u << r;
        reg_of_[static_cast<size_t>(value)] = r;
        return r;
      }
    }
    return -1;
  }
  Mem ConstantAt(Assembler& as, int index) {
    as.MovImm64(kR15, reinterpret_cast<uint64_t>(constants_ + index));
    return Mem{kR15};
  }
  int Reg(int value) const { return reg_of_[static_cast<size_t>(value)]; }
  Mem Spill(int value) const { return Mem{kRsp, -1, 32 * value}; }

  bool WriteStep(Assembler& as, int s) {
    const LoopStep& step = steps_[static_cast<size_t>(s)];
    switch (step.kind) {
      case LoopStep::Kind::kLoad: {
        const int r = Allocate(s);
        if (r < 0) return false;
        as.Load(kR15, Mem{kRbx, -1, 8 * step.slot});
        as.Vmovups(r, Mem{kR15, kR14, 0});
        break;
      }
      case LoopStep::Kind::kLoadScalar: {
        const int r = Allocate(s);
        if (r < 0) return false;
        as.Load(kR15, Mem{kRbx, -1, 8 * step.slot});
        as.Vbroadcastss(r, Mem{kR15});
        break;
      }
      case LoopStep::Kind::kSplat: {
        const int r = Allocate(s);
        if (r < 0) return false;
        as.Vbroadcastss(r, ConstantAt(as, splat_index_++));
        break;
      }
      case LoopStep::Kind::kStore:
        as.Load(kR15, Mem{kR12, -1, 8 * step.slot});
        as.Vmovups(Mem{kR15, kR14, 0}, Reg(step.a));
        Release(s, step.a);
        return true;
      case LoopStep::Kind::kBinary:
        if (!WriteBinary(as, s, static_cast<BinaryOp>(step.op), step.a, step.b)) return false;
        break;
      case LoopStep::Kind::kUnary:
        if (!WriteUnary(as, s, static_cast<UnaryOp>(step.op), step.a)) return false;
        break;
    }
    // A value nothing uses gives its register back at once.
    if (last_use_[static_cast<size_t>(s)] < 0) {
      free_ &= ~(1u << reg_of_[static_cast<size_t>(s)]);
      reg_of_[static_cast<size_t>(s)] = -1;
    }
    return true;
  }

  bool WriteBinary(Assembler& as, int s, BinaryOp op, int a, int b) {
    const int ra = Reg(a), rb = Reg(b);
    Release(s, a);
    Release(s, b);
    const int dst = Allocate(s);
    if (dst < 0) return false;
    switch (op) {
      case BinaryOp::kAdd: as.VexRRR(1, 0, kAddPs, dst, ra, rb); break;
      case BinaryOp::kSubtract: as.VexRRR(1, 0, kSubPs, dst, ra, rb); break;
      case BinaryOp::kMultiply: as.VexRRR(1, 0, kMulPs, dst, ra, rb); break;
      case BinaryOp::kDivide: as.VexRRR(1, 0, kDivPs, dst, ra, rb); break;
      case BinaryOp::kMaximum:
      case BinaryOp::kMinimum:
        // a >= b ? a : b (a <= b for min), then b if b is NaN, then a if a
        // is NaN: elementwise.cc's FloatMax / FloatMin.
        if (as.wide()) {
          as.KCmpps(kMask, ra, rb, op == BinaryOp::kMaximum ? kCmpGeOq : kCmpLeOq);
          as.Vblendmps(kScratch, kMask, rb, ra);
          as.KCmpps(kMask, rb, rb, kCmpUnordQ);
          as.Vblendmps(kScratch, kMask, kScratch, rb);
          as.KCmpps(kMask, ra, ra, kCmpUnordQ);
          as.Vblendmps(dst, kMask, kScratch, ra);
          break;
        }
        as.Vcmpps(kScratchMask, ra, rb, op == BinaryOp::kMaximum ? kCmpGeOq : kCmpLeOq);
        as.Vblendvps(kScratch, rb, ra, kScratchMask);
        as.Vcmpps(kScratchMask, rb, rb, kCmpUnordQ);
        as.Vblendvps(kScratch, kScratch, rb, kScratchMask);
        as.Vcmpps(kScratchMask, ra, ra, kCmpUnordQ);
        as.Vblendvps(dst, kScratch, ra, kScratchMask);
        break;
      default: return false;
    }
    return true;
  }

  // exp inline (ExpConstants); `a` stays in its register until the end.
  // AVX2 code reads the constants from memory and selects by blends on sign
  // masks; AVX-512 code keeps them in zmm16 and up and selects through k1.
  // Both run the same operations in the same order, so give the same bits.
  bool WriteExp(Assembler& as, int s, int a) {
    const int x = Reg(a);
    const int dst = Allocate(s);
    if (dst < 0) return false;
    constexpr int scale = kScratch, poly = kScratchMask;
    if (as.wide()) {
      const auto c = [](int k) { return kExpRegisters + k; };
      WriteExpPolynomial(as, x, dst, c);
      as.KCmpps(kMask, x, c(kOverflowAbove), kCmpGtOq);
      as.Vblendmps(poly, kMask, poly, c(kInfinity));
      as.KCmpps(kMask, x, c(kZeroBelow), kCmpNltUq);  // not below (or NaN): kept
      as.VmovapsZeroed(poly, kMask, poly);
      as.KCmpps(kMask, x, x, kCmpUnordQ);  // NaN stays NaN
      as.Vblendmps(dst, kMask, poly, x);
    } else {
      const auto at = [](int k) { return Mem{kR15, -1, kExpLanes * 4 * k}; };
      as.MovImm64(kR15, reinterpret_cast<uint64_t>(&ExpConstants()));
      WriteExpPolynomial(as, x, dst, at);
      as.Vcmpps(scale, x, at(kOverflowAbove), kCmpGtOq);
      as.Vblendvps(poly, poly, at(kInfinity), scale);
      as.Vcmpps(scale, x, at(kZeroBelow), kCmpLtOq);
      as.VexRRR(1, 0, kAndnPs, poly, scale, poly);
      as.Vcmpps(scale, x, x, kCmpUnordQ);  // NaN stays NaN
      as.Vblendvps(dst, poly, x, scale);
    }
    Release(s, a);
    return true;
  }

  // exp's arithmetic up to 2^n * e^t in poly (kScratchMask), leaving t in
  // dst; constant(k) is exp constant k's operand (Mem or a register).
  template <typename Constant>
  static void WriteExpPolynomial(Assembler& as, int x, int dst, Constant constant) {
    constexpr int n = kScratchMask, scale = kScratch, poly = kScratchMask;
    as.Vmov(scale, constant(kLog2e));
    as.Vfmadd213ps(scale, x, constant(kRoundBias));  // x log2(e) + bias
    as.Vsubps(n, scale, constant(kRoundBias));       // n
    as.Vpslld(scale, scale, 23);                     // n in the exponent field
    as.Vmovaps(dst, x);
    as.Vfnmadd231ps(dst, n, constant(kLn2Hi));  // t = x - n ln 2
    as.Vfnmadd231ps(dst, n, constant(kLn2Lo));
    as.Vmov(poly, constant(kC6));
    for (int k : {kC5, kC4, kC3, kC2, kOneC, kOneC}) as.Vfmadd213ps(poly, dst, constant(k));
    as.VexRRR(1, 1, kPaddD, poly, poly, scale);  // times 2^n
  }

  bool WriteUnary(Assembler& as, int s, UnaryOp op, int a) {
    if (op == UnaryOp::kExponential) return WriteExp(as, s, a);
    if (IsTranscendental(op)) return WriteCall(as, s, op, a);
    const int ra = Reg(a);
    Release(s, a);
    const int dst = Allocate(s);
    if (dst < 0) return false;
    switch (op) {
      case UnaryOp::kNegate:
        as.Vbroadcastss(kScratchMask, ConstantAt(as, special_base_ + kSignBit));
        as.VexRRR(1, 0, kXorPs, dst, ra, kScratchMask);
        break;
      case UnaryOp::kAbs:
        as.Vbroadcastss(kScratchMask, ConstantAt(as, special_base_ + kAbsMask));
        as.VexRRR(1, 0, kAndPs, dst, ra, kScratchMask);
        break;
      case UnaryOp::kSquare: as.VexRRR(1, 0, kMulPs, dst, ra, ra); break;
      case UnaryOp::kSqrt: as.VexRRR(1, 0, kSqrtPs, dst, 0, ra); break;
      case UnaryOp::kRsqrt:  // 1 / sqrt(x), both correctly rounded, as Unary
        as.VexRRR(1, 0, kSqrtPs, kScratch, 0, ra);
        as.Vbroadcastss(kScratchMask, ConstantAt(as, special_base_ + kOne));
        as.VexRRR(1, 0, kDivPs, dst, kScratchMask, kScratch);
        break;
      default: return false;
    }
    return true;
  }

  // Spills every value in a register, calls the packet form with `a` in
  // ymm0, and reloads what is still live.
  bool WriteCall(Assembler& as, int s, UnaryOp op, int a) {
    if (as.wide()) return false;  // no sixteen-lane packet forms to call
    const void* function = vector_math_internal::avx2::PacketUnaryF32(op);
    if (function == nullptr) return false;
    for (size_t v = 0; v < reg_of_.size(); ++v) {
      if (reg_of_[v] >= 0) as.Vmovups(Spill(static_cast<int>(v)), reg_of_[v]);
    }
    Release(s, a);
    as.Vmovups(0, Spill(a));
    as.MovImm64(kRax, reinterpret_cast<uint64_t>(function));
    as.CallReg(kRax);
    const int dst = Allocate(s);
    if (dst < 0) return false;
    if (dst != 0) as.Vmovaps(dst, 0);
    for (size_t v = 0; v < reg_of_.size(); ++v) {
      if (reg_of_[v] >= 0 && static_cast<int>(v) != s) {
        as.Vmovups(reg_of_[v], Spill(static_cast<int>(v)));
      }
    }
    return true;
  }

 public:
  void set_special_base(int base) { special_base_ = base; }

 private:
  std::span<const LoopStep> steps_;
  float* constants_;
  std::vector<int> last_use_, reg_of_;
  std::vector<bool> invariant_, pinned_;  // computed before the loop; kept through it
  uint32_t free_ = 0;                     // bit r set: vector register r holds a value
  int splat_index_ = 0;
  int special_base_ = 0;
};

}  // namespace

bool LoopJitSupports(UnaryOp op) {
  switch (op) {
    case UnaryOp::kNegate:
    case UnaryOp::kAbs:
    case UnaryOp::kSquare:
    case UnaryOp::kSqrt:
    case UnaryOp::kRsqrt: return true;
    default:
      return IsTranscendental(op) && vector_math_internal::avx2::PacketUnaryF32(op) != nullptr;
  }
}

// exp inline, except where vector_math runs its sixteen-lane exp and
// generated code is kept to eight lanes (KILN_JIT=avx2): there a stage of
// its own over the tile was faster (softmax 1024 x 1024 in the plan tool:
// 506-575 us inline on eight lanes, 422-463 us as its own stage, on a Zen 4).
bool LoopJitInlines(UnaryOp op) {
  static const bool inline_exp = WideLoops() || std::string_view(VectorMathIsa()) != "avx512";
  return op == UnaryOp::kExponential && inline_exp;
}

bool LoopJitSupports(BinaryOp op) {
  return op == BinaryOp::kAdd || op == BinaryOp::kSubtract || op == BinaryOp::kMultiply ||
         op == BinaryOp::kDivide || op == BinaryOp::kMaximum || op == BinaryOp::kMinimum;
}

std::unique_ptr<LoopCode> CompileLoop(std::span<const LoopStep> steps, int num_inputs,
                                      int num_outputs) {
  if (WideLoops()) {
    if (auto code = CompileLoop(steps, num_inputs, num_outputs, LoopIsa::kAvx512)) return code;
  }
  return CompileLoop(steps, num_inputs, num_outputs, LoopIsa::kAvx2);
}

std::unique_ptr<LoopCode> CompileLoop(std::span<const LoopStep> steps, int num_inputs,
                                      int num_outputs, LoopIsa isa) {
  if (!LoopJitEnabled() || !LoopJitAvailable(isa) || num_inputs > kMaxArrays ||
      num_outputs > kMaxArrays || steps.empty()) {
    return nullptr;
  }
  const bool wide = isa == LoopIsa::kAvx512;
  // Validate the program: operands name earlier value steps, slots exist.
  int splats = 0;
  uint32_t scalar_inputs = 0, vector_inputs = 0;
  for (size_t s = 0; s < steps.size(); ++s) {
    const LoopStep& step = steps[s];
    const auto value = [&](int operand) {
      return operand >= 0 && static_cast<size_t>(operand) < s &&
             steps[static_cast<size_t>(operand)].kind != LoopStep::Kind::kStore;
    };
    switch (step.kind) {
      case LoopStep::Kind::kLoad:
      case LoopStep::Kind::kLoadScalar:
        if (step.slot < 0 || step.slot >= num_inputs) return nullptr;
        (step.kind == LoopStep::Kind::kLoad ? vector_inputs : scalar_inputs) |= 1u << step.slot;
        break;
      case LoopStep::Kind::kSplat: ++splats; break;
      case LoopStep::Kind::kStore:
        if (step.slot < 0 || step.slot >= num_outputs || !value(step.a)) return nullptr;
        break;
      case LoopStep::Kind::kUnary:
        if (!value(step.a) || !LoopJitSupports(static_cast<UnaryOp>(step.op))) return nullptr;
        break;
      case LoopStep::Kind::kBinary:
        if (!value(step.a) || !value(step.b) || !LoopJitSupports(static_cast<BinaryOp>(step.op))) {
          return nullptr;
        }
        break;
    }
  }
  if ((scalar_inputs & vector_inputs) != 0) return nullptr;  // an input read both ways
  std::unique_ptr<float[]> constants(new float[static_cast<size_t>(splats) + 3]);
  int next = 0;
  for (const LoopStep& step : steps) {
    if (step.kind == LoopStep::Kind::kSplat) constants[static_cast<size_t>(next++)] = step.constant;
  }
  constants[static_cast<size_t>(splats) + LoopWriter::kOne] = 1.0f;
  constants[static_cast<size_t>(splats) + LoopWriter::kSignBit] = std::bit_cast<float>(0x80000000u);
  constants[static_cast<size_t>(splats) + LoopWriter::kAbsMask] = std::bit_cast<float>(0x7fffffffu);
  // Hoisting keeps values in registers through the loop; when that leaves
  // too few, the loop computes them every iteration instead.
  Assembler as;
  bool written = false;
  for (bool hoist : {true, false}) {
    as = Assembler(wide);
    LoopWriter writer(steps, constants.get());
    writer.set_special_base(splats);
    if (writer.Write(as, hoist)) {
      written = true;
      break;
    }
  }
  if (!written) return nullptr;
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t bytes = (as.size() + page - 1) / page * page;
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  std::memcpy(memory, as.code().data(), as.size());
  if (mprotect(memory, bytes, PROT_READ | PROT_EXEC) != 0) {
    munmap(memory, bytes);
    return nullptr;
  }
  return std::make_unique<LoopCode>(memory, bytes, num_inputs, num_outputs, std::move(constants),
                                    scalar_inputs, wide ? 16 : 8);
}

LoopCode::~LoopCode() {
  if (memory_ != nullptr) munmap(memory_, bytes_);
}

#else  // no generated code on this platform

bool LoopJitSupports(UnaryOp) { return false; }
bool LoopJitInlines(UnaryOp) { return false; }
bool LoopJitSupports(BinaryOp) { return false; }

std::unique_ptr<LoopCode> CompileLoop(std::span<const LoopStep>, int, int) { return nullptr; }
std::unique_ptr<LoopCode> CompileLoop(std::span<const LoopStep>, int, int, LoopIsa) {
  return nullptr;
}

LoopCode::~LoopCode() = default;

#endif

LoopCode::LoopCode(void* memory, size_t bytes, int num_inputs, int num_outputs,
                   std::unique_ptr<float[]> constants, uint32_t scalar_inputs, int lanes)
    : memory_(memory),
      bytes_(bytes),
      num_inputs_(num_inputs),
      num_outputs_(num_outputs),
      constants_(std::move(constants)),
      scalar_inputs_(scalar_inputs),
      lanes_(lanes) {}

void LoopCode::Run(const float* const* in, float* const* out, int64_t n) const {
  const auto entry = reinterpret_cast<Entry>(memory_);
  const int64_t full = n / lanes_ * lanes_;
  if (full > 0) entry(in, out, full);
  const int64_t rest = n - full;
  if (rest == 0) return;
  // The last elements through copies of one vector each (the code reads and
  // writes whole vectors).
  constexpr int kMaxLanes = 16;
  alignas(64) float inputs[kMaxArrays][kMaxLanes] = {};
  alignas(64) float outputs[kMaxArrays][kMaxLanes];
  std::array<const float*, kMaxArrays> in_tail{};
  std::array<float*, kMaxArrays> out_tail{};
  for (int j = 0; j < num_inputs_; ++j) {
    if ((scalar_inputs_ >> j) & 1u) {  // one element, read in place
      in_tail[static_cast<size_t>(j)] = in[j];
      continue;
    }
    std::memcpy(inputs[j], in[j] + full, static_cast<size_t>(rest) * sizeof(float));
    in_tail[static_cast<size_t>(j)] = inputs[j];
  }
  for (int k = 0; k < num_outputs_; ++k) out_tail[static_cast<size_t>(k)] = outputs[k];
  entry(in_tail.data(), out_tail.data(), lanes_);
  for (int k = 0; k < num_outputs_; ++k) {
    std::memcpy(out[k] + full, outputs[k], static_cast<size_t>(rest) * sizeof(float));
  }
}

}  // namespace kiln::kernels
