#include "ir/attribute.h"

#include <algorithm>
#include <cstring>

#include "base/status.h"

namespace kiln::ir {
namespace {

Attribute Make(AttributeStorage storage) {
  return Attribute(std::make_shared<const AttributeStorage>(std::move(storage)));
}

Location MakeLocation(LocationStorage storage) {
  return Location(std::make_shared<const LocationStorage>(std::move(storage)));
}

}  // namespace

Attribute Attribute::Unit() { return Make(AttributeStorage{}); }

Attribute Attribute::Bool(bool value) {
  AttributeStorage storage;
  storage.kind = AttrKind::kBool;
  storage.bool_value = value;
  return Make(std::move(storage));
}

Attribute Attribute::Integer(int64_t value, Type type) {
  AttributeStorage storage;
  storage.kind = AttrKind::kInteger;
  storage.int_value = value;
  storage.type = std::move(type);
  return Make(std::move(storage));
}

Attribute Attribute::Float(double value, Type type) {
  AttributeStorage storage;
  storage.kind = AttrKind::kFloat;
  storage.float_value = value;
  storage.type = std::move(type);
  return Make(std::move(storage));
}

Attribute Attribute::String(std::string value) {
  AttributeStorage storage;
  storage.kind = AttrKind::kString;
  storage.text = std::move(value);
  return Make(std::move(storage));
}

Attribute Attribute::TypeAttr(Type type) {
  AttributeStorage storage;
  storage.kind = AttrKind::kType;
  storage.type = std::move(type);
  return Make(std::move(storage));
}

Attribute Attribute::Array(std::vector<Attribute> elements) {
  AttributeStorage storage;
  storage.kind = AttrKind::kArray;
  storage.elements = std::move(elements);
  return Make(std::move(storage));
}

Attribute Attribute::DenseArray(Type element, std::vector<int64_t> ints,
                                std::vector<double> floats) {
  AttributeStorage storage;
  storage.kind = AttrKind::kDenseArray;
  storage.type = std::move(element);
  storage.int_values = std::move(ints);
  storage.float_values = std::move(floats);
  return Make(std::move(storage));
}

Attribute Attribute::DenseI64Array(std::vector<int64_t> values) {
  return DenseArray(Type::Element(ElementType::kS64), std::move(values), {});
}

Attribute Attribute::DenseBoolArray(std::vector<bool> values) {
  return DenseArray(Type::Element(ElementType::kPred),
                    std::vector<int64_t>(values.begin(), values.end()), {});
}

Attribute Attribute::DenseElements(Type tensor_type, std::vector<uint8_t> data, bool splat) {
  AttributeStorage storage;
  storage.kind = AttrKind::kDenseElements;
  storage.type = std::move(tensor_type);
  storage.data = std::move(data);
  storage.splat = splat;
  return Make(std::move(storage));
}

Attribute Attribute::Dictionary(std::vector<NamedAttribute> fields) {
  std::stable_sort(fields.begin(), fields.end(),
                   [](const NamedAttribute& a, const NamedAttribute& b) {
                     return a.name < b.name;
                   });
  AttributeStorage storage;
  storage.kind = AttrKind::kDictionary;
  storage.fields = std::move(fields);
  return Make(std::move(storage));
}

Attribute Attribute::SymbolRef(std::vector<std::string> path) {
  AttributeStorage storage;
  storage.kind = AttrKind::kSymbolRef;
  storage.symbol_path = std::move(path);
  return Make(std::move(storage));
}

Attribute Attribute::Enum(std::string family, std::string value) {
  AttributeStorage storage;
  storage.kind = AttrKind::kEnum;
  storage.text = std::move(family);
  storage.enum_value = std::move(value);
  return Make(std::move(storage));
}

Attribute Attribute::Struct(std::string name, std::vector<NamedAttribute> fields) {
  AttributeStorage storage;
  storage.kind = AttrKind::kStruct;
  storage.text = std::move(name);
  storage.fields = std::move(fields);
  return Make(std::move(storage));
}

Attribute Attribute::Opaque(std::string text) {
  AttributeStorage storage;
  storage.kind = AttrKind::kOpaque;
  storage.text = std::move(text);
  return Make(std::move(storage));
}

Attribute Attribute::Get(std::string_view name) const {
  if (!storage_) return Attribute();
  for (const NamedAttribute& field : storage_->fields) {
    if (field.name == name) return field.value;
  }
  return Attribute();
}

bool operator==(const Attribute& a, const Attribute& b) {
  if (a.storage_ == b.storage_) return true;
  if (!a.storage_ || !b.storage_) return false;
  const AttributeStorage& x = *a.storage_;
  const AttributeStorage& y = *b.storage_;
  if (x.kind != y.kind || x.bool_value != y.bool_value || x.int_value != y.int_value ||
      x.text != y.text || x.enum_value != y.enum_value || x.type != y.type ||
      x.elements != y.elements || x.int_values != y.int_values || x.symbol_path != y.symbol_path ||
      x.data != y.data || x.splat != y.splat || x.fields.size() != y.fields.size()) {
    return false;
  }
  // Bitwise float comparison: NaN payloads and signed zeros are part of identity.
  auto same_bits = [](double p, double q) { return std::memcmp(&p, &q, sizeof(double)) == 0; };
  if (!same_bits(x.float_value, y.float_value)) return false;
  if (x.float_values.size() != y.float_values.size()) return false;
  for (size_t i = 0; i < x.float_values.size(); ++i) {
    if (!same_bits(x.float_values[i], y.float_values[i])) return false;
  }
  for (size_t i = 0; i < x.fields.size(); ++i) {
    if (x.fields[i].name != y.fields[i].name || x.fields[i].value != y.fields[i].value) {
      return false;
    }
  }
  return true;
}

Location Location::Unknown() { return MakeLocation(LocationStorage{}); }

Location Location::FileLineCol(std::string file, int64_t line, int64_t column, int64_t end_line,
                               int64_t end_column) {
  LocationStorage storage;
  storage.kind = LocationKind::kFileLineCol;
  storage.text = std::move(file);
  storage.line = line;
  storage.column = column;
  storage.end_line = end_line;
  storage.end_column = end_column;
  return MakeLocation(std::move(storage));
}

Location Location::Name(std::string name, Location child) {
  LocationStorage storage;
  storage.kind = LocationKind::kName;
  storage.text = std::move(name);
  if (child) storage.children.push_back(std::move(child));
  return MakeLocation(std::move(storage));
}

Location Location::CallSite(Location callee, Location caller) {
  LocationStorage storage;
  storage.kind = LocationKind::kCallSite;
  storage.children = {std::move(callee), std::move(caller)};
  return MakeLocation(std::move(storage));
}

Location Location::Fused(std::vector<Location> locations, Attribute metadata) {
  LocationStorage storage;
  storage.kind = LocationKind::kFused;
  storage.children = std::move(locations);
  storage.metadata = std::move(metadata);
  return MakeLocation(std::move(storage));
}

LocationKind Location::kind() const { return storage_ ? storage_->kind : LocationKind::kUnknown; }

std::string Location::ToUserString() const {
  // Walk to the first file position, preferring a call site's callee; a
  // bounded loop, since locations come from input.
  const LocationStorage* current = storage_.get();
  std::string name;
  for (int depth = 0; current != nullptr && depth < 64; ++depth) {
    switch (current->kind) {
      case LocationKind::kFileLineCol:
        return StrCat(current->text, ":", current->line, ":", current->column,
                      name.empty() ? "" : StrCat(" (", name, ")"));
      case LocationKind::kName:
        if (name.empty()) name = current->text;
        [[fallthrough]];
      case LocationKind::kCallSite:
      case LocationKind::kFused:
        current = current->children.empty() ? nullptr : &current->children.front().storage();
        break;
      case LocationKind::kUnknown: current = nullptr; break;
    }
  }
  return name.empty() ? "unknown location" : name;
}

}  // namespace kiln::ir
