// Kiln IR attributes and locations. Immutable values shared by pointer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/type.h"

namespace kiln::ir {

enum class AttrKind : uint8_t {
  kUnit,           // unit
  kBool,           // true / false
  kInteger,        // 5 : i64
  kFloat,          // 1.0 : f32
  kString,         // "text" (bytes)
  kType,           // a type used as a value
  kArray,          // [a, b, ...]
  kDenseArray,     // array<i64: 1, 2>, array<i1: true>, array<f64: ...>
  kDenseElements,  // dense<...> : tensor<...>: raw little-endian, row-major bytes
  kDictionary,     // {name = value, ...}, sorted by name
  kSymbolRef,      // @name, @root::@nested
  kEnum,           // a dialect enum value, e.g. #stablehlo<comparison_direction LT>
  kStruct,         // a dialect struct attribute: name + named fields
  kOpaque,         // an attribute of a dialect Kiln does not model, kept as text
};

struct AttributeStorage;
struct NamedAttribute;

class Attribute {
 public:
  Attribute() = default;
  explicit Attribute(std::shared_ptr<const AttributeStorage> storage)
      : storage_(std::move(storage)) {}

  static Attribute Unit();
  static Attribute Bool(bool value);
  static Attribute Integer(int64_t value, Type type);
  static Attribute Float(double value, Type type);
  static Attribute String(std::string value);
  static Attribute TypeAttr(Type type);
  static Attribute Array(std::vector<Attribute> elements);
  static Attribute DenseI64Array(std::vector<int64_t> values);
  static Attribute DenseBoolArray(std::vector<bool> values);
  static Attribute DenseArray(Type element, std::vector<int64_t> ints, std::vector<double> floats);
  // `data` holds NumElements() elements, or one if `splat`.
  static Attribute DenseElements(Type tensor_type, std::vector<uint8_t> data, bool splat);
  static Attribute Dictionary(std::vector<NamedAttribute> fields);  // sorts by name
  static Attribute SymbolRef(std::vector<std::string> path);
  static Attribute Enum(std::string family, std::string value);
  static Attribute Struct(std::string name, std::vector<NamedAttribute> fields);
  static Attribute Opaque(std::string text);

  explicit operator bool() const { return storage_ != nullptr; }
  AttrKind kind() const;
  bool Is(AttrKind kind) const;
  const AttributeStorage& storage() const { return *storage_; }
  const AttributeStorage* operator->() const { return storage_.get(); }
  const std::shared_ptr<const AttributeStorage>& shared() const { return storage_; }

  // kDictionary / kStruct: the field called `name`, or a null Attribute.
  Attribute Get(std::string_view name) const;

  friend bool operator==(const Attribute& a, const Attribute& b);
  friend bool operator!=(const Attribute& a, const Attribute& b) { return !(a == b); }

 private:
  std::shared_ptr<const AttributeStorage> storage_;
};

// An attribute with its name, as in op attribute lists and dictionaries.
struct NamedAttribute {
  std::string name;
  Attribute value;
};

struct AttributeStorage {
  AttrKind kind = AttrKind::kUnit;
  bool bool_value = false;
  int64_t int_value = 0;                 // kInteger (two's complement bits for unsigned)
  double float_value = 0.0;              // kFloat
  std::string text;                      // kString bytes, kEnum family, kStruct name, kOpaque text
  std::string enum_value;                // kEnum: the value's spelling, e.g. "LT"
  Type type;                             // kInteger/kFloat type, kType, kDenseElements tensor type,
                                         // kDenseArray element type
  std::vector<Attribute> elements;       // kArray
  std::vector<NamedAttribute> fields;    // kDictionary, kStruct
  std::vector<int64_t> int_values;       // kDenseArray of integers or bools
  std::vector<double> float_values;      // kDenseArray of floats
  std::vector<std::string> symbol_path;  // kSymbolRef: root then nested names
  // kDenseElements: one element's bytes if `splat`, else every element's.
  // Element storage as in a Kiln buffer (base/element_type.h): i1 and sub-byte
  // types take one byte per element; complex is (real, imaginary).
  std::vector<uint8_t> data;
  bool splat = false;
};

inline AttrKind Attribute::kind() const { return storage_->kind; }
inline bool Attribute::Is(AttrKind kind) const {
  return storage_ != nullptr && storage_->kind == kind;
}

// The integers an attribute holds: array<i64: ...>, a dense integer tensor
// (row-major), or an array of integers; nullopt for anything else.
std::optional<std::vector<int64_t>> IntegersOf(const Attribute& attribute);

enum class LocationKind : uint8_t { kUnknown, kFileLineCol, kName, kCallSite, kFused };

struct LocationStorage;

// Where an op came from in the user's program; errors point at it.
class Location {
 public:
  Location() = default;
  explicit Location(std::shared_ptr<const LocationStorage> storage)
      : storage_(std::move(storage)) {}

  static Location Unknown();
  // end_line/end_column 0 when absent (FileLineColRange may give them).
  static Location FileLineCol(std::string file, int64_t line, int64_t column, int64_t end_line = 0,
                              int64_t end_column = 0);
  static Location Name(std::string name, Location child);
  static Location CallSite(Location callee, Location caller);
  static Location Fused(std::vector<Location> locations, Attribute metadata);

  LocationKind kind() const;
  const LocationStorage& storage() const { return *storage_; }
  explicit operator bool() const { return storage_ != nullptr; }
  // The most useful "file:line:column" for a message, or "unknown location".
  std::string ToUserString() const;

 private:
  std::shared_ptr<const LocationStorage> storage_;
};

struct LocationStorage {
  LocationKind kind = LocationKind::kUnknown;
  std::string text;  // file name, or the name of a NameLoc
  int64_t line = 0, column = 0, end_line = 0, end_column = 0;
  std::vector<Location> children;  // Name: [child]; CallSite: [callee, caller]; Fused: all
  Attribute metadata;              // Fused
};

}  // namespace kiln::ir
