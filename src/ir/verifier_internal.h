// Shared pieces of the IR verifier (verifier.cc walks the module; the
// verify_*.cc files check op families). Not part of Kiln IR's public API.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "ir/module.h"
#include "ir/op_description.h"

namespace kiln::ir::verify_internal {

// ---------------------------------------------------------------------------
// Element types and shapes

// ElementClass and its sets are in ir/op_description.h (ops.def names them).

// The class of an element (kElement or kQuantized type); 0 for anything else.
uint16_t ClassOf(const Type& element);
// "floating-point or complex", for messages.
std::string ClassesText(uint16_t mask);

// type.Is(kind) without the out-of-line call, for the hot paths.
inline bool HasKind(const Type& type, TypeKind kind) { return type && type.storage().kind == kind; }
inline bool IsRankedTensor(const Type& type) {
  return type && type.storage().kind == TypeKind::kTensor;
}
// The element of a tensor type, by reference (Type::element() copies a
// shared pointer, which the hot paths avoid).
inline const Type& ElementOf(const Type& tensor) { return tensor.storage().element; }
inline int64_t Rank(const Type& tensor) { return static_cast<int64_t>(tensor.dims().size()); }
// Sizes that may be equal at run time: equal, or either dynamic.
inline bool DimsCompatible(int64_t a, int64_t b) {
  return a == b || a == kDynamic || b == kDynamic;
}
bool ShapesCompatible(std::span<const int64_t> a, std::span<const int64_t> b);
// Elements equal; quantized elements compare storage and expressed types
// (the spec's baseline element type ignores scales and zero points).
bool SameElement(const Type& a, const Type& b);
// Ranked tensors: same element and compatible shapes; other types: equal.
bool TypesCompatible(const Type& a, const Type& b);
// Bits of an element: complex counts both parts; quantized, its storage.
int BitWidth(const Type& element);
// The spec's is_promotable(from, to); with `ignore_fp_precision` any float
// promotes to any float (upstream's reducer rule).
bool IsPromotable(const Type& from, const Type& to, bool ignore_fp_precision);
// complex<f32> -> f32; other elements unchanged.
Type RealPart(const Type& element);
// f32 -> complex<f32>, f64 -> complex<f64>; null for other elements.
Type ComplexOf(const Type& element);

// MLIR spellings for messages: "tensor<2x?xf32>", "f32", "[2, ?]", "?".
std::string TypeText(const Type& type);
std::string DimText(int64_t dim);
std::string DimsText(std::span<const int64_t> dims);
std::string TypesText(std::span<const Type> types);  // "(a, b)"

// Overflow-checked arithmetic on sizes from input.
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);
// The number of elements of a static shape, or nullopt if it overflows.
std::optional<int64_t> ElementCount(std::span<const int64_t> dims);

// Sizes of one dimension of a windowed op (reduce_window, convolution,
// select_and_scatter): the spec's num_windows, or an error text.
struct WindowDim {
  int64_t size = 1;  // window size (kernel size for convolution)
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;    // lhs_dilation
  int64_t window_dilation = 1;  // rhs_dilation
};
// num_windows of `base` (kDynamic stays kDynamic); nullopt if the padded
// size is negative or overflows.
std::optional<int64_t> NumWindows(int64_t base, const WindowDim& window);

// ---------------------------------------------------------------------------
// Attributes

// Integers read from an attribute: array<i64: ...>, a dense integer
// tensor, or an array of integers. Arrays are viewed in place (the op owns
// the attribute for the whole verification); other forms are decoded.
// Move-only, since `values` may point into `storage`.
struct IntList {
  std::span<const int64_t> values;
  std::vector<int64_t> storage;
  std::array<int64_t, 4> shape_dims{};  // a dense tensor's shape; {size} for arrays
  size_t rank = 0;
  bool present = false;  // false: the attribute was absent (callers use defaults)

  IntList() = default;
  IntList(IntList&&) = default;
  IntList& operator=(IntList&&) = default;
  IntList(const IntList&) = delete;
  IntList& operator=(const IntList&) = delete;

  size_t size() const { return values.size(); }
  int64_t operator[](size_t i) const { return values[i]; }
  auto begin() const { return values.begin(); }
  auto end() const { return values.end(); }
  int64_t back() const { return values.back(); }
  std::span<const int64_t> span() const { return values; }
  std::span<const int64_t> shape() const { return {shape_dims.data(), rank}; }
  std::vector<int64_t> ToVector() const { return {values.begin(), values.end()}; }
};

// Reads `attribute` as integers; nullopt if it is not a list of integers.
std::optional<IntList> ReadInts(const Attribute& attribute);

// func.func ops by symbol name, for func.call and composite.
using SymbolTable = std::unordered_map<std::string_view, const Operation*>;

// ---------------------------------------------------------------------------
// One op under verification: its types, attributes and error messages.

class OpContext {
 public:
  OpContext(const Operation& op, const SymbolTable& symbols) : op_(op), symbols_(symbols) {}

  const Operation& op() const { return op_; }
  size_t num_operands() const { return op_.operands().size(); }
  size_t num_results() const { return op_.num_results(); }
  const Type& operand(size_t i) const { return op_.operand(i)->type(); }
  const Type& result(size_t i) const { return op_.result(i)->type(); }
  std::vector<Type> OperandTypes(size_t begin = 0, size_t end = SIZE_MAX) const;
  std::vector<Type> ResultTypes() const;

  // "file:line:col: stablehlo.op (C1): " (without " (C1)" when `constraint`
  // is empty).
  std::string Prefix(std::string_view constraint) const;
  // INVALID_ARGUMENT with the prefix; `args` say what was expected and found.
  template <typename... Args>
  Status Fail(std::string_view constraint, const Args&... args) const {
    return Status(StatusCode::kInvalidArgument, StrCat(Prefix(constraint), args...));
  }

  // The attribute called `name`, or null; no copy (Operation::GetAttr
  // copies a shared pointer, which the hot paths avoid).
  const Attribute* Find(std::string_view name) const;

  // Attribute readers. The required forms fail naming the attribute when it
  // is absent or of the wrong kind; the *Or forms return `fallback` (or an
  // IntList with present = false) when it is absent.
  StatusOr<int64_t> Int(std::string_view name) const;
  StatusOr<int64_t> IntOr(std::string_view name, int64_t fallback) const;
  StatusOr<IntList> Ints(std::string_view name) const;
  StatusOr<IntList> IntsOr(std::string_view name) const;
  StatusOr<bool> BoolOr(std::string_view name, bool fallback) const;
  StatusOr<std::string_view> Enum(std::string_view name) const;
  StatusOr<std::string_view> EnumOr(std::string_view name, std::string_view fallback) const;
  StatusOr<std::string_view> String(std::string_view name) const;
  // A struct attribute named `struct_name` ("stablehlo.dot").
  StatusOr<Attribute> Struct(std::string_view name, std::string_view struct_name) const;
  // Fields of a struct attribute; absent fields read as empty / `fallback`.
  StatusOr<IntList> FieldInts(const Attribute& record, std::string_view field) const;
  StatusOr<int64_t> FieldInt(const Attribute& record, std::string_view field,
                             int64_t fallback) const;
  StatusOr<int64_t> FieldInt(const Attribute& record, std::string_view field) const;

  // The func.func called `name`, or null.
  const Operation* LookupFunction(std::string_view name) const;

  // Common checks. `what` names the value in messages ("lhs", "result #1").
  // The element of `type` is in one of the `classes`.
  Status ExpectClasses(std::string_view constraint, std::string_view what, const Type& type,
                       uint16_t classes) const;
  // A rank-0 tensor.
  Status ExpectScalar(std::string_view constraint, std::string_view what, const Type& type) const;
  // Every value in `dims` lies in [0, rank) (else fails citing
  // `range_constraint`) and none repeats (`unique_constraint`).
  Status ExpectDimsInRange(std::string_view range_constraint, std::string_view unique_constraint,
                           std::string_view what, std::span<const int64_t> dims,
                           int64_t rank) const;
  // The result of the op has shape `expected` (dynamic sizes match anything).
  Status ExpectResultShape(std::string_view constraint, size_t result,
                           std::span<const int64_t> expected) const;

 private:
  const Operation& op_;
  const SymbolTable& symbols_;
};

// Checks of dimension lists, failing with `constraint`: values in [0,
// bound) (`bound_name` says what bounds them), sorted, sorted without
// repeats, and no value twice across `a` ++ `b` (`b_name` may be empty).
Status ExpectInRange(const OpContext& context, std::string_view constraint, std::string_view what,
                     std::span<const int64_t> dims, int64_t bound, std::string_view bound_name);
Status ExpectSorted(const OpContext& context, std::string_view constraint, std::string_view what,
                    std::span<const int64_t> dims);
Status ExpectSortedUnique(const OpContext& context, std::string_view constraint,
                          std::string_view what, std::span<const int64_t> dims);
Status ExpectDistinct(const OpContext& context, std::string_view constraint,
                      std::string_view a_name, std::span<const int64_t> a, std::string_view b_name,
                      std::span<const int64_t> b);

// Window attributes: `name` holds `count` entries, each > 0 unless
// `positive_constraint` is empty; all ones when absent.
StatusOr<std::vector<int64_t>> WindowList(const OpContext& context, std::string_view name,
                                          std::string_view size_constraint,
                                          std::string_view positive_constraint, int64_t count);
// `padding`: [count, 2] (low, high) pairs, flattened; zeros when absent.
StatusOr<std::vector<int64_t>> PaddingList(const OpContext& context, std::string_view constraint,
                                           int64_t count);

// ---------------------------------------------------------------------------
// Op rules: what the walk checks for each op before its own verifier runs.

using VerifyFn = Status (*)(const OpContext&);

enum RuleFlags : uint8_t {
  kTensorOperands = 1 << 0,    // every operand is a ranked tensor
  kTensorResults = 1 << 1,     // every result is a ranked tensor
  kReturnTerminated = 1 << 2,  // each region ends with stablehlo.return
  kSdyTerminated = 1 << 3,     // each region ends with sdy.return
  kOpaqueAttributes = 1 << 4,  // attributes are Opaque (sdy): no deep checks
  kTensors = kTensorOperands | kTensorResults,
};

// An op's entry in its family's table: its own checks and flags. Operand,
// result and region counts come from its row of ops.def.
struct FamilyRule {
  OpCode code;
  VerifyFn verify;  // op-specific checks; null when the generic ones suffice
  uint8_t flags;
};

// What the walk checks for an op: its family rule with its row's counts.
struct OpRule {
  OpCode code;
  VerifyFn verify;
  OpCounts counts;
  uint8_t flags;
};

// The rules of the elementwise rows of ops.def: stablehlo ops by the spec's
// constraints (verify_elementwise.cc), chlo ops by ChloOps.td's
// (verify_chlo_ops.cc). Element classes and result rule come from the row.
Status VerifyElementwise(const OpContext& context);
Status VerifyChloElementwise(const OpContext& context);

// The rules of each family, defined in its verify_*.cc file.
std::span<const FamilyRule> ElementwiseRules();
std::span<const FamilyRule> ShapeRules();
std::span<const FamilyRule> IndexingRules();
std::span<const FamilyRule> LinalgRules();
std::span<const FamilyRule> RegionOpRules();
std::span<const FamilyRule> CollectiveRules();
std::span<const FamilyRule> MiscRules();
std::span<const FamilyRule> ChloRules();

// Checks a reduction body (reduce, reduce_window, scatter, all_reduce,
// reduce_scatter, select_and_scatter's scatter): 2N scalar-ish arguments,
// N results, element types promotable from `inputs` (the spec's
// is_promotable), as upstream's verifyReducerShape. `allowed_dims` are the
// result dimensions the body's arguments may carry (empty: rank 0).
// Returns the body's result (accumulator) types in `accumulators`.
Status VerifyReducer(const OpContext& context, std::string_view constraint, const Region& body,
                     std::span<const Type> inputs, std::span<const Type> init_values,
                     std::span<const int64_t> allowed_dims, std::vector<Type>* accumulators);

// The values a region's terminator returns.
std::vector<Type> TerminatorTypes(const Region& region);

}  // namespace kiln::ir::verify_internal
