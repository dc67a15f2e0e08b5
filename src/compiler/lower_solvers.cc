// Lowering of the linear-algebra solvers and batch normalization onto
// kernels/solvers.h and kernels/batch_norm.h: cholesky, triangular_solve,
// batch_norm_{inference,training,grad}, chlo.top_k, and the custom calls
// JAX emits for a platform that is neither CPU nor GPU (Qr,
// ProductOfElementaryHouseholderReflectors, ApproxTopK, Eigh, which
// kiln_pjrt's lowering of eigh emits in the TPU's format, and Kiln's own Eig,
// Tridiagonal, TridiagonalSolve, Schur, Hessenberg and PivotedQr for
// lax.linalg.eig, tridiagonal, tridiagonal_solve, schur, hessenberg and
// geqp3), reached from custom_call's rule through LowerKnownCustomCall.
#include <algorithm>
#include <functional>
#include <numeric>

#include "compiler/lowering.h"
#include "kernels/batch_norm.h"
#include "kernels/eig.h"
#include "kernels/eigh.h"
#include "kernels/pivoted_qr.h"
#include "kernels/schur.h"
#include "kernels/solvers.h"
#include "kernels/svd.h"
#include "kernels/tridiagonal.h"

namespace kiln::compiler {
namespace {

bool BoolAttr(const ir::Operation& op, std::string_view name, bool fallback) {
  ir::Attribute attribute = op.GetAttr(name);
  if (attribute.Is(ir::AttrKind::kBool)) return attribute->bool_value;
  if (attribute.Is(ir::AttrKind::kUnit)) return true;
  return fallback;
}

int64_t Product(std::span<const int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1}, std::multiplies<>());
}

// A batch of matrices [..., rows, cols]: the batch size and the matrix dims.
struct Matrices {
  int64_t batch = 1, rows = 0, cols = 0;
};

StatusOr<Matrices> MatricesOf(const Shape& shape, std::string_view what) {
  if (shape.dims.size() < 2) {
    return InvalidArgument(what, " must have rank >= 2 ([..., rows, columns]), found ",
                           shape.ToString());
  }
  const size_t rank = shape.dims.size();
  return Matrices{Product(std::span(shape.dims).first(rank - 2)), shape.dims[rank - 2],
                  shape.dims[rank - 1]};
}

bool IsLinalgType(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64 || type == ElementType::kC64 ||
         type == ElementType::kC128;
}

// The words of JAX's CPU lowering ("Unsupported dtype float16") lead, so
// that code matching them matches Kiln's error too.
Status CheckLinalgType(const Shape& shape, std::string_view what) {
  if (IsLinalgType(shape.element_type)) return Status::Ok();
  return Unimplemented("Unsupported dtype ", GetElementTypeInfo(shape.element_type).name, ": ",
                       what, " runs in f32, f64, c64 and c128; found ", shape.ToString());
}

// A custom call's backend_config text, or "" without one: a view of the
// attribute itself (a conditional with "" would copy it into a temporary
// that dies at the semicolon).
std::string_view BackendConfig(const ir::Operation& op) {
  ir::Attribute config = op.GetAttr("backend_config");
  return config.Is(ir::AttrKind::kString) ? std::string_view(config->text) : std::string_view();
}

// The real type of a linear-algebra element type (f32 for c64, f64 for c128).
ElementType RealTypeOf(ElementType type) {
  if (type == ElementType::kC64) return ElementType::kF32;
  if (type == ElementType::kC128) return ElementType::kF64;
  return type;
}

// --- cholesky, triangular_solve ----------------------------------------------

Status LowerCholesky(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "cholesky"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "cholesky's operand"));
  if (a.rows != a.cols)
    return InvalidArgument("cholesky needs square matrices, found ", shape.ToString());
  const bool lower = BoolAttr(op, "lower", false);
  return lowering.Emit(op, [type = shape.element_type, a, lower](RunContext& ctx) {
    return kernels::Cholesky(type, ctx.in(0), ctx.out(0), a.batch, a.rows, lower);
  });
}

StatusOr<kernels::TriangularTranspose> TransposeOf(const ir::Operation& op) {
  const std::string_view transpose = EnumAttr(op, "transpose_a", "NO_TRANSPOSE");
  if (transpose == "NO_TRANSPOSE") return kernels::TriangularTranspose::kNoTranspose;
  if (transpose == "TRANSPOSE") return kernels::TriangularTranspose::kTranspose;
  if (transpose == "ADJOINT") return kernels::TriangularTranspose::kAdjoint;
  return InvalidArgument("transpose_a must be NO_TRANSPOSE, TRANSPOSE or ADJOINT, found ",
                         transpose);
}

Status LowerTriangularSolve(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape a_shape, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape b_shape, lowering.ShapeOf(op.operand(1)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(b_shape, "triangular_solve"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(a_shape, "triangular_solve's a"));
  KILN_ASSIGN_OR_RETURN(Matrices b, MatricesOf(b_shape, "triangular_solve's b"));
  const bool left_side = BoolAttr(op, "left_side", false);
  const int64_t k = left_side ? b.rows : b.cols;
  if (a_shape.element_type != b_shape.element_type || a.rows != k || a.cols != k ||
      a.batch != b.batch) {
    return InvalidArgument("triangular_solve: a ", a_shape.ToString(), " does not match b ",
                           b_shape.ToString(), (left_side ? " (left side)" : " (right side)"));
  }
  KILN_ASSIGN_OR_RETURN(kernels::TriangularTranspose transpose, TransposeOf(op));
  const bool lower = BoolAttr(op, "lower", false);
  const bool unit = BoolAttr(op, "unit_diagonal", false);
  return lowering.Emit(op, [type = b_shape.element_type, b, left_side, lower, unit,
                            transpose](RunContext& ctx) {
    return kernels::TriangularSolve(type, ctx.in(0), ctx.in(1), ctx.out(0), b.batch, b.rows, b.cols,
                                    left_side, lower, unit, transpose);
  });
}

// --- batch norm --------------------------------------------------------------

StatusOr<kernels::BatchNormShape> BatchNormShapeOf(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  const int64_t feature = IntAttr(op, "feature_index", -1);
  const auto rank = static_cast<int64_t>(shape.dims.size());
  if (feature < 0 || feature >= rank) {
    return InvalidArgument("feature_index ", feature, " is outside ", shape.ToString());
  }
  const std::span<const int64_t> dims(shape.dims);
  const auto f = static_cast<size_t>(feature);
  kernels::BatchNormShape result{Product(dims.first(f)), dims[f], Product(dims.subspan(f + 1))};
  for (size_t i = 1; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(i)));
    if (operand.element_type != shape.element_type) {
      return InvalidArgument("operand ", i, " is ", operand.ToString(), ", expected ",
                             GetElementTypeInfo(shape.element_type).name, " elements");
    }
    if (operand.NumElements() != shape.NumElements() && operand.NumElements() != result.features) {
      return InvalidArgument("operand ", i, " ", operand.ToString(), " must have ", result.features,
                             " features");
    }
  }
  return result;
}

float Epsilon(const ir::Operation& op) {
  ir::Attribute attribute = op.GetAttr("epsilon");
  return attribute.Is(ir::AttrKind::kFloat) ? static_cast<float>(attribute->float_value) : 0.0f;
}

Status LowerBatchNorm(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(kernels::BatchNormShape shape, BatchNormShapeOf(lowering, op));
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  const ElementType type = operand.element_type;
  const float epsilon = Epsilon(op);
  switch (op.code()) {
    case ir::OpCode::kBatchNormInference:
      return lowering.Emit(op, [=](RunContext& ctx) {
        return kernels::BatchNormInference(type, ctx.in(0), ctx.in(1), ctx.in(2), ctx.in(3),
                                           ctx.in(4), ctx.out(0), shape, epsilon);
      });
    case ir::OpCode::kBatchNormTraining:
      return lowering.Emit(op, [=](RunContext& ctx) {
        return kernels::BatchNormTraining(type, ctx.in(0), ctx.in(1), ctx.in(2), ctx.out(0),
                                          ctx.out(1), ctx.out(2), shape, epsilon);
      });
    default:
      return lowering.Emit(op, [=](RunContext& ctx) {
        return kernels::BatchNormGrad(type, ctx.in(0), ctx.in(1), ctx.in(2), ctx.in(3), ctx.in(4),
                                      ctx.out(0), ctx.out(1), ctx.out(2), shape, epsilon);
      });
  }
}

// --- top-k -------------------------------------------------------------------

// Emits an exact top-k of inputs[0] along `dimension`, carrying the other
// inputs along: the op's results are the selected inputs, then, when
// `with_indices`, the positions selected (i32).
Status EmitTopK(Lowering& lowering, const ir::Operation& op, std::vector<ValueId> inputs,
                int64_t dimension, kernels::TopKOrder order, bool with_indices) {
  const Shape keys = lowering.graph().shape(inputs[0]);
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  const auto rank = static_cast<int64_t>(keys.dims.size());
  if (dimension < 0 || dimension >= rank || result.dims.size() != keys.dims.size()) {
    return InvalidArgument("top-k dimension ", dimension, " is outside ", keys.ToString());
  }
  const auto d = static_cast<size_t>(dimension);
  const int64_t size = keys.dims[d], k = result.dims[d];
  std::vector<int64_t> payload_bytes;
  std::vector<Shape> outputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Shape& input = lowering.graph().shape(inputs[i]);
    KILN_ASSIGN_OR_RETURN(Shape output, lowering.ShapeOf(op.result(i)));
    if (input.dims != keys.dims || output.dims != result.dims || k > size) {
      return InvalidArgument("top-k operand ", input.ToString(), " and result ", output.ToString(),
                             " do not match keys ", keys.ToString());
    }
    if (i > 0) {
      payload_bytes.push_back(
          static_cast<int64_t>(GetElementTypeInfo(input.element_type).storage_bytes));
    }
    outputs.push_back(std::move(output));
  }
  if (with_indices) {
    KILN_ASSIGN_OR_RETURN(Shape indices, lowering.ShapeOf(op.result(inputs.size())));
    if (indices.element_type != ElementType::kS32 || indices.dims != result.dims) {
      return InvalidArgument("top-k indices must be s32 of shape ", result.ToString(), ", found ",
                             indices.ToString());
    }
    outputs.push_back(std::move(indices));
  }
  const std::span<const int64_t> dims(keys.dims);
  const int64_t outer = Product(dims.first(d)), inner = Product(dims.subspan(d + 1));
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> ids,
      lowering.EmitNode(op, std::move(inputs), std::move(outputs),
                        [=, type = keys.element_type](RunContext& ctx) {
                          std::vector<const void*> payloads;
                          std::vector<void*> out_payloads;
                          for (size_t p = 1; p < payload_bytes.size() + 1; ++p) {
                            payloads.push_back(ctx.in(p));
                            out_payloads.push_back(ctx.out(p));
                          }
                          return kernels::TopK(
                              type, ctx.in(0), ctx.out(0), outer, size, inner, k, order,
                              payloads.data(), out_payloads.data(), payload_bytes.data(),
                              static_cast<int64_t>(payload_bytes.size()),
                              with_indices
                                  ? static_cast<int32_t*>(ctx.out(payload_bytes.size() + 1))
                                  : nullptr);
                        }));
  for (size_t i = 0; i < ids.size(); ++i) lowering.Bind(op.result(i), ids[i]);
  return Status::Ok();
}

// chlo.top_k: the k largest along the last dimension and their i32 indices.
Status LowerChloTopK(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId keys, lowering.Input(op, 0));
  const Shape shape = lowering.graph().shape(keys);
  if (shape.dims.empty()) return InvalidArgument("top_k needs rank >= 1");
  const auto dimension = static_cast<int64_t>(shape.dims.size() - 1);
  return EmitTopK(lowering, op, {keys}, dimension, kernels::TopKOrder::kTotalOrderDescending,
                  /*with_indices=*/true);
}

}  // namespace

// jaxlib serializes chlo.top_k as the composite "chlo.top_k" (attributes
// k and is_stable) whose decomposition sorts every row whole (256 x 8192
// floats: 60 ms, where the selection takes under 2): lowered as top-k
// itself when its types are the op's (keys of a plain element type, s32
// indices, k along the last dimension); false when not, for the caller to
// inline the decomposition.
StatusOr<bool> LowerTopKComposite(Lowering& lowering, const ir::Operation& op) {
  const ir::Attribute k = op.GetAttr("composite_attributes").Get("k");
  if (!k.Is(ir::AttrKind::kInteger) || op.operands().size() != 1 || op.num_results() != 2 ||
      QuantizationOf(op.operand(0)->type()) != nullptr) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(ValueId keys, lowering.Input(op, 0));
  const Shape shape = lowering.graph().shape(keys);
  KILN_ASSIGN_OR_RETURN(Shape values, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(Shape indices, lowering.ShapeOf(op.result(1)));
  std::vector<int64_t> dims = shape.dims;
  if (dims.empty() || k->int_value < 0 || k->int_value > dims.back() ||
      shape.element_type == ElementType::kC64 || shape.element_type == ElementType::kC128) {
    return false;
  }
  dims.back() = k->int_value;
  if (values.element_type != shape.element_type || values.dims != dims ||
      indices.element_type != ElementType::kS32 || indices.dims != dims) {
    return false;
  }
  KILN_RETURN_IF_ERROR(EmitTopK(lowering, op, {keys}, static_cast<int64_t>(dims.size()) - 1,
                                kernels::TopKOrder::kTotalOrderDescending, /*with_indices=*/true));
  return true;
}

namespace {

// The direction of ApproxTopK's comparator: a function whose body is one
// compare GT/GE (largest first) or LT/LE of its first two arguments.
StatusOr<bool> ComparatorIsGreater(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute called = op.GetAttr("called_computations");
  if (called.Is(ir::AttrKind::kArray) && called->elements.size() == 1 &&
      called->elements[0].Is(ir::AttrKind::kSymbolRef) &&
      !called->elements[0]->symbol_path.empty()) {
    const ir::Operation* function = lowering.module().LookupFunction(
        called->elements[0]->symbol_path.back());
    if (function != nullptr && function->num_regions() == 1 &&
        function->region(0).num_blocks() == 1) {
      const ir::Block& body = function->region(0).block(0);
      for (const auto& inner : body.operations()) {
        if (inner->code() != ir::OpCode::kCompare || inner->operands().size() != 2 ||
            body.num_arguments() < 2) {
          continue;
        }
        const bool in_order = inner->operand(0) == body.argument(0) &&
                              inner->operand(1) == body.argument(1);
        const bool swapped = inner->operand(0) == body.argument(1) &&
                             inner->operand(1) == body.argument(0);
        const std::string_view direction = EnumAttr(*inner, "comparison_direction");
        const bool gt = direction == "GT" || direction == "GE";
        const bool lt = direction == "LT" || direction == "LE";
        if ((in_order || swapped) && (gt || lt)) return gt == in_order;
      }
    }
  }
  return Unimplemented("ApproxTopK's comparator must be one compare GT or LT of its first two "
                       "arguments (lax.approx_max_k / approx_min_k's)");
}

// ApproxTopK(operands..., init values...): computed exactly (recall 1).
Status LowerApproxTopK(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  if (count == 0 || op.operands().size() != 2 * count) {
    return InvalidArgument("ApproxTopK takes N operands and N init values for N results, found ",
                           op.operands().size(), " operands and ", count, " results");
  }
  ir::Attribute config = op.GetAttr("mhlo.backend_config");
  ir::Attribute dimension = config.Is(ir::AttrKind::kDictionary) ? config.Get("reduction_dim")
                                                                 : ir::Attribute();
  if (!dimension.Is(ir::AttrKind::kInteger)) {
    return InvalidArgument("ApproxTopK needs mhlo.backend_config = {reduction_dim = ...}");
  }
  KILN_ASSIGN_OR_RETURN(bool greater, ComparatorIsGreater(lowering, op));
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    inputs.push_back(input);
  }
  // XLA's CPU backend orders NaN and zeros differently when it selects
  // every element (a sort) and when it selects fewer (its top-k).
  const Shape keys = lowering.graph().shape(inputs[0]);
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  const auto d = static_cast<size_t>(dimension->int_value);
  const bool all = d < keys.dims.size() && d < result.dims.size() && keys.dims[d] == result.dims[d];
  kernels::TopKOrder order = kernels::TopKOrder::kApproxMin;
  if (greater) {
    order = all ? kernels::TopKOrder::kApproxMaxAll : kernels::TopKOrder::kTotalOrderDescending;
  }
  return EmitTopK(lowering, op, std::move(inputs), dimension->int_value, order,
                  /*with_indices=*/false);
}

// --- QR ----------------------------------------------------------------------

// Qr(a) -> (packed QR [..., m, n], taus [..., min(m, n)]) as LAPACK geqrf.
Status LowerQr(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "Qr"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "Qr's operand"));
  if (op.num_results() != 2) return InvalidArgument("Qr has two results (a, taus)");
  KILN_ASSIGN_OR_RETURN(Shape packed, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(Shape taus, lowering.ShapeOf(op.result(1)));
  if (packed.dims != shape.dims || taus.NumElements() != a.batch * std::min(a.rows, a.cols)) {
    return InvalidArgument("Qr of ", shape.ToString(), " gives ", shape.ToString(),
                           " and taus of min(m, n) per matrix, found ", packed.ToString(), " and ",
                           taus.ToString());
  }
  return lowering.Emit(op, [type = shape.element_type, a](RunContext& ctx) {
    return kernels::HouseholderQr(type, ctx.in(0), ctx.out(0), ctx.out(1), a.batch, a.rows, a.cols);
  });
}

// ProductOfElementaryHouseholderReflectors(a [..., m, n], taus [..., k]):
// LAPACK orgqr.
Status LowerHouseholderProduct(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 2 || op.num_results() != 1) {
    return InvalidArgument("ProductOfElementaryHouseholderReflectors takes (a, taus)");
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape taus, lowering.ShapeOf(op.operand(1)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "ProductOfElementaryHouseholderReflectors"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "the reflectors"));
  const int64_t k = taus.dims.empty() ? 0 : taus.dims.back();
  if (taus.element_type != shape.element_type || taus.NumElements() != a.batch * k ||
      a.rows < a.cols || a.cols < k) {
    return InvalidArgument("ProductOfElementaryHouseholderReflectors: a ", shape.ToString(),
                           " (rows >= columns) and taus ", taus.ToString(),
                           " (at most columns per matrix) do not match");
  }
  return lowering.Emit(op, [type = shape.element_type, a, k](RunContext& ctx) {
    return kernels::HouseholderProduct(type, ctx.in(0), ctx.in(1), ctx.out(0), a.batch, a.rows,
                                       a.cols, k);
  });
}

// --- eigh ----------------------------------------------------------------------

// Eigh(a [..., n, n]) -> (eigenvectors [..., n, n] as columns, eigenvalues
// [..., n] real, ascending). backend_config = "lower,sort,max_iterations,
// tolerance" (the TPU's format; kiln_pjrt/linalg.py emits it): only `lower`
// changes the result, since the eigenvalues always come sorted.
Status LowerEigh(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 1 || op.num_results() != 2) {
    return InvalidArgument("Eigh takes one operand and gives (eigenvectors, eigenvalues), found ",
                           op.operands().size(), " operands and ", op.num_results(), " results");
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "Eigh"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "Eigh's operand"));
  KILN_ASSIGN_OR_RETURN(Shape vectors, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(Shape values, lowering.ShapeOf(op.result(1)));
  const ElementType real = RealTypeOf(shape.element_type);
  std::vector<int64_t> values_dims(shape.dims.begin(), shape.dims.end() - 1);
  if (a.rows != a.cols || vectors.element_type != shape.element_type ||
      vectors.dims != shape.dims || values.element_type != real || values.dims != values_dims) {
    Shape expected{real, values_dims};
    return InvalidArgument("Eigh of square matrices ", shape.ToString(), " gives ",
                           shape.ToString(), " and ", expected.ToString(), ", found ",
                           vectors.ToString(), " and ", values.ToString());
  }
  ir::Attribute config = op.GetAttr("backend_config");
  bool lower = true;
  if (config.Is(ir::AttrKind::kString) && !config->text.empty()) {
    const std::string_view text = config->text;
    const std::string_view first = text.substr(0, text.find(','));
    if (first != "0" && first != "1") {
      return InvalidArgument("Eigh's backend_config must start with 0 or 1 (lower), found \"", text,
                             "\"");
    }
    lower = first == "1";
  }
  return lowering.Emit(op, [type = shape.element_type, a, lower](RunContext& ctx) {
    return kernels::Eigh(type, ctx.in(0), ctx.out(0), ctx.out(1), a.batch, a.rows, lower);
  });
}

// A custom call `target` of one operand whose backend_config `config` asks
// for `results` results.
Status CheckOneOperand(const ir::Operation& op, std::string_view target, std::string_view config,
                       size_t results) {
  if (op.operands().size() == 1 && op.num_results() == results) return Status::Ok();
  return InvalidArgument(target, " with backend_config \"", config,
                         "\" takes one operand and gives ", results, " results, found ",
                         op.operands().size(), " and ", op.num_results());
}

// Svd(a [..., m, n]) -> (s [..., k] real, u [..., m, m or k], vt [..., n or
// k, n]), k = min(m, n); backend_config "A" (full), "S" (reduced) or "N"
// (s alone), gesdd's jobz, as kiln_pjrt/linalg.py emits it.
Status LowerSvd(Lowering& lowering, const ir::Operation& op) {
  const std::string_view text = BackendConfig(op);
  if (text != "A" && text != "S" && text != "N") {
    return InvalidArgument("Svd's backend_config must be \"A\", \"S\" or \"N\", found \"", text,
                           "\"");
  }
  const kernels::SvdJob job = text == "A"   ? kernels::SvdJob::kFull
                              : text == "S" ? kernels::SvdJob::kReduced
                                            : kernels::SvdJob::kValuesOnly;
  const size_t results = job == kernels::SvdJob::kValuesOnly ? 1 : 3;
  KILN_RETURN_IF_ERROR(CheckOneOperand(op, "Svd", text, results));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "Svd"));
  if (!kernels::SvdAvailable(shape.element_type)) {  // refused at compile, not at the first run
    return Unimplemented("Svd runs on LAPACK's gesdd, which the host process did not lend Kiln ",
                         "(kiln_pjrt lends SciPy's under JAX; KILN_LAPACK=0 turns that off)");
  }
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "Svd's operand"));
  const int64_t m = a.rows, n = a.cols, k = std::min(m, n);
  const bool full = job == kernels::SvdJob::kFull;
  std::vector<int64_t> batch(shape.dims.begin(), shape.dims.end() - 2);
  auto with = [&](std::initializer_list<int64_t> tail) {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), tail);
    return dims;
  };
  std::vector<Shape> expected = {Shape{RealTypeOf(shape.element_type), with({k})}};
  if (results == 3) {
    expected.push_back(Shape{shape.element_type, with({m, full ? m : k})});
    expected.push_back(Shape{shape.element_type, with({full ? n : k, n})});
  }
  for (size_t r = 0; r < results; ++r) {
    KILN_ASSIGN_OR_RETURN(Shape found, lowering.ShapeOf(op.result(r)));
    if (found.element_type != expected[r].element_type || found.dims != expected[r].dims) {
      return InvalidArgument("Svd result ", r, " of ", shape.ToString(), " with \"", text,
                             "\" must be ", expected[r].ToString(), ", found ", found.ToString());
    }
  }
  return lowering.Emit(op, [type = shape.element_type, a, job, results](RunContext& ctx) {
    return kernels::Svd(type, ctx.in(0), ctx.out(0), results == 3 ? ctx.out(1) : nullptr,
                        results == 3 ? ctx.out(2) : nullptr, a.batch, a.rows, a.cols, job);
  });
}

// Eig(a [..., n, n]) -> (eigenvalues [..., n] complex, then the left and/or
// right eigenvectors [..., n, n] complex as asked). backend_config =
// "left,right" (0 or 1 each), as kiln_pjrt/linalg.py emits it.
Status LowerEig(Lowering& lowering, const ir::Operation& op) {
  const std::string_view text = BackendConfig(op);
  if (text != "0,0" && text != "0,1" && text != "1,0" && text != "1,1") {
    return InvalidArgument("Eig's backend_config must be \"left,right\" with 0 or 1 each, "
                           "found \"",
                           text, "\"");
  }
  const bool left = text[0] == '1', right = text[2] == '1';
  const size_t results = 1 + (left ? 1 : 0) + (right ? 1 : 0);
  KILN_RETURN_IF_ERROR(CheckOneOperand(op, "Eig", text, results));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "Eig"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "Eig's operand"));
  const ElementType complex = shape.element_type == ElementType::kF32 ||
                                      shape.element_type == ElementType::kC64
                                  ? ElementType::kC64
                                  : ElementType::kC128;
  std::vector<int64_t> values_dims(shape.dims.begin(), shape.dims.end() - 1);
  bool fits = a.rows == a.cols;
  for (size_t r = 0; r < results && fits; ++r) {
    KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(r)));
    fits = result.element_type == complex && result.dims == (r == 0 ? values_dims : shape.dims);
  }
  if (!fits) {
    return InvalidArgument("Eig of square matrices ", shape.ToString(), " gives ",
                           GetElementTypeInfo(complex).name,
                           " eigenvalues [..., n] and "
                           "eigenvectors [..., n, n]; the result types differ");
  }
  return lowering.Emit(op, [type = shape.element_type, a, left, right](RunContext& ctx) {
    void* lefts = left ? ctx.out(1) : nullptr;
    void* rights = right ? ctx.out(left ? 2 : 1) : nullptr;
    return kernels::Eig(type, ctx.in(0), ctx.out(0), lefts, rights, a.batch, a.rows);
  });
}

// Tridiagonal(a [..., n, n]) -> (a, d [..., n], e [..., n-1], taus
// [..., n-1]), backend_config "lower" 0 or 1: LAPACK sytrd/hetrd
// (kiln_pjrt's lowering of lax.linalg.tridiagonal).
Status LowerTridiagonal(Lowering& lowering, const ir::Operation& op) {
  const std::string_view text = BackendConfig(op);
  if (text != "0" && text != "1") {
    return InvalidArgument("Tridiagonal's backend_config must be \"lower\", 0 or 1, found \"", text,
                           "\"");
  }
  if (op.operands().size() != 1 || op.num_results() != 4) {
    return InvalidArgument("Tridiagonal takes one operand and gives (a, d, e, taus)");
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "Tridiagonal"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "Tridiagonal's operand"));
  const ElementType real = RealTypeOf(shape.element_type);
  const int64_t off = std::max<int64_t>(a.rows - 1, 0);
  const std::pair<ElementType, int64_t> expected[] = {
      {shape.element_type, a.batch * a.rows * a.rows},
      {real, a.batch * a.rows},
      {real, a.batch * off},
      {shape.element_type, a.batch * off}};
  bool fits = a.rows == a.cols;
  for (size_t r = 0; r < 4 && fits; ++r) {
    KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(r)));
    fits = result.element_type == expected[r].first && result.NumElements() == expected[r].second;
  }
  if (!fits) {
    return InvalidArgument("Tridiagonal of square matrices ", shape.ToString(),
                           " gives a of the same shape, d [..., n] and e [..., n-1] of the real "
                           "type, taus [..., n-1]; the result types differ");
  }
  const bool lower = text == "1";
  return lowering.Emit(op, [type = shape.element_type, a, lower](RunContext& ctx) {
    return kernels::Tridiagonalize(type, ctx.in(0), ctx.out(0), ctx.out(1), ctx.out(2), ctx.out(3),
                                   a.batch, a.rows, lower);
  });
}

// TridiagonalSolve(dl, d, du [..., n], b [..., n, k]) -> x [..., n, k]:
// LAPACK gtsv, NaN for a singular system (kiln_pjrt's lowering of
// lax.linalg.tridiagonal_solve).
Status LowerTridiagonalSolve(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 4 || op.num_results() != 1) {
    return InvalidArgument("TridiagonalSolve takes (dl, d, du, b) and gives x");
  }
  KILN_ASSIGN_OR_RETURN(Shape b, lowering.ShapeOf(op.operand(3)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(b, "TridiagonalSolve"));
  KILN_ASSIGN_OR_RETURN(Matrices system, MatricesOf(b, "TridiagonalSolve's b"));
  std::vector<int64_t> diagonal_dims(b.dims.begin(), b.dims.end() - 1);
  for (size_t i = 0; i < 3; ++i) {
    KILN_ASSIGN_OR_RETURN(Shape diagonal, lowering.ShapeOf(op.operand(i)));
    if (diagonal.element_type != b.element_type || diagonal.dims != diagonal_dims) {
      return InvalidArgument("TridiagonalSolve's diagonals must be ",
                             Shape{b.element_type, diagonal_dims}.ToString(), " for b ",
                             b.ToString(), ", found ", diagonal.ToString());
    }
  }
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  if (result.element_type != b.element_type || result.dims != b.dims) {
    return InvalidArgument("TridiagonalSolve gives x of b's shape ", b.ToString(), ", found ",
                           result.ToString());
  }
  return lowering.Emit(op, [type = b.element_type, system](RunContext& ctx) {
    return kernels::TridiagonalSolve(type, ctx.in(0), ctx.in(1), ctx.in(2), ctx.in(3), ctx.out(0),
                                     system.batch, system.rows, system.cols);
  });
}

// --- Schur, Hessenberg, PivotedQr ------------------------------------------------

// Checks that result `index` of op has type `expected`.
Status CheckResult(Lowering& lowering, const ir::Operation& op, size_t index, const Shape& expected,
                   std::string_view what) {
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(index)));
  if (result.element_type == expected.element_type && result.dims == expected.dims) {
    return Status::Ok();
  }
  return InvalidArgument(what, "'s result ", index, " must be ", expected.ToString(), ", found ",
                         result.ToString());
}

// The operand of Schur or Hessenberg: a batch of square matrices in f32,
// f64, c64 or c128.
StatusOr<Matrices> SquareMatrices(Lowering& lowering, const ir::Operation& op,
                                  std::string_view what, Shape& shape) {
  KILN_ASSIGN_OR_RETURN(shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, what));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, StrCat(what, "'s operand")));
  if (a.rows != a.cols) {
    return InvalidArgument(what, " needs square matrices [..., n, n], found ", shape.ToString());
  }
  return a;
}

// Schur(a [..., n, n]) -> (T, Z), or T alone with backend_config "0"
// ("compute_schur_vectors", 0 or 1): LAPACK gees without sorting
// (kiln_pjrt's lowering of lax.linalg.schur).
Status LowerSchur(Lowering& lowering, const ir::Operation& op) {
  const std::string_view text = BackendConfig(op);
  if (text != "0" && text != "1") {
    return InvalidArgument("Schur's backend_config must be \"compute_schur_vectors\", 0 or 1, "
                           "found \"",
                           text, "\"");
  }
  const bool vectors = text == "1";
  const size_t results = vectors ? 2 : 1;
  if (op.operands().size() != 1 || op.num_results() != results) {
    return InvalidArgument("Schur with backend_config \"", text, "\" takes one operand and gives ",
                           results, " results, found ", op.operands().size(), " and ",
                           op.num_results());
  }
  Shape shape;
  KILN_ASSIGN_OR_RETURN(Matrices a, SquareMatrices(lowering, op, "Schur", shape));
  for (size_t r = 0; r < results; ++r) {
    KILN_RETURN_IF_ERROR(CheckResult(lowering, op, r, shape, "Schur"));
  }
  return lowering.Emit(op, [type = shape.element_type, a, vectors](RunContext& ctx) {
    return kernels::Schur(type, ctx.in(0), ctx.out(0), vectors ? ctx.out(1) : nullptr, a.batch,
                          a.rows);
  });
}

// Hessenberg(a [..., n, n]) -> (a, taus [..., n-1]): LAPACK gehrd
// (kiln_pjrt's lowering of lax.linalg.hessenberg).
Status LowerHessenberg(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 1 || op.num_results() != 2) {
    return InvalidArgument("Hessenberg takes one operand and gives (a, taus), found ",
                           op.operands().size(), " operands and ", op.num_results(), " results");
  }
  Shape shape;
  KILN_ASSIGN_OR_RETURN(Matrices a, SquareMatrices(lowering, op, "Hessenberg", shape));
  Shape taus{shape.element_type, std::vector<int64_t>(shape.dims.begin(), shape.dims.end() - 1)};
  taus.dims.back() = std::max<int64_t>(a.rows - 1, 0);
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 0, shape, "Hessenberg"));
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 1, taus, "Hessenberg"));
  return lowering.Emit(op, [type = shape.element_type, a](RunContext& ctx) {
    return kernels::Hessenberg(type, ctx.in(0), ctx.out(0), ctx.out(1), a.batch, a.rows);
  });
}

// PivotedQr(a [..., m, n], jpvt [..., n] s32) -> (a, jpvt, taus
// [..., min(m, n)]): LAPACK geqp3, pivots 1-based (kiln_pjrt's lowering of
// lax.linalg.geqp3).
Status LowerPivotedQr(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 2 || op.num_results() != 3) {
    return InvalidArgument("PivotedQr takes (a, jpvt) and gives (a, jpvt, taus), found ",
                           op.operands().size(), " operands and ", op.num_results(), " results");
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape jpvt, lowering.ShapeOf(op.operand(1)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "PivotedQr"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "PivotedQr's operand"));
  Shape pivots{ElementType::kS32, std::vector<int64_t>(shape.dims.begin(), shape.dims.end() - 1)};
  pivots.dims.back() = a.cols;
  if (jpvt.element_type != ElementType::kS32 || jpvt.dims != pivots.dims) {
    return InvalidArgument("PivotedQr's jpvt must be ", pivots.ToString(), " for a ",
                           shape.ToString(),
                           " (LAPACK's 32-bit integers, as JAX's CPU backend "
                           "takes them), found ",
                           jpvt.ToString());
  }
  Shape taus{shape.element_type, pivots.dims};
  taus.dims.back() = std::min(a.rows, a.cols);
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 0, shape, "PivotedQr"));
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 1, pivots, "PivotedQr"));
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 2, taus, "PivotedQr"));
  return lowering.Emit(op, [type = shape.element_type, a](RunContext& ctx) {
    return kernels::PivotedQr(type, ctx.in(0), static_cast<const int32_t*>(ctx.in(1)), ctx.out(0),
                              static_cast<int32_t*>(ctx.out(1)), ctx.out(2), a.batch, a.rows,
                              a.cols);
  });
}

// LuDecomposition(a [..., m, n]) -> (lu [..., m, n], pivots [..., min(m, n)]
// s32, permutation [..., m] s32): LAPACK getrf with 0-based pivots and the
// row permutation they make, as XLA's TPU backend names it (kiln_pjrt's
// lowering of lax.linalg.lu).
Status LowerLuDecomposition(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 1 || op.num_results() != 3) {
    return InvalidArgument("LuDecomposition takes (a) and gives (lu, pivots, permutation), found ",
                           op.operands().size(), " operands and ", op.num_results(), " results");
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  KILN_RETURN_IF_ERROR(CheckLinalgType(shape, "LuDecomposition"));
  KILN_ASSIGN_OR_RETURN(Matrices a, MatricesOf(shape, "LuDecomposition's operand"));
  Shape pivots{ElementType::kS32, std::vector<int64_t>(shape.dims.begin(), shape.dims.end() - 1)};
  pivots.dims.back() = std::min(a.rows, a.cols);
  Shape permutation = pivots;
  permutation.dims.back() = a.rows;
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 0, shape, "LuDecomposition"));
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 1, pivots, "LuDecomposition"));
  KILN_RETURN_IF_ERROR(CheckResult(lowering, op, 2, permutation, "LuDecomposition"));
  return lowering.Emit(op, [type = shape.element_type, a](RunContext& ctx) {
    return kernels::LuDecomposition(type, ctx.in(0), ctx.out(0), static_cast<int32_t*>(ctx.out(1)),
                                    static_cast<int32_t*>(ctx.out(2)), a.batch, a.rows, a.cols);
  });
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kCholesky, LowerCholesky},
    {ir::OpCode::kTriangularSolve, LowerTriangularSolve},
    {ir::OpCode::kBatchNormInference, LowerBatchNorm},
    {ir::OpCode::kBatchNormTraining, LowerBatchNorm},
    {ir::OpCode::kBatchNormGrad, LowerBatchNorm},
    {ir::OpCode::kChloTopK, LowerChloTopK},
};

}  // namespace

std::span<const LoweringRule> SolverLowerings() { return kRules; }

StatusOr<bool> LowerKnownCustomCall(Lowering& lowering, const ir::Operation& op,
                                    std::string_view target) {
  LowerFn lower = nullptr;
  if (target == "Qr") lower = LowerQr;
  if (target == "ProductOfElementaryHouseholderReflectors") lower = LowerHouseholderProduct;
  if (target == "ApproxTopK") lower = LowerApproxTopK;
  if (target == "Eigh") lower = LowerEigh;
  if (target == "Svd") lower = LowerSvd;
  if (target == "Eig") lower = LowerEig;
  if (target == "Tridiagonal") lower = LowerTridiagonal;
  if (target == "TridiagonalSolve") lower = LowerTridiagonalSolve;
  if (target == "Schur") lower = LowerSchur;
  if (target == "Hessenberg") lower = LowerHessenberg;
  if (target == "PivotedQr") lower = LowerPivotedQr;
  if (target == "LuDecomposition") lower = LowerLuDecomposition;
  if (lower == nullptr) return false;
  KILN_RETURN_IF_ERROR(lower(lowering, op));
  return true;
}

}  // namespace kiln::compiler
