// What the StableHLO text syntax knows about each op, shared by the printer
// (src/ir/printer.*), the text parser (src/frontend/text/) and the MLIR
// bytecode readers: the custom ("pretty") assembly form an op has upstream,
// which of its attributes are inherent (MLIR properties, printed as `<{...}>`
// in the generic form) and which of those an op may lack, the names upstream
// gives its results, element type spellings, and the fields of the dialect
// struct attributes Kiln models (docs/ir.md).
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/element_type.h"
#include "ir/attribute.h"

namespace kiln::ir {

// The custom assembly forms Kiln prints and parses. Ops without one (and
// unknown ops) use MLIR's generic form. docs/formats/stablehlo-text.md shows
// each form.
enum class PrettyForm : uint8_t {
  kNone,
  // stablehlo
  kSameType,         // operands attr-dict : T, or a function type when types differ
  kComplex,          // stablehlo.complex
  kSelect,           // stablehlo.select
  kFunctional,       // operands attr-dict : (T, ...) -> R
  kNullary,          // attr-dict : R (create_token, replica_id, partition_id)
  kIota,             // dim = N
  kDynamicIota,      // %shape, dim = N
  kGetTupleElement,  // %t[N]
  kTuple,            // %a, %b : tuple<...>
  kCompare,          // DIR, %a, %b(, TYPE)?
  kSlice,            // %x [a:b:c, ...]
  kDynamicSlice,     // %x, %i, ..., sizes = [...]
  kBroadcast,        // %x, sizes = [...]
  kBroadcastInDim,   // %x, dims = [...]
  kDynamicBroadcastInDim,
  kCholesky,             // %x(, lower = true)?
  kConcatenate,          // %a, %b, dim = N
  kComposite,            // "name" %a, %b
  kConvolution,          // (%a, %b) dim_numbers = ..., window = {...}
  kCustomCall,           // @target(%a, %b)
  kDot,                  // %a, %b(, precision = [...])?
  kDotGeneral,           // %a, %b, (batching_dims = .. x .., )?contracting_dims = ...
  kEinsum,               // %a, %b, config = "..."
  kUnaryEinsum,          // %a, config = "..."
  kFft,                  // %x, type = FFT, length = [...]
  kGetDimensionSize,     // %x, dim = N
  kSetDimensionSize,     // %x, %size, dim = N
  kReverse,              // %x, dims = [...] : T
  kPad,                  // %x, %v, low = [...], high = [...], interior = [...]
  kTranspose,            // %x, dims = [...]
  kReturn,               // stablehlo.return %a, %b : T, U
  kOptimizationBarrier,  // %a, %b : T, U   or   ()
  kRng,                  // %a, %b, %shape, distribution = UNIFORM
  kRngBitGenerator,      // %state, algorithm = DEFAULT
  kReducePrecision,      // %x, format = e5m10
  kWhile,                // (%iterArg = %x, ...) : T cond {...} do {...}
  kReduce,               // (%x init: %y) applies op across dimensions = [...] | reducer
  kConstant,             // dense<...> : T
  // func, builtin
  kFuncFunc,
  kFuncCall,    // call @f(%a) : (T) -> R
  kFuncReturn,  // return %a : T (attr-dict first)
  kModule,
  // sdy (attributes are Opaque text; see op_syntax.cc for the stripped forms)
  kSdyMesh,      // sdy.mesh @name = <...>
  kSdySharding,  // sdy.sharding_constraint / sdy.reshard %x <...> : T
  kSdyManualComputation,
  kSdyNamedComputation,
  // chlo
  kChloUnary,            // %x : T -> R
  kChloBroadcastBinary,  // %a, %b : (T, U) -> R
  kChloPair,             // %a, %b : T, U -> R
  kChloBroadcastSelect,  // %p, %a, %b : (P, T, U) -> R
  kChloTopK,             // (%x, k = N) : T -> (R, S)
  kChloConstant,         // dense<...> : T
  kChloScan,  // (%x) inits(%c) dimension=0 attributes {...} {^bb0(...): ...} : (T, C) -> (R, C)
  // the StableHLO interpreter's check dialect (read only; printed generically)
  kCheck,  // %a, %b (, key = v)* : T  /  %a, dense<...> : T
};

// The pretty form of an op name; kNone for ops printed generically.
PrettyForm GetPrettyForm(std::string_view op_name);

// An inherent attribute of an op (an attribute argument of its ODS
// definition) and whether the op may lack it.
struct InherentAttribute {
  std::string_view name;
  bool optional = false;
};

// The inherent attributes of `op_name` in declaration order; nullopt for an
// op Kiln does not know. Readers of MLIR bytecode decode op properties by it.
std::optional<std::vector<InherentAttribute>> InherentAttributes(std::string_view op_name);

// Whether `attribute` is inherent to `op_name` (an argument in the op's ODS
// definition). Unknown ops have no inherent attributes.
bool IsInherentAttribute(std::string_view op_name, std::string_view attribute);

// The names upstream gives an op's results when it declares two or more named
// results (`%output, %batch_mean, %batch_var = ...`); empty otherwise.
std::span<const std::string_view> NamedResults(std::string_view op_name);

// The dialect whose ops print without their prefix inside an op's regions
// ("func" inside func.func); empty when none.
std::string_view DefaultDialect(std::string_view op_name);

// MLIR's spelling of an element type: "f32", "i8", "ui8", "complex<f32>".
std::string_view ElementTypeSpelling(ElementType type);
// The element type of a spelling (also accepts "si8", which MLIR keeps
// distinct from "i8" but Kiln does not).
std::optional<ElementType> ParseElementTypeSpelling(std::string_view spelling);

// How a field of a struct attribute is written between its `<...>`.
enum class StructFieldKind : uint8_t {
  kDims,       // [1, 2] or [?, 4]: DenseI64Array (kDynamic for `?`)
  kInteger,    // 3: Integer of type i64
  kFloat,      // 1.000000e-05: Float of type f64
  kBool,       // true: Bool
  kType,       // tf32: TypeAttr
  kAttribute,  // any attribute in full form (e.g. an Enum)
};

struct StructField {
  std::string_view name;
  StructFieldKind kind;
  bool omit_default;  // not printed when empty / zero, as upstream
};

// The fields, in printed order, of a struct attribute Kiln models
// ("stablehlo.dot", "stablehlo.gather", ...); empty for others.
// "stablehlo.conv" is special: see printer_attributes.cc.
std::span<const StructField> GetStructFields(std::string_view struct_name);

// Whether `value` of `field` is the default upstream leaves out when it
// prints the struct (an empty list, 0), for fields marked omit_default.
bool IsOmittedDefault(const StructField& field, const Attribute& value);

// Struct(`struct_name`) from one value per field of GetStructFields in that
// order (null: absent), without the fields at a default upstream leaves out:
// the form the text parser and the bytecode readers build.
Attribute StructOfFields(std::string_view struct_name, std::vector<Attribute> values);

// The field names of Struct("stablehlo.conv").
std::span<const std::string_view> ConvDimensionFields();

}  // namespace kiln::ir
