// Verifier rules for elementwise ops: unary and binary arithmetic (one table:
// allowed element classes and how the result type follows), compare,
// select, clamp, convert, bitcast_convert, reduce_precision, complex and the
// quantization ops.
#include <algorithm>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// The spec's operand names: unary ops take `operand`, binary `lhs`, `rhs`.
std::string_view OperandName(size_t count, size_t index) {
  if (count == 1) return "operand";
  return index == 0 ? "lhs" : "rhs";
}

}  // namespace

Status VerifyElementwise(const OpContext& context) {
  const ElementwiseDescription& spec = *DescribeOp(context.op().code()).elementwise;
  const size_t count = context.num_operands();
  static constexpr std::string_view kLabels[] = {"I1", "I2"};
  for (size_t i = 0; i < count; ++i) {
    KILN_RETURN_IF_ERROR(context.ExpectClasses(kLabels[i], OperandName(count, i),
                                               context.operand(i), spec.classes));
  }
  const Type& first = context.operand(0);
  const Type& result = context.result(0);
  if (spec.result == ElementwiseResult::kSame) {
    for (size_t i = 1; i < count; ++i) {
      if (!TypesCompatible(context.operand(i), first)) {
        return context.Fail("C1", "lhs has type ", TypeText(first), " but rhs has type ",
                            TypeText(context.operand(i)));
      }
    }
    if (!TypesCompatible(result, first)) {
      return context.Fail("C1", "result must have the operand type ", TypeText(first), ", found ",
                          TypeText(result));
    }
    return Status::Ok();
  }
  if (!ShapesCompatible(result.dims(), first.dims())) {
    return context.Fail("C1", "result must have the operand shape ", DimsText(first.dims()),
                        ", found ", TypeText(result));
  }
  if (spec.result == ElementwiseResult::kBool) {
    return context.ExpectClasses("", "result", result, kBoolClass);
  }
  const Type expected = RealPart(ElementOf(first));
  if (!SameElement(ElementOf(result), expected)) {
    return context.Fail("C2", "result must have element type ", TypeText(expected), ", found ",
                        TypeText(result));
  }
  return Status::Ok();
}

namespace {

Status VerifyComplex(const OpContext& context) {
  const Type& lhs = context.operand(0);
  if (!ComplexOf(ElementOf(lhs))) {
    return context.Fail("I1", "lhs must be a tensor of f32 or f64 elements, found ", TypeText(lhs));
  }
  if (!TypesCompatible(lhs, context.operand(1))) {
    return context.Fail("C1", "lhs has type ", TypeText(lhs), " but rhs has type ",
                        TypeText(context.operand(1)));
  }
  const Type& result = context.result(0);
  if (!ShapesCompatible(result.dims(), lhs.dims())) {
    return context.Fail("C2", "result must have shape ", DimsText(lhs.dims()), ", found ",
                        TypeText(result));
  }
  if (ElementOf(result) != ComplexOf(ElementOf(lhs))) {
    return context.Fail("C3", "result must have element type ", TypeText(ComplexOf(ElementOf(lhs))),
                        ", found ", TypeText(result));
  }
  return Status::Ok();
}

// compare_type (C3) as the element type of lhs requires.
bool CompareTypeFits(std::string_view compare_type, uint16_t element_class) {
  if (compare_type == "SIGNED") return element_class == kSignedClass;
  if (compare_type == "UNSIGNED") return element_class & (kUnsignedClass | kBoolClass);
  if (compare_type == "FLOAT") return element_class & (kFloatClass | kComplexClass);
  if (compare_type == "TOTALORDER") return element_class == kFloatClass;
  return false;
}

Status VerifyCompare(const OpContext& context) {
  const Type& lhs = context.operand(0);
  const Type& rhs = context.operand(1);
  if (!SameElement(ElementOf(lhs), ElementOf(rhs))) {
    return context.Fail("C1", "lhs has element type ", TypeText(ElementOf(lhs)),
                        " but rhs has element type ", TypeText(ElementOf(rhs)));
  }
  const Type& result = context.result(0);
  if (!ShapesCompatible(lhs.dims(), rhs.dims()) || !ShapesCompatible(lhs.dims(), result.dims())) {
    return context.Fail("C2", "lhs, rhs and result must have the same shape, found ", TypeText(lhs),
                        ", ", TypeText(rhs), " and ", TypeText(result));
  }
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", "result", result, kBoolClass));
  KILN_ASSIGN_OR_RETURN(std::string_view direction, context.Enum("comparison_direction"));
  static constexpr std::string_view kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  if (std::find(std::begin(kDirections), std::end(kDirections), direction) ==
      std::end(kDirections)) {
    return context.Fail("I3", "comparison_direction must be EQ, NE, GE, GT, LE or LT, found ",
                        direction);
  }
  KILN_ASSIGN_OR_RETURN(std::string_view compare_type, context.EnumOr("compare_type", "NOTYPE"));
  if (compare_type == "NOTYPE") return Status::Ok();
  static constexpr std::string_view kTypes[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  if (std::find(std::begin(kTypes), std::end(kTypes), compare_type) == std::end(kTypes)) {
    return context.Fail("I4", "compare_type must be FLOAT, TOTALORDER, SIGNED or UNSIGNED, found ",
                        compare_type);
  }
  const uint16_t element_class = ClassOf(ElementOf(lhs));
  if ((element_class & kQuantClasses) || CompareTypeFits(compare_type, element_class)) {
    return Status::Ok();
  }
  std::string_view expected = element_class == kSignedClass    ? "SIGNED"
                              : element_class == kFloatClass   ? "FLOAT or TOTALORDER"
                              : element_class == kComplexClass ? "FLOAT"
                                                               : "UNSIGNED";
  return context.Fail("C3", "compare_type for ", TypeText(ElementOf(lhs)), " operands must be ",
                      expected, ", found ", compare_type);
}

Status VerifySelect(const OpContext& context) {
  const Type& pred = context.operand(0);
  const Type& on_true = context.operand(1);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "pred", pred, kBoolClass));
  if (Rank(pred) != 0 && !ShapesCompatible(pred.dims(), on_true.dims())) {
    return context.Fail("C1", "pred must be a rank-0 tensor or have the shape of on_true ",
                        DimsText(on_true.dims()), ", found ", TypeText(pred));
  }
  if (!TypesCompatible(on_true, context.operand(2))) {
    return context.Fail("C2", "on_true has type ", TypeText(on_true), " but on_false has type ",
                        TypeText(context.operand(2)));
  }
  if (!TypesCompatible(on_true, context.result(0))) {
    return context.Fail("C2", "result must have the type of on_true ", TypeText(on_true),
                        ", found ", TypeText(context.result(0)));
  }
  return Status::Ok();
}

Status VerifyClamp(const OpContext& context) {
  const Type& operand = context.operand(1);
  const char* const kNames[] = {"min", "operand", "max"};
  for (size_t i : {size_t{0}, size_t{2}}) {
    const Type& bound = context.operand(i);
    if (Rank(bound) != 0 && !ShapesCompatible(bound.dims(), operand.dims())) {
      return context.Fail(i == 0 ? "C1" : "C2", kNames[i],
                          " must be a rank-0 tensor or have the shape of operand ",
                          DimsText(operand.dims()), ", found ", TypeText(bound));
    }
    if (!SameElement(ElementOf(bound), ElementOf(operand))) {
      return context.Fail("C3", kNames[i], " has element type ", TypeText(ElementOf(bound)),
                          " but operand has element type ", TypeText(ElementOf(operand)));
    }
  }
  if (!TypesCompatible(operand, context.result(0))) {
    return context.Fail("C4", "result must have the operand type ", TypeText(operand), ", found ",
                        TypeText(context.result(0)));
  }
  return Status::Ok();
}

Status VerifyConvert(const OpContext& context) {
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "operand", context.operand(0),
                                             kAnyTensor & ~kPerTensorQuantClass));
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", "result", context.result(0),
                                             kAnyTensor & ~kPerTensorQuantClass));
  if (!ShapesCompatible(context.operand(0).dims(), context.result(0).dims())) {
    return context.Fail("C1", "result must have the operand shape ",
                        DimsText(context.operand(0).dims()), ", found ",
                        TypeText(context.result(0)));
  }
  return Status::Ok();
}

Status VerifyBitcastConvert(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  const bool operand_complex = ClassOf(ElementOf(operand)) == kComplexClass;
  if (operand_complex != (ClassOf(ElementOf(result)) == kComplexClass)) {
    return context.Fail("C2", "cannot convert between real and complex types: ", TypeText(operand),
                        " to ", TypeText(result));
  }
  const int64_t operand_bits = BitWidth(ElementOf(operand));
  const int64_t result_bits = BitWidth(ElementOf(result));
  const bool narrowing = result_bits < operand_bits;
  const Type& small = narrowing ? result : operand;  // the type with the narrower element
  const Type& large = narrowing ? operand : result;
  const int64_t small_bits = std::min(operand_bits, result_bits);
  const int64_t large_bits = std::max(operand_bits, result_bits);
  std::span<const int64_t> prefix = small.dims();
  if (operand_bits != result_bits) {
    if (Rank(small) != Rank(large) + 1) {
      return context.Fail("C1", "converting ", TypeText(operand), " to ", TypeText(result),
                          " needs the type with the narrower element to have one more "
                          "dimension");
    }
    const int64_t last = small.dims().back();
    if (last != kDynamic && last * small_bits != large_bits) {
      return context.Fail("C1", "converting ", TypeText(operand), " to ", TypeText(result),
                          " needs a last dimension of ",
                          large_bits / std::max<int64_t>(small_bits, 1), ", found ", last);
    }
    prefix = prefix.first(prefix.size() - 1);
  }
  if (!ShapesCompatible(prefix, large.dims())) {
    return context.Fail("C1",
                        "operand and result shapes must match (except the last "
                        "dimension of the narrower type), found ",
                        TypeText(operand), " and ", TypeText(result));
  }
  return Status::Ok();
}

Status VerifyReducePrecision(const OpContext& context) {
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "operand", context.operand(0), kFpQ));
  if (!TypesCompatible(context.operand(0), context.result(0))) {
    return context.Fail("C1", "output must have the operand type ", TypeText(context.operand(0)),
                        ", found ", TypeText(context.result(0)));
  }
  KILN_ASSIGN_OR_RETURN(int64_t exponent_bits, context.Int("exponent_bits"));
  if (exponent_bits < 1) {
    return context.Fail("C2", "exponent_bits must be >= 1, found ", exponent_bits);
  }
  KILN_ASSIGN_OR_RETURN(int64_t mantissa_bits, context.Int("mantissa_bits"));
  if (mantissa_bits < 0) {
    return context.Fail("C3", "mantissa_bits must be >= 0, found ", mantissa_bits);
  }
  return Status::Ok();
}

Status VerifyUniformQuantize(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "operand", operand,
                                             kFloatClass | kQuantClasses));
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", "result", result, kQuantClasses));
  if (!ShapesCompatible(operand.dims(), result.dims())) {
    return context.Fail("C1", "result must have the operand shape ", DimsText(operand.dims()),
                        ", found ", TypeText(result));
  }
  const ElementType expressed = ClassOf(ElementOf(operand)) == kFloatClass
                                    ? ElementOf(operand).element_type()
                                    : GetQuantizedParams(ElementOf(operand)).expressed_type;
  if (GetQuantizedParams(ElementOf(result)).expressed_type != expressed) {
    return context.Fail("C2", "result's expressed type must be ",
                        TypeText(Type::Element(expressed)), ", found ", TypeText(result));
  }
  return Status::Ok();
}

Status VerifyUniformDequantize(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "operand", operand, kQuantClasses));
  if (!ShapesCompatible(operand.dims(), result.dims())) {
    return context.Fail("C1", "result must have the operand shape ", DimsText(operand.dims()),
                        ", found ", TypeText(result));
  }
  const Type expressed = Type::Element(GetQuantizedParams(ElementOf(operand)).expressed_type);
  if (ElementOf(result) != expressed) {
    return context.Fail("C2", "result must have element type ", TypeText(expressed), ", found ",
                        TypeText(result));
  }
  return Status::Ok();
}

// The elementwise ops of ops.def get their rules from their rows (verifier.cc).
constexpr FamilyRule kRules[] = {
    {OpCode::kComplex, VerifyComplex, kTensors},
    {OpCode::kCompare, VerifyCompare, kTensors},
    {OpCode::kSelect, VerifySelect, kTensors},
    {OpCode::kClamp, VerifyClamp, kTensors},
    {OpCode::kConvert, VerifyConvert, kTensors},
    {OpCode::kBitcastConvert, VerifyBitcastConvert, kTensors},
    {OpCode::kReducePrecision, VerifyReducePrecision, kTensors},
    {OpCode::kUniformQuantize, VerifyUniformQuantize, kTensors},
    {OpCode::kUniformDequantize, VerifyUniformDequantize, kTensors},
};

}  // namespace

std::span<const FamilyRule> ElementwiseRules() { return kRules; }

}  // namespace kiln::ir::verify_internal
