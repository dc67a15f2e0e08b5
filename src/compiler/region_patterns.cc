#include "compiler/region_patterns.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "compiler/lowering.h"
#include "kernels/types.h"

namespace kiln::compiler {
namespace {

// The index of `value` among the arguments of `block`, or -1.
int ArgumentIndex(const ir::Value* value, const ir::Block& block) {
  if (value == nullptr || value->owner_block() != &block) return -1;
  return value->index();
}

// The element type of a 0-d tensor value, or nullopt.
std::optional<ElementType> ScalarElement(const ir::Value* value) {
  const ir::Type& type = value->type();
  if (!type.Is(ir::TypeKind::kTensor) || !type.dims().empty()) return std::nullopt;
  const ir::Type element = type.element();
  if (!element.Is(ir::TypeKind::kElement)) return std::nullopt;
  return element.element_type();
}

bool IsFloat(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 || type == ElementType::kF32 ||
         type == ElementType::kF64;
}

// The ops of `block` other than its terminator.
size_t BodyOps(const ir::Block& block) {
  return block.operations().empty() ? 0 : block.operations().size() - 1;
}

// The value of a scalar float constant, or nullopt.
std::optional<double> FloatConstant(const ir::Value* value) {
  const ir::Operation* op = value->defining_op();
  if (op == nullptr || op->code() != ir::OpCode::kConstant) return std::nullopt;
  ir::Attribute attribute = op->GetAttr("value");
  std::optional<ElementType> type = ScalarElement(value);
  if (!attribute.Is(ir::AttrKind::kDenseElements) || !type) return std::nullopt;
  const std::vector<uint8_t>& data = attribute->data;
  const size_t bytes = GetElementTypeInfo(*type).storage_bytes;
  if (data.size() < bytes) return std::nullopt;
  switch (*type) {
    case ElementType::kF16: {
      uint16_t bits;
      std::memcpy(&bits, data.data(), 2);
      return static_cast<double>(static_cast<float>(Eigen::numext::bit_cast<kernels::half>(bits)));
    }
    case ElementType::kBF16: {
      uint16_t bits;
      std::memcpy(&bits, data.data(), 2);
      return static_cast<double>(
          static_cast<float>(Eigen::numext::bit_cast<kernels::bfloat16>(bits)));
    }
    case ElementType::kF32: {
      float x;
      std::memcpy(&x, data.data(), 4);
      return static_cast<double>(x);
    }
    case ElementType::kF64: {
      double x;
      std::memcpy(&x, data.data(), 8);
      return x;
    }
    default: return std::nullopt;
  }
}

// A compare op: its direction, type and operands.
struct CompareOp {
  std::string_view direction;
  std::string_view type;
  const ir::Value* lhs;
  const ir::Value* rhs;
};

std::optional<CompareOp> AsCompare(const ir::Value* value) {
  const ir::Operation* op = value->defining_op();
  if (op == nullptr || op->code() != ir::OpCode::kCompare || op->operands().size() != 2) {
    return std::nullopt;
  }
  return CompareOp{EnumAttr(*op, "comparison_direction"), EnumAttr(*op, "compare_type"),
                   op->operand(0), op->operand(1)};
}

// The operands of `value`'s defining op when it has code `code` and two.
std::optional<std::pair<const ir::Value*, const ir::Value*>> AsBinary(const ir::Value* value,
                                                                      ir::OpCode code) {
  const ir::Operation* op = value->defining_op();
  if (op == nullptr || op->code() != code || op->operands().size() != 2) return std::nullopt;
  return std::pair<const ir::Value*, const ir::Value*>{op->operand(0), op->operand(1)};
}

struct SelectOp {
  const ir::Value* pred;
  const ir::Value* on_true;
  const ir::Value* on_false;
};

std::optional<SelectOp> AsSelect(const ir::Value* value) {
  const ir::Operation* op = value->defining_op();
  if (op == nullptr || op->code() != ir::OpCode::kSelect || op->operands().size() != 3) {
    return std::nullopt;
  }
  return SelectOp{op->operand(0), op->operand(1), op->operand(2)};
}

// A key expression of a comparator: an argument, or JAX's canonicalization
// of a float argument:
//   select(x != x, +NaN, select(x == 0, 0, x))
struct KeyTerm {
  int argument = -1;
  bool canonical = false;
  kernels::SortKeyPart part = kernels::SortKeyPart::kWhole;
};

// An argument, or the real or imaginary part of one.
std::optional<KeyTerm> MatchArgumentPart(const ir::Value* value, const ir::Block& block) {
  if (int index = ArgumentIndex(value, block); index >= 0) return KeyTerm{index, false};
  const ir::Operation* op = value->defining_op();
  if (op == nullptr || op->operands().size() != 1 ||
      (op->code() != ir::OpCode::kReal && op->code() != ir::OpCode::kImag)) {
    return std::nullopt;
  }
  const int index = ArgumentIndex(op->operand(0), block);
  std::optional<ElementType> type = ScalarElement(op->operand(0));
  if (index < 0 || !type || (*type != ElementType::kC64 && *type != ElementType::kC128)) {
    return std::nullopt;
  }
  return KeyTerm{
      index, false,
      op->code() == ir::OpCode::kReal ? kernels::SortKeyPart::kReal : kernels::SortKeyPart::kImag};
}

std::optional<KeyTerm> MatchKeyTerm(const ir::Value* value, const ir::Block& block) {
  if (std::optional<KeyTerm> plain = MatchArgumentPart(value, block)) return plain;
  std::optional<SelectOp> nan_select = AsSelect(value);
  if (!nan_select) return std::nullopt;
  std::optional<CompareOp> is_nan = AsCompare(nan_select->pred);
  std::optional<double> nan = FloatConstant(nan_select->on_true);
  if (!is_nan || is_nan->direction != "NE" || is_nan->lhs != is_nan->rhs || !nan ||
      !std::isnan(*nan) || std::signbit(*nan)) {
    return std::nullopt;
  }
  std::optional<KeyTerm> term = MatchArgumentPart(is_nan->lhs, block);
  std::optional<SelectOp> zero_select = AsSelect(nan_select->on_false);
  if (!term || !zero_select || zero_select->on_false != is_nan->lhs) return std::nullopt;
  std::optional<CompareOp> is_zero = AsCompare(zero_select->pred);
  std::optional<double> zero = FloatConstant(zero_select->on_true);
  if (!is_zero || is_zero->direction != "EQ" || !zero || *zero != 0.0) return std::nullopt;
  const ir::Value* other = is_zero->lhs == is_nan->lhs ? is_zero->rhs : is_zero->lhs;
  if ((is_zero->lhs != is_nan->lhs && is_zero->rhs != is_nan->lhs) || FloatConstant(other) != 0.0) {
    return std::nullopt;
  }
  term->canonical = true;
  return term;
}

// One strict comparison of one operand's pair: a sort key.
std::optional<kernels::SortKey> MatchKeyCompare(const CompareOp& compare, const ir::Block& block) {
  const bool less = compare.direction == "LT";
  if (!less && compare.direction != "GT") return std::nullopt;
  std::optional<KeyTerm> lhs = MatchKeyTerm(compare.lhs, block);
  std::optional<KeyTerm> rhs = MatchKeyTerm(compare.rhs, block);
  if (!lhs || !rhs || lhs->canonical != rhs->canonical || lhs->part != rhs->part ||
      lhs->argument / 2 != rhs->argument / 2 || lhs->argument == rhs->argument) {
    return std::nullopt;
  }
  std::optional<ElementType> type = ScalarElement(compare.lhs);
  if (!type || *type == ElementType::kC64 || *type == ElementType::kC128) return std::nullopt;
  kernels::SortKey key;
  key.operand = static_cast<size_t>(lhs->argument / 2);
  key.part = lhs->part;
  // "lhs < rhs" with lhs the first of the pair sorts ascending.
  key.descending = less != (lhs->argument % 2 == 0);
  if (IsFloat(*type)) {
    const bool total = compare.type == "TOTALORDER";
    if (lhs->canonical && !total) return std::nullopt;  // IEEE compare of canonical NaNs
    key.kind = !total ? kernels::SortKeyKind::kNative
                      : (lhs->canonical ? kernels::SortKeyKind::kCanonicalTotalOrder
                                        : kernels::SortKeyKind::kTotalOrder);
  } else if (lhs->canonical) {
    return std::nullopt;
  }
  return key;
}

// Whether `value` is `compare EQ` of the same two key expressions as `less`.
bool IsEqualOf(const ir::Value* value, const CompareOp& less) {
  std::optional<CompareOp> equal = AsCompare(value);
  if (!equal || equal->direction != "EQ" || equal->type != less.type) return false;
  return (equal->lhs == less.lhs && equal->rhs == less.rhs) ||
         (equal->lhs == less.rhs && equal->rhs == less.lhs);
}

// lt(k) | (eq(k) & rest), or lt(k) alone; appends keys outermost first.
bool MatchLexicographic(const ir::Value* value, const ir::Block& block,
                        std::vector<kernels::SortKey>& keys, int depth) {
  if (depth > 64) return false;
  if (std::optional<CompareOp> compare = AsCompare(value)) {
    std::optional<kernels::SortKey> key = MatchKeyCompare(*compare, block);
    if (!key) return false;
    keys.push_back(*key);
    return true;
  }
  auto either = AsBinary(value, ir::OpCode::kOr);
  if (!either) return false;
  for (int order = 0; order < 2; ++order) {
    const ir::Value* first = order == 0 ? either->first : either->second;
    const ir::Value* second = order == 0 ? either->second : either->first;
    std::optional<CompareOp> less = AsCompare(first);
    auto both = AsBinary(second, ir::OpCode::kAnd);
    if (!less || !both) continue;
    std::optional<kernels::SortKey> key = MatchKeyCompare(*less, block);
    if (!key) continue;
    const ir::Value* rest = nullptr;
    if (IsEqualOf(both->first, *less)) rest = both->second;
    else if (IsEqualOf(both->second, *less))
      rest = both->first;
    if (rest == nullptr) continue;
    const size_t size = keys.size();
    keys.push_back(*key);
    if (MatchLexicographic(rest, block, keys, depth + 1)) return true;
    keys.resize(size);
  }
  return false;
}

struct ReduceEntry {
  ir::OpCode code;
  kernels::ReduceOp op;
};
constexpr ReduceEntry kReduceOps[] = {
    {ir::OpCode::kAdd, kernels::ReduceOp::kAdd},
    {ir::OpCode::kMultiply, kernels::ReduceOp::kMultiply},
    {ir::OpCode::kMaximum, kernels::ReduceOp::kMaximum},
    {ir::OpCode::kMinimum, kernels::ReduceOp::kMinimum},
    {ir::OpCode::kAnd, kernels::ReduceOp::kAnd},
    {ir::OpCode::kOr, kernels::ReduceOp::kOr},
    {ir::OpCode::kXor, kernels::ReduceOp::kXor},
};

}  // namespace

std::optional<std::vector<kernels::ReduceOp>> MatchReductionBody(const ir::Region& body) {
  if (body.num_blocks() != 1) return std::nullopt;
  const ir::Block& block = body.block(0);
  const ir::Operation* terminator = block.back();
  if (terminator == nullptr) return std::nullopt;
  const size_t count = terminator->operands().size();
  if (count == 0 || block.num_arguments() != 2 * count || BodyOps(block) != count) {
    return std::nullopt;
  }
  std::vector<kernels::ReduceOp> ops;
  for (size_t i = 0; i < count; ++i) {
    const ir::Value* result = terminator->operand(i);
    const ir::Operation* op = result->defining_op();
    if (op == nullptr || op->operands().size() != 2 || op->parent_block() != &block) {
      return std::nullopt;
    }
    std::optional<kernels::ReduceOp> kind;
    for (const ReduceEntry& entry : kReduceOps) {
      if (entry.code == op->code()) kind = entry.op;
    }
    const int a = ArgumentIndex(op->operand(0), block);
    const int b = ArgumentIndex(op->operand(1), block);
    const auto first = static_cast<int>(i);
    const auto second = static_cast<int>(count + i);
    if (!kind || !((a == first && b == second) || (a == second && b == first))) {
      return std::nullopt;
    }
    if (result->type() != block.argument(i)->type() ||
        result->type() != block.argument(count + i)->type() || !ScalarElement(result)) {
      return std::nullopt;
    }
    ops.push_back(*kind);
  }
  return ops;
}

std::optional<kernels::CompareDirection> MatchSelectBody(const ir::Region& body) {
  if (body.num_blocks() != 1) return std::nullopt;
  const ir::Block& block = body.block(0);
  const ir::Operation* terminator = block.back();
  if (terminator == nullptr || terminator->operands().size() != 1 || BodyOps(block) != 1 ||
      block.num_arguments() != 2) {
    return std::nullopt;
  }
  std::optional<CompareOp> compare = AsCompare(terminator->operand(0));
  if (!compare || compare->type == "TOTALORDER") return std::nullopt;
  const int lhs = ArgumentIndex(compare->lhs, block);
  const int rhs = ArgumentIndex(compare->rhs, block);
  if (lhs < 0 || rhs < 0 || lhs == rhs) return std::nullopt;
  using kernels::CompareDirection;
  const bool swapped = lhs == 1;
  if (compare->direction == "GE") return swapped ? CompareDirection::kLe : CompareDirection::kGe;
  if (compare->direction == "GT") return swapped ? CompareDirection::kLt : CompareDirection::kGt;
  if (compare->direction == "LE") return swapped ? CompareDirection::kGe : CompareDirection::kLe;
  if (compare->direction == "LT") return swapped ? CompareDirection::kGt : CompareDirection::kLt;
  return std::nullopt;
}

std::optional<std::vector<kernels::SortKey>> MatchComparator(const ir::Region& comparator) {
  if (comparator.num_blocks() != 1) return std::nullopt;
  const ir::Block& block = comparator.block(0);
  const ir::Operation* terminator = block.back();
  if (terminator == nullptr || terminator->operands().size() != 1 ||
      block.num_arguments() % 2 != 0) {
    return std::nullopt;
  }
  std::vector<kernels::SortKey> keys;
  if (!MatchLexicographic(terminator->operand(0), block, keys, 0)) return std::nullopt;
  return keys;
}

}  // namespace kiln::compiler
