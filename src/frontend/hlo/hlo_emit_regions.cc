// Emitters of ops that call computations: those written as StableHLO ops
// with regions (reduce, sort, scatter, while, conditional, ...) and call,
// whose callee is inlined.
#include <string>

#include "frontend/hlo/hlo_emit.h"

namespace kiln::frontend::hlo {
namespace {

// The regions of the first `count` called computations, comma-separated.
StatusOr<std::string> CalledRegions(Emission& e, size_t count) {
  std::string regions;
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(const Computation* called, e.converter.Called(e.in, i));
    if (i > 0) regions += ", ";
    KILN_RETURN_IF_ERROR(e.converter.EmitRegion(*called, e.depth, e.indent, regions));
  }
  return regions;
}

// reduce: stablehlo.reduce over the called computation.
Status EmitReduce(Emission& e) {
  KILN_ASSIGN_OR_RETURN(std::string regions, CalledRegions(e, 1));
  return e.Emit("stablehlo.reduce", e.flat, "dimensions = " + I64Array(e.in.dimensions), regions);
}

// reduce-window: stablehlo.reduce_window with the whole window.
Status EmitReduceWindow(Emission& e) {
  KILN_ASSIGN_OR_RETURN(std::string regions, CalledRegions(e, 1));
  return e.Emit("stablehlo.reduce_window", e.flat, WindowAttributes(e.in.window, true, true),
                regions);
}

// select-and-scatter: the select then the scatter computation as regions.
Status EmitSelectAndScatter(Emission& e) {
  KILN_ASSIGN_OR_RETURN(std::string regions, CalledRegions(e, 2));
  std::string attributes = WindowAttributes(e.in.window, true, false);
  return e.Emit("stablehlo.select_and_scatter", e.flat, attributes, regions);
}

// sort: stablehlo.sort along its one dimension.
Status EmitSort(Emission& e) {
  KILN_ASSIGN_OR_RETURN(std::string regions, CalledRegions(e, 1));
  if (e.in.dimensions.size() != 1) {
    return InvalidArgument("expected one sort dimension, found ", e.in.dimensions.size());
  }
  return e.Emit("stablehlo.sort", e.flat,
                "dimension = " + std::to_string(e.in.dimensions[0]) +
                    " : i64, is_stable = " + (e.in.is_stable ? "true" : "false"),
                regions);
}

// map: stablehlo.map over the called computation.
Status EmitMap(Emission& e) {
  KILN_ASSIGN_OR_RETURN(std::string regions, CalledRegions(e, 1));
  return e.Emit("stablehlo.map", e.flat, "dimensions = " + I64Array(e.in.dimensions), regions);
}

// scatter: stablehlo.scatter with its dimension numbers.
Status EmitScatter(Emission& e) {
  KILN_ASSIGN_OR_RETURN(std::string regions, CalledRegions(e, 1));
  const ScatterDims& s = e.in.scatter;
  std::string dims = "update_window_dims = " + List(s.update_window_dims) +
                     ", inserted_window_dims = " + List(s.inserted_window_dims);
  if (!s.input_batching_dims.empty()) {
    dims += ", input_batching_dims = " + List(s.input_batching_dims) +
            ", scatter_indices_batching_dims = " + List(s.scatter_indices_batching_dims);
  }
  dims += ", scatter_dims_to_operand_dims = " + List(s.scatter_dims_to_operand_dims) +
          ", index_vector_dim = " + std::to_string(s.index_vector_dim);
  const std::string sorted = e.in.indices_are_sorted ? "true" : "false";
  return e.Emit("stablehlo.scatter", e.flat,
                "indices_are_sorted = " + sorted +
                    ", scatter_dimension_numbers = #stablehlo.scatter<" + dims +
                    ">, unique_indices = " + (e.in.unique_indices ? "true" : "false"),
                regions);
}

// while: stablehlo.while, the condition region before the body.
Status EmitWhile(Emission& e) {
  // called_computation_ids: the body, then the condition.
  KILN_RETURN_IF_ERROR(e.ExpectOperands(1));
  KILN_ASSIGN_OR_RETURN(const Computation* body, e.converter.Called(e.in, 0));
  KILN_ASSIGN_OR_RETURN(const Computation* condition, e.converter.Called(e.in, 1));
  std::string regions;
  KILN_RETURN_IF_ERROR(e.converter.EmitRegion(*condition, e.depth, e.indent, regions));
  regions += ", ";
  KILN_RETURN_IF_ERROR(e.converter.EmitRegion(*body, e.depth, e.indent, regions));
  return e.Emit("stablehlo.while", e.flat, "", regions);
}

// conditional: stablehlo.if for a pred selector, else stablehlo.case.
Status EmitConditional(Emission& e) {
  // Operand 0 selects the branch (pred: true then false; s32: an index);
  // operand i + 1 is branch i's parameter, reached from the region by
  // capture.
  const Instruction& in = e.in;
  if (e.operands.size() != in.called_computation_ids.size() + 1) {
    return InvalidArgument("expected one operand per branch after the selector: ",
                           in.called_computation_ids.size(), " branches, ", e.operands.size(),
                           " operands");
  }
  KILN_ASSIGN_OR_RETURN(Leaf selector, Single(e.operands[0], 0));
  std::string regions;
  for (size_t i = 0; i < in.called_computation_ids.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(const Computation* branch, e.converter.Called(in, i));
    if (i > 0) regions += ", ";
    KILN_RETURN_IF_ERROR(e.converter.EmitRegion(*branch, e.depth, e.indent, regions, false,
                                                {e.operands[i + 1]}));
  }
  const bool is_pred = selector.shape.type == PrimitiveType::kPred;
  return e.Emit(is_pred ? "stablehlo.if" : "stablehlo.case", {selector}, "", regions);
}

// call: the callee inlined, its parameters bound to the operands.
Status EmitCall(Emission& e) {
  KILN_ASSIGN_OR_RETURN(const Computation* callee, e.converter.Called(e.in, 0));
  return e.converter.EmitComputation(*callee, e.operands, e.depth + 1, e.indent, e.out, e.result);
}

// This family's opcodes and their emitters.
constexpr EmitRule kRules[] = {
    {"reduce", EmitReduce},
    {"reduce-window", EmitReduceWindow},
    {"select-and-scatter", EmitSelectAndScatter},
    {"sort", EmitSort},
    {"map", EmitMap},
    {"scatter", EmitScatter},
    {"while", EmitWhile},
    {"conditional", EmitConditional},
    {"call", EmitCall},
};

}  // namespace

std::span<const EmitRule> RegionEmitters() { return kRules; }

}  // namespace kiln::frontend::hlo
