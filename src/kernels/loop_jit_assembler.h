// The x86-64 encoder behind CompileLoop (loop_jit.cc): the general-purpose
// registers, memory operands and an assembler that appends instructions
// as bytes (the encoding is described at the top of loop_jit.cc). Plain
// code that builds on any host; only loop_jit.cc's x86-64 Linux build uses
// it. Not part of the kernels' interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::kernels::loop_jit_internal {

// The general-purpose registers the generated loops use, by encoding.
enum Gpr : int {
  kRax = 0,
  kRsp = 4,
  kRbp = 5,
  kRbx = 3,
  kRsi = 6,
  kRdi = 7,
  kRdx = 2,
  kR12 = 12,
  kR13 = 13,
  kR14 = 14,
  kR15 = 15
};

// [base + index * 4 + disp]; index < 0: none.
struct Mem {
  int base;
  int index = -1;
  int32_t disp = 0;
};

// `wide`: vector ops are EVEX.512 (zmm, registers 0..31) instead of
// VEX.256 (ymm, registers 0..15).
class Assembler {
 public:
  explicit Assembler(bool wide = false) : wide_(wide) {}
  bool wide() const { return wide_; }
  std::vector<uint8_t>& code() { return code_; }
  size_t size() const { return code_.size(); }

  void Push(int r) {
    if (r >= 8) Byte(0x41);
    Byte(static_cast<uint8_t>(0x50 + (r & 7)));
  }
  void Pop(int r) {
    if (r >= 8) Byte(0x41);
    Byte(static_cast<uint8_t>(0x58 + (r & 7)));
  }
  void Ret() { Byte(0xC3); }
  void Vzeroupper() {
    Byte(0xC5);
    Byte(0xF8);
    Byte(0x77);
  }
  // mov dst, src (64-bit).
  void Mov(int dst, int src) {
    Rex(src, -1, dst);
    Byte(0x89);
    ModRmReg(src, dst);
  }
  // mov dst, [m].
  void Load(int dst, Mem m) {
    Rex(dst, m.index, m.base);
    Byte(0x8B);
    ModRmMem(dst, m);
  }
  // lea dst, [m].
  void Lea(int dst, Mem m) {
    Rex(dst, m.index, m.base);
    Byte(0x8D);
    ModRmMem(dst, m);
  }
  void MovImm64(int dst, uint64_t value) {
    Rex(0, -1, dst);
    Byte(static_cast<uint8_t>(0xB8 + (dst & 7)));
    for (int i = 0; i < 8; ++i) Byte(static_cast<uint8_t>(value >> (8 * i)));
  }
  void Xor(int dst, int src) {
    Rex(src, -1, dst);
    Byte(0x31);
    ModRmReg(src, dst);
  }
  // add / sub / and dst, imm32 (sign-extended): 0x81 with /0, /5, /4.
  void Add(int dst, int32_t value) { Arith(0, dst, value); }
  void Sub(int dst, int32_t value) { Arith(5, dst, value); }
  void And(int dst, int32_t value) { Arith(4, dst, value); }
  // cmp a, b: the flags of a - b.
  void Cmp(int a, int b) {
    Rex(b, -1, a);
    Byte(0x39);
    ModRmReg(b, a);
  }
  void CallReg(int r) {
    if (r >= 8) Byte(0x41);
    Byte(0xFF);
    ModRmReg(2, r);
  }
  // jb to an earlier offset.
  void JumpIfBelow(size_t target) {
    Byte(0x0F);
    Byte(0x82);
    Int32(static_cast<int32_t>(static_cast<int64_t>(target) - static_cast<int64_t>(size() + 4)));
  }

  // Vector ops, VEX.256 or EVEX.512 by the assembler's width. map: 1 = 0F,
  // 2 = 0F38, 3 = 0F3A; pp: 0 = none, 1 = 66. reg is ModRM.reg, vvvv the
  // second source (0 when unused), rm a register. EVEX only: `mask` names
  // the opmask register (k1..k7; 0 = none), `zero` zeroes the lanes it
  // leaves out instead of keeping them.
  void VexRRR(int map, int pp, uint8_t opcode, int reg, int vvvv, int rm, int mask = 0,
              bool zero = false) {
    if (wide_) {
      Evex(map, pp, reg, vvvv, (~rm >> 4) & 1, rm, mask, zero);
    } else {
      Vex(map, pp, reg, vvvv, -1, rm);
    }
    Byte(opcode);
    ModRmReg(reg, rm);
  }
  void VexRRM(int map, int pp, uint8_t opcode, int reg, int vvvv, Mem m) {
    if (wide_) {
      Evex(map, pp, reg, vvvv, m.index >= 0 ? (~m.index >> 3) & 1 : 1, m.base, 0, false);
    } else {
      Vex(map, pp, reg, vvvv, m.index, m.base);
    }
    Byte(opcode);
    ModRmMem(reg, m);
  }
  void Vmovups(int dst, Mem m) { VexRRM(1, 0, 0x10, dst, 0, m); }
  void Vmovups(Mem m, int src) { VexRRM(1, 0, 0x11, src, 0, m); }
  void Vmovaps(int dst, int src) { VexRRR(1, 0, 0x28, dst, 0, src); }
  void Vbroadcastss(int dst, Mem m) { VexRRM(2, 1, 0x18, dst, 0, m); }
  void Vcmpps(int dst, int a, int b, uint8_t predicate) {
    VexRRR(1, 0, 0xC2, dst, a, b);
    Byte(predicate);
  }
  // dst = mask's sign bits ? b : a.
  void Vblendvps(int dst, int a, int b, int mask) {
    VexRRR(3, 1, 0x4A, dst, a, b);
    Byte(static_cast<uint8_t>(mask << 4));
  }
  void Vblendvps(int dst, int a, Mem b, int mask) {
    VexRRM(3, 1, 0x4A, dst, a, b);
    Byte(static_cast<uint8_t>(mask << 4));
  }
  void Vcmpps(int dst, int a, Mem b, uint8_t predicate) {
    VexRRM(1, 0, 0xC2, dst, a, b);
    Byte(predicate);
  }
  // dst = dst * a + [m] (vfmadd213ps); dst = dst - a * [m] (vfnmadd231ps).
  void Vfmadd213ps(int dst, int a, Mem m) { VexRRM(2, 1, 0xA8, dst, a, m); }
  void Vfnmadd231ps(int dst, int a, Mem m) { VexRRM(2, 1, 0xBC, dst, a, m); }
  void Vfmadd213ps(int dst, int a, int b) { VexRRR(2, 1, 0xA8, dst, a, b); }
  // dst = a - b; dst = a vector from memory or another register.
  void Vsubps(int dst, int a, Mem b) { VexRRM(1, 0, 0x5C, dst, a, b); }
  void Vsubps(int dst, int a, int b) { VexRRR(1, 0, 0x5C, dst, a, b); }
  void Vmov(int dst, Mem m) { Vmovups(dst, m); }
  void Vmov(int dst, int src) { Vmovaps(dst, src); }
  void Vfnmadd231ps(int dst, int a, int b) { VexRRR(2, 1, 0xBC, dst, a, b); }
  // EVEX only. Mask register k = a <predicate> b (vcmpps k, zmm, zmm, imm8).
  void KCmpps(int k, int a, int b, uint8_t predicate) {
    VexRRR(1, 0, 0xC2, k, a, b);
    Byte(predicate);
  }
  // dst = k ? b : a, lane by lane (vblendmps).
  void Vblendmps(int dst, int k, int a, int b) { VexRRR(2, 1, 0x65, dst, a, b, k); }
  // dst = k ? src : 0 (vmovaps with zeroing).
  void VmovapsZeroed(int dst, int k, int src) { VexRRR(1, 0, 0x28, dst, 0, src, k, true); }
  // dst = a's 32-bit lanes shifted left by `bits` (vpslld, 66 0F 72 /6 ib).
  void Vpslld(int dst, int a, uint8_t bits) {
    VexRRR(1, 1, 0x72, 6, dst, a);
    Byte(bits);
  }

 private:
  void Byte(uint8_t b) { code_.push_back(b); }
  void Int32(int32_t value) {
    for (int i = 0; i < 4; ++i) Byte(static_cast<uint8_t>(static_cast<uint32_t>(value) >> (8 * i)));
  }
  // REX.W with the high bits of reg, index and base.
  void Rex(int reg, int index, int base) {
    Byte(static_cast<uint8_t>(0x48 | (((reg >> 3) & 1) << 2) |
                              ((index >= 0 ? (index >> 3) & 1 : 0) << 1) | ((base >> 3) & 1)));
  }
  void Arith(int extension, int dst, int32_t value) {
    Rex(0, -1, dst);
    Byte(0x81);
    ModRmReg(extension, dst);
    Int32(value);
  }
  void ModRmReg(int reg, int rm) { Byte(static_cast<uint8_t>(0xC0 | ((reg & 7) << 3) | (rm & 7))); }
  // Always a SIB byte and a 32-bit displacement: valid for every base.
  void ModRmMem(int reg, Mem m) {
    Byte(static_cast<uint8_t>(0x80 | ((reg & 7) << 3) | 4));
    const int index = m.index < 0 ? 4 : (m.index & 7);
    const int scale = m.index < 0 ? 0 : 2;
    Byte(static_cast<uint8_t>((scale << 6) | (index << 3) | (m.base & 7)));
    Int32(m.disp);
  }
  void Vex(int map, int pp, int reg, int vvvv, int index, int base) {
    Byte(0xC4);
    const int r = (~reg >> 3) & 1;
    const int x = index >= 0 ? (~index >> 3) & 1 : 1;
    const int b = (~base >> 3) & 1;
    Byte(static_cast<uint8_t>((r << 7) | (x << 6) | (b << 5) | map));
    Byte(static_cast<uint8_t>(((~vvvv & 15) << 3) | 0x04 | pp));  // W0, L = 256 bits
  }
  // The EVEX prefix, W0 and 512 bits: reg, vvvv and a register rm may be 0..31
  // (bit 4 of reg in R', of vvvv in V', of rm in X, all stored inverted);
  // `x` is that inverted bit, or a memory operand's inverted index bit 3.
  void Evex(int map, int pp, int reg, int vvvv, int x, int base, int mask, bool zero) {
    Byte(0x62);
    const int r = (~reg >> 3) & 1;
    const int r_high = (~reg >> 4) & 1;
    const int b = (~base >> 3) & 1;
    Byte(static_cast<uint8_t>((r << 7) | (x << 6) | (b << 5) | (r_high << 4) | map));
    Byte(static_cast<uint8_t>(((~vvvv & 15) << 3) | 0x04 | pp));
    const int v_high = (~vvvv >> 4) & 1;
    Byte(static_cast<uint8_t>((zero ? 0x80 : 0) | 0x40 | (v_high << 3) | (mask & 7)));
  }

  bool wide_;
  std::vector<uint8_t> code_;
};
}  // namespace kiln::kernels::loop_jit_internal
