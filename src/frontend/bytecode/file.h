// The MLIR bytecode container, read but not interpreted: the tables of a
// bytecode file (strings, dialects, op names, raw attribute/type encodings,
// properties, resources) and its operations as a tree of indices. Dialect
// content (what an attribute's bytes mean, what an op is) is for the layers
// above. docs/formats/mlir-bytecode.md describes the format.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::frontend::bytecode {

// Bytecode versions (mlir/include/mlir/Bytecode/Encoding.h) and what each added.
enum BytecodeVersion : uint64_t {
  kVersionDialectVersioning = 1,      // dialects may carry a version section
  kVersionLazyLoading = 2,            // isolated regions sit in nested IR sections
  kVersionUseListOrdering = 3,        // use-list orders after results and block arguments
  kVersionElideBlockArgLocation = 4,  // (type << 1 | hasLocation) block args; op-name count
  kVersionNativeProperties = 5,       // properties section; op names carry "registered"
  kVersionOdsSegmentSizes = 6,        // operand segment sizes move into properties
};
inline constexpr uint64_t kMinBytecodeVersion = 0;
inline constexpr uint64_t kMaxBytecodeVersion = 6;

// One decoded bytecode file. Spans point into the bytes given to ReadFile: the
// File borrows them and must not outlive them. Every index stored here was
// checked against its table when read, so users may index without checking.
struct File {
  struct Dialect {
    std::string name;
    std::span<const uint8_t> version;  // the dialect's own version encoding; may be empty
  };
  struct OpName {
    uint32_t dialect = 0;  // index into dialects
    std::string name;      // without the dialect prefix: "add_v1"
    // Whether the writer knew the op; recorded from version 5 on. Registered
    // ops keep properties in the properties section, others in an attribute.
    std::optional<bool> registered;
  };
  // One attribute or type: its dialect and its raw encoding. With `custom`
  // the bytes are the dialect's own encoding; without, NUL-terminated text in
  // MLIR assembly syntax (see TextualEntry).
  struct AttrTypeEntry {
    uint32_t dialect = 0;
    bool custom = false;
    std::span<const uint8_t> bytes;
    uint64_t offset = 0;  // absolute offset of bytes, for messages
  };
  // A resource from the resource sections (large constants kept out of line).
  struct Resource {
    enum class Kind : uint8_t { kBlob = 0, kBool = 1, kString = 2 };
    std::string group;  // the external provider's key or the dialect's name
    bool dialect_group = false;
    std::string key;
    Kind kind = Kind::kBlob;
    std::span<const uint8_t> bytes;  // raw; a blob is {alignment, size, padding, data}
  };
  // A value: a block argument or an op result. Ids are unique in the whole
  // file (MLIR's per-scope numbering is resolved), all below num_value_ids.
  struct Value {
    uint64_t id = 0;
    uint64_t type = 0;                 // index into types
    std::optional<uint64_t> location;  // index into attributes; none = unknown location
  };
  struct Block {
    std::vector<Value> arguments;
    std::vector<uint32_t> ops;  // indices into operations, in order
  };
  struct Region {
    std::vector<Block> blocks;  // may be empty
  };
  struct Operation {
    uint32_t name = 0;                  // index into op_names
    uint64_t location = 0;              // index into attributes
    std::optional<uint64_t> attr_dict;  // index into attributes (a dictionary)
    // Registered ops (version 5+): index into properties.
    std::optional<uint64_t> properties;
    // Unregistered ops (version 5+): their properties as an index into attributes.
    std::optional<uint64_t> properties_attr;
    std::vector<uint64_t> result_types;  // indices into types
    std::vector<uint64_t> result_ids;    // value ids, one per result
    std::vector<uint64_t> operand_ids;   // value ids; may refer to later definitions
    std::vector<uint64_t> successors;    // block indices within the enclosing region
    std::vector<Region> regions;
    bool isolated = false;  // the writer marked the regions isolated from above
    uint64_t offset = 0;    // absolute offset of the op's encoding, for messages
  };

  uint64_t version = 0;
  std::string producer;
  uint64_t producer_offset = 0;  // absolute offset of the producer string, for messages
  std::vector<std::string> strings;
  std::vector<Dialect> dialects;
  std::vector<OpName> op_names;
  std::vector<AttrTypeEntry> attributes;
  std::vector<AttrTypeEntry> types;
  std::vector<std::span<const uint8_t>> properties;  // raw, each the op's own encoding
  std::vector<Resource> resources;
  // Every operation in the file, parents before children (pre-order).
  std::vector<Operation> operations;
  // The operations of the file's top-level block (for StableHLO: one builtin.module).
  std::vector<uint32_t> top_level;
  uint64_t num_value_ids = 0;  // value ids are in [0, num_value_ids); at most the file size
};

// True if `bytes` starts with the MLIR bytecode magic "ML\xEFR".
bool IsBytecode(std::span<const uint8_t> bytes);

// Reads a whole bytecode file (versions 0 to 6). Errors are INVALID_ARGUMENT
// naming the byte offset and what was expected there. Work and memory are
// bounded by the size of `bytes`; nesting depth uses no native stack.
StatusOr<File> ReadFile(std::span<const uint8_t> bytes);

// "dialect.name" of an op name ("vhlo.add_v1"); an empty name gives the dialect's.
std::string OpFullName(const File& file, uint32_t op_name);
inline std::string OpFullName(const File& file, const File::Operation& op) {
  return OpFullName(file, op.name);
}

// The text of an attribute or type entry without a custom encoding (MLIR
// assembly syntax, e.g. "!foo.bar<3>"). INVALID_ARGUMENT if the entry is
// custom-encoded, lacks its NUL, or has bytes after it.
StatusOr<std::string_view> TextualEntry(const File::AttrTypeEntry& entry);

// A readable listing of the tables and the op tree (value ids as %N, attribute
// indices as #N, types as !N, properties as <N>), for tests and `kiln inspect`.
std::string DumpFile(const File& file);

}  // namespace kiln::frontend::bytecode
