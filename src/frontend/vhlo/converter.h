// Shared by the MLIR bytecode readers: the op tree of a bytecode File as a
// Kiln IR module. The converter walks the ops, decodes their properties,
// attributes, types, regions and operands; what is particular to a reader
// (how an op's properties are laid out, how a stored op becomes the op Kiln
// IR holds, which attribute encodings it knows) comes from its OpRules.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "frontend/bytecode/file.h"
#include "frontend/vhlo/attr_table.h"
#include "ir/module.h"
#include "ir/op_syntax.h"

namespace kiln::frontend::vhlo {

// How a registered op stores its inherent attributes in the properties
// section (bytecode 5+): one reference per attribute, sorted by name (ODS
// sorts them), plain for required ones and (index << 1 | present) for
// optional ones. Ops with variadic operand or result segments (ODS
// AttrSizedOperandSegments / AttrSizedResultSegments) add their segment
// sizes: in bytecode 5 as dense i32 array attributes named
// operandSegmentSizes / resultSegmentSizes, sorted in among the others; from
// bytecode 6 as sparse arrays after them.
struct PropertySchema {
  std::vector<ir::InherentAttribute> attributes;  // in stored order
  int operand_segments = 0;  // entries of operandSegmentSizes; 0 when the op has none
  int result_segments = 0;   // entries of resultSegmentSizes; 0 when the op has none
};

// The schema of an op Kiln knows from its inherent attributes
// (ir::InherentAttributes), sorted as ODS stores them; nullopt for others.
std::optional<PropertySchema> KnownPropertySchema(std::string_view op_name);

// An op as it comes out of the file (name and attributes: inherent ones from
// the properties, then the attribute dictionary) and as the reader's rules
// turn it into the op Kiln IR holds.
struct ConvertedOp {
  std::string name;
  std::vector<ir::NamedAttribute> attributes;
};

// What differs between the readers built on the converter.
class OpRules {
 public:
  virtual ~OpRules() = default;
  // The attribute and type encodings the files hold.
  virtual const Codecs& codecs() const = 0;
  // How `op_name` stores its properties. UNIMPLEMENTED (naming `where`) when
  // the reader cannot decode them.
  virtual StatusOr<PropertySchema> Properties(std::string_view op_name,
                                              std::string_view where) const = 0;
  // Turns `op` into the op Kiln IR holds. `parent_is_func` says whether it
  // sits directly in a function. Errors name `where`.
  virtual Status Convert(ConvertedOp& op, bool parent_is_func, std::string_view where) const = 0;
  // Whether one-to-one builtin.unrealized_conversion_cast ops between equal
  // Kiln types are dropped and their results forwarded to their operands.
  virtual bool FoldIdentityCasts() const = 0;
};

// `bytes` holds the file `file` was read from (for byte offsets in
// messages); `rules` must outlive the call.
StatusOr<ir::Module> BuildModule(const bytecode::File& file, std::span<const uint8_t> bytes,
                                 const OpRules& rules);

}  // namespace kiln::frontend::vhlo
