// Pretty forms of ops without regions, mirroring src/ir/printer_ops.cc.
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "base/env.h"
#include "frontend/text/parser_impl.h"
#include "ir/printer.h"

namespace kiln::frontend::text {
namespace {

using ir::Attribute;
using ir::Type;
using F = ir::PrettyForm;

Attribute I64(int64_t value) { return Attribute::Integer(value, Type::Element(ElementType::kS64)); }
Attribute I32(int64_t value) { return Attribute::Integer(value, Type::Element(ElementType::kS32)); }

// `keyword = N` into an i64 (or i32) attribute.
bool KeywordInteger(Parser& p, ir::Operation& op, std::string_view keyword, std::string_view name,
                    bool i32 = false) {
  int64_t value = 0;
  if (!p.ExpectKeyword(keyword, "") ||
      !p.Expect(TokenKind::kEqual, StrCat(" after '", keyword, "'")) || !p.ParseInteger(value)) {
    return false;
  }
  op.SetAttr(std::string(name), i32 ? I32(value) : I64(value));
  return true;
}

// `keyword = [1, 2]` into an i64 array attribute.
bool KeywordDims(Parser& p, ir::Operation& op, std::string_view keyword, std::string_view name) {
  std::vector<int64_t> values;
  if (!p.ExpectKeyword(keyword, "") ||
      !p.Expect(TokenKind::kEqual, StrCat(" after '", keyword, "'")) || !p.ParseI64List(values)) {
    return false;
  }
  op.SetAttr(std::string(name), Attribute::DenseI64Array(std::move(values)));
  return true;
}

// `keyword = VALUE` into an enum attribute of `family`.
bool KeywordEnum(Parser& p, ir::Operation& op, std::string_view keyword, std::string_view name,
                 std::string_view family) {
  if (!p.ExpectKeyword(keyword, "") ||
      !p.Expect(TokenKind::kEqual, StrCat(" after '", keyword, "'"))) {
    return false;
  }
  if (!p.token().Is(TokenKind::kBareIdentifier))
    return p.FailExpected(StrCat("a value for '", keyword, "'"));
  op.SetAttr(std::string(name),
             Attribute::Enum(std::string(family), std::string(p.token().spelling)));
  p.Advance();
  return true;
}

// The operands, then `,` before a keyword list (`%a, %b, dim = 0`).
bool OperandsThenComma(Parser& p, OpFrame& f) {
  size_t offset = p.token().offset;
  if (!p.ParseValueUseList(f.operands)) return false;
  if (f.operands.empty()) return p.Fail(offset, "expected an operand (%...)");
  return p.Expect(TokenKind::kComma, " after the operands");
}

bool ParseColonType(Parser& p, Type& type) {
  return p.Expect(TokenKind::kColon, " before the type") && p.ParseType(type);
}

bool Resolve(Parser& p, OpFrame& f, const std::vector<Type>& operands,
             const std::vector<Type>& results) {
  if (!p.ResolveOperands(*f.op, f.operands, operands, f.offset)) return false;
  p.AddResults(*f.op, results);
  return true;
}

bool ParseSelect(Parser& p, OpFrame& f) {
  if (!p.ParseValueUseList(f.operands) || !p.ParseOptionalAttrDict(*f.op) ||
      !p.Expect(TokenKind::kColon, " before the types")) {
    return false;
  }
  size_t offset = p.token().offset;
  std::vector<Type> types;
  if (!p.ParseTypeList(types)) return false;
  if (types.size() == 1 && types[0].Is(ir::TypeKind::kFunction)) {
    return Resolve(p, f, types[0].members(), types[0].results());
  }
  if (types.size() != 2)
    return p.Fail(offset, "expected a function type or two types (predicate, result)");
  return Resolve(p, f, {types[0], types[1], types[1]}, {types[1]});
}

bool ParseComplex(Parser& p, OpFrame& f) {
  Type type;
  if (!p.ParseValueUseList(f.operands) || !p.ParseOptionalAttrDict(*f.op)) return false;
  size_t offset = p.token().offset + 1;
  if (!ParseColonType(p, type)) return false;
  if (type.Is(ir::TypeKind::kFunction)) return Resolve(p, f, type.members(), type.results());
  bool complex = type.Is(ir::TypeKind::kTensor) && type.element().Is(ir::TypeKind::kElement) &&
                 (type.element().element_type() == ElementType::kC64 ||
                  type.element().element_type() == ElementType::kC128);
  if (!complex) return p.Fail(offset, "expected a tensor type with complex elements");
  ElementType part = type.element().element_type() == ElementType::kC64 ? ElementType::kF32
                                                                        : ElementType::kF64;
  Type real = Type::Tensor(Type::Element(part), type.dims(), type.bounds());
  return Resolve(p, f, {real, real}, {type});
}

bool ParseSlice(Parser& p, OpFrame& f) {
  f.operands.emplace_back();
  if (!p.ParseValueUse(f.operands.back()) ||
      !p.Expect(TokenKind::kLSquare, " before the slice ranges")) {
    return false;
  }
  std::vector<int64_t> start, limit, strides;
  while (!p.token().Is(TokenKind::kRSquare)) {
    if (!start.empty() && !p.Expect(TokenKind::kComma, " or ']' between slice ranges"))
      return false;
    int64_t a = 0, b = 0, c = 1;
    if (!p.ParseInteger(a) || !p.Expect(TokenKind::kColon, " in 'start:limit'") ||
        !p.ParseInteger(b)) {
      return false;
    }
    if (p.Consume(TokenKind::kColon) && !p.ParseInteger(c)) return false;
    start.push_back(a);
    limit.push_back(b);
    strides.push_back(c);
  }
  p.Advance();
  f.op->SetAttr("start_indices", Attribute::DenseI64Array(std::move(start)));
  f.op->SetAttr("limit_indices", Attribute::DenseI64Array(std::move(limit)));
  f.op->SetAttr("strides", Attribute::DenseI64Array(std::move(strides)));
  return p.ParseFunctionalTail(f);
}

bool ParseCompare(Parser& p, OpFrame& f) {
  if (!p.token().Is(TokenKind::kBareIdentifier))
    return p.FailExpected("a comparison direction (EQ, LT, ...)");
  f.op->SetAttr("comparison_direction",
                Attribute::Enum("stablehlo.comparison_direction", std::string(p.token().spelling)));
  p.Advance();
  if (!p.Expect(TokenKind::kComma, " after the comparison direction") ||
      !p.ParseValueUseList(f.operands)) {
    return false;
  }
  if (p.Consume(TokenKind::kComma)) {
    if (!p.token().Is(TokenKind::kBareIdentifier))
      return p.FailExpected("a comparison type (FLOAT, SIGNED, ...)");
    f.op->SetAttr("compare_type",
                  Attribute::Enum("stablehlo.comparison_type", std::string(p.token().spelling)));
    p.Advance();
  }
  return p.ParseFunctionalTail(f);
}

bool ParseWindow(Parser& p, ir::Operation& op) {
  if (!p.ExpectKeyword("window", "") || !p.Expect(TokenKind::kEqual, " after 'window'") ||
      !p.Expect(TokenKind::kLBrace, " to start the window attributes")) {
    return false;
  }
  while (!p.token().Is(TokenKind::kRBrace)) {
    std::string_view key = p.token().spelling;
    size_t offset = p.token().offset;
    std::string name = key == "stride"       ? "window_strides"
                       : key == "pad"        ? "padding"
                       : key == "lhs_dilate" ? "lhs_dilation"
                       : key == "rhs_dilate" ? "rhs_dilation"
                       : key == "reverse"    ? "window_reversal"
                                             : "";
    if (!p.token().Is(TokenKind::kBareIdentifier) || name.empty()) {
      return p.FailExpected("one of 'stride', 'pad', 'lhs_dilate', 'rhs_dilate', 'reverse'");
    }
    if (op.GetAttr(name)) return p.Fail(offset, StrCat("'", key, "' is given twice"));
    p.Advance();
    if (!p.Expect(TokenKind::kEqual, StrCat(" after '", key, "'"))) return false;
    if (name == "padding") {
      if (!p.Expect(TokenKind::kLSquare, " to start the padding")) return false;
      std::vector<int64_t> values;
      while (!p.token().Is(TokenKind::kRSquare)) {
        if (!values.empty() && !p.Expect(TokenKind::kComma, " between padding pairs")) return false;
        std::vector<int64_t> pair;
        size_t pair_offset = p.token().offset;
        if (!p.ParseI64List(pair)) return false;
        if (pair.size() != 2)
          return p.Fail(pair_offset,
                        StrCat("expected a [low, high] pair, found ", pair.size(), " values"));
        values.insert(values.end(), pair.begin(), pair.end());
      }
      p.Advance();
      std::vector<uint8_t> data(values.size() * 8);
      for (size_t i = 0; i < values.size(); ++i) {
        for (int b = 0; b < 8; ++b)
          data[i * 8 + b] = static_cast<uint8_t>(static_cast<uint64_t>(values[i]) >> (8 * b));
      }
      bool splat = !values.empty();
      for (size_t i = 1; i < values.size() && splat; ++i) splat = values[i] == values[0];
      if (splat) data.resize(8);
      Type type = Type::Tensor(Type::Element(ElementType::kS64),
                               {static_cast<int64_t>(values.size() / 2), 2});
      op.SetAttr("padding", Attribute::DenseElements(type, std::move(data), splat));
    } else if (name == "window_reversal") {
      if (!p.Expect(TokenKind::kLSquare, " to start 'reverse'")) return false;
      std::vector<bool> flags;
      while (!p.token().Is(TokenKind::kRSquare)) {
        if (!flags.empty() && !p.Expect(TokenKind::kComma, " between flags")) return false;
        if (p.token().IsKeyword("true") || p.token().IsKeyword("false")) {
          flags.push_back(p.token().IsKeyword("true"));
          p.Advance();
        } else {
          int64_t value = 0;
          if (!p.ParseInteger(value)) return false;
          flags.push_back(value != 0);
        }
      }
      p.Advance();
      op.SetAttr(name, Attribute::DenseBoolArray(std::move(flags)));
    } else {
      std::vector<int64_t> values;
      if (!p.ParseI64List(values)) return false;
      op.SetAttr(name, Attribute::DenseI64Array(std::move(values)));
    }
    if (!p.Consume(TokenKind::kComma)) break;
  }
  return p.Expect(TokenKind::kRBrace, " to close the window attributes");
}

bool ParseConvolution(Parser& p, OpFrame& f) {
  Attribute numbers;
  if (!p.Expect(TokenKind::kLParen, " before the operands") || !p.ParseValueUseList(f.operands) ||
      !p.Expect(TokenKind::kRParen, " after the operands") || !p.ExpectKeyword("dim_numbers", "") ||
      !p.Expect(TokenKind::kEqual, " after 'dim_numbers'") || !p.ParseConvDimensions(numbers) ||
      !p.Expect(TokenKind::kComma, " after the dimension numbers") || !ParseWindow(p, *f.op)) {
    return false;
  }
  f.op->SetAttr("dimension_numbers", numbers);
  return p.ParseFunctionalTail(f);
}

// `, precision = [DEFAULT, HIGH]` (the comma already consumed).
bool ParsePrecision(Parser& p, ir::Operation& op) {
  if (!p.Expect(TokenKind::kEqual, " after 'precision'") ||
      !p.Expect(TokenKind::kLSquare, " after 'precision ='")) {
    return false;
  }
  std::vector<Attribute> values;
  while (!p.token().Is(TokenKind::kRSquare)) {
    if (!values.empty() && !p.Expect(TokenKind::kComma, " between precisions")) return false;
    if (!p.token().Is(TokenKind::kBareIdentifier))
      return p.FailExpected("a precision (DEFAULT, HIGH, HIGHEST)");
    values.push_back(Attribute::Enum("stablehlo.precision", std::string(p.token().spelling)));
    p.Advance();
  }
  p.Advance();
  op.SetAttr("precision_config", Attribute::Array(std::move(values)));
  return true;
}

bool ParseDot(Parser& p, OpFrame& f) {
  if (!p.ParseValueUseList(f.operands)) return false;
  if (p.Consume(TokenKind::kComma) &&
      (!p.ExpectKeyword("precision", "") || !ParsePrecision(p, *f.op))) {
    return false;
  }
  return p.ParseFunctionalTail(f);
}

bool ParseDotGeneral(Parser& p, OpFrame& f) {
  if (!OperandsThenComma(p, f)) return false;
  std::vector<ir::NamedAttribute> fields;
  auto pair = [&](std::string_view lhs, std::string_view rhs) {
    std::vector<int64_t> left, right;
    if (!p.Expect(TokenKind::kEqual, "") || !p.ParseI64List(left) ||
        !p.ExpectKeyword("x", " between the lhs and rhs dimensions") || !p.ParseI64List(right)) {
      return false;
    }
    if (!left.empty())
      fields.push_back({std::string(lhs), Attribute::DenseI64Array(std::move(left))});
    if (!right.empty())
      fields.push_back({std::string(rhs), Attribute::DenseI64Array(std::move(right))});
    return true;
  };
  if (p.ConsumeKeyword("batching_dims")) {
    if (!pair("lhs_batching_dimensions", "rhs_batching_dimensions") ||
        !p.Expect(TokenKind::kComma, " after the batching dimensions")) {
      return false;
    }
  }
  if (!p.ExpectKeyword("contracting_dims", "") ||
      !pair("lhs_contracting_dimensions", "rhs_contracting_dimensions")) {
    return false;
  }
  f.op->SetAttr("dot_dimension_numbers", Attribute::Struct("stablehlo.dot", std::move(fields)));
  if (p.Consume(TokenKind::kComma)) {
    if (p.ConsumeKeyword("precision")) {
      if (!ParsePrecision(p, *f.op)) return false;
      if (p.Consume(TokenKind::kComma) && !p.token().IsKeyword("algorithm")) {
        return p.FailExpected("'algorithm'");
      }
    }
    if (p.ConsumeKeyword("algorithm")) {
      Attribute algorithm;
      if (!p.Expect(TokenKind::kEqual, " after 'algorithm'") ||
          !p.ParseStructBody("stablehlo.dot_algorithm", algorithm)) {
        return false;
      }
      f.op->SetAttr("algorithm", algorithm);
    } else if (!f.op->GetAttr("precision_config")) {
      return p.FailExpected("'precision' or 'algorithm'");
    }
  }
  return p.ParseFunctionalTail(f);
}

bool ParseConstant(Parser& p, OpFrame& f) {
  if (p.Consume(TokenKind::kLParen)) {
    // `stablehlo.constant() <{value = ...}> : () -> T`, which upstream also reads.
    if (!p.Expect(TokenKind::kRParen, " after '('")) return false;
    if (p.Consume(TokenKind::kLess) &&
        (!p.ParseOptionalAttrDict(*f.op) || !p.Expect(TokenKind::kGreater, ""))) {
      return false;
    }
    return p.ParseFunctionalTail(f);
  }
  Attribute value;
  size_t offset = p.token().offset;
  if (!p.ParseOptionalAttrDict(*f.op) || !p.ParseAttribute(value)) return false;
  if (!value.Is(ir::AttrKind::kDenseElements))
    return p.Fail(offset, "expected a dense<...> literal");
  f.op->SetAttr("value", value);
  p.AddResults(*f.op, {value->type});
  return true;
}

bool ParseReturn(Parser& p, OpFrame& f, bool attributes_first) {
  if (attributes_first && !p.ParseOptionalAttrDict(*f.op)) return false;
  if (!p.ParseValueUseList(f.operands)) return false;
  if (!attributes_first && !p.ParseOptionalAttrDict(*f.op)) return false;
  std::vector<Type> types;
  if (!f.operands.empty() &&
      (!p.Expect(TokenKind::kColon, " before the operand types") || !p.ParseTypeList(types))) {
    return false;
  }
  return p.ResolveOperands(*f.op, f.operands, types, f.offset);
}

bool ParseOptimizationBarrier(Parser& p, OpFrame& f) {
  if (!p.ParseOptionalAttrDict(*f.op)) return false;
  if (p.Consume(TokenKind::kLParen)) return p.Expect(TokenKind::kRParen, " after '('");
  std::vector<Type> types;
  if (!p.ParseValueUseList(f.operands) || !p.Expect(TokenKind::kColon, " before the types") ||
      !p.ParseTypeList(types)) {
    return false;
  }
  return Resolve(p, f, types, types);
}

bool ParseChloTopK(Parser& p, OpFrame& f) {
  f.operands.emplace_back();
  if (!p.Expect(TokenKind::kLParen, "") || !p.ParseValueUse(f.operands.back()) ||
      !p.Expect(TokenKind::kComma, "") || !KeywordInteger(p, *f.op, "k", "k")) {
    return false;
  }
  if (p.Consume(TokenKind::kComma)) {
    if (!p.ExpectKeyword("is_stable", "") || !p.Expect(TokenKind::kEqual, "")) return false;
    if (!p.token().IsKeyword("true") && !p.token().IsKeyword("false"))
      return p.FailExpected("'true' or 'false'");
    f.op->SetAttr("is_stable", Attribute::Bool(p.token().IsKeyword("true")));
    p.Advance();
  }
  Type operand;
  std::vector<Type> results;
  if (!p.Expect(TokenKind::kRParen, "") || !p.ParseOptionalAttrDict(*f.op) ||
      !ParseColonType(p, operand) || !p.Expect(TokenKind::kArrow, "") ||
      !p.ParseParenTypeList(results)) {
    return false;
  }
  return Resolve(p, f, {operand}, results);
}

// The check dialect's forms (stablehlo/tests/CheckOps.td):
//   check.expect_eq %a, %b : T
//   check.expect_eq_const %a, dense<...> : T
//   check.expect_almost_eq %a, %b, tolerance = 1.0e-4 : T
//   check.expect_almost_eq_const %a, dense<...> : T, tolerance = 1.0e-4
//   check.expect_close %a, %b, max_ulp_difference = 3, min_ulp_difference = 0 : T, U
//   check.expect_serialized_eq %a, probe_id = "p", iter = 0 : T
bool ParseCheck(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  const bool is_const = op.name().ends_with("_const");
  f.operands.emplace_back();
  if (!p.ParseValueUse(f.operands.back())) return false;
  std::vector<Type> types;
  if (is_const) {
    Attribute value;
    if (!p.Expect(TokenKind::kComma, "") || !p.ParseAttribute(value)) return false;
    if (!value.Is(ir::AttrKind::kDenseElements)) return p.FailExpected("dense<...> : tensor<...>");
    op.SetAttr("value", value);
    types.push_back(value->type);
  }
  while (p.Consume(TokenKind::kComma)) {
    if (p.token().Is(TokenKind::kPercent)) {
      f.operands.emplace_back();
      if (!p.ParseValueUse(f.operands.back())) return false;
      continue;
    }
    const std::string keyword(p.token().spelling);
    if (!p.token().Is(TokenKind::kBareIdentifier)) return p.FailExpected("an operand or a keyword");
    p.Advance();
    if (!p.Expect(TokenKind::kEqual, StrCat(" after '", keyword, "'"))) return false;
    if (keyword == "probe_id") {
      if (!p.token().Is(TokenKind::kString)) return p.FailExpected("a string");
      op.SetAttr("probe_id", Attribute::String(Lexer::StringValue(p.token().spelling)));
      p.Advance();
    } else if (keyword == "tolerance") {
      // A bare number (an f64 attribute): the `: T` after it is the op's type.
      const bool negative = p.Consume(TokenKind::kMinus);
      if (!p.token().Is(TokenKind::kFloat) && !p.token().Is(TokenKind::kInteger)) {
        return p.FailExpected("a number");
      }
      const double magnitude = std::strtod(std::string(p.token().spelling).c_str(), nullptr);
      p.Advance();
      op.SetAttr("tolerance", Attribute::Float(negative ? -magnitude : magnitude,
                                               Type::Element(ElementType::kF64)));
    } else {
      int64_t value = 0;
      if (!p.ParseInteger(value)) return false;
      op.SetAttr(keyword == "iter" ? "iteration" : keyword, I64(value));
    }
  }
  if (!p.ParseOptionalAttrDict(op)) return false;
  if (!is_const) {
    if (!p.Expect(TokenKind::kColon, " before the types") || !p.ParseOptionalAttrDict(op) ||
        !p.ParseTypeList(types)) {
      return false;
    }
    // `: T` stands for every operand.
    while (types.size() < f.operands.size()) types.push_back(types.front());
  }
  // interpreter.probe returns its operand.
  if (op.name() == "interpreter.probe" && !types.empty()) return Resolve(p, f, types, {types[0]});
  return Resolve(p, f, types, {});
}

// CHLO's `%a, %b : (T, U) -> R`, `%a, %b : T, U -> R` and `%x : T -> R`.
bool ParseChlo(Parser& p, OpFrame& f) {
  if (!p.ParseValueUseList(f.operands) || !p.ParseOptionalAttrDict(*f.op) ||
      !p.Expect(TokenKind::kColon, " before the types")) {
    return false;
  }
  std::vector<Type> operands;
  if (f.form == F::kChloBroadcastBinary || f.form == F::kChloBroadcastSelect) {
    if (!p.ParseParenTypeList(operands)) return false;
  } else if (!p.ParseTypeList(operands)) {
    return false;
  }
  Type result;
  if (!p.Expect(TokenKind::kArrow, " before the result type") || !p.ParseType(result)) return false;
  return Resolve(p, f, operands, {result});
}

bool ParseSdy(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  std::string text;
  if (f.form == F::kSdyMesh) {
    if (!p.token().Is(TokenKind::kAt)) return p.FailExpected("the mesh name (@...)");
    op.SetAttr("sym_name", Attribute::String(Lexer::SymbolValue(p.token().spelling)));
    p.Advance();
    if (!p.Expect(TokenKind::kEqual, " after the mesh name")) return false;
    size_t start = p.token().offset;
    if (!p.token().Is(TokenKind::kLess)) return p.FailExpected("'<' starting the mesh");
    if (!p.CaptureBalanced(start, text)) return false;
    op.SetAttr("mesh", Attribute::Opaque("#sdy.mesh" + text));
    return p.ParseOptionalAttrDict(op);
  }
  f.operands.emplace_back();
  if (!p.ParseValueUse(f.operands.back())) return false;
  size_t start = p.token().offset;
  if (!p.token().Is(TokenKind::kLess)) return p.FailExpected("'<' starting the sharding");
  if (!p.CaptureBalanced(start, text)) return false;
  op.SetAttr("sharding", Attribute::Opaque("#sdy.sharding" + text));
  Type type;
  if (!p.ParseOptionalAttrDict(op) || !ParseColonType(p, type)) return false;
  return Resolve(p, f, {type}, {type});
}

// `{attrs} : T`: the op's one result type (the nullary form, and iota
// after its dimension).
bool ParseResultType(Parser& p, OpFrame& f) {
  Type type;
  if (!p.ParseOptionalAttrDict(*f.op) || !ParseColonType(p, type)) return false;
  p.AddResults(*f.op, {type});
  return true;
}

// `dim = N : T`: iota.
bool ParseIota(Parser& p, OpFrame& f) {
  return KeywordInteger(p, *f.op, "dim", "iota_dimension") && ParseResultType(p, f);
}

// `%t[N] : ...`: get_tuple_element.
bool ParseGetTupleElement(Parser& p, OpFrame& f) {
  int64_t index = 0;
  f.operands.emplace_back();
  if (!p.ParseValueUse(f.operands.back()) || !p.Expect(TokenKind::kLSquare, " before the index") ||
      !p.ParseInteger(index) || !p.Expect(TokenKind::kRSquare, " after the index")) {
    return false;
  }
  f.op->SetAttr("index", I32(index));
  return p.ParseFunctionalTail(f);
}

// `%a, %b : tuple<...>`: tuple.
bool ParseTuple(Parser& p, OpFrame& f) {
  Type type;
  if (!p.ParseValueUseList(f.operands) || !p.ParseOptionalAttrDict(*f.op)) return false;
  const size_t offset = p.token().offset + 1;
  if (!ParseColonType(p, type)) return false;
  if (!type.Is(ir::TypeKind::kTuple)) return p.Fail(offset, "expected a tuple type");
  return Resolve(p, f, type.members(), {type});
}

// `%a, lower = true : T`: cholesky.
bool ParseCholesky(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  f.operands.emplace_back();
  if (!p.ParseValueUse(f.operands.back())) return false;
  if (p.Consume(TokenKind::kComma)) {
    if (!p.ExpectKeyword("lower", "") || !p.Expect(TokenKind::kEqual, " after 'lower'")) {
      return false;
    }
    if (!p.token().IsKeyword("true") && !p.token().IsKeyword("false")) {
      return p.FailExpected("'true' or 'false'");
    }
    op.SetAttr("lower", Attribute::Bool(p.token().IsKeyword("true")));
    p.Advance();
  }
  return p.ParseOptionalAttrDict(op) && p.ParseSameType(f, 1);
}

// `"name" %a, %b : ...`: composite.
bool ParseComposite(Parser& p, OpFrame& f) {
  if (!p.token().Is(TokenKind::kString)) return p.FailExpected("the composite's name (a string)");
  f.op->SetAttr("name", Attribute::String(Lexer::StringValue(p.token().spelling)));
  p.Advance();
  return p.ParseValueUseList(f.operands) && p.ParseFunctionalTail(f);
}

// `@target(%a, %b) : ...`: custom_call.
bool ParseCustomCall(Parser& p, OpFrame& f) {
  if (!p.token().Is(TokenKind::kAt)) return p.FailExpected("the call target (@...)");
  f.op->SetAttr("call_target_name", Attribute::String(Lexer::SymbolValue(p.token().spelling)));
  p.Advance();
  return p.Expect(TokenKind::kLParen, " after the call target") &&
         p.ParseValueUseList(f.operands) && p.Expect(TokenKind::kRParen, " after the operands") &&
         p.ParseFunctionalTail(f);
}

// `%a, %b, config = "..." : ...`: einsum and unary_einsum.
bool ParseEinsum(Parser& p, OpFrame& f) {
  if (!OperandsThenComma(p, f) || !p.ExpectKeyword("config", "") ||
      !p.Expect(TokenKind::kEqual, " after 'config'")) {
    return false;
  }
  if (!p.token().Is(TokenKind::kString)) {
    return p.FailExpected("the einsum configuration (a string)");
  }
  f.op->SetAttr("einsum_config", Attribute::String(Lexer::StringValue(p.token().spelling)));
  p.Advance();
  return p.ParseFunctionalTail(f);
}

// `%a, format = e5m10 : T`: reduce_precision.
bool ParseReducePrecision(Parser& p, OpFrame& f) {
  if (!OperandsThenComma(p, f) || !p.ExpectKeyword("format", "") ||
      !p.Expect(TokenKind::kEqual, " after 'format'")) {
    return false;
  }
  const Token& token = p.token();
  std::string_view text = token.Is(TokenKind::kBareIdentifier) ? token.spelling : "";
  const size_t m = text.find('m');
  if (text.size() < 4 || text[0] != 'e' || m == std::string_view::npos) {
    return p.FailExpected("an exponent and mantissa format such as 'e5m10'");
  }
  constexpr int64_t kMaxBits = std::numeric_limits<int32_t>::max();
  StatusOr<int64_t> exponent = ParseInt64(text.substr(1, m - 1), "reduce_precision's exponent bits",
                                          0, kMaxBits);
  StatusOr<int64_t> mantissa = ParseInt64(text.substr(m + 1), "reduce_precision's mantissa bits", 0,
                                          kMaxBits);
  if (!exponent.ok()) {
    return p.Fail(token.offset, exponent.status().message() + " (a format such as 'e5m10')");
  }
  if (!mantissa.ok()) {
    return p.Fail(token.offset, mantissa.status().message() + " (a format such as 'e5m10')");
  }
  f.op->SetAttr("exponent_bits", I32(*exponent));
  f.op->SetAttr("mantissa_bits", I32(*mantissa));
  p.Advance();
  return p.ParseOptionalAttrDict(*f.op) && p.ParseSameType(f, 1);
}

// The forms `%a, keyword = value, ... : type` whose keywords name integer,
// dimension-list or enum attributes; nullopt for the other forms.
std::optional<bool> ParseKeywordForm(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  switch (f.form) {
    case F::kDynamicIota:
    case F::kConcatenate:
    case F::kGetDimensionSize:
    case F::kSetDimensionSize: {
      const std::string_view name = f.form == F::kDynamicIota ? "iota_dimension" : "dimension";
      return OperandsThenComma(p, f) && KeywordInteger(p, op, "dim", name) &&
             p.ParseFunctionalTail(f);
    }
    case F::kDynamicSlice:
      return OperandsThenComma(p, f) && KeywordDims(p, op, "sizes", "slice_sizes") &&
             p.ParseFunctionalTail(f);
    case F::kBroadcast:
      return OperandsThenComma(p, f) && KeywordDims(p, op, "sizes", "broadcast_sizes") &&
             p.ParseFunctionalTail(f);
    case F::kBroadcastInDim:
    case F::kDynamicBroadcastInDim:
      return OperandsThenComma(p, f) && KeywordDims(p, op, "dims", "broadcast_dimensions") &&
             p.ParseFunctionalTail(f);
    case F::kTranspose:
      return OperandsThenComma(p, f) && KeywordDims(p, op, "dims", "permutation") &&
             p.ParseFunctionalTail(f);
    case F::kReverse:
      return OperandsThenComma(p, f) && KeywordDims(p, op, "dims", "dimensions") &&
             p.ParseOptionalAttrDict(op) && p.ParseSameType(f, 1);
    case F::kPad:
      return OperandsThenComma(p, f) && KeywordDims(p, op, "low", "edge_padding_low") &&
             p.Expect(TokenKind::kComma, "") && KeywordDims(p, op, "high", "edge_padding_high") &&
             p.Expect(TokenKind::kComma, "") &&
             KeywordDims(p, op, "interior", "interior_padding") && p.ParseFunctionalTail(f);
    case F::kFft:
      return OperandsThenComma(p, f) &&
             KeywordEnum(p, op, "type", "fft_type", "stablehlo.fft_type") &&
             p.Expect(TokenKind::kComma, " after the FFT type") &&
             KeywordDims(p, op, "length", "fft_length") && p.ParseFunctionalTail(f);
    case F::kRng:
      return OperandsThenComma(p, f) &&
             KeywordEnum(p, op, "distribution", "rng_distribution", "stablehlo.rng_distribution") &&
             p.ParseFunctionalTail(f);
    case F::kRngBitGenerator:
      return OperandsThenComma(p, f) &&
             KeywordEnum(p, op, "algorithm", "rng_algorithm", "stablehlo.rng_algorithm") &&
             p.ParseFunctionalTail(f);
    default: return std::nullopt;
  }
}

}  // namespace

bool Parser::ParseSameType(OpFrame& frame, size_t operand_count) {
  Type type;
  if (!ParseColonType(*this, type)) return false;
  if (type.Is(ir::TypeKind::kFunction))
    return Resolve(*this, frame, type.members(), type.results());
  return Resolve(*this, frame, std::vector<Type>(operand_count, type), {type});
}

bool Parser::ParseFunctionalTail(OpFrame& frame) {
  std::vector<Type> inputs, results;
  if (!ParseOptionalAttrDict(*frame.op) || !Expect(TokenKind::kColon, " before the op's type") ||
      !ParseFunctionType(inputs, results)) {
    return false;
  }
  return Resolve(*this, frame, inputs, results);
}

bool Parser::BeginPretty(OpFrame& f) {
  if (std::optional<bool> parsed = ParseKeywordForm(*this, f)) return *parsed;
  Parser& p = *this;
  switch (f.form) {
    case F::kSameType:
      return ParseValueUseList(f.operands) && ParseOptionalAttrDict(*f.op) &&
             ParseSameType(f, f.operands.size());
    case F::kComplex: return ParseComplex(p, f);
    case F::kSelect: return ParseSelect(p, f);
    case F::kFunctional: return ParseValueUseList(f.operands) && ParseFunctionalTail(f);
    case F::kNullary: return ParseResultType(p, f);
    case F::kIota: return ParseIota(p, f);
    case F::kGetTupleElement: return ParseGetTupleElement(p, f);
    case F::kTuple: return ParseTuple(p, f);
    case F::kCompare: return ParseCompare(p, f);
    case F::kSlice: return ParseSlice(p, f);
    case F::kCholesky: return ParseCholesky(p, f);
    case F::kComposite: return ParseComposite(p, f);
    case F::kConvolution: return ParseConvolution(p, f);
    case F::kCustomCall: return ParseCustomCall(p, f);
    case F::kDot: return ParseDot(p, f);
    case F::kDotGeneral: return ParseDotGeneral(p, f);
    case F::kEinsum:
    case F::kUnaryEinsum: return ParseEinsum(p, f);
    case F::kReturn: return ParseReturn(p, f, false);
    case F::kFuncReturn: return ParseReturn(p, f, true);
    case F::kOptimizationBarrier: return ParseOptimizationBarrier(p, f);
    case F::kReducePrecision: return ParseReducePrecision(p, f);
    case F::kConstant:
    case F::kChloConstant: return ParseConstant(p, f);
    case F::kChloUnary:
    case F::kChloBroadcastBinary:
    case F::kChloPair:
    case F::kChloBroadcastSelect: return ParseChlo(p, f);
    case F::kChloTopK: return ParseChloTopK(p, f);
    case F::kCheck: return ParseCheck(p, f);
    case F::kSdyMesh:
    case F::kSdySharding: return ParseSdy(p, f);
    default: return BeginRegionOp(f);
  }
}

bool Parser::ContinuePretty(OpFrame& frame) { return ContinueRegionOp(frame); }

}  // namespace kiln::frontend::text
