// Pieces of the StableHLO text printer shared by printer.cc (module and op
// structure), printer_attributes.cc (types, attributes, locations),
// printer_structs.cc (struct attributes) and printer_ops.cc (the per-op
// pretty forms). Not part of the IR's interface.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/attribute.h"
#include "ir/module.h"

namespace kiln::ir::print_internal {

// ---- types, attributes, locations (printer_attributes.cc) ----

// A signed integer in decimal.
void AppendInt(std::string& out, int64_t value);

void AppendType(std::string& out, const Type& type);
// `elide_default_type` drops ` : i64` / ` : f64`, as MLIR does inside arrays.
void AppendAttribute(std::string& out, const Attribute& attribute, bool elide_default_type = false);
// `{a = 1 : i64, b}`; unit attributes print as their bare name.
void AppendDictionary(std::string& out, std::span<const NamedAttribute> entries);
// An integer attribute's value alone ("3").
void AppendIntegerValue(std::string& out, const Attribute& integer);
// A float value as MLIR prints it for a float type.
void AppendFloatValue(std::string& out, double value, const Type& type);
// One element at `data` of an element type, as a dense literal spells it.
void AppendElement(std::string& out, const uint8_t* data, const Type& element);
size_t ElementBytes(const Type& element);
// `dense<...>` without the trailing type.
void AppendDenseLiteral(std::string& out, const Attribute& dense);
// `[1, ?, 3]`.
void AppendDims(std::string& out, std::span<const int64_t> dims);
// `"text"` with MLIR's escapes.
void AppendQuoted(std::string& out, std::string_view text);
// A bare identifier when valid, else a quoted string.
void AppendKeywordOrString(std::string& out, std::string_view text);
// `@name`, or `@"name"` when not a bare identifier.
void AppendSymbol(std::string& out, std::string_view name);
// A location's body, without `loc(...)`.
void AppendLocationBody(std::string& out, const Location& location);

bool IsBareIdentifier(std::string_view text);
// A DenseI64Array attribute's values, or null if `attribute` is not one.
const std::vector<int64_t>* AsI64Array(const Attribute& attribute);

// ---- struct attributes (printer_structs.cc) ----

// `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`; false when the attribute is not
// a well-formed Struct("stablehlo.conv").
bool AppendConvDimensions(std::string& out, const Attribute& conv);
// A struct attribute's `<field = value, ...>` part.
void AppendStructBody(std::string& out, const Attribute& structure);
// A whole struct attribute: `#name<...>`, in the custom syntax of the
// convolution dimension numbers and the mesh structs where it has one.
void AppendStructAttribute(std::string& out, const Attribute& attribute);

// ---- value names and location aliases (printer.cc) ----

// MLIR's names for the values of a module (AsmPrinter's SSANameState).
class NameTable {
 public:
  NameTable(const Operation& root, bool generic);
  // `%name`, `%5`, `%5#1` for a value.
  void AppendValue(std::string& out, const Value* value) const;
  // The result groups of an op: `%a, %b:2 = ...`.
  void AppendResults(std::string& out, const Operation& op) const;
  int BlockId(const Block* block) const;

 private:
  struct Name {
    std::string text;  // the id ("5") or name ("cst_1")
  };
  void NameOp(const Operation& op);
  void NameRegion(const Region& region);
  void NameBlock(const Block& block);
  void SetName(const Value* value, std::string_view name);
  std::string Unique(std::string_view name);
  // The group an op result belongs to: its first result and its size.
  void FindGroup(const Value* result, const Value*& group, int& index, int& size) const;

  bool generic_;
  int64_t next_value_ = 0;
  int64_t next_argument_ = 0;
  int64_t next_conflict_ = 0;
  std::unordered_map<const Value*, Name> names_;
  std::unordered_map<const Operation*, std::vector<int>> groups_;
  std::unordered_map<const Block*, int> block_ids_;
  // Used names, in scopes: `scope_marks_` holds where each scope starts in `used_log_`.
  std::unordered_map<std::string, int> used_;
  std::vector<std::string> used_log_;
  std::vector<size_t> scope_marks_;
};

// `#loc` aliases, defined after the module. Every distinct location gets
// one, its children first, so a body refers to its children by alias and a
// shared location (JAX's call-site chains) is printed once.
class LocationAliases {
 public:
  // ` loc(#locN)` for a location (registering it).
  void AppendReference(std::string& out, const Location& location);
  // The `#locN = loc(...)` lines.
  void AppendDefinitions(std::string& out) const;

 private:
  size_t Register(const Location& location);
  size_t Intern(std::string body);

  std::unordered_map<const LocationStorage*, size_t> by_storage_;
  std::unordered_map<std::string, size_t> by_body_;
  std::vector<std::string> bodies_;
};

// One op's text, as pieces of text and the regions between them, so the
// printer can walk regions with its own stack.
struct Piece {
  std::string text;
  const Region* region = nullptr;
  bool entry_arguments = false;     // print the entry block's `^bb0(...)` header
  bool empty_block_header = false;  // print `^bb0:` for an empty entry block
};

// What the pretty printers of printer_ops.cc write into.
class OpWriter {
 public:
  OpWriter(const NameTable& names, LocationAliases* aliases, std::string_view default_dialect,
           int indent)
      : names_(names), aliases_(aliases), default_dialect_(default_dialect), indent_(indent) {
    pieces_.emplace_back();
  }

  std::string& out() { return pieces_.back().text; }
  void Region(const ir::Region& region, bool entry_arguments, bool empty_block_header = false);
  void Name(const Operation& op);  // the op name, without a default dialect prefix
  void Value(const ir::Value* value) { names_.AppendValue(out(), value); }
  void Values(std::span<ir::Value* const> values);
  void Type(const ir::Type& type) { AppendType(out(), type); }
  void Types(std::span<const ir::Type> types);
  void OperandTypes(const Operation& op);
  void ResultTypes(const Operation& op);
  // `(operand types) -> result types`.
  void FunctionalType(const Operation& op);
  // ` {attrs}` without `elided` (nothing when none are left); with
  // `keyword`, ` attributes {attrs}`.
  void AttrDict(const Operation& op, std::span<const std::string_view> elided,
                bool keyword = false);
  // `%arg0: tensor<f32>` and its location when locations are printed.
  void BlockArgument(const ir::Value* argument);
  // ` loc(...)` when locations are printed.
  void Location(const ir::Location& location);
  bool locations() const { return aliases_ != nullptr; }
  // A line break inside the op, indented as the op is.
  void Newline() {
    out() += '\n';
    out().append(static_cast<size_t>(indent_), ' ');
  }

  std::vector<Piece>& pieces() { return pieces_; }
  void Reset() {
    pieces_.clear();
    pieces_.emplace_back();
  }

 private:
  const NameTable& names_;
  LocationAliases* aliases_;
  std::string_view default_dialect_;
  int indent_;
  std::vector<Piece> pieces_;
};

// ---- pretty forms (printer_ops.cc) ----

// Writes an op in its pretty form; false (after writing nothing) when the op
// has none or does not fit it, so the caller prints it generically.
bool WritePrettyOp(const Operation& op, OpWriter& writer);

}  // namespace kiln::ir::print_internal
