// Verifier rules for ops with regions: reduce, reduce_window,
// select_and_scatter, sort, map, while, if, case; and the reduction-body
// check shared with scatter and the reducing collectives.
#include <algorithm>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// The result, under a tensor of `element` and shape `dims`, for messages.
std::string ScalarOf(const Type& element) { return TypeText(Type::Tensor(element, {})); }

// Returns whether `dims` is compatible with a subsequence of `allowed`
// (upstream lets reduction bodies carry some of the result dimensions).
bool FitsAllowedDims(std::span<const int64_t> dims, std::span<const int64_t> allowed) {
  size_t matched = 0;
  for (size_t i = 0; i < allowed.size() && matched < dims.size(); ++i) {
    if (DimsCompatible(allowed[i], dims[matched])) ++matched;
  }
  return matched == dims.size();
}

// Arguments of a region: 0-d tensors of the given elements, in order
// (sort's comparator, select_and_scatter's select, map's computation).
Status ExpectScalarArguments(const OpContext& context, std::string_view constraint,
                             std::string_view region, const Block& block,
                             std::span<const Type> elements) {
  if (block.num_arguments() != elements.size()) {
    return context.Fail(constraint, region, " must take ", elements.size(), " arguments, found ",
                        block.num_arguments());
  }
  for (size_t i = 0; i < elements.size(); ++i) {
    const Type& type = block.argument(i)->type();
    if (!IsRankedTensor(type) || Rank(type) != 0 || !SameElement(ElementOf(type), elements[i])) {
      return context.Fail(constraint, region, " argument #", i, " must be ", ScalarOf(elements[i]),
                          ", found ", TypeText(type));
    }
  }
  return Status::Ok();
}

// The region returns one 0-d tensor of `element`.
Status ExpectScalarReturn(const OpContext& context, std::string_view constraint,
                          std::string_view region, const Region& body, const Type& element) {
  std::vector<Type> returned = TerminatorTypes(body);
  if (returned.size() != 1 || !IsRankedTensor(returned[0]) || Rank(returned[0]) != 0 ||
      !SameElement(ElementOf(returned[0]), element)) {
    return context.Fail(constraint, region, " must return one ", ScalarOf(element), ", found ",
                        TypesText(returned));
  }
  return Status::Ok();
}

// Variadic ops with N inputs and N init values (reduce, reduce_window):
// C-labels differ per op.
Status ExpectInputsAndInits(const OpContext& context, std::string_view count_constraint,
                            std::string_view shape_constraint,
                            std::string_view element_constraint) {
  const size_t count = context.num_operands() / 2;
  if (count == 0 || context.num_operands() % 2 != 0 || context.num_results() != count) {
    return context.Fail(count_constraint,
                        "expected N > 0 inputs, N init values and N results, "
                        "found ",
                        context.num_operands(), " operands and ", context.num_results(),
                        " results");
  }
  const Type& first = context.operand(0);
  for (size_t i = 0; i < count; ++i) {
    const Type& input = context.operand(i);
    const Type& init = context.operand(count + i);
    if (!ShapesCompatible(input.dims(), first.dims())) {
      return context.Fail(shape_constraint, "input #", i, " ", TypeText(input),
                          " must have the shape of input #0 ", TypeText(first));
    }
    if (!SameElement(ElementOf(init), ElementOf(input))) {
      return context.Fail(element_constraint, "init value #", i, " must have element type ",
                          TypeText(ElementOf(input)), ", found ", TypeText(init));
    }
    if (Rank(init) != 0) {
      return context.Fail("I2", "init value #", i, " must be a rank-0 tensor, found ",
                          TypeText(init));
    }
  }
  return Status::Ok();
}

// Results of reduce and reduce_window: `shape` and the body's elements.
Status ExpectReductionResults(const OpContext& context, std::string_view shape_constraint,
                              std::string_view element_constraint, std::span<const int64_t> shape,
                              std::span<const Type> accumulators) {
  for (size_t i = 0; i < context.num_results(); ++i) {
    KILN_RETURN_IF_ERROR(context.ExpectResultShape(shape_constraint, i, shape));
    if (!SameElement(ElementOf(context.result(i)), ElementOf(accumulators[i]))) {
      return context.Fail(element_constraint, "result #", i, " must have the body's element type ",
                          TypeText(ElementOf(accumulators[i])), ", found ",
                          TypeText(context.result(i)));
    }
  }
  return Status::Ok();
}

Status VerifyReduce(const OpContext& context) {
  KILN_RETURN_IF_ERROR(ExpectInputsAndInits(context, "C3", "C1", "C2"));
  const size_t count = context.num_results();
  const Type& first = context.operand(0);
  KILN_ASSIGN_OR_RETURN(IntList dims, context.Ints("dimensions"));
  KILN_RETURN_IF_ERROR(context.ExpectDimsInRange("C4", "C5", "dimensions", dims.span(),
                                                 Rank(first)));
  std::vector<int64_t> reduced;
  for (int64_t d = 0; d < Rank(first); ++d) {
    if (std::find(dims.begin(), dims.end(), d) == dims.end()) {
      reduced.push_back(first.dims()[static_cast<size_t>(d)]);
    }
  }
  std::vector<Type> inputs = context.OperandTypes(0, count);
  std::vector<Type> inits = context.OperandTypes(count);
  std::vector<Type> accumulators;
  KILN_RETURN_IF_ERROR(VerifyReducer(context, "C6", context.op().region(0), inputs, inits, reduced,
                                     &accumulators));
  return ExpectReductionResults(context, "C7", "C8", reduced, accumulators);
}

Status VerifyReduceWindow(const OpContext& context) {
  KILN_RETURN_IF_ERROR(ExpectInputsAndInits(context, "C1", "C2", "C3"));
  const size_t count = context.num_results();
  const Type& first = context.operand(0);
  const int64_t rank = Rank(first);
  KILN_ASSIGN_OR_RETURN(IntList window, context.Ints("window_dimensions"));
  if (static_cast<int64_t>(window.size()) != rank) {
    return context.Fail("C4", "window_dimensions has ", window.size(),
                        " entries, expected the input rank ", rank);
  }
  for (int64_t size : window) {
    if (size <= 0) return context.Fail("C5", "window_dimensions must be > 0, found ", size);
  }
  KILN_ASSIGN_OR_RETURN(auto strides, WindowList(context, "window_strides", "C6", "C7", rank));
  KILN_ASSIGN_OR_RETURN(auto base, WindowList(context, "base_dilations", "C8", "C9", rank));
  KILN_ASSIGN_OR_RETURN(auto dilations,
                        WindowList(context, "window_dilations", "C10", "C11", rank));
  KILN_ASSIGN_OR_RETURN(auto padding, PaddingList(context, "C12", rank));
  std::vector<Type> inputs = context.OperandTypes(0, count);
  std::vector<Type> inits = context.OperandTypes(count);
  std::vector<Type> accumulators;
  KILN_RETURN_IF_ERROR(VerifyReducer(context, "C13", context.op().region(0), inputs, inits,
                                     window.span(), &accumulators));
  std::vector<int64_t> expected;
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
    WindowDim dim{window[d], strides[d], padding[2 * d], padding[2 * d + 1], base[d], dilations[d]};
    std::optional<int64_t> windows = NumWindows(first.dims()[d], dim);
    if (!windows) {
      return context.Fail("C15", "padding (", dim.padding_low, ", ", dim.padding_high,
                          ") of dimension ", d, " leaves a negative input size");
    }
    expected.push_back(*windows);
  }
  return ExpectReductionResults(context, "C15", "C16", expected, accumulators);
}

Status VerifySelectAndScatter(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& source = context.operand(1);
  const Type& init = context.operand(2);
  if (!SameElement(ElementOf(source), ElementOf(operand))) {
    return context.Fail("C1", "source must have element type ", TypeText(ElementOf(operand)),
                        ", found ", TypeText(source));
  }
  if (!SameElement(ElementOf(init), ElementOf(operand))) {
    return context.Fail("C3", "init_value must have element type ", TypeText(ElementOf(operand)),
                        ", found ", TypeText(init));
  }
  KILN_RETURN_IF_ERROR(context.ExpectScalar("I3", "init_value", init));
  const int64_t rank = Rank(operand);
  KILN_ASSIGN_OR_RETURN(auto window, WindowList(context, "window_dimensions", "C4", "C5", rank));
  KILN_ASSIGN_OR_RETURN(auto strides, WindowList(context, "window_strides", "C6", "C7", rank));
  KILN_ASSIGN_OR_RETURN(auto padding, PaddingList(context, "C8", rank));
  const Region& select = context.op().region(0);
  const Type elements[] = {ElementOf(operand), ElementOf(operand)};
  KILN_RETURN_IF_ERROR(ExpectScalarArguments(context, "C9", "select", select.block(0), elements));
  KILN_RETURN_IF_ERROR(ExpectScalarReturn(context, "C9", "select", select,
                                          Type::Element(ElementType::kPred)));
  const Type source_scalar = Type::Tensor(ElementOf(source), {});
  std::vector<Type> accumulators;
  KILN_RETURN_IF_ERROR(VerifyReducer(context, "C10", context.op().region(1),
                                     std::span(&source_scalar, 1), std::span(&init, 1), {},
                                     &accumulators));
  std::vector<int64_t> expected;
  for (size_t d = 0; d < static_cast<size_t>(rank); ++d) {
    WindowDim dim{window[d], strides[d], padding[2 * d], padding[2 * d + 1], 1, 1};
    std::optional<int64_t> windows = NumWindows(operand.dims()[d], dim);
    if (!windows) {
      return context.Fail("C2", "padding (", dim.padding_low, ", ", dim.padding_high,
                          ") of dimension ", d, " leaves a negative operand size");
    }
    expected.push_back(*windows);
  }
  if (!ShapesCompatible(source.dims(), expected)) {
    return context.Fail("C2", "source must have shape ", DimsText(expected),
                        " (one entry per window), found ", TypeText(source));
  }
  const Type& result = context.result(0);
  if (!ShapesCompatible(result.dims(), operand.dims())) {
    return context.Fail("C11", "result must have the operand shape ", DimsText(operand.dims()),
                        ", found ", TypeText(result));
  }
  if (!SameElement(ElementOf(result), ElementOf(accumulators[0]))) {
    return context.Fail("C12", "result must have the scatter body's element type ",
                        TypeText(ElementOf(accumulators[0])), ", found ", TypeText(result));
  }
  return Status::Ok();
}

Status VerifySort(const OpContext& context) {
  const Type& first = context.operand(0);
  if (context.num_results() != context.num_operands()) {
    return context.Fail("C2", "expected one result per input (", context.num_operands(),
                        "), found ", context.num_results());
  }
  std::vector<Type> elements;
  for (size_t i = 0; i < context.num_operands(); ++i) {
    const Type& input = context.operand(i);
    if (!TypesCompatible(context.result(i), input)) {
      return context.Fail("C2", "result #", i, " must have the type of input #", i, " ",
                          TypeText(input), ", found ", TypeText(context.result(i)));
    }
    if (!ShapesCompatible(input.dims(), first.dims())) {
      return context.Fail("C3", "input #", i, " ", TypeText(input),
                          " must have the shape of input #0 ", TypeText(first));
    }
    elements.push_back(ElementOf(input));
    elements.push_back(ElementOf(input));
  }
  KILN_ASSIGN_OR_RETURN(int64_t dimension, context.IntOr("dimension", -1));
  if (dimension < -Rank(first) || dimension >= Rank(first)) {
    return context.Fail("C4", "dimension ", dimension, " must be in [", -Rank(first), ", ",
                        Rank(first), ")");
  }
  KILN_RETURN_IF_ERROR(context.BoolOr("is_stable", false).status());
  const Region& comparator = context.op().region(0);
  KILN_RETURN_IF_ERROR(ExpectScalarArguments(context, "C5", "comparator", comparator.block(0),
                                             elements));
  return ExpectScalarReturn(context, "C5", "comparator", comparator,
                            Type::Element(ElementType::kPred));
}

Status VerifyMap(const OpContext& context) {
  const Type& first = context.operand(0);
  const Type& result = context.result(0);
  std::vector<Type> elements;
  for (size_t i = 0; i < context.num_operands(); ++i) {
    if (!ShapesCompatible(context.operand(i).dims(), result.dims())) {
      return context.Fail("C1", "input #", i, " ", TypeText(context.operand(i)),
                          " must have the result shape ", DimsText(result.dims()));
    }
    elements.push_back(ElementOf(context.operand(i)));
  }
  KILN_ASSIGN_OR_RETURN(IntList dims, context.Ints("dimensions"));
  bool identity = static_cast<int64_t>(dims.size()) == Rank(first);
  for (size_t i = 0; identity && i < dims.size(); ++i) {
    identity = dims[i] == static_cast<int64_t>(i);
  }
  if (!identity) {
    return context.Fail("C3", "dimensions must be [0, ..., ", Rank(first) - 1, "], found ",
                        DimsText(dims.span()));
  }
  const Region& computation = context.op().region(0);
  KILN_RETURN_IF_ERROR(ExpectScalarArguments(context, "C4", "computation", computation.block(0),
                                             elements));
  return ExpectScalarReturn(context, "C4", "computation", computation, ElementOf(result));
}

// Types of `block`'s arguments.
std::vector<Type> ArgumentTypes(const Block& block) {
  std::vector<Type> types;
  for (size_t i = 0; i < block.num_arguments(); ++i) types.push_back(block.argument(i)->type());
  return types;
}

bool AllCompatible(std::span<const Type> a, std::span<const Type> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!TypesCompatible(a[i], b[i])) return false;
  }
  return true;
}

Status VerifyWhile(const OpContext& context) {
  std::vector<Type> operands = context.OperandTypes();
  const Region& cond = context.op().region(0);
  const Region& body = context.op().region(1);
  if (!AllCompatible(ArgumentTypes(cond.block(0)), operands)) {
    return context.Fail("C1", "cond takes ", TypesText(ArgumentTypes(cond.block(0))),
                        " but the operands are ", TypesText(operands));
  }
  std::vector<Type> cond_result = TerminatorTypes(cond);
  if (cond_result.size() != 1 || !IsRankedTensor(cond_result[0]) || Rank(cond_result[0]) != 0 ||
      ClassOf(ElementOf(cond_result[0])) != kBoolClass) {
    return context.Fail("C1", "cond must return one tensor<i1>, found ", TypesText(cond_result));
  }
  if (!AllCompatible(ArgumentTypes(body.block(0)), operands)) {
    return context.Fail("C2", "body takes ", TypesText(ArgumentTypes(body.block(0))),
                        " but the operands are ", TypesText(operands));
  }
  std::vector<Type> body_result = TerminatorTypes(body);
  if (!AllCompatible(body_result, operands)) {
    return context.Fail("C2", "body returns ", TypesText(body_result), " but the operands are ",
                        TypesText(operands));
  }
  std::vector<Type> results = context.ResultTypes();
  if (!AllCompatible(results, operands)) {
    return context.Fail("C3", "results ", TypesText(results), " must have the operand types ",
                        TypesText(operands));
  }
  return Status::Ok();
}

// if and case: branches take no arguments, return the same types, and
// those are the op's results.
Status VerifyBranches(const OpContext& context, std::string_view arguments_constraint,
                      std::string_view same_constraint, std::string_view results_constraint) {
  const Operation& op = context.op();
  const std::vector<Type> first = TerminatorTypes(op.region(0));
  for (size_t r = 0; r < op.num_regions(); ++r) {
    if (op.region(r).block(0).num_arguments() != 0) {
      return context.Fail(arguments_constraint, "branch #", r, " must take no arguments, found ",
                          op.region(r).block(0).num_arguments());
    }
    std::vector<Type> returned = TerminatorTypes(op.region(r));
    if (!AllCompatible(returned, first)) {
      return context.Fail(same_constraint, "branch #", r, " returns ", TypesText(returned),
                          " but branch #0 returns ", TypesText(first));
    }
  }
  std::vector<Type> results = context.ResultTypes();
  if (!AllCompatible(results, first)) {
    return context.Fail(results_constraint, "results ", TypesText(results),
                        " must have the types the branches return ", TypesText(first));
  }
  return Status::Ok();
}

Status VerifyIf(const OpContext& context) {
  const Type& pred = context.operand(0);
  if (!IsRankedTensor(pred) || Rank(pred) != 0 || ClassOf(ElementOf(pred)) != kBoolClass) {
    return context.Fail("I1", "pred must be tensor<i1>, found ", TypeText(pred));
  }
  return VerifyBranches(context, "C1", "C2", "C3");
}

Status VerifyCase(const OpContext& context) {
  const Type& index = context.operand(0);
  if (!IsRankedTensor(index) || Rank(index) != 0 ||
      ElementOf(index) != Type::Element(ElementType::kS32)) {
    return context.Fail("I1", "index must be tensor<i32>, found ", TypeText(index));
  }
  if (context.op().num_regions() == 0) return context.Fail("C1", "expected at least one branch");
  return VerifyBranches(context, "C2", "C3", "C4");
}

constexpr uint8_t kTensorsWithBody = kTensors | kReturnTerminated;
constexpr FamilyRule kRules[] = {
    {OpCode::kReduce, VerifyReduce, kTensorsWithBody},
    {OpCode::kReduceWindow, VerifyReduceWindow, kTensorsWithBody},
    {OpCode::kSelectAndScatter, VerifySelectAndScatter, kTensorsWithBody},
    {OpCode::kSort, VerifySort, kTensorsWithBody},
    {OpCode::kMap, VerifyMap, kTensorsWithBody},
    {OpCode::kWhile, VerifyWhile, kReturnTerminated},
    {OpCode::kIf, VerifyIf, kReturnTerminated},
    {OpCode::kCase, VerifyCase, kReturnTerminated},
};

}  // namespace

std::vector<Type> TerminatorTypes(const Region& region) {
  std::vector<Type> types;
  for (const Value* value : region.block(0).back()->operands()) types.push_back(value->type());
  return types;
}

Status VerifyReducer(const OpContext& context, std::string_view constraint, const Region& body,
                     std::span<const Type> inputs, std::span<const Type> init_values,
                     std::span<const int64_t> allowed_dims, std::vector<Type>* accumulators) {
  const Block& block = body.block(0);
  const size_t count = inputs.size();
  if (block.num_arguments() != 2 * count) {
    return context.Fail(constraint, "the body must take ", 2 * count, " arguments, found ",
                        block.num_arguments());
  }
  std::vector<Type> returned = TerminatorTypes(body);
  if (returned.size() != count) {
    return context.Fail(constraint, "the body must return ", count, " values, found ",
                        returned.size());
  }
  for (size_t i = 0; i < count; ++i) {
    const Type& accumulator = returned[i];
    const Type& first = block.argument(i)->type();
    const Type& second = block.argument(count + i)->type();
    if (!IsRankedTensor(accumulator) || !IsRankedTensor(first) || !IsRankedTensor(second)) {
      return context.Fail(constraint, "the body must take and return tensors, found ",
                          TypesText(ArgumentTypes(block)), " -> ", TypesText(returned));
    }
    if (!TypesCompatible(accumulator, first)) {
      return context.Fail(constraint, "body argument #", i, " has type ", TypeText(first),
                          " but the body returns ", TypeText(accumulator), " for it");
    }
    const bool floats = ClassOf(ElementOf(accumulator)) == kFloatClass &&
                        ClassOf(ElementOf(second)) == kFloatClass;
    if (!ShapesCompatible(accumulator.dims(), second.dims()) ||
        (!floats && !SameElement(ElementOf(accumulator), ElementOf(second)))) {
      return context.Fail(constraint, "body argument #", count + i, " has type ", TypeText(second),
                          " but the body returns ", TypeText(accumulator), " for it");
    }
    if (!ShapesCompatible(init_values[i].dims(), accumulator.dims()) ||
        !IsPromotable(ElementOf(init_values[i]), ElementOf(accumulator), true)) {
      return context.Fail(constraint, "the body's result #", i, " ", TypeText(accumulator),
                          " does not fit init value #", i, " ", TypeText(init_values[i]));
    }
    if (!IsPromotable(ElementOf(inputs[i]), ElementOf(second), true)) {
      return context.Fail(constraint, "body argument #", count + i, " has element type ",
                          TypeText(ElementOf(second)), ", which input #", i, "'s ",
                          TypeText(ElementOf(inputs[i])), " does not promote to");
    }
    if (!FitsAllowedDims(second.dims(), allowed_dims)) {
      return context.Fail(constraint, "body argument #", count + i, " ", TypeText(second),
                          " must be a rank-0 tensor");
    }
    accumulators->push_back(accumulator);
  }
  return Status::Ok();
}

std::span<const FamilyRule> RegionOpRules() { return kRules; }

}  // namespace kiln::ir::verify_internal
