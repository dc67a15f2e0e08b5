// The HLO reader's internals (hlo_reader.h is its interface), split over:
//   hlo_reader.cc             the module, computations, regions, op text, the opcode table
//   hlo_emit_values.cc        parameters, tuples, copies, constants, random numbers
//   hlo_emit_elementwise.cc   ops on each element: same-named, CHLO, compare
//   hlo_emit_shape.cc         broadcasts, slices, padding, gather
//   hlo_emit_linalg.cc        dot, convolution, FFT, solvers, batch norm
//   hlo_emit_regions.cc       ops with called computations: reduce, sort, while, call
// Each emitter writes the StableHLO of one HLO opcode; the table built from
// the *Emitters() families maps an opcode to its emitter.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "frontend/hlo/hlo_proto.h"

namespace kiln::frontend::hlo {

// One array (or token) value of the StableHLO program: an HLO value of
// tuple shape is the list of its leaves.
struct Leaf {
  std::string name;  // "%v3" or "%v3#1"
  Shape shape;
};
using Leaves = std::vector<Leaf>;

// The StableHLO spelling of an array or token shape, from Kiln's printer
// (so the parser reads back exactly the type meant).
StatusOr<std::string> TypeText(const Shape& shape);
// The array leaves of `shape`, depth first (tuples flattened).
void Flatten(const Shape& shape, std::vector<Shape>& out);
// How many array leaves Flatten finds in `shape`.
size_t LeafCount(const Shape& shape);
// Elements of an array shape; -1 when a dimension is negative or the
// count overflows.
int64_t NumElements(const Shape& shape);
// `array<i64: 1, 2>` (`array<i64>` when empty).
std::string I64Array(const std::vector<int64_t>& values);
// `[1, 2]`: a list of dimension numbers in a StableHLO attribute.
std::string List(const std::vector<int64_t>& values);
// `"0x0A1B"`: bytes as the hex string of a dense literal.
std::string Hex(std::span<const uint8_t> bytes);
// The window_* attributes (and padding) of reduce_window, select_and_scatter
// and convolution: `dimensions` adds window_dimensions, `dilations` the
// base and window dilations.
std::string WindowAttributes(const std::vector<WindowDimension>& window, bool dimensions,
                             bool dilations);
// The properties of GSPMD's custom call `target` (Sharding,
// SPMDFullToShardShape, SPMDShardToFullShape) with HloSharding text
// `sharding`.
std::string ShardingProperties(std::string_view target, const std::string& sharding);
// A single array operand's leaf; `index` names the operand in the error.
StatusOr<Leaf> Single(const Leaves& leaves, size_t index);

// Writes a decoded HloModuleProto as StableHLO text (ToStableHloText). The
// public members below Run are for the emitters.
class Converter {
 public:
  explicit Converter(const Module& module) : module_(module) {}

  // The module's StableHLO text: `func.func @main` holding the entry.
  StatusOr<std::string> Run();

  // Emits `computation` with its parameters bound to `parameters` (by
  // parameter_number); `root` gets the leaves of its root instruction.
  Status EmitComputation(const Computation& computation, const std::vector<Leaves>& parameters,
                         int depth, const std::string& indent, std::string& out, Leaves& root);
  // The computation `instruction` calls at `index` of called_computation_ids.
  StatusOr<const Computation*> Called(const Instruction& instruction, size_t index);
  // A region holding `computation` whose block arguments are its
  // parameters, each flattened: `({ ^bb0(...): ... "stablehlo.return"(...) })`
  // without the outer parentheses. Without arguments the parameters are
  // `captured` (values of the enclosing block).
  Status EmitRegion(const Computation& computation, int depth, const std::string& indent,
                    std::string& out, bool with_arguments = true,
                    const std::vector<Leaves>& captured = {});
  // Names the results of the op about to be written, as leaves of `shape`;
  // `lhs` gets `%vN` or `%vN:count`.
  StatusOr<Leaves> Results(const Shape& shape, std::string& lhs);
  // `lhs = "name"(operands) <{properties}> (regions) : (types) -> (types)`,
  // located at `instruction`.
  StatusOr<std::string> OpText(std::string_view name, const std::string& lhs,
                               const Leaves& operands, const std::string& properties,
                               const std::string& regions, const Leaves& results,
                               const Instruction& instruction);
  // `value` constrained to HloSharding text `sharding` (a `Sharding`
  // custom call written to `out`, located at `in`).
  StatusOr<Leaf> ShardingConstraint(const Leaf& value, const std::string& sharding,
                                    const Instruction& in, const std::string& indent,
                                    std::string& out);
  // A fresh value name (`%vN`) for an op the emitter adds of its own.
  std::string NewValueName() { return "%v" + std::to_string(next_value_++); }

 private:
  // The entry's argument list with the module's donations and shardings
  // on it.
  StatusOr<std::string> EntrySignature(const Computation& entry,
                                       const std::vector<Leaves>& arguments);
  // The parameters of `computation` as flattened block arguments.
  StatusOr<std::vector<Leaves>> BlockArguments(const Computation& computation,
                                               std::string_view prefix, std::string& declaration);
  // Resolves `in`'s operands and hands it to its opcode's emitter.
  Status EmitInstruction(const Instruction& in, const Computation& computation,
                         const std::vector<Leaves>& parameters,
                         const std::unordered_map<int64_t, Leaves>& values, int depth,
                         const std::string& indent, std::string& out, Leaves& result);

  const Module& module_;
  std::unordered_map<int64_t, const Computation*> computations_;
  int next_value_ = 0;
  int next_argument_ = 0;
  size_t emitted_ = 0;  // instructions written, every inlined copy counted
  size_t budget_ = 0;
};

// One instruction being written: its operands' leaves and where its text
// goes. An emitter sets `result` to the leaves the instruction defines.
struct Emission {
  Converter& converter;
  const Instruction& in;
  const Computation& computation;         // the one holding `in`
  const std::vector<Leaves>& parameters;  // the computation's, by parameter_number
  std::vector<Leaves> operands;           // by operand
  Leaves flat;                            // every operand leaf, in order
  int depth;
  const std::string& indent;
  std::string& out;
  Leaves& result;

  // OK when the instruction has `count` operands.
  Status ExpectOperands(size_t count) const;
  // Writes the op `name` on `args` with the instruction's shape as its
  // results, which become `result`.
  Status Emit(std::string_view name, const Leaves& args, const std::string& properties,
              const std::string& regions = "");
};

// Writes one instruction of a given opcode.
using EmitFn = Status (*)(Emission& emission);

// An HLO opcode and its emitter.
struct EmitRule {
  std::string_view opcode;
  EmitFn emit;
};

// The emitter tables of each opcode family; every opcode is in one.
std::span<const EmitRule> ValueEmitters();
std::span<const EmitRule> ElementwiseEmitters();
std::span<const EmitRule> ShapeEmitters();
std::span<const EmitRule> LinalgEmitters();
std::span<const EmitRule> RegionEmitters();

}  // namespace kiln::frontend::hlo
