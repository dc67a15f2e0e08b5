// Pretty forms of ops with regions or symbols (while, reduce, func.func,
// builtin.module, Shardy's ops) and of the CHLO ops JAX emits.
#include <algorithm>
#include <array>

#include "ir/op_syntax.h"
#include "ir/printer_internal.h"

namespace kiln::ir::print_internal {
namespace {

bool SingleBlock(const Region& region) { return region.num_blocks() == 1; }

// The ops upstream's compact reduce form accepts as its body
// (isCommutativeNoRegionMatchingDialect).
bool IsCommutativeBinary(OpCode code) {
  switch (code) {
    case OpCode::kAdd:
    case OpCode::kMultiply:
    case OpCode::kMaximum:
    case OpCode::kMinimum:
    case OpCode::kAnd:
    case OpCode::kOr:
    case OpCode::kXor: return true;
    default: return false;
  }
}

// isReduceEligibleForCompactPrint: the body is one commutative binary
// stablehlo op on the block's two scalar arguments, returned directly.
const Operation* CompactReducer(const Operation& op) {
  const Block& block = op.region(0).block(0);
  if (block.operations().size() != 2 || op.operands().empty()) return nullptr;
  const Operation& inner = *block.operations()[0];
  const Operation& ret = *block.operations()[1];
  if (!IsCommutativeBinary(inner.code()) || inner.operands().size() != 2 ||
      inner.num_results() != 1 || inner.num_regions() != 0) {
    return nullptr;
  }
  const Type& expected = inner.result(0)->type();
  for (Value* operand : inner.operands()) {
    if (operand == nullptr || operand->type() != expected) return nullptr;
  }
  const Type& input = op.operand(0)->type();
  if (!input.Is(TypeKind::kTensor) && !input.Is(TypeKind::kUnrankedTensor)) return nullptr;
  if (expected != Type::Tensor(input.element(), {})) return nullptr;
  if (block.num_arguments() != 2 || inner.operand(0) != block.argument(0) ||
      inner.operand(1) != block.argument(1)) {
    return nullptr;
  }
  std::string_view name = ret.name();
  if (name.substr(name.find('.') + 1) != "return") return nullptr;
  if (ret.operands().size() != 1 || ret.operand(0) != inner.result(0)) return nullptr;
  return &inner;
}

bool WriteReduce(const Operation& op, OpWriter& w) {
  const std::vector<int64_t>* dims = AsI64Array(op.GetAttr("dimensions"));
  size_t count = op.operands().size();
  if (dims == nullptr || count == 0 || count % 2 != 0 || op.num_regions() != 1 ||
      !SingleBlock(op.region(0)) || op.region(0).block(0).num_arguments() != count) {
    return false;
  }
  size_t pairs = count / 2;
  const Operation* compact = CompactReducer(op);
  w.Name(op);
  for (size_t i = 0; i < pairs; ++i) {
    w.out() += i == 0 ? "(" : ", (";
    w.Value(op.operand(i));
    w.out() += " init: ";
    w.Value(op.operand(i + pairs));
    w.out() += ')';
  }
  if (compact != nullptr) {
    w.out() += " applies ";
    AppendKeywordOrString(w.out(), compact->name());
  }
  w.out() += " across dimensions = ";
  AppendDims(w.out(), *dims);
  w.AttrDict(op, std::array<std::string_view, 1>{"dimensions"});
  w.out() += " : ";
  w.FunctionalType(op);
  if (compact != nullptr) return true;
  w.Newline();
  w.out() += " reducer";
  const Block& block = op.region(0).block(0);
  for (size_t i = 0; i < pairs; ++i) {
    w.out() += '(';
    w.BlockArgument(block.argument(i));
    w.out() += ", ";
    w.BlockArgument(block.argument(i + pairs));
    w.out() += ") ";
  }
  w.out() += ' ';
  w.Region(op.region(0), false);
  return true;
}

bool WriteWhile(const Operation& op, OpWriter& w) {
  size_t count = op.operands().size();
  if (op.num_regions() != 2 || !SingleBlock(op.region(0)) || !SingleBlock(op.region(1)) ||
      op.region(0).block(0).num_arguments() != count ||
      op.region(1).block(0).num_arguments() != count || op.num_results() != count) {
    return false;
  }
  const Block& body = op.region(1).block(0);
  for (size_t i = 0; i < count; ++i) {
    if (op.region(0).block(0).argument(i)->type() != body.argument(i)->type() ||
        body.argument(i)->type() != op.operand(i)->type() ||
        op.result(i)->type() != op.operand(i)->type()) {
      return false;
    }
  }
  w.Name(op);
  w.out() += '(';
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) w.out() += ", ";
    w.Value(body.argument(i));
    w.out() += " = ";
    w.Value(op.operand(i));
  }
  w.out() += ')';
  if (count != 0) {
    w.out() += " : ";
    w.OperandTypes(op);
  }
  w.AttrDict(op, {}, /*keyword=*/true);
  w.Newline();
  w.out() += "cond ";
  w.Region(op.region(0), false);
  w.out() += " do ";
  w.Region(op.region(1), false);
  return true;
}

// One signature entry's attributes: ` {a = 1}` when the dictionary is non-empty.
void EntryAttributes(OpWriter& w, const Attribute& list, size_t index) {
  if (!list.Is(AttrKind::kArray) || index >= list->elements.size()) return;
  const Attribute& dictionary = list->elements[index];
  if (!dictionary.Is(AttrKind::kDictionary) || dictionary->fields.empty()) return;
  w.out() += ' ';
  AppendDictionary(w.out(), dictionary->fields);
}

bool WriteFunc(const Operation& op, OpWriter& w) {
  Attribute name = op.GetAttr("sym_name");
  Attribute type_attr = op.GetAttr("function_type");
  Attribute visibility = op.GetAttr("sym_visibility");
  Attribute arg_attrs = op.GetAttr("arg_attrs");
  Attribute res_attrs = op.GetAttr("res_attrs");
  if (!name.Is(AttrKind::kString) || !type_attr.Is(AttrKind::kType) ||
      !type_attr->type.Is(TypeKind::kFunction) || op.num_regions() != 1 ||
      (visibility && (!visibility.Is(AttrKind::kString) || !IsBareIdentifier(visibility->text))) ||
      (arg_attrs && !arg_attrs.Is(AttrKind::kArray)) ||
      (res_attrs && !res_attrs.Is(AttrKind::kArray))) {
    return false;
  }
  const Type& type = type_attr->type;
  const Region& body = op.region(0);
  bool has_body = !body.empty();
  if (has_body && body.block(0).num_arguments() != type.members().size()) return false;
  w.Name(op);
  w.out() += ' ';
  if (visibility) {
    w.out() += visibility->text;
    w.out() += ' ';
  }
  AppendSymbol(w.out(), name->text);
  w.out() += '(';
  for (size_t i = 0; i < type.members().size(); ++i) {
    if (i > 0) w.out() += ", ";
    if (has_body) {
      const Value* argument = body.block(0).argument(i);
      w.Value(argument);
      w.out() += ": ";
      w.Type(argument->type());
      EntryAttributes(w, arg_attrs, i);
      w.Location(argument->location());
    } else {
      w.Type(type.members()[i]);
      EntryAttributes(w, arg_attrs, i);
    }
  }
  w.out() += ')';
  const std::vector<Type>& results = type.results();
  if (!results.empty()) {
    w.out() += " -> ";
    bool any_attributes = false;
    for (size_t i = 0; i < results.size(); ++i) {
      if (res_attrs.Is(AttrKind::kArray) && i < res_attrs->elements.size() &&
          res_attrs->elements[i].Is(AttrKind::kDictionary) &&
          !res_attrs->elements[i]->fields.empty()) {
        any_attributes = true;
      }
    }
    bool parens = results.size() != 1 || any_attributes || results[0].Is(TypeKind::kFunction);
    if (parens) w.out() += '(';
    for (size_t i = 0; i < results.size(); ++i) {
      if (i > 0) w.out() += ", ";
      w.Type(results[i]);
      EntryAttributes(w, res_attrs, i);
    }
    if (parens) w.out() += ')';
  }
  constexpr std::array<std::string_view, 5> kElided = {"sym_name", "function_type",
                                                       "sym_visibility", "arg_attrs", "res_attrs"};
  w.AttrDict(op, kElided, /*keyword=*/true);
  if (has_body) {
    w.out() += ' ';
    w.Region(body, false);
  }
  return true;
}

bool WriteCall(const Operation& op, OpWriter& w) {
  Attribute callee = op.GetAttr("callee");
  if (!callee.Is(AttrKind::kSymbolRef) || callee->symbol_path.size() != 1 ||
      op.num_regions() != 0) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  AppendSymbol(w.out(), callee->symbol_path[0]);
  w.out() += '(';
  w.Values(op.operands());
  w.out() += ')';
  w.AttrDict(op, std::array<std::string_view, 1>{"callee"});
  w.out() += " : ";
  w.FunctionalType(op);
  return true;
}

bool WriteModule(const Operation& op, OpWriter& w) {
  Attribute name = op.GetAttr("sym_name");
  if ((name && !name.Is(AttrKind::kString)) || op.num_regions() != 1 ||
      !SingleBlock(op.region(0)) || op.region(0).block(0).num_arguments() != 0 ||
      !op.operands().empty() || op.num_results() != 0) {
    return false;
  }
  w.Name(op);
  if (name) {
    w.out() += ' ';
    AppendSymbol(w.out(), name->text);
  }
  w.AttrDict(op, std::array<std::string_view, 1>{"sym_name"}, /*keyword=*/true);
  w.out() += ' ';
  w.Region(op.region(0), false);
  return true;
}

// Whether `text` is one bracket group (`<...>`, `[...]`, `{...}`) whose first
// bracket closes at its end, as the reader captures it.
bool IsOneGroup(std::string_view text) {
  if (text.empty() || (text[0] != '<' && text[0] != '[' && text[0] != '{')) return false;
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (i >= text.size()) return false;
      continue;
    }
    if (c == '<' || c == '(' || c == '[' || c == '{') ++depth;
    bool arrow = c == '>' && i > 0 && text[i - 1] == '-';
    if ((c == '>' && !arrow) || c == ')' || c == ']' || c == '}') {
      if (--depth == 0) return i + 1 == text.size();
    }
  }
  return false;
}

// An Opaque attribute's text between `prefix` and `suffix` when that is one
// bracket group, or false.
bool Stripped(const Attribute& attribute, std::string_view prefix, std::string_view suffix,
              std::string_view& body) {
  if (!attribute.Is(AttrKind::kOpaque)) return false;
  std::string_view text = attribute->text;
  if (text.size() < prefix.size() + suffix.size() || text.substr(0, prefix.size()) != prefix ||
      text.substr(text.size() - suffix.size()) != suffix) {
    return false;
  }
  body = text.substr(prefix.size(), text.size() - prefix.size() - suffix.size());
  return IsOneGroup(body);
}

bool WriteSdyMesh(const Operation& op, OpWriter& w) {
  Attribute name = op.GetAttr("sym_name");
  std::string_view mesh;
  if (!name.Is(AttrKind::kString) || !Stripped(op.GetAttr("mesh"), "#sdy.mesh", "", mesh) ||
      !op.operands().empty() || op.num_results() != 0) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  AppendSymbol(w.out(), name->text);
  w.out() += " = ";
  w.out() += mesh;
  w.AttrDict(op, std::array<std::string_view, 2>{"sym_name", "mesh"});
  return true;
}

bool WriteSdySharding(const Operation& op, OpWriter& w) {
  std::string_view sharding;
  if (!Stripped(op.GetAttr("sharding"), "#sdy.sharding", "", sharding) ||
      op.operands().size() != 1 || op.num_results() != 1) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  w.Value(op.operand(0));
  w.out() += ' ';
  w.out() += sharding;
  w.AttrDict(op, std::array<std::string_view, 1>{"sharding"});
  w.out() += " : ";
  w.Type(op.result(0)->type());
  return true;
}

// `(%arg1: T, ...) {region}`: custom<SingleBlockRegionNoBlockId>.
void SingleBlockRegion(OpWriter& w, const Region& region) {
  const Block& block = region.block(0);
  w.out() += '(';
  for (size_t i = 0; i < block.num_arguments(); ++i) {
    if (i > 0) w.out() += ", ";
    w.BlockArgument(block.argument(i));
  }
  w.out() += ") ";
  w.Region(region, false);
}

bool WriteSdyComputation(const Operation& op, OpWriter& w, bool manual) {
  std::string_view in_shardings;
  std::string_view out_shardings;
  std::string_view axes;
  Attribute in_attr = op.GetAttr("in_shardings");
  Attribute out_attr = op.GetAttr("out_shardings");
  Attribute name = op.GetAttr("name");
  constexpr std::string_view kPerValue = "#sdy.sharding_per_value<";
  bool ok = op.num_regions() == 1 && SingleBlock(op.region(0));
  if (manual) {
    ok = ok && Stripped(in_attr, kPerValue, ">", in_shardings) &&
         Stripped(out_attr, kPerValue, ">", out_shardings) &&
         Stripped(op.GetAttr("manual_axes"), "#sdy<manual_axes", ">", axes);
  } else {
    ok = ok && name.Is(AttrKind::kString) &&
         (!in_attr || Stripped(in_attr, kPerValue, ">", in_shardings)) &&
         (!out_attr || Stripped(out_attr, kPerValue, ">", out_shardings));
  }
  if (!ok) return false;
  w.Name(op);
  if (!manual) {
    w.out() += '<';
    AppendQuoted(w.out(), name->text);
    w.out() += '>';
  }
  w.out() += '(';
  w.Values(op.operands());
  w.out() += ')';
  if (manual || in_attr) {
    w.out() += " in_shardings=";
    w.out() += in_shardings;
  }
  if (manual || out_attr) {
    w.out() += " out_shardings=";
    w.out() += out_shardings;
  }
  if (manual) {
    w.out() += " manual_axes=";
    w.out() += axes;
  }
  w.out() += ' ';
  SingleBlockRegion(w, op.region(0));
  w.AttrDict(op, std::array<std::string_view, 4>{"in_shardings", "out_shardings", "manual_axes",
                                                 "name"});
  w.out() += " : ";
  w.FunctionalType(op);
  return true;
}

bool WriteChlo(const Operation& op, OpWriter& w, PrettyForm form) {
  using F = PrettyForm;
  size_t operands = op.operands().size();
  if (op.num_regions() != 0) return false;
  if (form == F::kChloTopK) {
    Attribute k = op.GetAttr("k");
    Attribute stable = op.GetAttr("is_stable");
    if (!k.Is(AttrKind::kInteger) || (stable && !stable.Is(AttrKind::kBool)) || operands != 1 ||
        op.num_results() != 2) {
      return false;
    }
    w.Name(op);
    w.out() += '(';
    w.Value(op.operand(0));
    w.out() += ", k = ";
    AppendIntegerValue(w.out(), k);
    if (stable && !stable->bool_value) w.out() += ", is_stable = false";
    w.out() += ')';
    w.AttrDict(op, std::array<std::string_view, 2>{"k", "is_stable"});
    w.out() += " : ";
    w.Type(op.operand(0)->type());
    w.out() += " -> (";
    w.ResultTypes(op);
    w.out() += ')';
    return true;
  }
  size_t expected = form == F::kChloUnary ? 1 : form == F::kChloBroadcastSelect ? 3 : 2;
  if (operands != expected || op.num_results() != 1) return false;
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  w.AttrDict(op, {});
  w.out() += " : ";
  bool parens = form == F::kChloBroadcastBinary || form == F::kChloBroadcastSelect;
  if (parens) w.out() += '(';
  w.OperandTypes(op);
  if (parens) w.out() += ')';
  w.out() += " -> ";
  w.Type(op.result(0)->type());
  return true;
}

}  // namespace

bool WriteRegionOp(const Operation& op, OpWriter& w) {
  using F = PrettyForm;
  PrettyForm form = GetPrettyForm(op.name());
  switch (form) {
    case F::kWhile: return WriteWhile(op, w);
    case F::kReduce: return WriteReduce(op, w);
    case F::kFuncFunc: return WriteFunc(op, w);
    case F::kFuncCall: return WriteCall(op, w);
    case F::kModule: return WriteModule(op, w);
    case F::kSdyMesh: return WriteSdyMesh(op, w);
    case F::kSdySharding: return WriteSdySharding(op, w);
    case F::kSdyManualComputation: return WriteSdyComputation(op, w, true);
    case F::kSdyNamedComputation: return WriteSdyComputation(op, w, false);
    case F::kChloUnary:
    case F::kChloBroadcastBinary:
    case F::kChloPair:
    case F::kChloBroadcastSelect:
    case F::kChloTopK: return WriteChlo(op, w, form);
    default: return false;
  }
}

}  // namespace kiln::ir::print_internal
