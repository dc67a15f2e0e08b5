// The lowest layer of the MLIR bytecode reader: bounds-checked primitives
// (prefix varints, zigzag varints, flagged varints, byte ranges, NUL-terminated
// strings, alignment padding, section headers) over one range of a file.
// Every failure is an INVALID_ARGUMENT naming the absolute byte offset in the
// file, what was expected there and which section was being read, e.g.
//   "byte 1234: expected a varint (operand count), found end of input (section IR)".
// Readers hold a `context` string for that last part: "section IR", "file header".
// docs/formats/mlir-bytecode.md describes the encoding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kiln::frontend::bytecode {

// Section ids (the low 7 bits of a section's first byte).
enum class SectionId : uint8_t {
  kString = 0,
  kDialect = 1,
  kAttrType = 2,
  kAttrTypeOffset = 3,
  kIR = 4,
  kResource = 5,
  kResourceOffset = 6,
  kDialectVersions = 7,
  kProperties = 8,
};
inline constexpr int kNumSectionIds = 9;
// The byte that fills alignment padding before aligned data.
inline constexpr uint8_t kAlignmentByte = 0xCB;

// A byte as messages show it: "0x0A".
std::string HexByte(uint8_t byte);

// Human-readable name of a section id ("IR", "string", ...), "unknown" past 8.
std::string_view SectionName(uint8_t id);
// The reader context for a section's contents: "section IR", "section string", ...
std::string_view SectionContext(uint8_t id);

// A section's header and contents as found in the file.
struct RawSection {
  uint8_t id = 0;                 // SectionId value, already checked to be known
  uint64_t header_offset = 0;     // absolute offset of the id byte
  uint64_t data_offset = 0;       // absolute offset of the first content byte
  std::span<const uint8_t> data;  // the contents, after any alignment padding
};

// Reads primitives from `data`, which starts at absolute file offset
// `base_offset`. The reader borrows `data` and `context`; both must outlive it.
class EncodingReader {
 public:
  // `context` names what the range holds, for messages: "section IR", "file header".
  EncodingReader(std::span<const uint8_t> data, uint64_t base_offset, std::string_view context)
      : data_(data), base_offset_(base_offset), context_(context) {}

  bool empty() const { return position_ == data_.size(); }
  size_t remaining() const { return data_.size() - position_; }
  // Absolute file offset of the next byte to read.
  uint64_t offset() const { return base_offset_ + position_; }
  std::string_view context() const { return context_; }

  // In every reader below, `what` names the item for messages ("operand count").
  StatusOr<uint8_t> ReadByte(std::string_view what);
  // `size` raw bytes; the span points into the reader's data.
  StatusOr<std::span<const uint8_t>> ReadBytes(uint64_t size, std::string_view what);
  // A prefix varint: the count of trailing zero bits in the first byte is the
  // count of extra bytes; a first byte of 0 means 8 little-endian bytes follow.
  StatusOr<uint64_t> ReadVarInt(std::string_view what);
  // A zigzag-encoded varint.
  StatusOr<int64_t> ReadSignedVarInt(std::string_view what);
  // A varint holding (value << 1) | flag.
  struct FlaggedVarInt {
    uint64_t value = 0;
    bool flag = false;
  };
  StatusOr<FlaggedVarInt> ReadVarIntWithFlag(std::string_view what);
  // A count of items that each take at least `min_bytes_each` bytes of what
  // remains: a larger count cannot be honest, and is rejected before anyone
  // allocates for it.
  StatusOr<uint64_t> ReadCount(std::string_view what, uint64_t min_bytes_each = 1);
  // A varint that must be below `limit` (an index into a table of that size).
  StatusOr<uint64_t> ReadIndex(std::string_view what, uint64_t limit) {
    return ReadIndex({}, what, limit);
  }
  // The same, naming the kind of index apart from the item, for messages
  // like "expected an attribute index (sym_name) below 7, found 9".
  StatusOr<uint64_t> ReadIndex(std::string_view kind, std::string_view what, uint64_t limit);
  // A flagged varint whose value must be below `limit`.
  StatusOr<FlaggedVarInt> ReadIndexWithFlag(std::string_view what, uint64_t limit) {
    return ReadIndexWithFlag({}, what, limit);
  }
  StatusOr<FlaggedVarInt> ReadIndexWithFlag(std::string_view kind, std::string_view what,
                                            uint64_t limit);
  // Characters up to a NUL byte, which is consumed but not returned.
  StatusOr<std::string_view> ReadNulTerminatedString(std::string_view what);
  // Skips 0xCB padding bytes until the absolute offset is a multiple of
  // `alignment` (a power of two). Offsets count from the start of the file.
  Status AlignTo(uint64_t alignment);
  // A section: id byte (bit 7 = aligned), varint length, [varint alignment,
  // padding], contents. Unknown ids are rejected.
  StatusOr<RawSection> ReadSection(std::string_view what);

  // "byte <offset>: <message> (<context>)" as INVALID_ARGUMENT.
  Status ErrorAt(uint64_t offset, std::string_view message) const;
  // The same at the current offset.
  Status Error(std::string_view message) const { return ErrorAt(offset(), message); }

 private:
  Status EndOfInput(std::string_view expected) const;
  Status IndexError(uint64_t offset, std::string_view kind, std::string_view what, uint64_t limit,
                    uint64_t index) const;

  std::span<const uint8_t> data_;
  size_t position_ = 0;
  uint64_t base_offset_ = 0;
  std::string_view context_;
};

}  // namespace kiln::frontend::bytecode
