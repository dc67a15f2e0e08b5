// The verifier's walk (dominance, terminators, symbols, func.* ops, unknown
// ops), elementwise and shape ops, and its speed. Other op families are in
// verifier_ops_test.cc.
#include "ir/verifier.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

#include "ir/verifier_internal.h"
#include "ir/verifier_test_util.h"

namespace kiln::ir {
namespace {

using testing::DenseI64;
using testing::Dims;
using testing::Enum;
using testing::I64;
using testing::IrBuilder;
using testing::T;

Attribute Direction(std::string value) {
  return Enum("stablehlo.comparison_direction", std::move(value));
}

// ---------------------------------------------------------------------------
// Structure

TEST(VerifierTest, ValidFunctionPasses) {
  IrBuilder b;
  Value* x = b.Arg("2x3xf32");
  Value* y = b.Arg("2x3xf32");
  Value* sum = b.Add1("stablehlo.add", {x, y}, "2x3xf32");
  Value* zero = b.Zeros("f32");
  Value* wide = b.Add1("stablehlo.broadcast_in_dim", {zero}, "2x3xf32",
                       {{"broadcast_dimensions", Dims({})}});
  Value* max = b.Add1("stablehlo.maximum", {sum, wide}, "2x3xf32");
  EXPECT_VERIFY_OK(b.Verify({max}));
}

TEST(VerifierTest, ErrorNamesLocationOpConstraintExpectedAndFound) {
  IrBuilder b;
  Value* lhs = b.Arg("2x3xf32");
  Value* rhs = b.Arg("4x5xf32");
  Operation* dot = b.Add("stablehlo.dot_general", {lhs, rhs}, {"2x5xf32"},
                         {{"dot_dimension_numbers",
                           Attribute::Struct("stablehlo.dot",
                                             {{"lhs_contracting_dimensions", Dims({1})},
                                              {"rhs_contracting_dimensions", Dims({0})}})}});
  dot->set_location(Location::FileLineCol("model.py", 12, 4));
  Status status = b.Verify({dot->result(0)});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "model.py:12:4: stablehlo.dot_general (C10): lhs contracting dimension 1 has size 3 "
            "but rhs contracting dimension 0 has size 4");
}

TEST(VerifierTest, RejectsUnknownOps) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Value* y = b.Add1("foo.bar", {x}, "2xf32");
  Status status = b.Verify({y});
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented) << status.ToString();
  EXPECT_EQ(status.message(), "model.py:2:1: Kiln does not know the op 'foo.bar'");
}

TEST(VerifierTest, RejectsUseBeforeDefinition) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Operation* first = b.Add("stablehlo.negate", {x}, {"2xf32"});
  Value* second = b.Add1("stablehlo.negate", {x}, "2xf32");
  first->SetOperand(0, second);
  EXPECT_VERIFY_ERROR(b.Verify({second}),
                      "stablehlo.negate: operand #0 is used before its definition");
}

// A chain of negates whose ops sit in the block in `order` of allocation
// (blocks out of address order take the verifier's other dominance path);
// the op at position `misuse` uses a later op's result when >= 0.
Status NegateChain(const std::vector<int>& order, int misuse = -1) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  std::vector<std::unique_ptr<Operation>> allocated;
  for (size_t i = 0; i < order.size(); ++i) {
    allocated.push_back(std::make_unique<Operation>("stablehlo.negate"));
    allocated.back()->AddResult(T("2xf32"));
  }
  std::vector<Operation*> placed;
  for (int index : order) placed.push_back(allocated[static_cast<size_t>(index)].get());
  for (size_t p = 0; p < placed.size(); ++p) {
    placed[p]->AddOperand(p == 0 ? x : placed[p - 1]->result(0));
  }
  if (misuse >= 0) placed[static_cast<size_t>(misuse)]->SetOperand(0, placed.back()->result(0));
  Block& body = b.func()->region(0).block(0);
  for (int index : order) body.Append(std::move(allocated[static_cast<size_t>(index)]));
  return b.Verify({placed.back()->result(0)});
}

TEST(VerifierTest, DominanceHoldsWhateverTheAllocationOrder) {
  std::vector<int> in_order, two_runs, reversed;
  for (int i = 0; i < 100; ++i) {
    in_order.push_back(i);
    two_runs.push_back((i + 50) % 100);
    reversed.push_back(99 - i);
  }
  for (const auto& order : {in_order, two_runs, reversed}) {
    EXPECT_VERIFY_OK(NegateChain(order));
    EXPECT_VERIFY_ERROR(NegateChain(order, 30), "operand #0 is used before its definition");
    EXPECT_VERIFY_ERROR(NegateChain(order, 70), "operand #0 is used before its definition");
  }
}

TEST(VerifierTest, RejectsOwnResultAsOperand) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Operation* op = b.Add("stablehlo.add", {x, x}, {"2xf32"});
  op->SetOperand(1, op->result(0));
  EXPECT_VERIFY_ERROR(b.Verify({op->result(0)}), "operand #1 is a result of this op itself");
}

// A value defined inside one branch of an if is not visible in the other.
TEST(VerifierTest, RejectsValuesFromSiblingRegions) {
  IrBuilder b;
  Value* pred = b.Arg("i1");
  Value* x = b.Arg("f32");
  Operation* branch = b.Add("stablehlo.if", {pred}, {"f32"});
  b.Open(branch, {});
  Value* inner = b.Add1("stablehlo.negate", {x}, "f32");  // outer values are visible
  b.Close({inner});
  b.Open(branch, {});
  b.Close({inner});
  EXPECT_VERIFY_ERROR(b.Verify({branch->result(0)}),
                      "stablehlo.return: operand #0 is defined inside a region that does not "
                      "enclose this op");
}

TEST(VerifierTest, RejectsEnclosingOpResultInsideItsRegion) {
  IrBuilder b;
  Value* pred = b.Arg("i1");
  Operation* branch = b.Add("stablehlo.if", {pred}, {"i1"});
  b.Open(branch, {});
  b.Close({branch->result(0)});
  b.Open(branch, {});
  b.Close({pred});
  EXPECT_VERIFY_ERROR(b.Verify({branch->result(0)}),
                      "operand #0 is a result of the enclosing stablehlo.if");
}

TEST(VerifierTest, RejectsNullOperand) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Operation* op = b.Add("stablehlo.negate", {x}, {"2xf32"});
  op->SetOperand(0, nullptr);
  EXPECT_VERIFY_ERROR(b.Verify({op->result(0)}), "operand #0 is null");
}

TEST(VerifierTest, RejectsWrongCounts) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Value* y = b.Add1("stablehlo.add", {x}, "2xf32");
  EXPECT_VERIFY_ERROR(b.Verify({y}), "stablehlo.add: expected 2 operands, found 1");
}

TEST(VerifierTest, RejectsNonTensorOperands) {
  IrBuilder b;
  Value* t = b.Arg("token");
  Value* y = b.Add1("stablehlo.negate", {t}, "2xf32");
  EXPECT_VERIFY_ERROR(b.Verify({y}), "operand #0 must be a ranked tensor, found !stablehlo.token");
}

TEST(VerifierTest, RejectsNegativeDimensions) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Operation* op = b.Add("stablehlo.negate", {x}, std::vector<std::string_view>{});
  op->AddResult(Type::Tensor(Type::Element(ElementType::kF32), {-3}));
  EXPECT_VERIFY_ERROR(b.Verify({op->result(0)}),
                      "result #0 has type tensor<-3xf32> with a negative");
}

TEST(VerifierTest, FuncReturnMustMatchFunctionType) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Module& module = b.Finish({x});
  b.func()->SetAttr("function_type",
                    Attribute::TypeAttr(Type::Function({T("2xf32")}, {T("3xf32")})));
  EXPECT_VERIFY_ERROR(Verify(module),
                      "func.return: returned value #0 has type tensor<2xf32> but the "
                      "function_type of @main declares tensor<3xf32>");
}

TEST(VerifierTest, FuncEntryArgumentsMustMatchFunctionType) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Module& module = b.Finish({x});
  b.func()->SetAttr("function_type",
                    Attribute::TypeAttr(Type::Function({T("2xi32")}, {T("2xf32")})));
  EXPECT_VERIFY_ERROR(Verify(module),
                      "model.py:1:1: func.func @main: entry block argument #0 has type "
                      "tensor<2xf32> but function_type declares tensor<2xi32>");
}

// Adds `func.func @name` taking and returning one `type`, returning its argument.
void AddIdentityFunction(Module& module, const std::string& name, std::string_view type) {
  auto func = std::make_unique<Operation>("func.func");
  func->SetAttr("sym_name", Attribute::String(name));
  func->SetAttr("sym_visibility", Attribute::String("private"));
  func->SetAttr("function_type", Attribute::TypeAttr(Type::Function({T(type)}, {T(type)})));
  Block& body = func->AddRegion().AddBlock();
  auto ret = std::make_unique<Operation>("func.return");
  ret->AddOperand(body.AddArgument(T(type)));
  body.Append(std::move(ret));
  module.body().Append(std::move(func));
}

TEST(VerifierTest, FuncCallChecksCalleeAndTypes) {
  {
    IrBuilder b;
    Value* x = b.Arg("2xf32");
    Value* y = b.Add1("func.call", {x}, "2xf32", {{"callee", Attribute::SymbolRef({"helper"})}});
    AddIdentityFunction(b.module(), "helper", "2xf32");
    EXPECT_VERIFY_OK(b.Verify({y}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2xf32");
    Value* y = b.Add1("func.call", {x}, "2xf32", {{"callee", Attribute::SymbolRef({"missing"})}});
    EXPECT_VERIFY_ERROR(b.Verify({y}), "func.call: callee @missing is not defined in the module");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2xf32");
    Value* y = b.Add1("func.call", {x}, "2xf32", {{"callee", Attribute::SymbolRef({"helper"})}});
    AddIdentityFunction(b.module(), "helper", "3xf32");
    EXPECT_VERIFY_ERROR(b.Verify({y}), "operand types (tensor<2xf32>) do not match @helper's "
                                       "inputs (tensor<3xf32>)");
  }
}

TEST(VerifierTest, RejectsDuplicateSymbols) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  AddIdentityFunction(b.module(), "main", "2xf32");
  EXPECT_VERIFY_ERROR(b.Verify({x}), "redefinition of symbol @main");
}

TEST(VerifierTest, RegionsMustEndWithStablehloReturn) {
  IrBuilder b;
  Value* x = b.Arg("2x3xf32");
  Value* zero = b.Zeros("f32");
  Operation* reduce = b.Add("stablehlo.reduce", {x, zero}, {"2xf32"}, {{"dimensions", Dims({1})}});
  std::vector<Value*> args = b.Open(reduce, {"f32", "f32"});
  b.Close({b.Add1("stablehlo.add", {args[0], args[1]}, "f32")}, "func.return");
  EXPECT_VERIFY_ERROR(b.Verify({reduce->result(0)}),
                      "stablehlo.reduce: region #0 must end with stablehlo.return, found "
                      "func.return");
}

TEST(VerifierTest, TerminatorsMustComeLast) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  b.Add("func.return", {x}, std::vector<std::string_view>{});
  EXPECT_VERIFY_ERROR(b.Verify({x}), "func.return: must be the last op of its block");
}

TEST(VerifierTest, OnlyFunctionsAtModuleLevel) {
  IrBuilder b;
  Value* x = b.Arg("2xf32");
  Module& module = b.Finish({x});
  auto stray = std::make_unique<Operation>("stablehlo.constant");
  module.body().Append(std::move(stray));
  EXPECT_VERIFY_ERROR(Verify(module), "only func.func and sdy.mesh may appear at module level");
}

TEST(VerifierTest, SdyOpsSkipDeepChecks) {
  IrBuilder b;
  Value* x = b.Arg("8xf32");
  Value* y = b.Add1("sdy.sharding_constraint", {x}, "8xf32",
                    {{"sharding", Attribute::Opaque("#sdy.sharding<@mesh, [{\"x\"}]>")}});
  EXPECT_VERIFY_OK(b.Verify({y}));
}

// Nesting is walked with a worklist: 100k nested regions verify.
TEST(VerifierTest, DeepNestingVerifiesWithoutRecursion) {
  IrBuilder b;
  Value* index = b.Arg("i32");
  constexpr int kDepth = 100000;
  for (int depth = 0; depth < kDepth; ++depth) {
    Operation* branch = b.Add("stablehlo.case", {index}, std::vector<std::string_view>{});
    b.Open(branch, {});
  }
  for (int depth = 0; depth < kDepth; ++depth) b.Close({});
  EXPECT_VERIFY_OK(b.Verify({}));
}

// Every op Kiln knows has a rule, so none is verified by accident of omission.
TEST(VerifierTest, EveryKnownOpHasARule) {
  std::vector<bool> covered(kNumOpCodes);
  covered[0] = true;  // kUnknown is rejected by the walk
  for (auto family : {verify_internal::ElementwiseRules(), verify_internal::ShapeRules(),
                      verify_internal::IndexingRules(), verify_internal::LinalgRules(),
                      verify_internal::RegionOpRules(), verify_internal::CollectiveRules(),
                      verify_internal::MiscRules(), verify_internal::ChloRules()}) {
    for (const verify_internal::FamilyRule& rule : family) {
      EXPECT_FALSE(covered[static_cast<size_t>(rule.code)]) << OpCodeName(rule.code);
      covered[static_cast<size_t>(rule.code)] = true;
    }
  }
  // Elementwise ops get theirs from their rows of ops.def (verifier.cc).
  for (const OpDescription& description : AllOpDescriptions()) {
    if (!description.elementwise || description.code == OpCode::kUnknown) continue;
    EXPECT_FALSE(covered[static_cast<size_t>(description.code)]) << description.name;
    covered[static_cast<size_t>(description.code)] = true;
  }
  // func.*, builtin.*, sdy.*, check.* rules live in verifier.cc; verify one
  // op of each there.
  for (size_t code = 1; code < covered.size(); ++code) {
    std::string_view name = OpCodeName(static_cast<OpCode>(code));
    if (name.starts_with("stablehlo.") || name.starts_with("chlo.")) {
      EXPECT_TRUE(covered[code]) << name;
    }
  }
}

// ---------------------------------------------------------------------------
// Elementwise ops

TEST(VerifierElementwiseTest, BinaryOpsNeedOneType) {
  IrBuilder b;
  Value* x = b.Arg("2x3xf32");
  Value* y = b.Arg("2x3xf16");
  Value* sum = b.Add1("stablehlo.add", {x, y}, "2x3xf32");
  EXPECT_VERIFY_ERROR(b.Verify({sum}), "stablehlo.add (C1): lhs has type tensor<2x3xf32> but rhs "
                                       "has type tensor<2x3xf16>");
}

TEST(VerifierElementwiseTest, ResultMustMatchOperands) {
  IrBuilder b;
  Value* x = b.Arg("2x3xf32");
  Value* sum = b.Add1("stablehlo.multiply", {x, x}, "3x2xf32");
  EXPECT_VERIFY_ERROR(b.Verify({sum}), "stablehlo.multiply (C1): result must have the operand "
                                       "type tensor<2x3xf32>, found tensor<3x2xf32>");
}

TEST(VerifierElementwiseTest, DynamicDimensionsAreCompatible) {
  IrBuilder b;
  Value* x = b.Arg("?x3xf32");
  Value* y = b.Arg("2x?xf32");
  Value* sum = b.Add1("stablehlo.subtract", {x, y}, "2x3xf32");
  EXPECT_VERIFY_OK(b.Verify({sum}));
}

TEST(VerifierElementwiseTest, ElementClassesFollowTheSpec) {
  struct Case {
    const char* op;
    const char* type;
    bool ok;
  };
  const Case cases[] = {
      {"stablehlo.add", "4xi1", true},         {"stablehlo.add", "4xc64", true},
      {"stablehlo.sine", "4xi32", false},      {"stablehlo.sine", "4xc64", true},
      {"stablehlo.and", "4xf32", false},       {"stablehlo.xor", "4xi1", true},
      {"stablehlo.shift_left", "4xi1", false}, {"stablehlo.popcnt", "4xui8", true},
      {"stablehlo.floor", "4xc64", false},     {"stablehlo.negate", "4xi1", false},
      {"stablehlo.sign", "4xui32", false},     {"stablehlo.divide", "4xi8", true},
      {"stablehlo.remainder", "4xi1", false},  {"stablehlo.tanh", "4xbf16", true},
  };
  for (const Case& c : cases) {
    IrBuilder b;
    Value* x = b.Arg(c.type);
    const bool unary = std::string_view(c.op) == "stablehlo.sine" ||
                       std::string_view(c.op) == "stablehlo.popcnt" ||
                       std::string_view(c.op) == "stablehlo.floor" ||
                       std::string_view(c.op) == "stablehlo.negate" ||
                       std::string_view(c.op) == "stablehlo.sign" ||
                       std::string_view(c.op) == "stablehlo.tanh";
    std::vector<Value*> operands = unary ? std::vector<Value*>{x} : std::vector<Value*>{x, x};
    Status status = b.Verify({b.Add1(c.op, operands, c.type)});
    EXPECT_EQ(status.ok(), c.ok) << c.op << " on " << c.type << ": " << status.ToString();
    if (!c.ok) {
      EXPECT_NE(status.message().find("(I1):"), std::string::npos) << status.message();
    }
  }
}

TEST(VerifierElementwiseTest, AbsOfComplexIsReal) {
  IrBuilder ok;
  EXPECT_VERIFY_OK(ok.Verify({ok.Add1("stablehlo.abs", {ok.Arg("3xc64")}, "3xf32")}));
  IrBuilder bad;
  EXPECT_VERIFY_ERROR(bad.Verify({bad.Add1("stablehlo.abs", {bad.Arg("3xc64")}, "3xc64")}),
                      "stablehlo.abs (C2): result must have element type f32, found "
                      "tensor<3xcomplex<f32>>");
}

TEST(VerifierElementwiseTest, IsFiniteReturnsBooleans) {
  IrBuilder b;
  Value* y = b.Add1("stablehlo.is_finite", {b.Arg("3xf32")}, "3xf32");
  EXPECT_VERIFY_ERROR(b.Verify({y}), "result must be a tensor of boolean elements");
}

TEST(VerifierElementwiseTest, Compare) {
  {
    IrBuilder b;
    Value* x = b.Arg("3xi32");
    Value* y = b.Add1("stablehlo.compare", {x, x}, "3xi1",
                      {{"comparison_direction", Direction("LT")},
                       {"compare_type", Enum("stablehlo.comparison_type", "SIGNED")}});
    EXPECT_VERIFY_OK(b.Verify({y}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("3xf32");
    Value* y = b.Add1("stablehlo.compare", {x, x}, "3xi1",
                      {{"comparison_direction", Direction("LT")},
                       {"compare_type", Enum("stablehlo.comparison_type", "SIGNED")}});
    EXPECT_VERIFY_ERROR(b.Verify({y}), "stablehlo.compare (C3): compare_type for f32 operands "
                                       "must be FLOAT or TOTALORDER, found SIGNED");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("3xf32");
    Value* y = b.Add1("stablehlo.compare", {x, x}, "3xi1",
                      {{"comparison_direction", Direction("LESS")}});
    EXPECT_VERIFY_ERROR(b.Verify({y}), "(I3): comparison_direction must be EQ, NE, GE, GT, LE "
                                       "or LT, found LESS");
  }
  {
    IrBuilder b;
    Value* y = b.Add1("stablehlo.compare", {b.Arg("3xf32"), b.Arg("3xi32")}, "3xi1",
                      {{"comparison_direction", Direction("EQ")}});
    EXPECT_VERIFY_ERROR(b.Verify({y}), "stablehlo.compare (C1): lhs has element type f32 but "
                                       "rhs has element type i32");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("3xf32");
    Value* y = b.Add1("stablehlo.compare", {x, x}, "3xi1");
    EXPECT_VERIFY_ERROR(b.Verify({y}), "missing attribute 'comparison_direction'");
  }
}

TEST(VerifierElementwiseTest, SelectAndClamp) {
  {
    IrBuilder b;
    Value* pred = b.Arg("i1");
    Value* x = b.Arg("2x3xf32");
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.select", {pred, x, x}, "2x3xf32")}));
  }
  {
    IrBuilder b;
    Value* pred = b.Arg("3xi1");
    Value* x = b.Arg("2x3xf32");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.select", {pred, x, x}, "2x3xf32")}),
                        "stablehlo.select (C1): pred must be a rank-0 tensor or have the shape "
                        "of on_true [2, 3], found tensor<3xi1>");
  }
  {
    IrBuilder b;
    Value* low = b.Arg("f32");
    Value* x = b.Arg("4xf32");
    Value* high = b.Arg("4xf32");
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.clamp", {low, x, high}, "4xf32")}));
  }
  {
    IrBuilder b;
    Value* low = b.Arg("f16");
    Value* x = b.Arg("4xf32");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.clamp", {low, x, x}, "4xf32")}),
                        "stablehlo.clamp (C3): min has element type f16");
  }
}

TEST(VerifierElementwiseTest, ConvertAndBitcastConvert) {
  {
    IrBuilder b;
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.convert", {b.Arg("2x3xi1")}, "2x3xbf16")}));
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.convert", {b.Arg("2x3xf32")}, "6xf32")}),
                        "stablehlo.convert (C1): result must have the operand shape [2, 3]");
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.bitcast_convert", {b.Arg("2xui64")}, "2x2xf32")}));
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.bitcast_convert", {b.Arg("2x4xi8")}, "2xi32")}));
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(
        b.Verify({b.Add1("stablehlo.bitcast_convert", {b.Arg("2xf64")}, "2x2xf16")}),
        "stablehlo.bitcast_convert (C1): converting tensor<2xf64> to tensor<2x2xf16> needs a "
        "last dimension of 4, found 2");
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(
        b.Verify({b.Add1("stablehlo.bitcast_convert", {b.Arg("2xc64")}, "2xf64")}),
        "stablehlo.bitcast_convert (C2): cannot convert between real and complex types");
  }
}

TEST(VerifierElementwiseTest, ReducePrecisionAndComplex) {
  {
    IrBuilder b;
    Value* y = b.Add1("stablehlo.reduce_precision", {b.Arg("4xf32")}, "4xf32",
                      {{"exponent_bits", testing::I32(0)}, {"mantissa_bits", testing::I32(10)}});
    EXPECT_VERIFY_ERROR(b.Verify({y}), "stablehlo.reduce_precision (C2): exponent_bits must be "
                                       ">= 1, found 0");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("4xf32");
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.complex", {x, x}, "4xc64")}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("4xf32");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.complex", {x, x}, "4xc128")}),
                        "stablehlo.complex (C3): result must have element type complex<f32>");
  }
}

// ---------------------------------------------------------------------------
// Shape ops

TEST(VerifierShapeTest, BroadcastInDim) {
  auto verify = [](const char* operand, const char* result, std::vector<int64_t> dims) {
    IrBuilder b;
    return b.Verify({b.Add1("stablehlo.broadcast_in_dim", {b.Arg(operand)}, result,
                            {{"broadcast_dimensions", Dims(std::move(dims))}})});
  };
  EXPECT_VERIFY_OK(verify("3xf32", "2x3xf32", {1}));
  EXPECT_VERIFY_OK(verify("1x3xf32", "4x2x3xf32", {1, 2}));
  EXPECT_VERIFY_ERROR(verify("3xf32", "2x3xf32", {0, 1}),
                      "stablehlo.broadcast_in_dim (C2): broadcast_dimensions has 2 entries, "
                      "expected one per dimension of operand (1)");
  EXPECT_VERIFY_ERROR(verify("3xf32", "2x3xf32", {2}),
                      "(C3): broadcast_dimensions contains dimension 2, expected one in [0, 2)");
  EXPECT_VERIFY_ERROR(verify("3x3xf32", "3x3xf32", {1, 1}),
                      "(C4): broadcast_dimensions contains dimension 1 more than once");
  EXPECT_VERIFY_ERROR(verify("3xf32", "2x4xf32", {1}),
                      "(C5): operand dimension 0 has size 3, expected 1 or the size 4 of result "
                      "dimension 1");
  EXPECT_VERIFY_ERROR(verify("3xf32", "2x3xi32", {1}), "(C1): result must have element type f32");
}

TEST(VerifierShapeTest, ReshapeTransposeReverse) {
  {
    IrBuilder b;
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.reshape", {b.Arg("2x3xf32")}, "3x2xf32")}));
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.reshape", {b.Arg("2x3xf32")}, "7xf32")}),
                        "stablehlo.reshape (C2): operand tensor<2x3xf32> has 6 elements but "
                        "result tensor<7xf32> has 7");
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.transpose", {b.Arg("2x3x4xf32")}, "4x2x3xf32",
                                      {{"permutation", Dims({2, 0, 1})}})}));
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.transpose", {b.Arg("2x3x4xf32")}, "4x2x3xf32",
                                         {{"permutation", Dims({2, 0, 0})}})}),
                        "stablehlo.transpose (C2): permutation contains dimension 0 more than "
                        "once");
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.transpose", {b.Arg("2x3x4xf32")}, "2x3x4xf32",
                                         {{"permutation", Dims({2, 0, 1})}})}),
                        "stablehlo.transpose (C3): result must have shape [4, 2, 3], found "
                        "tensor<2x3x4xf32>");
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.reverse", {b.Arg("2x3xf32")}, "2x3xf32",
                                         {{"dimensions", Dims({2})}})}),
                        "stablehlo.reverse (C3): dimensions contains dimension 2");
  }
}

TEST(VerifierShapeTest, Slice) {
  auto verify = [](std::vector<int64_t> start, std::vector<int64_t> limit,
                   std::vector<int64_t> strides, const char* result) {
    IrBuilder b;
    return b.Verify({b.Add1("stablehlo.slice", {b.Arg("8x6xf32")}, result,
                            {{"start_indices", Dims(std::move(start))},
                             {"limit_indices", Dims(std::move(limit))},
                             {"strides", Dims(std::move(strides))}})});
  };
  EXPECT_VERIFY_OK(verify({1, 0}, {8, 6}, {3, 2}, "3x3xf32"));
  EXPECT_VERIFY_ERROR(verify({1, 0}, {9, 6}, {1, 1}, "8x6xf32"),
                      "stablehlo.slice (C3): dimension 0 slices [1, 9), expected 0 <= start <= "
                      "limit <= 8");
  EXPECT_VERIFY_ERROR(verify({0, 0}, {8, 6}, {0, 1}, "8x6xf32"),
                      "(C4): stride of dimension 0 must be > 0, found 0");
  EXPECT_VERIFY_ERROR(verify({0, 0}, {8, 6}, {3, 1}, "2x6xf32"),
                      "(C5): result must have shape [3, 6], found tensor<2x6xf32>");
  EXPECT_VERIFY_ERROR(verify({0}, {8}, {1}, "8x6xf32"),
                      "(C2): start_indices has 1 entries, expected one per dimension of operand");
}

TEST(VerifierShapeTest, DynamicSliceAndUpdate) {
  {
    IrBuilder b;
    Value* x = b.Arg("8x6xf32");
    Value* i = b.Arg("i32");
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.dynamic_slice", {x, i, i}, "2x6xf32",
                                      {{"slice_sizes", Dims({2, 6})}})}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("8x6xf32");
    Value* i = b.Arg("i32");
    Value* j = b.Arg("i64");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.dynamic_slice", {x, i, j}, "2x6xf32",
                                         {{"slice_sizes", Dims({2, 6})}})}),
                        "stablehlo.dynamic_slice (C3): start indices must have one type");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("8x6xf32");
    Value* i = b.Arg("i32");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.dynamic_slice", {x, i, i}, "2x7xf32",
                                         {{"slice_sizes", Dims({2, 7})}})}),
                        "(C4): slice size 7 of dimension 1 must be in [0, 6]");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("8x6xf32");
    Value* u = b.Arg("2x6xf32");
    Value* i = b.Arg("i32");
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.dynamic_update_slice", {x, u, i, i}, "8x6xf32")}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("8x6xf32");
    Value* u = b.Arg("2x7xf32");
    Value* i = b.Arg("i32");
    EXPECT_VERIFY_ERROR(
        b.Verify({b.Add1("stablehlo.dynamic_update_slice", {x, u, i, i}, "8x6xf32")}),
        "stablehlo.dynamic_update_slice (C6): update dimension 1 has size 7, larger than the "
        "operand's 6");
  }
}

TEST(VerifierShapeTest, Concatenate) {
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    Value* y = b.Arg("2x5xf32");
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.concatenate", {x, y}, "2x8xf32",
                                      {{"dimension", I64(1)}})}));
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    Value* y = b.Arg("4x5xf32");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.concatenate", {x, y}, "2x8xf32",
                                         {{"dimension", I64(1)}})}),
                        "stablehlo.concatenate (C2): input #1 tensor<4x5xf32> must match input "
                        "#0 tensor<2x3xf32> in every dimension but 1");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.concatenate", {x, x}, "2x6xf32",
                                         {{"dimension", I64(2)}})}),
                        "(C4): dimension 2 must be in [0, 2)");
  }
  {
    IrBuilder b;
    Value* x = b.Arg("2x3xf32");
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.concatenate", {x, x}, "2x7xf32",
                                         {{"dimension", I64(1)}})}),
                        "(C6): result must have shape [2, 6]");
  }
}

TEST(VerifierShapeTest, Pad) {
  auto verify = [](std::vector<int64_t> low, std::vector<int64_t> high,
                   std::vector<int64_t> interior, const char* result) {
    IrBuilder b;
    Value* x = b.Arg("3x4xf32");
    Value* zero = b.Zeros("f32");
    return b.Verify({b.Add1("stablehlo.pad", {x, zero}, result,
                            {{"edge_padding_low", Dims(std::move(low))},
                             {"edge_padding_high", Dims(std::move(high))},
                             {"interior_padding", Dims(std::move(interior))}})});
  };
  EXPECT_VERIFY_OK(verify({1, -1}, {0, 2}, {1, 0}, "6x5xf32"));
  EXPECT_VERIFY_ERROR(verify({1, 0}, {0, 0}, {-1, 0}, "3x4xf32"),
                      "stablehlo.pad (C3): interior_padding of dimension 0 must be >= 0");
  EXPECT_VERIFY_ERROR(verify({0, 0}, {0, 0}, {0, 0}, "3x5xf32"),
                      "stablehlo.pad (C4): result must have shape [3, 4]");
  EXPECT_VERIFY_ERROR(verify({0, -9}, {0, 0}, {0, 0}, "3x0xf32"),
                      "(C4): padding dimension 1 of size 4 by (-9, 0, 0) gives a negative");
}

TEST(VerifierShapeTest, IotaAndConstant) {
  {
    IrBuilder b;
    EXPECT_VERIFY_OK(b.Verify({b.Add1("stablehlo.iota", {}, "4x5xi32",
                                      {{"iota_dimension", I64(1)}})}));
  }
  {
    IrBuilder b;
    EXPECT_VERIFY_ERROR(b.Verify({b.Add1("stablehlo.iota", {}, "4x5xi32",
                                         {{"iota_dimension", I64(2)}})}),
                        "stablehlo.iota (C1): iota_dimension 2 must be in [0, 2) for output "
                        "tensor<4x5xi32>");
  }
  {
    IrBuilder b;
    Value* c = b.Add1("stablehlo.constant", {}, "2xf32",
                      {{"value",
                        Attribute::DenseElements(T("3xf32"), std::vector<uint8_t>(12), false)}});
    EXPECT_VERIFY_ERROR(b.Verify({c}), "stablehlo.constant (C1): value has type tensor<3xf32> "
                                       "but output has type tensor<2xf32>");
  }
  {
    IrBuilder b;
    Value* c = b.Add1("stablehlo.constant", {}, "2xf32",
                      {{"value",
                        Attribute::DenseElements(T("2xf32"), std::vector<uint8_t>(7), false)}});
    EXPECT_VERIFY_ERROR(b.Verify({c}), "holds 7 bytes, expected 8");
  }
}

// ---------------------------------------------------------------------------
// Speed

// A straight-line module of `count` ops: a chain of elementwise ops with a
// broadcast and a compare/select every few ops, like a fused MLP layer.
Module SyntheticModule(int count) {
  IrBuilder b;
  Value* x = b.Arg("16x32xf32");
  Value* zero = b.Zeros("f32");
  Value* current = x;
  // Types and attributes shared, as the bytecode reader's tables give them.
  const Attribute no_dims = Dims({});
  const Attribute greater = Direction("GT");
  const Attribute floats = Enum("stablehlo.comparison_type", "FLOAT");
  int ops = 1;
  while (ops < count) {
    Value* wide = b.Add1("stablehlo.broadcast_in_dim", {zero}, "16x32xf32",
                         {{"broadcast_dimensions", no_dims}});
    Value* sum = b.Add1("stablehlo.add", {current, x}, "16x32xf32");
    Value* product = b.Add1("stablehlo.multiply", {sum, sum}, "16x32xf32");
    Value* positive = b.Add1("stablehlo.compare", {product, wide}, "16x32xi1",
                             {{"comparison_direction", greater}, {"compare_type", floats}});
    current = b.Add1("stablehlo.select", {positive, product, wide}, "16x32xf32");
    ops += 5;
  }
  b.Finish({current});
  return std::move(b.module());
}

TEST(VerifierPerfTest, HundredThousandOpsVerifyInMilliseconds) {
  Module module = SyntheticModule(100000);
  EXPECT_VERIFY_OK(Verify(module));  // warm up
  double best = 1e9;
  for (int run = 0; run < 5; ++run) {
    auto start = std::chrono::steady_clock::now();
    Status status = Verify(module);
    auto elapsed = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() -
                                                             start);
    EXPECT_TRUE(status.ok()) << status.ToString();
    best = std::min(best, elapsed.count());
  }
  std::printf("[ verifier ] 100k ops verified in %.2f ms (best of 5)\n", best);
  // Generous: Debug and sanitizer builds run this too; the bound catches
  // a walk gone quadratic, the printed figure is the measurement.
  EXPECT_LT(best, 5000.0);
}

}  // namespace
}  // namespace kiln::ir
