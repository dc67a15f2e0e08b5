// The description of each op (src/ir/ops.def) as data: name, pretty form,
// attributes with their kinds, how it lowers, its traits, and for
// elementwise ops the element classes, result rule and kernel. The printer,
// parser, readers, verifier and compiler read it instead of keeping their own
// per-op lists (docs/adding-an-op.md).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/op_names.h"
#include "ir/op_syntax.h"

namespace kiln::ir {

// Classes of element types, as the spec's "Types" section names them; an
// op's inputs allow a set of them (a mask).
enum ElementClass : uint16_t {
  kBoolClass = 1 << 0,      // i1
  kSignedClass = 1 << 1,    // si2..si64 (MLIR's signless iN)
  kUnsignedClass = 1 << 2,  // ui2..ui64
  kFloatClass = 1 << 3,     // f4..f64, bf16, tf32
  kComplexClass = 1 << 4,   // complex<f32>, complex<f64>
  kPerTensorQuantClass = 1 << 5,
  kPerAxisQuantClass = 1 << 6,
  kIndexClass = 1 << 7,  // index (shape computations)
  kIntegerClasses = kSignedClass | kUnsignedClass,
  kQuantClasses = kPerTensorQuantClass | kPerAxisQuantClass,
};

// The element-class sets elementwise ops name in ops.def.
inline constexpr uint16_t kFpComplex = kFloatClass | kComplexClass;
inline constexpr uint16_t kFpComplexQ = kFloatClass | kComplexClass | kPerTensorQuantClass;
inline constexpr uint16_t kFpQ = kFloatClass | kPerTensorQuantClass;
inline constexpr uint16_t kArithmetic = kIntegerClasses | kFloatClass | kComplexClass |
                                        kPerTensorQuantClass;
inline constexpr uint16_t kSignedArithmetic = kSignedClass | kFloatClass | kComplexClass |
                                              kPerTensorQuantClass;
inline constexpr uint16_t kLogical = kBoolClass | kIntegerClasses;
inline constexpr uint16_t kAnyTensor = kBoolClass | kArithmetic;

// How an elementwise op's result type follows from its operands.
enum class ElementwiseResult : uint8_t {
  kSame,      // type(result) = type(operands...)
  kRealPart,  // complex<E> -> E, else the same element (abs, real, imag)
  kBool,      // same shape, i1 elements (is_finite, chlo.is_inf)
};

// How compiling an op goes (ops.def's Lowering column).
enum class LoweringStatus : uint8_t {
  kLowered,        // a rule in one of compiler/lower_*.cc
  kStructural,     // handled by the lowering itself (functions, terminators, ...)
  kUnimplemented,  // compiling it is UNIMPLEMENTED
};

// Facts about an op the compiler uses (ops.def's Traits column; a mask).
enum OpTraits : uint8_t {
  kNoTraits = 0,
  kPointwise = 1 << 0,        // output element k from input elements k only
  kCheapArithmetic = 1 << 1,  // counted as one flop per element
  kTranscendental = 1 << 2,   // counted as one transcendental per element
};

// The kind of value an attribute holds (ops.def's `name:kind`).
enum class AttrType : uint8_t {
  kAny,     // any: not checked (opaque dialect attributes, dictionaries, ...)
  kInt,     // i64: Integer
  kFloat,   // f: Float
  kBool,    // bool: Bool (or Unit)
  kUnit,    // unit: Unit (or Bool)
  kString,  // str: String
  kSymbol,  // sym: SymbolRef
  kType,    // type: a type
  kEnum,    // enum: a dialect enum
  kStruct,  // struct: a dialect struct attribute
  kInts,    // ints: a list of integers (dense array, dense elements or array)
  kArray,   // array: [a, b, ...]
  kDense,   // dense: dense elements (or an opaque dense_resource)
};

// One attribute an op declares.
struct AttributeDescription {
  std::string_view name;
  AttrType type = AttrType::kAny;
  bool optional = false;
  bool inherent = true;  // an ODS argument (false: declared with '+')
  int entries = 0;       // `name[N]`: a segment-sizes property of N entries
};

// The verifier's and lowering's facts about an elementwise op.
struct ElementwiseDescription {
  uint8_t arity;             // 1 (KILN_UNARY) or 2 (KILN_BINARY)
  uint16_t classes;          // element classes the operands allow
  ElementwiseResult result;  // how the result type follows
};

// kVariadic in OpCounts: no maximum (operands, results), any number (regions).
inline constexpr int16_t kVariadic = -1;

// How many operands, results and regions an op has (ops.def's Counts column).
struct OpCounts {
  int16_t min_operands = 0;
  int16_t max_operands = kVariadic;
  int16_t min_results = 0;
  int16_t max_results = kVariadic;
  int16_t regions = kVariadic;
};
constexpr OpCounts Counts(int16_t min_operands, int16_t max_operands, int16_t min_results,
                          int16_t max_results, int16_t regions) {
  return {min_operands, max_operands, min_results, max_results, regions};
}

// One row of ops.def.
struct OpDescription {
  OpCode code = OpCode::kUnknown;  // kUnknown for KILN_SYNTAX_ONLY rows
  std::string_view name;
  PrettyForm form = PrettyForm::kNone;
  std::span<const AttributeDescription> attributes;
  OpCounts counts;
  LoweringStatus lowering = LoweringStatus::kUnimplemented;
  uint8_t traits = kNoTraits;
  std::optional<ElementwiseDescription> elementwise;

  // The declaration of attribute `name`, or null.
  const AttributeDescription* FindAttribute(std::string_view attribute) const;
  bool Has(OpTraits trait) const { return (traits & trait) != 0; }
};

// The description of a known op (code != kUnknown).
const OpDescription& DescribeOp(OpCode code);
// The description of an op name, including syntax-only rows; null when
// ops.def has no row for it.
const OpDescription* FindOpDescription(std::string_view name);
// Every row of ops.def, in order (syntax-only rows last).
std::span<const OpDescription> AllOpDescriptions();

// Mistakes in ops.def's attribute text (unknown kinds), for the test.
std::vector<std::string> OpDescriptionMistakes();

// The name ops.def gives a kind ("i64", "ints", ...).
std::string_view AttrTypeName(AttrType type);
// Whether `value` is of `type`.
bool AttributeHasType(const Attribute& value, AttrType type);

// Attribute reads checked against the description. Every undotted
// attribute name an op's code reads (Operation::GetAttr) must be declared
// by its row: a read that is not is recorded here, so that a test run with
// KILN_CHECK_OP_DESCRIPTIONS=1 fails on it (the compiler returns INTERNAL
// naming the op and the attribute). Dotted names (discardable attributes
// such as mhlo.sharding) and unknown ops are never checked.
void NoteAttributeRead(OpCode code, std::string_view name);
// While one is alive, Operation::GetAttr on this thread notes its reads
// (the compiler holds one around each lowering rule).
class AttributeReadCheck {
 public:
  AttributeReadCheck();
  ~AttributeReadCheck();
  AttributeReadCheck(const AttributeReadCheck&) = delete;
  AttributeReadCheck& operator=(const AttributeReadCheck&) = delete;

  // Whether reads on this thread are being noted.
  static bool Active();

 private:
  bool previous_;
};
// The undeclared reads noted on this thread since the last call, as
// "op.name: attribute" lines; clears them.
std::string TakeUndeclaredAttributeReads();
// Whether KILN_CHECK_OP_DESCRIPTIONS is set (read once).
bool CheckOpDescriptions();

}  // namespace kiln::ir
