// chlo.ragged_dot: a dot_general one of whose dimensions is cut into groups
// whose sizes arrive at run time (mixture-of-experts layers). Three modes,
// by the kind of the lhs's ragged dimension (CHLO's definition):
// 1. a row (non-contracting) dimension: [b,m,k] x [g,b,k,n] -> [b,m,n], each
//    row multiplied by the rhs of its group;
// 2. a contracting dimension: [b,m,k] x [b,k,n] -> [g,b,m,n], each group
//    summing over its slice of k;
// 3. a batch dimension: a plain dot_general.
// Modes 1 and 2 bring the operands into the canonical layouts of
// kernels/ragged_dot.h (one GEMM per group, no masked copies) and the
// result back into the op's dimension order.
#include <algorithm>
#include <cctype>
#include <numeric>

#include "base/env.h"
#include "compiler/contraction.h"
#include "compiler/lowering.h"
#include "kernels/ragged_dot.h"

namespace kiln::compiler {
namespace {

struct RaggedDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contract, rhs_contract, lhs_ragged, rhs_group;
};

// The integers of `field = [1, 2]` in the attribute's text (#chlo.ragged_dot
// is kept as its text, see docs/ir.md).
StatusOr<std::vector<int64_t>> ListField(std::string_view text, std::string_view field) {
  size_t at = 0;
  while ((at = text.find(field, at)) != std::string_view::npos) {
    const bool starts = at == 0 || !(std::isalnum(static_cast<unsigned char>(text[at - 1])) ||
                                     text[at - 1] == '_');
    const size_t after = at + field.size();
    const size_t equals = text.find_first_not_of(" \n\t", after);
    if (starts && equals != std::string_view::npos && text[equals] == '=') break;
    at = after;
  }
  if (at == std::string_view::npos) {
    return InvalidArgument("#chlo.ragged_dot has no field ", field);
  }
  const size_t open = text.find('[', at), close = text.find(']', at);
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return InvalidArgument("#chlo.ragged_dot's ", field, " is not a list [..]");
  }
  std::vector<int64_t> values;
  std::string_view list = text.substr(open + 1, close - open - 1);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front())))
      item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back())))
      item.remove_suffix(1);
    if (!item.empty()) {
      KILN_ASSIGN_OR_RETURN(int64_t value, ParseInt64(item, StrCat("#chlo.ragged_dot's ", field)));
      values.push_back(value);
    }
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return values;
}

StatusOr<RaggedDims> ReadDims(const ir::Operation& op) {
  ir::Attribute attribute = op.GetAttr("ragged_dot_dimension_numbers");
  const std::string_view text = attribute.Is(ir::AttrKind::kOpaque) ||
                                        attribute.Is(ir::AttrKind::kString)
                                    ? std::string_view(attribute->text)
                                    : std::string_view();
  if (text.empty()) return InvalidArgument("chlo.ragged_dot without ragged_dot_dimension_numbers");
  RaggedDims dims;
  KILN_ASSIGN_OR_RETURN(dims.lhs_batch, ListField(text, "lhs_batching_dimensions"));
  KILN_ASSIGN_OR_RETURN(dims.rhs_batch, ListField(text, "rhs_batching_dimensions"));
  KILN_ASSIGN_OR_RETURN(dims.lhs_contract, ListField(text, "lhs_contracting_dimensions"));
  KILN_ASSIGN_OR_RETURN(dims.rhs_contract, ListField(text, "rhs_contracting_dimensions"));
  KILN_ASSIGN_OR_RETURN(dims.lhs_ragged, ListField(text, "lhs_ragged_dimensions"));
  KILN_ASSIGN_OR_RETURN(dims.rhs_group, ListField(text, "rhs_group_dimensions"));
  if (dims.lhs_ragged.size() != 1 || dims.lhs_batch.size() != dims.rhs_batch.size() ||
      dims.lhs_contract.size() != dims.rhs_contract.size() || dims.rhs_group.size() > 1) {
    return InvalidArgument("chlo.ragged_dot needs one lhs ragged dimension, at most one rhs "
                           "group dimension and matching batch and contracting lists");
  }
  return dims;
}

bool Holds(std::span<const int64_t> list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// The dimensions of a rank-`rank` array in none of `taken`, in order.
std::vector<int64_t> Others(int64_t rank, std::initializer_list<std::span<const int64_t>> taken) {
  std::vector<int64_t> others;
  for (int64_t d = 0; d < rank; ++d) {
    bool used = false;
    for (std::span<const int64_t> list : taken) used = used || Holds(list, d);
    if (!used) others.push_back(d);
  }
  return others;
}

int64_t SizeOf(const Shape& shape, std::span<const int64_t> dims) {
  int64_t size = 1;
  for (int64_t d : dims) size *= shape.dims[static_cast<size_t>(d)];
  return size;
}

std::vector<int64_t> Concat(std::initializer_list<std::span<const int64_t>> lists) {
  std::vector<int64_t> all;
  for (std::span<const int64_t> list : lists) all.insert(all.end(), list.begin(), list.end());
  return all;
}

std::vector<int64_t> DimsOf(const Shape& shape, std::span<const int64_t> order) {
  std::vector<int64_t> dims;
  for (int64_t d : order) dims.push_back(shape.dims[static_cast<size_t>(d)]);
  return dims;
}

// How modes 1 and 2 bring the operands into kernels/ragged_dot.h's
// canonical layouts and the product back into the result's order.
struct RaggedLayout {
  std::vector<int64_t> lhs_order, rhs_order;  // the operands' dimensions, canonical order
  std::vector<int64_t> canonical_dims;        // of the product
  std::vector<int64_t> permutation;  // result dimension j is canonical dimension permutation[j]
};

// Mode 1: rows of group g take rhs[g]. Sets the mode, inner, k and n of
// `shape`.
StatusOr<RaggedLayout> LayOutRows(const RaggedDims& dims, const Shape& lhs, const Shape& rhs,
                                  const Shape& sizes, kernels::RaggedDotShape& shape) {
  const auto lhs_rank = static_cast<int64_t>(lhs.dims.size());
  const auto rhs_rank = static_cast<int64_t>(rhs.dims.size());
  const int64_t ragged = dims.lhs_ragged[0];
  if (dims.rhs_group.size() != 1) return InvalidArgument("mode 1 needs an rhs group dimension");
  shape.mode = kernels::RaggedDotShape::Mode::kRows;
  const std::vector<int64_t> free = Others(lhs_rank, {dims.lhs_batch, dims.lhs_contract});
  std::vector<int64_t> other_free;
  for (int64_t d : free) {
    if (d != ragged) other_free.push_back(d);
  }
  const std::vector<int64_t> rhs_free = Others(rhs_rank,
                                               {dims.rhs_batch, dims.rhs_contract, dims.rhs_group});
  const int64_t ragged_list[] = {ragged};
  RaggedLayout layout;
  layout.lhs_order = Concat({dims.lhs_batch, ragged_list, other_free, dims.lhs_contract});
  layout.rhs_order = Concat({dims.rhs_group, dims.rhs_batch, dims.rhs_contract, rhs_free});
  shape.inner = SizeOf(lhs, other_free);
  shape.k = SizeOf(lhs, dims.lhs_contract);
  shape.n = SizeOf(rhs, rhs_free);
  if (shape.groups != rhs.dims[static_cast<size_t>(dims.rhs_group[0])]) {
    return InvalidArgument("chlo.ragged_dot: group_sizes ", sizes.ToString(), " for ",
                           rhs.dims[static_cast<size_t>(dims.rhs_group[0])], " rhs groups");
  }
  layout.canonical_dims = Concat({DimsOf(lhs, dims.lhs_batch), DimsOf(lhs, ragged_list),
                                  DimsOf(lhs, other_free), DimsOf(rhs, rhs_free)});
  // The result lists the lhs's free dimensions in their order; the
  // canonical form puts the ragged one first.
  const std::vector<int64_t> canonical_free = Concat({ragged_list, other_free});
  const auto batch = static_cast<int64_t>(dims.lhs_batch.size());
  for (int64_t j = 0; j < static_cast<int64_t>(layout.canonical_dims.size()); ++j) {
    layout.permutation.push_back(j);
  }
  for (size_t j = 0; j < free.size(); ++j) {
    const auto at = std::find(canonical_free.begin(), canonical_free.end(), free[j]);
    layout.permutation[static_cast<size_t>(batch) + j] = batch + static_cast<int64_t>(
                                                                     at - canonical_free.begin());
  }
  return layout;
}

// Mode 2: group g sums over its slice of the ragged contracting dimension;
// the lhs goes in transposed ([depth, rows]). Sets the mode, inner, m and n
// of `shape` (its groups already set).
StatusOr<RaggedLayout> LayOutDepth(const RaggedDims& dims, const Shape& lhs, const Shape& rhs,
                                   kernels::RaggedDotShape& shape) {
  const auto lhs_rank = static_cast<int64_t>(lhs.dims.size());
  const auto rhs_rank = static_cast<int64_t>(rhs.dims.size());
  const int64_t ragged = dims.lhs_ragged[0];
  shape.mode = kernels::RaggedDotShape::Mode::kDepth;
  const auto position = std::find(dims.lhs_contract.begin(), dims.lhs_contract.end(), ragged);
  if (position == dims.lhs_contract.end()) {
    return InvalidArgument("chlo.ragged_dot's lhs ragged dimension ", ragged,
                           " is neither a row nor a contracting dimension");
  }
  const auto index = static_cast<size_t>(position - dims.lhs_contract.begin());
  std::vector<int64_t> lhs_contract = {ragged}, rhs_contract = {dims.rhs_contract[index]};
  for (size_t i = 0; i < dims.lhs_contract.size(); ++i) {
    if (i == index) continue;
    lhs_contract.push_back(dims.lhs_contract[i]);
    rhs_contract.push_back(dims.rhs_contract[i]);
  }
  const std::vector<int64_t> lhs_free = Others(lhs_rank, {dims.lhs_batch, dims.lhs_contract});
  const std::vector<int64_t> rhs_free = Others(rhs_rank, {dims.rhs_batch, dims.rhs_contract});
  RaggedLayout layout;
  layout.lhs_order = Concat({dims.lhs_batch, lhs_contract, lhs_free});
  layout.rhs_order = Concat({dims.rhs_batch, rhs_contract, rhs_free});
  shape.inner = SizeOf(lhs, std::span(lhs_contract).subspan(1));
  shape.m = SizeOf(lhs, lhs_free);
  shape.n = SizeOf(rhs, rhs_free);
  layout.canonical_dims = Concat({std::vector<int64_t>{shape.groups}, DimsOf(lhs, dims.lhs_batch),
                                  DimsOf(lhs, lhs_free), DimsOf(rhs, rhs_free)});
  layout.permutation.resize(layout.canonical_dims.size());
  std::iota(layout.permutation.begin(), layout.permutation.end(), 0);
  return layout;
}

// chlo.ragged_dot: mode 3 as a dot_general; modes 1 and 2 as permutes into
// the canonical layouts, one RaggedMatMul node and a permute back.
Status LowerRaggedDot(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(RaggedDims dims, ReadDims(op));
  KILN_ASSIGN_OR_RETURN(Shape lhs, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape rhs, lowering.ShapeOf(op.operand(1)));
  KILN_ASSIGN_OR_RETURN(Shape sizes, lowering.ShapeOf(op.operand(2)));
  KILN_ASSIGN_OR_RETURN(Shape out, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(ValueId lhs_value, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(ValueId rhs_value, lowering.Input(op, 1));
  KILN_ASSIGN_OR_RETURN(ValueId sizes_value, lowering.Input(op, 2));
  const auto lhs_rank = static_cast<int64_t>(lhs.dims.size());
  const auto rhs_rank = static_cast<int64_t>(rhs.dims.size());
  if (lhs_rank >= rhs_rank && lhs_rank >= static_cast<int64_t>(out.dims.size())) {
    // Mode 3: the groups split a batch dimension, which no product crosses.
    return EmitContraction(lowering, op, lhs_value, rhs_value, out, dims.lhs_batch,
                           dims.lhs_contract, dims.rhs_batch, dims.rhs_contract, op.result(0));
  }
  const ElementType type = ComputeTypeFor(out.element_type);
  if (sizes.dims.empty()) return InvalidArgument("chlo.ragged_dot's group_sizes is a scalar");
  kernels::RaggedDotShape shape;
  shape.batch = SizeOf(lhs, dims.lhs_batch);
  shape.groups = sizes.dims.back();
  shape.ragged = lhs.dims[static_cast<size_t>(dims.lhs_ragged[0])];
  shape.sizes_per_batch = sizes.dims.size() > 1;
  if (shape.sizes_per_batch && sizes.NumElements() != shape.batch * shape.groups) {
    return InvalidArgument("chlo.ragged_dot's group_sizes ", sizes.ToString(),
                           " is neither [groups] nor [batch..., groups]");
  }
  KILN_ASSIGN_OR_RETURN(RaggedLayout layout, lhs_rank < rhs_rank
                                                 ? LayOutRows(dims, lhs, rhs, sizes, shape)
                                                 : LayOutDepth(dims, lhs, rhs, shape));
  if (layout.canonical_dims.size() != out.dims.size() ||
      DimsOf(Shape{out.element_type, layout.canonical_dims}, layout.permutation) != out.dims) {
    return InvalidArgument("chlo.ragged_dot's result ", out.ToString(),
                           " does not have the "
                           "shape its operands and dimension numbers give");
  }
  KILN_ASSIGN_OR_RETURN(ValueId a, EmitPermute(lowering, op, lhs_value, layout.lhs_order));
  KILN_ASSIGN_OR_RETURN(a, EmitConvert(lowering, op, a, type));
  KILN_ASSIGN_OR_RETURN(ValueId b, EmitPermute(lowering, op, rhs_value, layout.rhs_order));
  KILN_ASSIGN_OR_RETURN(b, EmitConvert(lowering, op, b, type));
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> product,
      lowering.EmitNode(op, {a, b, sizes_value}, {Shape{type, layout.canonical_dims}},
                        [type, shape, sizes_type = sizes.element_type](RunContext& ctx) {
                          return kernels::RaggedMatMul(type, shape, ctx.in(0), ctx.in(1),
                                                       sizes_type, ctx.in(2), ctx.out(0));
                        }));
  KILN_ASSIGN_OR_RETURN(ValueId result, EmitPermute(lowering, op, product[0], layout.permutation));
  KILN_ASSIGN_OR_RETURN(result, EmitConvert(lowering, op, result, out.element_type));
  lowering.Bind(op.result(0), result);
  return Status::Ok();
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kChloRaggedDot, LowerRaggedDot},
};

}  // namespace

std::span<const LoweringRule> RaggedDotLowerings() { return kRules; }

}  // namespace kiln::compiler
