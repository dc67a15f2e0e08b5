// Verifier rules for ops that move data between shapes: broadcast_in_dim,
// reshape, transpose, reverse, slice, dynamic_slice, dynamic_update_slice,
// concatenate, pad, iota, constant and the dynamic-shape ops.
#include <algorithm>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// element_type(result) = element_type(operand), for the many ops whose
// constraint says so.
Status ExpectSameElement(const OpContext& context, std::string_view constraint,
                         std::string_view what, const Type& type, const Type& expected) {
  if (SameElement(ElementOf(type), ElementOf(expected))) return Status::Ok();
  return context.Fail(constraint, what, " must have element type ", TypeText(ElementOf(expected)),
                      ", found ", TypeText(type));
}

// `list` has one entry per dimension of `what` (rank `rank`).
Status ExpectSize(const OpContext& context, std::string_view constraint, std::string_view list,
                  size_t size, int64_t rank, std::string_view what) {
  if (static_cast<int64_t>(size) == rank) return Status::Ok();
  return context.Fail(constraint, list, " has ", size, " entries, expected one per dimension of ",
                      what, " (", rank, ")");
}

// Start indices of dynamic_slice / dynamic_update_slice: rank-0 integer
// tensors of one type.
Status VerifyStartIndices(const OpContext& context, size_t first,
                          std::string_view same_constraint) {
  for (size_t i = first; i < context.num_operands(); ++i) {
    const Type& index = context.operand(i);
    if (!(ClassOf(ElementOf(index)) & kIntegerClasses) || Rank(index) != 0) {
      return context.Fail("I2", "start index #", i - first,
                          " must be a rank-0 tensor of integers, found ", TypeText(index));
    }
    if (index != context.operand(first)) {
      return context.Fail(same_constraint, "start indices must have one type, found ",
                          TypeText(context.operand(first)), " and ", TypeText(index));
    }
  }
  return Status::Ok();
}

// broadcast_in_dim C1-C5, shared with dynamic_broadcast_in_dim.
Status VerifyBroadcastInDim(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", result, operand));
  KILN_ASSIGN_OR_RETURN(IntList dims, context.Ints("broadcast_dimensions"));
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "broadcast_dimensions", dims.size(), Rank(operand),
                                  "operand"));
  KILN_RETURN_IF_ERROR(context.ExpectDimsInRange("C3", "C4", "broadcast_dimensions", dims.span(),
                                                 Rank(result)));
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t size = operand.dims()[d];
    const int64_t target = result.dims()[static_cast<size_t>(dims[d])];
    if (size != 1 && !DimsCompatible(size, target)) {
      return context.Fail("C5", "operand dimension ", d, " has size ", size,
                          ", expected 1 or the size ", DimText(target), " of result dimension ",
                          dims[d]);
    }
  }
  return Status::Ok();
}

Status VerifyBroadcast(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "", "result", context.result(0), operand));
  KILN_ASSIGN_OR_RETURN(IntList sizes, context.Ints("broadcast_sizes"));
  std::vector<int64_t> expected = sizes.ToVector();
  expected.insert(expected.end(), operand.dims().begin(), operand.dims().end());
  return context.ExpectResultShape("", 0, expected);
}

Status VerifyReshape(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", result, operand));
  if (!operand.HasStaticShape() || !result.HasStaticShape()) return Status::Ok();
  std::optional<int64_t> from = ElementCount(operand.dims());
  std::optional<int64_t> to = ElementCount(result.dims());
  if (!from || !to || *from != *to) {
    return context.Fail("C2", "operand ", TypeText(operand), " has ",
                        from ? std::to_string(*from) : "too many", " elements but result ",
                        TypeText(result), " has ", to ? std::to_string(*to) : "too many");
  }
  return Status::Ok();
}

Status VerifyTranspose(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", context.result(0), operand));
  KILN_ASSIGN_OR_RETURN(IntList permutation, context.Ints("permutation"));
  if (static_cast<int64_t>(permutation.size()) != Rank(operand)) {
    return context.Fail("C2", "permutation ", DimsText(permutation.span()),
                        " must be a permutation of the ", Rank(operand),
                        " dimensions of the operand");
  }
  KILN_RETURN_IF_ERROR(context.ExpectDimsInRange("C2", "C2", "permutation", permutation.span(),
                                                 Rank(operand)));
  std::vector<int64_t> expected;
  for (int64_t dim : permutation) expected.push_back(operand.dims()[static_cast<size_t>(dim)]);
  return context.ExpectResultShape("C3", 0, expected);
}

Status VerifyReverse(const OpContext& context) {
  const Type& operand = context.operand(0);
  if (!TypesCompatible(operand, context.result(0))) {
    return context.Fail("C1", "result must have the operand type ", TypeText(operand), ", found ",
                        TypeText(context.result(0)));
  }
  KILN_ASSIGN_OR_RETURN(IntList dims, context.Ints("dimensions"));
  return context.ExpectDimsInRange("C3", "C2", "dimensions", dims.span(), Rank(operand));
}

Status VerifySlice(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", context.result(0), operand));
  KILN_ASSIGN_OR_RETURN(IntList start, context.Ints("start_indices"));
  KILN_ASSIGN_OR_RETURN(IntList limit, context.Ints("limit_indices"));
  KILN_ASSIGN_OR_RETURN(IntList strides, context.Ints("strides"));
  const int64_t rank = Rank(operand);
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "start_indices", start.size(), rank, "operand"));
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "limit_indices", limit.size(), rank, "operand"));
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "strides", strides.size(), rank, "operand"));
  std::vector<int64_t> expected;
  for (size_t d = 0; d < start.size(); ++d) {
    const int64_t size = operand.dims()[d];
    if (start[d] < 0 || start[d] > limit[d] || (size != kDynamic && limit[d] > size)) {
      return context.Fail("C3", "dimension ", d, " slices [", start[d], ", ", limit[d],
                          "), expected 0 <= start <= limit <= ", DimText(size));
    }
    if (strides[d] <= 0) {
      return context.Fail("C4", "stride of dimension ", d, " must be > 0, found ", strides[d]);
    }
    const int64_t span = limit[d] - start[d];
    expected.push_back(span / strides[d] + (span % strides[d] != 0 ? 1 : 0));
  }
  return context.ExpectResultShape("C5", 0, expected);
}

Status VerifyDynamicSlice(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", context.result(0), operand));
  KILN_ASSIGN_OR_RETURN(IntList sizes, context.Ints("slice_sizes"));
  const int64_t rank = Rank(operand);
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "slice_sizes", sizes.size(), rank, "operand"));
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "the start indices", context.num_operands() - 1,
                                  rank, "operand"));
  KILN_RETURN_IF_ERROR(VerifyStartIndices(context, 1, "C3"));
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t size = operand.dims()[d];
    if (sizes[d] < 0 || (size != kDynamic && sizes[d] > size)) {
      return context.Fail("C4", "slice size ", sizes[d], " of dimension ", d, " must be in [0, ",
                          DimText(size), "]");
    }
  }
  return context.ExpectResultShape("C5", 0, sizes.span());
}

Status VerifyDynamicUpdateSlice(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& update = context.operand(1);
  if (!TypesCompatible(operand, context.result(0))) {
    return context.Fail("C1", "result must have the operand type ", TypeText(operand), ", found ",
                        TypeText(context.result(0)));
  }
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C2", "update", update, operand));
  if (Rank(update) != Rank(operand)) {
    return context.Fail("C3", "update ", TypeText(update), " must have the rank of operand ",
                        TypeText(operand));
  }
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C4", "the start indices", context.num_operands() - 2,
                                  Rank(operand), "operand"));
  KILN_RETURN_IF_ERROR(VerifyStartIndices(context, 2, "C5"));
  for (size_t d = 0; d < update.dims().size(); ++d) {
    const int64_t size = update.dims()[d];
    const int64_t limit = operand.dims()[d];
    if (size != kDynamic && limit != kDynamic && size > limit) {
      return context.Fail("C6", "update dimension ", d, " has size ", size,
                          ", larger than the operand's ", limit);
    }
  }
  return Status::Ok();
}

Status VerifyConcatenate(const OpContext& context) {
  const Type& first = context.operand(0);
  KILN_ASSIGN_OR_RETURN(int64_t dimension, context.Int("dimension"));
  const int64_t rank = Rank(first);
  if (dimension < 0 || dimension >= rank) {
    return context.Fail("C4", "dimension ", dimension, " must be in [0, ", rank,
                        ") for inputs of rank ", rank);
  }
  std::vector<int64_t> expected = first.dims();
  expected[static_cast<size_t>(dimension)] = 0;
  for (size_t i = 0; i < context.num_operands(); ++i) {
    const Type& input = context.operand(i);
    if (!SameElement(ElementOf(input), ElementOf(first))) {
      return context.Fail("C1", "input #", i, " has element type ", TypeText(ElementOf(input)),
                          " but input #0 has ", TypeText(ElementOf(first)));
    }
    if (Rank(input) != rank) {
      return context.Fail("C2", "input #", i, " ", TypeText(input), " must have rank ", rank);
    }
    for (int64_t d = 0; d < rank; ++d) {
      const size_t index = static_cast<size_t>(d);
      if (d == dimension) {
        std::optional<int64_t> sum = CheckedAdd(expected[index], input.dims()[index]);
        expected[index] = expected[index] == kDynamic || input.dims()[index] == kDynamic || !sum
                              ? kDynamic
                              : *sum;
      } else if (!DimsCompatible(input.dims()[index], first.dims()[index])) {
        return context.Fail("C2", "input #", i, " ", TypeText(input), " must match input #0 ",
                            TypeText(first), " in every dimension but ", dimension);
      }
    }
  }
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C5", "result", context.result(0), first));
  return context.ExpectResultShape("C6", 0, expected);
}

Status VerifyPad(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& padding_value = context.operand(1);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "padding_value", padding_value, operand));
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", context.result(0), operand));
  KILN_RETURN_IF_ERROR(context.ExpectScalar("I2", "padding_value", padding_value));
  KILN_ASSIGN_OR_RETURN(IntList low, context.Ints("edge_padding_low"));
  KILN_ASSIGN_OR_RETURN(IntList high, context.Ints("edge_padding_high"));
  KILN_ASSIGN_OR_RETURN(IntList interior, context.Ints("interior_padding"));
  const int64_t rank = Rank(operand);
  const std::string_view kOperand = "operand";
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "edge_padding_low", low.size(), rank, kOperand));
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "edge_padding_high", high.size(), rank, kOperand));
  KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", "interior_padding", interior.size(), rank,
                                  kOperand));
  std::vector<int64_t> expected;
  for (size_t d = 0; d < low.size(); ++d) {
    if (interior[d] < 0) {
      return context.Fail("C3", "interior_padding of dimension ", d, " must be >= 0, found ",
                          interior[d]);
    }
    const int64_t size = operand.dims()[d];
    if (size == kDynamic) {
      expected.push_back(kDynamic);
      continue;
    }
    std::optional<int64_t> padded = CheckedMul(std::max<int64_t>(size - 1, 0), interior[d]);
    if (padded) padded = CheckedAdd(*padded, size);
    if (padded) padded = CheckedAdd(*padded, low[d]);
    if (padded) padded = CheckedAdd(*padded, high[d]);
    if (!padded || *padded < 0) {
      return context.Fail("C4", "padding dimension ", d, " of size ", size, " by (", low[d], ", ",
                          high[d], ", ", interior[d], ") gives a negative or too large size");
    }
    expected.push_back(*padded);
  }
  return context.ExpectResultShape("C4", 0, expected);
}

Status VerifyIota(const OpContext& context) {
  const Type& output = context.result(0);
  KILN_RETURN_IF_ERROR(context.ExpectClasses(
      "", "output", output, kIntegerClasses | kFloatClass | kComplexClass | kPerTensorQuantClass));
  KILN_ASSIGN_OR_RETURN(int64_t dimension, context.Int("iota_dimension"));
  if (dimension < 0 || dimension >= Rank(output)) {
    return context.Fail("C1", "iota_dimension ", dimension, " must be in [0, ", Rank(output),
                        ") for output ", TypeText(output));
  }
  return Status::Ok();
}

Status VerifyConstant(const OpContext& context) {
  Attribute value = context.op().GetAttr("value");
  if (!value.Is(AttrKind::kDenseElements)) {
    return context.Fail("", "attribute 'value' must be dense elements");
  }
  const Type& output = context.result(0);
  Type expected = output;  // a quantized constant holds its storage values
  if (HasKind(ElementOf(output), TypeKind::kQuantized)) {
    expected = Type::Tensor(Type::Element(GetQuantizedParams(ElementOf(output)).storage_type),
                            output.dims());
  }
  const Type& type = value->type;
  if (!IsRankedTensor(type) || ElementOf(type) != ElementOf(expected) ||
      type.dims() != expected.dims()) {
    return context.Fail("C1", "value has type ", TypeText(type), " but output has type ",
                        TypeText(output));
  }
  if (!HasKind(ElementOf(type), TypeKind::kElement) || !type.HasStaticShape()) return Status::Ok();
  const size_t bytes = GetElementTypeInfo(ElementOf(type).element_type()).storage_bytes;
  std::optional<int64_t> count = ElementCount(type.dims());
  if (!count) return context.Fail("C1", "value of type ", TypeText(type), " is too large");
  const uint64_t expected_bytes = value->splat ? bytes : bytes * static_cast<uint64_t>(*count);
  if (value->data.size() != expected_bytes) {
    return context.Fail("C1", "value of type ", TypeText(type), " holds ", value->data.size(),
                        " bytes, expected ", expected_bytes);
  }
  return Status::Ok();
}

Status VerifyGetDimensionSize(const OpContext& context) {
  KILN_ASSIGN_OR_RETURN(int64_t dimension, context.Int("dimension"));
  if (dimension < 0 || dimension >= Rank(context.operand(0))) {
    return context.Fail("C1", "dimension ", dimension, " must be in [0, ", Rank(context.operand(0)),
                        ")");
  }
  const Type& result = context.result(0);
  if (Rank(result) != 0 || ElementOf(result) != Type::Element(ElementType::kS32)) {
    return context.Fail("", "result must be tensor<i32>, found ", TypeText(result));
  }
  return Status::Ok();
}

Status VerifySetDimensionSize(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_RETURN_IF_ERROR(context.ExpectScalar("", "size", context.operand(1)));
  KILN_ASSIGN_OR_RETURN(int64_t dimension, context.Int("dimension"));
  if (dimension < 0 || dimension >= Rank(operand)) {
    return context.Fail("", "dimension ", dimension, " must be in [0, ", Rank(operand), ")");
  }
  std::vector<int64_t> expected = operand.dims();
  expected[static_cast<size_t>(dimension)] = kDynamic;
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "", "result", context.result(0), operand));
  return context.ExpectResultShape("", 0, expected);
}

// A 1-D integer shape operand with a static size: the rank it describes.
StatusOr<int64_t> ShapeOperandSize(const OpContext& context, size_t index, std::string_view what) {
  const Type& shape = context.operand(index);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", what, shape, kIntegerClasses | kIndexClass));
  if (Rank(shape) != 1 || shape.dims()[0] == kDynamic) {
    return context.Fail("", what, " must be a 1-dimensional tensor of static size, found ",
                        TypeText(shape));
  }
  return shape.dims()[0];
}

Status VerifyDynamicReshape(const OpContext& context) {
  const Type& result = context.result(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", result, context.operand(0)));
  KILN_ASSIGN_OR_RETURN(int64_t size, ShapeOperandSize(context, 1, "output_shape"));
  if (size != Rank(result)) {
    return context.Fail("C4", "output_shape has ", size, " entries but result ", TypeText(result),
                        " has rank ", Rank(result));
  }
  return Status::Ok();
}

Status VerifyDynamicBroadcastInDim(const OpContext& context) {
  KILN_RETURN_IF_ERROR(VerifyBroadcastInDim(context));
  const Type& result = context.result(0);
  KILN_ASSIGN_OR_RETURN(int64_t size, ShapeOperandSize(context, 1, "output_dimensions"));
  if (size != Rank(result)) {
    return context.Fail("C7", "output_dimensions has ", size, " entries but result ",
                        TypeText(result), " has rank ", Rank(result));
  }
  return Status::Ok();
}

Status VerifyDynamicIota(const OpContext& context) {
  KILN_ASSIGN_OR_RETURN(int64_t size, ShapeOperandSize(context, 0, "output_shape"));
  KILN_ASSIGN_OR_RETURN(int64_t dimension, context.Int("iota_dimension"));
  if (dimension < 0 || dimension >= size) {
    return context.Fail("C1", "iota_dimension ", dimension, " must be in [0, ", size, ")");
  }
  if (Rank(context.result(0)) != size) {
    return context.Fail("C2", "result ", TypeText(context.result(0)), " must have rank ", size);
  }
  return Status::Ok();
}

Status VerifyDynamicPad(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "padding_value", context.operand(1),
                                         operand));
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "C1", "result", context.result(0), operand));
  static constexpr std::string_view kNames[] = {"edge_padding_low", "edge_padding_high",
                                                "interior_padding"};
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t size, ShapeOperandSize(context, 2 + i, kNames[i]));
    KILN_RETURN_IF_ERROR(ExpectSize(context, "C2", kNames[i], static_cast<size_t>(size),
                                    Rank(operand), "operand"));
  }
  return Status::Ok();
}

Status VerifyRealDynamicSlice(const OpContext& context) {
  const Type& operand = context.operand(0);
  KILN_RETURN_IF_ERROR(ExpectSameElement(context, "", "result", context.result(0), operand));
  static constexpr std::string_view kNames[] = {"start_indices", "limit_indices", "strides"};
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t size, ShapeOperandSize(context, 1 + i, kNames[i]));
    KILN_RETURN_IF_ERROR(ExpectSize(context, "", kNames[i], static_cast<size_t>(size),
                                    Rank(operand), "operand"));
  }
  return Status::Ok();
}

constexpr FamilyRule kRules[] = {
    {OpCode::kBroadcastInDim, VerifyBroadcastInDim, kTensors},
    {OpCode::kBroadcast, VerifyBroadcast, kTensors},
    {OpCode::kReshape, VerifyReshape, kTensors},
    {OpCode::kTranspose, VerifyTranspose, kTensors},
    {OpCode::kReverse, VerifyReverse, kTensors},
    {OpCode::kSlice, VerifySlice, kTensors},
    {OpCode::kDynamicSlice, VerifyDynamicSlice, kTensors},
    {OpCode::kDynamicUpdateSlice, VerifyDynamicUpdateSlice, kTensors},
    {OpCode::kConcatenate, VerifyConcatenate, kTensors},
    {OpCode::kPad, VerifyPad, kTensors},
    {OpCode::kIota, VerifyIota, kTensors},
    {OpCode::kConstant, VerifyConstant, kTensors},
    {OpCode::kChloConstant, VerifyConstant, kTensors},
    {OpCode::kGetDimensionSize, VerifyGetDimensionSize, kTensors},
    {OpCode::kSetDimensionSize, VerifySetDimensionSize, kTensors},
    {OpCode::kDynamicReshape, VerifyDynamicReshape, kTensors},
    {OpCode::kDynamicBroadcastInDim, VerifyDynamicBroadcastInDim, kTensors},
    {OpCode::kDynamicIota, VerifyDynamicIota, kTensors},
    {OpCode::kDynamicPad, VerifyDynamicPad, kTensors},
    {OpCode::kRealDynamicSlice, VerifyRealDynamicSlice, kTensors},
};

}  // namespace

std::span<const FamilyRule> ShapeRules() { return kRules; }

}  // namespace kiln::ir::verify_internal
