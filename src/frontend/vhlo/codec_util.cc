#include "frontend/vhlo/codec_util.h"

#include "frontend/vhlo/numbers.h"
#include "frontend/vhlo/text.h"
#include "ir/op_syntax.h"

namespace kiln::frontend::vhlo {
namespace {

// Words of an APInt of `width` bits, least significant first.
StatusOr<std::vector<uint64_t>> ReadAPIntWords(EntryDecoder& decoder, int width,
                                               std::string_view what) {
  bytecode::EncodingReader& reader = decoder.reader();
  if (width <= 8) {
    KILN_ASSIGN_OR_RETURN(uint8_t byte, reader.ReadByte(what));
    return std::vector<uint64_t>{byte};
  }
  if (width <= 64) {
    KILN_ASSIGN_OR_RETURN(int64_t value, reader.ReadSignedVarInt(what));
    return std::vector<uint64_t>{static_cast<uint64_t>(value)};
  }
  const uint64_t max_words = (static_cast<uint64_t>(width) + 63) / 64;
  const uint64_t offset = reader.offset();
  KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount(what));
  if (count > max_words) {
    return reader.ErrorAt(offset, StrCat("expected at most ", max_words, " words for a ", width,
                                         "-bit integer (", what, "), found ", count));
  }
  std::vector<uint64_t> words;
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t word, reader.ReadSignedVarInt(what));
    words.push_back(static_cast<uint64_t>(word));
  }
  words.resize(static_cast<size_t>(max_words), 0);
  return words;
}

int FloatBitWidth(const ir::Type& type) {
  if (type.Is(ir::TypeKind::kOpaque)) {
    if (type.text() == "f80") return 80;
    if (type.text() == "f128") return 128;
    return 0;
  }
  if (!type.Is(ir::TypeKind::kElement)) return 0;
  double unused;
  if (!FloatBitsToDouble(type.element_type(), 0, unused)) return 0;
  return GetElementTypeInfo(type.element_type()).bit_width;
}

}  // namespace

StatusOr<uint64_t> ReadAPInt(EntryDecoder& decoder, int width, std::string_view what) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(std::vector<uint64_t> words, ReadAPIntWords(decoder, width, what));
  const uint64_t extension = static_cast<int64_t>(words[0]) < 0 ? ~uint64_t{0} : 0;
  for (size_t i = 1; i < words.size(); ++i) {
    if (words[i] != extension) {
      return Unimplemented("byte ", offset, ": ", what, " does not fit in 64 bits (",
                           decoder.reader().context(), "); Kiln holds integers of up to 64 bits");
    }
  }
  return words[0];
}

StatusOr<double> ReadAPFloat(EntryDecoder& decoder, const ir::Type& type, std::string_view what) {
  const uint64_t offset = decoder.reader().offset();
  const int width = FloatBitWidth(type);
  if (width == 0) {
    return decoder.reader().ErrorAt(offset, StrCat("expected a floating-point type for ", what,
                                                   ", found ", TypeText(type)));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<uint64_t> words, ReadAPIntWords(decoder, width, what));
  if (width == 80) return Float80BitsToDouble(words[0], static_cast<uint16_t>(words[1]));
  if (width == 128) return Float128BitsToDouble(words[0], words[1]);
  const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  double value = 0;
  FloatBitsToDouble(type.element_type(), words[0] & mask, value);
  return value;
}

int IntegerBitWidth(const ir::Type& type) {
  if (!type.Is(ir::TypeKind::kElement)) return 0;
  switch (type.element_type()) {
    case ElementType::kPred: return 1;
    case ElementType::kS1:
    case ElementType::kU1: return 1;
    case ElementType::kS2:
    case ElementType::kU2: return 2;
    case ElementType::kS4:
    case ElementType::kU4: return 4;
    case ElementType::kS8:
    case ElementType::kU8: return 8;
    case ElementType::kS16:
    case ElementType::kU16: return 16;
    case ElementType::kS32:
    case ElementType::kU32: return 32;
    case ElementType::kS64:
    case ElementType::kU64:
    case ElementType::kIndex: return 64;
    default: return 0;
  }
}

bool IsUnsigned(const ir::Type& type) {
  if (!type.Is(ir::TypeKind::kElement)) return false;
  switch (type.element_type()) {
    case ElementType::kPred:
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64: return true;
    default: return false;
  }
}

StatusOr<std::vector<int64_t>> ReadSignedVarInts(EntryDecoder& decoder, std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount(what));
  std::vector<int64_t> values;
  values.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t value, decoder.reader().ReadSignedVarInt(what));
    values.push_back(value);
  }
  return values;
}

StatusOr<std::vector<const ir::Attribute*>> ReadAttributeList(EntryDecoder& decoder,
                                                              std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount(what));
  std::vector<const ir::Attribute*> list;
  list.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(const ir::Attribute* element, decoder.ReadPlainAttribute(what));
    list.push_back(element);
  }
  return list;
}

StatusOr<std::vector<const ir::Type*>> ReadTypeList(EntryDecoder& decoder, std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount(what));
  std::vector<const ir::Type*> list;
  list.reserve(static_cast<size_t>(count));
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(const ir::Type* element, decoder.ReadType(what));
    list.push_back(element);
  }
  return list;
}

std::vector<ir::Attribute> Values(const std::vector<const ir::Attribute*>& pointers) {
  std::vector<ir::Attribute> values;
  values.reserve(pointers.size());
  for (const ir::Attribute* pointer : pointers) values.push_back(*pointer);
  return values;
}

std::vector<ir::Type> Values(const std::vector<const ir::Type*>& pointers) {
  std::vector<ir::Type> values;
  values.reserve(pointers.size());
  for (const ir::Type* pointer : pointers) values.push_back(*pointer);
  return values;
}

StatusOr<ir::Type> MakeTensorType(EntryDecoder& decoder, std::vector<int64_t> dims,
                                  ir::Type element, std::vector<int64_t> bounds, uint64_t offset) {
  for (int64_t dim : dims) {
    if (dim < 0 && dim != ir::kDynamic) {
      return decoder.reader().ErrorAt(
          offset, StrCat("expected tensor dimensions >= 0 or dynamic, found ", dim));
    }
  }
  if (!bounds.empty() && bounds.size() != dims.size()) {
    return decoder.reader().ErrorAt(offset,
                                    StrCat("expected ", dims.size(),
                                           " bounds (one per dimension), found ", bounds.size()));
  }
  return ir::Type::Tensor(std::move(element), std::move(dims), std::move(bounds));
}

StatusOr<std::vector<int64_t>> BoundsOfEncoding(EntryDecoder& decoder,
                                                const ir::Attribute& encoding, uint64_t offset) {
  ir::Attribute list = encoding.Is(ir::AttrKind::kStruct) &&
                               encoding->text == "stablehlo.type_extensions"
                           ? encoding.Get("bounds")
                           : ir::Attribute();
  if (!list) {
    return Unimplemented("byte ", offset,
                         ": Kiln supports only bounds as a tensor encoding, "
                         "found ",
                         AttrText(encoding), " (", decoder.reader().context(), ")");
  }
  return list->int_values;
}

namespace {

struct EnumInfo {
  const char* mnemonic;
  std::array<const char*, 6> values;  // by encoded value; null = no such value
};

const EnumInfo& GetEnumInfo(HloEnum which) {
  static constexpr EnumInfo kInfos[] = {
      {"comparison_direction", {"EQ", "NE", "GE", "GT", "LE", "LT"}},
      {"comparison_type", {"NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"}},
      {"fft_type", {"FFT", "IFFT", "RFFT", "IRFFT"}},
      {"precision", {"DEFAULT", "HIGH", "HIGHEST"}},
      {"rng_algorithm", {"DEFAULT", "THREE_FRY", "PHILOX"}},
      {"rng_distribution", {nullptr, "UNIFORM", "NORMAL"}},
      {"transpose", {"TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}},
      {"result_accuracy_mode", {"DEFAULT", "HIGHEST", "TOLERANCE"}},
  };
  return kInfos[static_cast<size_t>(which)];
}

}  // namespace

AttrEntry Plain(ir::Attribute attribute) { return AttrEntry{std::move(attribute), {}}; }

ir::Attribute I64(int64_t value) {
  return ir::Attribute::Integer(value, ir::Type::Element(ElementType::kS64));
}

Decoded<AttrEntry> ReadHloEnum(EntryDecoder& decoder, HloEnum which, std::string_view dialect) {
  const EnumInfo& info = GetEnumInfo(which);
  const std::string family = StrCat(dialect, ".", info.mnemonic);
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t value, decoder.reader().ReadVarInt(family));
  if (value >= info.values.size() || info.values[value] == nullptr) {
    return decoder.reader().ErrorAt(offset, StrCat("expected a ", family, " value, found ", value));
  }
  return Plain(ir::Attribute::Enum(family, info.values[value]));
}

Decoded<AttrEntry> ReadOutputOperandAlias(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(auto output_indices, ReadSignedVarInts(decoder, "output tuple index"));
  KILN_ASSIGN_OR_RETURN(int64_t operand, decoder.reader().ReadSignedVarInt("operand index"));
  KILN_ASSIGN_OR_RETURN(auto operand_indices, ReadSignedVarInts(decoder, "operand tuple index"));
  return Plain(ir::StructOfFields("stablehlo.output_operand_alias",
                                  {ir::Attribute::DenseI64Array(std::move(output_indices)),
                                   I64(operand),
                                   ir::Attribute::DenseI64Array(std::move(operand_indices))}));
}

Decoded<AttrEntry> ReadResultAccuracy(EntryDecoder& decoder) {
  const ir::Type f64 = ir::Type::Element(ElementType::kF64);
  KILN_ASSIGN_OR_RETURN(double atol, ReadAPFloat(decoder, f64, "atol"));
  KILN_ASSIGN_OR_RETURN(double rtol, ReadAPFloat(decoder, f64, "rtol"));
  KILN_ASSIGN_OR_RETURN(int64_t ulps, decoder.reader().ReadSignedVarInt("ulps"));
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(const ir::Attribute* mode, decoder.ReadPlainAttribute("accuracy mode"));
  KILN_REQUIRE_DECODED(mode);
  if (!mode->Is(ir::AttrKind::kEnum) || mode->storage().text != "stablehlo.result_accuracy_mode") {
    return decoder.reader().ErrorAt(offset, StrCat("expected a result accuracy mode, found ",
                                                   AttrText(*mode)));
  }
  // Zero tolerances are left out, as printed.
  return Plain(ir::StructOfFields("stablehlo.result_accuracy",
                                  {ir::Attribute::Float(atol, f64), ir::Attribute::Float(rtol, f64),
                                   I64(ulps), *mode}));
}

Decoded<AttrEntry> ReadTypeExtensions(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(auto bounds, ReadSignedVarInts(decoder, "bound"));
  return Plain(ir::StructOfFields("stablehlo.type_extensions",
                                  {ir::Attribute::DenseI64Array(std::move(bounds))}));
}

Decoded<AttrEntry> ReadSubAxisInfo(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(int64_t pre_size, decoder.reader().ReadSignedVarInt("pre-size"));
  KILN_ASSIGN_OR_RETURN(int64_t size, decoder.reader().ReadSignedVarInt("size"));
  return Plain(ir::Attribute::Struct("stablehlo.sub_axis_info",
                                     {{"pre_size", I64(pre_size)}, {"size", I64(size)}}));
}

ir::Attribute AxisRefStruct(std::string_view name, const ir::Attribute* sub_axis_info) {
  std::vector<ir::NamedAttribute> fields{{"name", ir::Attribute::String(std::string(name))}};
  if (sub_axis_info != nullptr) fields.push_back({"sub_axis_info", *sub_axis_info});
  return ir::Attribute::Struct("stablehlo.axis_ref", std::move(fields));
}

ir::Attribute MeshAxisStruct(std::string_view name, int64_t size) {
  return ir::Attribute::Struct("stablehlo.mesh_axis",
                               {{"name", ir::Attribute::String(std::string(name))},
                                {"size", I64(size)}});
}

ir::Attribute MeshStruct(const ir::Attribute& axes, const ir::Attribute* device_ids) {
  std::vector<ir::NamedAttribute> fields{{"axes", axes}};
  if (device_ids != nullptr) fields.push_back({"device_ids", *device_ids});
  return ir::Attribute::Struct("stablehlo.mesh", std::move(fields));
}

ir::Attribute ReplicaGroupMeshAxesStruct(const ir::Attribute& mesh, const ir::Attribute& axes) {
  ir::Attribute mesh_value = mesh.Is(ir::AttrKind::kString) ? ir::Attribute::SymbolRef({mesh->text})
                                                            : mesh;
  return ir::Attribute::Struct("stablehlo.replica_group_mesh_axes",
                               {{"mesh", mesh_value}, {"axes", axes}});
}

StatusOr<ir::Type> FutureType(EntryDecoder& decoder, const std::vector<const ir::Type*>& types) {
  std::string text = "!stablehlo.future<";
  for (size_t i = 0; i < types.size(); ++i) {
    std::string member = TypeText(*types[i]);
    KILN_RETURN_IF_ERROR(decoder.ChargeText(member.size() + 2));
    text += (i ? ", " : "") + member;
  }
  return ir::Type::Opaque(text + ">");
}

}  // namespace kiln::frontend::vhlo
