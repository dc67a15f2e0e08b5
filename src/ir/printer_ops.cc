// The pretty forms of the ops that have one upstream (StablehloOps.td
// assembly formats, AssemblyFormat.cpp, func/builtin, Shardy, CHLO). Each
// writer checks the op fits its form first and returns false otherwise, so
// the op prints generically instead.
#include <algorithm>
#include <array>
#include <cstring>

#include "ir/op_syntax.h"
#include "ir/printer_internal.h"

namespace kiln::ir::print_internal {
namespace {

using Names = std::initializer_list<std::string_view>;

bool AttrDictWithout(OpWriter& w, const Operation& op, Names elided) {
  w.AttrDict(op, std::span<const std::string_view>(elided.begin(), elided.size()));
  return true;
}

const Type& OperandType(const Operation& op, size_t i) {
  static const Type kNone;
  return op.operand(i) ? op.operand(i)->type() : kNone;
}

// `: T` when every operand has the result's type, else `: (T, ...) -> R`
// (custom<SameOperandsAndResultType>).
void SameType(OpWriter& w, const Operation& op) {
  w.out() += " : ";
  const Type& result = op.result(0)->type();
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (OperandType(op, i) != result) {
      w.FunctionalType(op);
      return;
    }
  }
  w.Type(result);
}

void Functional(OpWriter& w, const Operation& op) {
  w.out() += " : ";
  w.FunctionalType(op);
}

bool IsDefaultAccuracy(const Attribute& accuracy) {
  if (!accuracy.Is(AttrKind::kStruct) || accuracy->text != "stablehlo.result_accuracy")
    return false;
  for (const NamedAttribute& field : accuracy->fields) {
    const Attribute& v = field.value;
    if (field.name == "mode") {
      if (!v.Is(AttrKind::kEnum) || v->enum_value != "DEFAULT") return false;
    } else if (!((v.Is(AttrKind::kFloat) && v->float_value == 0.0) ||
                 (v.Is(AttrKind::kInteger) && v->int_value == 0))) {
      return false;
    }
  }
  return true;
}

bool IsInteger(const Attribute& a) { return a.Is(AttrKind::kInteger); }
bool IsEnum(const Attribute& a) { return a.Is(AttrKind::kEnum); }

// An i1 dense-array attribute's values (window_reversal).
const std::vector<int64_t>* AsBoolArray(const Attribute& a) {
  if (!a.Is(AttrKind::kDenseArray) || !a->type || a->type.element_type() != ElementType::kPred) {
    return nullptr;
  }
  return &a->int_values;
}

void IntValue(OpWriter& w, const Attribute& a) { AppendIntegerValue(w.out(), a); }

// ---- simple forms ----

bool WriteSameType(const Operation& op, OpWriter& w) {
  if (op.num_results() != 1 || op.num_regions() != 0) return false;
  Attribute accuracy = op.GetAttr("result_accuracy");
  bool elide_accuracy = accuracy && IsDefaultAccuracy(accuracy);
  w.Name(op);
  if (!op.operands().empty()) w.out() += ' ';
  w.Values(op.operands());
  if (elide_accuracy) {
    AttrDictWithout(w, op, {"result_accuracy"});
  } else {
    AttrDictWithout(w, op, {});
  }
  SameType(w, op);
  return true;
}

bool WriteComplex(const Operation& op, OpWriter& w) {
  if (op.num_results() != 1 || op.operands().size() != 2) return false;
  const Type& result = op.result(0)->type();
  bool compact = false;
  if (result.Is(TypeKind::kTensor) && result.element().Is(TypeKind::kElement)) {
    ElementType element = result.element().element_type();
    ElementType part = element == ElementType::kC64    ? ElementType::kF32
                       : element == ElementType::kC128 ? ElementType::kF64
                                                       : ElementType::kPred;
    Type real = Type::Tensor(Type::Element(part), result.dims(), result.bounds());
    compact = part != ElementType::kPred && OperandType(op, 0) == real &&
              OperandType(op, 1) == real;
  }
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  AttrDictWithout(w, op, {});
  if (compact) {
    w.out() += " : ";
    w.Type(result);
  } else {
    Functional(w, op);
  }
  return true;
}

bool WriteSelect(const Operation& op, OpWriter& w) {
  if (op.num_results() != 1 || op.operands().size() != 3) return false;
  const Type& result = op.result(0)->type();
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  AttrDictWithout(w, op, {});
  if (OperandType(op, 1) != result || OperandType(op, 2) != result) {
    Functional(w, op);
  } else {
    w.out() += " : ";
    w.Type(OperandType(op, 0));
    w.out() += ", ";
    w.Type(result);
  }
  return true;
}

bool WriteFunctional(const Operation& op, OpWriter& w) {
  if (op.num_regions() != 0) return false;
  w.Name(op);
  if (!op.operands().empty()) w.out() += ' ';
  w.Values(op.operands());
  AttrDictWithout(w, op, {});
  Functional(w, op);
  return true;
}

bool WriteNullary(const Operation& op, OpWriter& w) {
  if (op.num_results() != 1 || !op.operands().empty()) return false;
  w.Name(op);
  AttrDictWithout(w, op, {});
  w.out() += " : ";
  w.Type(op.result(0)->type());
  return true;
}

// `%x, key = N` style ops with one integer attribute.
bool WriteOperandsAndInteger(const Operation& op, OpWriter& w, std::string_view keyword,
                             std::string_view attribute, bool same_type) {
  Attribute value = op.GetAttr(attribute);
  if (!IsInteger(value) || op.num_results() != 1) return false;
  w.Name(op);
  w.out() += ' ';
  for (Value* operand : op.operands()) {
    w.Value(operand);
    w.out() += ", ";
  }
  w.out() += keyword;
  w.out() += " = ";
  IntValue(w, value);
  w.AttrDict(op, std::array{attribute});
  if (same_type) {
    SameType(w, op);
  } else {
    Functional(w, op);
  }
  return true;
}

// `%x, key = [1, 2]` style ops with one i64 array attribute.
bool WriteOperandsAndDims(const Operation& op, OpWriter& w, std::string_view keyword,
                          std::string_view attribute, bool same_type) {
  const std::vector<int64_t>* dims = AsI64Array(op.GetAttr(attribute));
  if (dims == nullptr || op.num_results() != 1 || op.operands().empty()) return false;
  w.Name(op);
  w.out() += ' ';
  for (Value* operand : op.operands()) {
    w.Value(operand);
    w.out() += ", ";
  }
  w.out() += keyword;
  w.out() += " = ";
  AppendDims(w.out(), *dims);
  w.AttrDict(op, std::array{attribute});
  if (same_type) {
    SameType(w, op);
  } else {
    Functional(w, op);
  }
  return true;
}

bool WriteIota(const Operation& op, OpWriter& w) {
  Attribute dimension = op.GetAttr("iota_dimension");
  if (!IsInteger(dimension) || op.num_results() != 1 || !op.operands().empty()) return false;
  w.Name(op);
  w.out() += " dim = ";
  IntValue(w, dimension);
  AttrDictWithout(w, op, {"iota_dimension"});
  w.out() += " : ";
  w.Type(op.result(0)->type());
  return true;
}

bool WriteGetTupleElement(const Operation& op, OpWriter& w) {
  Attribute index = op.GetAttr("index");
  if (!IsInteger(index) || op.operands().size() != 1 || op.num_results() != 1) return false;
  w.Name(op);
  w.out() += ' ';
  w.Value(op.operand(0));
  w.out() += '[';
  IntValue(w, index);
  w.out() += ']';
  AttrDictWithout(w, op, {"index"});
  Functional(w, op);
  return true;
}

bool WriteTuple(const Operation& op, OpWriter& w) {
  if (op.num_results() != 1) return false;
  w.Name(op);
  if (!op.operands().empty()) w.out() += ' ';
  w.Values(op.operands());
  AttrDictWithout(w, op, {});
  w.out() += " : ";
  w.Type(op.result(0)->type());
  return true;
}

bool WriteCompare(const Operation& op, OpWriter& w) {
  Attribute direction = op.GetAttr("comparison_direction");
  Attribute type = op.GetAttr("compare_type");
  if (!IsEnum(direction) || (type && !IsEnum(type)) || op.operands().size() != 2 ||
      op.num_results() != 1) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  w.out() += direction->enum_value;
  w.out() += ", ";
  w.Values(op.operands());
  if (type) {
    w.out() += ", ";
    w.out() += type->enum_value;
  }
  AttrDictWithout(w, op, {"comparison_direction", "compare_type"});
  Functional(w, op);
  return true;
}

bool WriteSlice(const Operation& op, OpWriter& w) {
  const std::vector<int64_t>* start = AsI64Array(op.GetAttr("start_indices"));
  const std::vector<int64_t>* limit = AsI64Array(op.GetAttr("limit_indices"));
  const std::vector<int64_t>* strides = AsI64Array(op.GetAttr("strides"));
  if (!start || !limit || !strides || start->size() != limit->size() ||
      start->size() != strides->size() || op.operands().size() != 1 || op.num_results() != 1) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  w.Value(op.operand(0));
  w.out() += " [";
  for (size_t i = 0; i < start->size(); ++i) {
    if (i > 0) w.out() += ", ";
    w.out() += std::to_string((*start)[i]) + ":" + std::to_string((*limit)[i]);
    if ((*strides)[i] != 1) w.out() += ":" + std::to_string((*strides)[i]);
  }
  w.out() += ']';
  AttrDictWithout(w, op, {"start_indices", "limit_indices", "strides"});
  Functional(w, op);
  return true;
}

bool WriteDynamicSlice(const Operation& op, OpWriter& w) {
  const std::vector<int64_t>* sizes = AsI64Array(op.GetAttr("slice_sizes"));
  if (sizes == nullptr || op.operands().size() < 2 || op.num_results() != 1) return false;
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  w.out() += ", sizes = ";
  AppendDims(w.out(), *sizes);
  AttrDictWithout(w, op, {"slice_sizes"});
  Functional(w, op);
  return true;
}

bool WriteCholesky(const Operation& op, OpWriter& w) {
  Attribute lower = op.GetAttr("lower");
  if ((lower && !lower.Is(AttrKind::kBool)) || op.operands().size() != 1 || op.num_results() != 1) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  w.Value(op.operand(0));
  if (lower && lower->bool_value) w.out() += ", lower = true";
  AttrDictWithout(w, op, {"lower"});
  SameType(w, op);
  return true;
}

bool WriteConcatenate(const Operation& op, OpWriter& w) {
  if (op.operands().empty()) return false;
  return WriteOperandsAndInteger(op, w, "dim", "dimension", false);
}

bool WriteComposite(const Operation& op, OpWriter& w) {
  Attribute name = op.GetAttr("name");
  if (!name.Is(AttrKind::kString) || op.num_regions() != 0) return false;
  std::vector<std::string_view> elided = {"name"};
  Attribute attributes = op.GetAttr("composite_attributes");
  if (attributes.Is(AttrKind::kDictionary) && attributes->fields.empty()) {
    elided.push_back("composite_attributes");
  }
  Attribute version = op.GetAttr("version");
  if (IsInteger(version) && version->int_value == 0) elided.push_back("version");
  w.Name(op);
  w.out() += ' ';
  AppendQuoted(w.out(), name->text);
  if (!op.operands().empty()) w.out() += ' ';
  w.Values(op.operands());
  w.AttrDict(op, elided);
  Functional(w, op);
  return true;
}

bool WriteConvolution(const Operation& op, OpWriter& w) {
  if (op.operands().size() != 2 || op.num_results() != 1) return false;
  std::string dims;
  if (!AppendConvDimensions(dims, op.GetAttr("dimension_numbers"))) return false;
  Attribute padding = op.GetAttr("padding");
  if (padding) {
    const Type& type = padding->type;
    bool ok = padding.Is(AttrKind::kDenseElements) && type.Is(TypeKind::kTensor) &&
              type.dims().size() == 2 && type.dims()[1] == 2 && type.HasStaticShape() &&
              type.element().Is(TypeKind::kElement) &&
              type.element().element_type() == ElementType::kS64 &&
              (padding->splat
                   ? padding->data.size() == 8
                   : padding->data.size() == static_cast<size_t>(type.NumElements()) * 8);
    if (!ok) return false;
  }
  struct WindowField {
    std::string_view attribute, keyword;
  };
  constexpr WindowField kFields[] = {{"window_strides", "stride"},
                                     {"padding", "pad"},
                                     {"lhs_dilation", "lhs_dilate"},
                                     {"rhs_dilation", "rhs_dilate"},
                                     {"window_reversal", "reverse"}};
  for (const WindowField& field : kFields) {
    Attribute value = op.GetAttr(field.attribute);
    if (!value || field.attribute == "padding") continue;
    bool ok = field.attribute == "window_reversal" ? AsBoolArray(value) != nullptr
                                                   : AsI64Array(value) != nullptr;
    if (!ok) return false;
  }
  w.Name(op);
  w.out() += '(';
  w.Values(op.operands());
  w.out() += ") dim_numbers = ";
  w.out() += dims;
  w.out() += ", window = {";
  bool first = true;
  for (const WindowField& field : kFields) {
    Attribute value = op.GetAttr(field.attribute);
    if (!value) continue;
    if (!first) w.out() += ", ";
    first = false;
    w.out() += field.keyword;
    w.out() += " = [";
    if (field.attribute == "padding") {
      int64_t rows = padding->type.dims()[0];
      for (int64_t r = 0; r < rows; ++r) {
        int64_t pair[2];
        for (int c = 0; c < 2; ++c) {
          size_t offset = padding->splat ? 0 : static_cast<size_t>(r * 2 + c) * 8;
          std::memcpy(&pair[c], padding->data.data() + offset, 8);
        }
        if (r > 0) w.out() += ", ";
        w.out() += "[" + std::to_string(pair[0]) + ", " + std::to_string(pair[1]) + "]";
      }
    } else if (field.attribute == "window_reversal") {
      const std::vector<int64_t>& flags = *AsBoolArray(value);
      for (size_t i = 0; i < flags.size(); ++i) {
        if (i > 0) w.out() += ", ";
        w.out() += flags[i] != 0 ? "true" : "false";
      }
    } else {
      const std::vector<int64_t>& list = *AsI64Array(value);
      for (size_t i = 0; i < list.size(); ++i) {
        if (i > 0) w.out() += ", ";
        w.out() += std::to_string(list[i]);
      }
    }
    w.out() += ']';
  }
  w.out() += '}';
  AttrDictWithout(w, op,
                  {"dimension_numbers", "window_strides", "padding", "lhs_dilation", "rhs_dilation",
                   "window_reversal"});
  Functional(w, op);
  return true;
}

bool WriteCustomCall(const Operation& op, OpWriter& w) {
  Attribute target = op.GetAttr("call_target_name");
  if (!target.Is(AttrKind::kString) || op.num_regions() != 0) return false;
  std::vector<std::string_view> elided = {"call_target_name"};
  Attribute side_effect = op.GetAttr("has_side_effect");
  if (side_effect.Is(AttrKind::kBool) && !side_effect->bool_value)
    elided.push_back("has_side_effect");
  Attribute api = op.GetAttr("api_version");
  if (IsInteger(api) && api->int_value == 1) elided.push_back("api_version");
  for (std::string_view list : {"called_computations", "output_operand_aliases"}) {
    Attribute value = op.GetAttr(list);
    if (value.Is(AttrKind::kArray) && value->elements.empty()) elided.push_back(list);
  }
  w.Name(op);
  w.out() += ' ';
  AppendSymbol(w.out(), target->text);
  w.out() += '(';
  w.Values(op.operands());
  w.out() += ')';
  w.AttrDict(op, elided);
  Functional(w, op);
  return true;
}

// `, precision = [DEFAULT, HIGH]`; false when the attribute is malformed.
bool AppendPrecision(std::string& out, const Attribute& precision) {
  if (!precision) return true;
  if (!precision.Is(AttrKind::kArray)) return false;
  std::string text = ", precision = [";
  for (size_t i = 0; i < precision->elements.size(); ++i) {
    const Attribute& element = precision->elements[i];
    if (!IsEnum(element)) return false;
    if (i > 0) text += ", ";
    text += element->enum_value;
  }
  out += text + "]";
  return true;
}

bool WriteDot(const Operation& op, OpWriter& w) {
  if (op.operands().size() != 2 || op.num_results() != 1) return false;
  std::string precision;
  if (!AppendPrecision(precision, op.GetAttr("precision_config"))) return false;
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  w.out() += precision;
  AttrDictWithout(w, op, {"precision_config"});
  Functional(w, op);
  return true;
}

bool WriteDotGeneral(const Operation& op, OpWriter& w) {
  Attribute numbers = op.GetAttr("dot_dimension_numbers");
  Attribute algorithm = op.GetAttr("algorithm");
  if (!numbers.Is(AttrKind::kStruct) || numbers->text != "stablehlo.dot" ||
      op.operands().size() != 2 || op.num_results() != 1 ||
      (algorithm &&
       (!algorithm.Is(AttrKind::kStruct) || algorithm->text != "stablehlo.dot_algorithm"))) {
    return false;
  }
  for (const NamedAttribute& field : numbers->fields) {
    if (field.name != "lhs_batching_dimensions" && field.name != "rhs_batching_dimensions" &&
        field.name != "lhs_contracting_dimensions" && field.name != "rhs_contracting_dimensions") {
      return false;
    }
  }
  static const std::vector<int64_t> kEmpty;
  auto dims = [&](std::string_view name) -> const std::vector<int64_t>* {
    Attribute field = numbers.Get(name);
    if (!field) return &kEmpty;
    return AsI64Array(field);
  };
  const std::vector<int64_t>* lhs_batch = dims("lhs_batching_dimensions");
  const std::vector<int64_t>* rhs_batch = dims("rhs_batching_dimensions");
  const std::vector<int64_t>* lhs_contract = dims("lhs_contracting_dimensions");
  const std::vector<int64_t>* rhs_contract = dims("rhs_contracting_dimensions");
  if (!lhs_batch || !rhs_batch || !lhs_contract || !rhs_contract) return false;
  std::string precision;
  if (!AppendPrecision(precision, op.GetAttr("precision_config"))) return false;
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  w.out() += ", ";
  if (!lhs_batch->empty() || !rhs_batch->empty()) {
    w.out() += "batching_dims = ";
    AppendDims(w.out(), *lhs_batch);
    w.out() += " x ";
    AppendDims(w.out(), *rhs_batch);
    w.out() += ", ";
  }
  w.out() += "contracting_dims = ";
  AppendDims(w.out(), *lhs_contract);
  w.out() += " x ";
  AppendDims(w.out(), *rhs_contract);
  w.out() += precision;
  if (algorithm) {
    w.out() += ", algorithm = ";
    AppendStructBody(w.out(), algorithm);
  }
  AttrDictWithout(w, op, {"dot_dimension_numbers", "precision_config", "algorithm"});
  Functional(w, op);
  return true;
}

bool WriteEinsum(const Operation& op, OpWriter& w) {
  Attribute config = op.GetAttr("einsum_config");
  if (!config.Is(AttrKind::kString) || op.operands().empty() || op.num_results() != 1) return false;
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  w.out() += ", config = ";
  AppendQuoted(w.out(), config->text);
  AttrDictWithout(w, op, {"einsum_config"});
  Functional(w, op);
  return true;
}

bool WriteFft(const Operation& op, OpWriter& w) {
  Attribute type = op.GetAttr("fft_type");
  const std::vector<int64_t>* length = AsI64Array(op.GetAttr("fft_length"));
  if (!IsEnum(type) || length == nullptr || op.operands().size() != 1 || op.num_results() != 1) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  w.Value(op.operand(0));
  w.out() += ", type = ";
  w.out() += type->enum_value;
  w.out() += ", length = ";
  AppendDims(w.out(), *length);
  AttrDictWithout(w, op, {"fft_type", "fft_length"});
  Functional(w, op);
  return true;
}

bool WritePad(const Operation& op, OpWriter& w) {
  const std::vector<int64_t>* low = AsI64Array(op.GetAttr("edge_padding_low"));
  const std::vector<int64_t>* high = AsI64Array(op.GetAttr("edge_padding_high"));
  const std::vector<int64_t>* interior = AsI64Array(op.GetAttr("interior_padding"));
  if (!low || !high || !interior || op.operands().size() != 2 || op.num_results() != 1)
    return false;
  w.Name(op);
  w.out() += ' ';
  w.Values(op.operands());
  w.out() += ", low = ";
  AppendDims(w.out(), *low);
  w.out() += ", high = ";
  AppendDims(w.out(), *high);
  w.out() += ", interior = ";
  AppendDims(w.out(), *interior);
  AttrDictWithout(w, op, {"edge_padding_low", "edge_padding_high", "interior_padding"});
  Functional(w, op);
  return true;
}

bool WriteReturn(const Operation& op, OpWriter& w, bool attributes_first) {
  if (op.num_results() != 0 || op.num_regions() != 0) return false;
  w.Name(op);
  if (attributes_first) AttrDictWithout(w, op, {});
  if (!op.operands().empty()) {
    w.out() += ' ';
    w.Values(op.operands());
  }
  if (!attributes_first) AttrDictWithout(w, op, {});
  if (!op.operands().empty()) {
    w.out() += " : ";
    w.OperandTypes(op);
  }
  return true;
}

bool WriteOptimizationBarrier(const Operation& op, OpWriter& w) {
  if (op.num_results() != op.operands().size()) return false;
  for (size_t i = 0; i < op.num_results(); ++i) {
    if (op.result(i)->type() != OperandType(op, i)) return false;
  }
  w.Name(op);
  AttrDictWithout(w, op, {});
  if (op.operands().empty()) {
    w.out() += " ()";
    return true;
  }
  w.out() += ' ';
  w.Values(op.operands());
  w.out() += " : ";
  w.OperandTypes(op);
  return true;
}

bool WriteEnumKeyword(const Operation& op, OpWriter& w, std::string_view keyword,
                      std::string_view attribute) {
  Attribute value = op.GetAttr(attribute);
  if (!IsEnum(value) || op.operands().empty()) return false;
  w.Name(op);
  w.out() += ' ';
  for (Value* operand : op.operands()) {
    w.Value(operand);
    w.out() += ", ";
  }
  w.out() += keyword;
  w.out() += " = ";
  w.out() += value->enum_value;
  w.AttrDict(op, std::array{attribute});
  Functional(w, op);
  return true;
}

bool WriteReducePrecision(const Operation& op, OpWriter& w) {
  Attribute exponent = op.GetAttr("exponent_bits");
  Attribute mantissa = op.GetAttr("mantissa_bits");
  auto small = [](const Attribute& a) {
    return IsInteger(a) && a->int_value >= 0 && a->int_value < 100000000;
  };
  if (!small(exponent) || !small(mantissa) || op.operands().size() != 1 || op.num_results() != 1) {
    return false;
  }
  w.Name(op);
  w.out() += ' ';
  w.Value(op.operand(0));
  w.out() += ", format = e";
  IntValue(w, exponent);
  w.out() += 'm';
  IntValue(w, mantissa);
  AttrDictWithout(w, op, {"exponent_bits", "mantissa_bits"});
  SameType(w, op);
  return true;
}

bool WriteConstant(const Operation& op, OpWriter& w) {
  Attribute value = op.GetAttr("value");
  if (!value.Is(AttrKind::kDenseElements) || op.num_results() != 1 || !op.operands().empty() ||
      value->type != op.result(0)->type()) {
    return false;
  }
  w.Name(op);
  AttrDictWithout(w, op, {"value"});
  w.out() += ' ';
  AppendAttribute(w.out(), value);
  return true;
}

}  // namespace

bool WriteRegionOp(const Operation& op, OpWriter& w);  // printer_region_ops.cc

bool WritePrettyOp(const Operation& op, OpWriter& w) {
  using F = PrettyForm;
  bool written = false;
  switch (GetPrettyForm(op.name())) {
    case F::kNone: return false;
    case F::kSameType: written = WriteSameType(op, w); break;
    case F::kComplex: written = WriteComplex(op, w); break;
    case F::kSelect: written = WriteSelect(op, w); break;
    case F::kFunctional: written = WriteFunctional(op, w); break;
    case F::kNullary: written = WriteNullary(op, w); break;
    case F::kIota: written = WriteIota(op, w); break;
    case F::kDynamicIota:
      written = WriteOperandsAndInteger(op, w, "dim", "iota_dimension", false);
      break;
    case F::kGetTupleElement: written = WriteGetTupleElement(op, w); break;
    case F::kTuple: written = WriteTuple(op, w); break;
    case F::kCompare: written = WriteCompare(op, w); break;
    case F::kSlice: written = WriteSlice(op, w); break;
    case F::kDynamicSlice: written = WriteDynamicSlice(op, w); break;
    case F::kBroadcast:
      written = WriteOperandsAndDims(op, w, "sizes", "broadcast_sizes", false);
      break;
    case F::kBroadcastInDim:
    case F::kDynamicBroadcastInDim:
      written = WriteOperandsAndDims(op, w, "dims", "broadcast_dimensions", false);
      break;
    case F::kCholesky: written = WriteCholesky(op, w); break;
    case F::kConcatenate: written = WriteConcatenate(op, w); break;
    case F::kComposite: written = WriteComposite(op, w); break;
    case F::kConvolution: written = WriteConvolution(op, w); break;
    case F::kCustomCall: written = WriteCustomCall(op, w); break;
    case F::kDot: written = WriteDot(op, w); break;
    case F::kDotGeneral: written = WriteDotGeneral(op, w); break;
    case F::kEinsum:
    case F::kUnaryEinsum: written = WriteEinsum(op, w); break;
    case F::kFft: written = WriteFft(op, w); break;
    case F::kGetDimensionSize:
    case F::kSetDimensionSize:
      written = WriteOperandsAndInteger(op, w, "dim", "dimension", false);
      break;
    case F::kReverse: written = WriteOperandsAndDims(op, w, "dims", "dimensions", true); break;
    case F::kPad: written = WritePad(op, w); break;
    case F::kTranspose: written = WriteOperandsAndDims(op, w, "dims", "permutation", false); break;
    case F::kReturn: written = WriteReturn(op, w, false); break;
    case F::kFuncReturn: written = WriteReturn(op, w, true); break;
    case F::kOptimizationBarrier: written = WriteOptimizationBarrier(op, w); break;
    case F::kRng: written = WriteEnumKeyword(op, w, "distribution", "rng_distribution"); break;
    case F::kRngBitGenerator:
      written = WriteEnumKeyword(op, w, "algorithm", "rng_algorithm");
      break;
    case F::kReducePrecision: written = WriteReducePrecision(op, w); break;
    case F::kConstant:
    case F::kChloConstant: written = WriteConstant(op, w); break;
    default: written = WriteRegionOp(op, w); break;
  }
  if (!written) w.Reset();
  return written;
}

}  // namespace kiln::ir::print_internal
