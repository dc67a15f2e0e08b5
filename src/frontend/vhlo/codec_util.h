// Helpers shared by the dialect decoders of the MLIR bytecode readers,
// including the attribute encodings VHLO, StableHLO and CHLO have in common.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "frontend/vhlo/attr_table.h"

namespace kiln::frontend::vhlo {

// Returns kPending from the enclosing decoder if `pointer` (a reference just
// read) is not decoded yet; for values the decoder cannot continue without.
#define KILN_REQUIRE_DECODED(pointer)          \
  do {                                         \
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

// The bounds a tensor type's encoding gives (a Struct
// "stablehlo.type_extensions", as VHLO and StableHLO encode bounded dynamic
// dimensions); UNIMPLEMENTED for any other encoding. `offset` is where the
// encoding's reference was read.
StatusOr<std::vector<int64_t>> BoundsOfEncoding(EntryDecoder& decoder,
                                                const ir::Attribute& encoding, uint64_t offset);

// StableHLO's enum attributes (StablehloEnums.td, ChloEnums.td; VHLO's
// VhloEnums.td has the same values): each is a varint of the value's number.
enum class HloEnum : uint8_t {
  kComparisonDirection,
  kComparisonType,
  kFftType,
  kPrecision,
  kRngAlgorithm,
  kRngDistribution,
  kTranspose,
  kResultAccuracyMode,
};
// Reads one as Enum("<dialect>.<mnemonic>", "VALUE"), `dialect` being
// "stablehlo" or "chlo".
Decoded<AttrEntry> ReadHloEnum(EntryDecoder& decoder, HloEnum which, std::string_view dialect);

// Attribute encodings VHLO and StableHLO share (VhloBytecode.cpp,
// StablehloBytecode.cpp), as the Structs of docs/ir.md:
// output_operand_alias (svarints, svarint, svarints), result_accuracy
// (f64 atol, f64 rtol, svarint ulps, mode), type_extensions (svarints) and
// sub_axis_info (two svarints).
Decoded<AttrEntry> ReadOutputOperandAlias(EntryDecoder& decoder);
Decoded<AttrEntry> ReadResultAccuracy(EntryDecoder& decoder);
Decoded<AttrEntry> ReadTypeExtensions(EntryDecoder& decoder);
Decoded<AttrEntry> ReadSubAxisInfo(EntryDecoder& decoder);

// The mesh attributes, whose encodings differ between VHLO and StableHLO,
// as Structs named "stablehlo.<mnemonic>". `sub_axis_info` and `device_ids`
// may be null; a mesh named by a string becomes a symbol reference.
ir::Attribute AxisRefStruct(std::string_view name, const ir::Attribute* sub_axis_info);
ir::Attribute MeshAxisStruct(std::string_view name, int64_t size);
ir::Attribute MeshStruct(const ir::Attribute& axes, const ir::Attribute* device_ids);
ir::Attribute ReplicaGroupMeshAxesStruct(const ir::Attribute& mesh, const ir::Attribute& axes);

// `!stablehlo.future<T, ...>` (a type Kiln keeps as text) of `types`.
StatusOr<ir::Type> FutureType(EntryDecoder& decoder, const std::vector<const ir::Type*>& types);

// An i64 integer attribute.
ir::Attribute I64(int64_t value);

// An entry holding a (non-location) attribute.
AttrEntry Plain(ir::Attribute attribute);

}  // namespace kiln::frontend::vhlo
