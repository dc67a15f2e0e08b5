#include "backends/opencl/codegen.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "base/function_ref.h"
#include "ir/attribute.h"
#include "ir/module.h"
#include "kernels/types.h"

namespace kiln::backends::opencl {

namespace {

using compiler::Graph;
using compiler::Node;
using compiler::Pointwise;
using compiler::ValueId;

std::string ToHex(uint64_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), kDigits[value & 15]);
    value >>= 4;
  } while (value != 0);
  return text;
}

// The smallest and largest values of an integer type (pred: 0 and 1), as
// OpenCL C literals: the identities of max and min reductions.
std::string Lowest(ElementType type) {
  switch (type) {
    case ElementType::kS8: return "(char)(-128)";
    case ElementType::kS16: return "(short)(-32768)";
    case ElementType::kS32: return "(int)(-2147483647 - 1)";
    case ElementType::kS64: return "(long)(-9223372036854775807l - 1)";
    default: return "0";
  }
}
std::string Highest(ElementType type) {
  switch (type) {
    case ElementType::kPred: return "(uchar)1";
    case ElementType::kS8: return "(char)127";
    case ElementType::kU8: return "(uchar)255";
    case ElementType::kS16: return "(short)32767";
    case ElementType::kU16: return "(ushort)65535";
    case ElementType::kS32: return "(int)2147483647";
    case ElementType::kU32: return "(uint)4294967295u";
    case ElementType::kS64: return "(long)9223372036854775807l";
    case ElementType::kU64: return "(ulong)18446744073709551615ul";
    default: return "0";
  }
}

// An element type as OpenCL C holds it: its type name, the type integer
// arithmetic wraps in (unsigned, so overflow is defined), and its class.
struct CType {
  std::string_view name;
  std::string_view wide;
  bool is_float = false;
  bool is_signed = false;
  bool is_pred = false;
  // How values are stored, when not as `name`: f16 and bf16 compute in
  // float and round after every op, as XLA's CPU backend does, and are
  // loaded and stored as 16 bits, in elementwise kernels only (KindOf).
  enum class Storage : uint8_t { kNative, kHalf, kBfloat16 } storage = Storage::kNative;
  // The type arrays of it are declared as.
  std::string_view stored() const {
    switch (storage) {
      case Storage::kHalf:
      case Storage::kBfloat16: return "ushort";
      case Storage::kNative: break;
    }
    return name;
  }
  bool narrow() const { return storage != Storage::kNative; }
};

std::optional<CType> CTypeOf(ElementType type, const Target& target) {
  switch (type) {
    case ElementType::kPred: return CType{"uchar", "uint", false, false, true};
    case ElementType::kS8: return CType{"char", "uint", false, true, false};
    case ElementType::kU8: return CType{"uchar", "uint", false, false, false};
    case ElementType::kS16: return CType{"short", "uint", false, true, false};
    case ElementType::kU16: return CType{"ushort", "uint", false, false, false};
    case ElementType::kS32: return CType{"int", "uint", false, true, false};
    case ElementType::kU32: return CType{"uint", "uint", false, false, false};
    case ElementType::kS64: return CType{"long", "ulong", false, true, false};
    case ElementType::kU64: return CType{"ulong", "ulong", false, false, false};
    case ElementType::kF32: return CType{"float", "float", true, true, false};
    // Every OpenCL device loads and stores halves (vload_half), with or
    // without cl_khr_fp16; bf16 is the high half of a float's bits.
    case ElementType::kF16:
      return CType{"float", "float", true, true, false, CType::Storage::kHalf};
    case ElementType::kBF16:
      return CType{"float", "float", true, true, false, CType::Storage::kBfloat16};
    case ElementType::kF64:
      if (target.doubles) return CType{"double", "double", true, true, false};
      return std::nullopt;
    default: return std::nullopt;
  }
}

const Shape& In(const Graph& graph, const Node& node, size_t i) {
  return graph.shape(node.inputs[i]);
}
const Shape& Out(const Graph& graph, const Node& node) { return graph.shape(node.outputs[0]); }

// Every input and the output of one supported type; returns the output's.
std::optional<CType> UniformType(const Graph& graph, const Node& node, const Target& target) {
  const ElementType type = Out(graph, node).element_type;
  for (ValueId in : node.inputs) {
    if (graph.shape(in).element_type != type) return std::nullopt;
  }
  return CTypeOf(type, target);
}

std::string Binary(const CType& type, std::string_view op, const std::string& a,
                   const std::string& b) {
  if (type.is_float) return StrCat("(", a, " ", op, " ", b, ")");
  // Integers wrap: computed in the unsigned type of at least 32 bits.
  return StrCat("(", type.name, ")((", type.wide, ")", a, " ", op, " (", type.wide, ")", b, ")");
}

std::string_view Comparison(std::string_view direction) {
  if (direction == "EQ") return "==";
  if (direction == "NE") return "!=";
  if (direction == "LT") return "<";
  if (direction == "LE") return "<=";
  if (direction == "GT") return ">";
  if (direction == "GE") return ">=";
  return "";
}

std::string_view EnumOf(const ir::Operation& op, std::string_view name) {
  ir::Attribute attribute = op.GetAttr(name);
  if (attribute.Is(ir::AttrKind::kEnum)) return attribute->enum_value;
  return "";
}

// The expression of an elementwise map over `args` (its inputs' values);
// nullopt when the backend does not generate this op on these types.
std::optional<std::string> MapExpression(const Graph& graph, const Node& node, const Target& target,
                                         const std::vector<std::string>& args) {
  if (!node.source || node.outputs.size() != 1) return std::nullopt;
  const std::string& name = node.source->name();
  const std::string_view op = std::string_view(name).substr(name.find('.') + 1);
  if (name.rfind("stablehlo.", 0) != 0) return std::nullopt;
  const size_t arity = node.inputs.size();
  if (args.size() != arity) return std::nullopt;
  const ElementType out_type = Out(graph, node).element_type;
  const std::optional<CType> out = CTypeOf(out_type, target);
  if (!out) return std::nullopt;

  if (op == "compare" && arity == 2) {
    const ElementType type = In(graph, node, 0).element_type;
    const std::optional<CType> in = CTypeOf(type, target);
    const std::string_view symbol = Comparison(EnumOf(*node.source, "comparison_direction"));
    if (!in || In(graph, node, 1).element_type != type || symbol.empty() ||
        EnumOf(*node.source, "compare_type") == "TOTALORDER" || !out->is_pred) {
      return std::nullopt;
    }
    return StrCat("(uchar)(", args[0], " ", symbol, " ", args[1], ")");
  }
  if (op == "select" && arity == 3) {
    if (In(graph, node, 0).element_type != ElementType::kPred ||
        In(graph, node, 1).element_type != out_type ||
        In(graph, node, 2).element_type != out_type) {
      return std::nullopt;
    }
    return StrCat("(", args[0], " ? ", args[1], " : ", args[2], ")");
  }
  if (op == "convert" && arity == 1) {
    const std::optional<CType> in = CTypeOf(In(graph, node, 0).element_type, target);
    if (!in) return std::nullopt;
    if (out->is_pred) return StrCat("(uchar)(", args[0], " != 0)");
    // Float to integer saturates, NaN to 0 (OpenCL's _sat conversions
    // round toward zero, as XLA does).
    if (in->is_float && !out->is_float) return StrCat("convert_", out->name, "_sat(", args[0], ")");
    return StrCat("(", out->name, ")(", args[0], ")");
  }
  if (op == "is_finite" && arity == 1) {
    const std::optional<CType> in = CTypeOf(In(graph, node, 0).element_type, target);
    if (!in || !in->is_float || !out->is_pred) return std::nullopt;
    return StrCat("(uchar)isfinite(", args[0], ")");
  }

  const std::optional<CType> type = UniformType(graph, node, target);
  if (!type) return std::nullopt;
  const CType& t = *type;
  const std::string suffix(t.name);
  const std::string& a = args[0];
  if (arity == 1) {
    if (op == "negate" && !t.is_pred) {
      return t.is_float ? StrCat("(-", a, ")")
                        : StrCat("(", t.name, ")((", t.wide, ")0 - (", t.wide, ")", a, ")");
    }
    if (op == "not") {
      if (t.is_pred) return StrCat("(uchar)(", a, " ^ 1)");
      if (!t.is_float) return StrCat("(", t.name, ")(~", a, ")");
      return std::nullopt;
    }
    if (op == "abs" && !t.is_pred) {
      if (t.is_float) return StrCat("fabs(", a, ")");
      return t.is_signed ? StrCat("(", t.name, ")abs(", a, ")") : a;
    }
    if (op == "sign" && !t.is_pred) {
      if (t.is_float) {
        return StrCat("(isnan(", a, ") ? ", a, " : (", a, " > 0 ? (", t.name, ")1 : (", a,
                      " < 0 ? (", t.name, ")-1 : ", a, ")))");
      }
      if (!t.is_signed) return StrCat("(", t.name, ")(", a, " != 0)");
      return StrCat("(", t.name, ")((", a, " > 0) - (", a, " < 0))");
    }
    if (!t.is_float) return std::nullopt;
    static const std::pair<std::string_view, std::string_view> kUnary[] = {
        {"exponential", "exp"},
        {"log", "log"},
        {"tanh", "tanh"},
        {"sqrt", "sqrt"},
        {"rsqrt", "rsqrt"},
        {"sine", "sin"},
        {"cosine", "cos"},
        {"tan", "tan"},
        {"floor", "floor"},
        {"ceil", "ceil"},
        {"round_nearest_even", "rint"},
        {"round_nearest_afz", "round"},
        {"exponential_minus_one", "expm1"},
        {"log_plus_one", "log1p"},
        {"cbrt", "cbrt"},
    };
    if (op == "tanh" && t.name == "float") return StrCat("ktanh_float(", a, ")");
    if (op == "exponential" && t.name == "float") return StrCat("kexp_float(", a, ")");
    if (op == "logistic" && t.name == "float") {
      return StrCat("(1.0f / (1.0f + kexp_float(-", a, ")))");
    }
    for (const auto& [stablehlo, function] : kUnary) {
      if (op == stablehlo) return StrCat(function, "(", a, ")");
    }
    if (op == "logistic") {
      return StrCat("((", t.name, ")1 / ((", t.name, ")1 + exp(-", a, ")))");
    }
    return std::nullopt;
  }
  const std::string& b = args[1];
  if (arity == 2) {
    if (op == "add" && !t.is_pred) return Binary(t, "+", a, b);
    if (op == "subtract" && !t.is_pred) return Binary(t, "-", a, b);
    if (op == "multiply" && !t.is_pred) return Binary(t, "*", a, b);
    if (op == "divide" && t.is_float) return StrCat("(", a, " / ", b, ")");
    if (op == "maximum") return StrCat(t.is_float ? "kmax_" : "max_", suffix, "(", a, ", ", b, ")");
    if (op == "minimum") return StrCat(t.is_float ? "kmin_" : "min_", suffix, "(", a, ", ", b, ")");
    if (!t.is_float && !t.is_pred) {
      static constexpr std::pair<std::string_view, std::string_view> kIntegerOps[] = {
          {"divide", "kdiv_"},
          {"remainder", "krem_"},
          {"shift_left", "kshl_"},
          {"shift_right_logical", "kshrl_"},
          {"shift_right_arithmetic", "kshra_"}};
      for (const auto& [integer_op, helper] : kIntegerOps) {
        if (op == integer_op) return StrCat(helper, suffix, "(", a, ", ", b, ")");
      }
    }
    if (!t.is_float) {
      if (op == "and") return StrCat("(", t.name, ")(", a, " & ", b, ")");
      if (op == "or") return StrCat("(", t.name, ")(", a, " | ", b, ")");
      if (op == "xor") return StrCat("(", t.name, ")(", a, " ^ ", b, ")");
      return std::nullopt;
    }
    // No atan2: XLA's CPU backend (glibc's atan2 under DAZ) gives NaN for
    // two denormal operands, where atan2 of the flushed zeros gives 0 or
    // pi; the host kernels match it, so atan2 runs there.
    if (op == "remainder") return StrCat("fmod(", a, ", ", b, ")");
    return std::nullopt;
  }
  if (arity == 3 && op == "clamp" && !t.is_pred) {
    // clamp(min, x, max)
    const std::string& c = args[2];
    if (t.is_float)
      return StrCat("kmin_", suffix, "(kmax_", suffix, "(", b, ", ", a, "), ", c, ")");
    return StrCat("min_", suffix, "(max_", suffix, "(", b, ", ", a, "), ", c, ")");
  }
  return std::nullopt;
}

// What a node is to the code generator.
enum class Kind : uint8_t {
  kNone,
  kMap,
  kRead,
  kView,
  kConvert,
  kReduce,
  kMatMul,
  kIm2Col,
  kConvolution,
  kDepthwise
};

bool ReduceSupported(kernels::ReduceOp op, const CType& type) {
  switch (op) {
    case kernels::ReduceOp::kAdd:
    case kernels::ReduceOp::kMultiply: return !type.is_pred;
    case kernels::ReduceOp::kMaximum:
    case kernels::ReduceOp::kMinimum: return true;
    case kernels::ReduceOp::kAnd:
    case kernels::ReduceOp::kOr:
    case kernels::ReduceOp::kXor: return !type.is_float;
  }
  return false;
}

// A strided read's description: a fused-loop read, or a strided copy the
// host runs alone. Null: the node is neither.
const Pointwise* ReadOf(const Node& node) {
  if (node.pointwise && node.pointwise->kind == Pointwise::Kind::kRead) {
    return node.pointwise.get();
  }
  return node.strided_copy.get();
}

Kind NodeKind(const Graph& graph, const Node& node, const Target& target) {
  if (!node.regions.empty() || node.has_side_effects || node.outputs.size() != 1) {
    return Kind::kNone;
  }
  const Shape& out = Out(graph, node);
  if (!CTypeOf(out.element_type, target)) return Kind::kNone;
  if (node.matmul) {
    const kernels::MatMulShape& shape = *node.matmul;
    const bool floating = out.element_type == ElementType::kF32 ||
                          (out.element_type == ElementType::kF64 && target.doubles);
    if (!floating || shape.accumulate || node.inputs.size() != 2 ||
        !UniformType(graph, node, target)) {
      return Kind::kNone;
    }
    return Kind::kMatMul;
  }
  if (node.im2col) {
    const kernels::ConvGeometry& g = *node.im2col;
    int64_t image = g.batch * g.features;
    for (int64_t size : g.input_spatial) image *= size;
    if (node.inputs.size() != 1 || In(graph, node, 0).element_type != out.element_type ||
        In(graph, node, 0).NumElements() != image ||
        out.NumElements() != g.groups() * g.rows() * g.window_size() * g.group_features()) {
      return Kind::kNone;
    }
    return Kind::kIm2Col;
  }
  if (node.convolution) {
    const kernels::ConvGeometry& g = *node.convolution;
    const bool floating = out.element_type == ElementType::kF32 ||
                          (out.element_type == ElementType::kF64 && target.doubles);
    if (!floating || g.groups() != 1 || node.inputs.size() != 2 ||
        !UniformType(graph, node, target) ||
        In(graph, node, 1).NumElements() != g.window_size() * g.features * g.output_features ||
        out.NumElements() != g.rows() * g.output_features) {
      return Kind::kNone;
    }
    return Kind::kConvolution;
  }
  if (node.depthwise) {
    const kernels::ConvGeometry& g = *node.depthwise;
    const bool floating = out.element_type == ElementType::kF32 ||
                          (out.element_type == ElementType::kF64 && target.doubles);
    int64_t image = g.batch * g.features;
    for (int64_t size : g.input_spatial) image *= size;
    if (!floating || node.inputs.size() != 2 || !UniformType(graph, node, target) ||
        g.feature_groups != g.features || g.batch_groups != 1 || g.features <= 0 ||
        g.output_features % g.features != 0 || In(graph, node, 0).NumElements() != image ||
        In(graph, node, 1).NumElements() != g.window_size() * g.output_features ||
        out.NumElements() != g.rows() * g.output_features) {
      return Kind::kNone;
    }
    return Kind::kDepthwise;
  }
  if (node.reduction) {
    const compiler::ReductionShape& r = *node.reduction;
    const std::optional<CType> type = UniformType(graph, node, target);
    if (node.inputs.size() != 2 || !type || r.type != out.element_type ||
        !ReduceSupported(r.op, *type) || out.NumElements() != r.outer * r.inner ||
        In(graph, node, 0).NumElements() != r.outer * r.size * r.inner ||
        In(graph, node, 1).NumElements() != 1) {
      return Kind::kNone;
    }
    return Kind::kReduce;
  }
  if (node.inputs.size() == 1 && node.converts) {
    return CTypeOf(In(graph, node, 0).element_type, target) ? Kind::kConvert : Kind::kNone;
  }
  if (node.inputs.size() == 1 && node.output_aliases_input) {
    const Shape& in = In(graph, node, 0);
    return in.element_type == out.element_type && in.NumElements() == out.NumElements()
               ? Kind::kView
               : Kind::kNone;
  }
  if (const Pointwise* read_node = ReadOf(node)) {
    const Pointwise& read = *read_node;
    return node.inputs.size() == 1 && In(graph, node, 0).element_type == out.element_type &&
                   read.dims.size() == read.strides.size()
               ? Kind::kRead
               : Kind::kNone;
  }
  // A select whose predicate is one element reads it for every element.
  const bool scalar_select = !node.pointwise && node.source && node.op == "stablehlo.select" &&
                             node.inputs.size() == 3 && In(graph, node, 0).NumElements() == 1 &&
                             In(graph, node, 0).element_type == ElementType::kPred &&
                             In(graph, node, 1).dims == out.dims &&
                             In(graph, node, 2).dims == out.dims;
  if (!scalar_select && (!node.pointwise || node.pointwise->kind != Pointwise::Kind::kMap)) {
    return Kind::kNone;
  }
  std::vector<std::string> args(node.inputs.size(), "x");
  return MapExpression(graph, node, target, args) ? Kind::kMap : Kind::kNone;
}

bool Elementwise(Kind kind) {
  return kind == Kind::kMap || kind == Kind::kRead || kind == Kind::kView || kind == Kind::kConvert;
}

// The node's kind; kNone for a node over f16 or bf16 that is not
// elementwise: only the elementwise kernels load and store 16-bit floats.
Kind KindOf(const Graph& graph, const Node& node, const Target& target) {
  const Kind kind = NodeKind(graph, node, target);
  if (kind == Kind::kNone || Elementwise(kind)) return kind;
  auto narrow = [&](ValueId value) {
    const std::optional<CType> type = CTypeOf(graph.shape(value).element_type, target);
    return type && type->narrow();
  };
  if (std::any_of(node.inputs.begin(), node.inputs.end(), narrow) ||
      std::any_of(node.outputs.begin(), node.outputs.end(), narrow)) {
    return Kind::kNone;
  }
  return kind;
}

// The exact literal of one element of `type` at `data`.
std::string Literal(const CType& type, ElementType element, const uint8_t* data) {
  auto load = [&](auto value) {
    std::memcpy(&value, data, sizeof(value));
    return value;
  };
  switch (element) {
    case ElementType::kF32: return StrCat("as_float(0x", ToHex(load(uint32_t{})), "u)");
    case ElementType::kF16: {
      const float value = static_cast<float>(
          Eigen::numext::bit_cast<kernels::half>(load(uint16_t{})));
      uint32_t bits;
      std::memcpy(&bits, &value, sizeof(bits));
      return StrCat("as_float(0x", ToHex(bits), "u)");
    }
    case ElementType::kBF16:
      return StrCat("as_float(0x", ToHex(uint32_t{load(uint16_t{})} << 16), "u)");
    case ElementType::kF64: return StrCat("as_double(0x", ToHex(load(uint64_t{})), "ul)");
    case ElementType::kPred:
    case ElementType::kU8: return StrCat("(", type.name, ")", int{load(uint8_t{})});
    case ElementType::kS8: return StrCat("(", type.name, ")(", int{load(int8_t{})}, ")");
    case ElementType::kU16: return StrCat("(", type.name, ")", load(uint16_t{}));
    case ElementType::kS16: return StrCat("(", type.name, ")(", load(int16_t{}), ")");
    case ElementType::kU32: return StrCat("(", type.name, ")", load(uint32_t{}), "u");
    case ElementType::kS32: return StrCat("as_int(0x", ToHex(load(uint32_t{})), "u)");
    case ElementType::kU64: return StrCat("(", type.name, ")", load(uint64_t{}), "ul");
    case ElementType::kS64: return StrCat("as_long(0x", ToHex(load(uint64_t{})), "ul)");
    default: return "0";
  }
}

}  // namespace

bool Generates(const Graph& graph, const Node& node, const Target& target) {
  return KindOf(graph, node, target) != Kind::kNone;
}

namespace {

// The shortest rows an elementwise kernel with strided reads runs over
// (EmitElementwise); shorter ones run flat.
constexpr int64_t kMinRow = 32;
// The elements a flat elementwise kernel's work item walks on a CPU device.
constexpr int64_t kChunk = 1024;
// The fewest elements a part of a split row reduction folds.
constexpr int64_t kMinPart = 8192;
// The most bytes of partial results a split column reduction keeps.
constexpr int64_t kMaxPartialBytes = int64_t{64} << 20;

// Helpers every segment's source starts with: max and min as XLA's CPU
// backend computes them (NaN propagates; ties keep the first operand).
std::string Prelude(const Target& target) {
  std::string text;
  if (target.doubles) text += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  std::vector<std::string_view> floats = {"float"};
  if (target.doubles) floats.push_back("double");
  // XLA's CPU backend computes with denormals flushed to zero, in and out
  // (MXCSR's DAZ and FTZ); arithmetic here flushes its operands and result
  // explicitly, since a device's own denormal mode varies (PoCL's vector and
  // scalar paths differ).
  // Branch-free (a zero exponent keeps only the sign bit), so that PoCL
  // vectorizes it across work items.
  text += "inline float ftz_float(float x) { const uint b = as_uint(x); "
          "return as_float((b & 0x7f800000u) == 0 ? (b & 0x80000000u) : b); }\n";
  // f16 and bf16 values: a float rounded to them (to nearest, ties to
  // even; a NaN stays a quiet NaN), and bf16's 16 bits to and from a float.
  // NaNs convert by hand: PoCL's vload_half and vstore_half_rte set every
  // payload bit (0x7fff), where the host's F16C conversions keep the
  // quiet bit and the payload's top bits (0x7e00), as XLA's do.
  text += "inline float kf16_float(ushort h) { const float f = vload_half(0, (const half*)&h); "
          "return ((h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0) ? "
          "as_float(((uint)(h & 0x8000u) << 16) | 0x7fc00000u | ((uint)(h & 0x3ffu) << 13)) "
          ": f; }\n"
          "inline ushort kf16_bits(float x) { ushort h; vstore_half_rte(x, 0, (half*)&h); "
          "const uint b = as_uint(x); return isnan(x) ? "
          "(ushort)(((b >> 16) & 0x8000u) | 0x7e00u | ((b >> 13) & 0x3ffu)) : h; }\n"
          "inline float kround_half(float x) { return kf16_float(kf16_bits(x)); }\n"
          "inline ushort kbf16_bits(float x) { const uint b = as_uint(x); "
          "const uint rounded = b + 0x7fffu + ((b >> 16) & 1u); "
          "return (ushort)((isnan(x) ? (b | 0x00400000u) : rounded) >> 16); }\n"
          "inline float kbf16_float(ushort b) { return as_float((uint)b << 16); }\n"
          "inline float kround_bf16(float x) { return kbf16_float(kbf16_bits(x)); }\n";
  if (target.doubles) {
    text += "inline double ftz_double(double x) { const ulong b = as_ulong(x); return "
            "as_double((b & 0x7ff0000000000000ul) == 0 ? (b & 0x8000000000000000ul) : b); }\n";
  }
  for (std::string_view t : floats) {
    // Eight lanes, for the row reductions' vector accumulators.
    const std::string_view minimum = t == "float" ? "FLT_MIN" : "DBL_MIN";
    for (std::string_view width : {"8", "16"}) {
      text += StrCat("inline ", t, width, " ftz_", t, width, "(", t, width,
                     " x) { return select(x, copysign((", t, width, ")(0), x), fabs(x) < (", t,
                     width, ")(", minimum, ")); }\n");
    }
    text += StrCat("inline ", t, "8 kmax_", t, "8(", t, "8 a, ", t, "8 b) { ", t,
                   "8 r = select(b, a, a >= b); r = select(r, b, isnan(b)); "
                   "return select(r, a, isnan(a)); }\n");
    text += StrCat("inline ", t, "8 kmin_", t, "8(", t, "8 a, ", t, "8 b) { ", t,
                   "8 r = select(b, a, a <= b); r = select(r, b, isnan(b)); "
                   "return select(r, a, isnan(a)); }\n");
  }
  // f32 tanh as XLA's CPU backend computes it (Eigen's rational
  // approximation: odd degree 13 over even degree 6, the input clamped to
  // +-7.9053, x itself below 0.0004 in magnitude); PoCL's tanh took 17 ns
  // an element, the rest of a ten-op chain 1.
  text += "inline float ktanh_float(float a) {\n"
          "  if (isnan(a) || fabs(a) < 0.0004f) return a;\n"
          "  const float x = clamp(a, -7.90531110763549805f, 7.90531110763549805f);\n"
          "  const float x2 = x * x;\n"
          "  float p = fma(x2, -2.76076847742355e-16f, 2.00018790482477e-13f);\n"
          "  p = fma(x2, p, -8.60467152213735e-11f);\n"
          "  p = fma(x2, p, 5.12229709037114e-08f);\n"
          "  p = fma(x2, p, 1.48572235717979e-05f);\n"
          "  p = fma(x2, p, 6.37261928875436e-04f);\n"
          "  p = fma(x2, p, 4.89352455891786e-03f);\n"
          "  p = x * p;\n"
          "  float q = fma(x2, 1.19825839466702e-06f, 1.18534705686654e-04f);\n"
          "  q = fma(x2, q, 2.26843463243900e-03f);\n"
          "  q = fma(x2, q, 4.89352518554385e-03f);\n"
          "  return p / q;\n"
          "}\n";
  // f32 exp as Kiln's host kernels compute it (kernels/vector_math.inc,
  // Exp16: x = n ln2 + t, a degree-6 polynomial in t, times 2^n; 0.88 ulp
  // at most), with inf above ln(FLT_MAX), 0 below the smallest result and
  // NaN kept. PoCL's exp took 4 to 5 ms over 2^20 floats; this, 1.
  text += "inline float kexp_float(float x) {\n"
          "  const float scaled = fma(x, as_float(0x3fb8aa3bu), as_float(0x4b400000u));\n"
          "  const float n = scaled - as_float(0x4b400000u);\n"
          "  const int e = as_int(scaled) << 23;\n"
          "  float t = fma(-n, as_float(0x3f317200u), x);\n"
          "  t = fma(-n, as_float(0x35bfbe8eu), t);\n"
          "  float p = as_float(0x3ab51225u);\n"
          "  p = fma(p, t, as_float(0x3c091ceau));\n"
          "  p = fma(p, t, as_float(0x3d2aac79u));\n"
          "  p = fma(p, t, as_float(0x3e2aaa49u));\n"
          "  p = fma(p, t, as_float(0x3efffffeu));\n"
          "  p = fma(p, t, 1.0f);\n"
          "  p = fma(p, t, 1.0f);\n"
          "  p = as_float(as_int(p) + e);\n"
          "  p = x > as_float(0x42b17217u) ? INFINITY : p;\n"
          "  p = x < as_float(0xc2aeac4fu) ? 0.0f : p;\n"
          "  return isnan(x) ? x : p;\n"
          "}\n";
  for (std::string_view t : floats) {
    text += StrCat("inline ", t, " kmax_", t, "(", t, " a, ", t,
                   " b) { return isnan(a) ? a : isnan(b) ? b : (a >= b ? a : b); }\n");
    text += StrCat("inline ", t, " kmin_", t, "(", t, " a, ", t,
                   " b) { return isnan(a) ? a : isnan(b) ? b : (a <= b ? a : b); }\n");
  }
  for (std::string_view t : {"uchar", "char", "ushort", "short", "uint", "int", "ulong", "long"}) {
    text += StrCat("inline ", t, " max_", t, "(", t, " a, ", t, " b) { return a >= b ? a : b; }\n");
    text += StrCat("inline ", t, " min_", t, "(", t, " a, ", t, " b) { return a <= b ? a : b; }\n");
  }
  // Integer division, remainder and shifts as XLA's CPU backend computes
  // them (kernels/elementwise_binary.cc): x / 0 is -1 (all ones) and x % 0
  // is x; the most negative value / -1 is itself, % -1 is 0; shifts by the
  // width or more give 0, or the sign for an arithmetic right shift. The
  // divisor is made 1 where the result is fixed, so that no lane traps.
  struct IntType {
    std::string_view name, unsigned_name, signed_name, lowest;
    int bits;
  };
  for (const IntType& t :
       {IntType{"uchar", "uchar", "char", "", 8}, IntType{"char", "uchar", "char", "CHAR_MIN", 8},
        IntType{"ushort", "ushort", "short", "", 16},
        IntType{"short", "ushort", "short", "SHRT_MIN", 16}, IntType{"uint", "uint", "int", "", 32},
        IntType{"int", "uint", "int", "INT_MIN", 32}, IntType{"ulong", "ulong", "long", "", 64},
        IntType{"long", "ulong", "long", "LONG_MIN", 64}}) {
    const std::string overflow = t.lowest.empty()
                                     ? "0"
                                     : StrCat("(a == ", t.lowest, " && b == (", t.name, ")(-1))");
    const std::string head = StrCat("inline ", t.name, " k");
    const std::string args = StrCat("_", t.name, "(", t.name, " a, ", t.name, " b) { ");
    text += StrCat(head, "div", args, "const int fixed = b == 0 || ", overflow, "; const ", t.name,
                   " q = a / (fixed ? (", t.name, ")1 : b); return b == 0 ? (", t.name,
                   ")(-1) : fixed ? a : q; }\n");
    text += StrCat(head, "rem", args, "const int fixed = b == 0 || ", overflow, "; const ", t.name,
                   " r = a % (fixed ? (", t.name, ")1 : b); return b == 0 ? a : fixed ? (", t.name,
                   ")0 : r; }\n");
    const std::string amount = StrCat("const ", t.unsigned_name, " n = (", t.unsigned_name, ")b; ");
    text += StrCat(head, "shl", args, amount, "return n >= ", t.bits, " ? (", t.name, ")0 : (",
                   t.name, ")((", t.unsigned_name, ")a << n); }\n");
    text += StrCat(head, "shrl", args, amount, "return n >= ", t.bits, " ? (", t.name, ")0 : (",
                   t.name, ")((", t.unsigned_name, ")a >> n); }\n");
    text += StrCat(head, "shra", args, amount, "const ", t.signed_name, " v = (", t.signed_name,
                   ")a; return (", t.name, ")(n >= ", t.bits, " ? (v < 0 ? (", t.signed_name,
                   ")(-1) : (", t.signed_name, ")0) : (", t.signed_name, ")(v >> n)); }\n");
  }
  return text;
}

// A reduction's identity, its combining expression of `a` and `b`, and,
// for float add, multiply, max and min, the same over kLanes-wide
// vectors (else empty).
struct Combiner {
  std::string identity, combine, vector_combine;
};
constexpr int kLanes = 8;
Combiner CombinerOf(kernels::ReduceOp op, ElementType element, const CType& t) {
  const std::string suffix(t.name);
  const std::string lanes = StrCat(t.name, kLanes);
  auto wide = [&](std::string_view sign) {
    return t.is_float ? StrCat("(a ", sign, " b)")
                      : StrCat("(", t.name, ")((", t.wide, ")a ", sign, " (", t.wide, ")b)");
  };
  Combiner c;
  switch (op) {
    case kernels::ReduceOp::kAdd: c = {StrCat("(", t.name, ")0"), wide("+"), "a + b"}; break;
    case kernels::ReduceOp::kMultiply: c = {StrCat("(", t.name, ")1"), wide("*"), "a * b"}; break;
    case kernels::ReduceOp::kMaximum:
      c = {t.is_float ? StrCat("(", t.name, ")(-INFINITY)") : Lowest(element),
           StrCat(t.is_float ? "kmax_" : "max_", suffix, "(a, b)"),
           StrCat("kmax_", lanes, "(a, b)")};
      break;
    case kernels::ReduceOp::kMinimum:
      c = {t.is_float ? StrCat("(", t.name, ")INFINITY") : Highest(element),
           StrCat(t.is_float ? "kmin_" : "min_", suffix, "(a, b)"),
           StrCat("kmin_", lanes, "(a, b)")};
      break;
    case kernels::ReduceOp::kAnd:
      c = {t.is_pred ? "(uchar)1" : StrCat("(", t.name, ")(~(", t.name, ")0)"),
           StrCat("(", t.name, ")(a & b)"), ""};
      break;
    case kernels::ReduceOp::kOr:
      c = {StrCat("(", t.name, ")0"), StrCat("(", t.name, ")(a | b)"), ""};
      break;
    case kernels::ReduceOp::kXor:
      c = {StrCat("(", t.name, ")0"), StrCat("(", t.name, ")(a ^ b)"), ""};
      break;
  }
  if (!t.is_float) c.vector_combine.clear();
  return c;
}

class Generator {
 public:
  Generator(const Graph& graph, const Target& target) : graph_(graph), target_(target) {
    for (size_t n = 0; n < graph.nodes.size(); ++n) {
      for (ValueId in : graph.nodes[n].inputs) readers_[in].push_back(n);
    }
    for (ValueId result : graph.results) results_.insert(result);
  }

  StatusOr<SegmentCode> Run() {
    code_.source = Prelude(target_);
    std::vector<size_t> group;
    int64_t group_count = -1;
    std::unordered_set<ValueId> produced;
    auto flush = [&]() -> Status {
      if (!group.empty()) KILN_RETURN_IF_ERROR(EmitElementwise(group));
      group.clear();
      produced.clear();
      return Status::Ok();
    };
    for (size_t n = 0; n < graph_.nodes.size(); ++n) {
      const Node& node = graph_.nodes[n];
      const Kind kind = KindOf(graph_, node, target_);
      if (kind == Kind::kNone) {
        return Internal("OpenCL: no code for node ", node.op, " at ", node.location);
      }
      if (!Elementwise(kind)) {
        KILN_RETURN_IF_ERROR(flush());
        KILN_RETURN_IF_ERROR(EmitKernel(kind, node));
        continue;
      }
      const int64_t count = Out(graph_, node).NumElements();
      const bool joins = !group.empty() && count == group_count && group.size() < kMaxGroup &&
                         !(kind == Kind::kRead && produced.contains(node.inputs[0]));
      if (!joins) {
        KILN_RETURN_IF_ERROR(flush());
        group_count = count;
      }
      group.push_back(n);
      produced.insert(node.outputs[0]);
    }
    KILN_RETURN_IF_ERROR(flush());
    return std::move(code_);
  }

 private:
  static constexpr size_t kMaxGroup = 256;

  std::string NextName() { return StrCat("k", code_.launches.size()); }

  // A value's or a temporary's element type.
  ElementType graph_type(ValueId value) const {
    return value < 0 ? code_.temporaries[TemporaryIndex(value)].type
                     : graph_.shape(value).element_type;
  }
  CType TypeOf(ValueId value) const { return *CTypeOf(graph_type(value), target_); }

  ValueId Temporary(ElementType type, int64_t elements) {
    code_.temporaries.push_back(
        {type, elements, static_cast<size_t>(elements) * GetElementTypeInfo(type).storage_bytes});
    return TemporaryId(code_.temporaries.size() - 1);
  }

  bool Constant1(ValueId value) const {
    const compiler::ValueInfo& info = graph_.values[static_cast<size_t>(value)];
    return info.constant && info.shape.NumElements() == 1 && info.constant->size() >= info.bytes;
  }

  // The kernel's parameter list and pointer declarations for `arrays`
  // (the first `inputs` of them read only). Restricted: no two values of a
  // segment share bytes (two may share a buffer, at disjoint offsets), and
  // without it PoCL's compiler left kernels reading two arrays scalar.
  std::string Signature(const std::string& name, const std::vector<ValueId>& arrays, size_t inputs,
                        std::string& declarations, std::string_view attribute = "") {
    std::string parameters;
    for (size_t j = 0; j < arrays.size(); ++j) {
      const bool input = j < inputs;
      const CType type = TypeOf(arrays[j]);
      parameters += StrCat(j == 0 ? "" : ", ", "__global ", input ? "const " : "",
                           "uchar* restrict b", j, ", ulong o", j);
      declarations += StrCat("  __global ", input ? "const " : "", type.stored(), "* p", j,
                             " = (__global ", input ? "const " : "", type.stored(), "*)(b", j,
                             " + o", j, ");\n");
    }
    return StrCat("__kernel ", attribute, " void ", name, "(", parameters, ") {\n");
  }

  // `items` work items rounded up to whole work-groups of `local`.
  static size_t RoundUp(int64_t items, size_t local) {
    return (static_cast<size_t>(items) + local - 1) / local * local;
  }

  size_t WorkGroup(size_t wanted) const {
    size_t size = 1;
    const size_t limit = std::max<size_t>(1, std::min(wanted, target_.max_work_group_size));
    while (size * 2 <= limit) size *= 2;
    return size;
  }

  Status EmitElementwise(const std::vector<size_t>& group) {
    flushed_.clear();
    std::unordered_set<size_t> members(group.begin(), group.end());
    std::unordered_set<ValueId> produced;
    for (size_t n : group) produced.insert(graph_.nodes[n].outputs[0]);
    // The arrays: inputs read from memory (not 1-element constants, which
    // become literals), then the outputs stored.
    std::vector<ValueId> arrays;
    std::unordered_map<ValueId, size_t> index;
    for (size_t n : group) {
      for (ValueId in : graph_.nodes[n].inputs) {
        if (produced.contains(in) || Constant1(in) || index.contains(in)) continue;
        index.emplace(in, arrays.size());
        arrays.push_back(in);
      }
    }
    const size_t inputs = arrays.size();
    for (size_t n : group) {
      const ValueId out = graph_.nodes[n].outputs[0];
      bool stored = results_.contains(out);
      for (size_t reader : readers_[out]) stored = stored || !members.contains(reader);
      if (!stored) continue;
      index.emplace(out, arrays.size());
      arrays.push_back(out);
    }
    if (arrays.size() == inputs) return Status::Ok();  // computes nothing kept
    const int64_t count = Out(graph_, graph_.nodes[group.front()]).NumElements();
    if (count == 0) return Status::Ok();
    // Rows of the first strided read's last dimension when it is long
    // enough to vectorize and there are rows enough for every compute
    // unit (ReadIndex); 0: a flat kernel.
    int64_t cols = 0;
    for (size_t n : group) {
      const Node& node = graph_.nodes[n];
      if (KindOf(graph_, node, target_) != Kind::kRead || ReadOf(node)->dims.empty()) continue;
      const int64_t last = ReadOf(node)->dims.back();
      if (last >= kMinRow && count % last == 0 && count / last >= 2 * target_.compute_units) {
        cols = last;
      }
      break;
    }

    std::unordered_map<ValueId, std::string> loaded;  // inputs read at i
    std::string body;
    auto value_at = [&](ValueId value, const std::string& at) -> std::string {
      if (produced.contains(value)) return StrCat("v", value);
      if (Constant1(value)) {
        return Literal(TypeOf(value), graph_.shape(value).element_type,
                       graph_.values[static_cast<size_t>(value)].constant->data());
      }
      // A one-element input of a larger kernel (a select's predicate) is
      // read at 0.
      const bool single = graph_.shape(value).NumElements() == 1;
      const std::string load = Load(TypeOf(value), index.at(value), single ? "0" : at);
      if (at != "i") return load;
      auto found = loaded.find(value);
      if (found != loaded.end()) return found->second;
      const std::string name = StrCat("x", value);
      body += StrCat("    const ", TypeOf(value).name, " ", name, " = ", load, ";\n");
      loaded.emplace(value, name);
      return name;
    };
    for (size_t n : group) {
      const Node& node = graph_.nodes[n];
      const ValueId out = node.outputs[0];
      const CType type = TypeOf(out);
      std::string expression;
      switch (KindOf(graph_, node, target_)) {
        case Kind::kView: expression = value_at(node.inputs[0], "i"); break;
        case Kind::kConvert: {
          const CType from = TypeOf(node.inputs[0]);
          if (std::optional<std::string> exact = NarrowConvert(node, [&] {
                return value_at(node.inputs[0], "i");
              })) {
            expression = std::move(*exact);
            break;
          }
          const std::string x = FlushedInput(node.inputs[0], value_at(node.inputs[0], "i"));
          if (type.is_pred) {
            expression = StrCat("(uchar)(", x, " != 0)");
          } else if (from.is_float && !type.is_float) {
            expression = StrCat("convert_", type.name, "_sat(", x, ")");
          } else {
            expression = Flushed(out, StrCat("(", type.name, ")(", x, ")"));
          }
          break;
        }
        case Kind::kRead:
          expression = value_at(node.inputs[0],
                                ReadIndex(*ReadOf(node), Out(graph_, node).NumElements(),
                                          In(graph_, node, 0).NumElements(), cols));
          break;
        case Kind::kMap: {
          if (std::optional<std::string> exact = NarrowConvert(node, [&] {
                return value_at(node.inputs[0], "i");
              })) {
            expression = std::move(*exact);
            break;
          }
          // A select moves values as they are; arithmetic flushes.
          const bool moves = node.op == "stablehlo.select";
          std::vector<std::string> args;
          for (ValueId in : node.inputs) {
            std::string arg = value_at(in, "i");
            args.push_back(moves ? arg : FlushedInput(in, arg));
          }
          std::optional<std::string> map = MapExpression(graph_, node, target_, args);
          if (!map) return Internal("OpenCL: no expression for ", node.op);
          expression = moves ? std::move(*map) : Flushed(out, *map);
          break;
        }
        default: return Internal("OpenCL: ", node.op, " in an elementwise kernel");
      }
      // An expression that flushed its result (arithmetic; a select or a
      // view moves values as they are) needs no flush where it is read.
      if (expression.rfind("ftz_", 0) == 0 || expression.rfind("kround_half(", 0) == 0 ||
          expression.rfind("kround_bf16(ftz_", 0) == 0) {
        flushed_.insert(out);
      }
      body += StrCat("    const ", type.name, " v", out, " = ", expression, ";\n");
      if (auto stored = index.find(out); stored != index.end() && stored->second >= inputs) {
        body += StrCat("    ", Store(type, stored->second, "i", StrCat("v", out)), ";\n");
      }
    }
    const std::string name = NextName();
    std::string declarations;
    std::string source = Signature(name, arrays, inputs, declarations);
    source += declarations;
    if (!target_.gpu) return LoopOverRows(name, std::move(arrays), source, body, count, cols);
    // One element per work item, in groups of 256; with strided reads, over
    // rows (ReadIndex).
    const size_t local = WorkGroup(std::min<int64_t>(256, cols > 0 ? cols : 256));
    if (cols > 0) {
      source += StrCat(
          "  const ulong col = get_global_id(0), row = get_global_id(1);\n  if (col < ", cols,
          "ul) {\n    const ulong i = row * ", cols, "ul + col;\n", body, "  }\n}\n");
      code_.source += source;
      const size_t groups = (static_cast<size_t>(cols) + local - 1) / local;
      code_.launches.push_back({name,
                                std::move(arrays),
                                {groups * local, static_cast<size_t>(count / cols)},
                                {local, 1}});
      return Status::Ok();
    }
    source += StrCat("  const ulong i = get_global_id(0);\n  if (i < ", count, "ul) {\n", body,
                     "  }\n}\n");
    code_.source += source;
    const size_t groups = (static_cast<size_t>(count) + local - 1) / local;
    code_.launches.push_back({name, std::move(arrays), {groups * local}, {local}});
    return Status::Ok();
  }

  // An elementwise kernel for a CPU device (PoCL): a work item per row of
  // `cols` elements (0: per run of kChunk), walking it in a loop the
  // device's compiler vectorizes, with what a strided read takes from the
  // row computed once (ReadIndex). PoCL vectorizes across work items too,
  // but gave up on a kernel reading a second array at a row-dependent
  // place. Measured on PoCL 3.1 (2 cores), softmax's exp(x - max) over
  // 1024 x 1024: 0.5 to 0.7 ms so, 4 to 6.7 ms with an element per work
  // item; a ten-op chain over 2^20 f32: 1.9 to 3.4 ms so, 3.0 to 4.8.
  Status LoopOverRows(const std::string& name, std::vector<ValueId> arrays, std::string source,
                      const std::string& body, int64_t count, int64_t cols) {
    const int64_t length = cols > 0 ? cols : std::min(count, kChunk);
    const int64_t rows = (count + length - 1) / length;
    source += StrCat("  const ulong row = get_global_id(0);\n  if (row >= ", rows,
                     "ul) return;\n  const ulong length = min(", length, "ul, ", count,
                     "ul - row * ", length,
                     "ul);\n  for (ulong col = 0; col < length; ++col) {\n"
                     "    const ulong i = row * ",
                     length, "ul + col;\n", body, "  }\n}\n");
    code_.source += source;
    // Work-groups of up to 16 rows, at least 4 per compute unit.
    const size_t local = WorkGroup(std::clamp<int64_t>(rows / (4 * target_.compute_units), 1, 16));
    const size_t groups = (static_cast<size_t>(rows) + local - 1) / local;
    code_.launches.push_back({name, std::move(arrays), {groups * local}, {local}});
    return Status::Ok();
  }

  // `expression`, a value of `value`'s type, with denormals flushed when
  // it is a float.
  // A float result flushed to zero when denormal, as XLA's CPU backend
  // computes; an f16 or bf16 one rounded to its type after the op, as it
  // stores every op's result (f16's denormals lie far above f32's).
  std::string Flushed(ValueId value, const std::string& expression) const {
    const CType type = TypeOf(value);
    if (!type.is_float) return expression;
    const std::string flushed = StrCat("ftz_", type.name, "(", expression, ")");
    switch (type.storage) {
      case CType::Storage::kHalf: return StrCat("kround_half(", expression, ")");
      case CType::Storage::kBfloat16: return StrCat("kround_bf16(", flushed, ")");
      case CType::Storage::kNative: break;
    }
    return flushed;
  }
  // Flushed, for an operand: values this kernel's arithmetic computed are
  // flushed already, and f16 values are never f32 denormals.
  std::string FlushedInput(ValueId value, const std::string& expression) const {
    if (flushed_.contains(value) || TypeOf(value).storage == CType::Storage::kHalf) {
      return expression;
    }
    return Flushed(value, expression);
  }
  // A conversion between float types one of which is f16 or bf16, which
  // XLA makes on the bits: a denormal stays one (a bf16 denormal is an f32
  // denormal), and the result is rounded to a narrow type without a flush.
  // `operand` gives the input's expression. Nothing for other nodes.
  std::optional<std::string> NarrowConvert(const Node& node,
                                           FunctionRef<std::string()> operand) const {
    if (node.inputs.size() != 1 || node.outputs.size() != 1 ||
        (!node.converts && node.op != "stablehlo.convert")) {
      return std::nullopt;
    }
    const CType from = TypeOf(node.inputs[0]), to = TypeOf(node.outputs[0]);
    if (!from.is_float || !to.is_float || (!from.narrow() && !to.narrow())) return std::nullopt;
    const std::string x = StrCat("(", to.name, ")(", operand(), ")");
    switch (to.storage) {
      case CType::Storage::kHalf: return StrCat("kround_half(", x, ")");
      case CType::Storage::kBfloat16: return StrCat("kround_bf16(", x, ")");
      case CType::Storage::kNative: break;
    }
    return x;
  }

  // Element `at` of array `array` (p<array>) of `type`, as the type it
  // computes in; and the statement storing `value` there.
  static std::string Load(const CType& type, size_t array, const std::string& at) {
    switch (type.storage) {
      case CType::Storage::kHalf: return StrCat("kf16_float(p", array, "[", at, "])");
      case CType::Storage::kBfloat16: return StrCat("kbf16_float(p", array, "[", at, "])");
      case CType::Storage::kNative: break;
    }
    return StrCat("p", array, "[", at, "]");
  }
  static std::string Store(const CType& type, size_t array, const std::string& at,
                           const std::string& value) {
    switch (type.storage) {
      case CType::Storage::kHalf: return StrCat("p", array, "[", at, "] = kf16_bits(", value, ")");
      case CType::Storage::kBfloat16:
        return StrCat("p", array, "[", at, "] = kbf16_bits(", value, ")");
      case CType::Storage::kNative: break;
    }
    return StrCat("p", array, "[", at, "] = ", value);
  }

  // The source element a strided read takes for output element i. In a
  // kernel over rows of `cols` elements (cols > 0, see EmitElementwise), a
  // read whose trailing dimensions hold exactly `cols` elements takes their
  // coordinates from `col` and the others' from `row`: the row's part is
  // the same for a run of work items, which a CPU device's compiler then
  // vectorizes (PoCL left a broadcast over the flat index scalar: 5.9 ms
  // for softmax's exp(x - max) over 1024 x 1024, against 0.8 on the host).
  // In 32-bit arithmetic when every index fits (`source_elements`, the
  // output's `count`): vector units have no 64-bit division or multiply.
  static std::string ReadIndex(const Pointwise& read, int64_t count, int64_t source_elements,
                               int64_t cols) {
    const bool narrow = std::max(count, source_elements) < (int64_t{1} << 31);
    const std::string_view type = narrow ? "uint" : "long";
    const std::string_view suffix = narrow ? "u" : "l";
    // The first of the trailing dimensions that hold `cols` elements, or
    // none (every coordinate from i).
    std::optional<size_t> split;
    if (cols > 0) {
      int64_t product = 1;
      for (size_t j = read.dims.size(); j-- > 0 && product < cols;) {
        product *= read.dims[j];
        if (product == cols) split = j;
      }
    }
    std::string index = StrCat("(", read.base, suffix);
    int64_t inner = 1;
    for (size_t j = read.dims.size(); j-- > 0;) {
      if (split && j + 1 == *split) inner = 1;  // from the row's coordinates on
      const int64_t dim = read.dims[j];
      const bool first = split ? (j == 0 || j == *split) : j == 0;
      if (dim != 1 && read.strides[j] != 0) {
        const std::string_view from = !split ? "i" : j >= *split ? "col" : "row";
        const std::string position = StrCat("(", type, ")", from);
        std::string coordinate = inner == 1 ? position
                                            : StrCat("(", position, " / ", inner, suffix, ")");
        if (!first) coordinate = StrCat("(", coordinate, " % ", dim, suffix, ")");
        // A negative stride (reverse) stays exact modulo 2^32: the index
        // sum is non-negative.
        index += StrCat(" + ", coordinate, " * (", type, ")(", read.strides[j], "l)");
      }
      inner *= dim;
    }
    return index + ")";
  }

  // `count` zeros into `array` (a product over an empty contraction).
  Status EmitZeros(ValueId array, int64_t count) {
    if (count == 0) return Status::Ok();
    const std::string name = NextName();
    std::vector<ValueId> arrays = {array};
    std::string declarations;
    std::string source = Signature(name, arrays, 0, declarations);
    source += declarations;
    source += StrCat("  const ulong i = get_global_id(0);\n  if (i < ", count, "ul) p0[i] = (",
                     TypeOf(array).name, ")0;\n}\n");
    code_.source += source;
    const size_t local = WorkGroup(256);
    code_.launches.push_back({name, std::move(arrays), {RoundUp(count, local)}, {local}});
    return Status::Ok();
  }

  // A node of its own kernels (not elementwise).
  Status EmitKernel(Kind kind, const Node& node) {
    switch (kind) {
      case Kind::kReduce: return EmitReduce(node);
      case Kind::kMatMul:
        return EmitMatMul(node.inputs[0], node.inputs[1], node.outputs[0], *node.matmul);
      case Kind::kIm2Col: return EmitIm2Col(node.inputs[0], node.outputs[0], *node.im2col);
      case Kind::kDepthwise:
        return EmitDepthwise(node.inputs[0], node.inputs[1], node.outputs[0], *node.depthwise);
      case Kind::kConvolution: {
        // The column matrix in a temporary, then the GEMM.
        const kernels::ConvGeometry& g = *node.convolution;
        kernels::MatMulShape shape;
        shape.batch = 1;
        shape.m = g.rows();
        shape.n = g.output_features;
        shape.k = g.window_size() * g.features;
        const ValueId columns = Temporary(graph_type(node.outputs[0]), shape.m * shape.k);
        KILN_RETURN_IF_ERROR(EmitIm2Col(node.inputs[0], columns, g));
        return EmitMatMul(columns, node.inputs[1], node.outputs[0], shape);
      }
      default: return Internal("OpenCL: ", node.op, " is no kernel of its own");
    }
  }

  // `columns` = kernels::Im2Col(`image`): a work item per (group, row,
  // window position), copying the group's features under that position
  // of the image (NHWC), or zeros where it falls on padding or between
  // dilated elements.
  // An NHWC image's strides in elements, per spatial dimension, into
  // `stride`; returns a batch element's.
  static int64_t ImageStrides(const kernels::ConvGeometry& g, std::vector<int64_t>& stride) {
    stride.assign(g.window.size(), 0);
    int64_t pixel = g.features;
    for (size_t d = stride.size(); d-- > 0;) {
      stride[d] = pixel;
      pixel *= g.input_spatial[d];
    }
    return pixel;
  }
  // Statements that add to `offset` the input element under output
  // position y<d> and window position k<d>, and clear `inside` when it
  // falls on padding or between dilated input elements.
  static std::string WindowTerms(const kernels::ConvGeometry& g, const std::vector<int64_t>& stride,
                                 std::string_view indent) {
    std::string text;
    for (size_t d = 0; d < g.window.size(); ++d) {
      text += StrCat(indent, "{ const long dilated = y", d, " * ", g.strides[d], "l + k", d, " * ",
                     g.rhs_dilation[d], "l - (", g.padding_low[d], "l);\n", indent,
                     "  inside = inside && dilated >= 0 && dilated % ", g.lhs_dilation[d],
                     "l == 0 && dilated / ", g.lhs_dilation[d], "l < ", g.input_spatial[d], "l;\n",
                     indent, "  offset += dilated / ", g.lhs_dilation[d], "l * ", stride[d],
                     "l; }\n");
    }
    return text;
  }

  // A depthwise convolution, computed directly: output element (pixel, f)
  // sums, over the window's positions in order, the input feature
  // f / multiplier under each position times the kernel's element there.
  // On a CPU device a work item walks one output pixel, adding each window
  // position's products into the pixel's features (a loop over features
  // the device's compiler vectorizes); on a GPU a work item per output
  // element.
  Status EmitDepthwise(ValueId image, ValueId kernel, ValueId out, const kernels::ConvGeometry& g) {
    const int64_t pixels = g.rows(), features = g.output_features, window = g.window_size();
    if (pixels * features == 0) return Status::Ok();
    const int64_t multiplier = features / g.features;
    const CType t = TypeOf(out);
    const std::string name = NextName();
    std::vector<ValueId> arrays = {image, kernel, out};
    std::string declarations;
    std::string source = Signature(name, arrays, 2, declarations);
    source += declarations;
    const size_t rank = g.window.size();
    std::vector<int64_t> stride;
    const int64_t pixel = ImageStrides(g, stride);
    const std::string flush = StrCat("ftz_", t.name);
    const std::string feature = multiplier == 1 ? "f" : StrCat("f / ", multiplier, "l");
    // Decomposes output pixel `pixel` and window position `k` into the
    // input element's offset and whether it lies inside the image.
    std::string position = "    long r = pixel, w = k;\n";
    for (size_t d = rank; d-- > 0;) {
      position += StrCat("    const long y", d, " = r % ", g.output_spatial[d],
                         "l; r /= ", g.output_spatial[d], "l;\n    const long k", d, " = w % ",
                         g.window[d], "l; w /= ", g.window[d], "l;\n");
    }
    position += StrCat("    long offset = r * ", pixel, "l;\n    int inside = 1;\n");
    position += WindowTerms(g, stride, "    ");
    if (!target_.gpu) {
      source += StrCat("  const long pixel = get_global_id(0);\n  if (pixel >= ", pixels,
                       "l) return;\n  __global ", t.name, "* dst = p2 + pixel * ", features,
                       "l;\n  for (long f = 0; f < ", features, "l; ++f) dst[f] = (", t.name,
                       ")0;\n  for (long k = 0; k < ", window, "l; ++k) {\n", position,
                       "    if (!inside) continue;\n    __global const ", t.name,
                       "* x = p0 + offset;\n    __global const ", t.name, "* c = p1 + k * ",
                       features, "l;\n    for (long f = 0; f < ", features,
                       "l; ++f) dst[f] = ", flush, "(dst[f] + ", flush, "(x[", feature,
                       "] * c[f]));\n  }\n}\n");
      code_.source += source;
      const size_t local = WorkGroup(16);
      code_.launches.push_back({name, std::move(arrays), {RoundUp(pixels, local)}, {local}});
      return Status::Ok();
    }
    source += StrCat("  const long item = get_global_id(0);\n  if (item >= ", pixels * features,
                     "l) return;\n  const long pixel = item / ", features, "l, f = item % ",
                     features, "l;\n  ", t.name, " sum = (", t.name, ")0;\n  for (long k = 0; k < ",
                     window, "l; ++k) {\n", position, "    if (inside) sum = ", flush, "(sum + ",
                     flush, "(p0[offset + ", feature, "] * p1[k * ", features,
                     "l + f]));\n  }\n  p2[item] = sum;\n}\n");
    code_.source += source;
    const size_t local = WorkGroup(64);
    code_.launches.push_back(
        {name, std::move(arrays), {RoundUp(pixels * features, local)}, {local}});
    return Status::Ok();
  }

  Status EmitIm2Col(ValueId image, ValueId columns, const kernels::ConvGeometry& g) {
    const int64_t window = g.window_size(), features = g.group_features();
    const int64_t items = g.groups() * g.rows() * window;
    if (items == 0 || features == 0) return Status::Ok();
    const CType t = TypeOf(columns);
    const std::string name = NextName();
    std::vector<ValueId> arrays = {image, columns};
    std::string declarations;
    std::string source = Signature(name, arrays, 1, declarations);
    source += declarations;
    const size_t rank = g.window.size();
    std::vector<int64_t> stride;
    const int64_t pixel = ImageStrides(g, stride);
    source += StrCat("  const long item = get_global_id(0);\n  if (item >= ", items,
                     "l) return;\n  const long task = item / ", window, "l, group = task / ",
                     g.rows(), "l;\n  long r = task % ", g.rows(), "l, w = item % ", window,
                     "l;\n");
    for (size_t d = rank; d-- > 0;) {
      source += StrCat("  const long y", d, " = r % ", g.output_spatial[d],
                       "l; r /= ", g.output_spatial[d], "l;\n  const long k", d, " = w % ",
                       g.window[d], "l; w /= ", g.window[d], "l;\n");
    }
    const std::string batch = g.batch_groups > 1
                                  ? StrCat("(group * ", g.batch / g.batch_groups, "l + r)")
                                  : std::string("r");
    source += StrCat("  long offset = ", batch, " * ", pixel, "l",
                     g.feature_groups > 1 ? StrCat(" + group * ", features, "l") : "",
                     ";\n  int inside = 1;\n");
    source += WindowTerms(g, stride, "  ");
    source += StrCat("  __global ", t.name, "* dst = p1 + item * ", features, "l;\n");
    source += StrCat("  if (inside) { for (long f = 0; f < ", features,
                     "l; ++f) dst[f] = p0[offset + f]; }\n  else { for (long f = 0; f < ", features,
                     "l; ++f) dst[f] = (", t.name, ")0; }\n}\n");
    code_.source += source;
    const size_t local = WorkGroup(64);
    code_.launches.push_back({name, std::move(arrays), {RoundUp(items, local)}, {local}});
    return Status::Ok();
  }

  // A reduction over consecutive dimensions: rows (inner == 1), split in
  // parts first when there are too few rows for the device's compute
  // units, or columns.
  Status EmitReduce(const Node& node) {
    const compiler::ReductionShape& shape = *node.reduction;
    if (shape.outer * shape.inner == 0) return Status::Ok();
    const ValueId operand = node.inputs[0], init = node.inputs[1], out = node.outputs[0];
    if (shape.inner > 1) return EmitColumns(node);
    // Parts of kMinPart elements and more, so that about eight work items
    // (CPU) or work-groups (GPU) per compute unit fold at once.
    const int64_t wanted = 8 * static_cast<int64_t>(target_.compute_units);
    const int64_t parts = std::clamp<int64_t>((wanted + shape.outer - 1) / shape.outer, 1,
                                              std::max<int64_t>(1, shape.size / kMinPart));
    if (parts == 1) {
      return EmitRows({operand, out, init, shape.outer, shape.size, 1, shape.size}, shape.op);
    }
    const int64_t length = (shape.size + parts - 1) / parts;
    const ValueId partials = Temporary(shape.type, shape.outer * parts);
    KILN_RETURN_IF_ERROR(EmitRows({operand, partials, std::nullopt, shape.outer * parts, length,
                                   parts, shape.size},
                                  shape.op));
    return EmitRows({partials, out, init, shape.outer, parts, 1, parts}, shape.op);
  }

  // What a row-reduction kernel folds: row r holds the `length` elements of
  // `input` from (r / parts) * size + (r % parts) * length (a split row's
  // last part may be shorter), folded into `output`[r], then with `init`'s
  // one element (none: the row's fold alone).
  struct Rows {
    ValueId input, output;
    std::optional<ValueId> init;
    int64_t rows, length, parts, size;
  };

  // The row's first element `x` and its element count `n`, as kernel code.
  static std::string RowStart(const Rows& rows, std::string_view row) {
    if (rows.parts == 1) {
      return StrCat("    __global const TYPE* x = p0 + ", row, " * ", rows.size,
                    "ul;\n    const ulong n = ", rows.size, "ul;\n");
    }
    return StrCat("    const ulong piece = ", row, " % ", rows.parts, "ul;\n",
                  "    __global const TYPE* x = p0 + (", row, " / ", rows.parts, "ul) * ",
                  rows.size, "ul + piece * ", rows.length, "ul;\n    const ulong n = min(",
                  rows.length, "ul, ", rows.size, "ul - piece * ", rows.length, "ul);\n");
  }

  // `acc` folded with the init (if any) and flushed, into `output`[row].
  std::string RowStore(const Rows& rows, std::string_view acc, std::string_view row) const {
    if (!rows.init)
      return StrCat("    p1[", row, "] = ", Flushed(rows.output, std::string(acc)), ";\n");
    return StrCat("    { const TYPE a = ", Flushed(*rows.init, "p1[0]"), ", b = ", acc, "; p2[",
                  row, "] = ", Flushed(rows.output, "COMBINE(a, b)"), "; }\n");
  }

  std::vector<ValueId> RowArrays(const Rows& rows) const {
    if (rows.init) return {rows.input, *rows.init, rows.output};
    return {rows.input, rows.output};
  }

  Status EmitRows(const Rows& rows, kernels::ReduceOp op) {
    if (!target_.gpu) return EmitRowsByItems(rows, op);
    const CType t = TypeOf(rows.output);
    const Combiner c = CombinerOf(op, graph_type(rows.output), t);
    const std::string name = NextName();
    std::vector<ValueId> arrays = RowArrays(rows);
    const size_t local = WorkGroup(64);
    std::string declarations;
    std::string source = Signature(name, arrays, arrays.size() - 1, declarations,
                                   StrCat("__attribute__((reqd_work_group_size(", local,
                                          ", 1, 1)))"));
    source += declarations;
    source += StrCat("  #define TYPE ", t.name, "\n  #define COMBINE(a, b) ", c.combine, "\n");
    source += StrCat("  __local TYPE part[", local, "];\n");
    source += "  const ulong row = get_group_id(0);\n  const uint l = get_local_id(0);\n  {\n";
    source += RowStart(rows, "row");
    source += StrCat("    TYPE acc = ", c.identity, ";\n");
    source += StrCat("    for (ulong c = l; c < n; c += ", local,
                     ") { const TYPE a = acc, b = ", Flushed(rows.input, "x[c]"),
                     "; acc = COMBINE(a, b); }\n");
    source += "    part[l] = acc;\n  }\n  barrier(CLK_LOCAL_MEM_FENCE);\n";
    source += StrCat("  for (uint s = ", local / 2,
                     "; s > 0; s >>= 1) {\n    if (l < s) { const TYPE a = part[l], b = part[l + "
                     "s]; part[l] = COMBINE(a, b); }\n"
                     "    barrier(CLK_LOCAL_MEM_FENCE);\n  }\n");
    source += "  if (l == 0) {\n" + RowStore(rows, "part[0]", "row") + "  }\n";
    source += "  #undef COMBINE\n  #undef TYPE\n}\n";
    code_.source += source;
    code_.launches.push_back(
        {name, std::move(arrays), {static_cast<size_t>(rows.rows) * local}, {local}});
    return Status::Ok();
  }

  // A row reduction for a device whose work items are CPU threads' loop
  // iterations (PoCL): one work item per row, walking it with kLanes
  // independent accumulators the compiler can keep in one vector register,
  // folded together at the end. A work-group per row, as a GPU wants, costs
  // PoCL a barrier per level of its tree.
  Status EmitRowsByItems(const Rows& rows, kernels::ReduceOp op) {
    const CType t = TypeOf(rows.output);
    const Combiner c = CombinerOf(op, graph_type(rows.output), t);
    const std::string name = NextName();
    std::vector<ValueId> arrays = RowArrays(rows);
    std::string declarations;
    std::string source = Signature(name, arrays, arrays.size() - 1, declarations);
    source += declarations;
    source += StrCat("  #define TYPE ", t.name, "\n  #define COMBINE(a, b) ", c.combine, "\n");
    source += StrCat("  for (ulong row = get_global_id(0); row < ", rows.rows,
                     "ul; row += get_global_size(0)) {\n");
    source += RowStart(rows, "row");
    const std::string lanes = StrCat(t.name, kLanes);
    if (!c.vector_combine.empty()) {
      // Floats: one vector of kLanes accumulators, flushed lane-wise.
      source += StrCat("    ", lanes, " acc = (", lanes, ")(", c.identity, ");\n");
      source += StrCat("    ulong c = 0;\n    for (; c + ", kLanes, " <= n; c += ", kLanes,
                       ") {\n      const ", lanes, " a = acc, b = ftz_", lanes, "(vload", kLanes,
                       "(0, x + c));\n      acc = ", c.vector_combine, ";\n    }\n");
      source += StrCat("    TYPE lane[", kLanes, "];\n    vstore", kLanes, "(acc, 0, lane);\n");
      for (int lane = 0; lane < kLanes; ++lane) {
        source += StrCat("    TYPE acc", lane, " = lane[", lane, "];\n");
      }
    } else {
      for (int lane = 0; lane < kLanes; ++lane) {
        source += StrCat("    TYPE acc", lane, " = ", c.identity, ";\n");
      }
      source += StrCat("    ulong c = 0;\n    for (; c + ", kLanes, " <= n; c += ", kLanes,
                       ") {\n");
      for (int lane = 0; lane < kLanes; ++lane) {
        source += StrCat("      { const TYPE a = acc", lane,
                         ", b = ", Flushed(rows.input, StrCat("x[c + ", lane, "]")), "; acc", lane,
                         " = COMBINE(a, b); }\n");
      }
      source += "    }\n";
    }
    source += StrCat("    for (; c < n; ++c) { const TYPE a = acc0, b = ",
                     Flushed(rows.input, "x[c]"), "; acc0 = COMBINE(a, b); }\n");
    for (int width = kLanes / 2; width >= 1; width /= 2) {
      for (int lane = 0; lane < width; ++lane) {
        source += StrCat("    { const TYPE a = acc", lane, ", b = acc", lane + width, "; acc", lane,
                         " = COMBINE(a, b); }\n");
      }
    }
    source += RowStore(rows, "acc0", "row");
    source += "  }\n  #undef COMBINE\n  #undef TYPE\n}\n";
    code_.source += source;
    // A work item per row, in work-groups of up to 256 (PoCL runs a group
    // as one loop; measured on PoCL 3.1, 2048 rows of 2048 floats: 0.46 ms
    // in groups of 256, 0.7 to 1.0 ms in groups of one), leaving eight
    // groups per compute unit where the rows allow (PoCL hands groups to
    // its threads as they finish: few groups balance badly).
    const size_t local = WorkGroup(
        std::clamp<int64_t>(rows.rows / (8 * static_cast<int64_t>(target_.compute_units)), 1, 256));
    const size_t items = RoundUp(rows.rows, local);
    code_.launches.push_back({name, std::move(arrays), {items}, {local}});
    return Status::Ok();
  }

  // A reduction over leading or middle dimensions ([outer][size][inner],
  // inner > 1). On a GPU: a work item per output element, walking `size`
  // elements `inner` apart, which neighbouring work items read side by
  // side. On a CPU device (EmitColumnParts): whole rows at a time.
  Status EmitColumns(const Node& node) {
    const compiler::ReductionShape& shape = *node.reduction;
    if (!target_.gpu) return EmitColumnsOnCpu(node);
    const CType t = TypeOf(node.outputs[0]);
    const Combiner c = CombinerOf(shape.op, shape.type, t);
    const std::string name = NextName();
    std::vector<ValueId> arrays = {node.inputs[0], node.inputs[1], node.outputs[0]};
    std::string declarations;
    std::string source = Signature(name, arrays, 2, declarations);
    source += declarations;
    const int64_t items = shape.outer * shape.inner;
    source += StrCat("  #define TYPE ", t.name, "\n  #define COMBINE(a, b) ", c.combine, "\n");
    source += StrCat("  const ulong item = get_global_id(0);\n  if (item >= ", items,
                     "ul) return;\n  const ulong o = item / ", shape.inner, "ul, j = item % ",
                     shape.inner, "ul;\n");
    source += StrCat("  __global const TYPE* x = p0 + o * ", shape.size * shape.inner,
                     "ul + j;\n  TYPE acc = ", c.identity, ";\n");
    source += StrCat("  for (ulong s = 0; s < ", shape.size, "ul; ++s, x += ", shape.inner,
                     "ul) { const TYPE a = acc, b = ", Flushed(node.inputs[0], "x[0]"),
                     "; acc = COMBINE(a, b); }\n");
    source += StrCat("  { const TYPE a = ", Flushed(node.inputs[1], "p1[0]"),
                     ", b = acc; p2[item] = ", Flushed(node.outputs[0], "COMBINE(a, b)"), "; }\n");
    source += "  #undef COMBINE\n  #undef TYPE\n}\n";
    code_.source += source;
    const size_t local = WorkGroup(64);
    const size_t global = RoundUp(items, local);
    code_.launches.push_back({name, std::move(arrays), {global}, {local}});
    return Status::Ok();
  }

  // A column reduction on a CPU device: the `size` rows of each outer
  // block split in parts, a work item folding its part's rows into a row of
  // partial results in turn (whole rows, in a loop the compiler
  // vectorizes, the partial row staying in cache), then the parts' rows
  // folded the same way. Measured on PoCL 3.1 (2 cores), 2048 x 2048 f32
  // over its rows: 0.56 to 0.86 ms in 4 to 32 parts, 1.2 to 2.7 ms with a
  // work item per 8 to 32 columns.
  Status EmitColumnsOnCpu(const Node& node) {
    const compiler::ReductionShape& shape = *node.reduction;
    const size_t element_bytes = GetElementTypeInfo(shape.type).storage_bytes;
    const int64_t partial_bytes = shape.outer * shape.inner * static_cast<int64_t>(element_bytes);
    const int64_t parts = std::clamp<int64_t>(
        std::min<int64_t>(8 * static_cast<int64_t>(target_.compute_units),
                          kMaxPartialBytes / std::max<int64_t>(1, partial_bytes)),
        1, std::max<int64_t>(1, shape.size / 16));
    const ValueId operand = node.inputs[0], init = node.inputs[1], out = node.outputs[0];
    if (parts == 1) return EmitColumnParts(operand, out, init, shape, 1);
    const ValueId partials = Temporary(shape.type, shape.outer * parts * shape.inner);
    KILN_RETURN_IF_ERROR(EmitColumnParts(operand, partials, std::nullopt, shape, parts));
    compiler::ReductionShape folded = shape;
    folded.size = parts;
    return EmitColumnParts(partials, out, init, folded, 1);
  }

  // Item (o, p) of outer block o's `parts` parts folds rows [p * length,
  // (p + 1) * length) of `shape`'s block o into row o * parts + p of
  // `output`, starting from `init` (none: the identity).
  Status EmitColumnParts(ValueId input, ValueId output, std::optional<ValueId> init,
                         const compiler::ReductionShape& shape, int64_t parts) {
    const CType t = TypeOf(output);
    const Combiner c = CombinerOf(shape.op, shape.type, t);
    const std::string name = NextName();
    std::vector<ValueId> arrays = {input};
    if (init) arrays.push_back(*init);
    arrays.push_back(output);
    const std::string y = init ? "p2" : "p1";
    std::string declarations;
    std::string source = Signature(name, arrays, arrays.size() - 1, declarations);
    source += declarations;
    const int64_t items = shape.outer * parts;
    const int64_t length = (shape.size + parts - 1) / parts;
    source += StrCat("  #define TYPE ", t.name, "\n  #define COMBINE(a, b) ", c.combine, "\n");
    source += StrCat("  const ulong item = get_global_id(0);\n  if (item >= ", items,
                     "ul) return;\n  const ulong o = item / ", parts, "ul, p = item % ", parts,
                     "ul;\n");
    source += StrCat("  __global TYPE* y = ", y, " + item * ", shape.inner, "ul;\n");
    source += StrCat("  const TYPE start = ", init ? Flushed(*init, "p1[0]") : c.identity, ";\n");
    source += StrCat("  for (ulong j = 0; j < ", shape.inner, "ul; ++j) y[j] = start;\n");
    source += StrCat("  const ulong s1 = min(p * ", length, "ul + ", length, "ul, ", shape.size,
                     "ul);\n");
    source += StrCat("  for (ulong s = p * ", length,
                     "ul; s < s1; ++s) {\n    __global const TYPE* x = p0 + (o * ", shape.size,
                     "ul + s) * ", shape.inner, "ul;\n");
    source += StrCat("    for (ulong j = 0; j < ", shape.inner,
                     "ul; ++j) { const TYPE a = y[j], b = ", Flushed(input, "x[j]"),
                     "; y[j] = ", Flushed(output, "COMBINE(a, b)"), "; }\n  }\n");
    source += "  #undef COMBINE\n  #undef TYPE\n}\n";
    code_.source += source;
    const size_t local = WorkGroup(
        std::clamp<int64_t>(items / (4 * static_cast<int64_t>(target_.compute_units)), 1, 16));
    const size_t global = RoundUp(items, local);
    code_.launches.push_back({name, std::move(arrays), {global}, {local}});
    return Status::Ok();
  }

  // A GEMM kernel's A, B and C: its batch's matrices, the batch from
  // `batch` (an OpenCL expression).
  static std::string BatchOperands(const CType& t, const kernels::MatMulShape& shape,
                                   std::string_view batch) {
    return StrCat("  const long b = ", batch, ";\n  __global const ", t.name, "* A = p0 + b * ",
                  shape.m * shape.k, "l;\n  __global const ", t.name, "* B = p1 + b * ",
                  shape.k * shape.n, "l;\n  __global ", t.name, "* C = p2 + b * ",
                  shape.m * shape.n, "l;\n");
  }

  // out[b] = lhs[b] x rhs[b] on a CPU device: the rhs packed first into
  // panels of L columns (each panel's rows contiguous, zero past the last
  // column), then each work item computes a block of kRows x L outputs in
  // L-lane vector registers, reading the lhs and one panel from memory (the
  // caches do what local memory does on a GPU; PoCL runs local-memory
  // tiles with barriers slowly). Work items of one panel run one after
  // another, so that it stays in cache. Measured on PoCL 3.1 (2 cores,
  // AMD EPYC Zen 3), f32: 1024^3 22 ms, 2048^3 180-210 ms; reading the rhs
  // in place, 26-36 ms and 1.8 s (its columns 8 KiB apart thrash the
  // caches' sets); 8 x 8 blocks 43 ms, 4 x 8 50 ms, the 32 x 32
  // local-memory tile 585 ms at 1024^3.
  Status EmitMatMulBlocks(ValueId lhs_array, ValueId rhs_array, ValueId out_array,
                          const kernels::MatMulShape& shape) {
    constexpr int64_t kRows = 4;
    const CType t = TypeOf(out_array);
    const int64_t lanes = t.name == "float" ? 16 : 8;
    const std::string vec = StrCat(t.name, lanes);
    const int64_t m = shape.m, n = shape.n, k = shape.k;
    if (k == 0) return EmitZeros(out_array, shape.batch * m * n);
    const int64_t panels = (n + lanes - 1) / lanes;
    const ValueId packed = Temporary(graph_type(out_array), shape.batch * panels * k * lanes);
    // The packing kernel: Bp[b][panel][kk][lane] = rhs[b](kk, panel * L + lane).
    {
      const std::string name = NextName();
      std::vector<ValueId> arrays = {rhs_array, packed};
      std::string declarations;
      std::string source = Signature(name, arrays, 1, declarations);
      source += declarations;
      source += StrCat("  const long kk = get_global_id(0), panel = get_global_id(1), b = "
                       "get_global_id(2);\n  if (kk >= ",
                       k, "l) return;\n  __global const ", t.name, "* B = p0 + b * ", k * n,
                       "l;\n  __global ", t.name, "* dst = p1 + ((b * ", panels, "l + panel) * ", k,
                       "l + kk) * ", lanes, "l;\n  const long col0 = panel * ", lanes, "l;\n");
      if (!shape.rhs_transposed) {
        source += StrCat("  if (col0 + ", lanes, " <= ", n, "l) { vstore", lanes, "(vload", lanes,
                         "(0, B + kk * ", n, "l + col0), 0, dst); return; }\n");
      }
      const std::string rhs = shape.rhs_transposed ? StrCat("B[(col0 + c) * ", k, "l + kk]")
                                                   : StrCat("B[kk * ", n, "l + col0 + c]");
      source += StrCat("  for (int c = 0; c < ", lanes, "; ++c) dst[c] = col0 + c < ", n, "l ? ",
                       rhs, " : 0;\n}\n");
      code_.source += source;
      const size_t local = WorkGroup(16);
      code_.launches.push_back({name,
                                std::move(arrays),
                                {RoundUp(k, local), static_cast<size_t>(panels),
                                 static_cast<size_t>(shape.batch)},
                                {local, 1, 1}});
    }
    const std::string name = NextName();
    std::vector<ValueId> arrays = {lhs_array, packed, out_array};
    std::string declarations;
    std::string source = Signature(name, arrays, 2, declarations);
    source += declarations;
    auto lhs = [&](const std::string& row) {
      return shape.lhs_transposed ? StrCat("A[kk * ", m, "l + ", row, "]")
                                  : StrCat("A[(", row, ") * ", k, "l + kk]");
    };
    source += StrCat("  const long row0 = get_global_id(0) * ", kRows,
                     "l, panel = get_global_id(1), b = get_global_id(2);\n  if (row0 >= ", m,
                     "l) return;\n  const long col0 = panel * ", lanes, "l;\n  __global const ",
                     t.name, "* A = p0 + b * ", m * k, "l;\n  __global const ", t.name,
                     "* P = p1 + (b * ", panels, "l + panel) * ", k * lanes, "l;\n  __global ",
                     t.name, "* C = p2 + b * ", m * n, "l;\n");
    // Rows past the last are computed from the last row and not stored.
    for (int64_t r = 0; r < kRows; ++r) {
      source += StrCat("  const long r", r, " = min(row0 + ", r, ", ", m - 1, "l);\n  ", vec, " c",
                       r, " = 0;\n");
    }
    // Operands are not flushed: a denormal operand's products are below
    // the smallest normal, where the flushed result is; only the output
    // is flushed (a flush per operand element cost a third of the time).
    source += StrCat("  for (long kk = 0; kk < ", k, "l; ++kk) {\n    const ", vec, " bv = vload",
                     lanes, "(0, P + kk * ", lanes, "l);\n");
    for (int64_t r = 0; r < kRows; ++r) {
      source += StrCat("    c", r, " = fma((", vec, ")(", lhs(StrCat("r", r)), "), bv, c", r,
                       ");\n");
    }
    source += "  }\n";
    source += StrCat("  if (row0 + ", kRows, " <= ", m, "l && col0 + ", lanes, " <= ", n, "l) {\n");
    for (int64_t r = 0; r < kRows; ++r) {
      source += StrCat("    vstore", lanes, "(ftz_", vec, "(c", r, "), 0, C + (row0 + ", r, ") * ",
                       n, "l + col0);\n");
    }
    source += StrCat("    return;\n  }\n  ", t.name, " out[", kRows, "][", lanes, "];\n");
    for (int64_t r = 0; r < kRows; ++r) {
      source += StrCat("  vstore", lanes, "(ftz_", vec, "(c", r, "), 0, out[", r, "]);\n");
    }
    source += StrCat("  for (long r = 0; r < min(", kRows, "l, ", m,
                     "l - row0); ++r) {\n    for (long c = 0; c < min(", lanes, "l, ", n,
                     "l - col0); ++c) C[(row0 + r) * ", n, "l + col0 + c] = out[r][c];\n  }\n}\n");
    code_.source += source;
    const size_t local = WorkGroup(16);
    code_.launches.push_back({name,
                              std::move(arrays),
                              {RoundUp((m + kRows - 1) / kRows, local), static_cast<size_t>(panels),
                               static_cast<size_t>(shape.batch)},
                              {local, 1, 1}});
    return Status::Ok();
  }

  // out[b] = lhs[b] x rhs[b]: tiles of 32 x 32 outputs per work-group of
  // 32 x 8 work items, each computing 4 rows of one column, with 16-deep
  // slices of both operands staged in local memory.
  Status EmitMatMul(ValueId lhs_array, ValueId rhs_array, ValueId out_array,
                    const kernels::MatMulShape& shape) {
    if (shape.batch == 0 || shape.m == 0 || shape.n == 0) return Status::Ok();
    if (!target_.gpu) return EmitMatMulBlocks(lhs_array, rhs_array, out_array, shape);
    const CType t = TypeOf(out_array);
    const std::string name = NextName();
    std::vector<ValueId> arrays = {lhs_array, rhs_array, out_array};
    std::string declarations;
    std::string source = Signature(name, arrays, 2, declarations,
                                   "__attribute__((reqd_work_group_size(32, 8, 1)))");
    source += declarations;
    const int64_t m = shape.m, n = shape.n, k = shape.k;
    const std::string flush = StrCat("ftz_", t.name);
    // lhs element (row, depth) and rhs element (depth, col) of batch b.
    const std::string lhs = shape.lhs_transposed ? StrCat("A[(long)(kk) * ", m, "l + (row)]")
                                                 : StrCat("A[(long)(row) * ", k, "l + (kk)]");
    const std::string rhs = shape.rhs_transposed ? StrCat("B[(long)(col) * ", k, "l + (kk)]")
                                                 : StrCat("B[(long)(kk) * ", n, "l + (col)]");
    source += BatchOperands(t, shape, "get_group_id(2)");
    source += StrCat("  const int tx = get_local_id(0), ty = get_local_id(1);\n"
                     "  const long col0 = get_group_id(0) * 32, row0 = get_group_id(1) * 32;\n"
                     "  __local ",
                     t.name,
                     " As[16][33];\n"  // As[depth][row]
                     "  __local ",
                     t.name,
                     " Bs[16][33];\n"  // Bs[depth][col]
                     "  ",
                     t.name,
                     " acc[4] = {0, 0, 0, 0};\n"
                     "  const int id = ty * 32 + tx;\n"
                     "  for (long k0 = 0; k0 < ",
                     k,
                     "l; k0 += 16) {\n"
                     "    for (int e = id; e < 512; e += 256) {\n"
                     "      const int d = e % 16, r = e / 16;\n"
                     "      { const long row = row0 + r, kk = k0 + d;\n"
                     "        As[d][r] = (row < ",
                     m, "l && kk < ", k, "l) ? ", flush, "(", lhs,
                     ") : 0; }\n"
                     "      { const long col = col0 + r, kk = k0 + d;\n"
                     "        Bs[d][r] = (col < ",
                     n, "l && kk < ", k, "l) ? ", flush, "(", rhs,
                     ") : 0; }\n"
                     "    }\n"
                     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                     "    for (int d = 0; d < 16; ++d) {\n"
                     "      const ",
                     t.name,
                     " bv = Bs[d][tx];\n"
                     "      for (int i = 0; i < 4; ++i) acc[i] += As[d][ty + 8 * i] * bv;\n"
                     "    }\n"
                     "    barrier(CLK_LOCAL_MEM_FENCE);\n"
                     "  }\n"
                     "  const long col = col0 + tx;\n"
                     "  if (col >= ",
                     n,
                     "l) return;\n"
                     "  for (int i = 0; i < 4; ++i) {\n"
                     "    const long row = row0 + ty + 8 * i;\n"
                     "    if (row < ",
                     m, "l) C[row * ", n, "l + col] = ", flush,
                     "(acc[i]);\n"
                     "  }\n}\n");
    code_.source += source;
    const auto tiles = [](int64_t size) { return static_cast<size_t>((size + 31) / 32); };
    code_.launches.push_back({name,
                              std::move(arrays),
                              {tiles(n) * 32, tiles(m) * 8, static_cast<size_t>(shape.batch)},
                              {32, 8, 1}});
    return Status::Ok();
  }

  const Graph& graph_;
  const Target& target_;
  std::unordered_map<ValueId, std::vector<size_t>> readers_;
  std::unordered_set<ValueId> results_;
  // Values the current elementwise kernel computed with denormals flushed.
  std::unordered_set<ValueId> flushed_;
  SegmentCode code_;
};

}  // namespace

namespace {

// `segment` without its views of values that are not results: their
// readers read the viewed value instead (a view is its input's bytes), so
// that no kernel copies them. Null: no such view.
std::unique_ptr<Graph> WithoutViews(const Graph& segment, const Target& target) {
  std::unordered_set<ValueId> results(segment.results.begin(), segment.results.end());
  std::unordered_map<ValueId, ValueId> viewed;
  for (const Node& node : segment.nodes) {
    if (KindOf(segment, node, target) == Kind::kView && !results.contains(node.outputs[0])) {
      const auto found = viewed.find(node.inputs[0]);
      viewed.emplace(node.outputs[0], found == viewed.end() ? node.inputs[0] : found->second);
    }
  }
  if (viewed.empty()) return nullptr;
  auto graph = std::make_unique<Graph>();
  graph->values = segment.values;
  graph->parameters = segment.parameters;
  graph->results = segment.results;
  for (const Node& node : segment.nodes) {
    if (!node.outputs.empty() && viewed.contains(node.outputs[0])) continue;
    Node copy = node;
    for (ValueId& in : copy.inputs) {
      if (const auto found = viewed.find(in); found != viewed.end()) in = found->second;
    }
    graph->nodes.push_back(std::move(copy));
  }
  return graph;
}

}  // namespace

std::optional<std::string> FoldSource(kernels::ReduceOp op, ElementType type,
                                      const Target& target) {
  const std::optional<CType> t = CTypeOf(type, target);
  if (!t || !ReduceSupported(op, *t)) return std::nullopt;
  std::string combine = CombinerOf(op, type, *t).combine;
  if (t->is_float) combine = StrCat("ftz_", t->name, "(", combine, ")");
  return StrCat(Prelude(target), "__kernel void fold(__global uchar* restrict b0, ulong o0, ",
                "__global const uchar* restrict b1, ulong o1, ulong count) {\n  const ulong i = ",
                "get_global_id(0);\n  if (i >= count) return;\n  __global ", t->name,
                "* p0 = ", "(__global ", t->name, "*)(b0 + o0);\n  __global const ", t->name,
                "* p1 = (__global const ", t->name, "*)(b1 + o1);\n  const ", t->name,
                " a = p0[i], b = p1[i];\n  p0[i] = ", combine, ";\n}\n");
}

StatusOr<SegmentCode> Generate(const Graph& segment, const Target& target) {
  if (std::unique_ptr<Graph> graph = WithoutViews(segment, target)) {
    return Generator(*graph, target).Run();
  }
  return Generator(segment, target).Run();
}

}  // namespace kiln::backends::opencl
