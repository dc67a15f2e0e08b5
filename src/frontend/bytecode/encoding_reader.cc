#include "frontend/bytecode/encoding_reader.h"

#include <bit>
#include <cstring>

namespace kiln::frontend::bytecode {
namespace {

// Little-endian value of up to 8 bytes.
uint64_t LoadLittleEndian(const uint8_t* bytes, size_t count) {
  uint64_t value = 0;
  for (size_t i = count; i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

}  // namespace

std::string HexByte(uint8_t byte) {
  static constexpr char kDigits[] = "0123456789ABCDEF";
  return {'0', 'x', kDigits[byte >> 4], kDigits[byte & 15]};
}

std::string_view SectionName(uint8_t id) {
  static constexpr std::string_view kNames[kNumSectionIds] = {
      "string",    "dialect",  "attribute/type",  "attribute/type offset",
      "IR",        "resource", "resource offset", "dialect versions",
      "properties"};
  return id < kNumSectionIds ? kNames[id] : "unknown";
}

std::string_view SectionContext(uint8_t id) {
  static constexpr std::string_view kContexts[kNumSectionIds] = {"section string",
                                                                 "section dialect",
                                                                 "section attribute/type",
                                                                 "section attribute/type offset",
                                                                 "section IR",
                                                                 "section resource",
                                                                 "section resource offset",
                                                                 "section dialect versions",
                                                                 "section properties"};
  return id < kNumSectionIds ? kContexts[id] : "unknown section";
}

Status EncodingReader::ErrorAt(uint64_t offset, std::string_view message) const {
  return InvalidArgument("byte ", offset, ": ", message, " (", context_, ")");
}

Status EncodingReader::EndOfInput(std::string_view expected) const {
  return Error(StrCat("expected ", expected, ", found end of input"));
}

StatusOr<uint8_t> EncodingReader::ReadByte(std::string_view what) {
  if (empty()) return EndOfInput(StrCat("a byte (", what, ")"));
  return data_[position_++];
}

StatusOr<std::span<const uint8_t>> EncodingReader::ReadBytes(uint64_t size, std::string_view what) {
  if (size > remaining()) {
    return Error(StrCat("expected ", size, " bytes (", what, "), found only ", remaining(),
                        " before end of input"));
  }
  std::span<const uint8_t> bytes = data_.subspan(position_, static_cast<size_t>(size));
  position_ += static_cast<size_t>(size);
  return bytes;
}

StatusOr<uint64_t> EncodingReader::ReadVarInt(std::string_view what) {
  if (empty()) return EndOfInput(StrCat("a varint (", what, ")"));
  const uint8_t first = data_[position_];
  if (first & 1) {  // the common one-byte case
    ++position_;
    return static_cast<uint64_t>(first >> 1);
  }
  // Trailing zeros of the first byte count the extra bytes; none set means 8
  // extra bytes holding the whole value.
  const size_t extra = first == 0 ? 8 : static_cast<size_t>(std::countr_zero(first));
  if (remaining() < 1 + extra) {
    return EndOfInput(StrCat("a ", 1 + extra, "-byte varint (", what, ")"));
  }
  uint64_t value;
  if (first == 0) {
    value = LoadLittleEndian(&data_[position_ + 1], 8);
  } else {
    value = LoadLittleEndian(&data_[position_], 1 + extra) >> (extra + 1);
  }
  position_ += 1 + extra;
  return value;
}

StatusOr<int64_t> EncodingReader::ReadSignedVarInt(std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t encoded, ReadVarInt(what));
  // Zigzag: the low bit is the sign.
  return static_cast<int64_t>((encoded >> 1) ^ (~(encoded & 1) + 1));
}

StatusOr<EncodingReader::FlaggedVarInt> EncodingReader::ReadVarIntWithFlag(std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t encoded, ReadVarInt(what));
  return FlaggedVarInt{encoded >> 1, (encoded & 1) != 0};
}

StatusOr<uint64_t> EncodingReader::ReadCount(std::string_view what, uint64_t min_bytes_each) {
  const uint64_t start = offset();
  KILN_ASSIGN_OR_RETURN(uint64_t count, ReadVarInt(what));
  if (min_bytes_each > 0 && count > remaining() / min_bytes_each) {
    return ErrorAt(start, StrCat("expected ", what, " of at most ", remaining() / min_bytes_each,
                                 " (only ", remaining(), " bytes remain), found ", count));
  }
  return count;
}

Status EncodingReader::IndexError(uint64_t offset, std::string_view kind, std::string_view what,
                                  uint64_t limit, uint64_t index) const {
  return ErrorAt(offset, StrCat("expected ", kind.empty() ? what : StrCat(kind, " (", what, ")"),
                                " below ", limit, ", found ", index));
}

StatusOr<uint64_t> EncodingReader::ReadIndex(std::string_view kind, std::string_view what,
                                             uint64_t limit) {
  const uint64_t start = offset();
  KILN_ASSIGN_OR_RETURN(uint64_t index, ReadVarInt(what));
  if (index >= limit) return IndexError(start, kind, what, limit, index);
  return index;
}

StatusOr<EncodingReader::FlaggedVarInt> EncodingReader::ReadIndexWithFlag(std::string_view kind,
                                                                          std::string_view what,
                                                                          uint64_t limit) {
  const uint64_t start = offset();
  KILN_ASSIGN_OR_RETURN(FlaggedVarInt flagged, ReadVarIntWithFlag(what));
  if (flagged.value >= limit) return IndexError(start, kind, what, limit, flagged.value);
  return flagged;
}

StatusOr<std::string_view> EncodingReader::ReadNulTerminatedString(std::string_view what) {
  const uint8_t* start = data_.data() + position_;
  const void* nul = std::memchr(start, 0, remaining());
  if (nul == nullptr) {
    return Error(StrCat("expected a NUL-terminated string (", what,
                        "), found no NUL before end of input"));
  }
  const size_t length = static_cast<size_t>(static_cast<const uint8_t*>(nul) - start);
  position_ += length + 1;
  return std::string_view(reinterpret_cast<const char*>(start), length);
}

Status EncodingReader::AlignTo(uint64_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return Error(StrCat("expected a power-of-two alignment, found ", alignment));
  }
  const uint64_t padding = (alignment - offset() % alignment) % alignment;
  const uint64_t start = offset();
  for (uint64_t i = 0; i < padding; ++i) {
    if (empty()) {
      return ErrorAt(start, StrCat("expected ", padding, " padding bytes to align to ", alignment,
                                   ", found only ", i, " before end of input"));
    }
    const uint8_t byte = data_[position_];
    if (byte != kAlignmentByte) {
      return Error(StrCat("expected alignment padding 0xCB, found ", HexByte(byte)));
    }
    ++position_;
  }
  return Status::Ok();
}

StatusOr<RawSection> EncodingReader::ReadSection(std::string_view what) {
  // `what` is only formatted on failure: sections are read once per isolated op.
  RawSection section;
  section.header_offset = offset();
  if (empty()) return EndOfInput(StrCat("a section id byte (", what, ")"));
  const uint8_t id_and_aligned = data_[position_++];
  section.id = id_and_aligned & 0x7F;
  if (section.id >= kNumSectionIds) {
    return ErrorAt(section.header_offset,
                   StrCat("expected a section id from 0 to ", kNumSectionIds - 1, " (", what,
                          "), found ", int{section.id}));
  }
  KILN_ASSIGN_OR_RETURN(uint64_t length, ReadVarInt("a section length"));
  if (id_and_aligned & 0x80) {
    KILN_ASSIGN_OR_RETURN(uint64_t alignment, ReadVarInt("a section alignment"));
    KILN_RETURN_IF_ERROR(AlignTo(alignment));
  }
  section.data_offset = offset();
  if (length > remaining()) {
    return Error(StrCat("expected ", length, " bytes of ", SectionName(section.id),
                        " section contents (", what, "), found only ", remaining(),
                        " before end of input"));
  }
  section.data = data_.subspan(position_, static_cast<size_t>(length));
  position_ += static_cast<size_t>(length);
  return section;
}

}  // namespace kiln::frontend::bytecode
