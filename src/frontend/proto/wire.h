// A bounds-checked reader of the protobuf wire format, for the protos
// frameworks hand Kiln (CompileOptionsProto; later HloModuleProto) without
// protobuf's generated code. Unknown fields are skipped; errors name the
// byte offset and what was expected.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace kiln::frontend::proto {

enum class WireType : uint8_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field of a message: its number, wire type and value (the varint or
// fixed value, or the bytes of a length-delimited field).
struct Field {
  uint32_t number = 0;
  WireType type = WireType::kVarint;
  uint64_t value = 0;
  std::span<const uint8_t> bytes;
  // Within the outermost message: where a length-delimited field's bytes
  // start, else where its tag starts.
  size_t offset = 0;
};

class Reader {
 public:
  // `base_offset`: where `data` starts in the outermost message (for messages).
  explicit Reader(std::span<const uint8_t> data, size_t base_offset = 0)
      : data_(data), base_(base_offset) {}

  bool done() const { return position_ >= data_.size(); }
  // Reads the next field; groups (wire types 3, 4) are INVALID_ARGUMENT.
  StatusOr<Field> Next();
  // A reader over a length-delimited field's bytes.
  static Reader Nested(const Field& field) { return Reader(field.bytes, field.offset); }
  // Varints packed in a length-delimited field (repeated int64 / bool, packed).
  static StatusOr<std::vector<int64_t>> PackedVarints(const Field& field);

 private:
  StatusOr<uint64_t> Varint(std::string_view what);

  std::span<const uint8_t> data_;
  size_t base_;
  size_t position_ = 0;
};

// Builds a message in the wire format.
class Writer {
 public:
  void Varint(uint32_t field, uint64_t value);
  void Bytes(uint32_t field, std::span<const uint8_t> bytes);
  void Fixed64(uint32_t field, uint64_t value);
  void Fixed32(uint32_t field, uint32_t value);
  // A field as a Reader read it.
  void Copy(const Field& field);
  // Repeated integers, packed.
  void PackedVarints(uint32_t field, std::span<const int64_t> values);
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void Raw(uint64_t value);
  std::vector<uint8_t> bytes_;
};

}  // namespace kiln::frontend::proto
