// The VHLO reader on hand-built artifacts (nesting, cycles, schema and
// version errors), its number formats and its op table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/bytecode_test_util.h"
#include "frontend/vhlo/numbers.h"
#include "frontend/vhlo/op_table.h"
#include "frontend/vhlo/reader.h"
#include "ir/printer.h"

namespace kiln::frontend::vhlo {
namespace {

using test_util::Artifact;
using test_util::Bytes;
using test_util::Writer;

// Builtin attribute and type codes (BuiltinDialectBytecode.td).
enum : uint64_t { kArrayAttr = 0, kDictionaryAttr = 1, kStringAttr = 2, kUnitAttr = 7 };
enum : uint64_t { kUnknownLoc = 15 };

// An artifact whose module carries one attribute `x` = `value` (an index),
// and whose body is `body_ops` ops written by `body`.
struct ModuleWithAttribute {
  Artifact artifact;
  uint64_t module_op, loc;

  ModuleWithAttribute() {
    module_op = artifact.Op(Artifact::kBuiltin, "module");
    loc = artifact.Attribute(Artifact::kBuiltin, Bytes({kUnknownLoc}));
  }

  // The module op, its attribute dictionary {x = value} and a body of
  // `body_ops` ops that `body` writes.
  std::vector<uint8_t> Build(uint64_t value, uint64_t body_ops = 0,
                             const std::vector<uint8_t>& body = {}) {
    const uint64_t name = artifact.Attribute(Artifact::kBuiltin,
                                             Bytes({kStringAttr, artifact.String("x")}));
    const uint64_t dict = artifact.Attribute(Artifact::kBuiltin,
                                             Bytes({kDictionaryAttr, 1, name, value}));
    Writer ir;
    ir.Flagged(1, false);  // top-level block: one op
    ir.VarInt(module_op).Byte(0x01 | 0x10).VarInt(loc).VarInt(dict);
    ir.Flagged(1, false);                             // one region, not isolated
    ir.VarInt(1).VarInt(0).Flagged(body_ops, false);  // one block, no values
    ir.Append(body);
    artifact.ir = ir.bytes;
    return artifact.Build();
  }
};

TEST(VhloHandmadeTest, ReadsAMinimalModule) {
  ModuleWithAttribute module;
  const uint64_t unit = module.artifact.Attribute(Artifact::kBuiltin, Bytes({kUnitAttr}));
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(unit));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->op().GetAttr("x"), ir::Attribute::Unit());
  EXPECT_TRUE(read->body().operations().empty());
}

TEST(VhloHandmadeTest, DeepAttributeNestingIsDecodedWithoutNativeStack) {
  // x = [[[...[unit]...]]]: the reader resolves the chain on an explicit stack.
  constexpr uint64_t kDepth = 900;
  ModuleWithAttribute module;
  const uint64_t first = module.artifact.attributes.size();
  for (uint64_t level = 0; level < kDepth; ++level) {
    module.artifact.Attribute(Artifact::kBuiltin, Bytes({kArrayAttr, 1, first + level + 1}));
  }
  module.artifact.Attribute(Artifact::kBuiltin, Bytes({kUnitAttr}));
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(first));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ir::Attribute value = read->op().GetAttr("x");
  uint64_t depth = 0;
  while (value.Is(ir::AttrKind::kArray)) {
    value = value->elements[0];
    ++depth;
  }
  EXPECT_EQ(depth, kDepth);
  EXPECT_TRUE(value.Is(ir::AttrKind::kUnit));
}

TEST(VhloHandmadeTest, RejectsNestingDeeperThanTheLimit) {
  // 200,000 levels: decoded without recursion, then refused before the IR
  // would have to free a value that deep.
  constexpr uint64_t kDepth = 200000;
  ModuleWithAttribute module;
  const uint64_t first = module.artifact.attributes.size();
  for (uint64_t level = 0; level < kDepth; ++level) {
    module.artifact.Attribute(Artifact::kBuiltin, Bytes({kArrayAttr, 1, first + level + 1}));
  }
  module.artifact.Attribute(Artifact::kBuiltin, Bytes({kUnitAttr}));
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(first));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("nests deeper than 1000 levels"), std::string::npos)
      << read.status().ToString();
}

TEST(VhloHandmadeTest, RejectsCyclicAttributes) {
  ModuleWithAttribute module;
  const uint64_t first = module.artifact.attributes.size();
  module.artifact.Attribute(Artifact::kBuiltin, Bytes({kArrayAttr, 1, first + 1}));
  module.artifact.Attribute(Artifact::kBuiltin, Bytes({kArrayAttr, 2, first + 2, first}));
  module.artifact.Attribute(Artifact::kBuiltin, Bytes({kUnitAttr}));
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(first));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("a cycle"), std::string::npos) << read.status().ToString();
}

TEST(VhloHandmadeTest, MultiplyingTextIsRefused) {
  // 2000 shardings of 2000 dimensions of 2000 axes: 12 kB of references
  // that would spell out gigabytes of Shardy text.
  constexpr uint64_t kFanOut = 2000;
  ModuleWithAttribute module;
  Artifact& a = module.artifact;
  Writer axis;
  axis.VarInt(4).VarInt(a.String("a")).Flagged(0, false);  // axis_ref "a"
  const uint64_t axis_ref = a.Attribute(Artifact::kSdy, axis.bytes);
  Writer dim;
  dim.VarInt(5).VarInt(kFanOut);  // dimension_sharding {"a", "a", ...}
  for (uint64_t i = 0; i < kFanOut; ++i) dim.VarInt(axis_ref);
  dim.Byte(1).Flagged(0, false);
  const uint64_t dim_sharding = a.Attribute(Artifact::kSdy, dim.bytes);
  const uint64_t mesh_name = a.Attribute(Artifact::kBuiltin, Bytes({kStringAttr, a.String("m")}));
  const uint64_t mesh_ref = a.Attribute(Artifact::kBuiltin, Bytes({4, mesh_name}));
  Writer sharding;
  sharding.VarInt(6).VarInt(mesh_ref).VarInt(kFanOut);
  for (uint64_t i = 0; i < kFanOut; ++i) sharding.VarInt(dim_sharding);
  sharding.VarInt(0);
  const uint64_t tensor_sharding = a.Attribute(Artifact::kSdy, sharding.bytes);
  Writer per_value;
  per_value.VarInt(7).VarInt(kFanOut);
  for (uint64_t i = 0; i < kFanOut; ++i) per_value.VarInt(tensor_sharding);
  const uint64_t value = a.Attribute(Artifact::kSdy, per_value.bytes);
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(value));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("exceeds"), std::string::npos) << read.status().ToString();
}

TEST(VhloHandmadeTest, DoublingTypeNamesStayBounded) {
  // future<t, t> of future<t, t> of ... 60 levels: 2^60 names in text.
  ModuleWithAttribute module;
  Artifact& a = module.artifact;
  uint64_t type = a.Type(Artifact::kVhlo, Bytes({4}));  // f32
  for (int level = 0; level < 60; ++level) {
    type = a.Type(Artifact::kVhlo, Bytes({42, 2, type, type}));
  }
  const uint64_t value = a.Attribute(Artifact::kBuiltin, Bytes({6, type}));  // a type attribute
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(value));
  if (!read.ok()) {
    EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument) << read.status().ToString();
  }
}

// A module whose body is one op `name` (of `dialect`) with `properties`.
std::vector<uint8_t> ModuleWithOp(ModuleWithAttribute& module, uint32_t dialect,
                                  const std::string& name, const std::vector<uint8_t>& properties) {
  Artifact& a = module.artifact;
  const uint64_t op = a.Op(dialect, name);
  a.properties.push_back(properties);
  Writer body;
  body.VarInt(op).Byte(0x40).VarInt(module.loc).VarInt(a.properties.size() - 1);
  const uint64_t unit = a.Attribute(Artifact::kBuiltin, Bytes({kUnitAttr}));
  return module.Build(unit, 1, body.bytes);
}

TEST(VhloHandmadeTest, UnknownVhloOpIsUnimplemented) {
  ModuleWithAttribute module;
  StatusOr<ir::Module> read = ReadPortableArtifact(ModuleWithOp(module, Artifact::kVhlo,
                                                                "frobnicate_v1", {}));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(read.status().message().find("vhlo.frobnicate_v1"), std::string::npos)
      << read.status().ToString();
  EXPECT_NE(read.status().message().find("1.22.0"), std::string::npos);
}

TEST(VhloHandmadeTest, PropertiesMustMatchTheOpSchema) {
  // vhlo.iota_v1 has one inherent attribute; give it two.
  ModuleWithAttribute module;
  const uint64_t dim = module.artifact.Attribute(Artifact::kBuiltin, Bytes({kUnitAttr}));
  StatusOr<ir::Module> read = ReadPortableArtifact(ModuleWithOp(module, Artifact::kVhlo, "iota_v1",
                                                                Bytes({dim, dim})));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(read.status().message().find("expected the end of the properties of vhlo.iota_v1"),
            std::string::npos)
      << read.status().ToString();
  EXPECT_EQ(read.status().message().rfind("byte ", 0), 0u) << read.status().ToString();
}

TEST(VhloHandmadeTest, CustomEntriesOfUnknownDialectsNameTheDialect) {
  ModuleWithAttribute module;
  const uint64_t value = module.artifact.Attribute(Artifact::kOther, Bytes({1, 2, 3}));
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(value));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(read.status().message().find("dialect 'other'"), std::string::npos)
      << read.status().ToString();
}

TEST(VhloHandmadeTest, TextualEntriesBecomeOpaque) {
  ModuleWithAttribute module;
  Writer text;
  text.Text("#other.thing<1, 2>");
  module.artifact.attributes.push_back({Artifact::kOther, text.bytes, /*custom=*/false});
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(module.artifact.attributes.size() -
                                                                1));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->op().GetAttr("x"), ir::Attribute::Opaque("#other.thing<1, 2>"));
}

// Legalize-to-VHLO leaves Shardy's ops alone, so a sdy.manual_computation
// keeps StableHLO types (a !stablehlo.token under shard_map with an
// io_callback) in its signature and block arguments, stored with StableHLO's
// own encoding (StablehloBytecode.cpp: type 0 token). Here in the simplest
// place that holds types:
//   vhlo.func_v1 @main(%arg0: !stablehlo.token) -> !stablehlo.token {
//     vhlo.return_v1 %arg0
//   }
TEST(VhloHandmadeTest, DecodesStablehloDialectTypesAndAttributes) {
  Artifact a;
  a.dialects = {"builtin", "vhlo", "sdy", "stablehlo"};
  constexpr uint32_t kStablehlo = Artifact::kOther;
  const uint64_t module = a.Op(Artifact::kBuiltin, "module");
  const uint64_t func = a.Op(Artifact::kVhlo, "func_v1");
  const uint64_t ret = a.Op(Artifact::kVhlo, "return_v1");
  const uint64_t loc = a.Attribute(Artifact::kBuiltin, Bytes({kUnknownLoc}));
  const uint64_t token = a.Type(kStablehlo, Bytes({0}));
  const uint64_t signature = a.Type(Artifact::kVhlo, Bytes({8, 1, token, 1, token}));
  const uint64_t empty = a.Attribute(Artifact::kVhlo, Bytes({1, 0}));
  const uint64_t type = a.Attribute(Artifact::kVhlo, Bytes({17, signature}));
  const uint64_t name = a.Attribute(Artifact::kVhlo, Bytes({14, a.String("main")}));
  const uint64_t visibility = a.Attribute(Artifact::kVhlo, Bytes({14, a.String("")}));
  // A discardable attribute of StableHLO's encoding: kind 2, GT.
  const uint64_t direction = a.Attribute(kStablehlo, Bytes({2, 3}));
  const uint64_t key = a.Attribute(Artifact::kBuiltin, Bytes({kStringAttr, a.String("x")}));
  const uint64_t attributes = a.Attribute(Artifact::kBuiltin,
                                          Bytes({kDictionaryAttr, 1, key, direction}));
  const uint64_t module_props = a.Properties(Bytes({0, 0}));
  const uint64_t func_props = a.Properties(Bytes({empty, type, empty, name, visibility}));
  Writer region;  // one block: %arg0 (no location), the return, no use-list orders
  region.VarInt(1).VarInt(1).Flagged(1, true).VarInt(1).Flagged(token, false).Byte(0);
  region.VarInt(ret).Byte(0x04).VarInt(loc).VarInt(1).VarInt(0);
  StatusOr<ir::Module> read = ReadPortableArtifact(test_util::BuildModuleWithFunction(
      a, module, func, loc, module_props, func_props, attributes, region.bytes));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ASSERT_EQ(read->body().operations().size(), 1u);
  const ir::Operation& main = *read->body().operations()[0];
  EXPECT_EQ(main.GetAttr("x"), ir::Attribute::Enum("stablehlo.comparison_direction", "GT"));
  EXPECT_EQ(ir::PrintModule(*read),
            "module {\n"
            "  func.func @main(%arg0: !stablehlo.token) -> !stablehlo.token attributes {x = "
            "#stablehlo<comparison_direction GT>} {\n"
            "    return %arg0 : !stablehlo.token\n"
            "  }\n"
            "}\n");
}

// A vhlo.tensor_v1 of i1 with `blob`, read back as module attribute x.
StatusOr<ir::Attribute> BoolTensor(int64_t count, const std::vector<uint8_t>& blob) {
  ModuleWithAttribute module;
  Artifact& a = module.artifact;
  const uint64_t i1 = a.Type(Artifact::kVhlo, Bytes({0}));
  Writer tensor_type;
  tensor_type.VarInt(20).VarInt(1).SignedVarInt(count).VarInt(i1);
  const uint64_t type = a.Type(Artifact::kVhlo, tensor_type.bytes);
  Writer tensor;
  tensor.VarInt(15).VarInt(type).VarInt(blob.size()).Append(blob);
  const uint64_t value = a.Attribute(Artifact::kVhlo, tensor.bytes);
  KILN_ASSIGN_OR_RETURN(ir::Module read, ReadPortableArtifact(module.Build(value)));
  return read.op().GetAttr("x");
}

TEST(VhloHandmadeTest, UnpacksBooleanTensors) {
  StatusOr<ir::Attribute> packed = BoolTensor(10, {0b00101101, 0b10});
  ASSERT_TRUE(packed.ok()) << packed.status().ToString();
  EXPECT_EQ((*packed)->data, (std::vector<uint8_t>{1, 0, 1, 1, 0, 1, 0, 0, 0, 1}));
  EXPECT_FALSE((*packed)->splat);

  StatusOr<ir::Attribute> splat_true = BoolTensor(16, {0xFF});
  ASSERT_TRUE(splat_true.ok()) << splat_true.status().ToString();
  EXPECT_TRUE((*splat_true)->splat);
  EXPECT_EQ((*splat_true)->data, std::vector<uint8_t>{1});

  StatusOr<ir::Attribute> unpacked = BoolTensor(3, {1, 0, 1});  // the older, unpacked form
  ASSERT_TRUE(unpacked.ok()) << unpacked.status().ToString();
  EXPECT_EQ((*unpacked)->data, (std::vector<uint8_t>{1, 0, 1}));

  StatusOr<ir::Attribute> short_blob = BoolTensor(20, {1, 2});
  ASSERT_FALSE(short_blob.ok());
  EXPECT_NE(short_blob.status().message().find("expected 20 bytes of dense data"),
            std::string::npos)
      << short_blob.status().ToString();
}

TEST(VhloHandmadeTest, DecodesFileLineColumnRanges) {
  ModuleWithAttribute module;
  Artifact& a = module.artifact;
  const uint64_t file = a.Attribute(Artifact::kBuiltin, Bytes({kStringAttr, a.String("f.py")}));
  // [line, column, end column] and [line, column, end line, end column].
  const uint64_t same_line = a.Attribute(Artifact::kBuiltin, Bytes({22, file, 3, 5, 11, 21}));
  const uint64_t two_lines = a.Attribute(Artifact::kBuiltin, Bytes({22, file, 4, 5, 11, 6, 2}));
  const uint64_t fused = a.Attribute(Artifact::kBuiltin, Bytes({12, 2, same_line, two_lines}));
  module.loc = fused;
  const uint64_t unit = a.Attribute(Artifact::kBuiltin, Bytes({kUnitAttr}));
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(unit));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  const ir::LocationStorage& loc = read->op().location().storage();
  ASSERT_EQ(loc.kind, ir::LocationKind::kFused);
  ASSERT_EQ(loc.children.size(), 2u);
  const ir::LocationStorage& first = loc.children[0].storage();
  EXPECT_EQ(first.text, "f.py");
  EXPECT_EQ(first.line, 5);
  EXPECT_EQ(first.column, 11);
  EXPECT_EQ(first.end_line, 5);
  EXPECT_EQ(first.end_column, 21);
  const ir::LocationStorage& second = loc.children[1].storage();
  EXPECT_EQ(second.end_line, 6);
  EXPECT_EQ(second.end_column, 2);
  EXPECT_EQ(read->op().location().ToUserString(), "f.py:5:11");
}

TEST(VhloHandmadeTest, DecodesBuiltinDenseArraysAndIntegers) {
  ModuleWithAttribute module;
  Artifact& a = module.artifact;
  const uint64_t i64 = a.Type(Artifact::kBuiltin, Bytes({0, 64 << 2}));
  const uint64_t ui8 = a.Type(Artifact::kBuiltin, Bytes({0, (8 << 2) | 2}));
  Writer array;
  array.VarInt(17).VarInt(i64).VarInt(2).VarInt(16);
  for (int64_t v : {int64_t{-3}, int64_t{1} << 40}) {
    for (int i = 0; i < 8; ++i) {
      array.Byte(static_cast<uint8_t>(static_cast<uint64_t>(v) >> (8 * i)));
    }
  }
  const uint64_t dense = a.Attribute(Artifact::kBuiltin, array.bytes);
  Writer big;
  big.VarInt(8).VarInt(ui8).Byte(250);  // 250 : ui8, one raw byte
  const uint64_t small = a.Attribute(Artifact::kBuiltin, big.bytes);
  const uint64_t list = a.Attribute(Artifact::kBuiltin, Bytes({kArrayAttr, 2, dense, small}));
  StatusOr<ir::Module> read = ReadPortableArtifact(module.Build(list));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  ir::Attribute value = read->op().GetAttr("x");
  EXPECT_EQ(value->elements[0], ir::Attribute::DenseI64Array({-3, int64_t{1} << 40}));
  EXPECT_EQ(value->elements[1], ir::Attribute::Integer(250, ir::Type::Element(ElementType::kU8)));
}

// ---------------------------------------------------------------------------
// Number formats and the op table.

double Decode(ElementType type, uint64_t bits) {
  double value = -12345;
  EXPECT_TRUE(FloatBitsToDouble(type, bits, value));
  return value;
}

TEST(VhloNumbersTest, DecodesSmallFloatFormats) {
  EXPECT_EQ(Decode(ElementType::kBF16, 0x3FC0), 1.5);
  EXPECT_EQ(Decode(ElementType::kF16, 0xC000), -2.0);
  EXPECT_EQ(Decode(ElementType::kF16, 0x0001), std::ldexp(1.0, -24));  // subnormal
  EXPECT_TRUE(std::isinf(Decode(ElementType::kF16, 0x7C00)));
  EXPECT_EQ(Decode(ElementType::kF8E4M3FN, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E4M3FN, 0x7F)));
  EXPECT_TRUE(std::isinf(Decode(ElementType::kF8E5M2, 0x7C)));
  EXPECT_EQ(Decode(ElementType::kF8E5M2, 0x3C), 1.0);
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E4M3FNUZ, 0x80)));
  EXPECT_EQ(Decode(ElementType::kF8E4M3FNUZ, 0x40), 1.0);     // bias 8
  EXPECT_EQ(Decode(ElementType::kF8E4M3B11FNUZ, 0x58), 1.0);  // bias 11
  EXPECT_EQ(Decode(ElementType::kF8E8M0FNU, 0x7F), 1.0);
  EXPECT_TRUE(std::isnan(Decode(ElementType::kF8E8M0FNU, 0xFF)));
  EXPECT_EQ(Decode(ElementType::kF4E2M1FN, 0x7), 6.0);
  EXPECT_EQ(Decode(ElementType::kF6E2M3FN, 0x1F), 7.5);
  EXPECT_EQ(Decode(ElementType::kF6E3M2FN, 0x1F), 28.0);
  EXPECT_EQ(Decode(ElementType::kTF32, 0x1FE00), 1.5);  // 1 + 8 + 10 bits
  EXPECT_EQ(Float80BitsToDouble(0x8000000000000000ull, 0x3FFF), 1.0);
  EXPECT_EQ(Float128BitsToDouble(0, 0x4000000000000000ull), 2.0);
  double unused;
  EXPECT_FALSE(FloatBitsToDouble(ElementType::kS32, 0, unused));
}

TEST(VhloNumbersTest, TruncatesIntegersToTheirWidth) {
  EXPECT_EQ(TruncateToWidth(0xF, 4, true), -1);
  EXPECT_EQ(TruncateToWidth(0xF, 4, false), 15);
  EXPECT_EQ(TruncateToWidth(~uint64_t{0}, 64, false), -1);  // two's complement bits
  EXPECT_EQ(TruncateToWidth(0x1FF, 8, true), -1);
}

TEST(VhloOpTableTest, KnowsEveryVhloOpVersion) {
  const VhloOpInfo* dot = FindVhloOp("dot_general_v2");
  ASSERT_NE(dot, nullptr);
  EXPECT_TRUE(dot->newest);
  EXPECT_EQ(dot->first, (VhloVersion{1, 6, 0}));
  EXPECT_EQ(dot->attributes.size(), 12u);
  EXPECT_TRUE(std::is_sorted(dot->attributes.begin(), dot->attributes.end()));
  const VhloOpInfo* func = FindVhloOp("func_v1");
  ASSERT_NE(func, nullptr);
  EXPECT_EQ(func->attributes,
            (std::vector<std::string_view>{"arg_attrs", "function_type", "res_attrs", "sym_name",
                                           "sym_visibility"}));
  const VhloOpInfo* v1 = FindVhloOp("dot_general_v1");
  ASSERT_NE(v1, nullptr);
  EXPECT_FALSE(v1->newest);
  EXPECT_EQ(v1->last, (VhloVersion{1, 5, 0}));
  EXPECT_EQ(FindVhloOp("constant_v99"), nullptr);
  EXPECT_EQ(KnownVersionsOf("constant_v99"), "constant_v1");
  EXPECT_EQ(KnownVersionsOf("cosine_v7"), "cosine_v1, cosine_v2");
  EXPECT_NE(FindVhloOp("cross-replica-sum_v1"), nullptr);
  EXPECT_EQ(SplitVersionedName("all_to_all_v2"),
            (std::pair<std::string_view, int>{"all_to_all", 2}));
  EXPECT_EQ(SplitVersionedName("no_version").second, 0);
}

TEST(VhloOpTableTest, ParsesVersions) {
  EXPECT_EQ(ParseVhloVersion("1.22.0"), (VhloVersion{1, 22, 0}));
  EXPECT_FALSE(ParseVhloVersion("1.22").has_value());
  EXPECT_FALSE(ParseVhloVersion("1.22.0.1").has_value());
  EXPECT_FALSE(ParseVhloVersion("a.b.c").has_value());
  EXPECT_EQ(VhloVersionFromProducer("StableHLO_v0.9.0"), (VhloVersion{0, 9, 0}));
  EXPECT_FALSE(VhloVersionFromProducer("MLIR19.0.0git").has_value());
  EXPECT_LT((VhloVersion{1, 9, 0}), (VhloVersion{1, 10, 0}));
}

}  // namespace
}  // namespace kiln::frontend::vhlo
