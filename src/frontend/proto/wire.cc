#include "frontend/proto/wire.h"

#include <cstring>
#include <vector>

namespace kiln::frontend::proto {

StatusOr<uint64_t> Reader::Varint(std::string_view what) {
  uint64_t value = 0;
  const size_t start = position_;
  for (int shift = 0; shift < 64; shift += 7) {
    if (position_ >= data_.size()) {
      return InvalidArgument("byte ", base_ + start, ": expected a varint (", what,
                             "), found the end of the message");
    }
    const uint8_t byte = data_[position_++];
    value |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) return value;
  }
  return InvalidArgument("byte ", base_ + start, ": expected a varint (", what,
                         ") of at most 10 bytes, found a longer one");
}

StatusOr<Field> Reader::Next() {
  Field field;
  field.offset = base_ + position_;
  KILN_ASSIGN_OR_RETURN(uint64_t tag, Varint("a field tag"));
  field.number = static_cast<uint32_t>(tag >> 3);
  const auto type = static_cast<uint8_t>(tag & 7);
  if (field.number == 0) {
    return InvalidArgument("byte ", field.offset, ": expected a field number >= 1, found 0");
  }
  switch (type) {
    case 0: {
      field.type = WireType::kVarint;
      KILN_ASSIGN_OR_RETURN(field.value, Varint("a field value"));
      return field;
    }
    case 1:
    case 5: {
      const size_t size = type == 1 ? 8 : 4;
      if (data_.size() - position_ < size) {
        return InvalidArgument("byte ", base_ + position_, ": expected a ", size,
                               "-byte fixed value, found ", data_.size() - position_, " bytes");
      }
      field.type = type == 1 ? WireType::kFixed64 : WireType::kFixed32;
      std::memcpy(&field.value, data_.data() + position_, size);
      position_ += size;
      return field;
    }
    case 2: {
      KILN_ASSIGN_OR_RETURN(uint64_t length, Varint("a field length"));
      if (length > data_.size() - position_) {
        return InvalidArgument("byte ", base_ + position_, ": field ", field.number, " claims ",
                               length, " bytes, but only ", data_.size() - position_, " remain");
      }
      field.type = WireType::kLengthDelimited;
      field.bytes = data_.subspan(position_, static_cast<size_t>(length));
      position_ += static_cast<size_t>(length);
      field.offset = base_ + position_ - static_cast<size_t>(length);
      return field;
    }
    default:
      return InvalidArgument("byte ", field.offset, ": field ", field.number, " has wire type ",
                             static_cast<int>(type),
                             "; expected 0, 1, 2 or 5 (groups are not supported)");
  }
}

StatusOr<std::vector<int64_t>> Reader::PackedVarints(const Field& field) {
  std::vector<int64_t> values;
  if (field.type == WireType::kVarint) {
    values.push_back(static_cast<int64_t>(field.value));
    return values;
  }
  Reader reader(field.bytes, field.offset);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(uint64_t value, reader.Varint("a packed value"));
    values.push_back(static_cast<int64_t>(value));
  }
  return values;
}

void Writer::Raw(uint64_t value) {
  while (value >= 0x80) {
    bytes_.push_back(static_cast<uint8_t>(value | 0x80));
    value >>= 7;
  }
  bytes_.push_back(static_cast<uint8_t>(value));
}

void Writer::Varint(uint32_t field, uint64_t value) {
  Raw(static_cast<uint64_t>(field) << 3);
  Raw(value);
}

void Writer::Bytes(uint32_t field, std::span<const uint8_t> bytes) {
  Raw((static_cast<uint64_t>(field) << 3) | 2);
  Raw(bytes.size());
  bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
}

void Writer::Fixed64(uint32_t field, uint64_t value) {
  Raw((static_cast<uint64_t>(field) << 3) | 1);
  for (int i = 0; i < 8; ++i) bytes_.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void Writer::Fixed32(uint32_t field, uint32_t value) {
  Raw((static_cast<uint64_t>(field) << 3) | 5);
  for (int i = 0; i < 4; ++i) bytes_.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

void Writer::Copy(const Field& field) {
  switch (field.type) {
    case WireType::kVarint: Varint(field.number, field.value); break;
    case WireType::kFixed64: Fixed64(field.number, field.value); break;
    case WireType::kFixed32: Fixed32(field.number, static_cast<uint32_t>(field.value)); break;
    case WireType::kLengthDelimited: Bytes(field.number, field.bytes); break;
  }
}

void Writer::PackedVarints(uint32_t field, std::span<const int64_t> values) {
  Writer packed;
  for (int64_t value : values) packed.Raw(static_cast<uint64_t>(value));
  Bytes(field, packed.bytes());
}

}  // namespace kiln::frontend::proto
