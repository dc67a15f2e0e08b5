// The StableHLO and CHLO dialects' attribute and type encodings
// (openxla/stablehlo: stablehlo/dialect/StablehloBytecode.cpp and
// ChloBytecode.cpp; the codes are the enumerators there). Attributes become
// the Kiln IR values the text parser builds for their printed form (docs/ir.md).
// Both bytecode readers use them: StableHLO-dialect bytecode is made of them,
// and portable artifacts hold stablehlo types where VHLO does not reach (the
// block arguments of Shardy's regions, e.g. a !stablehlo.token).
#include "frontend/vhlo/attr_table.h"
#include "frontend/vhlo/codec_util.h"
#include "frontend/vhlo/text.h"
#include "ir/op_syntax.h"

namespace kiln::frontend::vhlo {
namespace {

enum StablehloAttributeCode : uint64_t {
  // 0 was ArgResultAliasAttr, long gone.
  kChannelHandle = 1,
  kComparisonDirection = 2,
  kComparisonType = 3,
  kConvDimensionNumbers = 4,
  kDotDimensionNumbers = 5,
  kFftType = 6,
  kGatherDimensionNumbers = 7,
  kPrecision = 8,
  kRngAlgorithm = 9,
  kRngDistribution = 10,
  kScatterDimensionNumbers = 11,
  kTranspose = 12,
  kTypeExtensions = 13,
  kOutputOperandAlias = 14,
  kDotAlgorithm = 15,
  kResultAccuracyMode = 16,
  kResultAccuracy = 17,
  kReplicaGroupMeshAxes = 18,
  kSubAxisInfo = 19,
  kAxisRef = 20,
  kMeshAxis = 21,
  kMesh = 22,
};

enum StablehloTypeCode : uint64_t {
  kTokenType = 0,
  kFutureType = 1,
};

enum ChloAttributeCode : uint64_t {
  kChloComparisonDirection = 0,
  kChloComparisonType = 1,
};

ir::Attribute Dims(std::vector<int64_t> values) {
  return ir::Attribute::DenseI64Array(std::move(values));
}

// A struct of dimension lists (the gather, scatter and dot dimension
// numbers): `lists` lists of svarints, then `integers` svarints, stored in
// the order of the struct's fields.
Decoded<AttrEntry> ReadDimensionStruct(EntryDecoder& decoder, std::string_view name, int lists,
                                       int integers) {
  std::vector<ir::Attribute> values;
  for (int i = 0; i < lists; ++i) {
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> list, ReadSignedVarInts(decoder, name));
    values.push_back(Dims(std::move(list)));
  }
  for (int i = 0; i < integers; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t value, decoder.reader().ReadSignedVarInt(name));
    values.push_back(I64(value));
  }
  return Plain(ir::StructOfFields(name, std::move(values)));
}

// Convolution: input batch, feature, spatial; kernel input feature, output
// feature, spatial; output batch, feature, spatial (Struct field order).
Decoded<AttrEntry> ReadConvDimensions(EntryDecoder& decoder) {
  std::vector<ir::NamedAttribute> fields;
  const std::span<const std::string_view> names = ir::ConvDimensionFields();
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string name(names[i]);
    if (i % 3 == 2) {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> list, ReadSignedVarInts(decoder, name));
      fields.push_back({name, Dims(std::move(list))});
    } else {
      KILN_ASSIGN_OR_RETURN(int64_t value, decoder.reader().ReadSignedVarInt(name));
      fields.push_back({name, I64(value)});
    }
  }
  return Plain(ir::Attribute::Struct("stablehlo.conv", std::move(fields)));
}

Decoded<AttrEntry> ReadDotAlgorithm(EntryDecoder& decoder) {
  std::vector<const ir::Type*> types;
  for (const char* what : {"lhs precision type", "rhs precision type", "accumulation type"}) {
    KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType(what));
    types.push_back(type);
  }
  std::vector<ir::Attribute> values;
  for (const char* what :
       {"lhs component count", "rhs component count", "primitive operation count"}) {
    KILN_ASSIGN_OR_RETURN(int64_t value, decoder.reader().ReadSignedVarInt(what));
    values.push_back(I64(value));
  }
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint8_t allow, decoder.reader().ReadByte("allow imprecise accumulation"));
  if (allow > 1) {
    return decoder.reader().ErrorAt(offset, StrCat("expected a boolean byte 0 or 1, found ",
                                                   static_cast<int>(allow)));
  }
  if (decoder.pending()) return kPending;
  values.push_back(ir::Attribute::Bool(allow == 1));
  std::vector<ir::Attribute> fields;
  for (const ir::Type* type : types) fields.push_back(ir::Attribute::TypeAttr(*type));
  fields.insert(fields.end(), values.begin(), values.end());
  return Plain(ir::StructOfFields("stablehlo.dot_algorithm", std::move(fields)));
}

// MLIR's readBool: one byte, 0 or 1.
StatusOr<bool> ReadBool(EntryDecoder& decoder, std::string_view what) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint8_t byte, decoder.reader().ReadByte(what));
  if (byte > 1) {
    return decoder.reader().ErrorAt(offset, StrCat("expected a boolean byte 0 or 1 (", what,
                                                   "), found ", static_cast<int>(byte)));
  }
  return byte == 1;
}

Decoded<AttrEntry> ReadMeshAttribute(EntryDecoder& decoder, uint64_t code) {
  switch (code) {
    case kAxisRef: {
      KILN_ASSIGN_OR_RETURN(std::string_view name, decoder.ReadString("axis name"));
      KILN_ASSIGN_OR_RETURN(bool has_info, ReadBool(decoder, "sub-axis flag"));
      const ir::Attribute* info = nullptr;
      if (has_info) {
        KILN_ASSIGN_OR_RETURN(info, decoder.ReadPlainAttribute("sub-axis info"));
        KILN_REQUIRE_DECODED(info);
      }
      return Plain(AxisRefStruct(name, info));
    }
    case kMeshAxis: {
      KILN_ASSIGN_OR_RETURN(std::string_view name, decoder.ReadString("axis name"));
      KILN_ASSIGN_OR_RETURN(int64_t size, decoder.reader().ReadSignedVarInt("axis size"));
      return Plain(MeshAxisStruct(name, size));
    }
    case kMesh: {
      KILN_ASSIGN_OR_RETURN(const ir::Attribute* axes, decoder.ReadPlainAttribute("mesh axes"));
      KILN_ASSIGN_OR_RETURN(bool has_ids, ReadBool(decoder, "device ids flag"));
      const ir::Attribute* ids = nullptr;
      if (has_ids) {
        KILN_ASSIGN_OR_RETURN(ids, decoder.ReadPlainAttribute("device ids"));
      }
      if (decoder.pending()) return kPending;
      return Plain(MeshStruct(*axes, ids));
    }
    default: {  // kReplicaGroupMeshAxes
      KILN_ASSIGN_OR_RETURN(const ir::Attribute* mesh, decoder.ReadPlainAttribute("mesh"));
      KILN_ASSIGN_OR_RETURN(auto axes, ReadAttributeList(decoder, "mesh axis"));
      if (decoder.pending()) return kPending;
      const ir::Attribute list = ir::Attribute::Array(Values(axes));
      return Plain(ReplicaGroupMeshAxesStruct(*mesh, list));
    }
  }
}

// The StableHLO enum of an attribute code, if it is one.
std::optional<HloEnum> EnumFor(uint64_t code) {
  switch (code) {
    case kComparisonDirection: return HloEnum::kComparisonDirection;
    case kComparisonType: return HloEnum::kComparisonType;
    case kFftType: return HloEnum::kFftType;
    case kPrecision: return HloEnum::kPrecision;
    case kRngAlgorithm: return HloEnum::kRngAlgorithm;
    case kRngDistribution: return HloEnum::kRngDistribution;
    case kTranspose: return HloEnum::kTranspose;
    case kResultAccuracyMode: return HloEnum::kResultAccuracyMode;
    default: return std::nullopt;
  }
}

}  // namespace

Decoded<AttrEntry> DecodeStablehloAttribute(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("stablehlo attribute kind"));
  if (std::optional<HloEnum> which = EnumFor(code)) {
    return ReadHloEnum(decoder, *which, "stablehlo");
  }
  switch (code) {
    case kChannelHandle: return ReadDimensionStruct(decoder, "stablehlo.channel_handle", 0, 2);
    case kConvDimensionNumbers: return ReadConvDimensions(decoder);
    case kDotDimensionNumbers: return ReadDimensionStruct(decoder, "stablehlo.dot", 4, 0);
    case kGatherDimensionNumbers: return ReadDimensionStruct(decoder, "stablehlo.gather", 5, 1);
    case kScatterDimensionNumbers: return ReadDimensionStruct(decoder, "stablehlo.scatter", 5, 1);
    case kTypeExtensions: return ReadTypeExtensions(decoder);
    case kOutputOperandAlias: return ReadOutputOperandAlias(decoder);
    case kDotAlgorithm: return ReadDotAlgorithm(decoder);
    case kResultAccuracy: return ReadResultAccuracy(decoder);
    case kSubAxisInfo: return ReadSubAxisInfo(decoder);
    case kReplicaGroupMeshAxes:
    case kAxisRef:
    case kMeshAxis:
    case kMesh: return ReadMeshAttribute(decoder, code);
    default:
      return Unimplemented("byte ", offset, ": unknown stablehlo attribute kind ", code,
                           " (Kiln reads kinds 1 to 22 of StableHLO's bytecode) (",
                           decoder.reader().context(), ")");
  }
}

Decoded<ir::Type> DecodeStablehloType(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("stablehlo type kind"));
  switch (code) {
    case kTokenType: return ir::Type::Token();
    case kFutureType: {
      KILN_ASSIGN_OR_RETURN(auto types, ReadTypeList(decoder, "future type"));
      if (decoder.pending()) return kPending;
      return FutureType(decoder, types);
    }
    default:
      return Unimplemented("byte ", offset, ": unknown stablehlo type kind ", code,
                           " (Kiln reads kinds 0 and 1 of StableHLO's bytecode) (",
                           decoder.reader().context(), ")");
  }
}

Decoded<AttrEntry> DecodeChloAttribute(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("chlo attribute kind"));
  switch (code) {
    case kChloComparisonDirection:
      return ReadHloEnum(decoder, HloEnum::kComparisonDirection, "chlo");
    case kChloComparisonType: return ReadHloEnum(decoder, HloEnum::kComparisonType, "chlo");
    default:
      return Unimplemented("byte ", offset, ": unknown chlo attribute kind ", code,
                           " (Kiln reads kinds 0 and 1 of CHLO's bytecode) (",
                           decoder.reader().context(), ")");
  }
}

}  // namespace kiln::frontend::vhlo
