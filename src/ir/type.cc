#include "ir/type.h"

namespace kiln::ir {
namespace {

Type Make(TypeStorage storage) {
  return Type(std::make_shared<const TypeStorage>(std::move(storage)));
}

const std::vector<int64_t> kNoDims;
const std::vector<Type> kNoTypes;
const std::string kNoText;
const QuantizedParams kNoParams;

}  // namespace

Type Type::Element(ElementType element) {
  TypeStorage storage;
  storage.kind = TypeKind::kElement;
  storage.element_type = element;
  return Make(std::move(storage));
}

Type Type::Tensor(Type element, std::vector<int64_t> dims, std::vector<int64_t> bounds) {
  TypeStorage storage;
  storage.kind = TypeKind::kTensor;
  storage.element = std::move(element);
  storage.dims = std::move(dims);
  storage.bounds = std::move(bounds);
  return Make(std::move(storage));
}

Type Type::UnrankedTensor(Type element) {
  TypeStorage storage;
  storage.kind = TypeKind::kUnrankedTensor;
  storage.element = std::move(element);
  return Make(std::move(storage));
}

Type Type::Token() {
  TypeStorage storage;
  storage.kind = TypeKind::kToken;
  return Make(std::move(storage));
}

Type Type::Tuple(std::vector<Type> members) {
  TypeStorage storage;
  storage.kind = TypeKind::kTuple;
  storage.members = std::move(members);
  return Make(std::move(storage));
}

Type Type::Function(std::vector<Type> inputs, std::vector<Type> results) {
  TypeStorage storage;
  storage.kind = TypeKind::kFunction;
  storage.members = std::move(inputs);
  storage.results = std::move(results);
  return Make(std::move(storage));
}

Type Type::None() { return Make(TypeStorage{}); }

Type Type::Opaque(std::string text) {
  TypeStorage storage;
  storage.kind = TypeKind::kOpaque;
  storage.text = std::move(text);
  return Make(std::move(storage));
}

Type QuantizedType(QuantizedParams params) {
  TypeStorage storage;
  storage.kind = TypeKind::kQuantized;
  storage.element_type = params.storage_type;
  storage.quantized = std::move(params);
  return Make(std::move(storage));
}

const QuantizedParams& GetQuantizedParams(const Type& type) {
  return type.Is(TypeKind::kQuantized) ? type.storage().quantized : kNoParams;
}

TypeKind Type::kind() const { return storage_->kind; }
ElementType Type::element_type() const { return storage_->element_type; }
Type Type::element() const { return storage_->element; }
const std::vector<int64_t>& Type::dims() const { return storage_ ? storage_->dims : kNoDims; }
const std::vector<int64_t>& Type::bounds() const { return storage_ ? storage_->bounds : kNoDims; }
const std::vector<Type>& Type::members() const { return storage_ ? storage_->members : kNoTypes; }
const std::vector<Type>& Type::results() const { return storage_ ? storage_->results : kNoTypes; }
const std::string& Type::text() const { return storage_ ? storage_->text : kNoText; }

bool Type::HasStaticShape() const {
  if (!Is(TypeKind::kTensor)) return false;
  for (int64_t dim : storage_->dims) {
    if (dim == kDynamic) return false;
  }
  return true;
}

int64_t Type::NumElements() const {
  int64_t count = 1;
  for (int64_t dim : dims()) count *= dim;
  return count;
}

bool operator==(const Type& a, const Type& b) {
  if (a.storage_ == b.storage_) return true;
  if (!a.storage_ || !b.storage_) return false;
  const TypeStorage& x = *a.storage_;
  const TypeStorage& y = *b.storage_;
  if (x.kind != y.kind) return false;
  switch (x.kind) {
    case TypeKind::kElement: return x.element_type == y.element_type;
    case TypeKind::kQuantized: {
      const QuantizedParams& p = x.quantized;
      const QuantizedParams& q = y.quantized;
      return p.is_signed == q.is_signed && p.storage_type == q.storage_type &&
             p.expressed_type == q.expressed_type && p.storage_min == q.storage_min &&
             p.storage_max == q.storage_max && p.quantized_dimension == q.quantized_dimension &&
             p.scales == q.scales && p.zero_points == q.zero_points;
    }
    case TypeKind::kTensor:
      return x.element == y.element && x.dims == y.dims && x.bounds == y.bounds;
    case TypeKind::kUnrankedTensor: return x.element == y.element;
    case TypeKind::kTuple: return x.members == y.members;
    case TypeKind::kFunction: return x.members == y.members && x.results == y.results;
    case TypeKind::kOpaque: return x.text == y.text;
    case TypeKind::kToken:
    case TypeKind::kNone: return true;
  }
  return false;
}

}  // namespace kiln::ir
