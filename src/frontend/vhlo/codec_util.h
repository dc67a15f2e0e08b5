// Internal to the VHLO reader: helpers shared by the dialect decoders.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "frontend/vhlo/attr_table.h"

namespace kiln::frontend::vhlo {

// Returns kPending from the enclosing decoder if `pointer` (a reference just
// read) is not decoded yet; for values the decoder cannot continue without.
#define KILN_REQUIRE_DECODED(pointer) \
  do {                                \
    if ((pointer) == nullptr) return kPending; \
  } while (false)

// MLIR's APInt of a known bit width: one raw byte up to 8 bits, a signed
// varint up to 64, else a word count and signed-varint words. Returns the
// low 64 bits; wider values must be sign extensions of them.
StatusOr<uint64_t> ReadAPInt(EntryDecoder& decoder, int width, std::string_view what);

// An APFloat of `type` (its bit pattern as an APInt) widened to double.
// `type` is an element type or an opaque f80/f128 type.
StatusOr<double> ReadAPFloat(EntryDecoder& decoder, const ir::Type& type, std::string_view what);

// The bit width of an integer-like element type (index is 64), 0 if none.
int IntegerBitWidth(const ir::Type& type);
bool IsUnsigned(const ir::Type& type);

// A list: count, then `count` signed varints.
StatusOr<std::vector<int64_t>> ReadSignedVarInts(EntryDecoder& decoder, std::string_view what);

// A list of attribute references whose entries must be plain attributes.
// Null entries (not decoded yet) are left null and make decoder.pending().
StatusOr<std::vector<const ir::Attribute*>> ReadAttributeList(EntryDecoder& decoder,
                                                              std::string_view what);
StatusOr<std::vector<const ir::Type*>> ReadTypeList(EntryDecoder& decoder, std::string_view what);

// Copies of the pointed-to values; all must be non-null.
std::vector<ir::Attribute> Values(const std::vector<const ir::Attribute*>& pointers);
std::vector<ir::Type> Values(const std::vector<const ir::Type*>& pointers);

// A ranked tensor type from bytecode dims (INT64_MIN = dynamic), checking
// them; `bounds` empty or one per dimension (INT64_MIN = unbounded).
StatusOr<ir::Type> MakeTensorType(EntryDecoder& decoder, std::vector<int64_t> dims,
                                  ir::Type element, std::vector<int64_t> bounds, uint64_t offset);

}  // namespace kiln::frontend::vhlo
