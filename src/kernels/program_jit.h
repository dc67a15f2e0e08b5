// Machine code for the loop programs of small while loops
// (compiler/loop_program.h). Interpreting such a program costs a dispatch,
// an operand fetch and a call per instruction per trip: 3 to 4 ns an
// instruction, 25 ns a trip of a fori_loop's 7 scalar instructions where
// XLA's compiled loop takes 4. CompileProgram writes the whole loop as one
// x86-64 function (xbyak encodes it): scalar ops of the common types,
// the index arithmetic of slices and one-window updates and their copies
// inline; longer element runs by calling their step function; anything
// else by calling back into the interpreter for that one instruction.
// Values live in memory, each instruction reading its operands through
// the slot table, so the interpreter and the generated code share every
// slot and either may run any instruction; the few integer scalars only
// inline code touches (a fori_loop's counter) live in registers, stored
// before each call back and at the end. docs/execution.md describes it.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "base/small_vector.h"
#include "kernels/loop_jit.h"

namespace kiln::kernels {

// A loop program's inline ops and the element types they compute in.
enum class ScalarOp : uint8_t {
  kAdd,
  kSubtract,
  kMultiply,
  kMaximum,
  kMinimum,
  kAnd,
  kOr,
  kXor,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kSelect,
  kSelectByOne,
  kMove,
};
enum class ScalarType : uint8_t { kPred, kS32, kS64, kU32, kU64, kF32, kF64 };

// out = op(a, b, c) over `count` elements: one function per op and type.
using ScalarStepFn = void (*)(const uint8_t* a, const uint8_t* b, const uint8_t* c, uint8_t* out,
                              int64_t count);
// Runs instruction `index` of the program the code belongs to; nonzero when
// it failed (the callee keeps the error).
using ProgramCallFn = int (*)(void* context, int32_t index, uint8_t** at);

// One instruction. Operands and result are slots: entries of the table
// `at` the code is run with, each the address of a value (slot -1 is
// at[-1], null).
struct ProgramStep {
  enum class Kind : uint8_t {
    // out[i] = op(a[i], b[i], c[i]) for `count` elements of `type`
    // (compares write pred; select's a is pred, kSelectByOne's one pred
    // for all): inline for one element, else by calling `step`.
    kScalar,
    // `count` bytes from a to out (nothing when they are the same).
    kCopy,
    // A window of an array at start indices read at run time (Window).
    kWindow,
    // out = a converted from `type` to `to` as kernels::Convert does
    // (`count` elements; one inline where both types allow it, but float
    // to integer, which saturates).
    kConvert,
    // The interpreter's instruction `call`.
    kCall,
  };
  // kWindow: where its start indices come from and what it does there.
  //   kSlice:      out = the window of a, clamped to fit (contiguous);
  //   kUpdate:     the window of out = b, clamped to fit (contiguous);
  //   kView:       at[out] = the address of the window of a, clamped;
  //   kScatterOne: start k is element k of the index vector at a (of
  //                `index_type`, `index_stride` bytes apart); a window
  //                that does not fit is skipped; else its elements of out
  //                become op(them, b) (kMove: b).
  enum class Mode : uint8_t { kSlice, kUpdate, kView, kScatterOne };
  struct Start {
    int32_t slot = -1;  // kSlice/kUpdate/kView: the start's scalar
    ScalarType type = ScalarType::kS32;
    int64_t limit = 0;   // the largest start that fits
    int64_t stride = 0;  // bytes per unit of the start
  };

  Kind kind = Kind::kCall;
  ScalarOp op = ScalarOp::kMove;
  ScalarType type = ScalarType::kPred;
  ScalarType to = ScalarType::kPred;  // kConvert's result type
  int32_t a = -1, b = -1, c = -1, out = -1;
  int64_t count = 0;  // elements (kCopy: bytes; kWindow: elements of the window)
  ScalarStepFn step = nullptr;
  int32_t call = -1;
  Mode mode = Mode::kSlice;
  int element_bytes = 0;  // kWindow
  SmallVector<Start> starts;
  ScalarType index_type = ScalarType::kS32;
  int64_t index_stride = 0;
};

// The loop: `prologue` once; then while the pred at slot `proceed` after
// `condition` is true: `body_prologue` before the first trip only, then
// `body`.
struct ProgramLoop {
  std::span<const ProgramStep> prologue, condition, body_prologue, body;
  int32_t proceed = -1;
};

class ProgramCode {
 public:
  using Entry = int (*)(uint8_t** at, void* context);
  // The memory holding the code (program_jit.cc's).
  struct Storage;
  ProgramCode(std::unique_ptr<Storage> storage, size_t bytes, Entry entry);
  ~ProgramCode();
  ProgramCode(const ProgramCode&) = delete;
  ProgramCode& operator=(const ProgramCode&) = delete;

  // Runs the loop over the slots `at` (at[-1] must be valid and null);
  // `context` goes to every kCall. Nonzero when a call failed.
  int Run(uint8_t** at, void* context) const { return entry_(at, context); }
  size_t code_bytes() const { return bytes_; }

 private:
  std::unique_ptr<Storage> storage_;
  size_t bytes_;
  Entry entry_;
};

// Whether CompileProgram can generate code in this build on this CPU
// (KILN_JIT=0 turns it off).
bool ProgramJitAvailable();

// The code of `loop`, calling `call` for its kCall steps; null when it
// cannot be generated here (see ProgramJitAvailable; no executable memory).
std::unique_ptr<ProgramCode> CompileProgram(const ProgramLoop& loop, ProgramCallFn call);
// The same with vector ops of `isa` only (null where the CPU lacks it).
std::unique_ptr<ProgramCode> CompileProgram(const ProgramLoop& loop, ProgramCallFn call,
                                            LoopIsa isa);

}  // namespace kiln::kernels
