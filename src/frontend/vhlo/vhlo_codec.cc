// The VHLO dialect's attribute and type encodings
// (openxla/stablehlo: stablehlo/dialect/VhloBytecode.cpp). Attributes are
// converted as upstream's VHLO->StableHLO legalization converts them
// generically (convertGeneric): booleans to Bool, enums to StableHLO enums,
// tensors to dense elements, and so on. Op-specific conversions are in
// normalize.cc.
#include <optional>

#include "frontend/vhlo/codec_util.h"
#include "frontend/vhlo/dense.h"
#include "frontend/vhlo/numbers.h"
#include "frontend/vhlo/reader.h"
#include "frontend/vhlo/text.h"

namespace kiln::frontend::vhlo {
namespace {

enum VhloAttributeCode : uint64_t {
  kArrayV1 = 1,
  kBooleanV1 = 2,
  kComparisonDirectionV1 = 3,
  kComparisonTypeV1 = 4,
  kCustomCallApiVersionV1 = 5,
  kDictionaryV1 = 6,
  kFftTypeV1 = 7,
  kFloatV1 = 8,
  kIntegerV1 = 9,
  kOutputOperandAliasV1 = 10,
  kPrecisionV1 = 11,
  kRngAlgorithmV1 = 12,
  kRngDistributionV1 = 13,
  kStringV1 = 14,
  kTensorV1 = 15,
  kTransposeV1 = 16,
  kTypeV1 = 17,
  kTypeExtensionsV1 = 18,
  kResultAccuracyModeV1 = 19,
  kResultAccuracyV1 = 20,
  kSubAxisInfoV1 = 21,
  kAxisRefV1 = 22,
  kReplicaGroupMeshAxesV1 = 23,
  kMeshAxisV1 = 24,
  kMeshV1 = 25,
};

enum VhloTypeCode : uint64_t {
  kBooleanV1Type = 0,
  kComplexV1Type = 1,
  kFunctionV1Type = 8,
  kIndexV1Type = 9,
  kRankedTensorV1Type = 20,
  kRankedTensorV1TypeWithEncoding = 21,
  kTokenV1Type = 22,
  kTupleV1Type = 23,
  kUniformQuantizedV1Type = 24,
  kUnrankedTensorV1Type = 25,
  kWitnessV1Type = 26,
  kUniformQuantizedPerAxisV1Type = 30,
  kNoneV1Type = 33,
  kRankedBufferV1Type = 41,
  kFutureV1Type = 42,
};

// VHLO type codes that stand for one element type.
struct ElementCode {
  uint64_t code;
  ElementType type;
};
constexpr ElementCode kElementCodes[] = {
    {0, ElementType::kPred},
    {2, ElementType::kBF16},
    {3, ElementType::kF16},
    {4, ElementType::kF32},
    {5, ElementType::kF64},
    {6, ElementType::kF8E4M3FN},
    {7, ElementType::kF8E5M2},
    {9, ElementType::kIndex},
    {10, ElementType::kS4},
    {11, ElementType::kS8},
    {12, ElementType::kS16},
    {13, ElementType::kS32},
    {14, ElementType::kS64},
    {15, ElementType::kU4},
    {16, ElementType::kU8},
    {17, ElementType::kU16},
    {18, ElementType::kU32},
    {19, ElementType::kU64},
    {27, ElementType::kF8E4M3FNUZ},
    {28, ElementType::kF8E5M2FNUZ},
    {29, ElementType::kF8E4M3B11FNUZ},
    {31, ElementType::kS2},
    {32, ElementType::kU2},
    {34, ElementType::kTF32},
    {35, ElementType::kF8E4M3},
    {36, ElementType::kF8E3M4},
    {37, ElementType::kF4E2M1FN},
    {38, ElementType::kF6E2M3FN},
    {39, ElementType::kF6E3M2FN},
    {40, ElementType::kF8E8M0FNU},
};

// The StableHLO enum a VHLO attribute code stands for.
std::optional<HloEnum> EnumFor(uint64_t code) {
  switch (code) {
    case kComparisonDirectionV1: return HloEnum::kComparisonDirection;
    case kComparisonTypeV1: return HloEnum::kComparisonType;
    case kFftTypeV1: return HloEnum::kFftType;
    case kPrecisionV1: return HloEnum::kPrecision;
    case kRngAlgorithmV1: return HloEnum::kRngAlgorithm;
    case kRngDistributionV1: return HloEnum::kRngDistribution;
    case kTransposeV1: return HloEnum::kTranspose;
    case kResultAccuracyModeV1: return HloEnum::kResultAccuracyMode;
    default: return std::nullopt;
  }
}

Decoded<AttrEntry> ReadDictionary(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount("dictionary size", 2));
  std::vector<std::pair<const ir::Attribute*, const ir::Attribute*>> entries;
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(const ir::Attribute* key, decoder.ReadPlainAttribute("dictionary key"));
    KILN_ASSIGN_OR_RETURN(const ir::Attribute* value,
                          decoder.ReadPlainAttribute("dictionary value"));
    entries.emplace_back(key, value);
  }
  if (decoder.pending()) return kPending;
  std::vector<ir::NamedAttribute> fields;
  for (const auto& [key, value] : entries) {
    if (!key->Is(ir::AttrKind::kString)) {
      return decoder.Error(StrCat("expected string keys in a dictionary, found ", AttrText(*key)));
    }
    fields.push_back({key->storage().text, *value});
  }
  return Plain(ir::Attribute::Dictionary(std::move(fields)));
}

Decoded<AttrEntry> ReadNumber(EntryDecoder& decoder, bool is_float) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("number type"));
  KILN_REQUIRE_DECODED(type);
  if (is_float) {
    KILN_ASSIGN_OR_RETURN(double value, ReadAPFloat(decoder, *type, "float value"));
    return Plain(ir::Attribute::Float(value, *type));
  }
  const int width = IntegerBitWidth(*type);
  if (width == 0) {
    return decoder.reader().ErrorAt(offset, StrCat("expected an integer type for "
                                                   "vhlo.integer_v1, found ",
                                                   TypeText(*type)));
  }
  KILN_ASSIGN_OR_RETURN(uint64_t bits, ReadAPInt(decoder, width, "integer value"));
  if (type->element_type() == ElementType::kPred) return Plain(ir::Attribute::Bool(bits & 1));
  return Plain(ir::Attribute::Integer(TruncateToWidth(bits, width, !IsUnsigned(*type)), *type));
}

Decoded<AttrEntry> ReadTensor(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("tensor type"));
  KILN_REQUIRE_DECODED(type);
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(std::span<const uint8_t> blob, decoder.ReadBlob("tensor data"));
  KILN_ASSIGN_OR_RETURN(ir::Attribute attribute,
                        DenseElementsFromBlob(*type, blob, DenseFlavor::kVhlo, decoder.reader(),
                                              offset));
  return Plain(std::move(attribute));
}

// A string_v1 reference as a std::string, or null while pending.
StatusOr<const std::string*> ReadName(EntryDecoder& decoder, std::string_view what) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(const ir::Attribute* name, decoder.ReadPlainAttribute(what));
  if (name == nullptr) return static_cast<const std::string*>(nullptr);
  if (!name->Is(ir::AttrKind::kString)) {
    return decoder.reader().ErrorAt(offset, StrCat("expected a string (", what, "), found ",
                                                   AttrText(*name)));
  }
  return &name->storage().text;
}

Decoded<AttrEntry> ReadMeshAttribute(EntryDecoder& decoder, uint64_t code) {
  switch (code) {
    case kSubAxisInfoV1: return ReadSubAxisInfo(decoder);
    case kAxisRefV1: {
      KILN_ASSIGN_OR_RETURN(const std::string* name, ReadName(decoder, "axis name"));
      KILN_ASSIGN_OR_RETURN(uint64_t has_info, decoder.reader().ReadVarInt("sub-axis flag"));
      const ir::Attribute* info = nullptr;
      if (has_info != 0) {
        KILN_ASSIGN_OR_RETURN(info, decoder.ReadPlainAttribute("sub-axis info"));
      }
      if (decoder.pending()) return kPending;
      return Plain(AxisRefStruct(*name, info));
    }
    case kReplicaGroupMeshAxesV1: {
      KILN_ASSIGN_OR_RETURN(const ir::Attribute* mesh, decoder.ReadPlainAttribute("mesh"));
      KILN_ASSIGN_OR_RETURN(const ir::Attribute* axes, decoder.ReadPlainAttribute("mesh axes"));
      if (decoder.pending()) return kPending;
      return Plain(ReplicaGroupMeshAxesStruct(*mesh, *axes));
    }
    case kMeshAxisV1: {
      KILN_ASSIGN_OR_RETURN(const std::string* name, ReadName(decoder, "axis name"));
      KILN_ASSIGN_OR_RETURN(int64_t size, decoder.reader().ReadSignedVarInt("axis size"));
      if (decoder.pending()) return kPending;
      return Plain(MeshAxisStruct(*name, size));
    }
    default: {  // kMeshV1
      KILN_ASSIGN_OR_RETURN(const ir::Attribute* axes, decoder.ReadPlainAttribute("mesh axes"));
      bool present = false;
      KILN_ASSIGN_OR_RETURN(const AttrEntry* ids,
                            decoder.ReadOptionalAttribute("device ids", present));
      if (decoder.pending()) return kPending;
      return Plain(MeshStruct(*axes, present ? &ids->attribute : nullptr));
    }
  }
}

}  // namespace

Decoded<AttrEntry> DecodeVhloAttribute(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("vhlo attribute kind"));
  if (std::optional<HloEnum> which = EnumFor(code)) {
    return ReadHloEnum(decoder, *which, "stablehlo");
  }
  switch (code) {
    case kArrayV1: {
      KILN_ASSIGN_OR_RETURN(auto elements, ReadAttributeList(decoder, "array element"));
      if (decoder.pending()) return kPending;
      return Plain(ir::Attribute::Array(Values(elements)));
    }
    case kBooleanV1: {
      KILN_ASSIGN_OR_RETURN(uint64_t value, decoder.reader().ReadVarInt("boolean"));
      if (value > 1) {
        return decoder.reader().ErrorAt(offset, StrCat("expected a boolean 0 or 1, found ", value));
      }
      return Plain(ir::Attribute::Bool(value == 1));
    }
    case kCustomCallApiVersionV1: {
      // StableHLO's CustomCallApiVersion is an I32EnumAttr: an i32 integer.
      const uint64_t value_offset = decoder.reader().offset();
      KILN_ASSIGN_OR_RETURN(uint64_t value, decoder.reader().ReadVarInt("api version"));
      if (value > 4) {
        return decoder.reader().ErrorAt(value_offset, StrCat("expected a custom call API "
                                                             "version 0 to 4, found ",
                                                             value));
      }
      return Plain(ir::Attribute::Integer(static_cast<int64_t>(value),
                                          ir::Type::Element(ElementType::kS32)));
    }
    case kDictionaryV1: return ReadDictionary(decoder);
    case kFloatV1: return ReadNumber(decoder, /*is_float=*/true);
    case kIntegerV1: return ReadNumber(decoder, /*is_float=*/false);
    case kOutputOperandAliasV1: return ReadOutputOperandAlias(decoder);
    case kStringV1: {
      KILN_ASSIGN_OR_RETURN(std::string_view text, decoder.ReadString("string value"));
      return Plain(ir::Attribute::String(std::string(text)));
    }
    case kTensorV1: return ReadTensor(decoder);
    case kTypeV1: {
      KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("type value"));
      KILN_REQUIRE_DECODED(type);
      return Plain(ir::Attribute::TypeAttr(*type));
    }
    case kTypeExtensionsV1: return ReadTypeExtensions(decoder);
    case kResultAccuracyV1: return ReadResultAccuracy(decoder);
    case kSubAxisInfoV1:
    case kAxisRefV1:
    case kReplicaGroupMeshAxesV1:
    case kMeshAxisV1:
    case kMeshV1: return ReadMeshAttribute(decoder, code);
    default:
      return Unimplemented("byte ", offset, ": unknown vhlo attribute kind ", code,
                           " (Kiln reads kinds 1 to 25, VHLO up to ", kNewestVhloVersion.ToString(),
                           ") (", decoder.reader().context(), ")");
  }
}

namespace {

Decoded<ir::Type> ReadQuantized(EntryDecoder& decoder, bool per_axis) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t flags, decoder.reader().ReadVarInt("quantization flags"));
  KILN_ASSIGN_OR_RETURN(const ir::Type* storage, decoder.ReadType("storage type"));
  KILN_ASSIGN_OR_RETURN(const ir::Type* expressed, decoder.ReadType("expressed type"));
  ir::QuantizedParams params;
  const ir::Type f64 = ir::Type::Element(ElementType::kF64);
  if (per_axis) {
    KILN_ASSIGN_OR_RETURN(uint64_t axis, decoder.reader().ReadVarInt("quantized dimension"));
    params.quantized_dimension = static_cast<int32_t>(axis);
    if (axis > INT32_MAX) return decoder.reader().ErrorAt(offset, "quantized dimension too large");
  }
  if (!per_axis) {
    KILN_ASSIGN_OR_RETURN(double scale, ReadAPFloat(decoder, f64, "scale"));
    KILN_ASSIGN_OR_RETURN(int64_t zero_point, decoder.reader().ReadSignedVarInt("zero point"));
    params.scales = {scale};
    params.zero_points = {zero_point};
  }
  KILN_ASSIGN_OR_RETURN(params.storage_min, decoder.reader().ReadSignedVarInt("storage min"));
  KILN_ASSIGN_OR_RETURN(params.storage_max, decoder.reader().ReadSignedVarInt("storage max"));
  if (per_axis) {
    KILN_ASSIGN_OR_RETURN(uint64_t scales, decoder.reader().ReadCount("scale count"));
    for (uint64_t i = 0; i < scales; ++i) {
      KILN_ASSIGN_OR_RETURN(double scale, ReadAPFloat(decoder, f64, "scale"));
      params.scales.push_back(scale);
    }
    KILN_ASSIGN_OR_RETURN(params.zero_points, ReadSignedVarInts(decoder, "zero point"));
  }
  if (decoder.pending()) return kPending;
  if (!storage->Is(ir::TypeKind::kElement) || IntegerBitWidth(*storage) == 0 ||
      !expressed->Is(ir::TypeKind::kElement)) {
    return decoder.reader().ErrorAt(offset,
                                    StrCat("expected integer storage and float expressed "
                                           "types for a quantized type, found ",
                                           TypeText(*storage), " and ", TypeText(*expressed)));
  }
  params.is_signed = (flags & 1) != 0;
  params.storage_type = storage->element_type();
  params.expressed_type = expressed->element_type();
  return ir::QuantizedType(std::move(params));
}

Decoded<ir::Type> ReadRankedTensor(EntryDecoder& decoder, bool has_encoding) {
  std::vector<int64_t> bounds;
  if (has_encoding) {
    const uint64_t offset = decoder.reader().offset();
    KILN_ASSIGN_OR_RETURN(const ir::Attribute* encoding,
                          decoder.ReadPlainAttribute("tensor encoding"));
    KILN_REQUIRE_DECODED(encoding);
    KILN_ASSIGN_OR_RETURN(bounds, BoundsOfEncoding(decoder, *encoding, offset));
  }
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadSignedVarInts(decoder, "dimension"));
  KILN_ASSIGN_OR_RETURN(const ir::Type* element, decoder.ReadType("tensor element type"));
  KILN_REQUIRE_DECODED(element);
  return MakeTensorType(decoder, std::move(dims), *element, std::move(bounds), offset);
}

}  // namespace

Decoded<ir::Type> DecodeVhloType(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("vhlo type kind"));
  for (const ElementCode& element : kElementCodes) {
    if (element.code == code) return ir::Type::Element(element.type);
  }
  switch (code) {
    case kComplexV1Type: {
      KILN_ASSIGN_OR_RETURN(const ir::Type* part, decoder.ReadType("complex element"));
      KILN_REQUIRE_DECODED(part);
      if (part->Is(ir::TypeKind::kElement) && part->element_type() == ElementType::kF32) {
        return ir::Type::Element(ElementType::kC64);
      }
      if (part->Is(ir::TypeKind::kElement) && part->element_type() == ElementType::kF64) {
        return ir::Type::Element(ElementType::kC128);
      }
      std::string text = StrCat("complex<", TypeText(*part), ">");
      KILN_RETURN_IF_ERROR(decoder.ChargeText(text.size()));
      return ir::Type::Opaque(std::move(text));
    }
    case kFunctionV1Type: {
      KILN_ASSIGN_OR_RETURN(auto inputs, ReadTypeList(decoder, "function input"));
      KILN_ASSIGN_OR_RETURN(auto results, ReadTypeList(decoder, "function result"));
      if (decoder.pending()) return kPending;
      return ir::Type::Function(Values(inputs), Values(results));
    }
    case kRankedTensorV1Type:
    case kRankedTensorV1TypeWithEncoding:
      return ReadRankedTensor(decoder, code == kRankedTensorV1TypeWithEncoding);
    case kTokenV1Type: return ir::Type::Token();
    case kTupleV1Type: {
      KILN_ASSIGN_OR_RETURN(auto members, ReadTypeList(decoder, "tuple member"));
      if (decoder.pending()) return kPending;
      return ir::Type::Tuple(Values(members));
    }
    case kUniformQuantizedV1Type:
    case kUniformQuantizedPerAxisV1Type:
      return ReadQuantized(decoder, code == kUniformQuantizedPerAxisV1Type);
    case kUnrankedTensorV1Type: {
      KILN_ASSIGN_OR_RETURN(const ir::Type* element, decoder.ReadType("tensor element type"));
      KILN_REQUIRE_DECODED(element);
      return ir::Type::UnrankedTensor(*element);
    }
    case kWitnessV1Type: return ir::Type::Opaque("!shape.witness");
    case kNoneV1Type: return ir::Type::None();
    case kRankedBufferV1Type: {
      // Upstream turns buffer_v1 into a builtin memref, which Kiln does not model.
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadSignedVarInts(decoder, "dimension"));
      KILN_ASSIGN_OR_RETURN(const ir::Type* element, decoder.ReadType("buffer element type"));
      KILN_REQUIRE_DECODED(element);
      std::string text = "memref<";
      for (int64_t dim : dims) text += dim == ir::kDynamic ? "?x" : StrCat(dim, "x");
      text += TypeText(*element) + ">";
      KILN_RETURN_IF_ERROR(decoder.ChargeText(text.size()));
      return ir::Type::Opaque(std::move(text));
    }
    case kFutureV1Type: {
      KILN_ASSIGN_OR_RETURN(auto types, ReadTypeList(decoder, "future type"));
      if (decoder.pending()) return kPending;
      return FutureType(decoder, types);
    }
    default:
      return Unimplemented("byte ", offset, ": unknown vhlo type kind ", code,
                           " (Kiln reads kinds 0 to 42, VHLO up to ", kNewestVhloVersion.ToString(),
                           ") (", decoder.reader().context(), ")");
  }
}

const Codecs& VhloCodecs() {
  static constexpr DialectCodec kDialects[] = {
      {"builtin", DecodeBuiltinAttribute, DecodeBuiltinType},
      {"vhlo", DecodeVhloAttribute, DecodeVhloType},
      {"sdy", DecodeSdyAttribute, nullptr},
      // Ops Legalize-to-VHLO leaves alone (Shardy's) keep StableHLO types in
      // their signatures and block arguments, with StableHLO's own encoding.
      {"stablehlo", DecodeStablehloAttribute, DecodeStablehloType},
      {"chlo", DecodeChloAttribute, nullptr},
  };
  static const Codecs codecs{kDialects, TextualAttribute, TextualType};
  return codecs;
}

}  // namespace kiln::frontend::vhlo
