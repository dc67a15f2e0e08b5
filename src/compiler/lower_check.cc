// The StableHLO interpreter's test assertions, so `kiln run` runs upstream's
// conformance tests: the check dialect (check.expect_eq, expect_eq_const,
// expect_almost_eq, expect_almost_eq_const, expect_close,
// expect_serialized_eq) and the same checks spelled as custom calls
// (@check.expect_close, @check.expect_eq, ...), and the interpreter's own
// ops interpreter.print and interpreter.probe (through the run's
// InterpreterIo). A failed check is recorded in the ExecutionEnv; the run
// goes on.
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "compiler/lowering.h"
#include "compiler/npy.h"
#include "ir/printer.h"
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
  double tolerance = 1e-4;  // expect_almost_eq
  int64_t min_ulps = 0;     // expect_close
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
Status EmitCheck(Lowering& lowering, const ir::Operation& op, CheckSpec spec, bool has_result) {
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
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        lowering.EmitNode(
                            op, inputs, outputs,
                            [spec, shape, has_result](RunContext& ctx) {
                              std::string failure = Compare(spec, shape, ctx.in(0), ctx.in(1));
                              if (has_result) *static_cast<bool*>(ctx.out(0)) = failure.empty();
                              if (!failure.empty()) {
                                ctx.env().check_failures.push_back(StrCat(ctx.node().location, ": ",
                                                                          ctx.node().op, ": ",
                                                                          failure));
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
    // The custom-call spelling has no attributes: its tolerance is fixed.
    spec.tolerance = custom_call ? 1e-3 : FloatAttr(op, "tolerance", 1e-4);
  } else if (check.find("close") != std::string_view::npos) {
    spec.kind = CheckKind::kClose;
    if (custom_call) {
      spec.max_ulps = 3;
      return spec;
    }
    spec.min_ulps = IntAttr(op, "min_ulp_difference", 0);
    spec.max_ulps = IntAttr(op, "max_ulp_difference", 1);
  }
  return spec;
}

Status LowerCheckOp(Lowering& lowering, const ir::Operation& op) {
  return EmitCheck(lowering, op, SpecFor(op, op.name(), false), /*has_result=*/false);
}

// The name MLIR's printer gives `value` in its function: results numbered
// in order through the function's ops and their regions (`%N`, `%N#k` for
// one of several results), entry block arguments `%argN`.
std::string SsaName(const ir::Value* value) {
  const ir::Operation* function = value->defining_op();
  const ir::Block* block = value->owner_block();
  if (function == nullptr && block != nullptr) {
    function = block->parent_region()->parent_op();
    if (function->code() == ir::OpCode::kFuncFunc) return StrCat("%arg", value->index());
  }
  while (function != nullptr && function->code() != ir::OpCode::kFuncFunc) {
    const ir::Block* parent = function->parent_block();
    function = parent == nullptr ? nullptr : parent->parent_region()->parent_op();
  }
  if (function == nullptr) return "%0";
  int64_t number = 0;
  std::vector<const ir::Operation*> pending;
  auto push_block = [&](const ir::Block& body) {
    for (auto it = body.operations().rbegin(); it != body.operations().rend(); ++it) {
      pending.push_back(it->get());
    }
  };
  push_block(function->region(0).block(0));
  while (!pending.empty()) {
    const ir::Operation* op = pending.back();
    pending.pop_back();
    if (op == value->defining_op()) {
      return op->num_results() == 1 ? StrCat("%", number)
                                    : StrCat("%", number, "#", value->index());
    }
    if (op->num_results() > 0) ++number;
    for (size_t r = op->num_regions(); r-- > 0;) {
      for (size_t b = op->region(r).num_blocks(); b-- > 0;) push_block(op->region(r).block(b));
    }
  }
  return "%0";
}

Status NoInterpreter(const char* op) {
  return FailedPrecondition(op, " runs under `kiln run` (the StableHLO interpreter's ops)");
}

// interpreter.print %x : T prints `%N = ` and the tensor as the interpreter
// does.
Status LowerInterpreterPrint(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  const ir::Type type = op.operand(0)->type();
  const std::string name = SsaName(op.operand(0));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        lowering.EmitNode(
                            op, {input}, {},
                            [type, name](RunContext& ctx) -> Status {
                              if (ctx.env().interpreter == nullptr) {
                                return NoInterpreter("interpreter.print");
                              }
                              const auto* data = static_cast<const uint8_t*>(ctx.in(0));
                              const size_t bytes = ctx.in_shape(0).ByteSize();
                              ctx.env().interpreter->Print(
                                  StrCat(name, " = ",
                                         ir::PrintInterpreterTensor(type, std::span(data, bytes))));
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  (void)ids;
  return Status::Ok();
}

std::string StringAttr(const ir::Operation& op, std::string_view name) {
  ir::Attribute attribute = op.GetAttr(name);
  return attribute.Is(ir::AttrKind::kString) ? attribute->text : std::string();
}

// interpreter.probe %x, probe_id = "p" : T writes %x to probe<N>.npy in the
// probe folder and lists it in index.csv ("p,T,path"); its result is %x.
Status LowerInterpreterProbe(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  const std::string id = StringAttr(op, "probe_id");
  const std::string type = ir::PrintType(op.operand(0)->type());
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        lowering.EmitNode(
                            op, {input}, {shape},
                            [id, type, shape](RunContext& ctx) -> Status {
                              InterpreterIo* io = ctx.env().interpreter;
                              if (io == nullptr) return NoInterpreter("interpreter.probe");
                              if (io->probe_dir().empty()) {
                                return InvalidArgument("interpreter.probe \"", id,
                                                       "\" needs a probe "
                                                       "folder (kiln run --probe-output-dir=DIR)");
                              }
                              const std::string path = StrCat(io->probe_dir(), "/probe",
                                                              io->NextProbeFile(), ".npy");
                              KILN_RETURN_IF_ERROR(WriteNpy(path, shape, ctx.in(0)));
                              std::ofstream index(io->probe_dir() + "/index.csv", std::ios::app);
                              index << id << ',' << type << ',' << path << '\n';
                              if (!index)
                                return Internal("cannot append to ", io->probe_dir(), "/index.csv");
                              std::memcpy(ctx.out(0), ctx.in(0), shape.ByteSize());
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  lowering.Bind(op.result(0), ids[0]);
  return Status::Ok();
}

// The file index.csv lists for the `iteration`-th probe named `id`.
StatusOr<std::string> ProbeFile(const std::string& dir, const std::string& id, int64_t iteration) {
  std::ifstream index(dir + "/index.csv");
  if (!index) return NotFound("no probe index at ", dir, "/index.csv");
  std::string line;
  int64_t seen = 0;
  while (std::getline(index, line)) {
    // "id,type,path": the type may hold commas (tensor<2x3xcomplex<f32>>
    // does not, but be safe): the id is up to the first comma, the path
    // after the last.
    const size_t first = line.find(','), last = line.rfind(',');
    if (first == std::string::npos || line.substr(0, first) != id) continue;
    if (seen++ == iteration) return line.substr(last + 1);
  }
  return NotFound("probe \"", id, "\" has no iteration ", iteration, " in ", dir, "/index.csv");
}

// check.expect_serialized_eq %x, probe_id = "p" (, iteration = N): %x
// equals, byte for byte, what that probe wrote.
Status LowerExpectSerializedEq(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  const std::string id = StringAttr(op, "probe_id");
  const int64_t iteration = IntAttr(op, "iteration", 0);
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> ids,
      lowering.EmitNode(
          op, {input}, {},
          [id, iteration, shape](RunContext& ctx) -> Status {
            InterpreterIo* io = ctx.env().interpreter;
            if (io == nullptr) return NoInterpreter("check.expect_serialized_eq");
            ++ctx.env().checks_run;
            StatusOr<std::string> file = ProbeFile(io->probe_dir(), id, iteration);
            StatusOr<std::vector<uint8_t>> expected =
                file.ok() ? ReadNpy(*file, shape) : StatusOr<std::vector<uint8_t>>(file.status());
            std::string failure;
            if (!expected.ok()) {
              failure = expected.status().ToString();
            } else if (std::memcmp(expected->data(), ctx.in(0), shape.ByteSize()) != 0) {
              failure = StrCat("differs from probe \"", id, "\" (iteration ", iteration, ")");
            }
            if (!failure.empty()) {
              ctx.env().check_failures.push_back(StrCat(ctx.node().location, ": ", ctx.node().op,
                                                        ": ", failure));
            }
            return Status::Ok();
          },
          {}, {}, /*foldable=*/false));
  (void)ids;
  return Status::Ok();
}

}  // namespace

// custom_call @check.*: the checks as upstream's testdata spells them.
Status LowerCheckCustomCall(Lowering& lowering, const ir::Operation& op, std::string_view target) {
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
      {ir::OpCode::kCheckExpectSerializedEq, LowerExpectSerializedEq},
      {ir::OpCode::kInterpreterPrint, LowerInterpreterPrint},
      {ir::OpCode::kInterpreterProbe, LowerInterpreterProbe},
  };
  return kRules;
}

}  // namespace kiln::compiler
