// The builtin dialect's attribute and type encodings
// (llvm/llvm-project: mlir/include/mlir/IR/BuiltinDialectBytecode.td; the
// code of each kind is its position in the lists there).
#include "frontend/vhlo/codec_util.h"
#include "frontend/vhlo/dense.h"
#include "frontend/vhlo/numbers.h"
#include "frontend/vhlo/text.h"

namespace kiln::frontend::vhlo {
namespace {

enum BuiltinAttributeCode : uint64_t {
  kArray = 0,
  kDictionary = 1,
  kString = 2,
  kStringWithType = 3,
  kFlatSymbolRef = 4,
  kSymbolRef = 5,
  kTypeAttr = 6,
  kUnit = 7,
  kInteger = 8,
  kFloat = 9,
  kCallSiteLoc = 10,
  kFileLineColLoc = 11,
  kFusedLoc = 12,
  kFusedLocWithMetadata = 13,
  kNameLoc = 14,
  kUnknownLoc = 15,
  kDenseResourceElements = 16,
  kDenseArray = 17,
  kDenseIntOrFPElements = 18,
  kDenseStringElements = 19,
  kSparseElements = 20,
  kDistinct = 21,
  kFileLineColRange = 22,
};

enum BuiltinTypeCode : uint64_t {
  kIntegerType = 0,
  kIndexType = 1,
  kFunctionType = 2,
  kBFloat16Type = 3,
  kFloat16Type = 4,
  kFloat32Type = 5,
  kFloat64Type = 6,
  kFloat80Type = 7,
  kFloat128Type = 8,
  kComplexType = 9,
  kMemRefType = 10,
  kMemRefTypeWithMemSpace = 11,
  kNoneType = 12,
  kRankedTensorType = 13,
  kRankedTensorTypeWithEncoding = 14,
  kTupleType = 15,
  kUnrankedMemRefType = 16,
  kUnrankedMemRefTypeWithMemSpace = 17,
  kUnrankedTensorType = 18,
  kVectorType = 19,
  kVectorTypeWithScalableDims = 20,
  // Newer MLIR encodes the small float types too (before, they were textual).
  kFloatTF32Type = 21,
  kFloat8E5M2Type = 22,
  kFloat8E4M3Type = 23,
  kFloat8E4M3FNType = 24,
  kFloat8E5M2FNUZType = 25,
  kFloat8E4M3FNUZType = 26,
  kFloat8E4M3B11FNUZType = 27,
  kFloat8E3M4Type = 28,
  kFloat4E2M1FNType = 29,
  kFloat6E2M3FNType = 30,
  kFloat6E3M2FNType = 31,
  kFloat8E8M0FNUType = 32,
};

// The element type of the builtin float type codes from 21 on.
constexpr ElementType kNewerFloatTypes[] = {
    ElementType::kTF32,          ElementType::kF8E5M2,     ElementType::kF8E4M3,
    ElementType::kF8E4M3FN,      ElementType::kF8E5M2FNUZ, ElementType::kF8E4M3FNUZ,
    ElementType::kF8E4M3B11FNUZ, ElementType::kF8E3M4,     ElementType::kF4E2M1FN,
    ElementType::kF6E2M3FN,      ElementType::kF6E3M2FN,   ElementType::kF8E8M0FNU,
};
static_assert(std::size(kNewerFloatTypes) == kFloat8E8M0FNUType - kFloatTF32Type + 1);

AttrEntry Loc(ir::Location location) { return AttrEntry{{}, std::move(location)}; }

// A reference to a StringAttr: its text, or null while pending.
StatusOr<const std::string*> ReadStringAttr(EntryDecoder& decoder, std::string_view what) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(const ir::Attribute* attribute, decoder.ReadPlainAttribute(what));
  if (attribute == nullptr) return static_cast<const std::string*>(nullptr);
  if (!attribute->Is(ir::AttrKind::kString)) {
    return decoder.reader().ErrorAt(offset, StrCat("expected a string attribute (", what,
                                                   "), found ", AttrText(*attribute)));
  }
  return &attribute->storage().text;
}

Decoded<AttrEntry> ReadDictionary(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount("dictionary size", 2));
  std::vector<std::pair<const std::string*, const ir::Attribute*>> entries;
  entries.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(const std::string* name, ReadStringAttr(decoder, "dictionary key"));
    KILN_ASSIGN_OR_RETURN(const ir::Attribute* value,
                          decoder.ReadPlainAttribute("dictionary value"));
    entries.emplace_back(name, value);
  }
  if (decoder.pending()) return kPending;
  std::vector<ir::NamedAttribute> fields;
  fields.reserve(entries.size());
  for (const auto& [name, value] : entries) fields.push_back({*name, *value});
  return Plain(ir::Attribute::Dictionary(std::move(fields)));
}

Decoded<AttrEntry> ReadSymbolRef(EntryDecoder& decoder, bool nested) {
  KILN_ASSIGN_OR_RETURN(const std::string* root, ReadStringAttr(decoder, "symbol name"));
  std::vector<const ir::Attribute*> leaves;
  if (nested) {
    KILN_ASSIGN_OR_RETURN(leaves, ReadAttributeList(decoder, "nested symbol reference"));
  }
  if (decoder.pending()) return kPending;
  std::vector<std::string> path{*root};
  for (const ir::Attribute* leaf : leaves) {
    if (!leaf->Is(ir::AttrKind::kSymbolRef) || leaf->storage().symbol_path.size() != 1) {
      return decoder.Error(StrCat("expected a flat symbol reference in a nested symbol "
                                  "reference, found ",
                                  AttrText(*leaf)));
    }
    path.push_back(leaf->storage().symbol_path[0]);
  }
  return Plain(ir::Attribute::SymbolRef(std::move(path)));
}

Decoded<AttrEntry> ReadIntegerAttr(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("integer type"));
  KILN_REQUIRE_DECODED(type);
  const int width = IntegerBitWidth(*type);
  if (width == 0) {
    return decoder.reader().ErrorAt(offset, StrCat("expected an integer or index type for an "
                                                   "integer attribute, found ",
                                                   TypeText(*type)));
  }
  KILN_ASSIGN_OR_RETURN(uint64_t bits, ReadAPInt(decoder, width, "integer value"));
  if (type->element_type() == ElementType::kPred) return Plain(ir::Attribute::Bool(bits & 1));
  return Plain(ir::Attribute::Integer(TruncateToWidth(bits, width, !IsUnsigned(*type)), *type));
}

Decoded<AttrEntry> ReadFloatAttr(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("float type"));
  KILN_REQUIRE_DECODED(type);
  KILN_ASSIGN_OR_RETURN(double value, ReadAPFloat(decoder, *type, "float value"));
  return Plain(ir::Attribute::Float(value, *type));
}

Decoded<AttrEntry> ReadFileLineCol(EntryDecoder& decoder, bool range) {
  KILN_ASSIGN_OR_RETURN(const std::string* file, ReadStringAttr(decoder, "file name"));
  std::vector<uint64_t> numbers;
  if (range) {
    const uint64_t offset = decoder.reader().offset();
    KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount("line/column count"));
    if (count > 4) {
      return decoder.reader().ErrorAt(offset, StrCat("expected at most 4 line/column numbers in "
                                                     "a file range location, found ",
                                                     count));
    }
    for (uint64_t i = 0; i < count; ++i) {
      KILN_ASSIGN_OR_RETURN(uint64_t number, decoder.reader().ReadVarInt("line/column"));
      numbers.push_back(number);
    }
  } else {
    for (const char* what : {"line", "column"}) {
      KILN_ASSIGN_OR_RETURN(uint64_t number, decoder.reader().ReadVarInt(what));
      numbers.push_back(number);
    }
  }
  if (decoder.pending()) return kPending;
  // A range stores [] | [line] | [line, column] | [line, column, end column]
  // | [line, column, end line, end column].
  const size_t count = numbers.size();
  numbers.resize(4, 0);
  uint64_t end_line = numbers[2];
  uint64_t end_column = numbers[3];
  if (count == 3) {
    end_line = numbers[0];
    end_column = numbers[2];
  }
  auto as_int = [](uint64_t value) { return static_cast<int64_t>(value); };
  return Loc(ir::Location::FileLineCol(*file, as_int(numbers[0]), as_int(numbers[1]),
                                       as_int(end_line), as_int(end_column)));
}

Decoded<AttrEntry> ReadFused(EntryDecoder& decoder, bool with_metadata) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount("fused location count"));
  std::vector<const ir::Location*> locations;
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(const ir::Location* location, decoder.ReadLocation("fused location"));
    locations.push_back(location);
  }
  const AttrEntry* metadata = nullptr;
  if (with_metadata) {
    KILN_ASSIGN_OR_RETURN(metadata, decoder.ReadAttribute("fused location metadata"));
  }
  if (decoder.pending()) return kPending;
  std::vector<ir::Location> children;
  for (const ir::Location* location : locations) children.push_back(*location);
  ir::Attribute metadata_attribute;
  if (metadata != nullptr) {
    if (metadata->is_location()) {
      // A location as metadata has no use in Kiln; its text is not worth
      // building (shared sub-locations could make it exponentially long).
      metadata_attribute = ir::Attribute::Opaque("loc(...)");
    } else {
      metadata_attribute = metadata->attribute;
    }
  }
  return Loc(ir::Location::Fused(std::move(children), std::move(metadata_attribute)));
}

Decoded<AttrEntry> ReadDenseArray(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("dense array element type"));
  KILN_REQUIRE_DECODED(type);
  KILN_ASSIGN_OR_RETURN(uint64_t size, decoder.reader().ReadVarInt("dense array size"));
  const uint64_t blob_offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(std::span<const uint8_t> blob, decoder.ReadBlob("dense array data"));
  const bool is_float = type->Is(ir::TypeKind::kElement) &&
                        (type->element_type() == ElementType::kF32 ||
                         type->element_type() == ElementType::kF64);
  const int width = is_float ? GetElementTypeInfo(type->element_type()).bit_width
                             : IntegerBitWidth(*type);
  if (width == 0 || width == 2 || width == 4) {
    return decoder.reader().ErrorAt(offset, StrCat("expected an integer, f32 or f64 element type "
                                                   "for a dense array, found ",
                                                   TypeText(*type)));
  }
  const size_t element_bytes = static_cast<size_t>((width + 7) / 8);
  if (size > blob.size() || blob.size() != size * element_bytes) {
    return decoder.reader().ErrorAt(blob_offset,
                                    StrCat("expected ", size, " elements of ", element_bytes,
                                           " bytes in a dense array, "
                                           "found ",
                                           blob.size(), " bytes"));
  }
  std::vector<int64_t> ints;
  std::vector<double> floats;
  for (size_t i = 0; i < size; ++i) {
    uint64_t bits = 0;
    for (size_t b = element_bytes; b-- > 0;) bits = (bits << 8) | blob[i * element_bytes + b];
    if (is_float) {
      double value = 0;
      FloatBitsToDouble(type->element_type(), bits, value);
      floats.push_back(value);
    } else {
      ints.push_back(TruncateToWidth(bits, width, !IsUnsigned(*type)));
    }
  }
  return Plain(ir::Attribute::DenseArray(*type, std::move(ints), std::move(floats)));
}

Decoded<AttrEntry> ReadDenseElements(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("dense elements type"));
  KILN_REQUIRE_DECODED(type);
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(std::span<const uint8_t> blob, decoder.ReadBlob("dense elements data"));
  KILN_ASSIGN_OR_RETURN(ir::Attribute attribute,
                        DenseElementsFromBlob(*type, blob, DenseFlavor::kBuiltin, decoder.reader(),
                                              offset));
  return Plain(std::move(attribute));
}

Decoded<AttrEntry> ReadDenseStrings(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("dense strings type"));
  KILN_REQUIRE_DECODED(type);
  KILN_ASSIGN_OR_RETURN(uint64_t splat, decoder.reader().ReadVarInt("dense strings splat flag"));
  const uint64_t count = splat != 0 || !type->HasStaticShape()
                             ? 1
                             : static_cast<uint64_t>(type->NumElements());
  if (count > decoder.reader().remaining()) {
    return decoder.Error(StrCat("expected ", count, " strings of dense string data"));
  }
  std::string text = count == 1 ? "dense<" : "dense<[";
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(std::string_view element, decoder.ReadString("dense string"));
    KILN_RETURN_IF_ERROR(decoder.ChargeText(element.size() + 4));
    text += (i ? ", " : "") + QuotedString(element);
  }
  text += count == 1 ? "> : " : "]> : ";
  return Plain(ir::Attribute::Opaque(text + TypeText(*type)));
}

Decoded<ir::Type> ReadIntegerType(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(uint64_t packed, decoder.reader().ReadVarInt("integer width"));
  const uint64_t width = packed >> 2;
  const uint64_t signedness = packed & 3;  // 0 signless, 1 signed, 2 unsigned
  if (width == 1 && signedness == 0) return ir::Type::Element(ElementType::kPred);
  static constexpr uint64_t kWidths[] = {1, 2, 4, 8, 16, 32, 64};
  static constexpr ElementType kSigned[] = {ElementType::kS1, ElementType::kS2,  ElementType::kS4,
                                            ElementType::kS8, ElementType::kS16, ElementType::kS32,
                                            ElementType::kS64};
  static constexpr ElementType kUnsigned[] = {
      ElementType::kU1,  ElementType::kU2,  ElementType::kU4, ElementType::kU8,
      ElementType::kU16, ElementType::kU32, ElementType::kU64};
  for (size_t i = 0; i < std::size(kWidths); ++i) {
    if (kWidths[i] == width && signedness != 3) {
      return ir::Type::Element(signedness == 2 ? kUnsigned[i] : kSigned[i]);
    }
  }
  const char* prefix = signedness == 1 ? "si" : signedness == 2 ? "ui" : "i";
  return ir::Type::Opaque(StrCat(prefix, width));
}

}  // namespace

Decoded<AttrEntry> DecodeBuiltinAttribute(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("builtin attribute kind"));
  switch (code) {
    case kArray: {
      KILN_ASSIGN_OR_RETURN(auto elements, ReadAttributeList(decoder, "array element"));
      if (decoder.pending()) return kPending;
      return Plain(ir::Attribute::Array(Values(elements)));
    }
    case kDictionary: return ReadDictionary(decoder);
    case kString:
    case kStringWithType: {
      KILN_ASSIGN_OR_RETURN(std::string_view text, decoder.ReadString("string value"));
      if (code == kStringWithType) {
        KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("string type"));
        if (type == nullptr) return kPending;
      }
      return Plain(ir::Attribute::String(std::string(text)));
    }
    case kFlatSymbolRef:
    case kSymbolRef: return ReadSymbolRef(decoder, code == kSymbolRef);
    case kTypeAttr: {
      KILN_ASSIGN_OR_RETURN(const ir::Type* type, decoder.ReadType("type value"));
      KILN_REQUIRE_DECODED(type);
      return Plain(ir::Attribute::TypeAttr(*type));
    }
    case kUnit: return Plain(ir::Attribute::Unit());
    case kInteger: return ReadIntegerAttr(decoder);
    case kFloat: return ReadFloatAttr(decoder);
    case kCallSiteLoc: {
      KILN_ASSIGN_OR_RETURN(const ir::Location* callee, decoder.ReadLocation("callee location"));
      KILN_ASSIGN_OR_RETURN(const ir::Location* caller, decoder.ReadLocation("caller location"));
      if (decoder.pending()) return kPending;
      return Loc(ir::Location::CallSite(*callee, *caller));
    }
    case kFileLineColLoc:
    case kFileLineColRange: return ReadFileLineCol(decoder, code == kFileLineColRange);
    case kFusedLoc:
    case kFusedLocWithMetadata: return ReadFused(decoder, code == kFusedLocWithMetadata);
    case kNameLoc: {
      KILN_ASSIGN_OR_RETURN(const std::string* name, ReadStringAttr(decoder, "location name"));
      KILN_ASSIGN_OR_RETURN(const ir::Location* child, decoder.ReadLocation("child location"));
      if (decoder.pending()) return kPending;
      return Loc(ir::Location::Name(*name, *child));
    }
    case kUnknownLoc: return Loc(ir::Location::Unknown());
    case kDenseArray: return ReadDenseArray(decoder);
    case kDenseIntOrFPElements: return ReadDenseElements(decoder);
    case kDenseStringElements: return ReadDenseStrings(decoder);
    case kDistinct: {
      KILN_ASSIGN_OR_RETURN(const AttrEntry* referenced, decoder.ReadAttribute("distinct value"));
      KILN_REQUIRE_DECODED(referenced);
      return *referenced;  // Kiln keeps the value; distinct identity has no meaning here.
    }
    case kDenseResourceElements:
    case kSparseElements:
      return Unimplemented("byte ", offset, ": ",
                           code == kSparseElements ? "sparse" : "dense resource",
                           " elements attributes are not supported by Kiln (",
                           decoder.reader().context(), ")");
    default:
      return decoder.reader().ErrorAt(offset, StrCat("expected a builtin attribute kind "
                                                     "(0 to 22), found ",
                                                     code));
  }
}

Decoded<ir::Type> DecodeBuiltinType(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("builtin type kind"));
  auto element = [](ElementType type) { return ir::Type::Element(type); };
  if (code >= kFloatTF32Type && code <= kFloat8E8M0FNUType) {
    return element(kNewerFloatTypes[code - kFloatTF32Type]);
  }
  switch (code) {
    case kIntegerType: return ReadIntegerType(decoder);
    case kIndexType: return element(ElementType::kIndex);
    case kBFloat16Type: return element(ElementType::kBF16);
    case kFloat16Type: return element(ElementType::kF16);
    case kFloat32Type: return element(ElementType::kF32);
    case kFloat64Type: return element(ElementType::kF64);
    case kFloat80Type: return ir::Type::Opaque("f80");
    case kFloat128Type: return ir::Type::Opaque("f128");
    case kNoneType: return ir::Type::None();
    case kFunctionType: {
      KILN_ASSIGN_OR_RETURN(auto inputs, ReadTypeList(decoder, "function input"));
      KILN_ASSIGN_OR_RETURN(auto results, ReadTypeList(decoder, "function result"));
      if (decoder.pending()) return kPending;
      return ir::Type::Function(Values(inputs), Values(results));
    }
    case kComplexType: {
      KILN_ASSIGN_OR_RETURN(const ir::Type* part, decoder.ReadType("complex element"));
      KILN_REQUIRE_DECODED(part);
      if (part->Is(ir::TypeKind::kElement) && part->element_type() == ElementType::kF32) {
        return element(ElementType::kC64);
      }
      if (part->Is(ir::TypeKind::kElement) && part->element_type() == ElementType::kF64) {
        return element(ElementType::kC128);
      }
      std::string text = StrCat("complex<", TypeText(*part), ">");
      KILN_RETURN_IF_ERROR(decoder.ChargeText(text.size()));
      return ir::Type::Opaque(std::move(text));
    }
    case kRankedTensorType:
    case kRankedTensorTypeWithEncoding: {
      // The only encoding Kiln models: StableHLO's bounds of dynamic dimensions.
      std::vector<int64_t> bounds;
      if (code == kRankedTensorTypeWithEncoding) {
        const uint64_t encoding_offset = decoder.reader().offset();
        KILN_ASSIGN_OR_RETURN(const ir::Attribute* encoding,
                              decoder.ReadPlainAttribute("tensor encoding"));
        KILN_REQUIRE_DECODED(encoding);
        KILN_ASSIGN_OR_RETURN(bounds, BoundsOfEncoding(decoder, *encoding, encoding_offset));
      }
      const uint64_t dims_offset = decoder.reader().offset();
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, ReadSignedVarInts(decoder, "dimension"));
      KILN_ASSIGN_OR_RETURN(const ir::Type* part, decoder.ReadType("tensor element type"));
      KILN_REQUIRE_DECODED(part);
      return MakeTensorType(decoder, std::move(dims), *part, std::move(bounds), dims_offset);
    }
    case kTupleType: {
      KILN_ASSIGN_OR_RETURN(auto members, ReadTypeList(decoder, "tuple member"));
      if (decoder.pending()) return kPending;
      return ir::Type::Tuple(Values(members));
    }
    case kUnrankedTensorType: {
      KILN_ASSIGN_OR_RETURN(const ir::Type* part, decoder.ReadType("tensor element type"));
      KILN_REQUIRE_DECODED(part);
      return ir::Type::UnrankedTensor(*part);
    }
    case kMemRefType:
    case kMemRefTypeWithMemSpace:
    case kUnrankedMemRefType:
    case kUnrankedMemRefTypeWithMemSpace:
    case kVectorType:
    case kVectorTypeWithScalableDims:
      return Unimplemented("byte ", offset, ": Kiln does not support builtin ",
                           code >= kVectorType ? "vector" : "memref", " types (",
                           decoder.reader().context(), ")");
    default:
      return decoder.reader().ErrorAt(offset, StrCat("expected a builtin type kind (0 to 32), "
                                                     "found ",
                                                     code));
  }
}

StatusOr<ir::Attribute> TextualAttribute(std::string_view /*dialect*/, std::string_view text) {
  return ir::Attribute::Opaque(std::string(text));
}

StatusOr<ir::Type> TextualType(std::string_view dialect, std::string_view text) {
  if (dialect == "builtin") {
    // Builtin types without a bytecode encoding are the newer float types.
    for (int i = 0; i <= static_cast<int>(ElementType::kIndex); ++i) {
      const auto type = static_cast<ElementType>(i);
      if (type != ElementType::kToken && ElementTypeText(type) == text) {
        return ir::Type::Element(type);
      }
    }
  }
  return ir::Type::Opaque(std::string(text));
}

}  // namespace kiln::frontend::vhlo
