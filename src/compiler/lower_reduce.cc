// Lowering of the reductions: reduce, reduce_window and select_and_scatter.
// A body the region patterns recognize (one binary op, one compare) runs as
// a kernel from kernels/reduce.h; any other body runs as its region, once
// per element, on the node's thread.
#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>

#include "compiler/lowering.h"
#include "compiler/region_patterns.h"
#include "compiler/scalar_program.h"
#include "kernels/copy.h"
#include "kernels/reduce.h"

namespace kiln::compiler {
namespace {

// Scalars a generic body reads and writes: 16 bytes fits every element type
// (c128), aligned for any of them.
struct alignas(16) Scalar {
  uint8_t bytes[16];
};

}  // namespace

// The element types of a reduction's inputs, after checking that its body
// takes and returns 0-d tensors of exactly those types (a body that promotes
// types, as quantized programs do, is not supported yet).
StatusOr<std::vector<ElementType>> ReductionTypes(Lowering& lowering, const ir::Operation& op,
                                                  const ir::Region& body, size_t count) {
  std::vector<ElementType> types;
  const ir::Block& block = body.block(0);
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(Shape input, lowering.ShapeOf(op.operand(i)));
    types.push_back(input.element_type);
  }
  if (block.num_arguments() != 2 * count) {
    return InvalidArgument("the body takes ", block.num_arguments(), " arguments, expected ",
                           2 * count);
  }
  for (size_t a = 0; a < block.num_arguments(); ++a) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(block.argument(a)));
    if (!shape.dims.empty() || shape.element_type != types[a % count]) {
      return Unimplemented("reduction bodies taking ", shape.ToString(), " for inputs of ",
                           GetElementTypeInfo(types[a % count]).name,
                           " (promoting or non-scalar bodies) are not supported yet");
    }
  }
  return types;
}

// The fast kernel ops for a recognized body, when every type accepts them.
std::optional<std::vector<kernels::ReduceOp>> FastOps(const ir::Region& body,
                                                      const std::vector<ElementType>& types) {
  std::optional<std::vector<kernels::ReduceOp>> ops = MatchReductionBody(body);
  if (!ops || ops->size() != types.size()) return std::nullopt;
  for (size_t i = 0; i < types.size(); ++i) {
    if (!kernels::ReduceOpAccepts((*ops)[i], types[i])) return std::nullopt;
  }
  return ops;
}

namespace {

// The element `op`'s identity: x op identity == x for every x of `type`,
// bit for bit (float sums: -0, as +0 + -0 is +0); nullopt for the types
// this does not know.
template <typename T>
std::optional<std::vector<uint8_t>> BytesOf(T value) {
  std::vector<uint8_t> bytes(sizeof(T));
  std::memcpy(bytes.data(), &value, sizeof(T));
  return bytes;
}

template <typename T>
std::optional<std::vector<uint8_t>> IntegerIdentity(kernels::ReduceOp op) {
  switch (op) {
    case kernels::ReduceOp::kAdd:
    case kernels::ReduceOp::kOr:
    case kernels::ReduceOp::kXor: return BytesOf<T>(0);
    case kernels::ReduceOp::kMultiply: return BytesOf<T>(1);
    case kernels::ReduceOp::kAnd: return BytesOf<T>(static_cast<T>(~T{0}));
    case kernels::ReduceOp::kMaximum: return BytesOf<T>(std::numeric_limits<T>::lowest());
    case kernels::ReduceOp::kMinimum: return BytesOf<T>(std::numeric_limits<T>::max());
  }
  return std::nullopt;
}

template <typename T>
std::optional<std::vector<uint8_t>> FloatIdentity(kernels::ReduceOp op) {
  switch (op) {
    case kernels::ReduceOp::kAdd: return BytesOf<T>(T(-0.0));
    case kernels::ReduceOp::kMultiply: return BytesOf<T>(T(1));
    case kernels::ReduceOp::kMaximum: return BytesOf<T>(-std::numeric_limits<T>::infinity());
    case kernels::ReduceOp::kMinimum: return BytesOf<T>(std::numeric_limits<T>::infinity());
    default: return std::nullopt;
  }
}

std::optional<std::vector<uint8_t>> IdentityOf(kernels::ReduceOp op, ElementType type) {
  switch (type) {
    case ElementType::kPred:
      if (op == kernels::ReduceOp::kAnd || op == kernels::ReduceOp::kMinimum ||
          op == kernels::ReduceOp::kMultiply) {
        return BytesOf<uint8_t>(1);
      }
      if (op == kernels::ReduceOp::kOr || op == kernels::ReduceOp::kXor ||
          op == kernels::ReduceOp::kMaximum) {
        return BytesOf<uint8_t>(0);
      }
      return std::nullopt;
    case ElementType::kS8: return IntegerIdentity<int8_t>(op);
    case ElementType::kS16: return IntegerIdentity<int16_t>(op);
    case ElementType::kS32: return IntegerIdentity<int32_t>(op);
    case ElementType::kS64: return IntegerIdentity<int64_t>(op);
    case ElementType::kU8: return IntegerIdentity<uint8_t>(op);
    case ElementType::kU16: return IntegerIdentity<uint16_t>(op);
    case ElementType::kU32: return IntegerIdentity<uint32_t>(op);
    case ElementType::kU64: return IntegerIdentity<uint64_t>(op);
    case ElementType::kF32: return FloatIdentity<float>(op);
    case ElementType::kF64: return FloatIdentity<double>(op);
    default: return std::nullopt;
  }
}

// A reduce of one array over dimensions of size 1 only, from its op's
// identity (JAX's `all` over the index vector of a gather in fill mode,
// `sum` over a kept dimension of 1): the operand itself, a view. As a node
// it cost a pass over the array and kept the ops after it from fusing
// with those before.
bool IsReshapeOfOperand(Lowering& lowering, const ir::Operation& op, kernels::ReduceOp reduce_op,
                        ElementType type, const Shape& input, const std::vector<int64_t>& reduced) {
  for (int64_t d : reduced) {
    if (d < 0 || d >= static_cast<int64_t>(input.dims.size()) ||
        input.dims[static_cast<size_t>(d)] != 1) {
      return false;
    }
  }
  StatusOr<ValueId> init = lowering.Input(op, 1);
  if (!init.ok()) return false;
  const auto& data = lowering.graph().values[static_cast<size_t>(*init)].constant;
  const std::optional<std::vector<uint8_t>> identity = IdentityOf(reduce_op, type);
  return data != nullptr && identity && *data == *identity;
}

// Element offset of index `linear` of the row-major space `dims` in an
// array with element `strides`.
int64_t OffsetOf(int64_t linear, std::span<const int64_t> dims, std::span<const int64_t> strides) {
  int64_t offset = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    offset += (linear % dims[d]) * strides[d];
    linear /= dims[d];
  }
  return offset;
}

// Folds elements into N accumulators by running body region 0:
// acc = body(acc..., x...). Double-buffered, since a region's results may not
// alias its arguments.
class Accumulators {
 public:
  explicit Accumulators(std::span<const ElementType> types)
      : types_(types.begin(), types.end()),
        slots_(2 * types.size()),
        args_(2 * types.size()),
        results_(types.size()) {}

  void Reset(RunContext& ctx, size_t first_init) {
    for (size_t i = 0; i < types_.size(); ++i) {
      std::memcpy(Current(i), ctx.in(first_init + i), ElementBytes(types_[i]));
    }
  }
  // Folds the elements at element `offset` of inputs 0..N-1.
  Status Fold(RunContext& ctx, int64_t offset) {
    const size_t count = types_.size();
    for (size_t i = 0; i < count; ++i) {
      args_[i] = Current(i);
      args_[count + i] = static_cast<const uint8_t*>(ctx.in(i)) +
                         offset * static_cast<int64_t>(ElementBytes(types_[i]));
      results_[i] = Next(i);
    }
    KILN_RETURN_IF_ERROR(ctx.RunRegion(0, args_, results_));
    flipped_ = !flipped_;
    return Status::Ok();
  }
  void Store(RunContext& ctx, int64_t index) {
    for (size_t i = 0; i < types_.size(); ++i) {
      const size_t bytes = ElementBytes(types_[i]);
      std::memcpy(static_cast<uint8_t*>(ctx.out(i)) + index * static_cast<int64_t>(bytes),
                  Current(i), bytes);
    }
  }

 private:
  void* Current(size_t i) { return slots_[(flipped_ ? types_.size() : 0) + i].bytes; }
  void* Next(size_t i) { return slots_[(flipped_ ? 0 : types_.size()) + i].bytes; }

  std::vector<ElementType> types_;
  std::vector<Scalar> slots_;
  std::vector<const void*> args_;
  std::vector<void*> results_;
  bool flipped_ = false;
};

// What a reduction run through its region keeps across runs (in the
// ExecutionEnv, so steady-state runs allocate nothing): the accumulators and
// the window offsets.
struct RegionFold {
  explicit RegionFold(std::span<const ElementType> types) : acc(types) {}
  Accumulators acc;
  std::vector<int64_t> offsets;
  std::vector<int64_t> scratch;
};

// Where a reduce's elements are: outputs over the kept dimensions, each
// folding the reduced dimensions in row-major order.
struct ReduceLayout {
  std::vector<int64_t> kept_dims, kept_strides, reduced_dims, reduced_strides;
  int64_t outputs = 1;
  int64_t per_output = 1;
};

ReduceLayout LayoutOf(const Shape& input, const std::vector<int64_t>& reduced) {
  ReduceLayout layout;
  std::vector<int64_t> strides(input.dims.size());
  kernels::DenseStrides(input.dims, strides);
  for (size_t d = 0; d < input.dims.size(); ++d) {
    const bool is_reduced = std::binary_search(reduced.begin(), reduced.end(),
                                               static_cast<int64_t>(d));
    (is_reduced ? layout.reduced_dims : layout.kept_dims).push_back(input.dims[d]);
    (is_reduced ? layout.reduced_strides : layout.kept_strides).push_back(strides[d]);
    (is_reduced ? layout.per_output : layout.outputs) *= input.dims[d];
  }
  return layout;
}

// offsets[l] = base + the offset of index first + l of the row-major space
// `dims` (element `strides`), for l < lanes: one division per dimension,
// then an odometer.
void FillOffsets(int64_t base, int64_t first, int64_t lanes, std::span<const int64_t> dims,
                 std::span<const int64_t> strides, int64_t* offsets) {
  if (lanes <= 0) return;
  const size_t rank = dims.size();
  int64_t index[16];
  if (rank > 16) {
    for (int64_t l = 0; l < lanes; ++l) offsets[l] = base + OffsetOf(first + l, dims, strides);
    return;
  }
  int64_t offset = base;
  int64_t rest = first;
  for (size_t d = rank; d-- > 0;) {
    index[d] = rest % dims[d];
    rest /= dims[d];
    offset += index[d] * strides[d];
  }
  for (int64_t l = 0;;) {
    offsets[l] = offset;
    if (++l == lanes) return;
    for (size_t d = rank; d-- > 0;) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= index[d] * strides[d];
      index[d] = 0;
    }
  }
}

// out[l] = base[offsets[l]] for `lanes` elements of `bytes` each.
void GatherLanes(const uint8_t* base, size_t bytes, const int64_t* offsets, int64_t lanes,
                 uint8_t* out) {
  auto gather = [&]<typename U>() {
    const U* in = reinterpret_cast<const U*>(base);
    U* y = reinterpret_cast<U*>(out);
    for (int64_t l = 0; l < lanes; ++l) y[l] = in[offsets[l]];
  };
  switch (bytes) {
    case 1: gather.operator()<uint8_t>(); return;
    case 2: gather.operator()<uint16_t>(); return;
    case 4: gather.operator()<uint32_t>(); return;
    case 8: gather.operator()<uint64_t>(); return;
    default:
      for (int64_t l = 0; l < lanes; ++l) {
        std::memcpy(out + l * static_cast<int64_t>(bytes),
                    base + offsets[l] * static_cast<int64_t>(bytes), bytes);
      }
  }
}

// A generic reduce whose body is a ScalarProgram: many folds per kernel
// call. With many outputs, lanes are outputs and each folds its elements in
// order (as the region would); with few long ones, lanes are elements of
// one output folded as a tree (the spec leaves the order open; XLA's CPU
// backend also folds long reductions as trees), and the init value is
// folded in once, last.
class BatchedReduce {
 public:
  BatchedReduce(const ScalarProgram& program, const std::vector<ElementType>& types,
                const ReduceLayout& layout)
      : program_(program), types_(types), layout_(layout), scratch_(program) {
    const size_t count = types.size();
    for (size_t i = 0; i < 3 * count; ++i) {
      const size_t bytes = ElementBytes(types[i % count]) * ScalarProgram::kMaxLanes;
      lanes_.emplace_back(bytes / sizeof(Scalar) + 1);
    }
    args_.resize(2 * count);
    results_.resize(count);
    offsets_.resize(ScalarProgram::kMaxLanes);
    elements_.resize(count);
    own_.resize(count);
    bases_.resize(ScalarProgram::kMaxLanes);
  }

  Status Run(RunContext& ctx) {
    const int64_t lanes = ScalarProgram::kMaxLanes;
    const int64_t outputs = layout_.outputs;
    const int64_t per_output = layout_.per_output;
    if (outputs == 0) return Status::Ok();
    const int64_t by_outputs = (outputs + lanes - 1) / lanes * per_output;
    const int64_t by_trees = outputs * ((per_output + lanes - 1) / lanes + 9);
    if (per_output == 0 || by_outputs <= by_trees) return ByOutputs(ctx);
    for (int64_t o = 0; o < outputs; ++o) KILN_RETURN_IF_ERROR(Tree(ctx, o));
    return Status::Ok();
  }

 private:
  size_t count() const { return types_.size(); }
  size_t bytes(size_t i) const { return ElementBytes(types_[i]); }
  // Lane buffers: accumulators (two sets) and elements.
  uint8_t* acc(size_t set, size_t i) { return lanes_[set * count() + i][0].bytes; }
  uint8_t* elements(size_t i) { return lanes_[2 * count() + i][0].bytes; }
  const uint8_t* input(RunContext& ctx, size_t i) { return static_cast<const uint8_t*>(ctx.in(i)); }

  // Gathers lane l = input element at offsets_[l] of every operand.
  void Gather(RunContext& ctx, int64_t lanes) {
    for (size_t i = 0; i < count(); ++i) {
      GatherLanes(input(ctx, i), bytes(i), offsets_.data(), lanes, elements(i));
    }
  }
  // next = body(current (lanes from `from`), second (lanes from `at`)).
  Status Step(int64_t lanes, size_t current, int64_t from,
              const std::vector<const uint8_t*>& second, int64_t at) {
    for (size_t i = 0; i < count(); ++i) {
      args_[i] = acc(current, i) + from * static_cast<int64_t>(bytes(i));
      args_[count() + i] = second[i] + at * static_cast<int64_t>(bytes(i));
      results_[i] = acc(1 - current, i);
    }
    return program_.Run(lanes, args_, results_, scratch_);
  }
  const std::vector<const uint8_t*>& Elements() {
    for (size_t i = 0; i < count(); ++i) elements_[i] = elements(i);
    return elements_;
  }

  Status ByOutputs(RunContext& ctx) {
    const std::vector<const uint8_t*>& xs = Elements();
    std::vector<int64_t>& bases = bases_;
    for (int64_t start = 0; start < layout_.outputs; start += ScalarProgram::kMaxLanes) {
      const int64_t lanes = std::min(ScalarProgram::kMaxLanes, layout_.outputs - start);
      FillOffsets(0, start, lanes, layout_.kept_dims, layout_.kept_strides, bases.data());
      size_t current = 0;
      for (size_t i = 0; i < count(); ++i) {
        for (int64_t l = 0; l < lanes; ++l) {
          std::memcpy(acc(current, i) + l * static_cast<int64_t>(bytes(i)), ctx.in(count() + i),
                      bytes(i));
        }
      }
      for (int64_t r = 0; r < layout_.per_output; ++r) {
        const int64_t offset = OffsetOf(r, layout_.reduced_dims, layout_.reduced_strides);
        for (size_t l = 0; l < static_cast<size_t>(lanes); ++l) offsets_[l] = bases[l] + offset;
        Gather(ctx, lanes);
        KILN_RETURN_IF_ERROR(Step(lanes, current, 0, xs, 0));
        current = 1 - current;
      }
      for (size_t i = 0; i < count(); ++i) {
        std::memcpy(static_cast<uint8_t*>(ctx.out(i)) + start * static_cast<int64_t>(bytes(i)),
                    acc(current, i), static_cast<size_t>(lanes) * bytes(i));
      }
    }
    return Status::Ok();
  }

  Status Tree(RunContext& ctx, int64_t output) {
    const int64_t base = OffsetOf(output, layout_.kept_dims, layout_.kept_strides);
    const int64_t total = layout_.per_output;
    const int64_t width = std::min(ScalarProgram::kMaxLanes, total);
    auto gather_from = [&](int64_t first, int64_t lanes) {
      FillOffsets(base, first, lanes, layout_.reduced_dims, layout_.reduced_strides,
                  offsets_.data());
      Gather(ctx, lanes);
    };
    // Lane l starts as element l, then folds elements l + k * width.
    gather_from(0, width);
    for (size_t i = 0; i < count(); ++i) {
      std::memcpy(acc(0, i), elements(i), static_cast<size_t>(width) * bytes(i));
    }
    const std::vector<const uint8_t*>& xs = Elements();
    for (int64_t first = width; first < total; first += width) {
      const int64_t lanes = std::min(width, total - first);
      gather_from(first, lanes);
      KILN_RETURN_IF_ERROR(Step(lanes, 0, 0, xs, 0));
      CopyBack(lanes);
    }
    // Halve: lane l folds lane l + ceil(active / 2).
    std::vector<const uint8_t*>& own = own_;
    for (int64_t active = width; active > 1;) {
      const int64_t upper = (active + 1) / 2;
      const int64_t folds = active / 2;
      for (size_t i = 0; i < count(); ++i) own[i] = acc(0, i);
      KILN_RETURN_IF_ERROR(Step(folds, 0, 0, own, upper));
      CopyBack(folds);
      active = upper;
    }
    // out = body(init, folded).
    for (size_t i = 0; i < count(); ++i) {
      args_[i] = ctx.in(count() + i);
      args_[count() + i] = acc(0, i);
      results_[i] = static_cast<uint8_t*>(ctx.out(i)) + output * static_cast<int64_t>(bytes(i));
    }
    return program_.Run(1, args_, results_, scratch_);
  }
  // Accumulator set 1's first `lanes` lanes back into set 0.
  void CopyBack(int64_t lanes) {
    for (size_t i = 0; i < count(); ++i) {
      std::memcpy(acc(0, i), acc(1, i), static_cast<size_t>(lanes) * bytes(i));
    }
  }

  const ScalarProgram& program_;
  const std::vector<ElementType>& types_;
  const ReduceLayout& layout_;
  ScalarProgram::Scratch scratch_;
  std::vector<std::vector<Scalar>> lanes_;
  std::vector<const void*> args_;
  std::vector<void*> results_;
  std::vector<int64_t> offsets_;
  // Reused by every run (the object is kept in the ExecutionEnv).
  std::vector<const uint8_t*> elements_;
  std::vector<const uint8_t*> own_;
  std::vector<int64_t> bases_;
};

Status LowerReduce(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  KILN_ASSIGN_OR_RETURN(std::vector<ElementType> types,
                        ReductionTypes(lowering, op, op.region(0), count));
  KILN_ASSIGN_OR_RETURN(Shape input, lowering.ShapeOf(op.operand(0)));
  std::vector<int64_t> reduced = IntsAttr(op, "dimensions");
  std::sort(reduced.begin(), reduced.end());
  if (auto ops = FastOps(op.region(0), types)) {
    if (count == 1 && IsReshapeOfOperand(lowering, op, (*ops)[0], types[0], input, reduced)) {
      KILN_ASSIGN_OR_RETURN(ValueId operand, lowering.Input(op, 0));
      KILN_ASSIGN_OR_RETURN(Shape output, lowering.ShapeOf(op.result(0)));
      // The operand's elements in order, seen with the result's dimensions
      // (the kept ones).
      std::vector<int> axis;
      for (size_t d = 0; d < input.dims.size(); ++d) {
        if (!std::binary_search(reduced.begin(), reduced.end(), static_cast<int64_t>(d))) {
          axis.push_back(static_cast<int>(d));
        }
      }
      const size_t rank = axis.size();
      return lowering.EmitRead(op, MakeRead(operand, output.dims,
                                            std::vector<int64_t>(input.dims.size(), 0),
                                            std::move(axis), std::vector<int64_t>(rank, 1)));
    }
    Graph& graph = lowering.graph();
    const size_t before = graph.nodes.size();
    RunFn run = [ops = *ops, types, dims = input.dims, reduced](RunContext& ctx) {
      const size_t n = types.size();
      for (size_t i = 0; i < n; ++i) {
        KILN_RETURN_IF_ERROR(kernels::Reduce(ops[i], types[i], ctx.in(i), dims, reduced,
                                             ctx.in(n + i), ctx.out(i)));
      }
      return Status::Ok();
    };
    KILN_RETURN_IF_ERROR(lowering.Emit(op, std::move(run)));
    const size_t rank = input.dims.size();
    // One array reduced over consecutive dimensions: what a backend
    // compiling nodes reads (ReductionShape).
    bool consecutive = count == 1 && !reduced.empty();
    for (size_t k = 1; k < reduced.size() && consecutive; ++k) {
      consecutive = reduced[k] == reduced[k - 1] + 1;
    }
    if (consecutive && graph.nodes.size() > before) {
      auto shape = std::make_shared<ReductionShape>();
      shape->op = (*ops)[0];
      shape->type = types[0];
      shape->outer = shape->size = shape->inner = 1;
      for (size_t d = 0; d < rank; ++d) {
        const int64_t dim = input.dims[d];
        const auto at = static_cast<int64_t>(d);
        (at < reduced.front()  ? shape->outer
         : at > reduced.back() ? shape->inner
                               : shape->size) *= dim;
      }
      graph.nodes.back().reduction = std::move(shape);
    }
    // One array reduced over its trailing dimensions: fusion may compute
    // the operand inside the reduction (RowReduction).
    bool trailing = count == 1 && !reduced.empty();
    for (size_t k = 0; k < reduced.size() && trailing; ++k) {
      trailing = reduced[k] == static_cast<int64_t>(rank - reduced.size() + k);
    }
    if (trailing && graph.nodes.size() > before &&
        GetElementTypeInfo(types[0]).storage_bytes * 8 ==
            static_cast<size_t>(GetElementTypeInfo(types[0]).bit_width)) {
      auto row = std::make_shared<RowReduction>();
      row->op = (*ops)[0];
      row->type = types[0];
      row->cols = 1;
      for (int64_t d : reduced) row->cols *= input.dims[static_cast<size_t>(d)];
      row->rows = row->cols == 0 ? 0 : input.NumElements() / row->cols;
      graph.nodes.back().row_reduction = std::move(row);
    }
    return Status::Ok();
  }
  const ReduceLayout layout = LayoutOf(input, reduced);
  if (std::optional<ScalarProgram> body = ScalarProgram::Compile(op.region(0))) {
    auto program = std::make_shared<const ScalarProgram>(std::move(*body));
    return lowering.Emit(op, [program, types, layout](RunContext& ctx) {
      return ctx.env().State<BatchedReduce>(&ctx.node(), *program, types, layout).Run(ctx);
    });
  }
  // Anything else: the region, once per element.
  return lowering.EmitWithRegions(op, [types, layout](RunContext& ctx) -> Status {
    Accumulators& acc = ctx.env().State<RegionFold>(&ctx.node(), types).acc;
    for (int64_t o = 0; o < layout.outputs; ++o) {
      acc.Reset(ctx, types.size());
      const int64_t base = OffsetOf(o, layout.kept_dims, layout.kept_strides);
      for (int64_t r = 0; r < layout.per_output; ++r) {
        KILN_RETURN_IF_ERROR(acc.Fold(ctx, base + OffsetOf(r, layout.reduced_dims,
                                                           layout.reduced_strides)));
      }
      acc.Store(ctx, o);
    }
    return Status::Ok();
  });
}

// The window attributes of reduce_window / select_and_scatter, one per
// dimension of a rank-`rank` input (absent attributes are all ones / zeros;
// select_and_scatter has no dilations).
std::vector<kernels::WindowDim> WindowOf(const ir::Operation& op, size_t rank) {
  const bool dilated = op.code() == ir::OpCode::kReduceWindow;
  const std::vector<int64_t> sizes = IntsAttr(op, "window_dimensions");
  const std::vector<int64_t> strides = IntsAttr(op, "window_strides");
  const std::vector<int64_t> base = dilated ? IntsAttr(op, "base_dilations")
                                            : std::vector<int64_t>{};
  const std::vector<int64_t> dilations = dilated ? IntsAttr(op, "window_dilations")
                                                 : std::vector<int64_t>{};
  const std::vector<int64_t> padding = IntsAttr(op, "padding");
  std::vector<kernels::WindowDim> window(rank);
  for (size_t d = 0; d < rank; ++d) {
    kernels::WindowDim& w = window[d];
    if (d < sizes.size()) w.size = sizes[d];
    if (d < strides.size()) w.stride = strides[d];
    if (d < base.size()) w.base_dilation = base[d];
    if (d < dilations.size()) w.window_dilation = dilations[d];
    if (2 * d + 1 < padding.size()) {
      w.padding_low = padding[2 * d];
      w.padding_high = padding[2 * d + 1];
    }
  }
  return window;
}

Status LowerReduceWindow(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  KILN_ASSIGN_OR_RETURN(std::vector<ElementType> types,
                        ReductionTypes(lowering, op, op.region(0), count));
  KILN_ASSIGN_OR_RETURN(Shape input, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape output, lowering.ShapeOf(op.result(0)));
  std::vector<kernels::WindowDim> window = WindowOf(op, input.dims.size());
  if (auto ops = FastOps(op.region(0), types)) {
    return lowering.Emit(op, [ops = *ops, types, dims = input.dims, window,
                              out_dims = output.dims](RunContext& ctx) {
      const size_t n = types.size();
      for (size_t i = 0; i < n; ++i) {
        KILN_RETURN_IF_ERROR(kernels::ReduceWindow(ops[i], types[i], ctx.in(i), dims, window,
                                                   out_dims, ctx.in(n + i), ctx.out(i)));
      }
      return Status::Ok();
    });
  }
  auto geometry = std::make_shared<const kernels::WindowGeometry>(input.dims, window, output.dims);
  return lowering.EmitWithRegions(op, [types, geometry](RunContext& ctx) -> Status {
    RegionFold& state = ctx.env().State<RegionFold>(&ctx.node(), types);
    Accumulators& acc = state.acc;
    std::vector<int64_t>& offsets = state.offsets;
    std::vector<int64_t>& scratch = state.scratch;
    for (int64_t o = 0; o < geometry->num_outputs(); ++o) {
      acc.Reset(ctx, types.size());
      geometry->Offsets(o, offsets, scratch);
      for (int64_t offset : offsets) KILN_RETURN_IF_ERROR(acc.Fold(ctx, offset));
      acc.Store(ctx, o);
    }
    return Status::Ok();
  });
}

Status LowerSelectAndScatter(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape source, lowering.ShapeOf(op.operand(1)));
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  if (source.element_type != operand.element_type || result.element_type != operand.element_type) {
    return Unimplemented("select_and_scatter with a source or result of another element type");
  }
  const ElementType type = operand.element_type;
  std::vector<kernels::WindowDim> window = WindowOf(op, operand.dims.size());
  std::optional<kernels::CompareDirection> select = MatchSelectBody(op.region(0));
  std::optional<std::vector<kernels::ReduceOp>> scatter = MatchReductionBody(op.region(1));
  const bool complex = type == ElementType::kC64 || type == ElementType::kC128;
  if (select && scatter && scatter->size() == 1 && !complex &&
      kernels::ReduceOpAccepts((*scatter)[0], type)) {
    return lowering.Emit(op, [type, direction = *select, scatter = (*scatter)[0],
                              dims = operand.dims, window,
                              source_dims = source.dims](RunContext& ctx) {
      return kernels::SelectAndScatter(type, direction, scatter, ctx.in(0), dims, window, ctx.in(1),
                                       source_dims, ctx.in(2), ctx.out(0));
    });
  }
  auto geometry = std::make_shared<const kernels::WindowGeometry>(operand.dims, window,
                                                                  source.dims);
  const size_t bytes = ElementBytes(type);
  const int64_t elements = operand.NumElements();
  return lowering.EmitWithRegions(op, [geometry, bytes, elements](RunContext& ctx) -> Status {
    const auto* x = static_cast<const uint8_t*>(ctx.in(0));
    const auto* s = static_cast<const uint8_t*>(ctx.in(1));
    auto* y = static_cast<uint8_t*>(ctx.out(0));
    const auto at = [bytes](int64_t index) { return index * static_cast<int64_t>(bytes); };
    for (int64_t i = 0; i < elements; ++i) std::memcpy(y + at(i), ctx.in(2), bytes);
    RegionFold& state = ctx.env().State<RegionFold>(&ctx.node(), std::span<const ElementType>());
    std::vector<int64_t>& offsets = state.offsets;
    std::vector<int64_t>& scratch = state.scratch;
    Scalar sum;
    bool keep = false;
    for (int64_t w = 0; w < geometry->num_outputs(); ++w) {
      geometry->Offsets(w, offsets, scratch);
      if (offsets.empty()) continue;
      int64_t selected = offsets[0];
      for (size_t i = 1; i < offsets.size(); ++i) {
        const void* args[] = {x + at(selected), x + at(offsets[i])};
        void* results[] = {&keep};
        KILN_RETURN_IF_ERROR(ctx.RunRegion(0, args, results));
        if (!keep) selected = offsets[i];
      }
      const void* args[] = {y + at(selected), s + at(w)};
      void* results[] = {sum.bytes};
      KILN_RETURN_IF_ERROR(ctx.RunRegion(1, args, results));
      std::memcpy(y + at(selected), sum.bytes, bytes);
    }
    return Status::Ok();
  });
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kReduce, LowerReduce},
    {ir::OpCode::kReduceWindow, LowerReduceWindow},
    {ir::OpCode::kSelectAndScatter, LowerSelectAndScatter},
};

}  // namespace

std::span<const LoweringRule> ReduceLowerings() { return kRules; }

}  // namespace kiln::compiler
