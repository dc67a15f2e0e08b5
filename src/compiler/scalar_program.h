// A region body made only of scalar elementwise ops (compare, select,
// arithmetic, convert, constants), run over many independent instances
// ("lanes") at once: one kernel call per op for a whole batch instead of one
// region execution per element. Reductions with multi-operand bodies
// (argmax) and map use it; a body it cannot run falls back to RunRegion.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"
#include "ir/module.h"
#include "kernels/elementwise.h"

namespace kiln::compiler {

class ScalarProgram {
 public:
  // Lanes one Run handles at most.
  static constexpr int64_t kMaxLanes = 256;

  // The program of `region`, or nullopt when it uses anything but 0-d
  // values of kernel types, the ops above, and its own arguments and
  // constants (a captured outer value, a nested region, ...).
  static std::optional<ScalarProgram> Compile(const ir::Region& region);

  size_t num_arguments() const { return argument_types_.size(); }
  size_t num_results() const { return results_.size(); }
  ElementType result_type(size_t i) const;
  ElementType argument_type(size_t i) const { return argument_types_[i]; }

  // Memory for the values of one Run at a time; reuse it across runs.
  class Scratch {
   public:
    explicit Scratch(const ScalarProgram& program);

   private:
    friend class ScalarProgram;
    struct alignas(16) Chunk {
      uint8_t bytes[16];
    };
    std::vector<Chunk> memory_;
    std::vector<const void*> pointers_;  // per register
  };

  // Runs `lanes` (1..kMaxLanes) instances: argument i holds its lanes
  // contiguously at args[i], result i is written contiguously to
  // results[i], which must not overlap the arguments.
  Status Run(int64_t lanes, std::span<const void* const> args, std::span<void* const> results,
             Scratch& scratch) const;

 private:
  enum class Kind : uint8_t { kUnary, kBinary, kCompare, kSelect, kConvert };
  struct Instruction {
    Kind kind;
    kernels::UnaryOp unary{};
    kernels::BinaryOp binary{};
    kernels::CompareDirection direction{};
    kernels::CompareKind compare{};
    ElementType type;  // of the (second, for select) operand
    ElementType result_type;
    int operands[3] = {-1, -1, -1};  // registers
    int result = -1;                 // register
  };

  // Where a register's lanes live during a Run.
  enum class Source : uint8_t { kArgument, kConstant, kScratch };
  struct Register {
    Source source;
    size_t index;  // argument, constant, or byte offset into the scratch memory
    ElementType type;
  };

  std::vector<ElementType> argument_types_;
  std::vector<Register> registers_;
  std::vector<std::vector<uint8_t>> constants_;  // kMaxLanes copies each
  std::vector<Instruction> instructions_;
  std::vector<int> results_;  // registers
  size_t scratch_bytes_ = 0;
};

}  // namespace kiln::compiler
