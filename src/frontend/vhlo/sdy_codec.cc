// Shardy (sdy) attributes: their bytecode (openxla/shardy:
// shardy/dialect/sdy/ir/bytecode.td, kinds by position in its list) decoded
// to the MLIR text Shardy prints (attrs.td formats, printers.cc), kept as
// Opaque attributes until Kiln models sharding (docs/ir.md).
#include "frontend/vhlo/codec_util.h"
#include "frontend/vhlo/text.h"

namespace kiln::frontend::vhlo {
namespace {

enum SdyAttributeCode : uint64_t {
  kManualAxes = 0,
  kMeshAxis = 1,
  kMesh = 2,
  kSubAxisInfo = 3,
  kAxisRef = 4,
  kDimensionSharding = 5,
  kTensorShardingV1 = 6,
  kTensorShardingPerValueV1 = 7,
  kDimMapping = 8,
  kTensorMapping = 9,
  kOpShardingRule = 10,
  kAxisRefList = 11,
  kListOfAxisRefLists = 12,
  kAllToAllParam = 13,
  kAllToAllParamList = 14,
  kTensorShardingV2 = 15,
  kTensorShardingPerValueV2 = 16,
  kTensorShardingV3 = 17,
};

// The mnemonic of each kind, for the full text "#sdy.<mnemonic><body>"
// (bodies starting with '<') or "#sdy<<mnemonic><body>>" (others).
constexpr const char* kMnemonics[] = {"manual_axes",
                                      "mesh_axis",
                                      "mesh",
                                      "sub_axis_info",
                                      "axis_ref",
                                      "dimension_sharding",
                                      "sharding",
                                      "sharding_per_value",
                                      "dim_mapping",
                                      "tensor_mapping",
                                      "op_sharding_rule",
                                      "axis_ref_list",
                                      "list_of_axis_ref_lists",
                                      "all_to_all_param",
                                      "all_to_all_param_list",
                                      "sharding",
                                      "sharding_per_value",
                                      "sharding"};

std::string FullText(uint64_t code, const std::string& body) {
  const std::string mnemonic = kMnemonics[code];
  if (!body.empty() && body.front() == '<') return StrCat("#sdy.", mnemonic, body);
  return StrCat("#sdy<", mnemonic, body, ">");
}

// The body of a nested sdy attribute of kind `code` (what Shardy's
// printStrippedAttrOrType prints), or an error naming `what`.
StatusOr<std::string> Body(EntryDecoder& decoder, const AttrEntry& entry, uint64_t code,
                           std::string_view what) {
  const bool matches = entry.sdy_kind >= 0 &&
                       std::string_view(kMnemonics[entry.sdy_kind]) == kMnemonics[code];
  if (!matches) {
    return decoder.Error(StrCat("expected an sdy ", kMnemonics[code], " (", what, "), found ",
                                entry.is_location() ? "a location" : AttrText(entry.attribute)));
  }
  return entry.sdy_body;
}

// A list of references to sdy attributes of kind `code`, as their bodies
// joined by ", "; nullopt while pending.
StatusOr<std::optional<std::string>> ReadBodies(EntryDecoder& decoder, uint64_t code,
                                                std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, decoder.reader().ReadCount(what));
  std::vector<const AttrEntry*> list;
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(const AttrEntry* entry, decoder.ReadAttribute(what));
    list.push_back(entry);
  }
  if (decoder.pending()) return std::optional<std::string>();
  std::string text;
  for (size_t i = 0; i < list.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(std::string body, Body(decoder, *list[i], code, what));
    KILN_RETURN_IF_ERROR(decoder.ChargeText(body.size() + 2));
    text += (i ? ", " : "") + body;
  }
  return std::optional<std::string>(std::move(text));
}

std::string FactorSymbol(int64_t factor) {
  constexpr int64_t kStartAtZ = 'z' - 'i';
  if (factor >= 0 && factor <= kStartAtZ) return std::string(1, static_cast<char>('i' + factor));
  return StrCat("z_", factor - kStartAtZ);
}

std::string JoinInts(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) text += (i ? ", " : "") + StrCat(values[i]);
  return text;
}

Decoded<std::string> ReadTensorSharding(EntryDecoder& decoder, uint64_t code) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(const AttrEntry* mesh, decoder.ReadAttribute("mesh or reference"));
  KILN_ASSIGN_OR_RETURN(auto dims, ReadBodies(decoder, kDimensionSharding, "dimension sharding"));
  KILN_ASSIGN_OR_RETURN(auto replicated, ReadBodies(decoder, kAxisRef, "replicated axis"));
  std::optional<std::string> unreduced = std::string();
  int64_t reduction = 0;
  if (code != kTensorShardingV1) {
    KILN_ASSIGN_OR_RETURN(unreduced, ReadBodies(decoder, kAxisRef, "unreduced axis"));
  }
  if (code == kTensorShardingV3) {
    KILN_ASSIGN_OR_RETURN(reduction, decoder.reader().ReadSignedVarInt("reduction op"));
  }
  if (decoder.pending()) return kPending;
  std::string text = "<";
  if (mesh->attribute.Is(ir::AttrKind::kSymbolRef)) {
    text += AttrText(mesh->attribute);
  } else {
    KILN_ASSIGN_OR_RETURN(std::string body, Body(decoder, *mesh, kMesh, "mesh"));
    KILN_RETURN_IF_ERROR(decoder.ChargeText(body.size()));
    text += "mesh" + body;
  }
  text += StrCat(", [", *dims, "]");
  if (!replicated->empty()) text += StrCat(", replicated={", *replicated, "}");
  if (!unreduced->empty()) {
    if (reduction < 0 || reduction > 2) {
      return decoder.reader().ErrorAt(offset,
                                      StrCat("expected a reduction op 0 to 2, found ", reduction));
    }
    static constexpr const char* kReductions[] = {"", "max", "min"};
    text += StrCat(", unreduced=", kReductions[reduction], "{", *unreduced, "}");
  }
  return text + ">";
}

Decoded<std::string> ReadOpShardingRule(EntryDecoder& decoder) {
  KILN_ASSIGN_OR_RETURN(auto sizes, ReadSignedVarInts(decoder, "factor size"));
  KILN_ASSIGN_OR_RETURN(auto operands, ReadBodies(decoder, kTensorMapping, "operand mapping"));
  KILN_ASSIGN_OR_RETURN(auto results, ReadBodies(decoder, kTensorMapping, "result mapping"));
  std::vector<std::vector<int64_t>> kinds;
  for (const char* what : {"reduction", "need_replication", "permutation", "blocked_propagation"}) {
    KILN_ASSIGN_OR_RETURN(auto factors, ReadSignedVarInts(decoder, what));
    kinds.push_back(std::move(factors));
  }
  KILN_ASSIGN_OR_RETURN(uint8_t custom, decoder.reader().ReadByte("custom rule flag"));
  if (decoder.pending()) return kPending;
  std::string text = StrCat("<(", *operands, ")->(", *results, ")");
  if (!sizes.empty()) {
    text += " {";
    for (size_t i = 0; i < sizes.size(); ++i) {
      text += StrCat(i ? ", " : "", FactorSymbol(static_cast<int64_t>(i)), "=", sizes[i]);
    }
    text += "}";
  }
  static constexpr const char* kNames[] = {"reduction", "need_replication", "permutation",
                                           "blocked_propagation"};
  for (size_t k = 0; k < kinds.size(); ++k) {
    if (kinds[k].empty()) continue;
    text += StrCat(" ", kNames[k], "={");
    for (size_t i = 0; i < kinds[k].size(); ++i) {
      text += (i ? ", " : "") + FactorSymbol(kinds[k][i]);
    }
    text += "}";
  }
  if (custom != 0) text += ", custom";
  return text + ">";
}

// The body text of the attribute of kind `code`.
Decoded<std::string> ReadBody(EntryDecoder& decoder, uint64_t code) {
  switch (code) {
    case kManualAxes: {
      KILN_ASSIGN_OR_RETURN(auto names, ReadAttributeList(decoder, "manual axis"));
      if (decoder.pending()) return kPending;
      std::string text = "{";
      for (size_t i = 0; i < names.size(); ++i) text += (i ? ", " : "") + AttrText(*names[i]);
      return text + "}";
    }
    case kMeshAxis: {
      KILN_ASSIGN_OR_RETURN(std::string_view name, decoder.ReadString("axis name"));
      KILN_ASSIGN_OR_RETURN(int64_t size, decoder.reader().ReadSignedVarInt("axis size"));
      return StrCat(QuotedString(name), "=", size);
    }
    case kMesh: {
      KILN_ASSIGN_OR_RETURN(auto axes, ReadBodies(decoder, kMeshAxis, "mesh axis"));
      KILN_ASSIGN_OR_RETURN(auto ids, ReadSignedVarInts(decoder, "device id"));
      if (decoder.pending()) return kPending;
      std::string text = StrCat("<[", *axes, "]");
      if (!ids.empty()) text += StrCat(", device_ids=[", JoinInts(ids), "]");
      return text + ">";
    }
    case kSubAxisInfo: {
      KILN_ASSIGN_OR_RETURN(int64_t pre_size, decoder.reader().ReadSignedVarInt("pre-size"));
      KILN_ASSIGN_OR_RETURN(int64_t size, decoder.reader().ReadSignedVarInt("size"));
      return StrCat("(", pre_size, ")", size);
    }
    case kAxisRef: {
      KILN_ASSIGN_OR_RETURN(std::string_view name, decoder.ReadString("axis name"));
      bool present = false;
      KILN_ASSIGN_OR_RETURN(const AttrEntry* info,
                            decoder.ReadOptionalAttribute("sub-axis info", present));
      if (decoder.pending()) return kPending;
      std::string text = QuotedString(name);
      if (present) {
        KILN_ASSIGN_OR_RETURN(std::string body,
                              Body(decoder, *info, kSubAxisInfo, "sub-axis info"));
        text += ":" + body;
      }
      return text;
    }
    case kDimensionSharding: {
      KILN_ASSIGN_OR_RETURN(auto axes, ReadBodies(decoder, kAxisRef, "axis"));
      KILN_ASSIGN_OR_RETURN(uint8_t closed, decoder.reader().ReadByte("closed flag"));
      KILN_ASSIGN_OR_RETURN(auto priority, decoder.reader().ReadVarIntWithFlag("priority"));
      if (decoder.pending()) return kPending;
      std::string text = "{" + *axes;
      if (closed == 0) text += axes->empty() ? "?" : ", ?";
      text += "}";
      if (priority.flag) text += StrCat("p", priority.value);
      return text;
    }
    case kTensorShardingV1:
    case kTensorShardingV2:
    case kTensorShardingV3: return ReadTensorSharding(decoder, code);
    case kTensorShardingPerValueV1:
    case kTensorShardingPerValueV2: {
      KILN_ASSIGN_OR_RETURN(auto shardings, ReadBodies(decoder, kTensorShardingV1, "sharding"));
      if (decoder.pending()) return kPending;
      return StrCat("<[", *shardings, "]>");
    }
    case kDimMapping: {
      KILN_ASSIGN_OR_RETURN(auto factors, ReadSignedVarInts(decoder, "factor index"));
      std::string text;
      for (int64_t factor : factors) text += FactorSymbol(factor);
      return text;
    }
    case kTensorMapping: {
      KILN_ASSIGN_OR_RETURN(auto dims, ReadBodies(decoder, kDimMapping, "dimension mapping"));
      if (decoder.pending()) return kPending;
      return StrCat("[", *dims, "]");
    }
    case kOpShardingRule: return ReadOpShardingRule(decoder);
    case kAxisRefList: {
      KILN_ASSIGN_OR_RETURN(auto axes, ReadBodies(decoder, kAxisRef, "axis"));
      if (decoder.pending()) return kPending;
      return StrCat("{", *axes, "}");
    }
    case kListOfAxisRefLists: {
      KILN_ASSIGN_OR_RETURN(auto lists, ReadBodies(decoder, kAxisRefList, "axis list"));
      if (decoder.pending()) return kPending;
      return StrCat("[", *lists, "]");
    }
    case kAllToAllParam: {
      KILN_ASSIGN_OR_RETURN(auto axes, ReadBodies(decoder, kAxisRef, "axis"));
      KILN_ASSIGN_OR_RETURN(int64_t source, decoder.reader().ReadSignedVarInt("source dim"));
      KILN_ASSIGN_OR_RETURN(int64_t target, decoder.reader().ReadSignedVarInt("target dim"));
      if (decoder.pending()) return kPending;
      return StrCat("{", *axes, "}: ", source, "->", target);
    }
    default: {  // kAllToAllParamList
      KILN_ASSIGN_OR_RETURN(auto params, ReadBodies(decoder, kAllToAllParam, "all-to-all param"));
      if (decoder.pending()) return kPending;
      return StrCat("[", *params, "]");
    }
  }
}

}  // namespace

Decoded<AttrEntry> DecodeSdyAttribute(EntryDecoder& decoder) {
  const uint64_t offset = decoder.reader().offset();
  KILN_ASSIGN_OR_RETURN(uint64_t code, decoder.reader().ReadVarInt("sdy attribute kind"));
  if (code >= std::size(kMnemonics)) {
    return Unimplemented("byte ", offset, ": unknown sdy attribute kind ", code,
                         " (Kiln reads kinds 0 to 17) (", decoder.reader().context(), ")");
  }
  KILN_ASSIGN_OR_RETURN(std::optional<std::string> body, ReadBody(decoder, code));
  if (!body) return kPending;
  KILN_RETURN_IF_ERROR(decoder.ChargeText(2 * body->size()));
  AttrEntry entry{ir::Attribute::Opaque(FullText(code, *body)), {}};
  entry.sdy_kind = static_cast<int>(code);
  entry.sdy_body = std::move(*body);
  return entry;
}

}  // namespace kiln::frontend::vhlo
