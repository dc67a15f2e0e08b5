// Lowering of the contractions: dot_general, dot and convolution, onto the
// batched GEMM of kernels/dot.h. Operands are brought into [batch, M, K] x
// [batch, K, N] form by strided copies only when they are not already in it
// (or in its transpose, which the GEMM reads directly); narrow floats are
// converted to f32 around the product and the result rounded once, as XLA's
// CPU backend does, except bf16 and f16 products of one type, which widen
// tile by tile inside the GEMM. A convolution becomes im2col
// (kernels/conv.h) + one GEMM per group in the canonical NHWC / HWIO
// layouts. Every step is its own node, so the buffer plan owns all scratch
// memory and constant operands fold step by step.
#include <algorithm>
#include <cstring>

#include "compiler/contraction.h"
#include "compiler/lowering.h"
#include "kernels/conv.h"
#include "kernels/copy.h"
#include "kernels/dot.h"
#include "kernels/elementwise.h"
#include "kernels/gather.h"

namespace kiln::compiler {

ElementType ComputeTypeFor(ElementType result) {
  switch (result) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
    case ElementType::kF32:
    case ElementType::kF64:
    case ElementType::kC64:
    case ElementType::kC128: return result;
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4: return ElementType::kS32;
    default: return ElementType::kF32;
  }
}

namespace {

// Whether a strided read of `dims` at `strides` from `offset` is just the
// dense array itself (size-1 dimensions may have any stride).
bool IsDenseRead(std::span<const int64_t> dims, std::span<const int64_t> strides, int64_t offset) {
  if (offset != 0) return false;
  const std::vector<int64_t> dense = Strides(dims);
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] != 1 && strides[k] != dense[k]) return false;
  }
  return true;
}

// `input` seen with other dimensions of the same size: a view node (no
// copy unless the buffer plan places it apart), or `input` itself when the
// dimensions are its own.
StatusOr<ValueId> EmitView(Lowering& lowering, const ir::Operation& op, ValueId input,
                           std::vector<int64_t> dims) {
  Shape shape = lowering.graph().shape(input);
  if (shape.dims == dims) return input;
  shape.dims = std::move(dims);
  const size_t bytes = shape.ByteSize();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, {input}, {std::move(shape)},
                                          [bytes](RunContext& ctx) {
                                            if (ctx.out(0) != ctx.in(0)) {
                                              std::memcpy(ctx.out(0), ctx.in(0), bytes);
                                            }
                                            return Status::Ok();
                                          }));
  std::vector<Node>& nodes = lowering.graph().nodes;
  if (!nodes.empty() && nodes.back().outputs == outputs) nodes.back().output_aliases_input = true;
  return outputs[0];
}

// A node writing the dense array of shape `dims` read from `input` at
// `strides` (elements) from `offset`; a view when that is `input` itself.
StatusOr<ValueId> EmitStridedRead(Lowering& lowering, const ir::Operation& op, ValueId input,
                                  std::vector<int64_t> dims, std::vector<int64_t> strides,
                                  int64_t offset = 0) {
  if (IsDenseRead(dims, strides, offset)) return EmitView(lowering, op, input, std::move(dims));
  const ElementType type = lowering.graph().shape(input).element_type;
  const size_t bytes = ElementBytes(type);
  Shape shape{type, dims};
  auto read = std::make_shared<Pointwise>();
  read->kind = Pointwise::Kind::kRead;
  read->dims = dims;
  read->strides = strides;
  read->base = offset;
  read->element_bytes = bytes;
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> outputs,
      lowering.EmitNode(op, {input}, {std::move(shape)},
                        [bytes, dims = std::move(dims), strides = std::move(strides),
                         offset](RunContext& ctx) {
                          const auto* base = static_cast<const uint8_t*>(ctx.in(0)) +
                                             offset * static_cast<int64_t>(bytes);
                          kernels::CopyStrided(bytes, dims, base, strides, ctx.out(0));
                          return Status::Ok();
                        }));
  lowering.graph().nodes.back().strided_copy = std::move(read);
  return outputs[0];
}

}  // namespace

StatusOr<ValueId> EmitPermute(Lowering& lowering, const ir::Operation& op, ValueId input,
                              std::span<const int64_t> permutation) {
  const std::vector<int64_t>& in_dims = lowering.graph().shape(input).dims;
  const std::vector<int64_t> in_strides = Strides(in_dims);
  std::vector<int64_t> dims, strides;
  for (int64_t p : permutation) {
    dims.push_back(in_dims[static_cast<size_t>(p)]);
    strides.push_back(in_strides[static_cast<size_t>(p)]);
  }
  return EmitStridedRead(lowering, op, input, std::move(dims), std::move(strides));
}

StatusOr<ValueId> EmitConvert(Lowering& lowering, const ir::Operation& op, ValueId input,
                              ElementType type) {
  Shape shape = lowering.graph().shape(input);
  const ElementType from = shape.element_type;
  if (from == type) return input;
  shape.element_type = type;
  const int64_t count = shape.NumElements();
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> outputs,
      lowering.EmitNode(op, {input}, {std::move(shape)}, [from, type, count](RunContext& ctx) {
        return kernels::Convert(from, ctx.in(0), type, ctx.out(0), count);
      }));
  std::vector<Node>& nodes = lowering.graph().nodes;
  if (!nodes.empty() && nodes.back().outputs == outputs) nodes.back().converts = true;
  return outputs[0];
}

namespace {

// The GEMM node: out (of `shape`, in `type`) = lhs x rhs.
StatusOr<ValueId> EmitMatMul(Lowering& lowering, const ir::Operation& op, ValueId lhs, ValueId rhs,
                             ElementType type, const kernels::MatMulShape& shape,
                             std::vector<int64_t> out_dims) {
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, {lhs, rhs}, {Shape{type, std::move(out_dims)}},
                                          [type, shape](RunContext& ctx) {
                                            return kernels::MatMul(type, shape, ctx.in(0),
                                                                   ctx.in(1), ctx.out(0));
                                          }));
  std::vector<Node>& nodes = lowering.graph().nodes;
  if (!nodes.empty() && nodes.back().outputs == outputs) {
    nodes.back().matmul = std::make_shared<const kernels::MatMulShape>(shape);
  }
  return outputs[0];
}

// One operand of a contraction in GEMM form: its value, and whether the
// GEMM reads it transposed.
struct GemmOperand {
  ValueId value;
  bool transposed;
};

// Brings an operand into [batch, rows, depth] form (`rows_first`: the lhs,
// M x K) or [batch, depth, columns] (the rhs, K x N), or the transpose of
// that form when the operand already is in it; converts it to `type`.
StatusOr<GemmOperand> PrepareOperand(Lowering& lowering, const ir::Operation& op, ValueId input,
                                     std::span<const int64_t> batch,
                                     std::span<const int64_t> contracting, bool rows_first,
                                     ElementType type) {
  const std::vector<int64_t>& dims = lowering.graph().shape(input).dims;
  std::vector<int64_t> free;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
  }
  auto order = [&](bool free_first) {
    std::vector<int64_t> permutation(batch.begin(), batch.end());
    const std::span<const int64_t> first = free_first ? std::span<const int64_t>(free)
                                                      : contracting;
    const std::span<const int64_t> second = free_first ? contracting
                                                       : std::span<const int64_t>(free);
    permutation.insert(permutation.end(), first.begin(), first.end());
    permutation.insert(permutation.end(), second.begin(), second.end());
    return permutation;
  };
  auto in_place = [&](const std::vector<int64_t>& permutation) {
    int64_t last = -1;
    for (int64_t p : permutation) {
      if (dims[static_cast<size_t>(p)] == 1) continue;
      if (p < last) return false;
      last = p;
    }
    return true;
  };
  const std::vector<int64_t> natural = order(rows_first);
  const std::vector<int64_t> transposed = order(!rows_first);
  GemmOperand result{input, false};
  if (!in_place(natural)) {
    if (in_place(transposed)) {
      result.transposed = true;
    } else {
      KILN_ASSIGN_OR_RETURN(result.value, EmitPermute(lowering, op, input, natural));
    }
  }
  KILN_ASSIGN_OR_RETURN(result.value, EmitConvert(lowering, op, result.value, type));
  return result;
}

}  // namespace

Status EmitContraction(Lowering& lowering, const ir::Operation& op, ValueId lhs, ValueId rhs,
                       const Shape& out, std::span<const int64_t> lhs_batch,
                       std::span<const int64_t> lhs_contract, std::span<const int64_t> rhs_batch,
                       std::span<const int64_t> rhs_contract, ir::Value* bound) {
  // bf16 x bf16 -> bf16 and f16 x f16 -> f16 run on the GEMM's own
  // widening tiles (kernels::MatMul), without f32 copies of the operands and
  // the product.
  const ElementType narrow = out.element_type;
  const bool widened_in_tiles = (narrow == ElementType::kBF16 || narrow == ElementType::kF16) &&
                                lowering.graph().shape(lhs).element_type == narrow &&
                                lowering.graph().shape(rhs).element_type == narrow;
  // 8-bit integers summed in 32 bits (dot_general's
  // preferred_element_type=int32 of int8 operands) run on the bytes
  // (kernels::MatMulInt8), without s32 copies of the operands.
  const ElementType lhs_type = lowering.graph().shape(lhs).element_type;
  const ElementType rhs_type = lowering.graph().shape(rhs).element_type;
  auto byte = [](ElementType t) { return t == ElementType::kS8 || t == ElementType::kU8; };
  const bool bytes = out.element_type == ElementType::kS32 && byte(lhs_type) && byte(rhs_type);
  // s16 x s16 -> s32 likewise (kernels::MatMulInt16).
  const bool shorts = out.element_type == ElementType::kS32 && lhs_type == ElementType::kS16 &&
                      rhs_type == ElementType::kS16;
  const ElementType type = widened_in_tiles ? narrow : ComputeTypeFor(out.element_type);
  if (!kernels::MatMulAccepts(type)) {
    return Unimplemented("Kiln cannot multiply matrices of ",
                         GetElementTypeInfo(out.element_type).name);
  }
  const std::vector<int64_t> lhs_dims = lowering.graph().shape(lhs).dims;
  const std::vector<int64_t> rhs_dims = lowering.graph().shape(rhs).dims;
  kernels::MatMulShape shape;
  shape.batch = 1;
  for (int64_t d : lhs_batch) shape.batch *= lhs_dims[static_cast<size_t>(d)];
  shape.k = 1;
  for (int64_t d : lhs_contract) shape.k *= lhs_dims[static_cast<size_t>(d)];
  shape.m = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(lhs_dims.size()); ++d) {
    if (!Contains(lhs_batch, d) && !Contains(lhs_contract, d)) {
      shape.m *= lhs_dims[static_cast<size_t>(d)];
    }
  }
  shape.n = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(rhs_dims.size()); ++d) {
    if (!Contains(rhs_batch, d) && !Contains(rhs_contract, d)) {
      shape.n *= rhs_dims[static_cast<size_t>(d)];
    }
  }
  KILN_ASSIGN_OR_RETURN(GemmOperand a,
                        PrepareOperand(lowering, op, lhs, lhs_batch, lhs_contract,
                                       /*rows_first=*/true, bytes || shorts ? lhs_type : type));
  KILN_ASSIGN_OR_RETURN(GemmOperand b,
                        PrepareOperand(lowering, op, rhs, rhs_batch, rhs_contract,
                                       /*rows_first=*/false, bytes || shorts ? rhs_type : type));
  shape.lhs_transposed = a.transposed;
  shape.rhs_transposed = b.transposed;
  ValueId product;
  if (bytes || shorts) {
    KILN_ASSIGN_OR_RETURN(
        std::vector<ValueId> outputs,
        lowering.EmitNode(op, {a.value, b.value}, {Shape{ElementType::kS32, out.dims}},
                          [shorts, lhs_type, rhs_type, shape](RunContext& ctx) {
                            return shorts ? kernels::MatMulInt16(shape, ctx.in(0), ctx.in(1),
                                                                 ctx.out(0))
                                          : kernels::MatMulInt8(lhs_type, rhs_type, shape,
                                                                ctx.in(0), ctx.in(1), ctx.out(0));
                          }));
    product = outputs[0];
  } else {
    KILN_ASSIGN_OR_RETURN(product,
                          EmitMatMul(lowering, op, a.value, b.value, type, shape, out.dims));
  }
  KILN_ASSIGN_OR_RETURN(ValueId result, EmitConvert(lowering, op, product, out.element_type));
  lowering.Bind(bound, result);
  return Status::Ok();
}

namespace {

// The contraction of `op` (dot or dot_general) on its own operands.
Status EmitOwnContraction(Lowering& lowering, const ir::Operation& op,
                          std::span<const int64_t> lhs_batch, std::span<const int64_t> lhs_contract,
                          std::span<const int64_t> rhs_batch,
                          std::span<const int64_t> rhs_contract) {
  KILN_ASSIGN_OR_RETURN(ValueId lhs, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(ValueId rhs, lowering.Input(op, 1));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  return EmitContraction(lowering, op, lhs, rhs, out, lhs_batch, lhs_contract, rhs_batch,
                         rhs_contract, op.result(0));
}

Status LowerDotGeneral(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute numbers = op.GetAttr("dot_dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct)) {
    return InvalidArgument("dot_general without #stablehlo.dot dimension numbers");
  }
  return EmitOwnContraction(lowering, op, FieldInts(numbers, "lhs_batching_dimensions"),
                            FieldInts(numbers, "lhs_contracting_dimensions"),
                            FieldInts(numbers, "rhs_batching_dimensions"),
                            FieldInts(numbers, "rhs_contracting_dimensions"));
}

// The legacy dot: [M,] K times K[, N].
Status LowerDot(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape lhs, lowering.ShapeOf(op.operand(0)));
  const int64_t lhs_contract[] = {static_cast<int64_t>(lhs.dims.size()) - 1};
  const int64_t rhs_contract[] = {0};
  return EmitOwnContraction(lowering, op, {}, lhs_contract, {}, rhs_contract);
}

// How many operands of the ops in `block` (and in their regions) are `value`.
size_t Uses(const ir::Block& block, const ir::Value* value) {
  size_t uses = 0;
  std::vector<const ir::Block*> pending{&block};
  while (!pending.empty()) {
    const ir::Block* current = pending.back();
    pending.pop_back();
    for (const auto& op : current->operations()) {
      uses += static_cast<size_t>(std::count(op->operands().begin(), op->operands().end(), value));
      for (size_t r = 0; r < op->num_regions(); ++r) {
        const ir::Region& region = op->region(r);
        for (size_t b = 0; b < region.num_blocks(); ++b) pending.push_back(&region.block(b));
      }
    }
  }
  return uses;
}

// --- convolution ---

struct ConvDims {
  int64_t input_batch, input_feature, kernel_input_feature, kernel_output_feature;
  int64_t output_batch, output_feature;
  std::vector<int64_t> input_spatial, kernel_spatial, output_spatial;
};

ConvDims ReadConvDims(const ir::Attribute& numbers) {
  ConvDims dims;
  dims.input_batch = FieldInt(numbers, "input_batch_dimension");
  dims.input_feature = FieldInt(numbers, "input_feature_dimension");
  dims.kernel_input_feature = FieldInt(numbers, "kernel_input_feature_dimension");
  dims.kernel_output_feature = FieldInt(numbers, "kernel_output_feature_dimension");
  dims.output_batch = FieldInt(numbers, "output_batch_dimension");
  dims.output_feature = FieldInt(numbers, "output_feature_dimension");
  dims.input_spatial = FieldInts(numbers, "input_spatial_dimensions");
  dims.kernel_spatial = FieldInts(numbers, "kernel_spatial_dimensions");
  dims.output_spatial = FieldInts(numbers, "output_spatial_dimensions");
  return dims;
}

// An integer list attribute with one entry per spatial dimension, or
// `fallback` everywhere when absent.
std::vector<int64_t> SpatialAttr(const ir::Operation& op, std::string_view name, size_t count,
                                 int64_t fallback) {
  std::vector<int64_t> values = IntsAttr(op, name);
  if (values.size() != count) values.assign(count, fallback);
  return values;
}

StatusOr<kernels::ConvGeometry> ReadGeometry(const ir::Operation& op, const ConvDims& dims,
                                             const Shape& lhs, const Shape& rhs, const Shape& out) {
  const size_t spatial = dims.input_spatial.size();
  kernels::ConvGeometry g;
  g.batch = lhs.dims[static_cast<size_t>(dims.input_batch)];
  g.features = lhs.dims[static_cast<size_t>(dims.input_feature)];
  for (size_t i = 0; i < spatial; ++i) {
    g.input_spatial.push_back(lhs.dims[static_cast<size_t>(dims.input_spatial[i])]);
    g.window.push_back(rhs.dims[static_cast<size_t>(dims.kernel_spatial[i])]);
    g.output_spatial.push_back(out.dims[static_cast<size_t>(dims.output_spatial[i])]);
  }
  g.strides = SpatialAttr(op, "window_strides", spatial, 1);
  g.lhs_dilation = SpatialAttr(op, "lhs_dilation", spatial, 1);
  g.rhs_dilation = SpatialAttr(op, "rhs_dilation", spatial, 1);
  // dynamic_conv has its padding as an operand, read when the program runs.
  const std::vector<int64_t> padding = op.code() == ir::OpCode::kDynamicConv
                                           ? std::vector<int64_t>(2 * spatial, 0)
                                           : SpatialAttr(op, "padding", 2 * spatial, 0);
  for (size_t i = 0; i < spatial; ++i) g.padding_low.push_back(padding[2 * i]);
  g.output_features = rhs.dims[static_cast<size_t>(dims.kernel_output_feature)];
  g.feature_groups = IntAttr(op, "feature_group_count", 1);
  g.batch_groups = IntAttr(op, "batch_group_count", 1);
  if (g.feature_groups < 1 || g.batch_groups < 1) {
    return InvalidArgument("group counts must be positive");
  }
  return g;
}

// The kernel as [groups, window..., group input features, group output
// features], reversed along window_reversal dimensions, in one read.
StatusOr<ValueId> EmitCanonicalKernel(Lowering& lowering, const ir::Operation& op, ValueId kernel,
                                      const ConvDims& dims, const kernels::ConvGeometry& g) {
  const std::vector<int64_t>& kernel_dims = lowering.graph().shape(kernel).dims;
  const std::vector<int64_t> strides = Strides(kernel_dims);
  const std::vector<int64_t> reversal = SpatialAttr(op, "window_reversal",
                                                    dims.kernel_spatial.size(), 0);
  const auto in_dim = static_cast<size_t>(dims.kernel_input_feature);
  const auto out_dim = static_cast<size_t>(dims.kernel_output_feature);
  const int64_t group_outputs = kernel_dims[out_dim] / g.groups();
  std::vector<int64_t> read_dims{g.groups()};
  std::vector<int64_t> read_strides{group_outputs * strides[out_dim]};
  int64_t offset = 0;
  for (size_t i = 0; i < dims.kernel_spatial.size(); ++i) {
    const auto d = static_cast<size_t>(dims.kernel_spatial[i]);
    read_dims.push_back(kernel_dims[d]);
    if (reversal[i] != 0) {
      offset += std::max<int64_t>(kernel_dims[d] - 1, 0) * strides[d];
      read_strides.push_back(-strides[d]);
    } else {
      read_strides.push_back(strides[d]);
    }
  }
  read_dims.push_back(kernel_dims[in_dim]);
  read_strides.push_back(strides[in_dim]);
  read_dims.push_back(group_outputs);
  read_strides.push_back(strides[out_dim]);
  return EmitStridedRead(lowering, op, kernel, std::move(read_dims), std::move(read_strides),
                         offset);
}

// The padding of a dynamic_conv, read at run time from the node's input
// `index` (an integer tensor [spatial, 2]): `g` with its padding_low, after
// checking that the padding gives the output size the result type has.
StatusOr<kernels::ConvGeometry> RunGeometry(const kernels::ConvGeometry& g, const RunContext& ctx,
                                            size_t index) {
  kernels::ConvGeometry run = g;
  const ElementType type = ctx.in_shape(index).element_type;
  for (size_t i = 0; i < g.window.size(); ++i) {
    const int64_t low = kernels::LoadIndex(type, ctx.in(index), static_cast<int64_t>(2 * i));
    const int64_t high = kernels::LoadIndex(type, ctx.in(index), static_cast<int64_t>(2 * i + 1));
    const int64_t input = g.input_spatial[i] == 0
                              ? 0
                              : (g.input_spatial[i] - 1) * g.lhs_dilation[i] + 1;
    const int64_t window = g.window[i] == 0 ? 0 : (g.window[i] - 1) * g.rhs_dilation[i] + 1;
    const int64_t padded = input + low + high;
    const int64_t outputs = padded < window ? 0 : (padded - window) / g.strides[i] + 1;
    if (outputs != g.output_spatial[i]) {
      return InvalidArgument("dynamic_conv padding [", low, ", ", high, "] of spatial dimension ",
                             i, " gives ", outputs, " output positions; the result type has ",
                             g.output_spatial[i]);
    }
    run.padding_low[i] = low;
  }
  return run;
}

// im2col of `input`; `padding` (or kNoValue) is a dynamic_conv's run-time
// padding operand.
StatusOr<ValueId> EmitIm2Col(Lowering& lowering, const ir::Operation& op, ValueId input,
                             const kernels::ConvGeometry& g, ValueId padding) {
  if (padding == kNoValue && g.columns_are_input()) return input;
  const ElementType type = lowering.graph().shape(input).element_type;
  const size_t bytes = ElementBytes(type);
  Shape shape{type, {g.groups(), g.rows(), g.window_size() * g.group_features()}};
  std::vector<ValueId> inputs{input};
  if (padding != kNoValue) inputs.push_back(padding);
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, std::move(inputs), {std::move(shape)},
                                          [bytes, g](RunContext& ctx) -> Status {
                                            if (ctx.num_inputs() > 1) {
                                              KILN_ASSIGN_OR_RETURN(auto run,
                                                                    RunGeometry(g, ctx, 1));
                                              kernels::Im2Col(bytes, run, ctx.in(0), ctx.out(0));
                                              return Status::Ok();
                                            }
                                            kernels::Im2Col(bytes, g, ctx.in(0), ctx.out(0));
                                            return Status::Ok();
                                          }));
  if (padding == kNoValue) {
    lowering.graph().nodes.back().im2col = std::make_shared<const kernels::ConvGeometry>(g);
  }
  return outputs[0];
}

// Binds the convolution's result: `canonical` ([batch, output spatial...,
// features] in the compute type) in the result's layout and element type.
Status EmitConvResult(Lowering& lowering, const ir::Operation& op, ValueId canonical,
                      const ConvDims& dims, const kernels::ConvGeometry& g, const Shape& out) {
  std::vector<int64_t> canonical_dims{g.batch / g.batch_groups};
  canonical_dims.insert(canonical_dims.end(), g.output_spatial.begin(), g.output_spatial.end());
  canonical_dims.push_back(g.output_features);
  const std::vector<int64_t> canonical_strides = Strides(canonical_dims);
  std::vector<int64_t> strides(out.dims.size());
  strides[static_cast<size_t>(dims.output_batch)] = canonical_strides.front();
  strides[static_cast<size_t>(dims.output_feature)] = canonical_strides.back();
  for (size_t i = 0; i < dims.output_spatial.size(); ++i) {
    strides[static_cast<size_t>(dims.output_spatial[i])] = canonical_strides[i + 1];
  }
  KILN_ASSIGN_OR_RETURN(ValueId result,
                        EmitStridedRead(lowering, op, canonical, out.dims, std::move(strides)));
  KILN_ASSIGN_OR_RETURN(result, EmitConvert(lowering, op, result, out.element_type));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

// A depthwise convolution (one input feature per group): the kernel as
// [window..., output features], then one direct kernel node.
Status EmitDepthwise(Lowering& lowering, const ir::Operation& op, ValueId input, ValueId rhs,
                     const ConvDims& dims, const kernels::ConvGeometry& g, const Shape& out,
                     ElementType type, ValueId padding) {
  const std::vector<int64_t>& kernel_dims = lowering.graph().shape(rhs).dims;
  const std::vector<int64_t> kernel_strides = Strides(kernel_dims);
  const std::vector<int64_t> reversal = SpatialAttr(op, "window_reversal",
                                                    dims.kernel_spatial.size(), 0);
  std::vector<int64_t> read_dims, read_strides;
  int64_t offset = 0;
  for (size_t i = 0; i < dims.kernel_spatial.size(); ++i) {
    const auto d = static_cast<size_t>(dims.kernel_spatial[i]);
    read_dims.push_back(kernel_dims[d]);
    const bool reversed = reversal[i] != 0;
    if (reversed) offset += std::max<int64_t>(kernel_dims[d] - 1, 0) * kernel_strides[d];
    read_strides.push_back(reversed ? -kernel_strides[d] : kernel_strides[d]);
  }
  const auto out_dim = static_cast<size_t>(dims.kernel_output_feature);
  read_dims.push_back(kernel_dims[out_dim]);
  read_strides.push_back(kernel_strides[out_dim]);
  KILN_ASSIGN_OR_RETURN(ValueId kernel, EmitStridedRead(lowering, op, rhs, std::move(read_dims),
                                                        std::move(read_strides), offset));
  KILN_ASSIGN_OR_RETURN(kernel, EmitConvert(lowering, op, kernel, type));
  std::vector<int64_t> canonical_dims{g.batch};
  canonical_dims.insert(canonical_dims.end(), g.output_spatial.begin(), g.output_spatial.end());
  canonical_dims.push_back(g.output_features);
  std::vector<ValueId> inputs{input, kernel};
  if (padding != kNoValue) inputs.push_back(padding);
  const size_t before = lowering.graph().nodes.size();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, std::move(inputs), {Shape{type, canonical_dims}},
                                          [type, g](RunContext& ctx) -> Status {
                                            if (ctx.num_inputs() > 2) {
                                              KILN_ASSIGN_OR_RETURN(auto run,
                                                                    RunGeometry(g, ctx, 2));
                                              return kernels::DepthwiseConv(type, run, ctx.in(0),
                                                                            ctx.in(1), ctx.out(0));
                                            }
                                            return kernels::DepthwiseConv(type, g, ctx.in(0),
                                                                          ctx.in(1), ctx.out(0));
                                          }));
  // Described for backends when the padding is the op's own (and the
  // node was not folded into a constant).
  if (padding == kNoValue && lowering.graph().nodes.size() > before) {
    lowering.graph().nodes.back().depthwise = std::make_shared<const kernels::ConvGeometry>(g);
  }
  return EmitConvResult(lowering, op, outputs[0], dims, g, out);
}

// A one-group convolution with a window (or strides, padding, dilation):
// one node running im2col and the GEMM block by block (kernels::ConvByBlocks),
// so the column matrix, window positions times the input, never exists
// whole (73.6 MiB for a ResNet 3x3 layer over 8x56x56x64, which the GEMM
// then streamed back from memory).
Status EmitConvByBlocks(Lowering& lowering, const ir::Operation& op, ValueId input, ValueId rhs,
                        const ConvDims& dims, const kernels::ConvGeometry& g, const Shape& out,
                        ElementType type) {
  KILN_ASSIGN_OR_RETURN(ValueId kernel, EmitCanonicalKernel(lowering, op, rhs, dims, g));
  KILN_ASSIGN_OR_RETURN(kernel, EmitConvert(lowering, op, kernel, type));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(op, {input, kernel},
                                          {Shape{type, {g.rows(), g.output_features}}},
                                          [type, g](RunContext& ctx) {
                                            return kernels::ConvByBlocks(type, g, ctx.in(0),
                                                                         ctx.in(1), ctx.out(0));
                                          }));
  lowering.graph().nodes.back().convolution = std::make_shared<const kernels::ConvGeometry>(g);
  return EmitConvResult(lowering, op, outputs[0], dims, g, out);
}

}  // namespace

StatusOr<bool> LowerTransposedProduct(Lowering& lowering, const ir::Operation& transpose) {
  const ir::Operation* dot = transpose.operand(0)->defining_op();
  if (dot == nullptr || dot->code() != ir::OpCode::kDotGeneral ||
      IntsAttr(transpose, "permutation") != std::vector<int64_t>{1, 0} ||
      dot->parent_block() == nullptr || dot->parent_block() != transpose.parent_block() ||
      Uses(*dot->parent_block(), dot->result(0)) != 1) {
    return false;
  }
  ir::Attribute numbers = dot->GetAttr("dot_dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct) ||
      !FieldInts(numbers, "lhs_batching_dimensions").empty() ||
      !FieldInts(numbers, "rhs_batching_dimensions").empty()) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(ValueId lhs, lowering.Input(*dot, 0));
  KILN_ASSIGN_OR_RETURN(ValueId rhs, lowering.Input(*dot, 1));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(transpose.result(0)));
  const size_t first = lowering.graph().nodes.size();
  KILN_RETURN_IF_ERROR(EmitContraction(lowering, transpose, rhs, lhs, out, {},
                                       FieldInts(numbers, "rhs_contracting_dimensions"), {},
                                       FieldInts(numbers, "lhs_contracting_dimensions"),
                                       transpose.result(0)));
  // Plans name nodes by the op they were emitted for: say what this one is.
  for (size_t n = first; n < lowering.graph().nodes.size(); ++n) {
    lowering.graph().nodes[n].detail = "the dot_general's product, transposed";
  }
  return true;
}

Status LowerConvolutionWithPadding(Lowering& lowering, const ir::Operation& op, ValueId padding) {
  ir::Attribute numbers = op.GetAttr("dimension_numbers");
  if (!numbers.Is(ir::AttrKind::kStruct)) {
    return InvalidArgument("convolution without #stablehlo.conv dimension numbers");
  }
  const ConvDims dims = ReadConvDims(numbers);
  KILN_ASSIGN_OR_RETURN(ValueId lhs, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(ValueId rhs, lowering.Input(op, 1));
  const Shape lhs_shape = lowering.graph().shape(lhs);
  const Shape rhs_shape = lowering.graph().shape(rhs);
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(kernels::ConvGeometry g, ReadGeometry(op, dims, lhs_shape, rhs_shape, out));
  const ElementType type = ComputeTypeFor(out.element_type);
  if (!kernels::MatMulAccepts(type)) {
    return Unimplemented("Kiln cannot convolve ", GetElementTypeInfo(out.element_type).name);
  }
  // Input to NHWC, then columns.
  std::vector<int64_t> to_nhwc{dims.input_batch};
  to_nhwc.insert(to_nhwc.end(), dims.input_spatial.begin(), dims.input_spatial.end());
  to_nhwc.push_back(dims.input_feature);
  KILN_ASSIGN_OR_RETURN(ValueId input, EmitPermute(lowering, op, lhs, to_nhwc));
  KILN_ASSIGN_OR_RETURN(input, EmitConvert(lowering, op, input, type));
  if (kernels::DepthwiseConvAccepts(type, g)) {
    return EmitDepthwise(lowering, op, input, rhs, dims, g, out, type, padding);
  }
  if (g.groups() == 1 && padding == kNoValue && !g.columns_are_input()) {
    return EmitConvByBlocks(lowering, op, input, rhs, dims, g, out, type);
  }
  KILN_ASSIGN_OR_RETURN(ValueId columns, EmitIm2Col(lowering, op, input, g, padding));
  KILN_ASSIGN_OR_RETURN(ValueId kernel, EmitCanonicalKernel(lowering, op, rhs, dims, g));
  KILN_ASSIGN_OR_RETURN(kernel, EmitConvert(lowering, op, kernel, type));

  const int64_t groups = g.groups();
  const int64_t outputs = rhs_shape.dims[static_cast<size_t>(dims.kernel_output_feature)];
  const int64_t group_outputs = outputs / groups;
  kernels::MatMulShape shape;
  shape.batch = groups;
  shape.m = g.rows();
  shape.n = group_outputs;
  shape.k = g.window_size() * g.group_features();
  KILN_ASSIGN_OR_RETURN(ValueId product, EmitMatMul(lowering, op, columns, kernel, type, shape,
                                                    {groups, shape.m, group_outputs}));
  // [groups, rows, group outputs] -> [rows, groups x group outputs]: the
  // canonical output [batch, spatial..., features].
  KILN_ASSIGN_OR_RETURN(product,
                        EmitStridedRead(lowering, op, product, {shape.m, groups, group_outputs},
                                        {group_outputs, shape.m * group_outputs, 1}));
  return EmitConvResult(lowering, op, product, dims, g, out);
}

namespace {

Status LowerConvolution(Lowering& lowering, const ir::Operation& op) {
  return LowerConvolutionWithPadding(lowering, op, kNoValue);
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kDotGeneral, LowerDotGeneral},
    {ir::OpCode::kDot, LowerDot},
    {ir::OpCode::kConvolution, LowerConvolution},
};

}  // namespace

std::span<const LoweringRule> LinalgLowerings() { return kRules; }

}  // namespace kiln::compiler
