#include "frontend/vhlo/attr_table.h"

#include <algorithm>

#include "frontend/vhlo/text.h"

namespace kiln::frontend::vhlo {

using bytecode::EncodingReader;
using bytecode::File;

EntryDecoder::EntryDecoder(AttrTypeTable& table, const File::AttrTypeEntry& entry,
                           std::string_view dialect, std::string_view context)
    : table_(table), dialect_(dialect), reader_(entry.bytes, entry.offset, context) {}

const File& EntryDecoder::file() const { return table_.file(); }

StatusOr<const AttrEntry*> EntryDecoder::ReadAttribute(std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t index,
                        reader_.ReadIndex("an attribute index", what, file().attributes.size()));
  const AttrEntry* entry = table_.DecodedAttribute(index);
  if (entry == nullptr) {
    table_.NoteMissing({false, index});
    pending_ = true;
  } else {
    child_depth_ = std::max(child_depth_, table_.attribute_depths_[index]);
  }
  return entry;
}

Status EntryDecoder::ChargeText(size_t bytes) {
  if (bytes > table_.text_budget_) {
    return reader_.Error(StrCat("the text this entry builds exceeds what a file of this size "
                                "can hold (",
                                bytes, " more bytes)"));
  }
  table_.text_budget_ -= bytes;
  return Status::Ok();
}

StatusOr<const AttrEntry*> EntryDecoder::ReadOptionalAttribute(std::string_view what,
                                                               bool& present) {
  KILN_ASSIGN_OR_RETURN(EncodingReader::FlaggedVarInt ref,
                        reader_.ReadIndexWithFlag("an attribute index", what,
                                                  file().attributes.size()));
  present = ref.flag;
  if (!present) return static_cast<const AttrEntry*>(nullptr);
  const AttrEntry* entry = table_.DecodedAttribute(ref.value);
  if (entry == nullptr) {
    table_.NoteMissing({false, ref.value});
    pending_ = true;
  } else {
    child_depth_ = std::max(child_depth_, table_.attribute_depths_[ref.value]);
  }
  return entry;
}

StatusOr<const ir::Type*> EntryDecoder::ReadType(std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t index,
                        reader_.ReadIndex("a type index", what, file().types.size()));
  const ir::Type* type = table_.DecodedType(index);
  if (type == nullptr) {
    table_.NoteMissing({true, index});
    pending_ = true;
  } else {
    child_depth_ = std::max(child_depth_, table_.type_depths_[index]);
  }
  return type;
}

StatusOr<std::string_view> EntryDecoder::ReadString(std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t index,
                        reader_.ReadIndex("a string index", what, file().strings.size()));
  return std::string_view(file().strings[index]);
}

StatusOr<std::span<const uint8_t>> EntryDecoder::ReadBlob(std::string_view what) {
  KILN_ASSIGN_OR_RETURN(uint64_t size, reader_.ReadVarInt(what));
  return reader_.ReadBytes(size, what);
}

StatusOr<const ir::Attribute*> EntryDecoder::ReadPlainAttribute(std::string_view what) {
  const uint64_t offset = reader_.offset();
  KILN_ASSIGN_OR_RETURN(const AttrEntry* entry, ReadAttribute(what));
  if (entry == nullptr) return static_cast<const ir::Attribute*>(nullptr);
  if (entry->is_location()) {
    return reader_.ErrorAt(offset, StrCat("expected an attribute (", what, "), found a location"));
  }
  return &entry->attribute;
}

StatusOr<const ir::Location*> EntryDecoder::ReadLocation(std::string_view what) {
  const uint64_t offset = reader_.offset();
  KILN_ASSIGN_OR_RETURN(const AttrEntry* entry, ReadAttribute(what));
  if (entry == nullptr) return static_cast<const ir::Location*>(nullptr);
  if (!entry->is_location()) {
    return reader_.ErrorAt(offset, StrCat("expected a location (", what, "), found an attribute"));
  }
  return &entry->location;
}

AttrTypeTable::AttrTypeTable(const File& file, const Codecs& codecs)
    : file_(file),
      codecs_(codecs),
      attributes_(file.attributes.size()),
      types_(file.types.size()),
      attribute_states_(file.attributes.size(), kUnvisited),
      type_states_(file.types.size(), kUnvisited),
      attribute_depths_(file.attributes.size(), 0),
      type_depths_(file.types.size(), 0) {
  // Every entry's own bytes may come back as text (textual entries, names),
  // plus generous room for what Shardy and opaque types spell out.
  uint64_t size = 0;
  for (const File::AttrTypeEntry& entry : file.attributes) size += entry.bytes.size();
  for (const File::AttrTypeEntry& entry : file.types) size += entry.bytes.size();
  text_budget_ = 64 * size + (uint64_t{1} << 20);
}

const AttrEntry* AttrTypeTable::DecodedAttribute(uint64_t index) const {
  return attribute_states_[index] == kDone ? &attributes_[index] : nullptr;
}

const ir::Type* AttrTypeTable::DecodedType(uint64_t index) const {
  return type_states_[index] == kDone ? &types_[index] : nullptr;
}

StatusOr<const AttrEntry*> AttrTypeTable::Entry(uint64_t index) {
  if (index >= attributes_.size()) {
    return InvalidArgument("attribute index ", index, " is out of range (the file has ",
                           attributes_.size(), " attributes)");
  }
  KILN_RETURN_IF_ERROR(Resolve({false, index}));
  return &attributes_[index];
}

StatusOr<ir::Attribute> AttrTypeTable::Attribute(uint64_t index, std::string_view what,
                                                 std::string_view where) {
  KILN_ASSIGN_OR_RETURN(const AttrEntry* entry, Entry(index));
  if (entry->is_location()) {
    return InvalidArgument("expected an attribute (", what, where.empty() ? "" : " of ", where,
                           "), found attribute #", index, " (at byte ",
                           file_.attributes[index].offset,
                           "), a location: ", LocationText(entry->location));
  }
  return entry->attribute;
}

StatusOr<ir::Location> AttrTypeTable::Location(uint64_t index, std::string_view what,
                                               std::string_view where) {
  KILN_ASSIGN_OR_RETURN(const AttrEntry* entry, Entry(index));
  if (!entry->is_location()) {
    return InvalidArgument("expected a location (", what, where.empty() ? "" : " of ", where,
                           "), found attribute #", index, " (at byte ",
                           file_.attributes[index].offset,
                           "), not a location: ", AttrText(entry->attribute));
  }
  return entry->location;
}

StatusOr<ir::Type> AttrTypeTable::Type(uint64_t index) {
  if (index >= types_.size()) {
    return InvalidArgument("type index ", index, " is out of range (the file has ", types_.size(),
                           " types)");
  }
  KILN_RETURN_IF_ERROR(Resolve({true, index}));
  return types_[index];
}

Status AttrTypeTable::Resolve(Ref root) {
  std::vector<Ref> stack{root};
  while (!stack.empty()) {
    const Ref ref = stack.back();
    const State state = ref.is_type ? type_states_[ref.index] : attribute_states_[ref.index];
    if (state == kDone) {
      stack.pop_back();
      continue;
    }
    bool done = false;
    KILN_RETURN_IF_ERROR(DecodeOne(ref, stack, done));
    if (done) {
      // DecodeOne pushes nothing when it finishes, so `ref` is still on top.
      stack.pop_back();
    }
  }
  return Status::Ok();
}

Status AttrTypeTable::DecodeCustom(Ref ref, EntryDecoder& decoder,
                                   std::optional<AttrEntry>& attribute,
                                   std::optional<ir::Type>& type) {
  const std::string_view dialect = decoder.dialect();
  const DialectCodec* codec = nullptr;
  for (const DialectCodec& candidate : codecs_.dialects) {
    if (candidate.dialect == dialect) codec = &candidate;
  }
  if (codec == nullptr || (ref.is_type ? codec->type == nullptr : codec->attribute == nullptr)) {
    const File::AttrTypeEntry& entry = ref.is_type ? file_.types[ref.index]
                                                   : file_.attributes[ref.index];
    std::string known;
    for (size_t i = 0; i < codecs_.dialects.size(); ++i) {
      known += (i == 0 ? "" : i + 1 == codecs_.dialects.size() ? " and " : ", ");
      known += codecs_.dialects[i].dialect;
    }
    return Unimplemented("byte ", entry.offset, ": ", ref.is_type ? "type !" : "attribute #",
                         ref.index, " has a custom encoding of dialect '", dialect,
                         "', which Kiln cannot decode (Kiln reads ", known, " encodings)");
  }
  if (ref.is_type) {
    Decoded<ir::Type> decoded = codec->type(decoder);
    if (!decoded.ok()) return decoded.status();
    type = std::move(decoded).value();
    return Status::Ok();
  }
  Decoded<AttrEntry> decoded = codec->attribute(decoder);
  if (!decoded.ok()) return decoded.status();
  attribute = std::move(decoded).value();
  return Status::Ok();
}

Status AttrTypeTable::DecodeOne(Ref ref, std::vector<Ref>& stack, bool& done) {
  const File::AttrTypeEntry& entry = ref.is_type ? file_.types[ref.index]
                                                 : file_.attributes[ref.index];
  const std::string& dialect = file_.dialects[entry.dialect].name;
  // Built per entry, so plain concatenation rather than StrCat's stream.
  const std::string context = (ref.is_type ? "type !" : "attribute #") + std::to_string(ref.index) +
                              ", dialect " + dialect;
  std::vector<State>& states = ref.is_type ? type_states_ : attribute_states_;

  std::vector<uint32_t>& depths = ref.is_type ? type_depths_ : attribute_depths_;
  if (!entry.custom) {
    KILN_ASSIGN_OR_RETURN(std::string_view text, bytecode::TextualEntry(entry));
    depths[ref.index] = 1;
    StatusOr<ir::Attribute> textual_attribute = ir::Attribute();
    StatusOr<ir::Type> textual_type = ir::Type();
    if (ref.is_type) {
      textual_type = codecs_.textual_type(dialect, text);
    } else {
      textual_attribute = codecs_.textual_attribute(dialect, text);
    }
    const Status status = ref.is_type ? textual_type.status() : textual_attribute.status();
    if (!status.ok()) {
      return Status(status.code(), StrCat("byte ", entry.offset, ": ", context, " holds the text '",
                                          text.substr(0, 200), text.size() > 200 ? "...'" : "'",
                                          ", which Kiln cannot read: ", status.message()));
    }
    if (ref.is_type) {
      types_[ref.index] = std::move(textual_type).value();
    } else {
      attributes_[ref.index].attribute = std::move(textual_attribute).value();
    }
    states[ref.index] = kDone;
    done = true;
    return Status::Ok();
  }

  missing_.clear();
  EntryDecoder decoder(*this, entry, dialect, context);
  std::optional<AttrEntry> attribute;
  std::optional<ir::Type> type;
  KILN_RETURN_IF_ERROR(DecodeCustom(ref, decoder, attribute, type));

  if (attribute.has_value() || type.has_value()) {
    if (!decoder.reader().empty()) {
      return decoder.Error(StrCat("expected the end of the entry, found ",
                                  decoder.reader().remaining(), " more bytes"));
    }
    if (decoder.depth() > kMaxNesting) {
      return InvalidArgument("byte ", entry.offset, ": ", context, " nests deeper than ",
                             kMaxNesting, " levels");
    }
    depths[ref.index] = decoder.depth();
    if (ref.is_type) {
      types_[ref.index] = std::move(*type);
    } else {
      attributes_[ref.index] = std::move(*attribute);
    }
    states[ref.index] = kDone;
    done = true;
    return Status::Ok();
  }
  if (missing_.empty()) {
    return Internal("decoding ", context, " stopped without naming what it waits for");
  }
  states[ref.index] = kInProgress;
  for (const Ref& missing : missing_) {
    const State state = missing.is_type ? type_states_[missing.index]
                                        : attribute_states_[missing.index];
    if (state == kInProgress) {
      return InvalidArgument("byte ", entry.offset, ": ", context, " refers to ",
                             missing.is_type ? "type !" : "attribute #", missing.index,
                             ", which refers back to it (a cycle)");
    }
    stack.push_back(missing);
  }
  return Status::Ok();
}

}  // namespace kiln::frontend::vhlo
