// The op descriptions of src/ir/ops.def against the code that implements
// them: every op the IR knows is lowered unless its row says why not, and
// every attribute a lowering reads is declared (docs/adding-an-op.md).
#include <gtest/gtest.h>

#include <string>

#include "compiler/lowering.h"
#include "ir/module.h"
#include "ir/op_description.h"

namespace kiln::compiler {
namespace {

using ir::LoweringStatus;

TEST(OpDescriptionsTest, RowsParse) {
  EXPECT_TRUE(ir::OpDescriptionMistakes().empty()) << ir::OpDescriptionMistakes().front();
  for (const ir::OpDescription& description : ir::AllOpDescriptions()) {
    EXPECT_EQ(ir::LookupOpCode(description.name), description.code) << description.name;
    if (description.code != ir::OpCode::kUnknown) {
      EXPECT_EQ(&ir::DescribeOp(description.code), &description) << description.name;
    }
  }
}

// An op known to the IR has a lowering rule exactly when its row says
// kLowered: a new op cannot be forgotten by the compiler, and a row cannot
// claim a rule that does not exist.
TEST(OpDescriptionsTest, EveryKnownOpLowersOrSaysWhyNot) {
  for (size_t i = 1; i < ir::kNumOpCodes; ++i) {
    const auto code = static_cast<ir::OpCode>(i);
    const ir::OpDescription& description = ir::DescribeOp(code);
    ASSERT_EQ(description.code, code) << ir::OpCodeName(code) << " has no row in ops.def";
    const bool has_rule = FindLoweringRule(code) != nullptr;
    if (description.lowering == LoweringStatus::kLowered) {
      EXPECT_TRUE(has_rule) << description.name << " is kLowered but no lower_*.cc has its rule";
    } else {
      EXPECT_FALSE(has_rule) << description.name
                             << " has a lowering rule but its row does not say kLowered";
    }
  }
}

// Elementwise rows carry a kernel: they are all lowered.
TEST(OpDescriptionsTest, ElementwiseRowsAreLowered) {
  for (const ir::OpDescription& description : ir::AllOpDescriptions()) {
    if (!description.elementwise) continue;
    EXPECT_EQ(description.lowering, LoweringStatus::kLowered) << description.name;
    EXPECT_NE(FindLoweringRule(description.code), nullptr) << description.name;
  }
}

// Under an AttributeReadCheck, reading an attribute the op's row does not
// declare is noted (the compiler then fails with INTERNAL under
// KILN_CHECK_OP_DESCRIPTIONS); declared and dotted names are not.
TEST(OpDescriptionsTest, UndeclaredAttributeReadsAreNoted) {
  ir::Operation op("stablehlo.concatenate");
  ir::TakeUndeclaredAttributeReads();
  op.GetAttr("no_such_attribute");  // outside a check: not noted
  EXPECT_EQ(ir::TakeUndeclaredAttributeReads(), "");
  {
    ir::AttributeReadCheck check;
    op.GetAttr("dimension");
    op.GetAttr("mhlo.sharding");
    EXPECT_EQ(ir::TakeUndeclaredAttributeReads(), "");
    op.GetAttr("no_such_attribute");
  }
  EXPECT_EQ(ir::TakeUndeclaredAttributeReads(), "stablehlo.concatenate: no_such_attribute");
}

}  // namespace
}  // namespace kiln::compiler
