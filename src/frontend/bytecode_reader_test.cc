// Hand-built bytecode files for the container reader: every version's
// encoding of one small module, forward references, nesting, alignment,
// resources, and the errors malformed files must produce.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/bytecode/file.h"
#include "frontend/bytecode_test_util.h"

namespace kiln::frontend::bytecode {
namespace {

using test_util::StringSection;
using test_util::Writer;

enum : uint8_t { kString = 0, kDialect = 1, kAttrType = 2, kAttrTypeOffset = 3, kIR = 4 };
enum : uint8_t { kResource = 5, kResourceOffset = 6, kDialectVersions = 7, kProperties = 8 };

// Strings of the tiny module.
enum : uint64_t { kBuiltin, kTest, kModule, kUse, kWrap, kDef, kExtKey, kBlobKey, kFlagKey };
const std::vector<std::string> kStrings = {"builtin", "test", "module", "use", "wrap",
                                           "def",     "ext",  "blob",   "flag"};
// Op names, in the order of the dialect section.
enum : uint64_t { kModuleOp, kUseOp, kWrapOp, kDefOp };

// The tiny module, written for bytecode `version`:
//
//   builtin.module (isolated) {
//     ^0(%arg):                        slots: %arg 0, %w 1, %d 2
//       test.use(%arg, %d)             forward reference to %d
//       %w = test.wrap {               not isolated; inner slot 3
//         %i = test.def
//         test.use(%i, %d, %w)         %d and %w come from the enclosing region
//       }
//       %d = test.def
//   }
struct TinyModule {
  uint64_t version = 6;
  bool aligned_strings = false;  // write the string section aligned to 16
  bool with_resources = false;

  std::vector<uint8_t> Dialects() const {
    Writer writer;
    writer.VarInt(2);
    if (version < 1) {
      writer.VarInt(kBuiltin).VarInt(kTest);
    } else {
      writer.Flagged(kBuiltin, false).Flagged(kTest, true);
      Writer test_version;
      test_version.VarInt(1).VarInt(2).VarInt(3);
      writer.Section(kDialectVersions, test_version.bytes);
    }
    if (version >= 4) writer.VarInt(4);
    const bool flags = version >= 5;
    auto name = [&](uint64_t string, bool registered) {
      if (flags) {
        writer.Flagged(string, registered);
      } else {
        writer.VarInt(string);
      }
    };
    writer.VarInt(0).VarInt(1);
    name(kModule, true);
    writer.VarInt(1).VarInt(3);
    name(kUse, false);
    name(kWrap, false);
    name(kDef, false);
    return writer.bytes;
  }

  // Attribute 0: a textual location; type 0: a textual i32.
  static std::vector<uint8_t> AttrTypes() {
    return Writer().Text("loc(unknown)").Text("i32").bytes;
  }
  static std::vector<uint8_t> AttrTypeOffsets() {
    return Writer()
        .VarInt(1)
        .VarInt(1)
        .VarInt(0)
        .VarInt(1)
        .Flagged(13, false)
        .VarInt(0)
        .VarInt(1)
        .Flagged(4, false)
        .bytes;
  }

  // The start of an op: name, mask, location 0. The caller writes the rest.
  static void Op(Writer& writer, uint64_t name, uint8_t mask) {
    writer.VarInt(name).Byte(mask).VarInt(0);
  }

  std::vector<uint8_t> ModuleBody() const {
    Writer writer;
    writer.VarInt(1).VarInt(3);  // one block, three values
    writer.Flagged(3, true);     // three ops, has arguments
    writer.VarInt(1);            // one argument
    if (version >= 4) {
      writer.Flagged(0, false);  // type 0, no location
    } else {
      writer.VarInt(0).VarInt(0);  // type 0, location 0
    }
    if (version >= 3) writer.Byte(0);  // no use-list orders
    Op(writer, kUseOp, 0x04);
    writer.VarInt(2).VarInt(0).VarInt(2);
    Op(writer, kWrapOp, 0x02 | 0x10);
    writer.VarInt(1).VarInt(0);  // one result of type 0
    writer.Flagged(1, false);    // one region, not isolated
    writer.VarInt(1).VarInt(1);  // one block, one value
    writer.Flagged(2, false);    // two ops, no arguments
    Op(writer, kDefOp, 0x02);
    writer.VarInt(1).VarInt(0);
    Op(writer, kUseOp, 0x04);
    writer.VarInt(3).VarInt(3).VarInt(2).VarInt(1);
    Op(writer, kDefOp, 0x02);
    writer.VarInt(1).VarInt(0);
    return writer.bytes;
  }

  std::vector<uint8_t> Ir() const {
    Writer writer;
    writer.Flagged(1, false);  // the top-level block: one op
    const bool properties = version >= 5;
    Op(writer, kModuleOp, static_cast<uint8_t>(0x10 | (properties ? 0x40 : 0)));
    if (properties) writer.VarInt(0);
    writer.Flagged(1, true);  // one isolated region
    if (version >= 2) {
      writer.Section(kIR, ModuleBody());
    } else {
      writer.Append(ModuleBody());
    }
    return writer.bytes;
  }

  std::vector<uint8_t> Build() const {
    Writer writer;
    writer.Byte('M').Byte('L').Byte(0xEF).Byte('R').VarInt(version).Text("kiln-test");
    // Deliberately not in id order.
    writer.Section(kIR, Ir());
    if (version >= 5) writer.Section(kProperties, Writer().VarInt(1).VarInt(1).Byte(7).bytes);
    writer.Section(kAttrTypeOffset, AttrTypeOffsets());
    writer.Section(kString, StringSection(kStrings), aligned_strings ? 16 : 0);
    writer.Section(kDialect, Dialects());
    writer.Section(kAttrType, AttrTypes());
    if (with_resources) {
      Writer offsets;
      offsets.VarInt(1).VarInt(kExtKey).VarInt(1).VarInt(kBlobKey).VarInt(3).Byte(0);
      offsets.VarInt(1).VarInt(1).VarInt(kFlagKey).VarInt(1).Byte(1);
      writer.Section(kResourceOffset, offsets.bytes);
      writer.Section(kResource, {0x03, 0x05, 0xAA, 0x01});
    }
    return writer.bytes;
  }
};

StatusOr<File> Read(const std::vector<uint8_t>& bytes) { return ReadFile(bytes); }

void ExpectTinyModule(const File& file, uint64_t version) {
  SCOPED_TRACE(StrCat("bytecode version ", version));
  EXPECT_EQ(file.version, version);
  EXPECT_EQ(file.producer, "kiln-test");
  ASSERT_EQ(file.dialects.size(), 2u);
  EXPECT_EQ(file.dialects[1].name, "test");
  EXPECT_EQ(file.dialects[1].version.size(), version >= 1 ? 3u : 0u);
  ASSERT_EQ(file.op_names.size(), 4u);
  EXPECT_EQ(OpFullName(file, kWrapOp), "test.wrap");
  EXPECT_EQ(file.op_names[kModuleOp].registered,
            version >= 5 ? std::optional<bool>(true) : std::nullopt);

  ASSERT_EQ(file.top_level.size(), 1u);
  ASSERT_EQ(file.operations.size(), 6u);
  const File::Operation& module = file.operations[file.top_level[0]];
  EXPECT_EQ(OpFullName(file, module), "builtin.module");
  EXPECT_TRUE(module.isolated);
  EXPECT_EQ(module.properties, version >= 5 ? std::optional<uint64_t>(0) : std::nullopt);
  ASSERT_EQ(module.regions.size(), 1u);
  ASSERT_EQ(module.regions[0].blocks.size(), 1u);
  const File::Block& body = module.regions[0].blocks[0];
  ASSERT_EQ(body.arguments.size(), 1u);
  EXPECT_EQ(body.arguments[0].location, version >= 4 ? std::nullopt : std::optional<uint64_t>(0));
  ASSERT_EQ(body.ops.size(), 3u);
  const File::Operation& use = file.operations[body.ops[0]];
  const File::Operation& wrap = file.operations[body.ops[1]];
  const File::Operation& def = file.operations[body.ops[2]];
  ASSERT_EQ(wrap.regions.size(), 1u);
  ASSERT_EQ(wrap.regions[0].blocks.size(), 1u);
  const File::Block& inner = wrap.regions[0].blocks[0];
  ASSERT_EQ(inner.ops.size(), 2u);
  const File::Operation& inner_def = file.operations[inner.ops[0]];
  const File::Operation& inner_use = file.operations[inner.ops[1]];

  const uint64_t arg = body.arguments[0].id;
  ASSERT_EQ(wrap.result_ids.size(), 1u);
  ASSERT_EQ(def.result_ids.size(), 1u);
  ASSERT_EQ(inner_def.result_ids.size(), 1u);
  const uint64_t w = wrap.result_ids[0], d = def.result_ids[0], i = inner_def.result_ids[0];
  EXPECT_EQ(use.operand_ids, (std::vector<uint64_t>{arg, d}));
  EXPECT_EQ(inner_use.operand_ids, (std::vector<uint64_t>{i, d, w}));
  // Ids are unique and below num_value_ids.
  const std::vector<uint64_t> ids = {arg, w, d, i};
  for (size_t a = 0; a < ids.size(); ++a) {
    EXPECT_LT(ids[a], file.num_value_ids);
    for (size_t b = a + 1; b < ids.size(); ++b) EXPECT_NE(ids[a], ids[b]);
  }
  // Pre-order storage: parents before children.
  EXPECT_LT(body.ops[1], inner.ops[0]);
  EXPECT_LT(inner.ops[1], body.ops[2]);
}

TEST(BytecodeReaderTest, TinyModuleInEveryVersion) {
  for (uint64_t version = 0; version <= kMaxBytecodeVersion; ++version) {
    TinyModule tiny;
    tiny.version = version;
    StatusOr<File> file = Read(tiny.Build());
    ASSERT_TRUE(file.ok()) << "version " << version << ": " << file.status().ToString();
    ExpectTinyModule(*file, version);
  }
}

TEST(BytecodeReaderTest, AlignedSectionAndTextualEntries) {
  TinyModule tiny;
  tiny.aligned_strings = true;
  const std::vector<uint8_t> bytes = tiny.Build();
  StatusOr<File> file = Read(bytes);
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ExpectTinyModule(*file, 6);
  ASSERT_EQ(file->attributes.size(), 1u);
  ASSERT_EQ(file->types.size(), 1u);
  StatusOr<std::string_view> location = TextualEntry(file->attributes[0]);
  ASSERT_TRUE(location.ok()) << location.status().ToString();
  EXPECT_EQ(*location, "loc(unknown)");
  EXPECT_EQ(*TextualEntry(file->types[0]), "i32");
  File::AttrTypeEntry custom = file->types[0];
  custom.custom = true;
  EXPECT_FALSE(TextualEntry(custom).ok());
}

TEST(BytecodeReaderTest, Resources) {
  TinyModule tiny;
  tiny.with_resources = true;
  StatusOr<File> file = Read(tiny.Build());
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  ASSERT_EQ(file->resources.size(), 2u);
  EXPECT_EQ(file->resources[0].group, "ext");
  EXPECT_FALSE(file->resources[0].dialect_group);
  EXPECT_EQ(file->resources[0].key, "blob");
  EXPECT_EQ(file->resources[0].kind, File::Resource::Kind::kBlob);
  EXPECT_EQ(file->resources[0].bytes.size(), 3u);
  EXPECT_EQ(file->resources[1].group, "test");
  EXPECT_TRUE(file->resources[1].dialect_group);
  EXPECT_EQ(file->resources[1].kind, File::Resource::Kind::kBool);
}

TEST(BytecodeReaderTest, DumpShowsTheTree) {
  StatusOr<File> file = Read(TinyModule().Build());
  ASSERT_TRUE(file.ok());
  const std::string dump = DumpFile(*file);
  EXPECT_NE(dump.find("producer \"kiln-test\""), std::string::npos) << dump;
  EXPECT_NE(dump.find("builtin.module() <p0> loc #0 isolated"), std::string::npos) << dump;
  EXPECT_NE(dump.find("^0(%0: !0):"), std::string::npos) << dump;
  EXPECT_NE(dump.find("test.use(%0, %2) loc #0"), std::string::npos) << dump;
  EXPECT_NE(dump.find("%1 = test.wrap() : !0 loc #0"), std::string::npos) << dump;
  EXPECT_NE(dump.find("test.use(%3, %2, %1)"), std::string::npos) << dump;
}

// A file around an IR section holding `ir` (no properties: version 4).
std::vector<uint8_t> FileWithIr(const std::vector<uint8_t>& ir, uint64_t version = 4,
                                const std::vector<uint8_t>& strings = StringSection(kStrings)) {
  TinyModule tiny;
  tiny.version = version;
  Writer writer;
  writer.Byte('M').Byte('L').Byte(0xEF).Byte('R').VarInt(version).Text("kiln-test");
  writer.Section(kString, strings);
  writer.Section(kDialect, tiny.Dialects());
  writer.Section(kAttrType, TinyModule::AttrTypes());
  writer.Section(kAttrTypeOffset, TinyModule::AttrTypeOffsets());
  writer.Section(kIR, ir);
  if (version >= 5) writer.Section(kProperties, {0x01});
  return writer.bytes;
}

TEST(BytecodeReaderTest, DeepNestingUsesNoNativeStack) {
  constexpr int kDepth = 200000;
  Writer ir;
  ir.Flagged(1, false);
  for (int level = 0; level < kDepth; ++level) {
    TinyModule::Op(ir, kWrapOp, 0x10);
    ir.Flagged(1, false).VarInt(1).VarInt(0).Flagged(1, false);  // 1 region, 1 block, 1 op
  }
  TinyModule::Op(ir, kDefOp, 0);
  StatusOr<File> file = Read(FileWithIr(ir.bytes));
  ASSERT_TRUE(file.ok()) << file.status().ToString();
  EXPECT_EQ(file->operations.size(), size_t{kDepth} + 1);
  const std::string dump = DumpFile(*file);
  EXPECT_NE(dump.find("[depth 600000] test.def()"), std::string::npos);
  EXPECT_LT(dump.size(), size_t{1000} * kDepth);  // linear in the depth
}

struct BadCase {
  const char* name;
  std::vector<uint8_t> bytes;
  const char* message;  // a piece the error message must contain
};

std::vector<BadCase> BadCases() {
  std::vector<BadCase> cases;
  const std::vector<uint8_t> good = TinyModule().Build();
  cases.push_back({"empty", {}, "byte 0: expected the MLIR bytecode magic"});
  cases.push_back({"text", {'m', 'o', 'd', 'u', 'l', 'e'}, "found 6D 6F 64 75"});
  {
    TinyModule tiny;
    tiny.version = 7;
    cases.push_back({"future version", tiny.Build(),
                     "byte 4: bytecode version 7 is newer than the newest Kiln reads (6)"});
  }
  {
    std::vector<uint8_t> bytes = good;
    Writer extra;
    extra.Section(kString, StringSection({"x"}));
    bytes.insert(bytes.end(), extra.bytes.begin(), extra.bytes.end());
    cases.push_back({"duplicate section", bytes, "found a second string section (id 0)"});
  }
  {
    std::vector<uint8_t> bytes = good;
    bytes.push_back(0x09);
    bytes.push_back(0x01);
    cases.push_back({"unknown section", bytes, "expected a section id from 0 to 8"});
  }
  {
    TinyModule tiny;
    tiny.version = 5;
    std::vector<uint8_t> bytes = FileWithIr(tiny.Ir(), 5);
    bytes.resize(bytes.size() - 3);  // drops the properties section
    cases.push_back({"missing properties", bytes, "expected the properties section (id 8)"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kUseOp, 0x04);
    ir.VarInt(1).VarInt(0);
    cases.push_back({"operand at top level", FileWithIr(ir.bytes),
                     "expected an operand (a value index of the scope) below 0, found 0"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kWrapOp, 0x10);
    ir.Flagged(1, false).VarInt(1).VarInt(2).Flagged(1, false);  // two slots, one op
    TinyModule::Op(ir, kUseOp, 0x04);
    ir.VarInt(1).VarInt(1);  // names slot 1, never defined
    cases.push_back({"never defined", FileWithIr(ir.bytes),
                     "operand names value #1 of its scope, which its region never defines"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kWrapOp, 0x10);
    ir.Flagged(1, false).VarInt(1).VarInt(1).Flagged(1, false);  // one slot
    TinyModule::Op(ir, kDefOp, 0x02);
    ir.VarInt(2).VarInt(0).VarInt(0);  // two results
    cases.push_back({"too many values", FileWithIr(ir.bytes),
                     "expected at most 1 more values in this region (it declared 1), found 2 "
                     "results"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kDefOp, 0x40);
    ir.VarInt(0);
    cases.push_back({"properties before v5", FileWithIr(ir.bytes),
                     "expected no properties on test.def in bytecode version 4"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kDefOp, 0x02);
    ir.VarInt(1000000).VarInt(0);
    cases.push_back({"huge count", FileWithIr(ir.bytes), "found 1000000"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kWrapOp, 0x10);
    ir.Flagged(1, true).Section(kIR, {0x01, 0x02});  // an empty region, then a stray byte
    cases.push_back({"trailing bytes in nested section", FileWithIr(ir.bytes),
                     "expected the end of the IR section after the regions of test.wrap"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kWrapOp, 0x10);
    ir.Flagged(1, true).Section(kString, {0x01});
    cases.push_back({"wrong nested section", FileWithIr(ir.bytes),
                     "expected an IR section (id 4) holding the regions of test.wrap"});
  }
  {
    Writer ir;
    ir.Flagged(1, false);
    TinyModule::Op(ir, kDefOp, 0x80);
    cases.push_back({"unknown mask bit", FileWithIr(ir.bytes), "expected an op encoding mask"});
  }
  {
    Writer ir;
    ir.Flagged(0, true).VarInt(0);
    cases.push_back({"top-level arguments", FileWithIr(ir.bytes),
                     "expected a top-level block without arguments"});
  }
  {
    Writer writer;
    writer.Byte('M').Byte('L').Byte(0xEF).Byte('R').VarInt(6).Text("p");
    writer.Byte(0x80).VarInt(1).VarInt(8).Byte(0xCB).Byte(0x00).Byte(0xCB).Byte(0x01);
    cases.push_back({"bad padding", writer.bytes, "expected alignment padding 0xCB, found 0x00"});
  }
  cases.push_back({"string without NUL", FileWithIr({0x03}, 4, {0x03, 0x05, 'a', 'b'}),
                   "byte 20: expected string #0 to end with a NUL byte"});
  cases.push_back({"string sizes overrun", FileWithIr({0x03}, 4, {0x03, 0x0B, 'a', 0}),
                   "expected the size of string #0 (NUL included) from 1 to 4, found 5"});
  return cases;
}

TEST(BytecodeReaderTest, MalformedFilesSayWhatWasExpected) {
  for (const BadCase& bad : BadCases()) {
    SCOPED_TRACE(bad.name);
    StatusOr<File> file = Read(bad.bytes);
    ASSERT_FALSE(file.ok());
    EXPECT_EQ(file.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(file.status().message().find(bad.message), std::string::npos)
        << file.status().message();
  }
}

TEST(BytecodeReaderTest, ErrorsCarryTheProducer) {
  Writer ir;
  ir.Flagged(1, false);
  TinyModule::Op(ir, kDefOp, 0x80);
  StatusOr<File> file = Read(FileWithIr(ir.bytes));
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.status().message().rfind("MLIR bytecode version 4 from \"kiln-test\": byte ", 0),
            0u)
      << file.status().message();
}

}  // namespace
}  // namespace kiln::frontend::bytecode
