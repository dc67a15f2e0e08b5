// A while loop with a small body (a fori_loop over a few scalars, a scan
// step over short rows) compiled into one flat program that the loop's node
// runs for every trip: no region execution, no value table, no kernel
// dispatch per node per trip. Every value's memory is resolved once per
// call; scalars of the common types (s32, s64, u32, u64, f32, f64, pred)
// are computed inline, everything else by one kernel call per op.
//
// A loop qualifies when its condition and body use only: constants,
// elementwise ops (unary, binary, compare, select, clamp, convert), views
// (reshape, a broadcast that repeats nothing, a convert to the same type),
// broadcast_in_dim, transpose and slice, dynamic_slice,
// dynamic_update_slice and scatter with a typed update (kernels::Scatter);
// every value it computes is at most kMaxValueBytes (a carry it only reads
// and updates in slices may be of any size). Anything else (nested regions,
// reductions, calls, collectives, tokens) leaves the loop to LowerWhile's
// region form.
//
// Carries are the node's outputs. A carry the body passes through is
// never copied; one the body updates in slices (dynamic_update_slice or
// scatter of that carry, nothing reading it afterwards) is updated in
// place; any other is computed into scratch and copied into its carry at
// the end of the trip (as a parallel assignment: carries read by other
// results are staged first).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"
#include "compiler/executor.h"
#include "ir/module.h"
#include "kernels/elementwise.h"
#include "kernels/gather.h"
#include "kernels/program_jit.h"
#include "kernels/reduce.h"

namespace kiln::compiler {

class Lowering;

class LoopProgram {
 public:
  // A value the loop computes (not a carry) may take at most this many
  // bytes: larger arrays run faster through the graph's fused and parallel
  // kernels than one op at a time here.
  static constexpr int64_t kMaxValueBytes = 64 * 1024;
  static constexpr int64_t kMaxScratchBytes = 1 << 20;
  static constexpr size_t kMaxInstructions = 512;

  // The program of while loop `op`, or nullopt when it does not qualify.
  static std::optional<LoopProgram> Compile(Lowering& lowering, const ir::Operation& op);

  // Values from outside the loop that its regions read, in the order the
  // node takes them after the carries' initial values.
  const std::vector<const ir::Value*>& captures() const { return captures_; }
  // Whether the body returns carry `i` unchanged (its output is its input's
  // memory) / updates it in place (its output may take its input's memory).
  bool passes_through(size_t i) const { return carries_[i] == CarryKind::kPassThrough; }
  bool updates_in_place(size_t i) const { return carries_[i] == CarryKind::kInPlace; }
  // For plan listings: "loop program: N instructions".
  std::string Describe() const;

  // Runs the loop: inputs are the carries' initial values then the
  // captures; outputs the carries.
  Status Run(RunContext& ctx) const;

  // What an instruction does; public for the .cc file's helpers.
  enum class Code : uint8_t {
    kScalar,      // a common op on elements of a common type, inline
    kUnary,       // kernels::Unary
    kBinary,      // kernels::Binary
    kCompare,     // kernels::Compare
    kSelect,      // kernels::Select
    kClamp,       // kernels::Clamp
    kConvert,     // kernels::Convert
    kFill,        // `count` copies of one element (a broadcast of a scalar)
    kCopy,        // `count` bytes
    kStrided,     // kernels::CopyStrided (broadcast_in_dim, transpose, slice)
    kSlice,       // dynamic_slice
    kUpdate,      // dynamic_update_slice into the output (holding the operand)
    kScatter,     // kernels::Scatter into the output (holding the operand)
    kScatterOne,  // a scatter of one contiguous window, inline
  };
  // Inline ops, computed by the generated code or the interpreter alike.
  using ScalarOp = kernels::ScalarOp;
  using ScalarType = kernels::ScalarType;
  // An inline op on `count` elements, one function per op and type: a
  // trip calls it straight, without dispatching on either.
  using StepFn = kernels::ScalarStepFn;

 private:
  enum class CarryKind : uint8_t { kPassThrough, kInPlace, kStaged };
  enum class Source : uint8_t { kCarry, kCapture, kConstant, kScratch };
  struct Slot {
    Source source;
    int64_t index;  // carry, capture, constant; byte offset into scratch
  };
  struct Instruction {
    Code code;
    StepFn step = nullptr;  // kScalar
    ScalarOp scalar{};
    ScalarType scalar_type{};
    kernels::UnaryOp unary{};
    kernels::BinaryOp binary{};
    kernels::CompareDirection direction{};
    kernels::CompareKind compare{};
    bool first_scalar = false;  // select's pred, clamp's min
    // kSlice of one contiguous window of an array no trip writes: the
    // result slot points into the array instead of holding a copy.
    bool view = false;
    bool last_scalar = false;  // clamp's max
    ElementType type{};        // of the (second, for select) operand
    ElementType result_type{};
    int32_t operands[3] = {-1, -1, -1};  // slots
    int32_t result = -1;                 // slot
    int64_t count = 0;                   // elements (kCopy: bytes)
    int32_t detail = -1;                 // into strided_ / slices_ / scatters_
  };
  // kStrided: the result (dense, `dims`) reads its operand at `offset` +
  // sum(i_k * strides[k]) elements.
  struct Strided {
    size_t element_bytes;
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;
    int64_t offset;
  };
  // kSlice / kUpdate: a window of `sizes` of an array of `dims`, at start
  // indices read from slots `starts` (clamped so that the window fits).
  // kScatterOne: the start of dimension index_map[k] is element k of the
  // index vector (the others 0); a window that does not fit is skipped.
  struct Window {
    size_t element_bytes;
    std::vector<int64_t> dims;
    std::vector<int64_t> strides;
    std::vector<int64_t> sizes;
    std::vector<int64_t> size_strides;
    bool contiguous = false;  // one run of memory in the array
    std::vector<int32_t> starts;
    std::vector<ElementType> start_types;
    std::vector<int64_t> index_map;
    int64_t index_stride = 0;
    ElementType index_type{};
  };
  struct Scatter {
    ElementType type;
    std::optional<kernels::ReduceOp> op;
    kernels::IndexedWindows geometry;
    ElementType index_type;
  };

  class Builder;
  friend class Builder;

  // Builds the program with the carries `candidates` marks updated in
  // place; `in_place` receives those the body allows. False when the loop
  // does not qualify.
  bool Build(Lowering& lowering, const ir::Operation& op, const std::vector<bool>& candidates,
             std::vector<bool>* in_place);
  // Calls read(slot, k) for every slot `instruction` reads (k: operand, 3
  // for a start index).
  template <typename F>
  void ForEachRead(const Instruction& instruction, F&& read) const;
  // `at`: each slot's memory; a view's entry changes as the trips run.
  Status RunInstructions(std::span<const Instruction> code, uint8_t** at) const;
  // The program as machine code (kernels::CompileProgram), when this
  // machine has it: every instruction it has no inline form for calls
  // RunCalled with its section and position.
  void GenerateCode();
  static int RunCalled(void* context, int32_t index, uint8_t** at);
  // `in` as a step of the generated code (kCall, index `call`, where it
  // has no other form).
  kernels::ProgramStep StepOf(const Instruction& in, int32_t call) const;
  // Moves the condition's and body's instructions that compute the same
  // value every trip (their operands constants, captures or such values;
  // a scratch result nothing else writes; no update) into prologue_ and
  // body_prologue_, run once per call; marks the slices of arrays no
  // trip writes as views (Instruction::view).
  void HoistInvariants();
  // Lets the body's op computing a staged carry's next value write it into
  // the carry (moved past the last read of the carry's old value) instead
  // of into scratch copied at the end of the trip, where that is safe.
  void WriteCarriesDirectly();

  std::vector<CarryKind> carries_;
  std::vector<int64_t> carry_bytes_;
  std::vector<const ir::Value*> captures_;
  std::vector<Slot> slots_;
  std::vector<std::shared_ptr<std::vector<uint8_t>>> constants_;
  // Loop-invariant instructions, once per call: the condition's before the
  // first trip's condition, the body's once the first trip runs.
  std::vector<Instruction> prologue_;
  std::vector<Instruction> body_prologue_;
  std::vector<Instruction> condition_;
  std::vector<Instruction> body_;
  // The end of a trip: `stage` copies carries other results read into
  // scratch, then `assign` copies every staged result into its carry.
  std::vector<Instruction> stage_;
  std::vector<Instruction> assign_;
  int32_t proceed_ = -1;  // the condition's slot
  std::vector<Strided> strided_;
  std::vector<Window> windows_;
  std::vector<Scatter> scatters_;
  int64_t scratch_bytes_ = 0;
  // The generated loop, or null: then Run interprets the instructions.
  std::shared_ptr<const kernels::ProgramCode> code_;
  // The key of the scratch memory in the ExecutionEnv (a graph of its own).
  std::shared_ptr<const Graph> scratch_key_ = std::make_shared<const Graph>();
};

}  // namespace kiln::compiler
