// Lowering of constants and the data-movement ops: reshape, bitcast_convert, broadcast_in_dim,
// transpose, reverse, slice, concatenate, iota; optimization_barrier.
#include <cstring>

#include "compiler/lowering.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/parallel.h"
#include "kernels/types.h"

namespace kiln::compiler {
namespace {

// A splat larger than kMaxFoldedBytes (jaxlib's serializer folds
// `broadcast_in_dim` of a scalar constant into one: jax.random programs hold
// several of 4M elements) is the broadcast of its one element: expanded, it
// cost a copy and a uniformity scan of every byte at compile time and its
// size in the executable.
Status LowerConstant(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
  const ir::Attribute value = op.GetAttr("value");
  if (value.Is(ir::AttrKind::kDenseElements) && value->splat &&
      shape.ByteSize() > kMaxFoldedBytes) {
    Shape element{shape.element_type, {}};
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> data, DenseData(value, element));
    const ValueId scalar = lowering.graph().AddConstant(std::move(element), std::move(data));
    const size_t rank = shape.dims.size();
    return lowering.EmitRead(op, MakeRead(scalar, shape.dims, {}, std::vector<int>(rank, -1),
                                          std::vector<int64_t>(rank, 0)));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> data, DenseData(value, shape));
  lowering.Bind(op.result(0), lowering.graph().AddConstant(std::move(shape), std::move(data)));
  return Status::Ok();
}

// A value reinterpreted with another shape or element type of the same bytes
// (reshape; bitcast_convert between byte-sized types): a view.
Status LowerView(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
  if (shape.ByteSize() != lowering.graph().values[static_cast<size_t>(input)].bytes) {
    return Unimplemented("a view changing the byte size (", shape.ToString(),
                         "): bitcasts between sub-byte element types");
  }
  const size_t bytes = shape.ByteSize();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, {input}, {shape}, [bytes](RunContext& ctx) {
                          if (ctx.out(0) != ctx.in(0)) {
                            kernels::CopyBytes(ctx.out(0), ctx.in(0), bytes);
                          }
                          return Status::Ok();
                        }));
  Node* node = lowering.graph().nodes.empty() ? nullptr : &lowering.graph().nodes.back();
  if (node != nullptr && node->outputs == outputs) node->output_aliases_input = true;
  lowering.Bind(op.result(0), outputs[0]);
  return Status::Ok();
}

kernels::BitField BitFieldOf(ElementType type) {
  const ElementTypeInfo& info = GetElementTypeInfo(type);
  const bool sign_extended = type == ElementType::kS1 || type == ElementType::kS2 ||
                             type == ElementType::kS4;
  return {info.bit_width, info.storage_bytes, sign_extended};
}

// bitcast_convert: a view when both sides have the same bytes; between bit
// widths where one side is under 8 bits (i1[64] <-> i64, s4[2] <-> s8), a
// packing copy (the verifier checked the shapes: the narrow side has one more
// dimension, of size ratio).
Status LowerBitcastConvert(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape from, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape to, lowering.ShapeOf(op.result(0)));
  const kernels::BitField in = BitFieldOf(from.element_type);
  const kernels::BitField out = BitFieldOf(to.element_type);
  if (in.bits == out.bits || (in.bits >= 8 && out.bits >= 8)) return LowerView(lowering, op);
  const bool pack = in.bits < out.bits;
  const kernels::BitField narrow = pack ? in : out;
  const kernels::BitField wide = pack ? out : in;
  if (wide.bits > 64 || wide.bits % narrow.bits != 0) {
    return Unimplemented("bitcast_convert from ", from.ToString(), " to ", to.ToString(),
                         ": packing into elements wider than 64 bits");
  }
  const int64_t count = (pack ? to : from).NumElements();
  return lowering.Emit(op, [pack, narrow, wide, count](RunContext& ctx) {
    if (pack) {
      kernels::PackBits(narrow, static_cast<const uint8_t*>(ctx.in(0)), wide, ctx.out(0), count);
    } else {
      kernels::UnpackBits(wide, ctx.in(0), narrow, static_cast<uint8_t*>(ctx.out(0)), count);
    }
    return Status::Ok();
  });
}

Status LowerBroadcastInDim(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  const std::vector<int64_t> mapping = IntsAttr(op, "broadcast_dimensions");
  std::vector<int> axis(out.dims.size(), -1);
  std::vector<int64_t> step(out.dims.size(), 0);
  for (size_t d = 0; d < mapping.size() && d < in.dims.size(); ++d) {
    if (in.dims[d] == 1) continue;  // repeated: read index 0 throughout
    axis[static_cast<size_t>(mapping[d])] = static_cast<int>(d);
    step[static_cast<size_t>(mapping[d])] = 1;
  }
  return lowering.EmitRead(op, MakeRead(input, out.dims, std::vector<int64_t>(in.dims.size(), 0),
                                        std::move(axis), std::move(step)));
}

Status LowerTranspose(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(bool product, LowerTransposedProduct(lowering, op));
  if (product) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  std::vector<int> axis;
  for (int64_t p : IntsAttr(op, "permutation")) axis.push_back(static_cast<int>(p));
  return lowering.EmitRead(op, MakeRead(input, out.dims, std::vector<int64_t>(in.dims.size(), 0),
                                        std::move(axis), std::vector<int64_t>(out.dims.size(), 1)));
}

// The read of every element of `dims` in order, to adjust per op.
StridedRead InOrder(ValueId input, const std::vector<int64_t>& dims) {
  std::vector<int> axis(dims.size());
  for (size_t k = 0; k < dims.size(); ++k) axis[k] = static_cast<int>(k);
  return MakeRead(input, dims, std::vector<int64_t>(dims.size(), 0), std::move(axis),
                  std::vector<int64_t>(dims.size(), 1));
}

Status LowerReverse(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  StridedRead read = InOrder(input, in.dims);
  for (int64_t d : IntsAttr(op, "dimensions")) {
    const auto k = static_cast<size_t>(d);
    if (in.dims[k] <= 1) continue;
    read.base[k] = in.dims[k] - 1;
    read.step[k] = -1;
  }
  return lowering.EmitRead(op, std::move(read));
}

Status LowerSlice(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  StridedRead read = InOrder(input, in.dims);
  read.dims = out.dims;
  const std::vector<int64_t> start = IntsAttr(op, "start_indices");
  const std::vector<int64_t> step = IntsAttr(op, "strides");
  for (size_t k = 0; k < in.dims.size(); ++k) {
    if (k < start.size()) read.base[k] = start[k];
    if (k < step.size()) read.step[k] = step[k];
  }
  return lowering.EmitRead(op, std::move(read));
}

Status LowerConcatenate(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  const auto axis = static_cast<size_t>(IntAttr(op, "dimension", 0));
  std::vector<Shape> inputs;
  for (ir::Value* operand : op.operands()) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(operand));
    inputs.push_back(std::move(shape));
  }
  const size_t bytes = ElementBytes(out.element_type);
  // Each input is a block of `rows` rows of (its axis size x inner) elements.
  int64_t rows = 1;
  for (size_t k = 0; k < axis; ++k) rows *= out.dims[k];
  int64_t inner = 1;
  for (size_t k = axis + 1; k < out.dims.size(); ++k) inner *= out.dims[k];
  std::vector<int64_t> widths;
  for (const Shape& shape : inputs) widths.push_back(shape.dims[axis] * inner);
  const int64_t out_width = out.dims[axis] * inner;
  return lowering.Emit(op, [bytes, rows, widths, out_width](RunContext& ctx) {
    auto* out_bytes = static_cast<uint8_t*>(ctx.out(0));
    int64_t column = 0;
    for (size_t i = 0; i < widths.size(); ++i) {
      const auto* in = static_cast<const uint8_t*>(ctx.in(i));
      const size_t row_bytes = static_cast<size_t>(widths[i]) * bytes;
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(out_bytes + (r * out_width + column) * static_cast<int64_t>(bytes),
                    in + r * static_cast<int64_t>(row_bytes), row_bytes);
      }
      column += widths[i];
    }
    return Status::Ok();
  });
}

Status LowerIota(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  const auto dimension = static_cast<size_t>(IntAttr(op, "iota_dimension", 0));
  int64_t inner = 1;
  for (size_t k = dimension + 1; k < out.dims.size(); ++k) inner *= out.dims[k];
  const int64_t size = out.dims.empty() ? 1 : out.dims[dimension];
  const int64_t count = out.NumElements();
  const ElementType type = out.element_type;
  if (!out.dims.empty() && out.ByteSize() > kMaxFoldedBytes) {
    // A large iota is the read of its one row, 0 .. size - 1, along its
    // dimension: fusion then computes it inside the loops reading it rather
    // than writing it out (threefry's counters over 1024 x 1000: two u64
    // iotas of 8 MB each).
    Shape row{type, {size}};
    std::vector<uint8_t> data(row.ByteSize());
    KILN_RETURN_IF_ERROR(kernels::Iota(type, size, 1, data.data(), size));
    const ValueId values = lowering.graph().AddConstant(std::move(row), std::move(data));
    const size_t rank = out.dims.size();
    std::vector<int> axis(rank, -1);
    std::vector<int64_t> step(rank, 0);
    axis[dimension] = 0;
    step[dimension] = 1;
    return lowering.EmitRead(op, MakeRead(values, out.dims, {0}, std::move(axis), std::move(step)));
  }
  return lowering.Emit(op, [type, count, inner, size](RunContext& ctx) {
    return kernels::Iota(type, size, inner, ctx.out(0), count);
  });
}

// optimization_barrier: its results are its operands.
Status LowerIdentity(Lowering& lowering, const ir::Operation& op) {
  for (size_t i = 0; i < op.num_results(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    lowering.Bind(op.result(i), input);
  }
  return Status::Ok();
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kConstant, LowerConstant},
    {ir::OpCode::kReshape, LowerView},
    {ir::OpCode::kBitcastConvert, LowerBitcastConvert},
    {ir::OpCode::kBroadcastInDim, LowerBroadcastInDim},
    {ir::OpCode::kTranspose, LowerTranspose},
    {ir::OpCode::kReverse, LowerReverse},
    {ir::OpCode::kSlice, LowerSlice},
    {ir::OpCode::kConcatenate, LowerConcatenate},
    {ir::OpCode::kIota, LowerIota},
    {ir::OpCode::kOptimizationBarrier, LowerIdentity},
};

}  // namespace

std::span<const LoweringRule> ShapeLowerings() { return kRules; }

}  // namespace kiln::compiler
