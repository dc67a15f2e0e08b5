// CompileProgram: a loop program (program_jit.h) as one x86-64 function
//
//   int loop(uint8_t** at, void* context)
//
// rbx keeps `at` and r12 `context` across calls (both callee-saved; six
// pushes and 8 bytes keep the stack 16-byte aligned at every call). Each
// instruction loads the addresses of its operands and result from the
// slot table (mov r, [rbx + 8 * slot]), so a view that rewrites its slot's
// entry is seen by the instructions after it, as in the interpreter; the
// promoted scalars (Writer::Promote) are read and written in their
// registers instead. One element of
// an integer or pred type is computed in rax/r9 with wrapping arithmetic,
// cmov for max/min and select, setcc for compares (unsigned conditions for
// unsigned types and pred); one f32/f64 element in xmm0 with the scalar SSE
// ops, which follow MXCSR's flush-to-zero mode as the interpreter's C++
// does, and compares through ucomiss/ucomisd (unordered: only != is true).
// Start indices are loaded sign- or zero-extended by their type and
// clamped with cmov (u64 by an unsigned compare, as LoadIndex saturates
// it); a scatter's fit test is one unsigned compare against the largest
// start that fits. The loop is rotated: the condition is written before
// the first trip and again at the end of the body.
#include "kernels/program_jit.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>

#include "base/env.h"

#if defined(__x86_64__) && defined(__linux__) && defined(KILN_HAVE_XBYAK)
#define KILN_PROGRAM_JIT 1
#define XBYAK_NO_EXCEPTION 1
#include <xbyak/xbyak.h>
#endif

namespace kiln::kernels {

#ifdef KILN_PROGRAM_JIT

namespace {

int BytesOf(ScalarType type) {
  switch (type) {
    case ScalarType::kPred: return 1;
    case ScalarType::kS32:
    case ScalarType::kU32:
    case ScalarType::kF32: return 4;
    case ScalarType::kS64:
    case ScalarType::kU64:
    case ScalarType::kF64: return 8;
  }
  return 0;
}

bool IsFloat(ScalarType type) { return type == ScalarType::kF32 || type == ScalarType::kF64; }
bool IsSigned(ScalarType type) { return type == ScalarType::kS32 || type == ScalarType::kS64; }

void CopyOut(uint8_t* to, const uint8_t* from, int64_t bytes) {
  std::memmove(to, from, static_cast<size_t>(bytes));
}

using Xbyak::Reg64;

// The vector instructions generated code may use: AVX2 (with AVX's VEX
// scalar forms), AVX-512 F and DQ, or none (scalar SSE only), as
// loop_jit.h finds them (KILN_JIT=avx2 keeps them to AVX2).
enum class Isa : uint8_t { kNone, kAvx2, kAvx512 };

Isa VectorIsa() {
  static const Isa isa = [] {
    if (WideLoopsAllowed() && LoopJitAvailable(LoopIsa::kAvx512)) return Isa::kAvx512;
    return LoopJitAvailable(LoopIsa::kAvx2) ? Isa::kAvx2 : Isa::kNone;
  }();
  return isa;
}

// An operand: a register holding its value, or one holding its address.
struct Ref {
  bool in_register = false;
  Reg64 reg;
};

class Writer : public Xbyak::CodeGenerator {
 public:
  Writer(size_t bytes, ProgramCallFn callback, Isa isa)
      : Xbyak::CodeGenerator(bytes, Xbyak::DontSetProtectRWE), call_(callback), isa_(isa) {}

  bool Write(const ProgramLoop& loop) {
    using namespace Xbyak::util;
    // Six pushes and 8 bytes keep the stack 16-byte aligned at calls.
    push(rbx);
    push(r12);
    push(r13);
    push(r14);
    push(r15);
    push(rbp);
    sub(rsp, 8);
    mov(rbx, rdi);
    mov(r12, rsi);
    Promote(loop);
    LoadPromoted();
    Xbyak::Label done, body;
    if (!Steps(loop.prologue) || !Steps(loop.condition)) return false;
    TestProceed(loop.proceed);
    jz(done, T_NEAR);
    if (!Steps(loop.body_prologue)) return false;
    L(body);
    if (!Steps(loop.body) || !Steps(loop.condition)) return false;
    TestProceed(loop.proceed);
    jnz(body, T_NEAR);
    L(done);
    StorePromoted();
    xor_(eax, eax);
    L(failed_);
    add(rsp, 8);
    pop(rbp);
    pop(r15);
    pop(r14);
    pop(r13);
    pop(r12);
    pop(rbx);
    ret();
    return Xbyak::GetError() == 0;
  }

 private:
  Xbyak::Address Slot(int32_t slot) { return qword[Xbyak::util::rbx + 8 * slot]; }

  void TestProceed(int32_t slot) { TestPred(RefOf(slot, Xbyak::util::rax)); }

  bool Steps(std::span<const ProgramStep> steps) {
    for (const ProgramStep& step : steps) {
      if (!Step(step)) return false;
      if (Xbyak::GetError() != 0) return false;
    }
    return true;
  }

  bool Step(const ProgramStep& step) {
    using namespace Xbyak::util;
    switch (step.kind) {
      case ProgramStep::Kind::kScalar:
        if (step.count == 1 && Inlines(step.op, step.type)) {
          const bool select = step.op == ScalarOp::kSelect || step.op == ScalarOp::kSelectByOne;
          Element(step.op, step.type, RefOf(step.a, rsi), RefOf(step.b, rdi),
                  select ? RefOf(step.c, rcx) : Ref{false, rcx}, RefOf(step.out, rdx));
          return true;
        }
        if (step.count > 1 && Elements(step)) return true;
        if (step.step == nullptr) return Call(step);
        StorePromoted();
        mov(rdi, Slot(step.a));
        mov(rsi, Slot(step.b));
        mov(rdx, Slot(step.c));
        mov(rcx, Slot(step.out));
        mov(r8, step.count);
        mov(rax, reinterpret_cast<uint64_t>(step.step));
        call(rax);
        ReloadCallerSaved();
        return true;
      case ProgramStep::Kind::kCopy: {
        if (step.count == 0) return true;
        Xbyak::Label skip;
        mov(rsi, Slot(step.a));
        mov(rdi, Slot(step.out));
        cmp(rsi, rdi);
        je(skip, T_NEAR);
        CopyBytes(rdi, rsi, step.count);
        L(skip);
        return true;
      }
      case ProgramStep::Kind::kWindow: return Window(step) || Call(step);
      case ProgramStep::Kind::kConvert:
        if (step.count == 1 && Converts(step.type, step.to)) {
          Convert(step.type, step.to, RefOf(step.a, rsi), RefOf(step.out, rdx));
          return true;
        }
        return Call(step);
      case ProgramStep::Kind::kCall: return Call(step);
    }
    return false;
  }

  // The interpreter's instruction: call(context, index, at), leaving with
  // its result when nonzero.
  bool Call(const ProgramStep& step) {
    using namespace Xbyak::util;
    if (step.call < 0) return false;
    StorePromoted();
    mov(rdi, r12);
    mov(esi, step.call);
    mov(rdx, rbx);
    mov(rax, reinterpret_cast<uint64_t>(call_));
    call(rax);
    test(eax, eax);
    jnz(failed_, T_NEAR);
    ReloadCallerSaved();
    return true;
  }

  // Vector registers by the ISA: ymm (AVX2) or zmm (AVX-512).
  Xbyak::Xmm Vec(int i) const {
    return isa_ == Isa::kAvx512 ? Xbyak::Xmm(Xbyak::Zmm(i)) : Xbyak::Xmm(Xbyak::Ymm(i));
  }
  int VectorBytes() const { return isa_ == Isa::kAvx512 ? 64 : 32; }

  // out[i] = op(a[i], b[i]) over step.count elements with vector ops:
  // whole vectors in a loop (or written out, up to four), the rest under a
  // mask (AVX-512) or one element at a time. False, having written
  // nothing, for ops and types without a vector form here.
  bool Elements(const ProgramStep& step) {
    using namespace Xbyak::util;
    if (isa_ == Isa::kNone) return false;
    const ScalarType type = step.type;
    const bool is_float = IsFloat(type);
    const bool wide = BytesOf(type) == 8;
    switch (step.op) {
      case ScalarOp::kAdd:
      case ScalarOp::kSubtract: break;
      case ScalarOp::kMultiply:
        // vpmullq is AVX-512 DQ (which kAvx512 includes).
        if (!is_float && wide && isa_ != Isa::kAvx512) return false;
        break;
      case ScalarOp::kAnd:
      case ScalarOp::kOr:
      case ScalarOp::kXor:
        if (is_float) return false;
        break;
      default: return false;
    }
    if (type == ScalarType::kPred) return false;
    const int element = BytesOf(type);
    auto op = [&](const Xbyak::Xmm& dst, const Xbyak::Xmm& x, const Xbyak::Operand& y) {
      switch (step.op) {
        case ScalarOp::kAdd:
          if (is_float) {
            wide ? vaddpd(dst, x, y) : vaddps(dst, x, y);
          } else {
            wide ? vpaddq(dst, x, y) : vpaddd(dst, x, y);
          }
          return;
        case ScalarOp::kSubtract:
          if (is_float) {
            wide ? vsubpd(dst, x, y) : vsubps(dst, x, y);
          } else {
            wide ? vpsubq(dst, x, y) : vpsubd(dst, x, y);
          }
          return;
        case ScalarOp::kMultiply:
          if (is_float) {
            wide ? vmulpd(dst, x, y) : vmulps(dst, x, y);
          } else {
            wide ? vpmullq(dst, x, y) : vpmulld(dst, x, y);
          }
          return;
        case ScalarOp::kAnd: isa_ == Isa::kAvx512 ? vpandq(dst, x, y) : vpand(dst, x, y); return;
        case ScalarOp::kOr: isa_ == Isa::kAvx512 ? vporq(dst, x, y) : vpor(dst, x, y); return;
        case ScalarOp::kXor: isa_ == Isa::kAvx512 ? vpxorq(dst, x, y) : vpxor(dst, x, y); return;
        default: return;
      }
    };
    const int vector = VectorBytes();
    const int64_t total = step.count * element;
    const int64_t full = total / vector * vector;
    mov(rsi, Slot(step.a));
    mov(rdi, Slot(step.b));
    mov(rdx, Slot(step.out));
    const Xbyak::Xmm v = Vec(0);
    if (full <= 4 * vector) {
      for (int64_t at = 0; at < full; at += vector) {
        const auto offset = static_cast<int32_t>(at);
        vmovups(v, ptr[rsi + offset]);
        op(v, v, ptr[rdi + offset]);
        vmovups(ptr[rdx + offset], v);
      }
    } else {
      Xbyak::Label next;
      xor_(ecx, ecx);
      mov(r8, full);
      L(next);
      vmovups(v, ptr[rsi + rcx]);
      op(v, v, ptr[rdi + rcx]);
      vmovups(ptr[rdx + rcx], v);
      add(rcx, vector);
      cmp(rcx, r8);
      jb(next, T_NEAR);
    }
    const int64_t rest = (total - full) / element;
    const auto tail = static_cast<int32_t>(full);
    if (rest > 0 && isa_ == Isa::kAvx512) {
      mov(eax, static_cast<uint32_t>((1u << rest) - 1));
      kmovw(k1, eax);
      const Xbyak::Zmm z = Xbyak::Zmm(0);
      if (is_float) {
        wide ? vmovupd(z | k1 | T_z, ptr[rsi + tail]) : vmovups(z | k1 | T_z, ptr[rsi + tail]);
      } else {
        wide ? vmovdqu64(z | k1 | T_z, ptr[rsi + tail]) : vmovdqu32(z | k1 | T_z, ptr[rsi + tail]);
      }
      op(z | k1 | T_z, z, ptr[rdi + tail]);
      if (is_float) {
        wide ? vmovupd(ptr[rdx + tail] | k1, z) : vmovups(ptr[rdx + tail] | k1, z);
      } else {
        wide ? vmovdqu64(ptr[rdx + tail] | k1, z) : vmovdqu32(ptr[rdx + tail] | k1, z);
      }
    } else {
      for (int64_t k = 0; k < rest; ++k) {
        const auto offset = static_cast<int32_t>(full + k * element);
        const Xbyak::Xmm x = Xbyak::Xmm(0);
        if (is_float) {
          wide ? vmovsd(x, ptr[rsi + offset]) : vmovss(x, ptr[rsi + offset]);
          if (wide) {
            step.op == ScalarOp::kAdd        ? vaddsd(x, x, ptr[rdi + offset])
            : step.op == ScalarOp::kSubtract ? vsubsd(x, x, ptr[rdi + offset])
                                             : vmulsd(x, x, ptr[rdi + offset]);
            vmovsd(ptr[rdx + offset], x);
          } else {
            step.op == ScalarOp::kAdd        ? vaddss(x, x, ptr[rdi + offset])
            : step.op == ScalarOp::kSubtract ? vsubss(x, x, ptr[rdi + offset])
                                             : vmulss(x, x, ptr[rdi + offset]);
            vmovss(ptr[rdx + offset], x);
          }
          continue;
        }
        const Xbyak::Reg r = wide ? Xbyak::Reg(rax) : Xbyak::Reg(eax);
        mov(r, ptr[rsi + offset]);
        switch (step.op) {
          case ScalarOp::kAdd: add(r, ptr[rdi + offset]); break;
          case ScalarOp::kSubtract: sub(r, ptr[rdi + offset]); break;
          case ScalarOp::kMultiply:
            imul(static_cast<const Xbyak::Reg&>(r), ptr[rdi + offset]);
            break;
          case ScalarOp::kAnd: and_(r, ptr[rdi + offset]); break;
          case ScalarOp::kOr: or_(r, ptr[rdi + offset]); break;
          default: xor_(r, ptr[rdi + offset]); break;
        }
        mov(ptr[rdx + offset], r);
      }
    }
    vzeroupper();
    return true;
  }

  // `bytes` (9 up to 16 vectors) from [from] to [to] through registers, all
  // loaded before any is stored (so the ranges may overlap): pieces at
  // every vector's offset, the last one ending at the end. False, having
  // written nothing, for other sizes.
  bool CopyVectors(const Reg64& to, const Reg64& from, int64_t bytes) {
    using namespace Xbyak::util;
    if (bytes <= 8 || isa_ == Isa::kNone) return false;
    if (bytes <= 16) {
      mov(rax, qword[from]);
      mov(r8, qword[from + static_cast<int32_t>(bytes - 8)]);
      mov(qword[to], rax);
      mov(qword[to + static_cast<int32_t>(bytes - 8)], r8);
      return true;
    }
    int piece = 16;
    while (piece < VectorBytes() && bytes > 2 * piece) piece *= 2;
    const int64_t pieces = (bytes + piece - 1) / piece;
    if (pieces > 16) return false;
    auto reg = [&](int64_t k) -> Xbyak::Xmm {
      const int i = static_cast<int>(k);
      if (piece == 16) return Xbyak::Xmm(i);
      if (piece == 32) return Xbyak::Ymm(i);
      return Xbyak::Zmm(i);
    };
    auto offset = [&](int64_t k) {
      return static_cast<int32_t>(std::min(k * piece, bytes - piece));
    };
    for (int64_t k = 0; k < pieces; ++k) vmovups(reg(k), ptr[from + offset(k)]);
    for (int64_t k = 0; k < pieces; ++k) vmovups(ptr[to + offset(k)], reg(k));
    vzeroupper();
    return true;
  }

  // `bytes` from [from] to [to]: one move for 1, 2, 4 or 8 bytes, vector
  // moves up to 16 vectors, else a call (which may clobber every
  // caller-saved register).
  void CopyBytes(const Reg64& to, const Reg64& from, int64_t bytes) {
    using namespace Xbyak::util;
    if (CopyVectors(to, from, bytes)) return;
    switch (bytes) {
      case 1:
        mov(al, byte[from]);
        mov(byte[to], al);
        return;
      case 2:
        mov(ax, word[from]);
        mov(word[to], ax);
        return;
      case 4:
        mov(eax, dword[from]);
        mov(dword[to], eax);
        return;
      case 8:
        mov(rax, qword[from]);
        mov(qword[to], rax);
        return;
      default:
        StorePromoted();
        if (to.getIdx() != rdi.getIdx()) mov(rdi, to);
        if (from.getIdx() != rsi.getIdx()) mov(rsi, from);
        mov(rdx, bytes);
        mov(rax, reinterpret_cast<uint64_t>(&CopyOut));
        call(rax);
        ReloadCallerSaved();
        return;
    }
  }

  // rcx = the integer of `type` at [from], sign- or zero-extended.
  void LoadIndex(ScalarType type, const Xbyak::Address& from) {
    using namespace Xbyak::util;
    switch (type) {
      case ScalarType::kS32: movsxd(rcx, dword[from.getRegExp()]); return;
      case ScalarType::kU32: mov(ecx, dword[from.getRegExp()]); return;
      default: mov(rcx, qword[from.getRegExp()]); return;
    }
  }
  // The same from a promoted slot's register (zero-extended there).
  void LoadIndex(ScalarType type, const Reg64& from) {
    using namespace Xbyak::util;
    switch (type) {
      case ScalarType::kS32: movsxd(rcx, from.cvt32()); return;
      case ScalarType::kU32: mov(ecx, from.cvt32()); return;
      default: mov(rcx, from); return;
    }
  }

  // Whether Element computes `op` on `type` inline.
  static bool Inlines(ScalarOp op, ScalarType type) {
    switch (op) {
      case ScalarOp::kMove:
      case ScalarOp::kSelect:
      case ScalarOp::kSelectByOne: return true;
      case ScalarOp::kAdd:
      case ScalarOp::kSubtract:
      case ScalarOp::kMultiply: return type != ScalarType::kPred;
      case ScalarOp::kMaximum:
      case ScalarOp::kMinimum: return type != ScalarType::kPred && !IsFloat(type);
      case ScalarOp::kAnd:
      case ScalarOp::kOr:
      case ScalarOp::kXor: return !IsFloat(type);
      default: return true;  // compares
    }
  }

  static bool IsIndex(ScalarType type) {
    return type == ScalarType::kS32 || type == ScalarType::kS64 || type == ScalarType::kU32 ||
           type == ScalarType::kU64;
  }

  // rcx * stride added to rax (rdx clobbered).
  void AddScaled(int64_t stride) {
    using namespace Xbyak::util;
    if (stride == static_cast<int32_t>(stride)) {
      imul(rcx, rcx, static_cast<int32_t>(stride));
    } else {
      mov(rdx, stride);
      imul(rcx, rdx);
    }
    add(rax, rcx);
  }

  bool Window(const ProgramStep& step) {
    using namespace Xbyak::util;
    const int64_t bytes = step.count * step.element_bytes;
    if (step.mode == ProgramStep::Mode::kScatterOne) {
      if (!IsIndex(step.index_type)) return false;
      if (step.op != ScalarOp::kMove && (step.count != 1 || !Inlines(step.op, step.type))) {
        return false;
      }
      for (const ProgramStep::Start& start : step.starts) {
        if (start.limit < 0) return false;  // nothing fits: the unsigned test would pass
      }
      Xbyak::Label skip;
      xor_(eax, eax);
      const Ref indices = RefOf(step.a, rsi);
      for (size_t k = 0; k < step.starts.size(); ++k) {
        const ProgramStep::Start& start = step.starts[k];
        if (indices.in_register) {  // a one-element index vector
          LoadIndex(step.index_type, indices.reg);
        } else {
          LoadIndex(step.index_type, dword[rsi + static_cast<int32_t>(k * step.index_stride)]);
        }
        // Negative starts are huge unsigned: one compare finds both sides.
        mov(rdx, start.limit);
        cmp(rcx, rdx);
        ja(skip, T_NEAR);
        AddScaled(start.stride);
      }
      mov(rdi, Slot(step.out));
      add(rdi, rax);
      mov(rsi, Slot(step.b));
      if (step.op == ScalarOp::kMove) {
        CopyBytes(rdi, rsi, bytes);
      } else {
        Element(step.op, step.type, {false, rdi}, {false, rsi}, {false, rcx}, {false, rdi});
      }
      L(skip);
      return true;
    }
    for (const ProgramStep::Start& start : step.starts) {
      if (!IsIndex(start.type)) return false;
    }
    xor_(eax, eax);
    for (const ProgramStep::Start& start : step.starts) {
      if (start.limit <= 0) continue;  // clamped to 0 whatever it holds
      const Ref index = RefOf(start.slot, rsi);
      if (index.in_register) {
        LoadIndex(start.type, index.reg);
      } else {
        LoadIndex(start.type, dword[index.reg]);
      }
      mov(rdx, start.limit);
      if (start.type == ScalarType::kU64) {
        cmp(rcx, rdx);
        cmova(rcx, rdx);
      } else {
        cmp(rcx, rdx);
        cmovg(rcx, rdx);
        xor_(edx, edx);
        test(rcx, rcx);
        cmovs(rcx, rdx);
      }
      AddScaled(start.stride);
    }
    switch (step.mode) {
      case ProgramStep::Mode::kSlice:
        mov(rsi, Slot(step.a));
        add(rsi, rax);
        mov(rdi, Slot(step.out));
        CopyBytes(rdi, rsi, bytes);
        return true;
      case ProgramStep::Mode::kUpdate:
        mov(rdi, Slot(step.out));
        add(rdi, rax);
        mov(rsi, Slot(step.b));
        CopyBytes(rdi, rsi, bytes);
        return true;
      case ProgramStep::Mode::kView:
        mov(rsi, Slot(step.a));
        add(rsi, rax);
        mov(Slot(step.out), rsi);
        return true;
      case ProgramStep::Mode::kScatterOne: break;
    }
    return false;
  }

  // Whether Convert writes `from` -> `to` inline: every pair of the
  // common types but float -> integer (which saturates, NaN to 0) and u64
  // -> float (no one-instruction form).
  static bool Converts(ScalarType from, ScalarType to) {
    if (IsFloat(from) && !IsFloat(to) && to != ScalarType::kPred) return false;
    return !(from == ScalarType::kU64 && IsFloat(to));
  }

  // out = a converted, as static_cast does (kernels::ConvertOne): integers
  // sign- or zero-extend by their source type and truncate; to pred is
  // `!= 0` (NaN is true); int -> float rounds by MXCSR (cvtsi2ss/sd from the
  // 32-bit or, for u32 zero-extended, the 64-bit register).
  void Convert(ScalarType from, ScalarType to, const Ref& a, const Ref& out) {
    using namespace Xbyak::util;
    const int to_bytes = BytesOf(to);
    if (IsFloat(from)) {
      const bool f64 = from == ScalarType::kF64;
      f64 ? movsd(xmm0, qword[a.reg]) : movss(xmm0, dword[a.reg]);
      if (to == ScalarType::kPred) {
        xorps(xmm1, xmm1);
        f64 ? ucomisd(xmm0, xmm1) : ucomiss(xmm0, xmm1);
        setne(al);
        setp(r8b);
        or_(al, r8b);
        StoreValue(out, rax, 1);
        return;
      }
      if (from != to) f64 ? cvtsd2ss(xmm0, xmm0) : cvtss2sd(xmm0, xmm0);
      to == ScalarType::kF64 ? movsd(qword[out.reg], xmm0) : movss(dword[out.reg], xmm0);
      return;
    }
    // An integer or pred in rax, extended to 64 bits by its type.
    if (a.in_register) {
      if (from == ScalarType::kS32) {
        movsxd(rax, a.reg.cvt32());
      } else {
        mov(rax, a.reg);  // zero-extended there
      }
    } else if (from == ScalarType::kS32) {
      movsxd(rax, dword[a.reg]);
    } else {
      LoadValue(rax, a, BytesOf(from));
    }
    if (to == ScalarType::kPred) {
      if (from == ScalarType::kPred) {
        StoreValue(out, rax, 1);
        return;
      }
      test(rax, rax);
      setne(al);
      StoreValue(out, rax, 1);
      return;
    }
    if (IsFloat(to)) {
      // s64 and the zero-extended u32 and pred from all 64 bits; s32 was
      // sign-extended, so the 64-bit form is exact for it too.
      to == ScalarType::kF64 ? cvtsi2sd(xmm0, rax) : cvtsi2ss(xmm0, rax);
      to == ScalarType::kF64 ? movsd(qword[out.reg], xmm0) : movss(dword[out.reg], xmm0);
      return;
    }
    StoreValue(out, rax, to_bytes);
  }

  // One element: out = op(a, b, c) of `type`, for which Inlines holds
  // (false, having written nothing, otherwise). Each operand is a register
  // holding it (a promoted slot) or its address in one of rsi, rdi, rcx,
  // rdx (clobbers rax, r8, r9, xmm0, xmm1). Selects move bits, so floats
  // select as integers of their width.
  bool Element(ScalarOp op, ScalarType type, const Ref& a, const Ref& b, const Ref& c,
               const Ref& out) {
    using namespace Xbyak::util;
    if (!Inlines(op, type)) return false;
    const int bytes = BytesOf(type);
    switch (op) {
      case ScalarOp::kMove:
        LoadValue(rax, a, bytes);
        StoreValue(out, rax, bytes);
        return true;
      case ScalarOp::kSelect:
      case ScalarOp::kSelectByOne:
        LoadValue(rax, b, bytes);
        LoadValue(r8, c, bytes);
        TestPred(a);
        cmovz(rax, r8);
        StoreValue(out, rax, bytes);
        return true;
      default: break;
    }
    if (IsFloat(type)) return FloatElement(op, type == ScalarType::kF64, a.reg, b.reg, out);
    const bool is_compare = op >= ScalarOp::kEq && op <= ScalarOp::kGe;
    const Reg64 value = rax;
    const Reg64 other = r9;
    auto sized = [&](const Reg64& r) -> Xbyak::Reg {
      if (bytes == 1) return r.cvt8();
      if (bytes == 4) return r.cvt32();
      return r;
    };
    LoadValue(value, a, bytes);
    LoadValue(other, b, bytes);
    if (is_compare) {
      cmp(sized(value), sized(other));
      const bool is_signed = IsSigned(type);
      switch (op) {
        case ScalarOp::kEq: sete(al); break;
        case ScalarOp::kNe: setne(al); break;
        case ScalarOp::kLt: is_signed ? setl(al) : setb(al); break;
        case ScalarOp::kLe: is_signed ? setle(al) : setbe(al); break;
        case ScalarOp::kGt: is_signed ? setg(al) : seta(al); break;
        default: is_signed ? setge(al) : setae(al); break;
      }
      StoreValue(out, rax, 1);
      return true;
    }
    switch (op) {
      case ScalarOp::kAnd: and_(value, other); break;
      case ScalarOp::kOr: or_(value, other); break;
      case ScalarOp::kXor: xor_(value, other); break;
      case ScalarOp::kAdd: add(value, other); break;
      case ScalarOp::kSubtract: sub(value, other); break;
      case ScalarOp::kMultiply: imul(value, other); break;
      default: {
        cmp(sized(value), sized(other));
        const bool is_signed = IsSigned(type);
        // Replace the first by the second when it is smaller (max) or
        // larger (min); 64-bit cmov moves the zero-extended 32-bit value.
        if (op == ScalarOp::kMaximum) {
          is_signed ? cmovl(value, other) : cmovb(value, other);
        } else {
          is_signed ? cmovg(value, other) : cmova(value, other);
        }
        break;
      }
    }
    StoreValue(out, rax, bytes);
    return true;
  }

  // f32/f64 operands are never promoted: a and b are addresses.
  bool FloatElement(ScalarOp op, bool f64, const Reg64& a, const Reg64& b, const Ref& out) {
    using namespace Xbyak::util;
    auto load = [&](const Xbyak::Xmm& to, const Reg64& from) {
      f64 ? movsd(to, qword[from]) : movss(to, dword[from]);
    };
    // ucomis: ZF, PF, CF all set when unordered.
    auto compare = [&](const Reg64& x, const Reg64& y) {
      load(xmm0, x);
      load(xmm1, y);
      f64 ? ucomisd(xmm0, xmm1) : ucomiss(xmm0, xmm1);
    };
    switch (op) {
      case ScalarOp::kAdd:
      case ScalarOp::kSubtract:
      case ScalarOp::kMultiply:
        load(xmm0, a);
        load(xmm1, b);
        if (op == ScalarOp::kAdd) {
          f64 ? addsd(xmm0, xmm1) : addss(xmm0, xmm1);
        } else if (op == ScalarOp::kSubtract) {
          f64 ? subsd(xmm0, xmm1) : subss(xmm0, xmm1);
        } else {
          f64 ? mulsd(xmm0, xmm1) : mulss(xmm0, xmm1);
        }
        f64 ? movsd(qword[out.reg], xmm0) : movss(dword[out.reg], xmm0);
        return true;
      case ScalarOp::kEq:
        compare(a, b);
        sete(al);
        setnp(r8b);
        and_(al, r8b);
        break;
      case ScalarOp::kNe:
        compare(a, b);
        setne(al);
        setp(r8b);
        or_(al, r8b);
        break;
      // a < b is b > a: "above" holds only when ordered.
      case ScalarOp::kLt:
        compare(b, a);
        seta(al);
        break;
      case ScalarOp::kLe:
        compare(b, a);
        setae(al);  // CF = 0; unordered sets CF
        break;
      case ScalarOp::kGt:
        compare(a, b);
        seta(al);
        break;
      case ScalarOp::kGe:
        compare(a, b);
        setae(al);
        break;
      default: return false;
    }
    StoreValue(out, rax, 1);
    return true;
  }

  // Promoted slots: up to six integer or pred scalars the loop uses most,
  // held in registers from entry to exit (callee-saved ones for those it
  // writes).
  // A slot qualifies when every step touching it is an inline one-element
  // op, a window's start or the loop's test, so no other code reads or
  // writes its memory while it lives in a register; calls (which may read
  // it through the slot table) get its value stored first.
  struct Promoted {
    int32_t slot;
    ScalarType type;
    Reg64 reg;
    bool written;
    bool caller_saved;  // r10 or r11: reloaded after calls
  };

  void Promote(const ProgramLoop& loop) {
    struct Use {
      ScalarType type = ScalarType::kPred;
      bool typed = false;
      bool bad = false;
      bool written = false;
      int in_loop = 0;
    };
    std::vector<std::pair<int32_t, Use>> uses;
    auto find = [&](int32_t slot) -> Use& {
      for (auto& [s, use] : uses) {
        if (s == slot) return use;
      }
      uses.push_back({slot, Use{}});
      return uses.back().second;
    };
    bool looping = false;
    auto mark = [&](int32_t slot, ScalarType type, bool write) {
      if (slot < 0) return;
      Use& use = find(slot);
      if (IsFloat(type) || (use.typed && use.type != type)) use.bad = true;
      use.type = type;
      use.typed = true;
      use.written = use.written || write;
      if (looping) ++use.in_loop;
    };
    auto refuse = [&](int32_t slot) {
      if (slot >= 0) find(slot).bad = true;
    };
    auto scan = [&](std::span<const ProgramStep> steps, bool in_loop) {
      looping = in_loop;
      for (const ProgramStep& step : steps) {
        if (step.kind == ProgramStep::Kind::kScalar && step.count == 1 &&
            Inlines(step.op, step.type)) {
          const bool compare = step.op >= ScalarOp::kEq && step.op <= ScalarOp::kGe;
          const bool select = step.op == ScalarOp::kSelect || step.op == ScalarOp::kSelectByOne;
          mark(step.a, select ? ScalarType::kPred : step.type, false);
          if (step.op != ScalarOp::kMove) mark(step.b, step.type, false);
          if (select) mark(step.c, step.type, false);
          mark(step.out, compare ? ScalarType::kPred : step.type, true);
          continue;
        }
        if (step.kind == ProgramStep::Kind::kConvert && step.count == 1 &&
            Converts(step.type, step.to)) {
          mark(step.a, step.type, false);
          mark(step.out, step.to, true);
          continue;
        }
        if (step.kind == ProgramStep::Kind::kWindow &&
            step.mode == ProgramStep::Mode::kScatterOne && step.starts.size() == 1 &&
            IsIndex(step.index_type)) {
          mark(step.a, step.index_type, false);
          refuse(step.b);
          refuse(step.out);
          continue;
        }
        if (step.kind == ProgramStep::Kind::kWindow &&
            step.mode != ProgramStep::Mode::kScatterOne &&
            std::all_of(step.starts.begin(), step.starts.end(),
                        [](const ProgramStep::Start& start) { return IsIndex(start.type); })) {
          for (const ProgramStep::Start& start : step.starts) {
            if (start.limit > 0) mark(start.slot, start.type, false);
          }
        }
        refuse(step.a);
        refuse(step.b);
        refuse(step.c);
        refuse(step.out);
      }
    };
    scan(loop.prologue, false);
    scan(loop.body_prologue, false);
    scan(loop.condition, true);
    scan(loop.body, true);
    looping = true;
    mark(loop.proceed, ScalarType::kPred, false);
    std::stable_sort(uses.begin(), uses.end(), [](const auto& x, const auto& y) {
      return x.second.in_loop > y.second.in_loop;
    });
    // Slots the loop writes take callee-saved registers; slots it only
    // reads (captures, constants, values from before the loop) take r10 and
    // r11 first, reloaded after every call.
    std::vector<Reg64> callee_saved = {Xbyak::util::rbp, Xbyak::util::r15, Xbyak::util::r14,
                                       Xbyak::util::r13};
    std::vector<Reg64> caller_saved = {Xbyak::util::r11, Xbyak::util::r10};
    for (const auto& [slot, use] : uses) {
      if (use.bad || use.in_loop == 0) continue;
      std::vector<Reg64>* pool = &callee_saved;
      if (!use.written && !caller_saved.empty()) pool = &caller_saved;
      if (pool->empty()) continue;
      promoted_.push_back({slot, use.type, pool->back(), use.written, pool == &caller_saved});
      pool->pop_back();
    }
  }

  void ReloadCallerSaved() {
    using namespace Xbyak::util;
    for (const Promoted& promoted : promoted_) {
      if (!promoted.caller_saved) continue;
      mov(rax, Slot(promoted.slot));
      LoadValue(promoted.reg, {false, rax}, BytesOf(promoted.type));
    }
  }

  const Promoted* FindPromoted(int32_t slot) const {
    for (const Promoted& promoted : promoted_) {
      if (promoted.slot == slot) return &promoted;
    }
    return nullptr;
  }

  // The operand of `slot`: its register, or its address loaded into
  // `address`.
  Ref RefOf(int32_t slot, const Reg64& address) {
    if (const Promoted* promoted = FindPromoted(slot)) return {true, promoted->reg};
    mov(address, Slot(slot));
    return {false, address};
  }

  // `to` = the value of `bytes` (1: zero-extended, 4: zero-extended, 8).
  void LoadValue(const Reg64& to, const Ref& from, int bytes) {
    using namespace Xbyak::util;
    if (from.in_register) {
      mov(to, from.reg);
    } else if (bytes == 1) {
      movzx(to.cvt32(), byte[from.reg]);
    } else if (bytes == 4) {
      mov(to.cvt32(), dword[from.reg]);
    } else {
      mov(to, qword[from.reg]);
    }
  }

  // Stores the low `bytes` of `value`; a register keeps them zero-extended.
  void StoreValue(const Ref& to, const Reg64& value, int bytes) {
    using namespace Xbyak::util;
    if (to.in_register) {
      if (bytes == 1) {
        movzx(to.reg.cvt32(), value.cvt8());
      } else if (bytes == 4) {
        mov(to.reg.cvt32(), value.cvt32());
      } else {
        mov(to.reg, value);
      }
    } else if (bytes == 1) {
      mov(byte[to.reg], value.cvt8());
    } else if (bytes == 4) {
      mov(dword[to.reg], value.cvt32());
    } else {
      mov(qword[to.reg], value);
    }
  }

  // ZF set when the pred is false.
  void TestPred(const Ref& pred) {
    using namespace Xbyak::util;
    if (pred.in_register) {
      test(pred.reg.cvt8(), pred.reg.cvt8());
    } else {
      cmp(byte[pred.reg], 0);
    }
  }

  // Promoted slots between memory and their registers (clobbers rax).
  void LoadPromoted() {
    using namespace Xbyak::util;
    for (const Promoted& promoted : promoted_) {
      mov(rax, Slot(promoted.slot));
      LoadValue(promoted.reg, {false, rax}, BytesOf(promoted.type));
    }
  }
  void StorePromoted() {
    using namespace Xbyak::util;
    for (const Promoted& promoted : promoted_) {
      if (!promoted.written) continue;
      mov(rax, Slot(promoted.slot));
      StoreValue({false, rax}, promoted.reg, BytesOf(promoted.type));
    }
  }

  ProgramCallFn call_;
  Isa isa_;
  std::vector<Promoted> promoted_;
  Xbyak::Label failed_;
};

}  // namespace

struct ProgramCode::Storage {
  std::unique_ptr<Writer> writer;
};

bool ProgramJitAvailable() { return LoopJitEnabled(); }

namespace {

std::unique_ptr<ProgramCode> Generate(const ProgramLoop& loop, ProgramCallFn call, Isa isa) {
  if (!LoopJitEnabled()) return nullptr;
  const size_t steps = loop.prologue.size() + 2 * loop.condition.size() +
                       loop.body_prologue.size() + loop.body.size();
  // The longest inline step (a scatter of three starts) is under 150 bytes.
  const size_t bytes = 4096 + 256 * steps;
  Xbyak::ClearError();
  auto writer = std::make_unique<Writer>(bytes, call, isa);
  if (Xbyak::GetError() != 0 || !writer->Write(loop)) {
    Xbyak::ClearError();
    return nullptr;
  }
  // ready() checks every label is defined (and, with a fixed buffer, sets
  // no protection): the buffer becomes read + execute here.
  writer->ready();
  if (Xbyak::GetError() != 0 || !writer->setProtectModeRE(false)) {
    Xbyak::ClearError();
    return nullptr;
  }
  const auto entry = writer->getCode<ProgramCode::Entry>();
  const size_t size = writer->getSize();
  auto storage = std::make_unique<ProgramCode::Storage>();
  storage->writer = std::move(writer);
  return std::make_unique<ProgramCode>(std::move(storage), size, entry);
}

}  // namespace

std::unique_ptr<ProgramCode> CompileProgram(const ProgramLoop& loop, ProgramCallFn call) {
  return Generate(loop, call, VectorIsa());
}

std::unique_ptr<ProgramCode> CompileProgram(const ProgramLoop& loop, ProgramCallFn call,
                                            LoopIsa isa) {
  if (!LoopJitAvailable(isa)) return nullptr;
  return Generate(loop, call, isa == LoopIsa::kAvx512 ? Isa::kAvx512 : Isa::kAvx2);
}

#else

struct ProgramCode::Storage {};

bool ProgramJitAvailable() { return false; }

std::unique_ptr<ProgramCode> CompileProgram(const ProgramLoop&, ProgramCallFn) { return nullptr; }
std::unique_ptr<ProgramCode> CompileProgram(const ProgramLoop&, ProgramCallFn, LoopIsa) {
  return nullptr;
}

#endif

ProgramCode::ProgramCode(std::unique_ptr<Storage> storage, size_t bytes, Entry entry)
    : storage_(std::move(storage)), bytes_(bytes), entry_(entry) {}

ProgramCode::~ProgramCode() = default;

}  // namespace kiln::kernels
