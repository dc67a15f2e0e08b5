// The StableHLO text printer on hand-built IR. Expected spellings were checked
// against MLIR's own printer (jaxlib); tests/data/text holds the bulk corpus,
// checked by src/frontend/text_parser_test.cc.
#include "ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "ir/float_format.h"
#include "ir/op_syntax.h"

namespace kiln::ir {
namespace {

Type Element(ElementType type) { return Type::Element(type); }
Type Tensor(ElementType type, std::vector<int64_t> dims) {
  return Type::Tensor(Element(type), std::move(dims));
}
Type F32(std::vector<int64_t> dims) { return Tensor(ElementType::kF32, std::move(dims)); }
Type I32(std::vector<int64_t> dims) { return Tensor(ElementType::kS32, std::move(dims)); }

template <typename T>
std::vector<uint8_t> Bytes(std::initializer_list<T> values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.begin(), bytes.size());
  return bytes;
}

std::string Float(ElementType type, double value) {
  FloatSemantics semantics = *GetFloatSemantics(type);
  return FormatFloat(semantics, DoubleToFloatBits(semantics, value));
}

TEST(PrintFloatTest, SpellsValuesAsMlirDoes) {
  using E = ElementType;
  EXPECT_EQ(Float(E::kF32, 1.0), "1.000000e+00");
  EXPECT_EQ(Float(E::kF32, 0.1), "1.000000e-01");
  EXPECT_EQ(Float(E::kF32, -0.0), "-0.000000e+00");
  EXPECT_EQ(Float(E::kF32, 1.4e-45), "1.401300e-45");
  EXPECT_EQ(Float(E::kF32, 3.4028234663852886e38), "3.40282347E+38");
  EXPECT_EQ(Float(E::kF32, 1.41421354), "1.41421354");
  EXPECT_EQ(Float(E::kF32, -0.99999994), "-0.99999994");
  EXPECT_EQ(Float(E::kF32, 3.19461833e-5), "3.19461833E-5");
  EXPECT_EQ(Float(E::kF32, 1.0 / 3.0), "0.333333343");
  // No decimal form round-trips with a '.': hexadecimal bits.
  EXPECT_EQ(Float(E::kF32, 123456789.0), "0x4CEB79A3");
  EXPECT_EQ(Float(E::kF32, 16777216.0), "0x4B800000");
  EXPECT_EQ(FormatFloat(*GetFloatSemantics(E::kF32), 0x7FC00000), "0x7FC00000");
  EXPECT_EQ(FormatFloat(*GetFloatSemantics(E::kF32), 0xFF800000), "0xFF800000");
  EXPECT_EQ(Float(E::kF64, 0.3), "3.000000e-01");
  EXPECT_EQ(Float(E::kF64, 123456789012345678.0), "1.2345678901234568E+17");
  EXPECT_EQ(Float(E::kF64, 4.9406564584124654e-324), "4.940660e-324");
  EXPECT_EQ(Float(E::kF16, 0.1), "9.997550e-02");
  EXPECT_EQ(Float(E::kF16, 65504.0), "6.550400e+04");
  EXPECT_EQ(FormatFloat(*GetFloatSemantics(E::kF16), 0x7E00), "0x7E00");
  EXPECT_EQ(Float(E::kBF16, 0.1), "1.000980e-01");
  EXPECT_EQ(Float(E::kBF16, 3.0e38), "3.004060e+38");
  EXPECT_EQ(Float(E::kF8E4M3FN, 0.1), "1.015630e-01");
  EXPECT_EQ(Float(E::kF8E4M3FN, 448.0), "4.480000e+02");
  EXPECT_EQ(FormatFloat(*GetFloatSemantics(E::kF8E4M3FN), 0x7F), "0x7F");
  EXPECT_EQ(Float(E::kF4E2M1FN, 6.0), "6.000000e+00");
}

TEST(PrintFloatTest, EverySmallFormatValueRoundTrips) {
  using E = ElementType;
  for (ElementType type : {E::kF16, E::kBF16, E::kF8E5M2, E::kF8E4M3FN, E::kF8E4M3B11FNUZ,
                           E::kF8E5M2FNUZ, E::kF8E4M3FNUZ, E::kF8E4M3, E::kF8E3M4, E::kF8E8M0FNU,
                           E::kF4E2M1FN, E::kF6E2M3FN, E::kF6E3M2FN}) {
    FloatSemantics semantics = *GetFloatSemantics(type);
    uint64_t count = uint64_t{1} << semantics.bit_width();
    for (uint64_t bits = 0; bits < count; ++bits) {
      double value = FloatBitsToDouble(semantics, bits);
      if (std::isnan(value)) continue;
      EXPECT_EQ(DoubleToFloatBits(semantics, value), bits)
          << ElementTypeSpelling(type) << " bits " << bits << " value " << value;
    }
  }
  FloatSemantics e4m3 = *GetFloatSemantics(E::kF8E4M3FN);
  EXPECT_EQ(DoubleToFloatBits(e4m3, 1e6), QuietNanBits(e4m3));  // no infinity: NaN
  FloatSemantics f4 = *GetFloatSemantics(E::kF4E2M1FN);
  EXPECT_EQ(DoubleToFloatBits(f4, -100.0), 0xFu);  // finite only: saturates
}

TEST(PrintTypeTest, SpellsBuiltinAndDialectTypes) {
  EXPECT_EQ(PrintType(F32({2, kDynamic})), "tensor<2x?xf32>");
  EXPECT_EQ(PrintType(F32({})), "tensor<f32>");
  EXPECT_EQ(PrintType(Type::Tensor(Element(ElementType::kF32), {kDynamic, 4}, {5, kDynamic})),
            "tensor<?x4xf32, #stablehlo.bounds<5, ?>>");
  EXPECT_EQ(PrintType(Type::UnrankedTensor(Element(ElementType::kBF16))), "tensor<*xbf16>");
  EXPECT_EQ(PrintType(Tensor(ElementType::kU8, {3})), "tensor<3xui8>");
  EXPECT_EQ(PrintType(Tensor(ElementType::kPred, {3})), "tensor<3xi1>");
  EXPECT_EQ(PrintType(Tensor(ElementType::kC64, {})), "tensor<complex<f32>>");
  EXPECT_EQ(PrintType(Type::Token()), "!stablehlo.token");
  EXPECT_EQ(PrintType(Type::Tuple({F32({}), Type::Tuple({})})), "tuple<tensor<f32>, tuple<>>");
  EXPECT_EQ(PrintType(Type::Function({F32({})}, {})), "(tensor<f32>) -> ()");
  EXPECT_EQ(PrintType(Type::Function({}, {F32({}), I32({})})), "() -> (tensor<f32>, tensor<i32>)");
  QuantizedParams per_tensor;
  per_tensor.storage_min = -128;
  per_tensor.storage_max = 127;
  per_tensor.scales = {0.1};
  per_tensor.zero_points = {-128};
  EXPECT_EQ(PrintType(Type::Tensor(QuantizedType(per_tensor), {2})),
            "tensor<2x!quant.uniform<i8:f32, 1.000000e-01:-128>>");
  QuantizedParams per_axis = per_tensor;
  per_axis.storage_min = -127;
  per_axis.quantized_dimension = 0;
  per_axis.scales = {0.1, 0.5};
  per_axis.zero_points = {-30, 0};
  EXPECT_EQ(PrintType(QuantizedType(per_axis)),
            "!quant.uniform<i8<-127:127>:f32:0, {1.000000e-01:-30,5.000000e-01}>");
  EXPECT_EQ(PrintType(Type::Opaque("!sdy.future<tensor<f32>>")), "!sdy.future<tensor<f32>>");
}

TEST(PrintAttributeTest, SpellsDenseLiterals) {
  auto dense = [](Type type, std::vector<uint8_t> data, bool splat = false) {
    return PrintAttribute(Attribute::DenseElements(std::move(type), std::move(data), splat));
  };
  EXPECT_EQ(dense(F32({}), Bytes<float>({1.0f})), "dense<1.000000e+00> : tensor<f32>");
  EXPECT_EQ(
      dense(F32({2, 2}), Bytes<float>({1, 2, 3, 4})),
      "dense<[[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32>");
  EXPECT_EQ(dense(I32({3}), Bytes<int32_t>({7}), true), "dense<7> : tensor<3xi32>");
  // All elements equal: MLIR keeps (and prints) a splat.
  EXPECT_EQ(dense(I32({3}), Bytes<int32_t>({7, 7, 7})), "dense<7> : tensor<3xi32>");
  EXPECT_EQ(dense(Tensor(ElementType::kPred, {2}), {1, 0}), "dense<[true, false]> : tensor<2xi1>");
  EXPECT_EQ(dense(Tensor(ElementType::kS4, {3}), {0x0F, 0x08, 0x07}),
            "dense<[-1, -8, 7]> : tensor<3xi4>");
  EXPECT_EQ(dense(Tensor(ElementType::kU8, {2}), {255, 0}), "dense<[255, 0]> : tensor<2xui8>");
  EXPECT_EQ(dense(Tensor(ElementType::kC64, {2}), Bytes<float>({1, 2, 0.5f, -1.5f})),
            "dense<[(1.000000e+00,2.000000e+00), (5.000000e-01,-1.500000e+00)]> : "
            "tensor<2xcomplex<f32>>");
  EXPECT_EQ(dense(F32({0, 3}), {}), "dense<> : tensor<0x3xf32>");
  EXPECT_EQ(dense(F32({1, 0}), {}), "dense<> : tensor<1x0xf32>");
  // More than 100 elements: hexadecimal bytes.
  std::vector<uint8_t> bytes(101, 0);
  bytes[100] = 1;
  EXPECT_EQ(dense(Tensor(ElementType::kPred, {101}), bytes),
            "dense<\"0x" + std::string(200, '0') + "01\"> : tensor<101xi1>");
}

TEST(PrintAttributeTest, SpellsBuiltinAndStableHloAttributes) {
  Type i64 = Element(ElementType::kS64);
  EXPECT_EQ(PrintAttribute(Attribute::Integer(3, i64)), "3 : i64");
  EXPECT_EQ(PrintAttribute(Attribute::Integer(-1, Element(ElementType::kU8))),
            "18446744073709551615 : ui8");
  EXPECT_EQ(PrintAttribute(Attribute::Float(1e-3, Element(ElementType::kF32))),
            "1.000000e-03 : f32");
  EXPECT_EQ(PrintAttribute(Attribute::Float(1.5, Element(ElementType::kF64))),
            "1.500000e+00 : f64");
  EXPECT_EQ(PrintAttribute(Attribute::Array({Attribute::Integer(1, i64), Attribute::String("s"),
                                             Attribute::Float(2.5, Element(ElementType::kF32))})),
            "[1, \"s\", 2.500000e+00 : f32]");
  EXPECT_EQ(PrintAttribute(Attribute::String("q\"uo\\te\n\x01")), "\"q\\22uo\\\\te\\0A\\01\"");
  EXPECT_EQ(PrintAttribute(
                Attribute::Dictionary({{"z", Attribute::Integer(1, Element(ElementType::kS32))},
                                       {"a", Attribute::Unit()},
                                       {"b c", Attribute::Bool(true)}})),
            "{a, \"b c\" = true, z = 1 : i32}");
  EXPECT_EQ(PrintAttribute(Attribute::SymbolRef({"a", "b c"})), "@a::@\"b c\"");
  EXPECT_EQ(PrintAttribute(Attribute::DenseI64Array({})), "array<i64>");
  EXPECT_EQ(PrintAttribute(Attribute::DenseI64Array({1, -2})), "array<i64: 1, -2>");
  EXPECT_EQ(PrintAttribute(Attribute::DenseBoolArray({true, false})), "array<i1: true, false>");
  EXPECT_EQ(PrintAttribute(Attribute::Enum("stablehlo.comparison_direction", "LT")),
            "#stablehlo<comparison_direction LT>");
  EXPECT_EQ(PrintAttribute(Attribute::Enum("stablehlo.result_accuracy_mode", "HIGHEST")),
            "#stablehlo.result_accuracy_mode<HIGHEST>");
  EXPECT_EQ(
      PrintAttribute(Attribute::Struct("stablehlo.gather",
                                       {{"collapsed_slice_dims", Attribute::DenseI64Array({0})},
                                        {"start_index_map", Attribute::DenseI64Array({0})},
                                        {"index_vector_dim", Attribute::Integer(1, i64)}})),
      "#stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>");
  EXPECT_EQ(PrintAttribute(Attribute::Struct("stablehlo.dot", {{"lhs_contracting_dimensions",
                                                                Attribute::DenseI64Array({1})}})),
            "#stablehlo.dot<lhs_contracting_dimensions = [1]>");
  Attribute conv = Attribute::Struct(
      "stablehlo.conv", {{"input_batch_dimension", Attribute::Integer(0, i64)},
                         {"input_feature_dimension", Attribute::Integer(3, i64)},
                         {"input_spatial_dimensions", Attribute::DenseI64Array({1, 2})},
                         {"kernel_input_feature_dimension", Attribute::Integer(2, i64)},
                         {"kernel_output_feature_dimension", Attribute::Integer(3, i64)},
                         {"kernel_spatial_dimensions", Attribute::DenseI64Array({0, 1})},
                         {"output_batch_dimension", Attribute::Integer(0, i64)},
                         {"output_feature_dimension", Attribute::Integer(3, i64)},
                         {"output_spatial_dimensions", Attribute::DenseI64Array({1, 2})}});
  EXPECT_EQ(PrintAttribute(conv), "#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>");
  EXPECT_EQ(PrintAttribute(Attribute::Opaque("#sdy.sharding<@mesh, [{\"x\"}]>")),
            "#sdy.sharding<@mesh, [{\"x\"}]>");
  EXPECT_EQ(PrintLocation(Location::Name("f", Location::CallSite(Location::FileLineCol("a.py", 1, 2,
                                                                                       1, 9),
                                                                 Location::Unknown()))),
            "loc(\"f\"(callsite(\"a.py\":1:2 to :9 at unknown)))");
}

// The mesh structs the VHLO reader builds print in StableHLO's custom syntax
// (as jaxlib prints a deserialized all_reduce with an inline mesh).
TEST(PrintAttributeTest, SpellsMeshAttributesAsUpstream) {
  Type i64 = Element(ElementType::kS64);
  auto mesh_axis = [&](const char* name, int64_t size) {
    return Attribute::Struct("stablehlo.mesh_axis", {{"name", Attribute::String(name)},
                                                     {"size", Attribute::Integer(size, i64)}});
  };
  Attribute sub_axis = Attribute::Struct("stablehlo.sub_axis_info",
                                         {{"pre_size", Attribute::Integer(2, i64)},
                                          {"size", Attribute::Integer(4, i64)}});
  Attribute mesh = Attribute::Struct(
      "stablehlo.mesh", {{"axes", Attribute::Array({mesh_axis("x", 8), mesh_axis("y", 2)})}});
  Attribute ordered = Attribute::Struct(
      "stablehlo.mesh", {{"axes", Attribute::Array({mesh_axis("x", 2)})},
                         {"device_ids", Attribute::DenseElements(Tensor(ElementType::kS64, {2}),
                                                                 Bytes<int64_t>({1, 0}), false)}});
  Attribute axis_ref = Attribute::Struct("stablehlo.axis_ref", {{"name", Attribute::String("x")},
                                                                {"sub_axis_info", sub_axis}});
  EXPECT_EQ(PrintAttribute(mesh),
            "#stablehlo.mesh<axes=[<name = \"x\", size = 8>, <name = \"y\", size = 2>]>");
  EXPECT_EQ(PrintAttribute(ordered),
            "#stablehlo.mesh<axes=[<name = \"x\", size = 2>], device_ids=dense<[1, 0]> : "
            "tensor<2xi64>>");
  EXPECT_EQ(PrintAttribute(Attribute::Struct("stablehlo.mesh", {{"axes", Attribute::Array({})}})),
            "#stablehlo.mesh<axes=[]>");
  EXPECT_EQ(PrintAttribute(mesh_axis("x", 8)), "#stablehlo.mesh_axis<name = \"x\", size = 8>");
  EXPECT_EQ(PrintAttribute(sub_axis), "#stablehlo<sub_axis_info(2)4>");
  EXPECT_EQ(PrintAttribute(axis_ref), "#stablehlo.axis_ref<name = \"x\", sub_axis_info = (2)4>");
  Attribute groups = Attribute::Struct("stablehlo.replica_group_mesh_axes",
                                       {{"mesh", mesh}, {"axes", Attribute::Array({axis_ref})}});
  EXPECT_EQ(PrintAttribute(groups),
            "#stablehlo.replica_group_mesh_axes<mesh = #stablehlo.mesh<axes=[<name = \"x\", "
            "size = 8>, <name = \"y\", size = 2>]>, axes = [#stablehlo.axis_ref<name = \"x\", "
            "sub_axis_info = (2)4>]>");
  // Malformed ones print generically rather than lose a field.
  EXPECT_EQ(PrintAttribute(Attribute::Struct("stablehlo.mesh_axis",
                                             {{"name", Attribute::Integer(1, i64)}})),
            "#stablehlo.mesh_axis<name = 1 : i64>");
}

// A function `main` with an add, constants and a while loop, built by hand.
Module BuildLoop() {
  Module module;
  module.op().SetAttr("sym_name", Attribute::String("m"));
  auto func = std::make_unique<Operation>("func.func");
  func->SetAttr("sym_name", Attribute::String("main"));
  func->SetAttr("sym_visibility", Attribute::String("public"));
  func->SetAttr("function_type",
                Attribute::TypeAttr(Type::Function({F32({2}), I32({})}, {F32({2})})));
  func->SetAttr("res_attrs", Attribute::Array({Attribute::Dictionary({{"jax.result_info",
                                                                       Attribute::String("r")}})}));
  Block& body = func->AddRegion().AddBlock();
  Value* x = body.AddArgument(F32({2}));
  Value* n = body.AddArgument(I32({}));
  auto constant = [&](Type type, std::vector<uint8_t> bytes) {
    auto op = std::make_unique<Operation>("stablehlo.constant");
    op->SetAttr("value", Attribute::DenseElements(type, std::move(bytes), false));
    Value* result = op->AddResult(type);
    body.Append(std::move(op));
    return result;
  };
  Value* cst = constant(F32({2}), Bytes<float>({1, 2}));
  Value* zero = constant(I32({}), Bytes<int32_t>({0}));
  auto add = std::make_unique<Operation>("stablehlo.add");
  add->AddOperand(x);
  add->AddOperand(cst);
  Value* sum = add->AddResult(F32({2}));
  body.Append(std::move(add));
  auto loop = std::make_unique<Operation>("stablehlo.while");
  loop->AddOperand(n);
  loop->AddOperand(sum);
  Block& cond = loop->AddRegion().AddBlock();
  Block& step = loop->AddRegion().AddBlock();
  for (Block* block : {&cond, &step}) {
    block->AddArgument(I32({}));
    block->AddArgument(F32({2}));
  }
  auto compare = std::make_unique<Operation>("stablehlo.compare");
  compare->SetAttr("comparison_direction", Attribute::Enum("stablehlo.comparison_direction", "LT"));
  compare->SetAttr("compare_type", Attribute::Enum("stablehlo.comparison_type", "SIGNED"));
  compare->AddOperand(cond.argument(0));
  compare->AddOperand(zero);
  Value* flag = compare->AddResult(Tensor(ElementType::kPred, {}));
  cond.Append(std::move(compare));
  auto cond_return = std::make_unique<Operation>("stablehlo.return");
  cond_return->AddOperand(flag);
  cond.Append(std::move(cond_return));
  auto step_return = std::make_unique<Operation>("stablehlo.return");
  step_return->AddOperand(step.argument(0));
  step_return->AddOperand(step.argument(1));
  step.Append(std::move(step_return));
  loop->AddResult(I32({}));
  Value* final_value = loop->AddResult(F32({2}));
  body.Append(std::move(loop));
  auto ret = std::make_unique<Operation>("func.return");
  ret->AddOperand(final_value);
  body.Append(std::move(ret));
  module.body().Append(std::move(func));
  return module;
}

TEST(PrintModuleTest, PrettyFormMatchesUpstream) {
  EXPECT_EQ(PrintModule(BuildLoop()),
            R"(module @m {
  func.func public @main(%arg0: tensor<2xf32>, %arg1: tensor<i32>) -> (tensor<2xf32> {jax.result_info = "r"}) {
    %cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.add %arg0, %cst : tensor<2xf32>
    %1:2 = stablehlo.while(%iterArg = %arg1, %iterArg_0 = %0) : tensor<i32>, tensor<2xf32>
    cond {
      %2 = stablehlo.compare LT, %iterArg, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    } do {
      stablehlo.return %iterArg, %iterArg_0 : tensor<i32>, tensor<2xf32>
    }
    return %1#1 : tensor<2xf32>
  }
}
)");
}

TEST(PrintModuleTest, GenericFormNumbersValuesUniquely) {
  PrintOptions options;
  options.generic = true;
  EXPECT_EQ(PrintModule(BuildLoop(), options),
            R"("builtin.module"() <{sym_name = "m"}> ({
  "func.func"() <{function_type = (tensor<2xf32>, tensor<i32>) -> tensor<2xf32>, res_attrs = [{jax.result_info = "r"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<2xf32>, %arg1: tensor<i32>):
    %0 = "stablehlo.constant"() <{value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}> : () -> tensor<2xf32>
    %1 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %2 = "stablehlo.add"(%arg0, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    %3:2 = "stablehlo.while"(%arg1, %2) ({
    ^bb0(%arg4: tensor<i32>, %arg5: tensor<2xf32>):
      %4 = "stablehlo.compare"(%arg4, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%4) : (tensor<i1>) -> ()
    }, {
    ^bb0(%arg2: tensor<i32>, %arg3: tensor<2xf32>):
      "stablehlo.return"(%arg2, %arg3) : (tensor<i32>, tensor<2xf32>) -> ()
    }) : (tensor<i32>, tensor<2xf32>) -> (tensor<i32>, tensor<2xf32>)
    "func.return"(%3#1) : (tensor<2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
)");
}

TEST(PrintModuleTest, UnknownOpsAndMalformedOpsPrintGenerically) {
  Module module;
  auto unknown = std::make_unique<Operation>("mydialect.frob");
  unknown->SetAttr("level", Attribute::Integer(2, Element(ElementType::kS32)));
  unknown->AddResult(F32({}));
  unknown->AddResult(F32({}));
  module.body().Append(std::move(unknown));
  // A compare without its direction cannot use the pretty form.
  auto compare = std::make_unique<Operation>("stablehlo.compare");
  compare->AddResult(Tensor(ElementType::kPred, {}));
  compare->SetAttr("mhlo.note", Attribute::String("x"));
  module.body().Append(std::move(compare));
  EXPECT_EQ(PrintModule(module),
            "module {\n"
            "  %0:2 = \"mydialect.frob\"() {level = 2 : i32} : () -> (tensor<f32>, tensor<f32>)\n"
            "  %1 = \"stablehlo.compare\"() {mhlo.note = \"x\"} : () -> tensor<i1>\n"
            "}\n");
}

TEST(PrintModuleTest, LocationsPrintAsAliasesAfterTheModule) {
  Module module(std::make_unique<Operation>("builtin.module", Location::Unknown()));
  module.op().AddRegion().AddBlock();
  auto op = std::make_unique<Operation>(
      "stablehlo.create_token", Location::Name("jit(f)/x", Location::FileLineCol("f.py", 3, 7)));
  op->AddResult(Type::Token());
  module.body().Append(std::move(op));
  PrintOptions options;
  options.locations = true;
  EXPECT_EQ(PrintModule(module, options),
            "module {\n"
            "  %0 = stablehlo.create_token : !stablehlo.token loc(#loc1)\n"
            "} loc(#loc2)\n"
            "#loc = loc(\"f.py\":3:7)\n"
            "#loc1 = loc(\"jit(f)/x\"(#loc))\n"
            "#loc2 = loc(unknown)\n");
}

TEST(PrintModuleTest, DeepNestingPrintsWithoutRecursion) {
  // Region depth from input must not become native stack depth.
  Module module;
  Operation* current = module.body().Append(std::make_unique<Operation>("test.nest"));
  constexpr int kDepth = 2000;
  for (int depth = 0; depth < kDepth; ++depth) {
    current = current->AddRegion().AddBlock().Append(std::make_unique<Operation>("test.nest"));
  }
  std::string text = PrintModule(module);
  // Appended rather than `std::string(n, ' ') + "..."`, which GCC 12 at -O2
  // flags with a false -Warray-bounds when gtest's headers are precompiled.
  std::string innermost(2 * (kDepth + 1), ' ');
  innermost += "\"test.nest\"() : () -> ()";
  EXPECT_NE(text.find(innermost), std::string::npos);
}

// The StableHLO interpreter's layout of a tensor (`interpreter.print` and
// results under `kiln run --interpreter-format`), as upstream's
// tests/interpret/printing.mlir expects it.
TEST(PrintInterpreterTensorTest, LaysOutTensorsAsTheInterpreter) {
  EXPECT_EQ(PrintInterpreterTensor(Tensor(ElementType::kU8, {}), std::vector<uint8_t>{1}),
            "tensor<ui8> {1}");
  EXPECT_EQ(PrintInterpreterTensor(Tensor(ElementType::kS8, {4}),
                                   std::vector<uint8_t>{1, 2, 0xFD, 0xFC}),
            "tensor<4xi8> {\n  [1, 2, -3, -4]\n}");
  EXPECT_EQ(PrintInterpreterTensor(Tensor(ElementType::kPred, {2}), std::vector<uint8_t>{1, 0}),
            "tensor<2xi1> {\n  [true, false]\n}");
  EXPECT_EQ(PrintInterpreterTensor(Tensor(ElementType::kS8, {2, 2}),
                                   std::vector<uint8_t>{1, 2, 3, 4}),
            "tensor<2x2xi8> {\n  [\n    [1, 2],\n    [3, 4]\n  ]\n}");
  EXPECT_EQ(PrintInterpreterTensor(Tensor(ElementType::kS8, {0, 2}), {}),
            "tensor<0x2xi8> {\n  []\n}");
  EXPECT_EQ(PrintInterpreterTensor(Tensor(ElementType::kS8, {2, 0}), {}),
            "tensor<2x0xi8> {\n  [\n    [],\n    []\n  ]\n}");
  EXPECT_EQ(PrintInterpreterTensor(Tensor(ElementType::kC64, {2}), Bytes<float>({3.14f, 1, 0, -2})),
            "tensor<2xcomplex<f32>> {\n  [[3.140000e+00, 1.000000e+00], [0.000000e+00, "
            "-2.000000e+00]]\n}");
}

}  // namespace
}  // namespace kiln::ir
