// Verifier rules for the chlo ops: what `jax.jit(f).lower(x).as_text()`
// prints for special functions, top_k and the broadcasting binary ops.
// Portable artifacts carry the same ops as stablehlo.composite with a
// decomposition, so these rules only see text programs. CHLO has no spec;
// the rules follow the op definitions of upstream's ChloOps.td, leniently
// where they only restrict element types further.
#include <algorithm>
#include <numeric>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// Unary and two-operand ops whose result has the operands' type.
Status VerifySameType(const OpContext& context) {
  // Elementwise rows name their classes; _asin_acos_kernel (no kernel) is
  // floating-point or complex.
  const auto& elementwise = DescribeOp(context.op().code()).elementwise;
  const uint16_t classes = elementwise ? elementwise->classes : kFpComplex;
  const Type& first = context.operand(0);
  for (size_t i = 0; i < context.num_operands(); ++i) {
    KILN_RETURN_IF_ERROR(context.ExpectClasses("", StrCat("operand #", i), context.operand(i),
                                               classes));
    if (!TypesCompatible(context.operand(i), first)) {
      return context.Fail("", "operand #", i, " must have the type of operand #0 ", TypeText(first),
                          ", found ", TypeText(context.operand(i)));
    }
  }
  if (!TypesCompatible(context.result(0), first)) {
    return context.Fail("", "result must have the operand type ", TypeText(first), ", found ",
                        TypeText(context.result(0)));
  }
  return Status::Ok();
}

// is_inf, is_neg_inf, is_pos_inf: float -> i1 of the same shape.
Status VerifyFloatPredicate(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", "operand", operand,
                                             DescribeOp(context.op().code()).elementwise->classes));
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", "result", result, kBoolClass));
  if (!ShapesCompatible(result.dims(), operand.dims())) {
    return context.Fail("", "result must have the operand shape ", DimsText(operand.dims()),
                        ", found ", TypeText(result));
  }
  return Status::Ok();
}

// The shape two operands broadcast to, numpy style (trailing dimensions
// aligned; a size 1 stretches); an error names the first clash.
StatusOr<std::vector<int64_t>> BroadcastShape(const OpContext& context, std::span<const int64_t> a,
                                              std::span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x == y || y == 1) {
      shape[i] = x;
    } else if (x == 1) {
      shape[i] = y;
    } else if (x == kDynamic || y == kDynamic) {
      shape[i] = kDynamic;
    } else {
      return context.Fail("", "operand shapes ", DimsText(a), " and ", DimsText(b),
                          " do not broadcast: dimension ", i, " has sizes ", x, " and ", y);
    }
  }
  return shape;
}

// chlo.broadcast_*: lhs and rhs of one element type, broadcast together
// (numpy style unless broadcast_dimensions maps the lower-ranked one).
Status VerifyBroadcastBinary(const OpContext& context) {
  const Type& lhs = context.operand(0);
  const Type& rhs = context.operand(1);
  const Type& result = context.result(0);
  if (!SameElement(ElementOf(lhs), ElementOf(rhs))) {
    return context.Fail("", "lhs and rhs must have one element type, found ", TypeText(lhs),
                        " and ", TypeText(rhs));
  }
  Type expected = ElementOf(lhs);
  if (context.op().code() == OpCode::kChloBroadcastCompare) {
    expected = Type::Element(ElementType::kPred);
  } else if (context.op().code() == OpCode::kChloBroadcastComplex) {
    expected = ComplexOf(ElementOf(lhs));
    if (!expected) {
      return context.Fail("", "lhs must be f32 or f64, found ", TypeText(lhs));
    }
  }
  if (!SameElement(ElementOf(result), expected)) {
    return context.Fail("", "result must have element type ", TypeText(expected), ", found ",
                        TypeText(result));
  }
  KILN_ASSIGN_OR_RETURN(IntList mapping, context.IntsOr("broadcast_dimensions"));
  if (mapping.present) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                        BroadcastShape(context, lhs.dims(), rhs.dims()));
  return context.ExpectResultShape("", 0, shape);
}

// chlo.broadcast_select: pred, on_true, on_false broadcast together.
Status VerifyBroadcastSelect(const OpContext& context) {
  const Type& pred = context.operand(0);
  const Type& on_true = context.operand(1);
  const Type& on_false = context.operand(2);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", "pred", pred, kBoolClass));
  if (!SameElement(ElementOf(on_true), ElementOf(on_false)) ||
      !SameElement(ElementOf(context.result(0)), ElementOf(on_true))) {
    return context.Fail("",
                        "on_true, on_false and the result must have one element type, "
                        "found ",
                        TypeText(on_true), ", ", TypeText(on_false), " and ",
                        TypeText(context.result(0)));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                        BroadcastShape(context, pred.dims(), on_true.dims()));
  KILN_ASSIGN_OR_RETURN(shape, BroadcastShape(context, shape, on_false.dims()));
  return context.ExpectResultShape("", 0, shape);
}

// chlo.top_k: the k largest along the last dimension, as values (the
// operand's element) and indices (i32).
Status VerifyTopK(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_ASSIGN_OR_RETURN(int64_t k, context.Int("k"));
  if (Rank(operand) < 1) {
    return context.Fail("", "operand must have rank >= 1, found ", TypeText(operand));
  }
  const int64_t last = operand.dims().back();
  if (k < 0 || (last != kDynamic && k > last)) {
    return context.Fail("", "k must be in [0, ", DimText(last), "], found ", k);
  }
  std::vector<int64_t> shape = operand.dims();
  shape.back() = k;
  if (!SameElement(ElementOf(context.result(0)), ElementOf(operand))) {
    return context.Fail("", "values must have the operand's element type ",
                        TypeText(ElementOf(operand)), ", found ", TypeText(context.result(0)));
  }
  if (ElementOf(context.result(1)) != Type::Element(ElementType::kS32)) {
    return context.Fail("", "indices must have element type i32, found ",
                        TypeText(context.result(1)));
  }
  KILN_RETURN_IF_ERROR(context.ExpectResultShape("", 0, shape));
  return context.ExpectResultShape("", 1, shape);
}

// chlo.scan (ChloOps.cpp ScanOp::verify): inputs are sliced along
// `dimension`, the body takes one slice of each and the carries and returns
// one slice of each stacked output and the next carries.
Status VerifyScan(const OpContext& context) {
  KILN_ASSIGN_OR_RETURN(IntList operand_segments, context.Ints("operandSegmentSizes"));
  const std::span<const int64_t> segments = operand_segments.values;
  if (segments.size() != 2 || segments[0] < 0 || segments[1] < 0 ||
      static_cast<size_t>(segments[0] + segments[1]) != context.num_operands()) {
    return context.Fail("", "operandSegmentSizes must be [inputs, inits] summing to the ",
                        context.num_operands(), " operands, found ", segments.size(),
                        " entries summing to ",
                        std::accumulate(segments.begin(), segments.end(), int64_t{0}));
  }
  const auto inputs = static_cast<size_t>(segments[0]);
  const auto carries = static_cast<size_t>(segments[1]);
  if (context.num_results() < carries) {
    return context.Fail("", "expected at least ", carries, " results (one per init), found ",
                        context.num_results());
  }
  const size_t outputs = context.num_results() - carries;
  if (inputs == 0 && outputs == 0) {
    return context.Fail("", "at least one of inputs or outputs must be present");
  }
  KILN_ASSIGN_OR_RETURN(int64_t dimension, context.Int("dimension"));
  int64_t length = kDynamic;
  for (size_t i = 0; i < inputs; ++i) {
    const Type& input = context.operand(i);
    if (dimension < 0 || dimension >= Rank(input)) {
      return context.Fail("", "scan dimension ", dimension, " is out of bounds for input #", i, " ",
                          TypeText(input));
    }
    const int64_t size = input.dims()[static_cast<size_t>(dimension)];
    if (size != kDynamic && length != kDynamic && size != length) {
      return context.Fail("", "input #", i, " has ", size, " elements along the scan dimension, ",
                          "expected ", length);
    }
    if (size != kDynamic) length = size;
  }
  const Block& body = context.op().region(0).block(0);
  if (body.num_arguments() != context.num_operands()) {
    return context.Fail("", "expects ", context.num_operands(), " arguments in the body, found ",
                        body.num_arguments());
  }
  const auto sliced = [dimension](const Type& type) {
    std::vector<int64_t> dims = type.dims();
    dims.erase(dims.begin() + dimension);
    return Type::Tensor(type.element(), std::move(dims));
  };
  for (size_t i = 0; i < context.num_operands(); ++i) {
    const Type expected = i < inputs ? sliced(context.operand(i)) : context.operand(i);
    if (!TypesCompatible(expected, body.argument(i)->type())) {
      return context.Fail("", "body argument #", i, " must be ", TypeText(expected), ", found ",
                          TypeText(body.argument(i)->type()));
    }
  }
  const std::vector<Type> returned = TerminatorTypes(context.op().region(0));
  if (returned.size() != context.num_results()) {
    return context.Fail("", "the body must return ", context.num_results(), " values, found ",
                        returned.size());
  }
  for (size_t i = 0; i < context.num_results(); ++i) {
    const Type& result = context.result(i);
    if (i < outputs) {
      if (dimension < 0 || dimension >= Rank(result) ||
          (length != kDynamic && result.dims()[static_cast<size_t>(dimension)] != kDynamic &&
           result.dims()[static_cast<size_t>(dimension)] != length) ||
          !TypesCompatible(sliced(result), returned[i])) {
        return context.Fail("", "output #", i, " ", TypeText(result), " must stack the body's ",
                            TypeText(returned[i]), " along dimension ", dimension);
      }
    } else if (!TypesCompatible(result, returned[i]) ||
               !TypesCompatible(result, context.operand(inputs + i - outputs))) {
      return context.Fail("", "carry result #", i - outputs, " ", TypeText(result),
                          " must have its init's type ",
                          TypeText(context.operand(inputs + i - outputs)), " and the body's ",
                          TypeText(returned[i]));
    }
  }
  return Status::Ok();
}

// chlo.constant_like: a splat of `value` shaped like the operand.
Status VerifyConstantLike(const OpContext& context) {
  if (!ShapesCompatible(context.result(0).dims(), context.operand(0).dims())) {
    return context.Fail("", "result must have the operand shape ",
                        DimsText(context.operand(0).dims()), ", found ",
                        TypeText(context.result(0)));
  }
  return Status::Ok();
}

constexpr FamilyRule Pair(OpCode code, VerifyFn verify) { return {code, verify, kTensors}; }

// The elementwise chlo ops get their rules from their rows (verifier.cc).
constexpr FamilyRule kRules[] = {
    {OpCode::kChloAsinAcosKernel, VerifySameType, kTensors},
    Pair(OpCode::kChloBroadcastAdd, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastAtan2, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastDivide, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastMaximum, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastMinimum, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastMultiply, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastNextAfter, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastPolygamma, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastPower, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastRemainder, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastShiftLeft, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastShiftRightArithmetic, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastShiftRightLogical, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastSubtract, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastZeta, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastAnd, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastOr, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastXor, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastComplex, VerifyBroadcastBinary),
    Pair(OpCode::kChloBroadcastCompare, VerifyBroadcastBinary),
    {OpCode::kChloBroadcastSelect, VerifyBroadcastSelect, kTensors},
    {OpCode::kChloTopK, VerifyTopK, kTensors},
    {OpCode::kChloConstantLike, VerifyConstantLike, kTensors},
    {OpCode::kChloRaggedDot, nullptr, kTensors},
    {OpCode::kChloScan, VerifyScan, kTensors | kReturnTerminated},
};

}  // namespace

std::span<const FamilyRule> ChloRules() { return kRules; }

Status VerifyChloElementwise(const OpContext& context) {
  const ElementwiseDescription& spec = *DescribeOp(context.op().code()).elementwise;
  return spec.result == ElementwiseResult::kBool ? VerifyFloatPredicate(context)
                                                 : VerifySameType(context);
}

}  // namespace kiln::ir::verify_internal
