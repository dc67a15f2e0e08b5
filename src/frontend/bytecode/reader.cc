// The per-section readers of an MLIR bytecode file (all but the IR section,
// which is in ir_reader.cc), and ReadFile, which ties them together.
#include <array>
#include <cstring>
#include <optional>

#include "frontend/bytecode/encoding_reader.h"
#include "frontend/bytecode/file.h"
#include "frontend/bytecode/ir_reader.h"

namespace kiln::frontend::bytecode {
namespace {

constexpr uint8_t kMagic[4] = {'M', 'L', 0xEF, 'R'};

using Sections = std::array<std::optional<RawSection>, kNumSectionIds>;

std::optional<RawSection>& At(Sections& sections, SectionId id) {
  return sections[static_cast<size_t>(id)];
}

Status ReadHeader(std::span<const uint8_t> bytes, EncodingReader& reader, File& file) {
  if (!IsBytecode(bytes)) {
    static constexpr char kDigits[] = "0123456789ABCDEF";
    std::string found;
    for (size_t i = 0; i < bytes.size() && i < 4; ++i) {
      if (i > 0) found += ' ';
      found += {kDigits[bytes[i] >> 4], kDigits[bytes[i] & 15]};
    }
    return reader.ErrorAt(0, StrCat("expected the MLIR bytecode magic 4D 4C EF 52 (\"ML\\xEFR\"), "
                                    "found ",
                                    found.empty() ? "an empty input" : found));
  }
  KILN_RETURN_IF_ERROR(reader.ReadBytes(4, "the magic").status());
  const uint64_t version_offset = reader.offset();
  KILN_ASSIGN_OR_RETURN(file.version, reader.ReadVarInt("the bytecode version"));
  if (file.version > kMaxBytecodeVersion) {
    return reader.ErrorAt(version_offset,
                          StrCat("bytecode version ", file.version,
                                 " is newer than the newest Kiln reads (", kMaxBytecodeVersion,
                                 "); ask the producer for an older target version"));
  }
  file.producer_offset = reader.offset();
  KILN_ASSIGN_OR_RETURN(std::string_view producer, reader.ReadNulTerminatedString("the producer"));
  file.producer = std::string(producer);
  return Status::Ok();
}

// Reads the top-level section list: any order, each id at most once.
Status ReadSectionList(EncodingReader& reader, uint64_t version, Sections& sections) {
  while (!reader.empty()) {
    KILN_ASSIGN_OR_RETURN(RawSection section, reader.ReadSection("a top-level section"));
    std::optional<RawSection>& slot = sections[section.id];
    if (slot.has_value()) {
      return reader.ErrorAt(section.header_offset,
                            StrCat("found a second ", SectionName(section.id), " section (id ",
                                   int{section.id}, "); the first is at byte ",
                                   slot->header_offset));
    }
    slot = section;
  }
  for (uint8_t id = 0; id < kNumSectionIds; ++id) {
    const bool required = id <= static_cast<uint8_t>(SectionId::kIR) ||
                          (id == static_cast<uint8_t>(SectionId::kProperties) &&
                           version >= kVersionNativeProperties);
    if (required && !sections[id].has_value()) {
      return reader.Error(StrCat("expected the ", SectionName(id), " section (id ", int{id},
                                 ") somewhere in the file, found none"));
    }
  }
  return Status::Ok();
}

// numStrings, their sizes (NUL included) in reverse order, then the strings
// back to back, the last string ending at the end of the section.
Status ReadStringSection(const RawSection& section, File& file) {
  EncodingReader reader(section.data, section.data_offset, SectionContext(section.id));
  KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("the string count"));
  std::vector<std::pair<uint64_t, uint64_t>> ranges(count);  // (start, size) in the section
  uint64_t end = section.data.size();
  for (uint64_t i = count; i-- > 0;) {
    const uint64_t size_offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint64_t size, reader.ReadVarInt("a string size"));
    if (size == 0 || size > end) {
      return reader.ErrorAt(size_offset,
                            StrCat("expected the size of string #", i, " (NUL included) from 1 to ",
                                   end, ", found ", size));
    }
    end -= size;
    ranges[i] = {end, size};
  }
  const uint64_t sizes_end = section.data.size() - reader.remaining();
  if (sizes_end != end) {
    return reader.Error(StrCat("expected the string data to start right after the ", count,
                               " sizes, but the sizes leave ", end > sizes_end ? "a gap of " : "",
                               end > sizes_end ? end - sizes_end : sizes_end - end,
                               end > sizes_end ? " bytes" : " bytes too few"));
  }
  file.strings.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    const auto [start, size] = ranges[i];
    const uint8_t* chars = section.data.data() + start;
    if (chars[size - 1] != 0) {
      return reader.ErrorAt(section.data_offset + start + size - 1,
                            StrCat("expected string #", i, " to end with a NUL byte, found ",
                                   HexByte(chars[size - 1])));
    }
    file.strings.emplace_back(reinterpret_cast<const char*>(chars), size - 1);
  }
  return Status::Ok();
}

// numDialects; each dialect's name (from v1 with a has-version flag and a
// nested dialect-versions section); from v4 the op-name count; then groups
// {dialect, count, names} (from v5 each name carries a registered flag).
Status ReadDialectSection(const RawSection& section, File& file) {
  EncodingReader reader(section.data, section.data_offset, SectionContext(section.id));
  const uint64_t num_strings = file.strings.size();
  KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("the dialect count"));
  file.dialects.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    File::Dialect dialect;
    EncodingReader::FlaggedVarInt name{};
    if (file.version < kVersionDialectVersioning) {
      KILN_ASSIGN_OR_RETURN(name.value,
                            reader.ReadIndex("a dialect name (a string index)", num_strings));
    } else {
      KILN_ASSIGN_OR_RETURN(name, reader.ReadIndexWithFlag("a dialect name (a string index)",
                                                           num_strings));
    }
    dialect.name = file.strings[name.value];
    if (name.flag) {
      KILN_ASSIGN_OR_RETURN(RawSection versions, reader.ReadSection("a dialect version"));
      if (versions.id != static_cast<uint8_t>(SectionId::kDialectVersions)) {
        return reader.ErrorAt(versions.header_offset,
                              StrCat("expected a dialect versions section (id 7) for dialect ",
                                     dialect.name, ", found a ", SectionName(versions.id),
                                     " section"));
      }
      dialect.version = versions.data;
    }
    file.dialects.push_back(std::move(dialect));
  }
  if (file.version >= kVersionElideBlockArgLocation) {
    KILN_ASSIGN_OR_RETURN(uint64_t num_op_names, reader.ReadCount("the op name count"));
    file.op_names.reserve(num_op_names);
  }
  while (!reader.empty()) {
    KILN_ASSIGN_OR_RETURN(uint64_t dialect,
                          reader.ReadIndex("the dialect of an op name group", count));
    KILN_ASSIGN_OR_RETURN(uint64_t group, reader.ReadCount("the size of an op name group"));
    for (uint64_t i = 0; i < group; ++i) {
      File::OpName op_name;
      op_name.dialect = static_cast<uint32_t>(dialect);
      EncodingReader::FlaggedVarInt name{};
      if (file.version < kVersionNativeProperties) {
        KILN_ASSIGN_OR_RETURN(name.value,
                              reader.ReadIndex("an op name (a string index)", num_strings));
      } else {
        KILN_ASSIGN_OR_RETURN(name,
                              reader.ReadIndexWithFlag("an op name (a string index)", num_strings));
        op_name.registered = name.flag;
      }
      op_name.name = file.strings[name.value];
      file.op_names.push_back(std::move(op_name));
    }
  }
  return Status::Ok();
}

// Fills `entries` with `count` entries from groups {dialect, n, sizes}, each
// size (size << 1 | hasCustomEncoding) taking the next bytes of `data`.
Status ReadEntryGroups(EncodingReader& reader, const RawSection& data, uint64_t count,
                       std::string_view kind, const File& file, uint64_t& position,
                       std::vector<File::AttrTypeEntry>& entries) {
  entries.reserve(count);
  while (entries.size() < count) {
    const uint64_t left = count - entries.size();
    KILN_ASSIGN_OR_RETURN(uint64_t dialect,
                          reader.ReadIndex("the dialect of a group", file.dialects.size()));
    const uint64_t group_offset = reader.offset();
    KILN_ASSIGN_OR_RETURN(uint64_t group, reader.ReadCount("the entry count of a group"));
    if (group > left) {
      return reader.ErrorAt(group_offset,
                            StrCat("expected ", kind == "attribute" ? "an " : "a ", kind,
                                   " group of at most ", left,
                                   " entries (the count still missing), found ", group));
    }
    for (uint64_t i = 0; i < group; ++i) {
      const uint64_t size_offset = reader.offset();
      KILN_ASSIGN_OR_RETURN(EncodingReader::FlaggedVarInt size,
                            reader.ReadVarIntWithFlag("the size of an entry"));
      if (size.value > data.data.size() - position) {
        return reader.ErrorAt(size_offset,
                              StrCat("expected the size of ", kind, " #", entries.size(),
                                     " to fit in the ", data.data.size() - position,
                                     " bytes left of the attribute/type section, found ",
                                     size.value));
      }
      entries.push_back({static_cast<uint32_t>(dialect), size.flag,
                         data.data.subspan(position, size.value), data.data_offset + position});
      position += size.value;
    }
  }
  return Status::Ok();
}

// The offset section holds numAttrs, numTypes, then the groups of attributes
// and the groups of types; the attribute/type section holds their bytes.
Status ReadAttrTypeSections(const RawSection& data, const RawSection& offsets, File& file) {
  EncodingReader reader(offsets.data, offsets.data_offset, SectionContext(offsets.id));
  KILN_ASSIGN_OR_RETURN(uint64_t num_attributes, reader.ReadCount("the attribute count"));
  KILN_ASSIGN_OR_RETURN(uint64_t num_types, reader.ReadCount("the type count"));
  if (num_attributes + num_types > reader.remaining()) {
    return reader.Error(StrCat("expected sizes for ", num_attributes, " attributes and ", num_types,
                               " types, but only ", reader.remaining(), " bytes remain"));
  }
  uint64_t position = 0;
  KILN_RETURN_IF_ERROR(ReadEntryGroups(reader, data, num_attributes, "attribute", file, position,
                                       file.attributes));
  KILN_RETURN_IF_ERROR(ReadEntryGroups(reader, data, num_types, "type", file, position,
                                       file.types));
  if (!reader.empty()) {
    return reader.Error(StrCat("expected the end of the section after ", num_attributes,
                               " attributes and ", num_types, " types, found ", reader.remaining(),
                               " more bytes"));
  }
  return Status::Ok();
}

// count, then {size, bytes} per entry. An empty section holds no entries.
Status ReadPropertiesSection(const RawSection& section, File& file) {
  if (section.data.empty()) return Status::Ok();
  EncodingReader reader(section.data, section.data_offset, SectionContext(section.id));
  KILN_ASSIGN_OR_RETURN(uint64_t count, reader.ReadCount("the properties count"));
  file.properties.reserve(count);
  for (uint64_t i = 0; i < count; ++i) {
    KILN_ASSIGN_OR_RETURN(uint64_t size, reader.ReadVarInt("the size of a properties entry"));
    KILN_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes,
                          reader.ReadBytes(size, "a properties entry"));
    file.properties.push_back(bytes);
  }
  if (!reader.empty()) {
    return reader.Error(StrCat("expected the end of the section after ", count,
                               " properties entries, found ", reader.remaining(), " more bytes"));
  }
  return Status::Ok();
}

// A resource group in the offset section: count, then {key, size, kind} per
// resource, whose bytes come next in the resource section.
Status ReadResourceGroup(EncodingReader& offsets, EncodingReader& data, std::string_view group,
                         bool dialect_group, File& file) {
  KILN_ASSIGN_OR_RETURN(uint64_t count, offsets.ReadCount("the resource count of a group", 3));
  for (uint64_t i = 0; i < count; ++i) {
    File::Resource resource;
    resource.group = std::string(group);
    resource.dialect_group = dialect_group;
    KILN_ASSIGN_OR_RETURN(uint64_t key, offsets.ReadIndex("a resource key (a string index)",
                                                          file.strings.size()));
    resource.key = file.strings[key];
    KILN_ASSIGN_OR_RETURN(uint64_t size, offsets.ReadVarInt("the size of a resource"));
    const uint64_t kind_offset = offsets.offset();
    KILN_ASSIGN_OR_RETURN(uint8_t kind, offsets.ReadByte("the kind of a resource"));
    if (kind > static_cast<uint8_t>(File::Resource::Kind::kString)) {
      return offsets.ErrorAt(kind_offset, StrCat("expected a resource kind 0 (blob), 1 (bool) or "
                                                 "2 (string), found ",
                                                 int{kind}));
    }
    resource.kind = static_cast<File::Resource::Kind>(kind);
    KILN_ASSIGN_OR_RETURN(resource.bytes, data.ReadBytes(size, "the data of a resource"));
    file.resources.push_back(std::move(resource));
  }
  return Status::Ok();
}

// External groups (count, then {key, group}) and then dialect groups
// ({dialect, group}) up to the end of the offset section.
Status ReadResourceSections(const std::optional<RawSection>& data,
                            const std::optional<RawSection>& offsets, EncodingReader& top,
                            File& file) {
  if (data.has_value() != offsets.has_value()) {
    return top.Error(data ? "expected a resource offset section beside the resource section, "
                            "found none"
                          : "expected a resource section beside the resource offset section, "
                            "found none");
  }
  if (!data) return Status::Ok();
  EncodingReader offset_reader(offsets->data, offsets->data_offset, SectionContext(offsets->id));
  EncodingReader data_reader(data->data, data->data_offset, SectionContext(data->id));
  KILN_ASSIGN_OR_RETURN(uint64_t external,
                        offset_reader.ReadCount("the external resource group count"));
  for (uint64_t i = 0; i < external; ++i) {
    KILN_ASSIGN_OR_RETURN(uint64_t key,
                          offset_reader.ReadIndex("an external resource group (a string index)",
                                                  file.strings.size()));
    KILN_RETURN_IF_ERROR(ReadResourceGroup(offset_reader, data_reader, file.strings[key], false,
                                           file));
  }
  while (!offset_reader.empty()) {
    KILN_ASSIGN_OR_RETURN(uint64_t dialect,
                          offset_reader.ReadIndex("the dialect of a resource group",
                                                  file.dialects.size()));
    KILN_RETURN_IF_ERROR(ReadResourceGroup(offset_reader, data_reader, file.dialects[dialect].name,
                                           true, file));
  }
  return Status::Ok();
}

Status ReadSectionsInOrder(Sections& sections, EncodingReader& top, uint64_t file_size,
                           File& file) {
  KILN_RETURN_IF_ERROR(ReadStringSection(*At(sections, SectionId::kString), file));
  if (At(sections, SectionId::kProperties)) {
    KILN_RETURN_IF_ERROR(ReadPropertiesSection(*At(sections, SectionId::kProperties), file));
  }
  KILN_RETURN_IF_ERROR(ReadDialectSection(*At(sections, SectionId::kDialect), file));
  KILN_RETURN_IF_ERROR(ReadResourceSections(At(sections, SectionId::kResource),
                                            At(sections, SectionId::kResourceOffset), top, file));
  KILN_RETURN_IF_ERROR(ReadAttrTypeSections(*At(sections, SectionId::kAttrType),
                                            *At(sections, SectionId::kAttrTypeOffset), file));
  return ReadIrSection(*At(sections, SectionId::kIR), file_size, file);
}

}  // namespace

bool IsBytecode(std::span<const uint8_t> bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kMagic, 4) == 0;
}

StatusOr<File> ReadFile(std::span<const uint8_t> bytes) {
  File file;
  EncodingReader header(bytes, 0, "file header");
  KILN_RETURN_IF_ERROR(ReadHeader(bytes, header, file));
  const uint64_t sections_start = header.offset();
  EncodingReader top(bytes.subspan(sections_start), sections_start, "section list");
  Sections sections;
  Status status = ReadSectionList(top, file.version, sections);
  if (status.ok()) status = ReadSectionsInOrder(sections, top, bytes.size(), file);
  if (!status.ok()) {
    status.AddNote(StrCat("MLIR bytecode version ", file.version, " from \"", file.producer, "\""));
    return status;
  }
  return file;
}

std::string OpFullName(const File& file, uint32_t op_name) {
  const File::OpName& name = file.op_names[op_name];
  const std::string& dialect = file.dialects[name.dialect].name;
  return name.name.empty() ? dialect : StrCat(dialect, ".", name.name);
}

StatusOr<std::string_view> TextualEntry(const File::AttrTypeEntry& entry) {
  EncodingReader reader(entry.bytes, entry.offset, "textual attribute/type entry");
  if (entry.custom) {
    return reader.Error("expected an entry in textual form, found a dialect-encoded one");
  }
  KILN_ASSIGN_OR_RETURN(std::string_view text, reader.ReadNulTerminatedString("the entry text"));
  if (!reader.empty()) {
    return reader.Error(StrCat("expected the end of the entry after its text, found ",
                               reader.remaining(), " more bytes"));
  }
  return text;
}

}  // namespace kiln::frontend::bytecode
