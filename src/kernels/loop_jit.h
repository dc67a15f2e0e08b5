// Machine code for the f32 fused loops (compiler/fusion.cc). A fused loop's
// maps, run one kernel per member per tile, store and reload every
// intermediate value; on this machine that costs about 0.3 cycles per
// element per member even with tiles in L1, where code that keeps the
// element in a register costs a tenth of that. CompileLoop turns a
// straight-line program of f32 ops into an AVX2 loop over eight elements
// at a time (an AVX-512 loop over sixteen where the CPU has it), values
// held in vector registers, in a few microseconds and with no compiler
// library. Anything it cannot generate returns null and the
// loop keeps its tile kernels, so other machines and ops lose nothing.
// docs/execution.md describes the code it writes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "kernels/elementwise.h"

namespace kiln::kernels {

// The most input and output arrays a loop may have.
inline constexpr int kMaxLoopArrays = 32;

// One step of a loop program. Steps that produce a value (load, splat,
// unary, binary) are named by their index; operands name earlier steps.
struct LoopStep {
  // kLoadScalar: every element is in[slot][0] (a value broadcast over the
  // elements, read at run time).
  enum class Kind : uint8_t { kLoad, kLoadScalar, kSplat, kUnary, kBinary, kStore };
  Kind kind = Kind::kLoad;
  uint8_t op = 0;          // kUnary: a UnaryOp; kBinary: a BinaryOp
  int32_t a = -1, b = -1;  // operands; kStore: a is the value stored
  int32_t slot = 0;        // kLoad(Scalar): the input array; kStore: the output array
  float constant = 0;      // kSplat: the value of every element
};

// Whether generated loops compute `op` on f32 (exactly as Unary / Binary do;
// exp with code of its own, within 1 ulp of the true value: with AVX2
// alone Unary's exp may differ from it by an ulp or two, with AVX-512
// Unary's sixteen-lane exp is the same code; the other transcendental ops
// by calling vector_math's packet forms).
bool LoopJitSupports(UnaryOp op);
// Whether fused loops compute the transcendental `op` inline in their
// generated stages, with no call: exp, except where vector_math runs its
// sixteen-lane exp while generated code is kept to eight lanes
// (KILN_JIT=avx2): that exp is faster as a stage of its own.
bool LoopJitInlines(UnaryOp op);
bool LoopJitSupports(BinaryOp op);

// The instruction sets generated loops are written for: AVX2 with FMA (eight
// lanes, ymm) and AVX-512 F + DQ (sixteen lanes, zmm).
enum class LoopIsa : uint8_t { kAvx2, kAvx512 };

// Whether this build and CPU run generated loops of `isa` (KILN_JIT aside).
bool LoopJitAvailable(LoopIsa isa);

class LoopCode {
 public:
  using Entry = void (*)(const float* const* in, float* const* out, int64_t n);
  // Takes `memory` (executable, `bytes` long, unmapped on destruction) and
  // the constants its code reads by address.
  LoopCode(void* memory, size_t bytes, int num_inputs, int num_outputs,
           std::unique_ptr<float[]> constants, uint32_t scalar_inputs, int lanes);
  ~LoopCode();
  LoopCode(const LoopCode&) = delete;
  LoopCode& operator=(const LoopCode&) = delete;

  // Runs the program for elements [0, n) of the arrays: step kLoad with
  // slot j reads in[j][i] (kLoadScalar in[j][0]), step kStore with slot k
  // writes out[k][i]. Outputs must not overlap inputs or one another.
  void Run(const float* const* in, float* const* out, int64_t n) const;
  size_t code_bytes() const { return bytes_; }
  // Elements per iteration: 8 (AVX2) or 16 (AVX-512).
  int lanes() const { return lanes_; }

 private:
  void* memory_;
  size_t bytes_;
  int num_inputs_, num_outputs_;
  std::unique_ptr<float[]> constants_;
  uint32_t scalar_inputs_;  // bit j: input j is read by kLoadScalar
  int lanes_;
};

// The loop for `steps` (every kStore's slot < num_outputs, every kLoad's <
// num_inputs), or null when it cannot be generated here: not x86-64 with
// AVX2 and FMA, KILN_JIT=0, an op without generated form, more values live
// at once than registers, or no executable memory.
std::unique_ptr<LoopCode> CompileLoop(std::span<const LoopStep> steps, int num_inputs,
                                      int num_outputs);
// The same in one instruction set: null also when the machine lacks it, or
// (AVX-512) when the program calls a transcendental op other than exp.
// CompileLoop tries AVX-512 first (unless KILN_JIT=avx2), then AVX2.
std::unique_ptr<LoopCode> CompileLoop(std::span<const LoopStep> steps, int num_inputs,
                                      int num_outputs, LoopIsa isa);

// Whether KILN_JIT allows generated code: yes unless it is 0, false, off
// or no (avx2 allows it, on eight lanes only).
bool LoopJitEnabled();
// Whether KILN_JIT allows AVX-512 code (everything but KILN_JIT=avx2).
bool WideLoopsAllowed();

}  // namespace kiln::kernels
