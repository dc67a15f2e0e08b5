// Pretty forms of ops with regions or symbols, mirroring
// src/ir/printer_region_ops.cc: stablehlo.while, stablehlo.reduce, func.func,
// func.call, builtin.module and Shardy's computations.
#include "frontend/text/parser_impl.h"

namespace kiln::frontend::text {
namespace {

using ir::Attribute;
using ir::Type;
using F = ir::PrettyForm;

bool IsCommutativeBinary(std::string_view name) {
  return name == "stablehlo.add" || name == "stablehlo.multiply" || name == "stablehlo.maximum" ||
         name == "stablehlo.minimum" || name == "stablehlo.and" || name == "stablehlo.or" ||
         name == "stablehlo.xor";
}

bool ParseWhile(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  if (!p.Expect(TokenKind::kLParen, " after 'stablehlo.while'")) return false;
  std::vector<ArgumentDecl> arguments;
  while (!p.token().Is(TokenKind::kRParen)) {
    if (!arguments.empty() && !p.Expect(TokenKind::kComma, " or ')' between loop values"))
      return false;
    ArgumentDecl argument;
    argument.offset = p.token().offset;
    if (!p.token().Is(TokenKind::kPercent) ||
        p.token().spelling.find('#') != std::string_view::npos) {
      return p.FailExpected("a loop variable name (%...)");
    }
    argument.name = std::string(p.token().spelling.substr(1));
    p.Advance();
    f.operands.emplace_back();
    if (!p.Expect(TokenKind::kEqual, " after the loop variable") ||
        !p.ParseValueUse(f.operands.back())) {
      return false;
    }
    arguments.push_back(std::move(argument));
  }
  p.Advance();
  std::vector<Type> types;
  if (!arguments.empty() &&
      (!p.Expect(TokenKind::kColon, " before the loop value types") || !p.ParseTypeList(types))) {
    return false;
  }
  if (!p.ResolveOperands(op, f.operands, types, f.offset)) return false;
  p.AddResults(op, types);
  for (size_t i = 0; i < arguments.size(); ++i) {
    arguments[i].type = types[i];
    arguments[i].location = ir::Location::Unknown();
  }
  if (!p.ParseOptionalAttrDictWithKeyword(op) ||
      !p.ExpectKeyword("cond", " before the condition region")) {
    return false;
  }
  f.arguments = arguments;
  f.stage = 1;
  return p.RequestRegion(f, std::move(arguments), true);
}

bool ParseReduce(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  std::vector<ValueUse> inputs, inits;
  do {
    inputs.emplace_back();
    inits.emplace_back();
    if (!p.Expect(TokenKind::kLParen, " before an input") || !p.ParseValueUse(inputs.back()) ||
        !p.ExpectKeyword("init", " after the input") ||
        !p.Expect(TokenKind::kColon, " after 'init'") || !p.ParseValueUse(inits.back()) ||
        !p.Expect(TokenKind::kRParen, " after the initial value")) {
      return false;
    }
  } while (p.Consume(TokenKind::kComma));
  f.operands = inputs;
  f.operands.insert(f.operands.end(), inits.begin(), inits.end());
  if (p.ConsumeKeyword("applies")) {
    size_t offset = p.token().offset;
    if (p.token().Is(TokenKind::kBareIdentifier)) {
      f.inner_op = std::string(p.token().spelling);
    } else if (p.token().Is(TokenKind::kString)) {
      f.inner_op = Lexer::StringValue(p.token().spelling);
    } else {
      return p.FailExpected("the reducing op's name");
    }
    if (!IsCommutativeBinary(f.inner_op)) {
      return p.Fail(offset, StrCat("expected a commutative binary stablehlo op after 'applies' ",
                                   "(add, multiply, maximum, minimum, and, or, xor), found '",
                                   f.inner_op, "'"));
    }
    p.Advance();
  }
  std::vector<int64_t> dimensions;
  if (!p.ExpectKeyword("across", "") || !p.ExpectKeyword("dimensions", " after 'across'") ||
      !p.Expect(TokenKind::kEqual, " after 'dimensions'") || !p.ParseI64List(dimensions)) {
    return false;
  }
  op.SetAttr("dimensions", Attribute::DenseI64Array(std::move(dimensions)));
  std::vector<Type> operand_types, result_types;
  if (!p.ParseOptionalAttrDict(op) || !p.Expect(TokenKind::kColon, " before the reduce's type") ||
      !p.ParseFunctionType(operand_types, result_types) ||
      !p.ResolveOperands(op, f.operands, operand_types, f.offset)) {
    return false;
  }
  p.AddResults(op, result_types);
  if (!f.inner_op.empty()) return true;  // the body is built once the location is known
  if (!p.ExpectKeyword("reducer", " or 'applies'")) return false;
  std::vector<ArgumentDecl> firsts, seconds;
  while (p.Consume(TokenKind::kLParen)) {
    firsts.emplace_back();
    seconds.emplace_back();
    if (!p.ParseArgumentDecl(firsts.back(), false) ||
        !p.Expect(TokenKind::kComma, " between reducer arguments") ||
        !p.ParseArgumentDecl(seconds.back(), false) ||
        !p.Expect(TokenKind::kRParen, " after reducer arguments")) {
      return false;
    }
  }
  firsts.insert(firsts.end(), seconds.begin(), seconds.end());
  f.stage = 1;
  return p.RequestRegion(f, std::move(firsts), true);
}

bool ParseFunc(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  if (p.token().Is(TokenKind::kBareIdentifier)) {
    op.SetAttr("sym_visibility", Attribute::String(std::string(p.token().spelling)));
    p.Advance();
  }
  if (!p.token().Is(TokenKind::kAt)) return p.FailExpected("the function name (@...)");
  op.SetAttr("sym_name", Attribute::String(Lexer::SymbolValue(p.token().spelling)));
  p.Advance();
  if (!p.Expect(TokenKind::kLParen, " before the function arguments")) return false;
  std::vector<ArgumentDecl> arguments;
  bool named = p.token().Is(TokenKind::kPercent);
  while (!p.token().Is(TokenKind::kRParen)) {
    if (!arguments.empty() && !p.Expect(TokenKind::kComma, " or ')' between arguments"))
      return false;
    ArgumentDecl argument;
    if (named) {
      if (!p.ParseArgumentDecl(argument, true)) return false;
    } else {
      argument.offset = p.token().offset;
      if (!p.ParseType(argument.type)) return false;
      if (p.token().Is(TokenKind::kLBrace)) {
        std::vector<ir::NamedAttribute> entries;
        if (!p.ParseDictionary(entries)) return false;
        argument.attributes = Attribute::Dictionary(std::move(entries));
      }
      if (!p.ParseOptionalLocation(argument.location)) return false;
    }
    arguments.push_back(std::move(argument));
  }
  p.Advance();
  std::vector<Type> results;
  std::vector<Attribute> result_attributes;
  if (p.Consume(TokenKind::kArrow)) {
    // Only a parenthesized result may carry attributes: after a lone type,
    // '{' starts the body.
    auto result = [&](bool in_parens) {
      Type type;
      if (!p.ParseType(type)) return false;
      Attribute attributes;
      if (in_parens && p.token().Is(TokenKind::kLBrace)) {
        std::vector<ir::NamedAttribute> entries;
        if (!p.ParseDictionary(entries)) return false;
        attributes = Attribute::Dictionary(std::move(entries));
      }
      results.push_back(std::move(type));
      result_attributes.push_back(std::move(attributes));
      return true;
    };
    if (p.Consume(TokenKind::kLParen)) {
      while (!p.token().Is(TokenKind::kRParen)) {
        if (!results.empty() && !p.Expect(TokenKind::kComma, " or ')' between results"))
          return false;
        if (!result(true)) return false;
      }
      p.Advance();
    } else if (!result(false)) {
      return false;
    }
  }
  std::vector<Type> inputs;
  std::vector<Attribute> argument_attributes;
  for (const ArgumentDecl& argument : arguments) {
    inputs.push_back(argument.type);
    argument_attributes.push_back(argument.attributes);
  }
  // Per-entry dictionaries, kept only when one is non-empty (as MLIR does).
  auto entry_attributes = [](std::vector<Attribute>& list) {
    bool any = false;
    for (Attribute& entry : list) {
      if (!entry) entry = Attribute::Dictionary({});
      any = any || !entry->fields.empty();
    }
    return any ? Attribute::Array(std::move(list)) : Attribute();
  };
  op.SetAttr("function_type",
             Attribute::TypeAttr(Type::Function(std::move(inputs), std::move(results))));
  if (Attribute list = entry_attributes(argument_attributes)) op.SetAttr("arg_attrs", list);
  if (Attribute list = entry_attributes(result_attributes)) op.SetAttr("res_attrs", list);
  if (!p.ParseOptionalAttrDictWithKeyword(op)) return false;
  if (!p.token().Is(TokenKind::kLBrace)) {
    op.AddRegion();  // a declaration
    return true;
  }
  if (!named && !arguments.empty()) {
    return p.Fail(arguments[0].offset, "a function with a body needs argument names (%arg0: ...)");
  }
  f.stage = 1;
  return p.RequestRegion(f, std::move(arguments), true);
}

bool ParseCall(Parser& p, OpFrame& f) {
  if (!p.token().Is(TokenKind::kAt)) return p.FailExpected("the callee (@...)");
  f.op->SetAttr("callee", Attribute::SymbolRef({Lexer::SymbolValue(p.token().spelling)}));
  p.Advance();
  return p.Expect(TokenKind::kLParen, " after the callee") && p.ParseValueUseList(f.operands) &&
         p.Expect(TokenKind::kRParen, " after the call's operands") && p.ParseFunctionalTail(f);
}

bool ParseModuleOp(Parser& p, OpFrame& f) {
  if (p.token().Is(TokenKind::kAt)) {
    std::string_view name = p.token().spelling.substr(1);
    f.op->SetAttr("sym_name",
                  Attribute::String(name.size() >= 2 && name[0] == '"' ? Lexer::StringValue(name)
                                                                       : std::string(name)));
    p.Advance();
  }
  if (!p.ParseOptionalAttrDictWithKeyword(*f.op)) return false;
  f.stage = 1;
  return p.RequestRegion(f, {}, true);
}

// `key=[...]` (or `key={...}`) captured as Opaque text with `prefix`/`suffix`.
bool ShardyField(Parser& p, ir::Operation& op, std::string_view key, std::string_view prefix,
                 std::string_view suffix, TokenKind open) {
  if (!p.ExpectKeyword(key, "") || !p.Expect(TokenKind::kEqual, StrCat(" after '", key, "'")))
    return false;
  if (!p.token().Is(open)) return p.FailExpected(StrCat(DescribeKind(open), " after '", key, "='"));
  std::string text;
  if (!p.CaptureBalanced(p.token().offset, text)) return false;
  op.SetAttr(std::string(key), Attribute::Opaque(StrCat(prefix, text, suffix)));
  return true;
}

bool ParseShardyComputation(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  bool manual = f.form == F::kSdyManualComputation;
  if (!manual) {
    if (!p.Expect(TokenKind::kLess, " before the computation's name")) return false;
    if (!p.token().Is(TokenKind::kString))
      return p.FailExpected("the computation's name (a string)");
    op.SetAttr("name", Attribute::String(Lexer::StringValue(p.token().spelling)));
    p.Advance();
    if (!p.Expect(TokenKind::kGreater, " after the computation's name")) return false;
  }
  if (!p.Expect(TokenKind::kLParen, " before the operands") || !p.ParseValueUseList(f.operands) ||
      !p.Expect(TokenKind::kRParen, " after the operands")) {
    return false;
  }
  constexpr std::string_view kPerValue = "#sdy.sharding_per_value<";
  if ((manual || p.token().IsKeyword("in_shardings")) &&
      !ShardyField(p, op, "in_shardings", kPerValue, ">", TokenKind::kLSquare)) {
    return false;
  }
  if ((manual || p.token().IsKeyword("out_shardings")) &&
      !ShardyField(p, op, "out_shardings", kPerValue, ">", TokenKind::kLSquare)) {
    return false;
  }
  if (manual && !ShardyField(p, op, "manual_axes", "#sdy<manual_axes", ">", TokenKind::kLBrace))
    return false;
  std::vector<ArgumentDecl> arguments;
  if (!p.Expect(TokenKind::kLParen, " before the region's arguments")) return false;
  while (!p.token().Is(TokenKind::kRParen)) {
    if (!arguments.empty() && !p.Expect(TokenKind::kComma, " or ')' between arguments"))
      return false;
    arguments.emplace_back();
    if (!p.ParseArgumentDecl(arguments.back(), false)) return false;
  }
  p.Advance();
  f.stage = 1;
  return p.RequestRegion(f, std::move(arguments), true);
}

// chlo.scan's form (ChloOps.cpp ScanOp::parse): the operand types follow
// the body, so operands resolve once it is read (ContinueRegionOp). The
// split between inputs and inits (and between stacked outputs and carries)
// is kept as MLIR's generic form spells it: operandSegmentSizes and
// resultSegmentSizes.
bool ParseChloScan(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  std::vector<ValueUse> inits;
  int64_t dimension = 0;
  if (!p.Expect(TokenKind::kLParen, " before the scan's inputs") ||
      !p.ParseValueUseList(f.operands) ||
      !p.Expect(TokenKind::kRParen, " after the scan's inputs") ||
      !p.ExpectKeyword("inits", " after the scan's inputs") ||
      !p.Expect(TokenKind::kLParen, " after 'inits'") || !p.ParseValueUseList(inits) ||
      !p.Expect(TokenKind::kRParen, " after the scan's inits") ||
      !p.ExpectKeyword("dimension", " after the scan's inits") ||
      !p.Expect(TokenKind::kEqual, " after 'dimension'") || !p.ParseInteger(dimension)) {
    return false;
  }
  const auto inputs = static_cast<int64_t>(f.operands.size());
  f.operands.insert(f.operands.end(), inits.begin(), inits.end());
  op.SetAttr("dimension", Attribute::Integer(dimension, Type::Element(ElementType::kS64)));
  const Type i32 = Type::Element(ElementType::kS32);
  op.SetAttr("operandSegmentSizes",
             Attribute::DenseArray(i32, {inputs, static_cast<int64_t>(inits.size())}, {}));
  if (!p.ParseOptionalAttrDictWithKeyword(op)) return false;
  f.stage = 1;
  return p.RequestRegion(f, {}, false);
}

bool FinishChloScan(Parser& p, OpFrame& f) {
  ir::Operation& op = *f.op;
  const size_t offset = p.token().offset;
  if (!p.ParseFunctionalTail(f)) return false;
  std::optional<std::vector<int64_t>> segments = ir::IntegersOf(op.GetAttr("operandSegmentSizes"));
  const int64_t carries = segments && segments->size() == 2 ? segments->back() : 0;
  const auto results = static_cast<int64_t>(op.num_results());
  if (results < carries) {
    return p.Fail(offset, StrCat("expected at least ", carries, " results (one per init), found ",
                                 results));
  }
  op.SetAttr("resultSegmentSizes", Attribute::DenseArray(Type::Element(ElementType::kS32),
                                                         {results - carries, carries}, {}));
  return true;
}

}  // namespace

bool Parser::BeginRegionOp(OpFrame& frame) {
  switch (frame.form) {
    case F::kWhile: return ParseWhile(*this, frame);
    case F::kReduce: return ParseReduce(*this, frame);
    case F::kFuncFunc: return ParseFunc(*this, frame);
    case F::kFuncCall: return ParseCall(*this, frame);
    case F::kModule: return ParseModuleOp(*this, frame);
    case F::kChloScan: return ParseChloScan(*this, frame);
    case F::kSdyManualComputation:
    case F::kSdyNamedComputation: return ParseShardyComputation(*this, frame);
    default:
      return Fail(frame.offset, StrCat("'", frame.op->name(), "' has no custom form Kiln reads"));
  }
}

bool Parser::ContinueRegionOp(OpFrame& frame) {
  switch (frame.form) {
    case F::kWhile:
      if (frame.stage != 1) return true;
      frame.stage = 2;
      if (!ExpectKeyword("do", " before the loop body")) return false;
      return RequestRegion(frame, frame.arguments, true);
    case F::kSdyManualComputation:
    case F::kSdyNamedComputation: return ParseFunctionalTail(frame);
    case F::kChloScan:
      if (frame.stage != 1) return true;
      frame.stage = 2;
      return FinishChloScan(*this, frame);
    default: return true;
  }
}

bool Parser::FinishCompactReduce(OpFrame& frame) {
  ir::Operation& op = *frame.op;
  const Type& input = op.operands().empty() ? Type() : op.operand(0)->type();
  if (!input.Is(ir::TypeKind::kTensor) && !input.Is(ir::TypeKind::kUnrankedTensor)) {
    return Fail(frame.offset, "the reduce's first input must be a tensor");
  }
  Type scalar = Type::Tensor(input.element(), {});
  ir::Block& block = op.AddRegion().AddBlock();
  ir::Value* lhs = block.AddArgument(scalar, op.location());
  ir::Value* rhs = block.AddArgument(scalar, op.location());
  auto inner = std::make_unique<ir::Operation>(frame.inner_op, op.location());
  inner->AddOperand(lhs);
  inner->AddOperand(rhs);
  ir::Value* result = inner->AddResult(scalar);
  block.Append(std::move(inner));
  auto ret = std::make_unique<ir::Operation>("stablehlo.return", op.location());
  ret->AddOperand(result);
  block.Append(std::move(ret));
  return true;
}

}  // namespace kiln::frontend::text
