// Type, shape and attribute helpers shared by the verifier's op families.
#include <algorithm>
#include <cstring>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// Dense tensors larger than this are not read as integer lists: no op takes
// dimension numbers that long, and a splat could claim any size.
constexpr int64_t kMaxIntListSize = int64_t{1} << 24;

bool IsIntegerLike(const Type& element) {
  return (ClassOf(element) & (kBoolClass | kIntegerClasses | kIndexClass)) != 0;
}

bool IsUnsigned(const Type& element) { return ClassOf(element) & (kUnsignedClass | kBoolClass); }

std::string ElementText(const Type& element) {
  if (HasKind(element, TypeKind::kElement)) {
    std::string_view name = GetElementTypeInfo(element.element_type()).name;
    if (element.element_type() == ElementType::kToken) return "!stablehlo.token";
    // Kiln names signed types "siN" (the spec); MLIR prints them "iN".
    if (name.size() > 2 && name[0] == 's' && name[1] == 'i') name.remove_prefix(1);
    return std::string(name);
  }
  if (HasKind(element, TypeKind::kQuantized)) {
    const QuantizedParams& params = GetQuantizedParams(element);
    std::string text = StrCat("!quant.uniform<", ElementText(Type::Element(params.storage_type)),
                              ":", ElementText(Type::Element(params.expressed_type)));
    if (params.quantized_dimension) text += StrCat(":", *params.quantized_dimension);
    return text + ">";
  }
  return TypeText(element);
}

std::string AttrDescription(const Attribute& attribute) {
  switch (attribute.kind()) {
    case AttrKind::kUnit: return "a unit attribute";
    case AttrKind::kBool: return "a boolean";
    case AttrKind::kInteger: return "an integer";
    case AttrKind::kFloat: return "a float";
    case AttrKind::kString: return "a string";
    case AttrKind::kType: return "a type";
    case AttrKind::kArray: return "an array";
    case AttrKind::kDenseArray: return "a dense array";
    case AttrKind::kDenseElements: return StrCat("dense elements of ", TypeText(attribute->type));
    case AttrKind::kDictionary: return "a dictionary";
    case AttrKind::kSymbolRef: return "a symbol reference";
    case AttrKind::kEnum: return StrCat("#", attribute->text, "<", attribute->enum_value, ">");
    case AttrKind::kStruct: return StrCat("#", attribute->text, "<...>");
    case AttrKind::kOpaque: return StrCat("opaque attribute ", attribute->text);
  }
  return "an attribute";
}

}  // namespace

uint16_t ClassOf(const Type& element) {
  if (HasKind(element, TypeKind::kQuantized)) {
    return GetQuantizedParams(element).quantized_dimension ? kPerAxisQuantClass
                                                           : kPerTensorQuantClass;
  }
  if (!HasKind(element, TypeKind::kElement)) return 0;
  const ElementType type = element.element_type();
  if (type == ElementType::kPred) return kBoolClass;
  if (type >= ElementType::kS1 && type <= ElementType::kS64) return kSignedClass;
  if (type >= ElementType::kU1 && type <= ElementType::kU64) return kUnsignedClass;
  if (type == ElementType::kC64 || type == ElementType::kC128) return kComplexClass;
  if (type == ElementType::kIndex) return kIndexClass;
  if (type == ElementType::kToken) return 0;
  return kFloatClass;  // f16 .. f64, the f8/f6/f4 types, tf32
}

std::string ClassesText(uint16_t mask) {
  std::vector<std::string_view> names;
  if (mask & kBoolClass) names.push_back("boolean");
  if ((mask & kIntegerClasses) == kIntegerClasses) {
    names.push_back("integer");
  } else if (mask & kSignedClass) {
    names.push_back("signed integer");
  } else if (mask & kUnsignedClass) {
    names.push_back("unsigned integer");
  }
  if (mask & kFloatClass) names.push_back("floating-point");
  if (mask & kComplexClass) names.push_back("complex");
  if ((mask & kQuantClasses) == kQuantClasses) {
    names.push_back("quantized");
  } else if (mask & kPerTensorQuantClass) {
    names.push_back("per-tensor quantized");
  } else if (mask & kPerAxisQuantClass) {
    names.push_back("per-axis quantized");
  }
  if (mask & kIndexClass) names.push_back("index");
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += i + 1 == names.size() ? " or " : ", ";
    text += names[i];
  }
  return text;
}

bool ShapesCompatible(std::span<const int64_t> a, std::span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!DimsCompatible(a[i], b[i])) return false;
  }
  return true;
}

bool SameElement(const Type& a, const Type& b) {
  if (HasKind(a, TypeKind::kQuantized) && HasKind(b, TypeKind::kQuantized)) {
    const QuantizedParams& x = GetQuantizedParams(a);
    const QuantizedParams& y = GetQuantizedParams(b);
    return x.storage_type == y.storage_type && x.expressed_type == y.expressed_type &&
           x.is_signed == y.is_signed && x.storage_min == y.storage_min &&
           x.storage_max == y.storage_max &&
           x.quantized_dimension.has_value() == y.quantized_dimension.has_value();
  }
  return a == b;
}

bool TypesCompatible(const Type& a, const Type& b) {
  if (&a.storage() == &b.storage()) return true;  // readers share equal types
  const bool a_tensor = HasKind(a, TypeKind::kTensor) || HasKind(a, TypeKind::kUnrankedTensor);
  const bool b_tensor = HasKind(b, TypeKind::kTensor) || HasKind(b, TypeKind::kUnrankedTensor);
  if (a_tensor != b_tensor) return false;
  if (!a_tensor) return a == b;
  if (!SameElement(ElementOf(a), ElementOf(b))) return false;
  if (!HasKind(a, TypeKind::kTensor) || !HasKind(b, TypeKind::kTensor)) return true;
  return ShapesCompatible(a.dims(), b.dims());
}

int BitWidth(const Type& element) {
  if (HasKind(element, TypeKind::kQuantized)) {
    return GetElementTypeInfo(GetQuantizedParams(element).storage_type).bit_width;
  }
  if (HasKind(element, TypeKind::kElement)) {
    return GetElementTypeInfo(element.element_type()).bit_width;
  }
  return 0;
}

bool IsPromotable(const Type& from, const Type& to, bool ignore_fp_precision) {
  const uint16_t a = ClassOf(from);
  const uint16_t b = ClassOf(to);
  if ((a & kQuantClasses) && (b & kQuantClasses)) {
    return GetQuantizedParams(from).expressed_type == GetQuantizedParams(to).expressed_type &&
           BitWidth(from) <= BitWidth(to);
  }
  const bool same_kind = (a == kBoolClass && b == kBoolClass) ||
                         ((a & kIntegerClasses) && (b & kIntegerClasses)) ||
                         (a == kFloatClass && b == kFloatClass) ||
                         (a == kComplexClass && b == kComplexClass);
  if (!same_kind) return false;
  if (a == kFloatClass && ignore_fp_precision) return true;
  return BitWidth(from) <= BitWidth(to);
}

Type RealPart(const Type& element) {
  if (HasKind(element, TypeKind::kElement)) {
    if (element.element_type() == ElementType::kC64) return Type::Element(ElementType::kF32);
    if (element.element_type() == ElementType::kC128) return Type::Element(ElementType::kF64);
  }
  return element;
}

Type ComplexOf(const Type& element) {
  if (HasKind(element, TypeKind::kElement)) {
    if (element.element_type() == ElementType::kF32) return Type::Element(ElementType::kC64);
    if (element.element_type() == ElementType::kF64) return Type::Element(ElementType::kC128);
  }
  return Type();
}

std::string DimText(int64_t dim) { return dim == kDynamic ? "?" : std::to_string(dim); }

std::string DimsText(std::span<const int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ", ";
    text += DimText(dims[i]);
  }
  return text + "]";
}

std::string TypeText(const Type& type) {
  if (!type) return "<no type>";
  switch (type.kind()) {
    case TypeKind::kElement:
    case TypeKind::kQuantized: return ElementText(type);
    case TypeKind::kTensor: {
      std::string text = "tensor<";
      for (int64_t dim : type.dims()) text += DimText(dim) + "x";
      return text + (ElementOf(type) ? ElementText(ElementOf(type)) : "?") + ">";
    }
    case TypeKind::kUnrankedTensor:
      return StrCat("tensor<*x", ElementOf(type) ? ElementText(ElementOf(type)) : "?", ">");
    case TypeKind::kToken: return "!stablehlo.token";
    case TypeKind::kTuple: {
      std::string members = TypesText(type.members());  // "(a, b)"
      return StrCat("tuple<", members.substr(1, members.size() - 2), ">");
    }
    case TypeKind::kFunction: {
      std::string results = TypesText(type.results());
      if (type.results().size() == 1) results = TypeText(type.results()[0]);
      return StrCat(TypesText(type.members()), " -> ", results);
    }
    case TypeKind::kNone: return "none";
    case TypeKind::kOpaque: return type.text();
  }
  return "<type>";
}

std::string TypesText(std::span<const Type> types) {
  std::string text = "(";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) text += ", ";
    text += TypeText(types[i]);
  }
  return text + ")";
}

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) return std::nullopt;
  return sum;
}

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) return std::nullopt;
  return product;
}

std::optional<int64_t> ElementCount(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    std::optional<int64_t> next = CheckedMul(count, dim);
    if (!next || dim < 0) return std::nullopt;
    count = *next;
  }
  return count;
}

std::optional<int64_t> NumWindows(int64_t base, const WindowDim& window) {
  if (base == kDynamic || window.size == kDynamic) return kDynamic;
  // dilated = size == 0 ? 0 : (size - 1) * dilation + 1
  auto dilate = [](int64_t size, int64_t dilation) -> std::optional<int64_t> {
    if (size == 0) return 0;
    std::optional<int64_t> scaled = CheckedMul(size - 1, dilation);
    return scaled ? CheckedAdd(*scaled, 1) : std::nullopt;
  };
  std::optional<int64_t> dilated_base = dilate(base, window.base_dilation);
  std::optional<int64_t> dilated_window = dilate(window.size, window.window_dilation);
  if (!dilated_base || !dilated_window) return std::nullopt;
  std::optional<int64_t> padded = CheckedAdd(window.padding_low, *dilated_base);
  if (padded) padded = CheckedAdd(*padded, window.padding_high);
  if (!padded || *padded < 0) return std::nullopt;
  if (*padded == 0 || *dilated_window > *padded) return 0;
  return (*padded - *dilated_window) / window.stride + 1;
}

std::optional<IntList> ReadInts(const Attribute& attribute) {
  IntList list;
  list.present = true;
  list.rank = 1;
  switch (attribute.kind()) {
    case AttrKind::kDenseArray:
      if (!attribute->float_values.empty() && attribute->int_values.empty()) return std::nullopt;
      list.values = attribute->int_values;
      break;
    case AttrKind::kArray:
      for (const Attribute& element : attribute->elements) {
        if (!element.Is(AttrKind::kInteger)) return std::nullopt;
        list.storage.push_back(element->int_value);
      }
      list.values = list.storage;
      break;
    case AttrKind::kDenseElements: {
      const Type& type = attribute->type;
      if (!IsRankedTensor(type) || !IsIntegerLike(ElementOf(type))) return std::nullopt;
      if (type.dims().size() > list.shape_dims.size()) return std::nullopt;
      std::optional<int64_t> count = ElementCount(type.dims());
      if (!count || *count > kMaxIntListSize) return std::nullopt;
      const size_t bytes = GetElementTypeInfo(ElementOf(type).element_type()).storage_bytes;
      const size_t needed = attribute->splat ? bytes : bytes * static_cast<size_t>(*count);
      if (bytes == 0 || bytes > 8 || attribute->data.size() < needed) return std::nullopt;
      const bool is_unsigned = IsUnsigned(ElementOf(type));
      list.storage.reserve(static_cast<size_t>(*count));
      for (int64_t i = 0; i < *count; ++i) {
        const size_t offset = attribute->splat ? 0 : static_cast<size_t>(i) * bytes;
        const uint8_t* data = &attribute->data[offset];
        uint64_t bits = 0;
        std::memcpy(&bits, data, bytes);
        const unsigned width = static_cast<unsigned>(bytes * 8);
        if (width < 64 && !is_unsigned && ((bits >> (width - 1)) & 1)) {
          bits |= ~uint64_t{0} << width;  // sign-extend
        }
        list.storage.push_back(static_cast<int64_t>(bits));
      }
      list.values = list.storage;
      list.rank = type.dims().size();
      std::copy(type.dims().begin(), type.dims().end(), list.shape_dims.begin());
      return list;
    }
    default: return std::nullopt;
  }
  list.shape_dims[0] = static_cast<int64_t>(list.values.size());
  return list;
}

// ---------------------------------------------------------------------------
// OpContext

std::vector<Type> OpContext::OperandTypes(size_t begin, size_t end) const {
  std::vector<Type> types;
  end = std::min(end, num_operands());
  for (size_t i = begin; i < end; ++i) types.push_back(operand(i));
  return types;
}

std::vector<Type> OpContext::ResultTypes() const {
  std::vector<Type> types;
  for (size_t i = 0; i < num_results(); ++i) types.push_back(result(i));
  return types;
}

std::string OpContext::Prefix(std::string_view constraint) const {
  std::string text = StrCat(op_.location().ToUserString(), ": ", op_.name());
  if (op_.code() == OpCode::kFuncFunc) {
    Attribute name = op_.GetAttr("sym_name");
    if (name.Is(AttrKind::kString)) text += StrCat(" @", name->text);
  }
  if (!constraint.empty()) text += StrCat(" (", constraint, ")");
  return text + ": ";
}

const Attribute* OpContext::Find(std::string_view name) const {
  const std::vector<NamedAttribute>& attributes = op_.attributes();
  auto it = std::lower_bound(attributes.begin(), attributes.end(), name,
                             [](const NamedAttribute& a, std::string_view key) {
                               return a.name < key;
                             });
  return it != attributes.end() && it->name == name ? &it->value : nullptr;
}

StatusOr<int64_t> OpContext::Int(std::string_view name) const {
  const Attribute* value = Find(name);
  if (value == nullptr) return Fail("", "missing attribute '", name, "' (an integer)");
  if (!value->Is(AttrKind::kInteger)) {
    return Fail("", "attribute '", name, "' must be an integer, found ", AttrDescription(*value));
  }
  return (*value)->int_value;
}

StatusOr<int64_t> OpContext::IntOr(std::string_view name, int64_t fallback) const {
  if (Find(name) == nullptr) return fallback;
  return Int(name);
}

StatusOr<IntList> OpContext::Ints(std::string_view name) const {
  const Attribute* value = Find(name);
  if (value == nullptr) return Fail("", "missing attribute '", name, "' (a list of integers)");
  std::optional<IntList> list = ReadInts(*value);
  if (!list) {
    return Fail("", "attribute '", name, "' must be a list of integers, found ",
                AttrDescription(*value));
  }
  return std::move(*list);
}

StatusOr<IntList> OpContext::IntsOr(std::string_view name) const {
  if (Find(name) == nullptr) return IntList{};
  return Ints(name);
}

StatusOr<bool> OpContext::BoolOr(std::string_view name, bool fallback) const {
  const Attribute* value = Find(name);
  if (value == nullptr) return fallback;
  if (value->Is(AttrKind::kUnit)) return true;
  if (!value->Is(AttrKind::kBool)) {
    return Fail("", "attribute '", name, "' must be a boolean, found ", AttrDescription(*value));
  }
  return (*value)->bool_value;
}

StatusOr<std::string_view> OpContext::Enum(std::string_view name) const {
  const Attribute* value = Find(name);
  if (value == nullptr) return Fail("", "missing attribute '", name, "'");
  if (!value->Is(AttrKind::kEnum)) {
    return Fail("", "attribute '", name, "' must be an enum, found ", AttrDescription(*value));
  }
  return std::string_view((*value)->enum_value);
}

StatusOr<std::string_view> OpContext::EnumOr(std::string_view name,
                                             std::string_view fallback) const {
  if (Find(name) == nullptr) return fallback;
  return Enum(name);
}

StatusOr<std::string_view> OpContext::String(std::string_view name) const {
  const Attribute* value = Find(name);
  if (value == nullptr) return Fail("", "missing attribute '", name, "' (a string)");
  if (!value->Is(AttrKind::kString)) {
    return Fail("", "attribute '", name, "' must be a string, found ", AttrDescription(*value));
  }
  return std::string_view((*value)->text);
}

StatusOr<Attribute> OpContext::Struct(std::string_view name, std::string_view struct_name) const {
  Attribute value = op_.GetAttr(name);
  if (!value) return Fail("", "missing attribute '", name, "' (#", struct_name, "<...>)");
  if (!value.Is(AttrKind::kStruct) || value->text != struct_name) {
    return Fail("", "attribute '", name, "' must be #", struct_name, "<...>, found ",
                AttrDescription(value));
  }
  return value;
}

StatusOr<IntList> OpContext::FieldInts(const Attribute& record, std::string_view field) const {
  Attribute value = record.Get(field);
  if (!value) return IntList{};
  std::optional<IntList> list = ReadInts(value);
  if (!list) {
    return Fail("", "field '", field, "' of #", record->text, " must be a list of integers, found ",
                AttrDescription(value));
  }
  return std::move(*list);
}

StatusOr<int64_t> OpContext::FieldInt(const Attribute& record, std::string_view field,
                                      int64_t fallback) const {
  Attribute value = record.Get(field);
  if (!value) return fallback;
  if (!value.Is(AttrKind::kInteger)) {
    return Fail("", "field '", field, "' of #", record->text, " must be an integer, found ",
                AttrDescription(value));
  }
  return value->int_value;
}

StatusOr<int64_t> OpContext::FieldInt(const Attribute& record, std::string_view field) const {
  if (!record.Get(field)) {
    return Fail("", "#", record->text, " lacks field '", field, "' (an integer)");
  }
  return FieldInt(record, field, 0);
}

const Operation* OpContext::LookupFunction(std::string_view name) const {
  auto it = symbols_.find(name);
  return it == symbols_.end() ? nullptr : it->second;
}

Status OpContext::ExpectClasses(std::string_view constraint, std::string_view what,
                                const Type& type, uint16_t classes) const {
  if (IsRankedTensor(type) && (ClassOf(ElementOf(type)) & classes)) return Status::Ok();
  return Fail(constraint, what, " must be a tensor of ", ClassesText(classes), " elements, found ",
              TypeText(type));
}

Status OpContext::ExpectScalar(std::string_view constraint, std::string_view what,
                               const Type& type) const {
  if (IsRankedTensor(type) && Rank(type) == 0) return Status::Ok();
  return Fail(constraint, what, " must be a rank-0 tensor, found ", TypeText(type));
}

Status OpContext::ExpectDimsInRange(std::string_view range_constraint,
                                    std::string_view unique_constraint, std::string_view what,
                                    std::span<const int64_t> dims, int64_t rank) const {
  std::vector<bool> seen(static_cast<size_t>(std::max<int64_t>(rank, 0)));
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= rank) {
      return Fail(range_constraint, what, " contains dimension ", dim, ", expected one in [0, ",
                  rank, ")");
    }
    if (seen[static_cast<size_t>(dim)]) {
      return Fail(unique_constraint, what, " contains dimension ", dim, " more than once");
    }
    seen[static_cast<size_t>(dim)] = true;
  }
  return Status::Ok();
}

Status OpContext::ExpectResultShape(std::string_view constraint, size_t index,
                                    std::span<const int64_t> expected) const {
  const Type& type = result(index);
  if (ShapesCompatible(type.dims(), expected)) return Status::Ok();
  return Fail(constraint, num_results() == 1 ? "result" : StrCat("result #", index),
              " must have shape ", DimsText(expected), ", found ", TypeText(type));
}

// ---------------------------------------------------------------------------
// Dimension lists

Status ExpectSortedUnique(const OpContext& context, std::string_view constraint,
                          std::string_view what, std::span<const int64_t> dims) {
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i - 1] >= dims[i]) {
      return context.Fail(constraint, what, " ", DimsText(dims),
                          " must be sorted and without repeats");
    }
  }
  return Status::Ok();
}

Status ExpectSorted(const OpContext& context, std::string_view constraint, std::string_view what,
                    std::span<const int64_t> dims) {
  if (std::is_sorted(dims.begin(), dims.end())) return Status::Ok();
  return context.Fail(constraint, what, " ", DimsText(dims), " must be sorted");
}

Status ExpectInRange(const OpContext& context, std::string_view constraint, std::string_view what,
                     std::span<const int64_t> dims, int64_t bound, std::string_view bound_name) {
  for (int64_t dim : dims) {
    if (dim < 0 || dim >= bound) {
      return context.Fail(constraint, what, " contains ", dim, ", expected values in [0, ", bound,
                          ") (", bound_name, ")");
    }
  }
  return Status::Ok();
}

// No value appears twice in `a` ++ `b`.
Status ExpectDistinct(const OpContext& context, std::string_view constraint,
                      std::string_view a_name, std::span<const int64_t> a, std::string_view b_name,
                      std::span<const int64_t> b) {
  std::vector<int64_t> all(a.begin(), a.end());
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  auto repeat = std::adjacent_find(all.begin(), all.end());
  if (repeat == all.end()) return Status::Ok();
  return context.Fail(constraint, "dimension ", *repeat, " appears more than once in ", a_name,
                      b_name.empty() ? "" : StrCat(" and ", b_name));
}

// A window attribute with one positive entry per spatial dimension, or
// all ones when absent.
StatusOr<std::vector<int64_t>> WindowList(const OpContext& context, std::string_view name,
                                          std::string_view size_constraint,
                                          std::string_view positive_constraint, int64_t count) {
  KILN_ASSIGN_OR_RETURN(IntList list, context.IntsOr(name));
  if (!list.present) return std::vector<int64_t>(static_cast<size_t>(count), 1);
  if (static_cast<int64_t>(list.size()) != count) {
    return context.Fail(size_constraint, name, " has ", list.size(), " entries, expected ", count);
  }
  for (int64_t value : list) {
    if (value <= 0 && !positive_constraint.empty()) {
      return context.Fail(positive_constraint, name, " must be > 0, found ", value);
    }
  }
  return list.ToVector();
}

// padding: an [count, 2] list of (low, high) pairs, zeros when absent.
StatusOr<std::vector<int64_t>> PaddingList(const OpContext& context, std::string_view constraint,
                                           int64_t count) {
  KILN_ASSIGN_OR_RETURN(IntList padding, context.IntsOr("padding"));
  if (!padding.present) return std::vector<int64_t>(static_cast<size_t>(count * 2), 0);
  const bool shape_ok = padding.rank == 2
                            ? padding.shape_dims[0] == count && padding.shape_dims[1] == 2
                            : static_cast<int64_t>(padding.size()) == count * 2;
  if (!shape_ok) {
    return context.Fail(constraint, "padding must have shape [", count, ", 2], found ",
                        DimsText(padding.shape()));
  }
  return padding.ToVector();
}

}  // namespace kiln::ir::verify_internal

namespace kiln::ir {

std::optional<std::vector<int64_t>> IntegersOf(const Attribute& attribute) {
  if (!attribute) return std::nullopt;
  std::optional<verify_internal::IntList> list = verify_internal::ReadInts(attribute);
  if (!list) return std::nullopt;
  return list->ToVector();
}

}  // namespace kiln::ir
