// Verifier rules for gather and scatter: their dimension numbers (the
// #stablehlo.gather / #stablehlo.scatter structs), slice sizes and the
// result or update shapes those imply.
#include <algorithm>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// Batching dimensions of the operand and of the indices pair up with
// compatible sizes (gather C16-C17, scatter C17-C18).
Status ExpectBatchingPairs(const OpContext& context, std::string_view size_constraint,
                           std::string_view dim_constraint, std::string_view operand_name,
                           const IntList& operand_dims, const Type& operand,
                           std::string_view indices_name, const IntList& indices_dims,
                           std::span<const int64_t> indices_shape) {
  if (operand_dims.size() != indices_dims.size()) {
    return context.Fail(size_constraint, operand_name, " has ", operand_dims.size(),
                        " entries but ", indices_name, " has ", indices_dims.size());
  }
  for (size_t i = 0; i < operand_dims.size(); ++i) {
    const int64_t a = operand.dims()[static_cast<size_t>(operand_dims[i])];
    const int64_t b = indices_shape[static_cast<size_t>(indices_dims[i])];
    if (!DimsCompatible(a, b)) {
      return context.Fail(dim_constraint, operand_name, "[", i, "] has size ", a, " but ",
                          indices_name, "[", i, "] has size ", b);
    }
  }
  return Status::Ok();
}

bool Contains(std::span<const int64_t> dims, int64_t dim) {
  return std::find(dims.begin(), dims.end(), dim) != dims.end();
}

struct GatherDims {
  IntList offset, collapsed, operand_batching, indices_batching, start_index_map;
  int64_t index_vector_dim = 0;
};

Status VerifyGatherDims(const OpContext& context, const GatherDims& dims, const Type& operand,
                        const Type& indices) {
  const int64_t rank = Rank(operand);
  const int64_t indices_rank = Rank(indices);
  const int64_t implied = static_cast<int64_t>(dims.offset.size() + dims.collapsed.size() +
                                               dims.operand_batching.size());
  if (implied != rank) {
    return context.Fail("C1", "offset_dims, collapsed_slice_dims and operand_batching_dims have ",
                        implied, " entries in all, expected the operand rank ", rank);
  }
  const int64_t ivd = dims.index_vector_dim;
  if (ivd < 0 || ivd > indices_rank) {
    return context.Fail("C2", "index_vector_dim ", ivd, " must be in [0, ", indices_rank, "]");
  }
  const int64_t index_size = ivd == indices_rank ? 1 : indices.dims()[static_cast<size_t>(ivd)];
  if (index_size != kDynamic && index_size != static_cast<int64_t>(dims.start_index_map.size())) {
    return context.Fail("C3", "start_index_map has ", dims.start_index_map.size(),
                        " entries, expected the size ", index_size,
                        " of the index vector dimension of start_indices");
  }
  KILN_RETURN_IF_ERROR(ExpectSortedUnique(context, "C4", "offset_dims", dims.offset.span()));
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C6", "collapsed_slice_dims", dims.collapsed.span(),
                                      "operand_batching_dims", dims.operand_batching.span()));
  KILN_RETURN_IF_ERROR(ExpectSorted(context, "C7", "collapsed_slice_dims", dims.collapsed.span()));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C8", "collapsed_slice_dims", dims.collapsed.span(),
                                     rank, "the operand rank"));
  KILN_RETURN_IF_ERROR(ExpectSorted(context, "C10", "operand_batching_dims",
                                    dims.operand_batching.span()));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C11", "operand_batching_dims",
                                     dims.operand_batching.span(), rank, "the operand rank"));
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C13", "start_indices_batching_dims",
                                      dims.indices_batching.span(), "", {}));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C14", "start_indices_batching_dims",
                                     dims.indices_batching.span(), indices_rank,
                                     "the start_indices rank"));
  if (Contains(dims.indices_batching.span(), ivd)) {
    return context.Fail("C15", "start_indices_batching_dims must not contain index_vector_dim ",
                        ivd);
  }
  KILN_RETURN_IF_ERROR(ExpectBatchingPairs(context, "C16", "C17", "operand_batching_dims",
                                           dims.operand_batching, operand,
                                           "start_indices_batching_dims", dims.indices_batching,
                                           indices.dims()));
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C18", "start_index_map",
                                      dims.start_index_map.span(), "operand_batching_dims",
                                      dims.operand_batching.span()));
  return ExpectInRange(context, "C19", "start_index_map", dims.start_index_map.span(), rank,
                       "the operand rank");
}

Status VerifyGather(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& indices = context.operand(1);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I2", "start_indices", indices, kIntegerClasses));
  KILN_ASSIGN_OR_RETURN(Attribute numbers, context.Struct("dimension_numbers", "stablehlo.gather"));
  GatherDims dims;
  KILN_ASSIGN_OR_RETURN(dims.offset, context.FieldInts(numbers, "offset_dims"));
  KILN_ASSIGN_OR_RETURN(dims.collapsed, context.FieldInts(numbers, "collapsed_slice_dims"));
  KILN_ASSIGN_OR_RETURN(dims.operand_batching, context.FieldInts(numbers, "operand_batching_dims"));
  KILN_ASSIGN_OR_RETURN(dims.indices_batching,
                        context.FieldInts(numbers, "start_indices_batching_dims"));
  KILN_ASSIGN_OR_RETURN(dims.start_index_map, context.FieldInts(numbers, "start_index_map"));
  KILN_ASSIGN_OR_RETURN(dims.index_vector_dim, context.FieldInt(numbers, "index_vector_dim", 0));
  KILN_RETURN_IF_ERROR(VerifyGatherDims(context, dims, operand, indices));

  KILN_ASSIGN_OR_RETURN(IntList sizes, context.Ints("slice_sizes"));
  if (static_cast<int64_t>(sizes.size()) != Rank(operand)) {
    return context.Fail("C20", "slice_sizes has ", sizes.size(),
                        " entries, expected the operand rank ", Rank(operand));
  }
  for (int64_t dim : dims.collapsed) {
    if (sizes[static_cast<size_t>(dim)] > 1) {
      return context.Fail("C9", "slice_sizes[", dim, "] of collapsed dimension ", dim,
                          " must be <= 1, found ", sizes[static_cast<size_t>(dim)]);
    }
  }
  for (int64_t dim : dims.operand_batching) {
    if (sizes[static_cast<size_t>(dim)] > 1) {
      return context.Fail("C12", "slice_sizes[", dim, "] of batching dimension ", dim,
                          " must be <= 1, found ", sizes[static_cast<size_t>(dim)]);
    }
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t size = operand.dims()[d];
    if (sizes[d] < 0 || (size != kDynamic && sizes[d] > size)) {
      return context.Fail("C21", "slice_sizes[", d, "] = ", sizes[d], " must be in [0, ",
                          DimText(size), "]");
    }
  }

  // The result: batch dimensions from start_indices, offset dimensions from
  // the slice sizes that are neither collapsed nor batching.
  const int64_t ivd = dims.index_vector_dim;
  const int64_t indices_rank = Rank(indices) + (ivd == Rank(indices) ? 1 : 0);
  const int64_t result_rank = static_cast<int64_t>(dims.offset.size()) + indices_rank - 1;
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C5", "offset_dims", dims.offset.span(), result_rank,
                                     "the result rank"));
  std::vector<int64_t> offset_sizes;
  for (size_t d = 0; d < sizes.size(); ++d) {
    const int64_t dim = static_cast<int64_t>(d);
    if (!Contains(dims.collapsed.span(), dim) && !Contains(dims.operand_batching.span(), dim)) {
      offset_sizes.push_back(sizes[d]);
    }
  }
  std::vector<int64_t> expected;
  size_t next_offset = 0;
  int64_t next_batch = 0;
  for (int64_t d = 0; d < result_rank; ++d) {
    if (Contains(dims.offset.span(), d)) {
      expected.push_back(offset_sizes[next_offset++]);
      continue;
    }
    int64_t index = next_batch++;
    if (index >= ivd) ++index;
    expected.push_back(indices.dims()[static_cast<size_t>(index)]);
  }
  KILN_RETURN_IF_ERROR(context.ExpectResultShape("C22", 0, expected));
  if (!SameElement(ElementOf(context.result(0)), ElementOf(operand))) {
    return context.Fail("C23", "result must have element type ", TypeText(ElementOf(operand)),
                        ", found ", TypeText(context.result(0)));
  }
  return Status::Ok();
}

struct ScatterDims {
  IntList update_window, inserted_window, input_batching, indices_batching, to_operand;
  int64_t index_vector_dim = 0;
};

Status VerifyScatterDims(const OpContext& context, const ScatterDims& dims, const Type& input,
                         std::span<const int64_t> indices_shape, const Type& updates) {
  const int64_t rank = Rank(input);
  const int64_t implied = static_cast<int64_t>(dims.update_window.size() +
                                               dims.inserted_window.size() +
                                               dims.input_batching.size());
  if (implied != rank) {
    return context.Fail("C2",
                        "update_window_dims, inserted_window_dims and input_batching_dims "
                        "have ",
                        implied, " entries in all, expected the input rank ", rank);
  }
  KILN_RETURN_IF_ERROR(ExpectSortedUnique(context, "C7", "update_window_dims",
                                          dims.update_window.span()));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C8", "update_window_dims", dims.update_window.span(),
                                     Rank(updates), "the updates rank"));
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C9", "inserted_window_dims",
                                      dims.inserted_window.span(), "input_batching_dims",
                                      dims.input_batching.span()));
  KILN_RETURN_IF_ERROR(ExpectSorted(context, "C10", "inserted_window_dims",
                                    dims.inserted_window.span()));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C11", "inserted_window_dims",
                                     dims.inserted_window.span(), rank, "the input rank"));
  KILN_RETURN_IF_ERROR(ExpectSorted(context, "C12", "input_batching_dims",
                                    dims.input_batching.span()));
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C13", "input_batching_dims",
                                     dims.input_batching.span(), rank, "the input rank"));
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C14", "scatter_indices_batching_dims",
                                      dims.indices_batching.span(), "", {}));
  const int64_t indices_rank = static_cast<int64_t>(indices_shape.size());
  KILN_RETURN_IF_ERROR(ExpectInRange(context, "C15", "scatter_indices_batching_dims",
                                     dims.indices_batching.span(), indices_rank,
                                     "the scatter_indices rank"));
  if (Contains(dims.indices_batching.span(), dims.index_vector_dim)) {
    return context.Fail("C16", "scatter_indices_batching_dims must not contain index_vector_dim ",
                        dims.index_vector_dim);
  }
  KILN_RETURN_IF_ERROR(ExpectBatchingPairs(context, "C17", "C18", "input_batching_dims",
                                           dims.input_batching, input,
                                           "scatter_indices_batching_dims", dims.indices_batching,
                                           indices_shape));
  const int64_t index_size = indices_shape[static_cast<size_t>(dims.index_vector_dim)];
  if (index_size != kDynamic && index_size != static_cast<int64_t>(dims.to_operand.size())) {
    return context.Fail("C19", "scatter_dims_to_operand_dims has ", dims.to_operand.size(),
                        " entries, expected the size ", index_size,
                        " of the index vector dimension of scatter_indices");
  }
  KILN_RETURN_IF_ERROR(ExpectDistinct(context, "C20", "scatter_dims_to_operand_dims",
                                      dims.to_operand.span(), "input_batching_dims",
                                      dims.input_batching.span()));
  return ExpectInRange(context, "C21", "scatter_dims_to_operand_dims", dims.to_operand.span(), rank,
                       "the input rank");
}

// scatter C4: update window sizes fit the input; update scatter sizes are
// those of scatter_indices.
Status VerifyUpdateShape(const OpContext& context, const ScatterDims& dims, const Type& input,
                         std::span<const int64_t> indices_shape, const Type& updates) {
  std::vector<int64_t> window_limits;
  for (int64_t d = 0; d < Rank(input); ++d) {
    if (!Contains(dims.inserted_window.span(), d) && !Contains(dims.input_batching.span(), d)) {
      window_limits.push_back(input.dims()[static_cast<size_t>(d)]);
    }
  }
  int64_t next_scatter = 0;
  for (int64_t d = 0; d < Rank(updates); ++d) {
    const int64_t size = updates.dims()[static_cast<size_t>(d)];
    auto window = std::find(dims.update_window.begin(), dims.update_window.end(), d);
    if (window != dims.update_window.end()) {
      const int64_t limit = window_limits[static_cast<size_t>(window - dims.update_window.begin())];
      if (size != kDynamic && limit != kDynamic && size > limit) {
        return context.Fail("C4", "update window dimension ", d, " has size ", size,
                            ", larger than the input's ", limit);
      }
      continue;
    }
    if (next_scatter == dims.index_vector_dim) ++next_scatter;
    const int64_t expected = indices_shape[static_cast<size_t>(next_scatter++)];
    if (!DimsCompatible(size, expected)) {
      return context.Fail("C4", "update scatter dimension ", d, " has size ", size,
                          " but the matching scatter_indices dimension has size ", expected);
    }
  }
  return Status::Ok();
}

Status VerifyScatter(const OpContext& context) {
  const size_t count = context.num_operands() / 2;
  if (context.num_operands() % 2 == 0 || context.num_results() != count) {
    return context.Fail("C5",
                        "expected N inputs, scatter_indices, N updates and N results, "
                        "found ",
                        context.num_operands(), " operands and ", context.num_results(),
                        " results");
  }
  const Type& input = context.operand(0);
  const Type& indices = context.operand(count);
  const Type& updates = context.operand(count + 1);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I2", "scatter_indices", indices, kIntegerClasses));
  for (size_t i = 0; i < count; ++i) {
    const Type& other_input = context.operand(i);
    const Type& other_updates = context.operand(count + 1 + i);
    if (!ShapesCompatible(other_input.dims(), input.dims())) {
      return context.Fail("C1", "input #", i, " ", TypeText(other_input),
                          " must have the shape of input #0 ", TypeText(input));
    }
    if (!ShapesCompatible(other_updates.dims(), updates.dims())) {
      return context.Fail("C3", "updates #", i, " ", TypeText(other_updates),
                          " must have the shape of updates #0 ", TypeText(updates));
    }
    if (!SameElement(ElementOf(other_updates), ElementOf(other_input))) {
      return context.Fail("C6", "updates #", i, " must have element type ",
                          TypeText(ElementOf(other_input)), ", found ", TypeText(other_updates));
    }
  }
  KILN_ASSIGN_OR_RETURN(Attribute numbers,
                        context.Struct("scatter_dimension_numbers", "stablehlo.scatter"));
  ScatterDims dims;
  KILN_ASSIGN_OR_RETURN(dims.update_window, context.FieldInts(numbers, "update_window_dims"));
  KILN_ASSIGN_OR_RETURN(dims.inserted_window, context.FieldInts(numbers, "inserted_window_dims"));
  KILN_ASSIGN_OR_RETURN(dims.input_batching, context.FieldInts(numbers, "input_batching_dims"));
  KILN_ASSIGN_OR_RETURN(dims.indices_batching,
                        context.FieldInts(numbers, "scatter_indices_batching_dims"));
  KILN_ASSIGN_OR_RETURN(dims.to_operand,
                        context.FieldInts(numbers, "scatter_dims_to_operand_dims"));
  KILN_ASSIGN_OR_RETURN(dims.index_vector_dim, context.FieldInt(numbers, "index_vector_dim", 0));
  const int64_t ivd = dims.index_vector_dim;
  if (ivd < 0 || ivd > Rank(indices)) {
    return context.Fail("C22", "index_vector_dim ", ivd, " must be in [0, ", Rank(indices), "]");
  }
  std::vector<int64_t> indices_shape = indices.dims();  // with the implied trailing 1
  if (ivd == Rank(indices)) indices_shape.push_back(1);
  const int64_t updates_rank = static_cast<int64_t>(indices_shape.size() - 1 +
                                                    dims.update_window.size());
  if (Rank(updates) != updates_rank) {
    return context.Fail("C4", "updates ", TypeText(updates), " must have rank ", updates_rank,
                        " (the scatter_indices rank - 1 + the number of update_window_dims)");
  }
  KILN_RETURN_IF_ERROR(VerifyScatterDims(context, dims, input, indices_shape, updates));
  KILN_RETURN_IF_ERROR(VerifyUpdateShape(context, dims, input, indices_shape, updates));

  std::vector<Type> inputs, inits;
  for (size_t i = 0; i < count; ++i) {
    inputs.push_back(context.operand(i));
    inits.push_back(Type::Tensor(ElementOf(context.operand(count + 1 + i)), {}));
  }
  std::vector<Type> accumulators;
  KILN_RETURN_IF_ERROR(VerifyReducer(context, "C23", context.op().region(0), inputs, inits, {},
                                     &accumulators));
  for (size_t i = 0; i < count; ++i) {
    const Type& result = context.result(i);
    if (!ShapesCompatible(result.dims(), context.operand(i).dims())) {
      return context.Fail("C24", "result #", i, " must have the shape of input #", i, " ",
                          DimsText(context.operand(i).dims()), ", found ", TypeText(result));
    }
    if (!SameElement(ElementOf(result), ElementOf(accumulators[i]))) {
      return context.Fail("C25", "result #", i,
                          " must have the update_computation's element "
                          "type ",
                          TypeText(ElementOf(accumulators[i])), ", found ", TypeText(result));
    }
  }
  return Status::Ok();
}

constexpr FamilyRule kRules[] = {
    {OpCode::kGather, VerifyGather, kTensors},
    {OpCode::kScatter, VerifyScatter, kTensors | kReturnTerminated},
    {OpCode::kDynamicGather, nullptr, kTensors},
};

}  // namespace

std::span<const FamilyRule> IndexingRules() { return kRules; }

}  // namespace kiln::ir::verify_internal
