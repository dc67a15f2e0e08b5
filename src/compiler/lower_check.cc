// The StableHLO interpreter's test assertions, so `kiln run` runs upstream's
// conformance tests: the check dialect (check.expect_eq, expect_eq_const,
// expect_almost_eq, expect_almost_eq_const, expect_close) and the same checks
// spelled as custom calls (@check.expect_close, @check.expect_eq, ...).
// A failed check is recorded in the ExecutionEnv; the run goes on.
#include <cmath>
#include <cstring>

#include "compiler/lowering.h"
#include "kernels/elementwise.h"
#include "kernels/minifloat.h"

namespace kiln::compiler {
namespace {

enum class CheckKind : uint8_t { kEq, kAlmostEq, kClose };

// Element `i` of a dense array as bits for ULP distances: the total-order
// integer of a float (so adjacent floats differ by one).
// One-byte floats (f8, and f6/f4 stored one per byte) have their sign in
// bit `bit_width - 1`, except the unsigned f8E8M0FNU.
int64_t OrderedBits(const uint8_t* data, size_t bytes, int64_t i, ElementType type) {
  int64_t bits = 0;
  switch (bytes) {
    case 1: {
      const int width = GetElementTypeInfo(type).bit_width;
      const int64_t v = data[i];
      if (type == ElementType::kF8E8M0FNU) return v;
      const int64_t magnitude = v & ((int64_t{1} << (width - 1)) - 1);
      return (v >> (width - 1)) & 1 ? -magnitude : magnitude;
    }
    case 2: {
      int16_t v;
      std::memcpy(&v, data + i * 2, 2);
      bits = v < 0 ? -(int64_t(v) & 0x7fff) : v;
      break;
    }
    case 4: {
      int32_t v;
      std::memcpy(&v, data + i * 4, 4);
      bits = v < 0 ? -(int64_t(v) & 0x7fffffff) : v;
      break;
    }
    default: {
      int64_t v;
      std::memcpy(&v, data + i * 8, 8);
      bits = v < 0 ? -(v & 0x7fffffffffffffffll) : v;
      break;
    }
  }
  return bits;
}

struct CheckSpec {
  CheckKind kind = CheckKind::kEq;
  double tolerance = 1e-4;     // expect_almost_eq
  int64_t min_ulps = 0;        // expect_close
  int64_t max_ulps = 3;
};

// Compares `actual` with `expected` (both of `shape`); an empty string when
// they agree, else what differs first.
std::string Compare(const CheckSpec& spec, const Shape& shape, const void* actual,
                    const void* expected) {
  const int64_t count = shape.NumElements();
  const ElementType type = shape.element_type;
  const size_t bytes = GetElementTypeInfo(type).storage_bytes;
  const bool is_float = type == ElementType::kF16 || type == ElementType::kBF16 ||
                        type == ElementType::kF32 || type == ElementType::kF64 ||
                        kernels::IsMinifloat(type);
  const bool is_complex = type == ElementType::kC64 || type == ElementType::kC128;
  if (!is_float && !is_complex) {
    if (std::memcmp(actual, expected, bytes * static_cast<size_t>(count)) == 0) return "";
    std::vector<int64_t> a(static_cast<size_t>(count)), b(static_cast<size_t>(count));
    if (!kernels::Convert(type, actual, ElementType::kS64, a.data(), count).ok() ||
        !kernels::Convert(type, expected, ElementType::kS64, b.data(), count).ok()) {
      return "the values differ";
    }
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i] != b[i]) return StrCat("element ", i, ": expected ", b[i], ", found ", a[i]);
    }
    return "the values differ";
  }
  // Floats and complex parts as f64 for the value comparisons.
  const int64_t parts = is_complex ? count * 2 : count;
  const ElementType part = type == ElementType::kC64    ? ElementType::kF32
                           : type == ElementType::kC128 ? ElementType::kF64
                                                        : type;
  std::vector<double> a(static_cast<size_t>(parts)), b(static_cast<size_t>(parts));
  (void)kernels::Convert(part, actual, ElementType::kF64, a.data(), parts);
  (void)kernels::Convert(part, expected, ElementType::kF64, b.data(), parts);
  const size_t part_bytes = GetElementTypeInfo(part).storage_bytes;
  for (int64_t i = 0; i < parts; ++i) {
    const double x = a[static_cast<size_t>(i)];
    const double y = b[static_cast<size_t>(i)];
    if (std::isnan(x) && std::isnan(y)) continue;
    bool ok = false;
    switch (spec.kind) {
      case CheckKind::kEq: ok = x == y; break;
      case CheckKind::kAlmostEq: ok = x == y || std::fabs(x - y) <= spec.tolerance; break;
      case CheckKind::kClose: {
        const int64_t ulps = std::llabs(
            OrderedBits(static_cast<const uint8_t*>(actual), part_bytes, i, part) -
            OrderedBits(static_cast<const uint8_t*>(expected), part_bytes, i, part));
        ok = x == y || (ulps >= spec.min_ulps && ulps <= spec.max_ulps);
        break;
      }
    }
    if (!ok) {
      return StrCat("element ", is_complex ? i / 2 : i, ": expected ", y, ", found ", x);
    }
  }
  return "";
}

// Emits the check of operand 0 against operand 1 or the `value` attribute.
Status EmitCheck(Lowering& lowering, const ir::Operation& op, CheckSpec spec,
                 bool has_result) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  std::vector<ValueId> inputs;
  KILN_ASSIGN_OR_RETURN(ValueId actual, lowering.Input(op, 0));
  inputs.push_back(actual);
  if (op.operands().size() > 1) {
    KILN_ASSIGN_OR_RETURN(ValueId expected, lowering.Input(op, 1));
    inputs.push_back(expected);
  } else {
    KILN_ASSIGN_OR_RETURN(std::vector<uint8_t> data, DenseData(op.GetAttr("value"), shape));
    inputs.push_back(lowering.graph().AddConstant(shape, std::move(data)));
  }
  std::vector<Shape> outputs;
  if (has_result) outputs.push_back(Shape{ElementType::kPred, {}});
  const std::string name = op.name();
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> ids,
      lowering.EmitNode(op, inputs, outputs,
                        [spec, shape, has_result](RunContext& ctx) {
                          std::string failure = Compare(spec, shape, ctx.in(0), ctx.in(1));
                          if (has_result) *static_cast<bool*>(ctx.out(0)) = failure.empty();
                          if (!failure.empty()) {
                            ctx.env().check_failures.push_back(
                                StrCat(ctx.node().location, ": ", ctx.node().op, ": ", failure));
                          }
                          ++ctx.env().checks_run;
                          return Status::Ok();
                        },
                        {}, {}, /*foldable=*/false));
  if (has_result) lowering.Bind(op.result(0), ids[0]);
  return Status::Ok();
}

double FloatAttr(const ir::Operation& op, std::string_view name, double fallback) {
  ir::Attribute attribute = op.GetAttr(name);
  if (attribute.Is(ir::AttrKind::kFloat)) return attribute->float_value;
  return fallback;
}

// The check dialect's defaults (CheckOps.td) differ from the custom-call
// spellings' (stablehlo-translate --interpret: tolerance 1e-3, 0..3 ULPs).
CheckSpec SpecFor(const ir::Operation& op, std::string_view check, bool custom_call) {
  CheckSpec spec;
  if (check.find("almost_eq") != std::string_view::npos) {
    spec.kind = CheckKind::kAlmostEq;
    spec.tolerance = FloatAttr(op, "tolerance", custom_call ? 1e-3 : 1e-4);
  } else if (check.find("close") != std::string_view::npos) {
    spec.kind = CheckKind::kClose;
    spec.min_ulps = IntAttr(op, "min_ulp_difference", 0);
    spec.max_ulps = IntAttr(op, "max_ulp_difference", custom_call ? 3 : 1);
  }
  return spec;
}

Status LowerCheckOp(Lowering& lowering, const ir::Operation& op) {
  if (op.code() == ir::OpCode::kCheckExpectSerializedEq) {
    return Unimplemented("check.expect_serialized_eq needs the interpreter's probe files");
  }
  return EmitCheck(lowering, op, SpecFor(op, op.name(), false), /*has_result=*/false);
}

}  // namespace

// custom_call @check.*: the checks as upstream's testdata spells them.
Status LowerCheckCustomCall(Lowering& lowering, const ir::Operation& op,
                            std::string_view target) {
  if (op.operands().size() != 2) {
    return InvalidArgument("custom_call @", target, " expects 2 operands, found ",
                           op.operands().size());
  }
  return EmitCheck(lowering, op, SpecFor(op, target, true), /*has_result=*/op.num_results() == 1);
}

std::span<const LoweringRule> CheckLowerings() {
  static constexpr LoweringRule kRules[] = {
      {ir::OpCode::kCheckExpectEq, LowerCheckOp},
      {ir::OpCode::kCheckExpectEqConst, LowerCheckOp},
      {ir::OpCode::kCheckExpectAlmostEq, LowerCheckOp},
      {ir::OpCode::kCheckExpectAlmostEqConst, LowerCheckOp},
      {ir::OpCode::kCheckExpectClose, LowerCheckOp},
      {ir::OpCode::kCheckExpectSerializedEq, LowerCheckOp},
  };
  return kRules;
}

}  // namespace kiln::compiler
