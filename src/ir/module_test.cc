#include "ir/module.h"

#include <gtest/gtest.h>

namespace kiln::ir {
namespace {

Type F32Tensor(std::vector<int64_t> dims) {
  return Type::Tensor(Type::Element(ElementType::kF32), std::move(dims));
}

TEST(IrTest, BuildFunctionAndLookUpAttributes) {
  Module module;
  auto func = std::make_unique<Operation>("func.func", Location::FileLineCol("f.py", 3, 7));
  func->SetAttr("sym_name", Attribute::String("main"));
  func->SetAttr("function_type",
                Attribute::TypeAttr(Type::Function({F32Tensor({2})}, {F32Tensor({2})})));
  Block& body = func->AddRegion().AddBlock();
  Value* x = body.AddArgument(F32Tensor({2}));
  auto add = std::make_unique<Operation>("stablehlo.add");
  add->AddOperand(x);
  add->AddOperand(x);
  Value* sum = add->AddResult(F32Tensor({2}));
  body.Append(std::move(add));
  auto ret = std::make_unique<Operation>("func.return");
  ret->AddOperand(sum);
  body.Append(std::move(ret));
  module.body().Append(std::move(func));

  Operation* main = module.LookupFunction("main");
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(main->code(), OpCode::kFuncFunc);
  EXPECT_EQ(main->location().ToUserString(), "f.py:3:7");
  const Operation& first = *main->region(0).block(0).operations().front();
  EXPECT_EQ(first.code(), OpCode::kAdd);
  EXPECT_EQ(first.operand(0), main->region(0).block(0).argument(0));
  EXPECT_EQ(first.result(0)->type(), F32Tensor({2}));
  EXPECT_NE(first.result(0)->type(), F32Tensor({3}));
  EXPECT_EQ(LookupOpCode("stablehlo.not_an_op"), OpCode::kUnknown);
  EXPECT_EQ(OpCodeName(OpCode::kDotGeneral), "stablehlo.dot_general");
}

TEST(IrTest, AttributesCompareStructurally) {
  auto dict = Attribute::Dictionary({{"b", Attribute::Bool(true)},
                                     {"a", Attribute::DenseI64Array({1, 2})}});
  EXPECT_EQ(dict->fields.front().name, "a");
  EXPECT_EQ(dict.Get("a"), Attribute::DenseI64Array({1, 2}));
  EXPECT_FALSE(dict.Get("c"));
  EXPECT_NE(Attribute::Float(0.0, Type::Element(ElementType::kF32)),
            Attribute::Float(-0.0, Type::Element(ElementType::kF32)));
  Operation op("stablehlo.compare");
  op.SetAttr("comparison_direction", Attribute::Enum("comparison_direction", "LT"));
  op.SetAttr("compare_type", Attribute::Enum("comparison_type", "FLOAT"));
  EXPECT_EQ(op.attributes().front().name, "compare_type");
  EXPECT_TRUE(op.RemoveAttr("compare_type"));
  EXPECT_FALSE(op.GetAttr("compare_type"));
}

TEST(IrTest, DeepNestingFreesWithoutRecursion) {
  // 200k nested regions would overflow the stack if freed recursively.
  auto root = std::make_unique<Operation>("stablehlo.while");
  Operation* current = root.get();
  for (int depth = 0; depth < 200000; ++depth) {
    Block& block = current->AddRegion().AddBlock();
    current = block.Append(std::make_unique<Operation>("stablehlo.while"));
  }
  DestroyTree(std::move(root));
}

}  // namespace
}  // namespace kiln::ir
