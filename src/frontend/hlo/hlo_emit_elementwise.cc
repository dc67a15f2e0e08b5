// Emitters of ops on each element: the opcodes StableHLO (or CHLO) has
// under the same name, compare and reduce-precision.
#include <algorithm>
#include <array>
#include <iterator>
#include <string>
#include <string_view>

#include "frontend/hlo/hlo_emit.h"

namespace kiln::frontend::hlo {
namespace {

// The HLO opcodes that are StableHLO ops of the same meaning, operands and
// result: the StableHLO name is the HLO one with '-' as '_'.
constexpr std::string_view kSameNamedOps[] = {
    // unary
    "abs", "negate", "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt",
    "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil", "round-nearest-afz",
    "round-nearest-even", "sign", "not", "is-finite", "popcnt", "count-leading-zeros", "real",
    "imag", "convert", "bitcast-convert", "reshape",
    // binary
    "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
    "and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "complex",
    // ternary
    "select", "clamp"};

// Opcodes newer XLA has that StableHLO keeps in CHLO (same name there).
constexpr std::string_view kChloOps[] = {"erf",  "acos",  "acosh", "asin", "asinh",
                                         "atan", "atanh", "cosh",  "sinh"};

// An opcode of kSameNamedOps: stablehlo.<opcode>, with '-' as '_'.
Status EmitSameNamed(Emission& e) {
  std::string name = "stablehlo." + e.in.opcode;
  std::replace(name.begin(), name.end(), '-', '_');
  return e.Emit(name, e.flat, "");
}

// An opcode of kChloOps: chlo.<opcode>.
Status EmitChlo(Emission& e) { return e.Emit("chlo." + e.in.opcode, e.flat, ""); }

// bitcast: stablehlo.reshape (Kiln's arrays have no layouts to reinterpret).
Status EmitBitcast(Emission& e) { return e.Emit("stablehlo.reshape", e.flat, ""); }

// The comparison_type XLA infers when the instruction has none.
std::string ComparisonType(const Instruction& in, const Shape& operand) {
  if (!in.comparison_type.empty()) return in.comparison_type;
  switch (operand.type) {
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
    case PrimitiveType::kC64:
    case PrimitiveType::kC128:
    case PrimitiveType::kF8E5M2:
    case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ:
    case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ: return "FLOAT";
    case PrimitiveType::kS4:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64: return "SIGNED";
    default: return "UNSIGNED";
  }
}

// compare: stablehlo.compare, its direction checked and its type inferred when unset.
Status EmitCompare(Emission& e) {
  const Instruction& in = e.in;
  KILN_RETURN_IF_ERROR(e.ExpectOperands(2));
  KILN_ASSIGN_OR_RETURN(Leaf lhs, Single(e.operands[0], 0));
  static constexpr std::string_view kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  static constexpr std::string_view kTypes[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  if (std::find(std::begin(kDirections), std::end(kDirections), in.comparison_direction) ==
      std::end(kDirections)) {
    return InvalidArgument("expected comparison_direction EQ, NE, GE, GT, LE or LT, found \"",
                           in.comparison_direction, "\"");
  }
  const std::string type = ComparisonType(in, lhs.shape);
  if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes)) {
    return InvalidArgument("expected comparison_type FLOAT, TOTALORDER, SIGNED or UNSIGNED, "
                           "found \"",
                           type, "\"");
  }
  return e.Emit("stablehlo.compare", e.flat,
                "compare_type = #stablehlo<comparison_type " + type +
                    ">, comparison_direction = #stablehlo<comparison_direction " +
                    in.comparison_direction + ">");
}

// reduce-precision: stablehlo.reduce_precision with i32 bit counts.
Status EmitReducePrecision(Emission& e) {
  return e.Emit("stablehlo.reduce_precision", e.flat,
                "exponent_bits = " + std::to_string(e.in.exponent_bits) +
                    " : i32, mantissa_bits = " + std::to_string(e.in.mantissa_bits) + " : i32");
}

// Rows of kRules: one per same-named and CHLO opcode, then bitcast,
// compare and reduce-precision.
constexpr size_t kRuleCount = std::size(kSameNamedOps) + std::size(kChloOps) + 3;

// The rows of kSameNamedOps and kChloOps, then the other opcodes.
constexpr std::array<EmitRule, kRuleCount> kRules = [] {
  std::array<EmitRule, kRuleCount> rules{};
  size_t next = 0;
  for (std::string_view opcode : kSameNamedOps) rules[next++] = {opcode, EmitSameNamed};
  for (std::string_view opcode : kChloOps) rules[next++] = {opcode, EmitChlo};
  rules[next++] = {"bitcast", EmitBitcast};
  rules[next++] = {"compare", EmitCompare};
  rules[next++] = {"reduce-precision", EmitReducePrecision};
  return rules;
}();

}  // namespace

std::span<const EmitRule> ElementwiseEmitters() { return kRules; }

}  // namespace kiln::frontend::hlo
