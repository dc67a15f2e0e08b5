// BuildModule: a bytecode File's op tree -> a Kiln IR module. Ops are built
// in one pass over an explicit stack (parents before children); operands are
// filled in a second pass, since bytecode operands may name values defined
// later.
#include "frontend/vhlo/converter.h"

#include <algorithm>
#include <memory>

#include "frontend/vhlo/attr_table.h"
#include "frontend/vhlo/text.h"
#include "ir/op_description.h"

namespace kiln::frontend::vhlo {
namespace {

using bytecode::EncodingReader;
using bytecode::File;

constexpr std::string_view kCast = "builtin.unrealized_conversion_cast";

// Variadic segment sizes an op stores: how many entries, under which name.
struct Segments {
  int count;
  const char* name;
};

class Converter {
 public:
  Converter(const File& file, std::span<const uint8_t> bytes, const OpRules& rules)
      : file_(file), bytes_(bytes), rules_(rules), table_(file, rules.codecs()) {
    for (uint32_t i = 0; i < file.op_names.size(); ++i) names_.push_back(OpFullName(file, i));
  }

  StatusOr<ir::Module> Run();

 private:
  struct Work {
    uint32_t op;
    ir::Block* block;     // null for the top-level op
    bool parent_is_func;  // the enclosing op is a function
  };

  Status IndexValueTypes();
  StatusOr<bool> FoldableCast(const File::Operation& op);
  StatusOr<std::unique_ptr<ir::Operation>> BuildOp(const Work& work);
  StatusOr<std::vector<ir::NamedAttribute>> ReadProperties(const File::Operation& op,
                                                           std::string_view name,
                                                           std::string_view where);
  // operandSegmentSizes / resultSegmentSizes of `count` entries, bytecode 6+.
  StatusOr<ir::Attribute> ReadSegmentSizes(EncodingReader& reader, int count,
                                           std::string_view what);
  Status AddRegions(const File::Operation& op, ir::Operation& target, bool is_func,
                    std::vector<Work>& stack);
  Status ResolveOperands();
  StatusOr<uint64_t> Forwarded(uint64_t id) const;

  const File& file_;
  std::span<const uint8_t> bytes_;
  const OpRules& rules_;
  AttrTypeTable table_;
  std::vector<std::string> names_;     // full op names by op-name index
  std::vector<uint64_t> value_types_;  // type index of every value id
  std::vector<ir::Value*> values_;     // by value id
  std::vector<uint64_t> forward_;      // folded cast result -> its operand
  std::vector<ir::Operation*> built_;  // by File op index; null if folded
  uint64_t folded_casts_ = 0;
};

// "op vhlo.add_v1 at byte 123", for messages; built for every op, so plain
// concatenation. Errors get the op's location added by WithLocation.
std::string Where(std::string_view name, const File::Operation& op) {
  return "op " + std::string(name) + " at byte " + std::to_string(op.offset);
}

// `status` with the source location of the op it is about appended.
Status WithLocation(Status status, const ir::Location& location) {
  if (status.ok() || !location || location.kind() == ir::LocationKind::kUnknown) return status;
  return Status(status.code(), StrCat(status.message(), " (at ", location.ToUserString(), ")"));
}

Status Converter::IndexValueTypes() {
  constexpr uint64_t kNone = ~uint64_t{0};
  value_types_.assign(file_.num_value_ids, kNone);
  for (const File::Operation& op : file_.operations) {
    for (size_t i = 0; i < op.result_ids.size(); ++i) {
      value_types_[op.result_ids[i]] = op.result_types[i];
    }
    for (const File::Region& region : op.regions) {
      for (const File::Block& block : region.blocks) {
        for (const File::Value& argument : block.arguments) {
          value_types_[argument.id] = argument.type;
        }
      }
    }
  }
  return Status::Ok();
}

// Upstream reconciles the casts that mixed-dialect artifacts put between
// VHLO and builtin types; both sides are the same Kiln type, so such a cast
// is dropped and its result forwarded to its operand.
StatusOr<bool> Converter::FoldableCast(const File::Operation& op) {
  if (!rules_.FoldIdentityCasts() || names_[op.name] != kCast || op.operand_ids.size() != 1 ||
      op.result_ids.size() != 1 || !op.regions.empty()) {
    return false;
  }
  const uint64_t operand_type = value_types_[op.operand_ids[0]];
  if (operand_type == ~uint64_t{0} || op.operand_ids[0] == op.result_ids[0]) return false;
  KILN_ASSIGN_OR_RETURN(ir::Type from, table_.Type(operand_type));
  KILN_ASSIGN_OR_RETURN(ir::Type to, table_.Type(op.result_types[0]));
  return from == to;
}

StatusOr<ir::Attribute> Converter::ReadSegmentSizes(EncodingReader& reader, int count,
                                                    std::string_view what) {
  // A sparse array: (count << 1 | sparse); dense: `count` varints; sparse:
  // an index width (at most 8 bits), then `count` varints (value << width | index).
  std::vector<int64_t> sizes(static_cast<size_t>(count), 0);
  KILN_ASSIGN_OR_RETURN(EncodingReader::FlaggedVarInt header, reader.ReadVarIntWithFlag(what));
  uint64_t width = 0;
  if (header.flag) {
    const uint64_t offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(width, reader.ReadVarInt(what));
    if (width > 8) {
      return reader.ErrorAt(offset, StrCat("expected an index width of at most 8 bits in ", what,
                                           ", found ", width));
    }
  }
  if (!header.flag && header.value > sizes.size()) {
    return reader.Error(StrCat("expected at most ", sizes.size(), " entries in ", what, ", found ",
                               header.value));
  }
  for (uint64_t i = 0; i < header.value; ++i) {
    const uint64_t offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint64_t value, reader.ReadVarInt(what));
    const uint64_t index = header.flag ? value & ((uint64_t{1} << width) - 1) : i;
    if (header.flag) value >>= width;
    if (index >= sizes.size() || value > static_cast<uint64_t>(INT32_MAX)) {
      return reader.ErrorAt(offset, StrCat("expected ", sizes.size(),
                                           " segment sizes below 2^31 "
                                           "in ",
                                           what, ", found size ", value, " at index ", index));
    }
    sizes[static_cast<size_t>(index)] = static_cast<int64_t>(value);
  }
  return ir::Attribute::DenseArray(ir::Type::Element(ElementType::kS32), std::move(sizes), {});
}

// The segment sizes `schema` names that follow its attributes as sparse
// arrays (bytecode 6+); before bytecode 6 they are dense i32 array
// attributes, stored in name order among the others, and are added to
// `schema.attributes` instead.
std::vector<Segments> TakeSegmentSizes(PropertySchema& schema, uint64_t version) {
  std::vector<Segments> segments;
  if (schema.operand_segments != 0) {
    segments.push_back({schema.operand_segments, "operandSegmentSizes"});
  }
  if (schema.result_segments != 0) {
    segments.push_back({schema.result_segments, "resultSegmentSizes"});
  }
  if (version >= bytecode::kVersionOdsSegmentSizes || segments.empty()) return segments;
  for (const Segments& segment : segments) schema.attributes.push_back({segment.name, false});
  std::sort(schema.attributes.begin(), schema.attributes.end(),
            [](const ir::InherentAttribute& a, const ir::InherentAttribute& b) {
              return a.name < b.name;
            });
  return {};
}

StatusOr<std::vector<ir::NamedAttribute>> Converter::ReadProperties(const File::Operation& op,
                                                                    std::string_view name,
                                                                    std::string_view where) {
  std::vector<ir::NamedAttribute> attributes;
  if (op.properties_attr) {  // an unregistered op: its properties as a dictionary
    KILN_ASSIGN_OR_RETURN(ir::Attribute dict,
                          table_.Attribute(*op.properties_attr, "properties", where));
    if (!dict.Is(ir::AttrKind::kDictionary)) {
      return InvalidArgument(where, ": expected a dictionary of properties, found ",
                             AttrText(dict));
    }
    return dict->fields;
  }
  if (!op.properties) return attributes;
  KILN_ASSIGN_OR_RETURN(PropertySchema schema, rules_.Properties(name, where));
  const std::vector<Segments> segments = TakeSegmentSizes(schema, file_.version);
  const std::span<const uint8_t> blob = file_.properties[*op.properties];
  const uint64_t offset = static_cast<uint64_t>(blob.data() - bytes_.data());
  const std::string context = "properties of " + std::string(where);
  EncodingReader reader(blob, offset, context);
  for (const ir::InherentAttribute& attribute : schema.attributes) {
    uint64_t index = 0;
    if (attribute.optional) {
      KILN_ASSIGN_OR_RETURN(auto ref, reader.ReadIndexWithFlag("an attribute index", attribute.name,
                                                               file_.attributes.size()));
      if (!ref.flag) continue;
      index = ref.value;
    } else {
      KILN_ASSIGN_OR_RETURN(index, reader.ReadIndex("an attribute index", attribute.name,
                                                    file_.attributes.size()));
    }
    KILN_ASSIGN_OR_RETURN(ir::Attribute value, table_.Attribute(index, attribute.name, where));
    attributes.push_back({std::string(attribute.name), std::move(value)});
  }
  for (const Segments& segment : segments) {
    KILN_ASSIGN_OR_RETURN(ir::Attribute sizes,
                          ReadSegmentSizes(reader, segment.count, segment.name));
    attributes.push_back({segment.name, std::move(sizes)});
  }
  if (!reader.empty()) {
    return reader.Error(StrCat("expected the end of the properties of ", name, " (",
                               schema.attributes.size(), " attributes), found ", reader.remaining(),
                               " more bytes"));
  }
  return attributes;
}

StatusOr<std::unique_ptr<ir::Operation>> Converter::BuildOp(const Work& work) {
  const File::Operation& op = file_.operations[work.op];
  const std::string& name = names_[op.name];
  const std::string where = Where(name, op);
  KILN_ASSIGN_OR_RETURN(ir::Location location, table_.Location(op.location, "location", where));
  if (!op.successors.empty()) {
    return WithLocation(Unimplemented(where, ": Kiln does not support ops with successor blocks"),
                        location);
  }
  StatusOr<std::vector<ir::NamedAttribute>> read = ReadProperties(op, name, where);
  if (!read.ok()) return WithLocation(read.status(), location);
  ConvertedOp converted{name, std::move(read).value()};
  if (op.attr_dict) {
    KILN_ASSIGN_OR_RETURN(ir::Attribute dict, table_.Attribute(*op.attr_dict, "attributes", where));
    if (!dict.Is(ir::AttrKind::kDictionary)) {
      return InvalidArgument(where, ": expected a dictionary of attributes, found ",
                             AttrText(dict));
    }
    converted.attributes.insert(converted.attributes.end(), dict->fields.begin(),
                                dict->fields.end());
  }
  if (Status status = rules_.Convert(converted, work.parent_is_func, where); !status.ok()) {
    return WithLocation(status, location);
  }

  auto result = std::make_unique<ir::Operation>(std::move(converted.name), std::move(location));
  for (ir::NamedAttribute& attribute : converted.attributes) {
    result->SetAttr(std::move(attribute.name), std::move(attribute.value));
  }
  for (size_t i = 0; i < op.result_ids.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ir::Type type, table_.Type(op.result_types[i]));
    values_[op.result_ids[i]] = result->AddResult(std::move(type));
  }
  return result;
}

Status Converter::AddRegions(const File::Operation& op, ir::Operation& target, bool is_func,
                             std::vector<Work>& stack) {
  for (const File::Region& region : op.regions) {
    ir::Region& new_region = target.AddRegion();
    for (const File::Block& block : region.blocks) {
      ir::Block& new_block = new_region.AddBlock();
      for (const File::Value& argument : block.arguments) {
        KILN_ASSIGN_OR_RETURN(ir::Type type, table_.Type(argument.type));
        ir::Location location = ir::Location::Unknown();
        if (argument.location) {
          KILN_ASSIGN_OR_RETURN(location, table_.Location(*argument.location, "argument location"));
        }
        values_[argument.id] = new_block.AddArgument(std::move(type), std::move(location));
      }
      // Reversed, so the first op comes off the stack (and into the block) first.
      for (size_t i = block.ops.size(); i-- > 0;) {
        stack.push_back({block.ops[i], &new_block, is_func});
      }
    }
  }
  return Status::Ok();
}

StatusOr<uint64_t> Converter::Forwarded(uint64_t id) const {
  // Chains of folded casts; each step consumes one cast, so a longer walk is a cycle.
  for (uint64_t steps = 0; forward_[id] != id; ++steps) {
    if (steps > folded_casts_) {
      return InvalidArgument("value %", id,
                             " is defined by a cycle of unrealized conversion casts");
    }
    id = forward_[id];
  }
  return id;
}

Status Converter::ResolveOperands() {
  for (size_t index = 0; index < file_.operations.size(); ++index) {
    ir::Operation* op = built_[index];
    if (op == nullptr) continue;
    for (uint64_t id : file_.operations[index].operand_ids) {
      KILN_ASSIGN_OR_RETURN(uint64_t source, Forwarded(id));
      if (values_[source] == nullptr) {
        return InvalidArgument("op ", op->name(), " at byte ", file_.operations[index].offset,
                               ": operand %", id, " has no definition");
      }
      op->AddOperand(values_[source]);
    }
  }
  return Status::Ok();
}

StatusOr<ir::Module> Converter::Run() {
  if (file_.top_level.size() != 1 ||
      names_[file_.operations[file_.top_level[0]].name] != "builtin.module") {
    std::string found = StrCat(file_.top_level.size(), " ops");
    if (file_.top_level.size() == 1) {
      const File::Operation& op = file_.operations[file_.top_level[0]];
      found = Where(names_[op.name], op);
    }
    return InvalidArgument("expected the file to hold one builtin.module at the top level, "
                           "found ",
                           found);
  }
  KILN_RETURN_IF_ERROR(IndexValueTypes());
  values_.assign(file_.num_value_ids, nullptr);
  forward_.resize(file_.num_value_ids);
  for (uint64_t id = 0; id < forward_.size(); ++id) forward_[id] = id;
  built_.assign(file_.operations.size(), nullptr);

  std::unique_ptr<ir::Module> module;
  std::vector<Work> stack{{file_.top_level[0], nullptr, false}};
  while (!stack.empty()) {
    const Work work = stack.back();
    stack.pop_back();
    const File::Operation& op = file_.operations[work.op];
    KILN_ASSIGN_OR_RETURN(bool fold, FoldableCast(op));
    if (fold) {
      forward_[op.result_ids[0]] = op.operand_ids[0];
      ++folded_casts_;
      continue;
    }
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<ir::Operation> built, BuildOp(work));
    const std::string& name = names_[op.name];
    const bool is_func = name == "vhlo.func_v1" || name == "func.func";
    ir::Operation* raw = built.get();
    built_[work.op] = raw;
    if (work.block == nullptr) {
      module = std::make_unique<ir::Module>(std::move(built));
    } else {
      work.block->Append(std::move(built));
    }
    KILN_RETURN_IF_ERROR(AddRegions(op, *raw, is_func, stack));
  }
  if (module->op().num_regions() != 1 || module->op().region(0).num_blocks() != 1) {
    return InvalidArgument("expected the builtin.module to have one region with one block");
  }
  KILN_RETURN_IF_ERROR(ResolveOperands());
  return std::move(*module);
}

}  // namespace

std::optional<PropertySchema> KnownPropertySchema(std::string_view op_name) {
  std::optional<std::vector<ir::InherentAttribute>> attributes = ir::InherentAttributes(op_name);
  if (!attributes) return std::nullopt;
  PropertySchema schema;
  schema.attributes = std::move(*attributes);
  if (const ir::OpDescription* description = ir::FindOpDescription(op_name)) {
    for (const ir::AttributeDescription& attribute : description->attributes) {
      if (attribute.name == "operandSegmentSizes") schema.operand_segments = attribute.entries;
      if (attribute.name == "resultSegmentSizes") schema.result_segments = attribute.entries;
    }
  }
  std::sort(schema.attributes.begin(), schema.attributes.end(),
            [](const ir::InherentAttribute& a, const ir::InherentAttribute& b) {
              return a.name < b.name;
            });
  return schema;
}

StatusOr<ir::Module> BuildModule(const File& file, std::span<const uint8_t> bytes,
                                 const OpRules& rules) {
  Converter converter(file, bytes, rules);
  return converter.Run();
}

}  // namespace kiln::frontend::vhlo
