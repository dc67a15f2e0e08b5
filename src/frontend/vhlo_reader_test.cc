// The VHLO reader (src/frontend/vhlo) on the upstream corpus
// (../shared/corpus/vhlo), on artifacts JAX wrote (tests/data/artifacts, made
// by tests/data/make_artifacts.py), on hand-checked decodings and on
// malformed input. The oracle: make_artifacts.py also asks jaxlib to
// deserialize each artifact and writes a canonical dump (<name>.oracle.txt);
// CanonicalDump below prints Kiln's module in the same form.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "frontend/bytecode/file.h"
#include "frontend/vhlo/numbers.h"
#include "frontend/vhlo/op_table.h"
#include "frontend/vhlo/reader.h"
#include "frontend/vhlo/text.h"
#include "ir/module.h"

namespace kiln::frontend::vhlo {
namespace {

namespace fs = std::filesystem;

#ifdef KILN_CORPUS_DIR
const fs::path kCorpusDir = fs::path(KILN_CORPUS_DIR) / "vhlo";
#else
const fs::path kCorpusDir;
#endif
const fs::path kArtifactDir = fs::path(__FILE__).parent_path().parent_path().parent_path() /
                              "tests" / "data" / "artifacts";

#define KILN_REQUIRE_DIR(dir)                                                     \
  if ((dir).empty() || !fs::is_directory(dir)) {                                  \
    GTEST_SKIP() << "no test data at '" << (dir).string() << "'";                 \
  }

std::vector<uint8_t> ReadBytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<fs::path> FilesIn(const fs::path& dir, std::string_view extension) {
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == extension) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// ---------------------------------------------------------------------------
// Canonical dump, matching tests/data/make_artifacts.py's oracle dump.

std::string Number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[40];
  std::snprintf(buffer, sizeof(buffer), "%.17g", value);
  return buffer;
}

bool IsUnsignedElement(ElementType type) {
  return type == ElementType::kPred || (type >= ElementType::kU1 && type <= ElementType::kU64);
}

// One element of dense data as the oracle prints it (complex: two numbers).
std::string DenseElement(const ir::Type& element, const uint8_t* data) {
  ElementType type = element.Is(ir::TypeKind::kQuantized)
                         ? ir::GetQuantizedParams(element).storage_type
                         : element.element_type();
  const ElementTypeInfo& info = GetElementTypeInfo(type);
  if (type == ElementType::kC64 || type == ElementType::kC128) {
    const ElementType part = type == ElementType::kC64 ? ElementType::kF32 : ElementType::kF64;
    const size_t half = info.storage_bytes / 2;
    return DenseElement(ir::Type::Element(part), data) + ", " +
           DenseElement(ir::Type::Element(part), data + half);
  }
  uint64_t bits = 0;
  std::memcpy(&bits, data, info.storage_bytes);
  double value = 0;
  if (!element.Is(ir::TypeKind::kQuantized) && FloatBitsToDouble(type, bits, value)) {
    return Number(value);
  }
  const int width = type == ElementType::kIndex ? 64 : info.bit_width;
  if (type == ElementType::kPred) return bits ? "1" : "0";
  const bool is_unsigned = IsUnsignedElement(type) && !element.Is(ir::TypeKind::kQuantized);
  int64_t integer = TruncateToWidth(bits, width, !is_unsigned);
  return is_unsigned ? std::to_string(static_cast<uint64_t>(integer)) : std::to_string(integer);
}

std::string CanonicalAttribute(const ir::Attribute& attribute);

std::string CanonicalDense(const ir::AttributeStorage& s) {
  const int64_t count = s.type.NumElements();
  const ir::Type& element = s.type.element();
  const ElementType stored = element.Is(ir::TypeKind::kQuantized)
                                 ? ir::GetQuantizedParams(element).storage_type
                                 : element.element_type();
  const size_t bytes = GetElementTypeInfo(stored).storage_bytes;
  std::string text = StrCat("dense ", TypeText(s.type), s.splat && count > 1 ? " splat [" : " [");
  const int64_t shown = s.splat ? std::min<int64_t>(count, 1) : std::min<int64_t>(count, 256);
  for (int64_t i = 0; i < shown; ++i) {
    text += (i ? ", " : "") + DenseElement(element, &s.data[static_cast<size_t>(i) * bytes]);
  }
  if (!s.splat && count > 256) text += StrCat(", ...", count);
  return text + "]";
}

std::string CanonicalAttribute(const ir::Attribute& attribute) {
  const ir::AttributeStorage& s = attribute.storage();
  switch (s.kind) {
    case ir::AttrKind::kUnit: return "unit";
    case ir::AttrKind::kBool: return s.bool_value ? "true" : "false";
    case ir::AttrKind::kInteger: {
      const bool is_unsigned = s.type.Is(ir::TypeKind::kElement) &&
                               IsUnsignedElement(s.type.element_type());
      return StrCat("int ", is_unsigned ? std::to_string(static_cast<uint64_t>(s.int_value))
                                        : std::to_string(s.int_value),
                    ":", TypeText(s.type));
    }
    case ir::AttrKind::kFloat:
      return StrCat("float ", Number(s.float_value), ":", TypeText(s.type));
    case ir::AttrKind::kString: return QuotedString(s.text);
    case ir::AttrKind::kType: return "type " + TypeText(s.type);
    case ir::AttrKind::kArray: {
      std::string text = "[";
      for (size_t i = 0; i < s.elements.size(); ++i) {
        text += (i ? ", " : "") + CanonicalAttribute(s.elements[i]);
      }
      return text + "]";
    }
    case ir::AttrKind::kDenseArray: {
      const bool is_bool = s.type.element_type() == ElementType::kPred;
      std::string text = StrCat("array<", TypeText(s.type));
      for (size_t i = 0; i < s.int_values.size(); ++i) {
        text += (i ? ", " : ": ") +
                (is_bool ? std::string(s.int_values[i] ? "true" : "false")
                         : StrCat(s.int_values[i]));
      }
      for (size_t i = 0; i < s.float_values.size(); ++i) {
        text += (i ? ", " : ": ") + Number(s.float_values[i]);
      }
      return text + ">";
    }
    case ir::AttrKind::kDenseElements: return CanonicalDense(s);
    case ir::AttrKind::kDictionary:
    case ir::AttrKind::kStruct: {
      std::string text = s.kind == ir::AttrKind::kStruct ? StrCat("#", s.text, "<") : "{";
      for (size_t i = 0; i < s.fields.size(); ++i) {
        text += StrCat(i ? ", " : "", s.fields[i].name, " = ",
                       CanonicalAttribute(s.fields[i].value));
      }
      return text + (s.kind == ir::AttrKind::kStruct ? ">" : "}");
    }
    case ir::AttrKind::kSymbolRef: return AttrText(attribute);
    case ir::AttrKind::kEnum: return StrCat("#", s.text, "<", s.enum_value, ">");
    case ir::AttrKind::kOpaque: return "opaque " + s.text;
  }
  return "?";
}

class CanonicalDumper {
 public:
  std::string Dump(const ir::Operation& root) {
    NumberOp(root);
    DumpOp(root, 0);
    return out_;
  }

 private:
  void NumberOp(const ir::Operation& op) {
    for (size_t i = 0; i < op.num_results(); ++i) ids_[op.result(i)] = ids_.size();
    for (size_t r = 0; r < op.num_regions(); ++r) {
      for (size_t b = 0; b < op.region(r).num_blocks(); ++b) {
        const ir::Block& block = op.region(r).block(b);
        for (size_t a = 0; a < block.num_arguments(); ++a) ids_[block.argument(a)] = ids_.size();
        for (const auto& inner : block.operations()) NumberOp(*inner);
      }
    }
  }

  void DumpOp(const ir::Operation& op, int depth) {
    const std::string pad(static_cast<size_t>(depth) * 2, ' ');
    out_ += StrCat(pad, "op ", op.name(), " loc=", LocationText(op.location()), "\n");
    if (!op.operands().empty()) {
      out_ += pad + "  operands: ";
      for (size_t i = 0; i < op.operands().size(); ++i) {
        out_ += StrCat(i ? ", " : "", "%", ids_[op.operand(i)]);
      }
      out_ += "\n";
    }
    if (op.num_results() != 0) {
      out_ += pad + "  results: ";
      for (size_t i = 0; i < op.num_results(); ++i) {
        out_ += StrCat(i ? ", " : "", "%", ids_[op.result(i)], ":", TypeText(op.result(i)->type()));
      }
      out_ += "\n";
    }
    for (const ir::NamedAttribute& attribute : op.attributes()) {
      out_ += StrCat(pad, "  attr ", attribute.name, " = ", CanonicalAttribute(attribute.value),
                     "\n");
    }
    for (size_t r = 0; r < op.num_regions(); ++r) {
      out_ += StrCat(pad, "  region ", r, "\n");
      for (size_t b = 0; b < op.region(r).num_blocks(); ++b) {
        const ir::Block& block = op.region(r).block(b);
        out_ += StrCat(pad, "    block ", b, " args: ");
        for (size_t a = 0; a < block.num_arguments(); ++a) {
          const ir::Value* argument = block.argument(a);
          out_ += StrCat(a ? ", " : "", "%", ids_[argument], ":", TypeText(argument->type()), "@",
                         LocationText(argument->location()));
        }
        out_ += "\n";
        for (const auto& inner : block.operations()) DumpOp(*inner, depth + 3);
      }
    }
  }

  std::map<const ir::Value*, size_t> ids_;
  std::string out_;
};

std::string CanonicalDump(const ir::Module& module) {
  return CanonicalDumper().Dump(module.op());
}

// The first line where two dumps differ, with context, for failure messages.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  size_t line = 1, start = 0;
  for (size_t i = 0; i < std::min(expected.size(), actual.size()); ++i) {
    if (expected[i] != actual[i]) {
      size_t end_e = expected.find('\n', i), end_a = actual.find('\n', i);
      return StrCat("line ", line, ":\n  oracle: ", expected.substr(start, end_e - start),
                    "\n  kiln:   ", actual.substr(start, end_a - start));
    }
    if (expected[i] == '\n') {
      ++line;
      start = i + 1;
    }
  }
  return StrCat("one dump is a prefix of the other (", expected.size(), " vs ", actual.size(),
                " bytes)");
}


// ---------------------------------------------------------------------------
// Reading the corpus and the checked-in artifacts.

fs::path CorpusFile(std::string_view name) { return kCorpusDir / StrCat(name, ".mlir.bc"); }

StatusOr<ir::Module> ReadPath(const fs::path& path) {
  std::vector<uint8_t> bytes = ReadBytes(path);
  return ReadPortableArtifact(bytes);
}

// The first op called `name` inside `root` (pre-order), or null.
const ir::Operation* FindOp(const ir::Operation& root, std::string_view name) {
  std::vector<const ir::Operation*> stack{&root};
  while (!stack.empty()) {
    const ir::Operation* op = stack.back();
    stack.pop_back();
    if (op->name() == name) return op;
    for (size_t r = op->num_regions(); r-- > 0;) {
      for (size_t b = op->region(r).num_blocks(); b-- > 0;) {
        const auto& ops = op->region(r).block(b).operations();
        for (size_t i = ops.size(); i-- > 0;) stack.push_back(ops[i].get());
      }
    }
  }
  return nullptr;
}

// The first op called `name` in function `function` of `module`.
const ir::Operation* FindOpIn(const ir::Module& module, std::string_view function,
                              std::string_view name) {
  const ir::Operation* func = module.LookupFunction(function);
  return func == nullptr ? nullptr : FindOp(*func, name);
}

std::vector<int64_t> I64s(const ir::Attribute& attribute) {
  return attribute.Is(ir::AttrKind::kDenseArray) ? attribute->int_values : std::vector<int64_t>{};
}

TEST(VhloReaderTest, ReadsEveryCorpusFile) {
  KILN_REQUIRE_DIR(kCorpusDir);
  int read = 0;
  for (const fs::path& path : FilesIn(kCorpusDir, ".bc")) {
    StatusOr<ir::Module> module = ReadPath(path);
    if (path.filename() == "invalid_vhlo_future.mlir.bc") {
      ASSERT_FALSE(module.ok());
      EXPECT_EQ(module.status().code(), StatusCode::kUnimplemented);
      EXPECT_NE(module.status().message().find("vhlo.constant_v99"), std::string::npos)
          << module.status().ToString();
      EXPECT_NE(module.status().message().find("1.22.0"), std::string::npos);
      EXPECT_NE(module.status().message().find("constant_v1"), std::string::npos);
      continue;
    }
    ASSERT_TRUE(module.ok()) << path.filename() << ": " << module.status().ToString();
    EXPECT_EQ(module->op().name(), "builtin.module");
    // Nothing versioned is left.
    std::vector<const ir::Operation*> stack{&module->op()};
    while (!stack.empty()) {
      const ir::Operation* op = stack.back();
      stack.pop_back();
      EXPECT_EQ(op->name().find("vhlo."), std::string::npos)
          << path.filename() << ": " << op->name();
      // src/ir/op_names.def does not list collective_reduce (VHLO 1.19) yet.
      if (op->name() != "stablehlo.collective_reduce") {
        EXPECT_NE(op->code(), ir::OpCode::kUnknown) << path.filename() << ": " << op->name();
      }
      for (size_t r = 0; r < op->num_regions(); ++r) {
        for (size_t b = 0; b < op->region(r).num_blocks(); ++b) {
          for (const auto& inner : op->region(r).block(b).operations()) {
            stack.push_back(inner.get());
          }
        }
      }
    }
    ++read;
  }
  EXPECT_EQ(read, 33);
}

TEST(VhloReaderTest, InspectReportsVersionsAndOps) {
  KILN_REQUIRE_DIR(kCorpusDir);
  std::vector<uint8_t> bytes = ReadBytes(CorpusFile("vhlo_emit_version_api.1_1_0"));
  StatusOr<ArtifactInfo> info = InspectPortableArtifact(bytes);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->producer, "StableHLO_v1.1.0");
  EXPECT_EQ(info->bytecode_version, 6u);
  ASSERT_TRUE(info->vhlo_version.has_value());
  EXPECT_EQ(*info->vhlo_version, (VhloVersion{1, 1, 0}));
  std::map<std::string, uint64_t> histogram(info->op_histogram.begin(), info->op_histogram.end());
  EXPECT_EQ(histogram["vhlo.add_v1"], 1u);
  EXPECT_EQ(histogram["vhlo.func_v1"], 1u);
  EXPECT_EQ(histogram["builtin.module"], 1u);

  std::vector<uint8_t> future = ReadBytes(CorpusFile("invalid_vhlo_future"));
  StatusOr<ArtifactInfo> future_info = InspectPortableArtifact(future);
  ASSERT_TRUE(future_info.ok());
  EXPECT_EQ(future_info->vhlo_version->ToString(), "2.0.0");
  EXPECT_EQ(future_info->op_histogram.size(), 4u);  // module, func, constant_v99, return
}

TEST(VhloReaderTest, DecodesDotGeneralDimensionNumbers) {
  KILN_REQUIRE_DIR(kCorpusDir);
  for (std::string_view version : {"1_20_0", "0_9_0"}) {  // dot_general_v2, then _v1
    StatusOr<ir::Module> module =
        ReadPath(CorpusFile(StrCat("stablehlo_legalize_to_vhlo.", version)));
    ASSERT_TRUE(module.ok()) << module.status().ToString();
    const ir::Operation* dot = FindOpIn(*module, "default_dot_general", "stablehlo.dot_general");
    ASSERT_NE(dot, nullptr) << version;
    ir::Attribute dims = dot->GetAttr("dot_dimension_numbers");
    ASSERT_TRUE(dims.Is(ir::AttrKind::kStruct));
    EXPECT_EQ(dims->text, "stablehlo.dot");
    EXPECT_EQ(I64s(dims.Get("lhs_batching_dimensions")), std::vector<int64_t>{0});
    EXPECT_EQ(I64s(dims.Get("rhs_batching_dimensions")), std::vector<int64_t>{0});
    EXPECT_EQ(I64s(dims.Get("lhs_contracting_dimensions")), std::vector<int64_t>{2});
    EXPECT_EQ(I64s(dims.Get("rhs_contracting_dimensions")), std::vector<int64_t>{1});
    // Defaults are gone: no flattened fields, no algorithm, no precision_config.
    EXPECT_EQ(dot->attributes().size(), 1u);
  }
}

TEST(VhloReaderTest, DecodesComparisonDirectionAndType) {
  KILN_REQUIRE_DIR(kCorpusDir);
  StatusOr<ir::Module> module = ReadPath(CorpusFile("stablehlo_legalize_to_vhlo.1_20_0"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation* lt = FindOpIn(*module, "attr_comparison_direction_lt", "stablehlo.compare");
  ASSERT_NE(lt, nullptr);
  EXPECT_EQ(lt->GetAttr("comparison_direction"),
            ir::Attribute::Enum("stablehlo.comparison_direction", "LT"));
  EXPECT_FALSE(lt->GetAttr("compare_type"));  // NOTYPE is the default
  const ir::Operation* total = FindOpIn(*module, "attr_comparison_type_totalorder",
                                        "stablehlo.compare");
  ASSERT_NE(total, nullptr);
  EXPECT_EQ(total->GetAttr("compare_type"),
            ir::Attribute::Enum("stablehlo.comparison_type", "TOTALORDER"));
}

TEST(VhloReaderTest, DecodesQuantizedTypes) {
  KILN_REQUIRE_DIR(kCorpusDir);
  StatusOr<ir::Module> module = ReadPath(CorpusFile("stablehlo_legalize_to_vhlo.1_20_0"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation* dequantize = FindOpIn(*module, "op_uniform_dequantize",
                                             "stablehlo.uniform_dequantize");
  ASSERT_NE(dequantize, nullptr);
  const ir::Type& element = dequantize->operand(0)->type().element();
  ASSERT_TRUE(element.Is(ir::TypeKind::kQuantized));
  const ir::QuantizedParams& params = ir::GetQuantizedParams(element);
  EXPECT_TRUE(params.is_signed);
  EXPECT_EQ(params.storage_type, ElementType::kS8);
  EXPECT_EQ(params.expressed_type, ElementType::kF32);
  EXPECT_EQ(params.scales, std::vector<double>{34.0});
  EXPECT_EQ(params.zero_points, std::vector<int64_t>{16});
  EXPECT_EQ(params.storage_min, -128);
  EXPECT_EQ(params.storage_max, 127);
  EXPECT_FALSE(params.quantized_dimension.has_value());

  const ir::Operation* per_axis = module->LookupFunction("type_per_axis_quantization");
  ASSERT_NE(per_axis, nullptr);
  const ir::Value* argument = per_axis->region(0).block(0).argument(0);
  const ir::QuantizedParams& axis = ir::GetQuantizedParams(argument->type().element());
  EXPECT_EQ(axis.quantized_dimension, 0);
  EXPECT_EQ(axis.scales, (std::vector<double>{34.0, 34.0}));
  EXPECT_EQ(axis.zero_points, (std::vector<int64_t>{16, 16}));
}

TEST(VhloReaderTest, DecodesBoundedDynamicDimensions) {
  KILN_REQUIRE_DIR(kCorpusDir);
  StatusOr<ir::Module> module = ReadPath(CorpusFile("stablehlo_legalize_to_vhlo.1_20_0"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation* func = module->LookupFunction("attr_type_extensions_bounds");
  ASSERT_NE(func, nullptr);
  const ir::Type& type = func->region(0).block(0).argument(0)->type();
  EXPECT_EQ(type.dims(), (std::vector<int64_t>{ir::kDynamic, ir::kDynamic}));
  EXPECT_EQ(type.bounds(), (std::vector<int64_t>{16, ir::kDynamic}));
  EXPECT_EQ(TypeText(type), "tensor<?x?xf32, #stablehlo.bounds<16, ?>>");
}

TEST(VhloReaderTest, KeepsFileLineColumnLocations) {
  KILN_REQUIRE_DIR(kCorpusDir);
  StatusOr<ir::Module> module = ReadPath(CorpusFile("vhlo_emit_version_api.1_1_0"));
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation* func = module->LookupFunction("main");
  ASSERT_NE(func, nullptr);
  const std::string file = "third_party/stablehlo/stablehlo/tests/vhlo/vhlo_emit_version_api.mlir";
  EXPECT_EQ(func->location().ToUserString(), file + ":11:1");
  EXPECT_EQ(func->region(0).block(0).argument(0)->location().ToUserString(), file + ":11:17");
  const ir::Operation* add = FindOp(*func, "stablehlo.add");
  ASSERT_NE(add, nullptr);
  const ir::LocationStorage& loc = add->location().storage();
  EXPECT_EQ(loc.kind, ir::LocationKind::kFileLineCol);
  EXPECT_EQ(loc.text, file);
  EXPECT_EQ(loc.line, 12);
  EXPECT_EQ(loc.column, 8);
  EXPECT_EQ(func->region(0).block(0).back()->name(), "func.return");
  EXPECT_EQ(func->region(0).block(0).back()->location().ToUserString(), file + ":13:3");
}

TEST(VhloArtifactTest, DecodesDenseConstants) {
  KILN_REQUIRE_DIR(kArtifactDir);
  StatusOr<ir::Module> module = ReadPath(kArtifactDir / "mlp_locations.mlir.bc");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  std::vector<ir::Attribute> constants;
  std::vector<const ir::Operation*> stack{&module->op()};
  while (!stack.empty()) {
    const ir::Operation* op = stack.back();
    stack.pop_back();
    if (op->name() == "stablehlo.constant") constants.push_back(op->GetAttr("value"));
    for (size_t r = 0; r < op->num_regions(); ++r) {
      for (const auto& inner : op->region(r).block(0).operations()) stack.push_back(inner.get());
    }
  }
  // The 8x4 weights: linspace(-1, 1, 32) as f32, row-major, not a splat.
  auto weights = std::find_if(constants.begin(), constants.end(), [](const ir::Attribute& a) {
    return a->type.dims() == std::vector<int64_t>{8, 4};
  });
  ASSERT_NE(weights, constants.end());
  ASSERT_FALSE((*weights)->splat);
  ASSERT_EQ((*weights)->data.size(), 32u * 4);
  float first, last, second;
  std::memcpy(&first, &(*weights)->data[0], 4);
  std::memcpy(&second, &(*weights)->data[4], 4);
  std::memcpy(&last, &(*weights)->data[31 * 4], 4);
  EXPECT_EQ(first, -1.0f);
  EXPECT_FLOAT_EQ(second, -1.0f + 2.0f / 31);
  EXPECT_EQ(last, 1.0f);
  // The i1 mask, bit-packed in the file, one byte per element in Kiln.
  auto mask = std::find_if(constants.begin(), constants.end(), [](const ir::Attribute& a) {
    return a->type.element() == ir::Type::Element(ElementType::kPred);
  });
  ASSERT_NE(mask, constants.end());
  EXPECT_EQ((*mask)->data, (std::vector<uint8_t>{1, 0, 1, 1, 0, 0, 1, 0, 1, 1}));
}

TEST(VhloArtifactTest, KeepsShardyOpsAndAttributes) {
  KILN_REQUIRE_DIR(kArtifactDir);
  StatusOr<ir::Module> module = ReadPath(kArtifactDir / "sharded_sdy.mlir.bc");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  EXPECT_EQ(module->op().GetAttr("mhlo.num_partitions"),
            ir::Attribute::Integer(8, ir::Type::Element(ElementType::kS32)));
  const ir::Operation* mesh = FindOp(module->op(), "sdy.mesh");
  ASSERT_NE(mesh, nullptr);
  EXPECT_EQ(mesh->GetAttr("mesh"), ir::Attribute::Opaque("#sdy.mesh<[\"x\"=2, \"y\"=4]>"));
  EXPECT_EQ(mesh->GetAttr("sym_name"), ir::Attribute::String("mesh"));
  const ir::Operation* constraint = FindOp(module->op(), "sdy.sharding_constraint");
  ASSERT_NE(constraint, nullptr);
  EXPECT_EQ(constraint->GetAttr("sharding"),
            ir::Attribute::Opaque("#sdy.sharding<@mesh, [{\"x\"}, {}]>"));
  // The casts between VHLO and builtin types around it are folded away, as
  // upstream does: its operand comes straight from stablehlo.tanh.
  EXPECT_EQ(FindOp(module->op(), "builtin.unrealized_conversion_cast"), nullptr);
  ASSERT_NE(constraint->operand(0)->defining_op(), nullptr);
  EXPECT_EQ(constraint->operand(0)->defining_op()->name(), "stablehlo.tanh");
  const ir::Operation* main = module->LookupFunction("main");
  ASSERT_NE(main, nullptr);
  ir::Attribute arg_attrs = main->GetAttr("arg_attrs");
  ASSERT_TRUE(arg_attrs.Is(ir::AttrKind::kArray));
  EXPECT_EQ(arg_attrs->elements[0].Get("sdy.sharding"),
            ir::Attribute::Opaque("#sdy.sharding<@mesh, [{\"x\"}, {\"y\"}]>"));
}

TEST(VhloArtifactTest, ConvertsCompositesCallsAndReturns) {
  KILN_REQUIRE_DIR(kArtifactDir);
  StatusOr<ir::Module> module = ReadPath(kArtifactDir / "composites.mlir.bc");
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  const ir::Operation* main = module->LookupFunction("main");
  ASSERT_NE(main, nullptr);
  const ir::Operation* composite = FindOp(*main, "stablehlo.composite");
  ASSERT_NE(composite, nullptr);
  ir::Attribute decomposition = composite->GetAttr("decomposition");
  ASSERT_TRUE(decomposition.Is(ir::AttrKind::kSymbolRef));
  const ir::Operation* impl = module->LookupFunction(decomposition->symbol_path[0]);
  ASSERT_NE(impl, nullptr);
  EXPECT_EQ(impl->GetAttr("sym_visibility"), ir::Attribute::String("private"));
  EXPECT_EQ(main->GetAttr("sym_visibility"), ir::Attribute::String("public"));
  EXPECT_EQ(impl->region(0).block(0).back()->name(), "func.return");

  StatusOr<ir::Module> flow = ReadPath(kArtifactDir / "control_flow.mlir.bc");
  ASSERT_TRUE(flow.ok()) << flow.status().ToString();
  const ir::Operation* loop = FindOp(flow->op(), "stablehlo.while");
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(loop->region(0).block(0).back()->name(), "stablehlo.return");
  EXPECT_NE(FindOp(flow->op(), "func.call"), nullptr);
}

// ---------------------------------------------------------------------------
// Versions and malformed input.

std::vector<uint8_t> WithProducer(std::vector<uint8_t> bytes, std::string_view from,
                                  std::string_view to) {
  auto it = std::search(bytes.begin(), bytes.end(), from.begin(), from.end());
  EXPECT_NE(it, bytes.end());
  EXPECT_EQ(from.size(), to.size());
  std::copy(to.begin(), to.end(), it);
  return bytes;
}

TEST(VhloReaderTest, RejectsNewerVersionsAndOtherProducers) {
  KILN_REQUIRE_DIR(kCorpusDir);
  const std::vector<uint8_t> bytes = ReadBytes(CorpusFile("vhlo_emit_version_api.1_1_0"));
  // Producers of the same length, so the rest of the file stays in place.
  StatusOr<ir::Module> newer =
      ReadPortableArtifact(WithProducer(bytes, "StableHLO_v1.1.0", "StableHLO_v9.1.0"));
  ASSERT_FALSE(newer.ok());
  EXPECT_EQ(newer.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(newer.status().message().find("9.1.0"), std::string::npos) << newer.status().ToString();
  EXPECT_NE(newer.status().message().find("1.22.0"), std::string::npos);

  StatusOr<ir::Module> other =
      ReadPortableArtifact(WithProducer(bytes, "StableHLO_v1.1.0", "MLIR20.0.0git___"));
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(other.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(other.status().message().find("MLIR20.0.0git___"), std::string::npos);
}

// Every outcome on damaged input is a clean error (or, rarely, a module).
void ExpectCleanOutcome(const std::vector<uint8_t>& bytes, const std::string& what) {
  StatusOr<ir::Module> module = ReadPortableArtifact(bytes);
  if (module.ok()) return;
  const StatusCode code = module.status().code();
  EXPECT_TRUE(code == StatusCode::kInvalidArgument || code == StatusCode::kUnimplemented)
      << what << ": " << module.status().ToString();
  EXPECT_FALSE(module.status().message().empty()) << what;
}

TEST(VhloReaderTest, TruncatedInputGivesCleanErrors) {
  KILN_REQUIRE_DIR(kCorpusDir);
  const std::vector<uint8_t> small = ReadBytes(CorpusFile("vhlo_emit_version_api.1_1_0"));
  for (size_t size = 0; size < small.size(); ++size) {
    ExpectCleanOutcome(std::vector<uint8_t>(small.begin(), small.begin() + size),
                       StrCat("prefix ", size));
  }
  const std::vector<uint8_t> large = ReadBytes(CorpusFile("stablehlo_legalize_to_vhlo.1_20_0"));
  for (size_t size = 0; size < large.size(); size += 37) {
    ExpectCleanOutcome(std::vector<uint8_t>(large.begin(), large.begin() + size),
                       StrCat("prefix ", size));
  }
}

TEST(VhloReaderTest, RandomByteFlipsGiveCleanErrors) {
  KILN_REQUIRE_DIR(kArtifactDir);
  std::mt19937 random(7);
  for (const char* name : {"mlp_locations", "sharded_sdy", "dtypes", "composites"}) {
    const std::vector<uint8_t> original = ReadBytes(kArtifactDir / StrCat(name, ".mlir.bc"));
    for (int trial = 0; trial < 300; ++trial) {
      std::vector<uint8_t> bytes = original;
      const int flips = 1 + static_cast<int>(random() % 3);
      for (int i = 0; i < flips; ++i) {
        bytes[random() % bytes.size()] ^= static_cast<uint8_t>(1 + random() % 255);
      }
      ExpectCleanOutcome(bytes, StrCat(name, " trial ", trial));
    }
  }
}

// ---------------------------------------------------------------------------
// Reading time, printed for the record (not asserted: machines differ).

// The best of `repeats` timings of `read`, in milliseconds.
template <typename Read>
double BestMilliseconds(int repeats, const Read& read) {
  double best = 1e300;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    read();
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    best = std::min(best, took.count());
  }
  return best;
}

void ReportReadingTime(const std::string& name, const std::vector<uint8_t>& bytes, int repeats) {
  const double container = BestMilliseconds(repeats, [&] {
    ASSERT_TRUE(bytecode::ReadFile(bytes).ok());
  });
  const double total = BestMilliseconds(repeats, [&] {
    StatusOr<ir::Module> module = ReadPortableArtifact(bytes);
    ASSERT_TRUE(module.ok()) << module.status().ToString();
  });
  std::printf("[ timing   ] %s: %zu bytes, %.3f ms (container %.3f ms), %.1f MB/s\n",
              name.c_str(), bytes.size(), total, container, bytes.size() / total / 1e3);
}

TEST(VhloTimingTest, LargestCorpusFile) {
  KILN_REQUIRE_DIR(kCorpusDir);
  ReportReadingTime("stablehlo_legalize_to_vhlo.1_20_0",
                    ReadBytes(CorpusFile("stablehlo_legalize_to_vhlo.1_20_0")), 20);
}

// make_artifacts.py --large PATH writes a ~10 MB artifact (a transformer
// block with its weights as constants); KILN_VHLO_LARGE_ARTIFACT=PATH.
TEST(VhloTimingTest, LargeArtifactWhenAvailable) {
  const char* path = std::getenv("KILN_VHLO_LARGE_ARTIFACT");
  if (path == nullptr) GTEST_SKIP() << "set KILN_VHLO_LARGE_ARTIFACT (make_artifacts.py --large)";
  ReportReadingTime(fs::path(path).filename().string(), ReadBytes(path), 5);
}

// Reads every <name>.mlir.bc of `dir` and compares Kiln's module with the
// oracle beside it; returns how many were compared.
int CompareWithOracles(const fs::path& dir) {
  int compared = 0;
  for (const fs::path& path : FilesIn(dir, ".bc")) {
    const std::string name = path.stem().stem().string();
    const fs::path oracle = dir / (name + ".oracle.txt");
    if (!fs::exists(oracle)) continue;
    std::vector<uint8_t> bytes = ReadBytes(path);
    StatusOr<ir::Module> module = ReadPortableArtifact(bytes);
    EXPECT_TRUE(module.ok()) << name << ": " << module.status().ToString();
    if (!module.ok()) continue;
    const std::string dump = CanonicalDump(*module);
    const std::string expected = ReadText(oracle);
    EXPECT_TRUE(expected == dump) << name << ": " << FirstDifference(expected, dump);
    ++compared;
  }
  return compared;
}

TEST(VhloArtifactTest, JaxArtifactsMatchJaxlib) {
  KILN_REQUIRE_DIR(kArtifactDir);
  EXPECT_GE(CompareWithOracles(kArtifactDir), 9);
}

// More artifacts with oracles, e.g. every program of make_text_corpus.py:
// make_artifacts.py --text-programs DIR, then KILN_VHLO_EXTRA_DIR=DIR.
TEST(VhloArtifactTest, ExtraArtifactsMatchJaxlibWhenAvailable) {
  const char* dir = std::getenv("KILN_VHLO_EXTRA_DIR");
  if (dir == nullptr) GTEST_SKIP() << "set KILN_VHLO_EXTRA_DIR (make_artifacts.py --text-programs)";
  EXPECT_GT(CompareWithOracles(dir), 0);
}

// Writes canonical dumps of the corpus to $KILN_VHLO_DUMP_DIR and compares
// with $KILN_VHLO_ORACLE_DIR/<name>.oracle.txt (make_artifacts.py
// --oracle-corpus writes those), when the variables are set.
TEST(VhloOracleTest, CorpusMatchesJaxlibWhenAvailable) {
  KILN_REQUIRE_DIR(kCorpusDir);
  const char* dump_dir = std::getenv("KILN_VHLO_DUMP_DIR");
  const char* oracle_dir = std::getenv("KILN_VHLO_ORACLE_DIR");
  if (dump_dir == nullptr && oracle_dir == nullptr) {
    GTEST_SKIP() << "set KILN_VHLO_ORACLE_DIR (see tests/data/make_artifacts.py --oracle-corpus)";
  }
  int compared = 0;
  for (const fs::path& path : FilesIn(kCorpusDir, ".bc")) {
    std::vector<uint8_t> bytes = ReadBytes(path);
    StatusOr<ir::Module> module = ReadPortableArtifact(bytes);
    if (!module.ok()) continue;  // the reading tests report these
    const std::string dump = CanonicalDump(*module);
    const std::string name = path.stem().stem().string();
    if (dump_dir != nullptr) std::ofstream(fs::path(dump_dir) / (name + ".kiln.txt")) << dump;
    if (oracle_dir == nullptr) continue;
    const fs::path oracle = fs::path(oracle_dir) / (name + ".oracle.txt");
    if (!fs::exists(oracle)) continue;
    const std::string expected = ReadText(oracle);
    EXPECT_EQ(expected == dump, true) << path.filename() << ": " << FirstDifference(expected, dump);
    ++compared;
  }
  EXPECT_GT(compared + (oracle_dir == nullptr), 0);
}

}  // namespace
}  // namespace kiln::frontend::vhlo
