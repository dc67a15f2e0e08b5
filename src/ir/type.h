// Kiln IR types: element types, quantized types, tensors, tokens, tuples,
// functions. Types are immutable values shared by pointer; compare with ==.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/element_type.h"

namespace kiln::ir {

// A dimension whose size is not static (MLIR's `?`).
inline constexpr int64_t kDynamic = std::numeric_limits<int64_t>::min();

enum class TypeKind : uint8_t {
  kElement,         // a scalar element type: i32, f32, complex<f32>, index, ...
  kQuantized,       // !quant.uniform<...>, per tensor or per axis
  kTensor,          // tensor<2x?xf32>, with optional bounds
  kUnrankedTensor,  // tensor<*xf32>
  kToken,           // !stablehlo.token
  kTuple,           // tuple<...>
  kFunction,        // (inputs) -> results
  kNone,            // none
  kOpaque,          // a type of a dialect Kiln does not model, kept as text
};

class Attribute;
struct TypeStorage;

class Type {
 public:
  Type() = default;
  explicit Type(std::shared_ptr<const TypeStorage> storage) : storage_(std::move(storage)) {}

  static Type Element(ElementType element);
  static Type Tensor(Type element, std::vector<int64_t> dims, std::vector<int64_t> bounds = {});
  static Type UnrankedTensor(Type element);
  static Type Token();
  static Type Tuple(std::vector<Type> members);
  static Type Function(std::vector<Type> inputs, std::vector<Type> results);
  static Type None();
  static Type Opaque(std::string text);

  explicit operator bool() const { return storage_ != nullptr; }
  TypeKind kind() const;
  bool Is(TypeKind kind) const { return storage_ != nullptr && this->kind() == kind; }

  // kElement: the element type.
  ElementType element_type() const;
  // kTensor, kUnrankedTensor: the element (an element or quantized type).
  Type element() const;
  // kTensor: dimension sizes (kDynamic for `?`) and bounds (empty, or one per
  // dimension with kDynamic where unbounded).
  const std::vector<int64_t>& dims() const;
  const std::vector<int64_t>& bounds() const;
  // kTuple members, kFunction inputs.
  const std::vector<Type>& members() const;
  const std::vector<Type>& results() const;  // kFunction results
  const std::string& text() const;           // kOpaque
  const TypeStorage& storage() const { return *storage_; }

  bool HasStaticShape() const;
  int64_t NumElements() const;  // kTensor with static shape

  friend bool operator==(const Type& a, const Type& b);
  friend bool operator!=(const Type& a, const Type& b) { return !(a == b); }

 private:
  std::shared_ptr<const TypeStorage> storage_;
};

// !quant.uniform parameters (StableHLO spec "QuantizationParameters").
struct QuantizedParams {
  bool is_signed = true;
  ElementType storage_type = ElementType::kS8;
  ElementType expressed_type = ElementType::kF32;
  int64_t storage_min = 0;
  int64_t storage_max = 0;
  std::optional<int32_t> quantized_dimension;  // set for per-axis quantization
  std::vector<double> scales;                  // one per tensor, or one per slice
  std::vector<int64_t> zero_points;
};

Type QuantizedType(QuantizedParams params);
const QuantizedParams& GetQuantizedParams(const Type& type);

struct TypeStorage {
  TypeKind kind = TypeKind::kNone;
  ElementType element_type = ElementType::kF32;
  Type element;
  std::vector<int64_t> dims;
  std::vector<int64_t> bounds;
  std::vector<Type> members;
  std::vector<Type> results;
  std::string text;
  QuantizedParams quantized;
};

}  // namespace kiln::ir
