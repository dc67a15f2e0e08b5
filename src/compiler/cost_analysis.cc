#include "compiler/cost_analysis.h"

#include <vector>

#include "ir/attribute.h"
#include "ir/op_description.h"

namespace kiln::compiler {
namespace {

using ir::OpCode;

// Elements and bytes of a static tensor type; 0 for anything else.
double Elements(const ir::Type& type) {
  if (!type.Is(ir::TypeKind::kTensor) || !type.HasStaticShape()) return 0;
  return static_cast<double>(type.NumElements());
}

double Bytes(const ir::Type& type) {
  if (!type.Is(ir::TypeKind::kTensor) || !type.HasStaticShape() ||
      !type.element().Is(ir::TypeKind::kElement)) {
    return 0;
  }
  Shape shape{type.element().element_type(), type.dims()};
  return static_cast<double>(shape.ByteSize());
}

bool IsTranscendental(OpCode code) { return ir::DescribeOp(code).Has(ir::kTranscendental); }

bool IsArithmetic(OpCode code) { return ir::DescribeOp(code).Has(ir::kCheapArithmetic); }

// Size of `dims` of `type`'s shape, multiplied.
double Product(const ir::Type& type, const std::vector<int64_t>& dims) {
  double product = 1;
  if (!type.Is(ir::TypeKind::kTensor)) return 0;
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(type.dims().size())) return 0;
    product *= static_cast<double>(type.dims()[static_cast<size_t>(d)]);
  }
  return product;
}

double ContractionFlops(const ir::Operation& op) {
  if (op.operands().size() < 2 || op.num_results() < 1) return 0;
  const ir::Type& lhs = op.operand(0)->type();
  const double out = Elements(op.result(0)->type());
  if (op.code() == OpCode::kDot) {
    if (!lhs.Is(ir::TypeKind::kTensor) || lhs.dims().empty()) return 0;
    return 2 * out * static_cast<double>(lhs.dims().back());
  }
  ir::Attribute numbers = op.GetAttr("dot_dimension_numbers");
  auto contracting = ir::IntegersOf(numbers.Get("lhs_contracting_dimensions"));
  return 2 * out * Product(lhs, contracting.value_or(std::vector<int64_t>{}));
}

double ConvolutionFlops(const ir::Operation& op) {
  if (op.operands().size() < 2 || op.num_results() < 1) return 0;
  const ir::Type& kernel = op.operand(1)->type();
  ir::Attribute numbers = op.GetAttr("dimension_numbers");
  ir::Attribute feature = numbers ? numbers.Get("kernel_output_feature_dimension")
                                  : ir::Attribute();
  if (!feature.Is(ir::AttrKind::kInteger)) return 0;
  const double output_features = Product(kernel, {feature->int_value});
  if (output_features == 0) return 0;
  // Each output element reads one kernel slice: spatial taps x input features.
  return 2 * Elements(op.result(0)->type()) * Elements(kernel) / output_features;
}

void Count(const ir::Operation& op, CostAnalysis& cost) {
  const OpCode code = op.code();
  if (code == OpCode::kConstant || code == OpCode::kFuncReturn || code == OpCode::kReturn) return;
  for (const ir::Value* operand : op.operands()) cost.bytes_accessed += Bytes(operand->type());
  for (size_t r = 0; r < op.num_results(); ++r) {
    cost.bytes_accessed += Bytes(op.result(r)->type());
  }
  if (op.num_results() == 0) return;
  const double out = Elements(op.result(0)->type());
  if (IsTranscendental(code)) {
    cost.transcendentals += out;
  } else if (IsArithmetic(code)) {
    cost.flops += out;
  } else if (code == OpCode::kDot || code == OpCode::kDotGeneral) {
    cost.flops += ContractionFlops(op);
  } else if (code == OpCode::kConvolution) {
    cost.flops += ConvolutionFlops(op);
  } else if (code == OpCode::kReduce || code == OpCode::kReduceWindow) {
    for (const ir::Value* operand : op.operands()) cost.flops += Elements(operand->type()) / 2;
  }
}

}  // namespace

CostAnalysis AnalyzeCost(const ir::Module& module, const ir::Operation& entry) {
  CostAnalysis cost;
  // An explicit stack: nesting depth comes from the program. Calls are
  // followed into their callees; a budget bounds malformed recursive calls.
  std::vector<const ir::Operation*> stack;
  auto push_regions = [&stack](const ir::Operation& op) {
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const ir::Region& region = op.region(r);
      for (size_t b = 0; b < region.num_blocks(); ++b) {
        for (const auto& inner : region.block(b).operations()) stack.push_back(inner.get());
      }
    }
  };
  push_regions(entry);
  int64_t budget = 50'000'000;
  while (!stack.empty() && budget-- > 0) {
    const ir::Operation* op = stack.back();
    stack.pop_back();
    Count(*op, cost);
    push_regions(*op);
    if (op->code() == OpCode::kFuncCall) {
      ir::Attribute callee = op->GetAttr("callee");
      if (callee.Is(ir::AttrKind::kSymbolRef) && !callee->symbol_path.empty()) {
        if (const ir::Operation* function = module.LookupFunction(callee->symbol_path.back())) {
          push_regions(*function);
        }
      }
    }
  }
  return cost;
}

}  // namespace kiln::compiler
