// The IR section: a tree of operations, regions and blocks, walked with an
// explicit stack of frames (one per operation whose regions are being read),
// so nesting depth costs heap, not native stack.
//
// Values. MLIR numbers values per scope: each op whose regions are isolated
// from above opens a scope; each region being read reserves `numValues` slots
// at the end of its scope (after those of the enclosing regions), defines them
// in order (block arguments, op results), and releases them when done, so
// sibling regions reuse slot numbers. Operands name slots, possibly before
// their definition. Here each reservation also takes fresh file-wide ids, one
// per slot, so a slot's id is known when it is first named and forward
// references need no patching; a named slot never defined is an error when its
// region ends.
#include "frontend/bytecode/ir_reader.h"

#include <limits>
#include <vector>

namespace kiln::frontend::bytecode {
namespace {

// Bits of an operation's encoding mask.
constexpr uint8_t kHasAttrs = 0x01;
constexpr uint8_t kHasResults = 0x02;
constexpr uint8_t kHasOperands = 0x04;
constexpr uint8_t kHasSuccessors = 0x08;
constexpr uint8_t kHasRegions = 0x10;
constexpr uint8_t kHasUseListOrders = 0x20;
constexpr uint8_t kHasProperties = 0x40;
constexpr uint8_t kKnownMaskBits = 0x7F;

// The frame of the top-level block, which belongs to no operation.
constexpr uint32_t kTopLevel = std::numeric_limits<uint32_t>::max();

// A value slot of a scope.
struct Slot {
  uint64_t id = 0;                 // the file-wide value id
  uint64_t first_forward_use = 0;  // offset of the first operand naming it before definition
  bool defined = false;
};

// The slots [begin, end) reserved by a region being read; `next` is defined next.
struct RegionSlots {
  size_t begin = 0;
  size_t next = 0;
  size_t end = 0;
};

// The values operands may name: those of the regions being read inside one
// isolated-from-above op (or the top level).
struct Scope {
  std::vector<Slot> slots;
  std::vector<RegionSlots> regions;
};

// An operation whose regions are being read, or the top-level block.
struct Frame {
  uint32_t op = kTopLevel;   // index into File::operations
  size_t reader = 0;         // index into IrReader::readers_
  bool owns_reader = false;  // the regions sit in a nested IR section of their own
  bool opens_scope = false;  // the regions are isolated from above
  size_t region = 0;         // the region being read
  bool in_region = false;    // its header has been read and its blocks are being read
  uint64_t block = 0;        // the block being read
  uint64_t num_blocks = 0;
  uint64_t ops_left = 0;    // operations of the block not yet read
  bool has_values = false;  // the region reserved value slots
};

class IrReader {
 public:
  IrReader(File& file, uint64_t file_size) : file_(file), budget_(file_size) {}

  Status Read(const RawSection& section) {
    readers_.emplace_back(section.data, section.data_offset, SectionContext(section.id));
    scopes_.emplace_back();
    scopes_.back().regions.push_back({});
    Frame top;
    top.owns_reader = true;
    top.opens_scope = true;
    top.in_region = true;
    top.num_blocks = 1;
    KILN_RETURN_IF_ERROR(ReadBlockHeader(readers_.back(), top));
    frames_.push_back(top);
    while (!frames_.empty()) KILN_RETURN_IF_ERROR(Step());
    file_.num_value_ids = next_value_id_;
    return Status::Ok();
  }

 private:
  // Advances the innermost frame by one piece: a region header, an operation,
  // a block header, or the end of a region or of the frame.
  Status Step() {
    Frame& frame = frames_.back();
    EncodingReader& reader = readers_[frame.reader];
    if (frame.op == kTopLevel) {
      if (frame.ops_left == 0) return FinishFrame();
      --frame.ops_left;
      return ReadOperationAndDescend();
    }
    if (!frame.in_region) {
      if (frame.region == file_.operations[frame.op].regions.size()) return FinishFrame();
      return StartRegion(reader, frame);
    }
    if (frame.ops_left > 0) {
      --frame.ops_left;
      return ReadOperationAndDescend();
    }
    if (frame.block + 1 < frame.num_blocks) {
      ++frame.block;
      return ReadBlockHeader(reader, frame);
    }
    KILN_RETURN_IF_ERROR(ReleaseSlots());
    frame.in_region = false;
    ++frame.region;
    return Status::Ok();
  }

  // The end of an op's regions: its nested section must be used up exactly.
  Status FinishFrame() {
    const Frame frame = frames_.back();
    if (frame.owns_reader) {
      const EncodingReader& reader = readers_[frame.reader];
      if (!reader.empty()) {
        return reader.Error(StrCat("expected the end of the IR section after ",
                                   frame.op == kTopLevel ? std::string("the top-level block")
                                                         : "the regions of " + OpLabel(frame.op),
                                   ", found ", reader.remaining(), " more bytes"));
      }
      readers_.pop_back();
    }
    if (frame.opens_scope) scopes_.pop_back();
    frames_.pop_back();
    return Status::Ok();
  }

  // region: numBlocks, then (if any) numValues and the first block's header.
  Status StartRegion(EncodingReader& reader, Frame& frame) {
    const uint64_t blocks_offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint64_t num_blocks, reader.ReadCount("the block count of a region"));
    if (num_blocks == 0) {
      ++frame.region;
      return Status::Ok();
    }
    KILN_RETURN_IF_ERROR(Claim(reader, blocks_offset, num_blocks, "blocks"));
    const uint64_t values_offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint64_t num_values, reader.ReadCount("the value count of a region"));
    KILN_RETURN_IF_ERROR(Claim(reader, values_offset, num_values, "values"));
    file_.operations[frame.op].regions[frame.region].blocks.resize(num_blocks);
    frame.in_region = true;
    frame.block = 0;
    frame.num_blocks = num_blocks;
    frame.has_values = num_values > 0;
    ReserveSlots(num_values);
    return ReadBlockHeader(reader, frame);
  }

  // block: (numOps << 1 | hasArgs), then the arguments and, from v3, a
  // use-list-order flag byte and the orders it announces.
  Status ReadBlockHeader(EncodingReader& reader, Frame& frame) {
    KILN_ASSIGN_OR_RETURN(EncodingReader::FlaggedVarInt header,
                          reader.ReadVarIntWithFlag("a block header (op count, has-arguments)"));
    frame.ops_left = header.value;
    if (!header.flag) return Status::Ok();
    if (frame.op == kTopLevel) {
      return reader.Error("expected a top-level block without arguments, found arguments");
    }
    std::vector<File::Value>& arguments =
        file_.operations[frame.op].regions[frame.region].blocks[frame.block].arguments;
    const uint64_t count_offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("the block argument count"));
    arguments.resize(count);
    for (File::Value& argument : arguments) {
      KILN_RETURN_IF_ERROR(ReadBlockArgument(reader, argument));
    }
    std::vector<uint64_t> ids;
    KILN_RETURN_IF_ERROR(DefineValues(reader, count_offset, count, "block arguments", ids));
    for (uint64_t i = 0; i < count; ++i) arguments[i].id = ids[i];
    if (file_.version < kVersionUseListOrdering) return Status::Ok();
    KILN_ASSIGN_OR_RETURN(uint8_t has_orders, reader.ReadByte("the block's use-list-order flag"));
    if (has_orders != 0) return SkipUseListOrders(reader, count);
    return Status::Ok();
  }

  // Before v4: type, location. From v4: (type << 1 | hasLocation) [location].
  Status ReadBlockArgument(EncodingReader& reader, File::Value& argument) {
    const uint64_t num_types = file_.types.size();
    const uint64_t num_attributes = file_.attributes.size();
    if (file_.version < kVersionElideBlockArgLocation) {
      KILN_ASSIGN_OR_RETURN(argument.type, reader.ReadIndex("a block argument type", num_types));
      KILN_ASSIGN_OR_RETURN(argument.location,
                            reader.ReadIndex("a block argument location", num_attributes));
      return Status::Ok();
    }
    KILN_ASSIGN_OR_RETURN(EncodingReader::FlaggedVarInt type,
                          reader.ReadIndexWithFlag("a block argument type", num_types));
    argument.type = type.value;
    if (type.flag) {
      KILN_ASSIGN_OR_RETURN(argument.location,
                            reader.ReadIndex("a block argument location", num_attributes));
    }
    return Status::Ok();
  }

  // Reads the next operation of the innermost frame's block and, if it has
  // regions, pushes a frame for them (and a reader for a nested IR section).
  Status ReadOperationAndDescend() {
    const size_t reader_index = frames_.back().reader;
    KILN_ASSIGN_OR_RETURN(uint32_t index, ReadOperation(readers_[reader_index], frames_.back()));
    const File::Operation& op = file_.operations[index];
    if (op.regions.empty()) return Status::Ok();
    Frame child;
    child.op = index;
    child.reader = reader_index;
    child.opens_scope = op.isolated;
    if (op.isolated && file_.version >= kVersionLazyLoading) {
      EncodingReader& reader = readers_[reader_index];
      KILN_ASSIGN_OR_RETURN(RawSection nested, reader.ReadSection("the regions of an isolated op"));
      if (nested.id != static_cast<uint8_t>(SectionId::kIR)) {
        return reader.ErrorAt(nested.header_offset,
                              StrCat("expected an IR section (id 4) holding the regions of ",
                                     OpLabel(index), ", found a ", SectionName(nested.id),
                                     " section"));
      }
      child.reader = readers_.size();
      child.owns_reader = true;
      readers_.emplace_back(nested.data, nested.data_offset, SectionContext(nested.id));
    }
    if (op.isolated) scopes_.emplace_back();
    frames_.push_back(child);
    return Status::Ok();
  }

  // op: name, mask, location, [attrs], [properties], [results], [operands],
  // [successors], [use-list orders], [(numRegions << 1 | isolated)]. Appends
  // the op to the frame's current block; regions are read later.
  StatusOr<uint32_t> ReadOperation(EncodingReader& reader, const Frame& frame) {
    if (file_.operations.size() >= kTopLevel) {
      return reader.Error("expected fewer than 2^32 - 1 operations in one file");
    }
    File::Operation op;
    op.offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint64_t name,
                          reader.ReadIndex("an op name index", file_.op_names.size()));
    op.name = static_cast<uint32_t>(name);
    const uint64_t mask_offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint8_t mask, reader.ReadByte("the op encoding mask"));
    if ((mask & ~kKnownMaskBits) != 0) {
      return reader.ErrorAt(mask_offset,
                            StrCat("expected an op encoding mask within 0x7F, found ",
                                   HexByte(mask), " (op ", OpFullName(file_, op), ")"));
    }
    const uint64_t num_attributes = file_.attributes.size();
    KILN_ASSIGN_OR_RETURN(op.location, reader.ReadIndex("an op location", num_attributes));
    if (mask & kHasAttrs) {
      KILN_ASSIGN_OR_RETURN(op.attr_dict,
                            reader.ReadIndex("an op attribute dictionary", num_attributes));
    }
    if (mask & kHasProperties) KILN_RETURN_IF_ERROR(ReadProperties(reader, op));
    if (mask & kHasResults) {
      KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("the result count"));
      op.result_types.resize(count);
      for (uint64_t& type : op.result_types) {
        KILN_ASSIGN_OR_RETURN(type, reader.ReadIndex("a result type", file_.types.size()));
      }
    }
    if (mask & kHasOperands) {
      KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("the operand count"));
      op.operand_ids.resize(count);
      for (uint64_t& id : op.operand_ids) {
        KILN_ASSIGN_OR_RETURN(id, ReadOperand(reader));
      }
    }
    if (mask & kHasSuccessors) {
      KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("the successor count"));
      op.successors.resize(count);
      for (uint64_t& block : op.successors) {
        KILN_ASSIGN_OR_RETURN(block, reader.ReadIndex("a successor block", frame.num_blocks));
      }
    }
    if ((mask & kHasUseListOrders) && file_.version >= kVersionUseListOrdering) {
      KILN_RETURN_IF_ERROR(SkipUseListOrders(reader, op.result_types.size()));
    }
    if (mask & kHasRegions) KILN_RETURN_IF_ERROR(ReadRegionCount(reader, op));
    KILN_RETURN_IF_ERROR(DefineResults(reader, frame, op));
    const auto index = static_cast<uint32_t>(file_.operations.size());
    file_.operations.push_back(std::move(op));
    BlockOps(frame).push_back(index);
    return index;
  }

  // Registered ops (v5+) name an entry of the properties section; others
  // store their properties as an attribute.
  Status ReadProperties(EncodingReader& reader, File::Operation& op) {
    const std::optional<bool> registered = file_.op_names[op.name].registered;
    if (!registered.has_value()) {
      return reader.Error(StrCat("expected no properties on ", OpFullName(file_, op),
                                 " in bytecode version ", file_.version,
                                 " (properties came in version 5), found the flag set"));
    }
    if (*registered) {
      KILN_ASSIGN_OR_RETURN(op.properties,
                            reader.ReadIndex("a properties index", file_.properties.size()));
    } else {
      KILN_ASSIGN_OR_RETURN(op.properties_attr, reader.ReadIndex("an op properties attribute",
                                                                 file_.attributes.size()));
    }
    return Status::Ok();
  }

  Status ReadRegionCount(EncodingReader& reader, File::Operation& op) {
    const uint64_t start = reader.offset();
    KILN_ASSIGN_OR_RETURN(EncodingReader::FlaggedVarInt regions,
                          reader.ReadVarIntWithFlag("the region count and isolation flag"));
    if (regions.value > reader.remaining()) {
      return reader.ErrorAt(start, StrCat("expected a region count of at most ", reader.remaining(),
                                          " (one byte each), found ", regions.value));
    }
    KILN_RETURN_IF_ERROR(Claim(reader, start, regions.value, "regions"));
    op.regions.resize(regions.value);
    op.isolated = regions.flag;
    return Status::Ok();
  }

  // Results take the region's next slots; in a region that reserved none (the
  // top level) they get ids no operand can name, as in MLIR.
  Status DefineResults(EncodingReader& reader, const Frame& frame, File::Operation& op) {
    const uint64_t count = op.result_types.size();
    if (frame.has_values) return DefineValues(reader, op.offset, count, "results", op.result_ids);
    KILN_RETURN_IF_ERROR(Claim(reader, op.offset, count, "values"));
    op.result_ids.reserve(count);
    for (uint64_t i = 0; i < count; ++i) op.result_ids.push_back(next_value_id_++);
    return Status::Ok();
  }

  StatusOr<uint64_t> ReadOperand(EncodingReader& reader) {
    const uint64_t start = reader.offset();
    Scope& scope = scopes_.back();
    KILN_ASSIGN_OR_RETURN(uint64_t index, reader.ReadIndex("an operand (a value index of the "
                                                           "scope)",
                                                           scope.slots.size()));
    Slot& slot = scope.slots[index];
    if (!slot.defined && slot.first_forward_use == 0) slot.first_forward_use = start;
    return slot.id;
  }

  // Gives the next `count` slots of the current region to new values.
  Status DefineValues(const EncodingReader& reader, uint64_t offset, uint64_t count,
                      std::string_view what, std::vector<uint64_t>& ids) {
    Scope& scope = scopes_.back();
    RegionSlots& region = scope.regions.back();
    if (count > region.end - region.next) {
      return reader.ErrorAt(offset,
                            StrCat("expected at most ", region.end - region.next,
                                   " more values in this region (it declared ",
                                   region.end - region.begin, "), found ", count, " ", what));
    }
    ids.reserve(count);
    for (uint64_t i = 0; i < count; ++i) {
      Slot& slot = scope.slots[region.next++];
      slot.defined = true;
      ids.push_back(slot.id);
    }
    return Status::Ok();
  }

  void ReserveSlots(uint64_t count) {
    Scope& scope = scopes_.back();
    const size_t begin = scope.slots.size();
    scope.slots.resize(begin + count);
    for (uint64_t i = 0; i < count; ++i) scope.slots[begin + i].id = next_value_id_++;
    scope.regions.push_back({begin, begin, begin + count});
  }

  // The end of a region: every slot an operand named must have been defined.
  Status ReleaseSlots() {
    Scope& scope = scopes_.back();
    const RegionSlots region = scope.regions.back();
    for (size_t i = region.begin; i < region.end; ++i) {
      const Slot& slot = scope.slots[i];
      if (!slot.defined && slot.first_forward_use != 0) {
        return readers_[frames_.back().reader].ErrorAt(
            slot.first_forward_use,
            StrCat("operand names value #", i, " of its scope, which its region never defines"));
      }
    }
    scope.slots.resize(region.begin);
    scope.regions.pop_back();
    return Status::Ok();
  }

  // Use-list orders only restore the order of a value's uses; Kiln does not
  // need them. [count if the range has several values] then per value:
  // [value index if several], (numIndices << 1 | isPairs), indices.
  Status SkipUseListOrders(EncodingReader& reader, uint64_t range_size) {
    uint64_t entries = 1;
    if (range_size > 1) {
      KILN_ASSIGN_OR_RETURN(entries, reader.ReadCount("the use-list order count"));
    }
    for (uint64_t entry = 0; entry < entries; ++entry) {
      if (range_size > 1) {
        KILN_RETURN_IF_ERROR(reader.ReadIndex("a use-list order's value", range_size).status());
      }
      const uint64_t start = reader.offset();
      KILN_ASSIGN_OR_RETURN(EncodingReader::FlaggedVarInt indices,
                            reader.ReadVarIntWithFlag("a use-list order's index count"));
      if (indices.value > reader.remaining()) {
        return reader.ErrorAt(start, StrCat("expected a use-list index count of at most ",
                                            reader.remaining(), ", found ", indices.value));
      }
      for (uint64_t i = 0; i < indices.value; ++i) {
        KILN_RETURN_IF_ERROR(reader.ReadVarInt("a use-list index").status());
      }
    }
    return Status::Ok();
  }

  // Every region, block and value of an honest file takes a distinct byte, so
  // their total never exceeds the file size; this keeps memory (and value ids)
  // bounded by the input even when nested counts each look plausible alone.
  Status Claim(const EncodingReader& reader, uint64_t offset, uint64_t count,
               std::string_view what) {
    if (count > budget_) {
      return reader.ErrorAt(offset, StrCat("expected at most ", budget_, " more ", what,
                                           " in a file of this size, found ", count));
    }
    budget_ -= count;
    return Status::Ok();
  }

  std::vector<uint32_t>& BlockOps(const Frame& frame) {
    if (frame.op == kTopLevel) return file_.top_level;
    return file_.operations[frame.op].regions[frame.region].blocks[frame.block].ops;
  }

  std::string OpLabel(uint32_t index) const {
    const File::Operation& op = file_.operations[index];
    return StrCat(OpFullName(file_, op), " (at byte ", op.offset, ")");
  }

  File& file_;
  uint64_t budget_;
  uint64_t next_value_id_ = 0;
  std::vector<EncodingReader> readers_;
  std::vector<Scope> scopes_;
  std::vector<Frame> frames_;
};

}  // namespace

Status ReadIrSection(const RawSection& section, uint64_t file_size, File& file) {
  return IrReader(file, file_size).Read(section);
}

}  // namespace kiln::frontend::bytecode
