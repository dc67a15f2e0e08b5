#include "compiler/loop_program.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <span>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "compiler/elementwise_ops.h"
#include "compiler/indexing.h"
#include "compiler/lowering.h"
#include "kernels/copy.h"

namespace kiln::compiler {
namespace {

using Code = LoopProgram::Code;
using ScalarOp = LoopProgram::ScalarOp;
using ScalarType = LoopProgram::ScalarType;

// The element types a loop program holds: those the elementwise kernels
// compute in, but sub-byte integers (whose kernels take another form; pred
// is one byte).
bool Supported(ElementType type) {
  return ElementwiseKernelType(type) &&
         (type == ElementType::kPred || GetElementTypeInfo(type).bit_width >= 8);
}

std::optional<ScalarType> ScalarTypeOf(ElementType type) {
  switch (type) {
    case ElementType::kPred: return ScalarType::kPred;
    case ElementType::kS32: return ScalarType::kS32;
    case ElementType::kS64: return ScalarType::kS64;
    case ElementType::kU32: return ScalarType::kU32;
    case ElementType::kU64: return ScalarType::kU64;
    case ElementType::kF32: return ScalarType::kF32;
    case ElementType::kF64: return ScalarType::kF64;
    default: return std::nullopt;
  }
}

bool IsFloat(ScalarType type) { return type == ScalarType::kF32 || type == ScalarType::kF64; }

// The inline form of a binary kernel op on one element of `type`, if any:
// wrapping integer arithmetic, integer max/min (float max/min and their NaN
// and signed-zero rules stay with the kernels), bitwise ops on integers and
// pred.
std::optional<ScalarOp> InlineBinary(kernels::BinaryOp op, ScalarType type) {
  const bool pred = type == ScalarType::kPred;
  switch (op) {
    case kernels::BinaryOp::kAdd: return pred ? std::nullopt : std::optional(ScalarOp::kAdd);
    case kernels::BinaryOp::kSubtract:
      return pred ? std::nullopt : std::optional(ScalarOp::kSubtract);
    case kernels::BinaryOp::kMultiply:
      return pred ? std::nullopt : std::optional(ScalarOp::kMultiply);
    case kernels::BinaryOp::kMaximum:
      return pred || IsFloat(type) ? std::nullopt : std::optional(ScalarOp::kMaximum);
    case kernels::BinaryOp::kMinimum:
      return pred || IsFloat(type) ? std::nullopt : std::optional(ScalarOp::kMinimum);
    case kernels::BinaryOp::kAnd:
      return IsFloat(type) ? std::nullopt : std::optional(ScalarOp::kAnd);
    case kernels::BinaryOp::kOr: return IsFloat(type) ? std::nullopt : std::optional(ScalarOp::kOr);
    case kernels::BinaryOp::kXor:
      return IsFloat(type) ? std::nullopt : std::optional(ScalarOp::kXor);
    default: return std::nullopt;
  }
}

ScalarOp InlineCompare(kernels::CompareDirection direction) {
  switch (direction) {
    case kernels::CompareDirection::kEq: return ScalarOp::kEq;
    case kernels::CompareDirection::kNe: return ScalarOp::kNe;
    case kernels::CompareDirection::kLt: return ScalarOp::kLt;
    case kernels::CompareDirection::kLe: return ScalarOp::kLe;
    case kernels::CompareDirection::kGt: return ScalarOp::kGt;
    case kernels::CompareDirection::kGe: return ScalarOp::kGe;
  }
  return ScalarOp::kEq;
}

// The type integer arithmetic on T wraps in: its unsigned form.
template <typename T, bool = std::is_integral_v<T> && !std::is_same_v<T, bool>>
struct WrapOf {
  using type = T;
};
template <typename T>
struct WrapOf<T, true> {
  using type = std::make_unsigned_t<T>;
};

// One inline op on `count` elements of T: integers wrap (computed
// unsigned), floats follow IEEE (and the flush-to-zero mode the run set).
// Compare results are pred; select's first operand is pred (one for all
// elements with kSelectByOne).
template <typename T>
inline __attribute__((always_inline)) void InlineStep(ScalarOp op, const uint8_t* a,
                                                      const uint8_t* b, const uint8_t* c,
                                                      uint8_t* out, int64_t count) {
  using Wide = typename WrapOf<T>::type;
  const T* x = reinterpret_cast<const T*>(a);
  const T* y = reinterpret_cast<const T*>(b);
  T* z = reinterpret_cast<T*>(out);
  bool* p = reinterpret_cast<bool*>(out);
  switch (op) {
    case ScalarOp::kMove:
      for (int64_t i = 0; i < count; ++i) z[i] = x[i];
      return;
    case ScalarOp::kSelect: {
      const bool* pred = reinterpret_cast<const bool*>(a);
      const T* t = reinterpret_cast<const T*>(b);
      const T* f = reinterpret_cast<const T*>(c);
      for (int64_t i = 0; i < count; ++i) z[i] = pred[i] ? t[i] : f[i];
      return;
    }
    case ScalarOp::kSelectByOne: {
      const T* chosen = reinterpret_cast<const T*>(*reinterpret_cast<const bool*>(a) ? b : c);
      for (int64_t i = 0; i < count; ++i) z[i] = chosen[i];
      return;
    }
    case ScalarOp::kEq:
      for (int64_t i = 0; i < count; ++i) p[i] = x[i] == y[i];
      return;
    case ScalarOp::kNe:
      for (int64_t i = 0; i < count; ++i) p[i] = x[i] != y[i];
      return;
    case ScalarOp::kLt:
      for (int64_t i = 0; i < count; ++i) p[i] = x[i] < y[i];
      return;
    case ScalarOp::kLe:
      for (int64_t i = 0; i < count; ++i) p[i] = x[i] <= y[i];
      return;
    case ScalarOp::kGt:
      for (int64_t i = 0; i < count; ++i) p[i] = x[i] > y[i];
      return;
    case ScalarOp::kGe:
      for (int64_t i = 0; i < count; ++i) p[i] = x[i] >= y[i];
      return;
    default: break;
  }
  if constexpr (std::is_same_v<T, bool>) {
    switch (op) {
      case ScalarOp::kAnd:
        for (int64_t i = 0; i < count; ++i) z[i] = x[i] && y[i];
        return;
      case ScalarOp::kOr:
        for (int64_t i = 0; i < count; ++i) z[i] = x[i] || y[i];
        return;
      case ScalarOp::kXor:
        for (int64_t i = 0; i < count; ++i) z[i] = x[i] != y[i];
        return;
      default: return;
    }
  } else {
    switch (op) {
      case ScalarOp::kAdd:
        for (int64_t i = 0; i < count; ++i) {
          z[i] = static_cast<T>(static_cast<Wide>(x[i]) + static_cast<Wide>(y[i]));
        }
        return;
      case ScalarOp::kSubtract:
        for (int64_t i = 0; i < count; ++i) {
          z[i] = static_cast<T>(static_cast<Wide>(x[i]) - static_cast<Wide>(y[i]));
        }
        return;
      case ScalarOp::kMultiply:
        for (int64_t i = 0; i < count; ++i) {
          z[i] = static_cast<T>(static_cast<Wide>(x[i]) * static_cast<Wide>(y[i]));
        }
        return;
      case ScalarOp::kMaximum:
        for (int64_t i = 0; i < count; ++i) z[i] = std::max(x[i], y[i]);
        return;
      case ScalarOp::kMinimum:
        for (int64_t i = 0; i < count; ++i) z[i] = std::min(x[i], y[i]);
        return;
      default: break;
    }
    if constexpr (std::is_integral_v<T>) {
      switch (op) {
        case ScalarOp::kAnd:
          for (int64_t i = 0; i < count; ++i) z[i] = static_cast<T>(x[i] & y[i]);
          return;
        case ScalarOp::kOr:
          for (int64_t i = 0; i < count; ++i) z[i] = static_cast<T>(x[i] | y[i]);
          return;
        case ScalarOp::kXor:
          for (int64_t i = 0; i < count; ++i) z[i] = static_cast<T>(x[i] ^ y[i]);
          return;
        default: return;
      }
    }
  }
}

// Whether a window of `sizes` in a row-major array of `dims` is one run of
// memory: every dimension after its first of more than one element is whole.
bool Contiguous(std::span<const int64_t> dims, std::span<const int64_t> sizes) {
  size_t d = 0;
  while (d < sizes.size() && sizes[d] == 1) ++d;
  for (size_t e = d + 1; e < sizes.size(); ++e) {
    if (sizes[e] != dims[e]) return false;
  }
  return true;
}

template <typename T, ScalarOp kOp>
void StepOne(const uint8_t* a, const uint8_t* b, const uint8_t* c, uint8_t* out, int64_t count) {
  InlineStep<T>(kOp, a, b, c, out, count);
}

template <typename T, size_t... kOps>
constexpr std::array<LoopProgram::StepFn, sizeof...(kOps)> StepsOf(std::index_sequence<kOps...>) {
  return {&StepOne<T, static_cast<ScalarOp>(kOps)>...};
}

// The step function of `op` on `type` (kMove is the last op).
LoopProgram::StepFn StepFor(ScalarType type, ScalarOp op) {
  constexpr size_t kOps = static_cast<size_t>(ScalarOp::kMove) + 1;
  static constexpr auto kPred = StepsOf<bool>(std::make_index_sequence<kOps>());
  static constexpr auto kS32 = StepsOf<int32_t>(std::make_index_sequence<kOps>());
  static constexpr auto kS64 = StepsOf<int64_t>(std::make_index_sequence<kOps>());
  static constexpr auto kU32 = StepsOf<uint32_t>(std::make_index_sequence<kOps>());
  static constexpr auto kU64 = StepsOf<uint64_t>(std::make_index_sequence<kOps>());
  static constexpr auto kF32 = StepsOf<float>(std::make_index_sequence<kOps>());
  static constexpr auto kF64 = StepsOf<double>(std::make_index_sequence<kOps>());
  const auto i = static_cast<size_t>(op);
  switch (type) {
    case ScalarType::kPred: return kPred[i];
    case ScalarType::kS32: return kS32[i];
    case ScalarType::kS64: return kS64[i];
    case ScalarType::kU32: return kU32[i];
    case ScalarType::kU64: return kU64[i];
    case ScalarType::kF32: return kF32[i];
    case ScalarType::kF64: return kF64[i];
  }
  return nullptr;
}

void CopyBytes(uint8_t* to, const uint8_t* from, int64_t bytes) {
  switch (bytes) {
    case 1: *to = *from; return;
    case 4: std::memcpy(to, from, 4); return;
    case 8: std::memcpy(to, from, 8); return;
    default: std::memmove(to, from, static_cast<size_t>(bytes)); return;
  }
}

// The operand an op's result `result` is a view of (same bytes, same
// order), or -1: reshape, a broadcast or convert that changes nothing but
// the shape, a whole-array dynamic_update_slice (its update), an
// optimization_barrier.
int ViewSource(const ir::Operation& op, size_t result) {
  const ir::Value* out = op.result(result);
  switch (op.code()) {
    case ir::OpCode::kReshape: return 0;
    case ir::OpCode::kOptimizationBarrier: return static_cast<int>(result);
    case ir::OpCode::kConvert:
      return op.operand(0)->type().element() == out->type().element() ? 0 : -1;
    case ir::OpCode::kBroadcastInDim: {
      if (!op.operand(0)->type().HasStaticShape() || !out->type().HasStaticShape() ||
          op.operand(0)->type().NumElements() != out->type().NumElements()) {
        return -1;
      }
      const std::vector<int64_t> dims = IntsAttr(op, "broadcast_dimensions");
      return std::is_sorted(dims.begin(), dims.end()) ? 0 : -1;
    }
    case ir::OpCode::kDynamicUpdateSlice:
      return op.operand(0)->type() == op.operand(1)->type() ? 1 : -1;
    default: return -1;
  }
}

}  // namespace

class LoopProgram::Builder {
 public:
  Builder(Lowering& lowering, LoopProgram& program) : lowering_(lowering), program_(program) {}

  // Maps `block`'s arguments to the carries.
  void BindCarries(const ir::Block& block) {
    for (size_t i = 0; i < block.num_arguments(); ++i) {
      slots_[block.argument(i)] = CarrySlot(i);
      versions_[block.argument(i)] = 0;
    }
  }
  int32_t CarrySlot(size_t i) const { return static_cast<int32_t>(i); }

  // Compiles `block`'s ops (but its terminator) into `code`; false when one
  // does not qualify.
  bool CompileBlock(const ir::Block& block, std::vector<Instruction>* code) {
    code_ = code;
    return CompileOps(block);
  }

  // The slot of `value`: an earlier op's, a carry's, or a capture (a value
  // from outside the loop).
  std::optional<int32_t> SlotOf(const ir::Value* value) {
    if (auto found = slots_.find(value); found != slots_.end()) return found->second;
    if (!ShapeOf(value)) return std::nullopt;
    const int32_t slot = AddSlot(Source::kCapture, static_cast<int64_t>(program_.captures_.size()));
    program_.captures_.push_back(value);
    slots_[value] = slot;
    return slot;
  }

  std::optional<Shape> ShapeOf(const ir::Value* value) const {
    StatusOr<Shape> shape = lowering_.ShapeOf(value);
    if (!shape.ok() || !Supported(shape->element_type)) return std::nullopt;
    return std::move(*shape);
  }

  // A new scratch slot of `bytes`, or nullopt past the limits.
  std::optional<int32_t> Scratch(int64_t bytes) {
    if (bytes > kMaxValueBytes) return std::nullopt;
    const int64_t align = bytes <= 8 ? 8 : 64;
    int64_t& total = program_.scratch_bytes_;
    total = (total + align - 1) / align * align;
    const int32_t slot = AddSlot(Source::kScratch, total);
    total += std::max<int64_t>(bytes, 1);
    if (total > kMaxScratchBytes) return std::nullopt;
    return slot;
  }

  // Per carry: whether an update of it may write it in place (a
  // candidate, checked by Build after the body is built), the index in the
  // body of the first update that does (-1: none), the version its memory
  // holds (0 on entry, +1 per update in place), and whether an update in
  // place was refused because its operand was an older version (an update
  // of a value already updated, or one whose result is dropped: the memory
  // no longer holds the operand).
  std::vector<bool> may_update_in_place_;
  std::vector<int64_t> first_update_;
  std::vector<int64_t> current_;
  std::vector<bool> refused_;

  // The version of its carry's memory `value` is (views share their
  // operand's), or -1 when it is no carry's.
  int64_t VersionOf(const ir::Value* value) const {
    auto found = versions_.find(value);
    return found != versions_.end() ? found->second : -1;
  }

 private:
  int32_t AddSlot(Source source, int64_t index) {
    program_.slots_.push_back({source, index});
    return static_cast<int32_t>(program_.slots_.size() - 1);
  }

  bool IsConstant(int32_t slot) const {
    return program_.slots_[static_cast<size_t>(slot)].source == Source::kConstant;
  }
  uint8_t* ConstantData(int32_t slot) const {
    return program_
        .constants_[static_cast<size_t>(program_.slots_[static_cast<size_t>(slot)].index)]
        ->data();
  }
  int32_t AddConstant(std::vector<uint8_t> data) {
    program_.constants_.push_back(std::make_shared<std::vector<uint8_t>>(std::move(data)));
    return AddSlot(Source::kConstant, static_cast<int64_t>(program_.constants_.size() - 1));
  }

  void Push(Instruction instruction) {
    if (instruction.code == Code::kScalar) {
      instruction.step = StepFor(instruction.scalar_type, instruction.scalar);
    }
    code_->push_back(std::move(instruction));
  }

  bool CompileOps(const ir::Block& block) {
    for (const auto& op : block.operations()) {
      if (op.get() == block.back()) break;
      if (!CompileOp(*op) || code_->size() > kMaxInstructions) return false;
    }
    return true;
  }

  // func.call: the callee's body compiled in place of the call (as the
  // lowering inlines it), its arguments the call's operands.
  bool CompileCall(const ir::Operation& call, const std::vector<int32_t>& operands) {
    constexpr int kMaxDepth = 8;
    ir::Attribute callee = call.GetAttr("callee");
    if (depth_ >= kMaxDepth || !callee.Is(ir::AttrKind::kSymbolRef) ||
        callee->symbol_path.empty()) {
      return false;
    }
    const ir::Operation* function = lowering_.module().LookupFunction(callee->symbol_path.back());
    if (function == nullptr || function->num_regions() != 1 ||
        function->region(0).num_blocks() != 1) {
      return false;
    }
    const ir::Block& block = function->region(0).block(0);
    const ir::Operation* terminator = block.back();
    if (terminator == nullptr || block.num_arguments() != operands.size() ||
        terminator->operands().size() != call.num_results()) {
      return false;
    }
    for (size_t k = 0; k < operands.size(); ++k) {
      Alias(block.argument(k), operands[k], call.operand(k));
    }
    ++depth_;
    const bool compiled = CompileOps(block);
    --depth_;
    if (!compiled) return false;
    for (size_t r = 0; r < call.num_results(); ++r) {
      std::optional<int32_t> slot = SlotOf(terminator->operand(r));
      if (!slot) return false;
      Alias(call.result(r), *slot, terminator->operand(r));
    }
    return true;
  }

  bool CompileOp(const ir::Operation& op) {
    if (op.num_regions() != 0 && op.code() != ir::OpCode::kScatter) return false;
    std::vector<int32_t> operands;
    std::vector<Shape> shapes;
    for (const ir::Value* value : op.operands()) {
      std::optional<int32_t> slot = SlotOf(value);
      std::optional<Shape> shape = ShapeOf(value);
      if (!slot || !shape) return false;
      operands.push_back(*slot);
      shapes.push_back(std::move(*shape));
    }
    if (op.code() == ir::OpCode::kFuncCall) return CompileCall(op, operands);
    std::vector<Shape> results;
    for (size_t r = 0; r < op.num_results(); ++r) {
      std::optional<Shape> shape = ShapeOf(op.result(r));
      if (!shape) return false;
      results.push_back(std::move(*shape));
    }
    // (A function called twice binds its values again: whether an op is a
    // view is its own, not whether its result has a slot.)
    bool views = false;
    for (size_t r = 0; r < op.num_results(); ++r) {
      const int source = ViewSource(op, r);
      if (source < 0) continue;
      Alias(op.result(r), operands[static_cast<size_t>(source)],
            op.operand(static_cast<size_t>(source)));
      views = true;
    }
    if (views) return true;
    if (results.size() != 1) return false;
    const ir::Value* result = op.result(0);
    const Shape& out = results[0];
    const ir::OpCode code = op.code();
    if (code == ir::OpCode::kConstant) {
      StatusOr<std::vector<uint8_t>> data = DenseData(op.GetAttr("value"), out);
      if (!data.ok() || static_cast<int64_t>(data->size()) > kMaxValueBytes) return false;
      slots_[result] = AddConstant(std::move(*data));
      return true;
    }
    switch (code) {
      case ir::OpCode::kBroadcastInDim: return CompileBroadcast(op, operands[0], shapes[0], out);
      case ir::OpCode::kTranspose: {
        const std::vector<int64_t> permutation = IntsAttr(op, "permutation");
        const std::vector<int64_t> strides = Strides(shapes[0].dims);
        std::vector<int64_t> by_result;
        for (int64_t d : permutation) by_result.push_back(strides[static_cast<size_t>(d)]);
        return EmitStrided(result, operands[0], out, std::move(by_result), 0);
      }
      case ir::OpCode::kSlice: {
        const std::vector<int64_t> starts = IntsAttr(op, "start_indices");
        const std::vector<int64_t> steps = IntsAttr(op, "strides");
        const std::vector<int64_t> strides = Strides(shapes[0].dims);
        if (starts.size() != strides.size() || steps.size() != strides.size()) return false;
        int64_t offset = 0;
        std::vector<int64_t> by_result;
        for (size_t d = 0; d < strides.size(); ++d) {
          offset += starts[d] * strides[d];
          by_result.push_back(steps[d] * strides[d]);
        }
        return EmitStrided(result, operands[0], out, std::move(by_result), offset);
      }
      case ir::OpCode::kDynamicSlice: return CompileWindow(op, operands, shapes, out, false);
      case ir::OpCode::kDynamicUpdateSlice: return CompileWindow(op, operands, shapes, out, true);
      case ir::OpCode::kScatter: return CompileScatter(op, operands, out);
      default: break;
    }
    return CompileElementwise(op, operands, shapes, out);
  }

  // `to` names the memory of slot `slot`, which `from` names (a view, a
  // call's argument or result): the same slot and carry version.
  void Alias(const ir::Value* to, int32_t slot, const ir::Value* from) {
    slots_[to] = slot;
    if (const int64_t version = VersionOf(from); version >= 0) {
      versions_[to] = version;
    } else {
      versions_.erase(to);
    }
  }

  // The slot update `op` writes: its carry when its operand is the current
  // version of a carry it may update in place, else scratch holding a copy
  // of the operand.
  std::optional<int32_t> UpdateTarget(const ir::Operation& op, int32_t operand, int64_t bytes) {
    const Slot& slot = program_.slots_[static_cast<size_t>(operand)];
    if (code_ == &program_.body_ && slot.source == Source::kCarry &&
        may_update_in_place_[static_cast<size_t>(slot.index)]) {
      const auto carry = static_cast<size_t>(slot.index);
      if (VersionOf(op.operand(0)) == current_[carry]) {
        int64_t& first = first_update_[carry];
        if (first < 0) first = static_cast<int64_t>(code_->size());
        versions_[op.result(0)] = ++current_[carry];
        return operand;
      }
      refused_[carry] = true;  // Build compiles the program again
    }
    std::optional<int32_t> target = Scratch(bytes);
    if (!target) return std::nullopt;
    Instruction copy{Code::kCopy};
    copy.operands[0] = operand;
    copy.result = *target;
    copy.count = bytes;
    Push(copy);
    return target;
  }

  bool CompileWindow(const ir::Operation& op, const std::vector<int32_t>& operands,
                     const std::vector<Shape>& shapes, const Shape& out, bool update) {
    const Shape& array = shapes[0];
    const size_t first = update ? 2 : 1;
    Window window;
    window.element_bytes = ElementBytes(array.element_type);
    window.dims = array.dims;
    window.strides = Strides(array.dims);
    window.sizes = update ? shapes[1].dims : out.dims;
    window.size_strides = Strides(window.sizes);
    window.contiguous = Contiguous(window.dims, window.sizes);
    if (operands.size() != first + array.dims.size()) return false;
    for (size_t k = first; k < operands.size(); ++k) {
      window.starts.push_back(operands[k]);
      window.start_types.push_back(shapes[k].element_type);
    }
    Instruction instruction{update ? Code::kUpdate : Code::kSlice};
    instruction.operands[0] = operands[0];
    if (update) {
      instruction.operands[1] = operands[1];
      std::optional<int32_t> target = UpdateTarget(op, operands[0], array.ByteSize());
      if (!target) return false;
      instruction.result = *target;
    } else {
      std::optional<int32_t> slot = Scratch(out.ByteSize());
      if (!slot) return false;
      instruction.result = *slot;
    }
    instruction.count = 1;
    for (int64_t size : window.sizes) instruction.count *= size;
    instruction.detail = static_cast<int32_t>(program_.windows_.size());
    program_.windows_.push_back(std::move(window));
    slots_[op.result(0)] = instruction.result;
    Push(instruction);
    return true;
  }

  bool CompileScatter(const ir::Operation& op, const std::vector<int32_t>& operands,
                      const Shape& out) {
    if (op.num_results() != 1 || operands.size() != 3) return false;
    StatusOr<ScatterShape> shape = ReadScatter(lowering_, op);
    if (!shape.ok()) return false;
    auto ops = MatchScatterBody(op.region(0), 1);
    if (!ops || !kernels::ScatterAccepts(out.element_type, (*ops)[0])) return false;
    std::optional<int32_t> target = UpdateTarget(op, operands[0], out.ByteSize());
    if (!target) return false;
    Instruction instruction{Code::kScatter};
    instruction.operands[0] = operands[1];
    instruction.operands[1] = operands[2];
    instruction.result = *target;
    slots_[op.result(0)] = *target;
    // One window in one run of memory, combined inline: `.at[i].set(v)`,
    // `.at[i].add(v)`, a row of a stacked output.
    const kernels::IndexedWindows& geometry = shape->geometry;
    const std::optional<ScalarType> type = ScalarTypeOf(out.element_type);
    std::optional<ScalarOp> combine;
    if ((*ops)[0] && type) combine = InlineBinary(BinaryOf(*(*ops)[0]), *type);
    if (geometry.num_batch_points() == 1 && Contiguous(geometry.big_dims, geometry.window_sizes) &&
        (!(*ops)[0] || combine)) {
      Window window;
      window.element_bytes = ElementBytes(out.element_type);
      window.dims = geometry.big_dims;
      window.strides = geometry.big_strides;
      window.sizes = geometry.window_sizes;
      window.contiguous = true;
      window.index_map = geometry.index_map;
      window.index_stride = geometry.index_vector_stride;
      window.index_type = shape->index_type;
      instruction.code = Code::kScatterOne;
      instruction.count = 1;
      for (int64_t size : window.sizes) instruction.count *= size;
      if (combine) {
        instruction.scalar = *combine;
        instruction.scalar_type = *type;
      } else {
        instruction.scalar = ScalarOp::kMove;
      }
      instruction.detail = static_cast<int32_t>(program_.windows_.size());
      program_.windows_.push_back(std::move(window));
      Push(instruction);
      return true;
    }
    instruction.detail = static_cast<int32_t>(program_.scatters_.size());
    program_.scatters_.push_back({out.element_type, (*ops)[0], std::move(shape->geometry),
                                  shape->index_type});
    Push(instruction);
    return true;
  }

  bool CompileBroadcast(const ir::Operation& op, int32_t operand, const Shape& in,
                        const Shape& out) {
    if (in.NumElements() == 1) {
      Instruction fill{Code::kFill};
      fill.operands[0] = operand;
      fill.type = out.element_type;
      fill.count = out.NumElements();
      return EmitOrFold(op.result(0), fill, out);
    }
    const std::vector<int64_t> dims = IntsAttr(op, "broadcast_dimensions");
    const std::vector<int64_t> strides = Strides(in.dims);
    std::vector<int64_t> by_result(out.dims.size(), 0);
    if (dims.size() != in.dims.size()) return false;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] < 0 || dims[d] >= static_cast<int64_t>(out.dims.size())) return false;
      if (in.dims[d] != 1) by_result[static_cast<size_t>(dims[d])] = strides[d];
    }
    return EmitStrided(op.result(0), operand, out, std::move(by_result), 0);
  }

  bool EmitStrided(const ir::Value* result, int32_t operand, const Shape& out,
                   std::vector<int64_t> strides, int64_t offset) {
    if (strides.size() != out.dims.size()) return false;
    Instruction copy{Code::kStrided};
    copy.operands[0] = operand;
    copy.detail = static_cast<int32_t>(program_.strided_.size());
    program_.strided_.push_back({ElementBytes(out.element_type), out.dims, std::move(strides),
                                 offset});
    return EmitOrFold(result, copy, out);
  }

  // Emits `instruction` with a new scratch result for `value`; when its
  // operand is a constant (a broadcast of a literal), runs it now instead
  // and makes its result a constant.
  bool EmitOrFold(const ir::Value* value, Instruction instruction, const Shape& out) {
    if (IsConstant(instruction.operands[0])) {
      std::vector<uint8_t> data(static_cast<size_t>(std::max<int64_t>(out.ByteSize(), 1)));
      if (static_cast<int64_t>(data.size()) > kMaxValueBytes) return false;
      if (!Execute(instruction, ConstantData(instruction.operands[0]), data.data()).ok()) {
        return false;
      }
      slots_[value] = AddConstant(std::move(data));
      return true;
    }
    std::optional<int32_t> slot = Scratch(out.ByteSize());
    if (!slot) return false;
    instruction.result = *slot;
    slots_[value] = *slot;
    Push(instruction);
    return true;
  }

  // Runs a one-operand data movement at compile time.
  Status Execute(const Instruction& instruction, const uint8_t* in, uint8_t* out) const {
    if (instruction.code == Code::kFill) {
      kernels::Fill(ElementBytes(instruction.type), in, out, instruction.count);
      return Status::Ok();
    }
    const Strided& strided = program_.strided_[static_cast<size_t>(instruction.detail)];
    kernels::CopyStrided(strided.element_bytes, strided.dims,
                         in + strided.offset * static_cast<int64_t>(strided.element_bytes),
                         strided.strides, out);
    return Status::Ok();
  }

  bool CompileElementwise(const ir::Operation& op, const std::vector<int32_t>& operands,
                          const std::vector<Shape>& shapes, const Shape& out) {
    const ir::OpCode code = op.code();
    const int64_t count = out.NumElements();
    Instruction instruction{};
    instruction.result_type = out.element_type;
    instruction.count = count;
    for (size_t k = 0; k < operands.size() && k < 3; ++k) instruction.operands[k] = operands[k];
    if (operands.empty() || operands.size() > 3) return false;
    instruction.type = shapes[0].element_type;
    // Every operand has the result's element count, but select's pred and
    // clamp's bounds, which may be scalars.
    for (size_t k = 0; k < shapes.size(); ++k) {
      const int64_t elements = shapes[k].NumElements();
      const bool may_be_scalar = (code == ir::OpCode::kSelect && k == 0) ||
                                 (code == ir::OpCode::kClamp && k != 1);
      if (elements != count && !(may_be_scalar && elements == 1)) return false;
    }
    // Inline on any count: the loops below vectorize (-O3).
    std::optional<ScalarType> scalar = ScalarTypeOf(out.element_type);
    if (auto unary = UnaryOpOf(code); unary && operands.size() == 1) {
      instruction.code = Code::kUnary;
      instruction.unary = *unary;
    } else if (auto binary = BinaryOpOf(code); binary && operands.size() == 2) {
      instruction.code = Code::kBinary;
      instruction.binary = *binary;
      if (scalar) {
        if (std::optional<ScalarOp> inline_op = InlineBinary(*binary, *scalar)) {
          instruction.code = Code::kScalar;
          instruction.scalar = *inline_op;
          instruction.scalar_type = *scalar;
        }
      }
    } else if (code == ir::OpCode::kCompare && operands.size() == 2) {
      StatusOr<kernels::CompareDirection> direction = CompareDirectionOf(
          EnumAttr(op, "comparison_direction"));
      if (!direction.ok()) return false;
      instruction.code = Code::kCompare;
      instruction.direction = *direction;
      const bool total = EnumAttr(op, "compare_type") == "TOTALORDER";
      instruction.compare = total ? kernels::CompareKind::kTotalOrder
                                  : kernels::CompareKind::kFloat;
      std::optional<ScalarType> operand_type;
      operand_type = ScalarTypeOf(instruction.type);
      if (operand_type && !(total && IsFloat(*operand_type)) &&
          *operand_type != ScalarType::kPred) {
        instruction.code = Code::kScalar;
        instruction.scalar = InlineCompare(*direction);
        instruction.scalar_type = *operand_type;
      }
    } else if (code == ir::OpCode::kSelect && operands.size() == 3) {
      instruction.code = Code::kSelect;
      instruction.type = out.element_type;
      instruction.first_scalar = shapes[0].NumElements() == 1;
      if (scalar) {
        instruction.code = Code::kScalar;
        instruction.scalar = instruction.first_scalar ? ScalarOp::kSelectByOne : ScalarOp::kSelect;
        instruction.scalar_type = *scalar;
      }
    } else if (code == ir::OpCode::kClamp && operands.size() == 3) {
      instruction.code = Code::kClamp;
      instruction.type = out.element_type;
      instruction.first_scalar = shapes[0].NumElements() == 1;
      instruction.last_scalar = shapes[2].NumElements() == 1;
    } else if (code == ir::OpCode::kConvert && operands.size() == 1) {
      instruction.code = Code::kConvert;
    } else {
      return false;
    }
    std::optional<int32_t> slot = Scratch(out.ByteSize());
    if (!slot) return false;
    instruction.result = *slot;
    slots_[op.result(0)] = *slot;
    Push(instruction);
    return true;
  }

  Lowering& lowering_;
  LoopProgram& program_;
  std::unordered_map<const ir::Value*, int32_t> slots_;
  std::unordered_map<const ir::Value*, int64_t> versions_;
  std::vector<Instruction>* code_ = nullptr;
  int depth_ = 0;  // of calls being compiled
};

std::optional<LoopProgram> LoopProgram::Compile(Lowering& lowering, const ir::Operation& op) {
  // Not in programs partitioned over several devices: there a loop's
  // carries may be tiles whose shapes are not the IR's (the region form's
  // tile lowering handles them). A program of one partition (JAX's
  // arguments placed on one device carry an empty mesh) runs whole.
  if (op.num_regions() != 2 ||
      (lowering.spmd() != nullptr && lowering.spmd()->num_partitions > 1)) {
    return std::nullopt;
  }
  const size_t count = op.operands().size();
  if (count == 0 || op.num_results() != count) return std::nullopt;
  for (size_t r = 0; r < 2; ++r) {
    const ir::Region& region = op.region(r);
    if (region.num_blocks() != 1 || region.block(0).num_arguments() != count ||
        region.block(0).back() == nullptr) {
      return std::nullopt;
    }
  }
  const ir::Block& condition = op.region(0).block(0);
  const ir::Block& body = op.region(1).block(0);
  if (condition.back()->operands().size() != 1 || body.back()->operands().size() != count) {
    return std::nullopt;
  }
  // Every carry may be updated in place until the body shows otherwise;
  // each refusal compiles the program again without that carry.
  std::vector<bool> candidates(count, true);
  for (size_t attempt = 0; attempt <= count; ++attempt) {
    LoopProgram program;
    std::vector<bool> refused;
    if (!program.Build(lowering, op, candidates, &refused)) return std::nullopt;
    if (refused == candidates) {
      program.WriteCarriesDirectly();
      program.HoistInvariants();
      program.GenerateCode();
      return program;
    }
    candidates = std::move(refused);
  }
  return std::nullopt;
}

bool LoopProgram::Build(Lowering& lowering, const ir::Operation& op,
                        const std::vector<bool>& candidates, std::vector<bool>* in_place) {
  const size_t count = op.operands().size();
  const ir::Block& condition = op.region(0).block(0);
  const ir::Block& body = op.region(1).block(0);
  Builder builder(lowering, *this);
  for (size_t i = 0; i < count; ++i) {
    std::optional<Shape> shape = builder.ShapeOf(op.operand(i));
    if (!shape) return false;
    slots_.push_back({Source::kCarry, static_cast<int64_t>(i)});
    carry_bytes_.push_back(shape->ByteSize());
  }
  builder.BindCarries(condition);
  if (!builder.CompileBlock(condition, &condition_)) return false;
  std::optional<int32_t> proceed = builder.SlotOf(condition.back()->operand(0));
  std::optional<Shape> proceed_shape = builder.ShapeOf(condition.back()->operand(0));
  if (!proceed || !proceed_shape || proceed_shape->element_type != ElementType::kPred ||
      proceed_shape->NumElements() != 1) {
    return false;
  }
  proceed_ = *proceed;

  builder.BindCarries(body);
  builder.may_update_in_place_ = candidates;
  builder.first_update_.assign(count, -1);
  builder.current_.assign(count, 0);
  builder.refused_.assign(count, false);
  if (!builder.CompileBlock(body, &body_)) return false;
  std::vector<int32_t> results;
  for (size_t i = 0; i < count; ++i) {
    std::optional<int32_t> source = builder.SlotOf(body.back()->operand(i));
    if (!source) return false;
    results.push_back(*source);
  }
  // A carry updated in place must be the body's result of that carry in
  // its last version (no update of it dropped), no other result, and read
  // by nothing after its first update but further updates of it in place.
  *in_place = candidates;
  carries_.assign(count, CarryKind::kStaged);
  for (size_t i = 0; i < count; ++i) {
    const int32_t carry = builder.CarrySlot(i);
    const int64_t first = builder.first_update_[i];
    if (builder.refused_[i]) {
      (*in_place)[i] = false;
      continue;
    }
    if (first < 0) {
      if (results[i] == carry) carries_[i] = CarryKind::kPassThrough;
      continue;
    }
    bool ok = results[i] == carry &&
              builder.VersionOf(body.back()->operand(i)) == builder.current_[i];
    for (size_t j = 0; ok && j < count; ++j) ok = j == i || results[j] != carry;
    for (size_t n = static_cast<size_t>(first); ok && n < body_.size(); ++n) {
      const Instruction& instruction = body_[n];
      const bool updates = (instruction.code == Code::kUpdate ||
                            instruction.code == Code::kScatter ||
                            instruction.code == Code::kScatterOne) &&
                           instruction.result == carry;
      ForEachRead(instruction, [&](int32_t slot, size_t k) {
        if (slot == carry && !(updates && instruction.code == Code::kUpdate && k == 0)) ok = false;
      });
    }
    if (ok) {
      carries_[i] = CarryKind::kInPlace;
    } else {
      (*in_place)[i] = false;
    }
  }
  if (*in_place != candidates) return true;  // compiled again without the refused
  for (size_t i = 0; i < count; ++i) {
    if (carries_[i] != CarryKind::kStaged) continue;
    const int32_t carry = builder.CarrySlot(i);
    if (results[i] == carry) continue;  // a view of itself
    Instruction assign{Code::kCopy};
    assign.count = carry_bytes_[i];
    assign.result = carry;
    assign.operands[0] = results[i];
    if (slots_[static_cast<size_t>(results[i])].source == Source::kCarry) {
      // Another carry, which its own assignment may overwrite first.
      std::optional<int32_t> staging = builder.Scratch(assign.count);
      if (!staging) return false;
      Instruction stage = assign;
      stage.result = *staging;
      stage_.push_back(stage);
      assign.operands[0] = *staging;
    }
    assign_.push_back(assign);
  }
  return true;
}

template <typename F>
void LoopProgram::ForEachRead(const Instruction& instruction, F&& read) const {
  for (size_t k = 0; k < 3; ++k) {
    if (instruction.operands[k] >= 0) read(instruction.operands[k], k);
  }
  if (instruction.code == Code::kSlice || instruction.code == Code::kUpdate) {
    for (int32_t start : windows_[static_cast<size_t>(instruction.detail)].starts) read(start, 3);
  }
}

void LoopProgram::WriteCarriesDirectly() {
  const auto reads_slot = [this](const Instruction& instruction, int32_t slot) {
    bool reads = false;
    ForEachRead(instruction, [&](int32_t read, size_t) { reads = reads || read == slot; });
    return reads;
  };
  for (size_t a = 0; a < assign_.size();) {
    const int32_t carry = assign_[a].result;
    const int32_t value = assign_[a].operands[0];
    bool ok = slots_[static_cast<size_t>(value)].source == Source::kScratch;
    // Another carry takes this one's old value (staged after the body).
    for (const Instruction& stage : stage_) ok = ok && !reads_slot(stage, carry);
    // The value's one writer: an elementwise op of the carry's size whose
    // operands, where one is the carry itself, have the result's width
    // (an op reading and writing the same memory element by element).
    int64_t writer = -1;
    int writers = 0;
    for (size_t n = 0; ok && n < body_.size(); ++n) {
      if (body_[n].result == value) {
        writer = static_cast<int64_t>(n);
        ++writers;
      }
      ok = body_[n].result != carry;  // no update of a staged carry, but be sure
    }
    ok = ok && writers == 1;
    if (ok) {
      const Instruction& w = body_[static_cast<size_t>(writer)];
      const bool elementwise = w.code == Code::kScalar || w.code == Code::kUnary ||
                               w.code == Code::kBinary;
      const bool select = w.code == Code::kScalar &&
                          (w.scalar == ScalarOp::kSelect || w.scalar == ScalarOp::kSelectByOne);
      ok = elementwise && !w.first_scalar && !w.last_scalar &&
           w.count * static_cast<int64_t>(ElementBytes(w.result_type)) ==
               carry_bytes_[static_cast<size_t>(carry)] &&
           (!reads_slot(w, carry) || (ElementBytes(w.type) == ElementBytes(w.result_type) &&
                                      !(select && w.operands[0] == carry)));
    }
    // The writer moves down past the last reader of the carry's old value,
    // when nothing it passes reads the value or writes the writer's
    // operands.
    size_t last = static_cast<size_t>(std::max<int64_t>(writer, 0));
    for (size_t n = last + 1; ok && n < body_.size(); ++n) {
      if (reads_slot(body_[n], carry)) last = n;
    }
    for (size_t n = static_cast<size_t>(std::max<int64_t>(writer, 0)) + 1; ok && n <= last; ++n) {
      const Instruction& passed = body_[n];
      ok = !reads_slot(passed, value);
      ForEachRead(body_[static_cast<size_t>(writer)],
                  [&](int32_t operand, size_t) { ok = ok && passed.result != operand; });
    }
    if (!ok) {
      ++a;
      continue;
    }
    Instruction moved = body_[static_cast<size_t>(writer)];
    moved.result = carry;
    body_.erase(body_.begin() + writer);
    body_.insert(body_.begin() + static_cast<int64_t>(last), moved);
    // Later readers of the value (after the writer's new place, other
    // carries' assignments) read the carry, which now holds it.
    const auto rename = [&](Instruction& instruction) {
      for (int32_t& operand : instruction.operands) {
        if (operand == value) operand = carry;
      }
      if (instruction.code == Code::kSlice || instruction.code == Code::kUpdate) {
        for (int32_t& start : windows_[static_cast<size_t>(instruction.detail)].starts) {
          if (start == value) start = carry;
        }
      }
    };
    for (size_t n = last + 1; n < body_.size(); ++n) rename(body_[n]);
    assign_.erase(assign_.begin() + static_cast<int64_t>(a));
    for (Instruction& other : assign_) rename(other);
  }
}

void LoopProgram::HoistInvariants() {
  std::vector<int> writes(slots_.size(), 0);
  for (const std::vector<Instruction>* list : {&condition_, &body_, &stage_, &assign_}) {
    for (const Instruction& instruction : *list) {
      if (instruction.result >= 0) ++writes[static_cast<size_t>(instruction.result)];
    }
  }
  std::vector<bool> invariant(slots_.size(), false);
  for (size_t s = 0; s < slots_.size(); ++s) {
    invariant[s] = slots_[s].source == Source::kConstant || slots_[s].source == Source::kCapture;
  }
  const auto pure = [](Code code) {
    return code != Code::kUpdate && code != Code::kScatter && code != Code::kScatterOne;
  };
  for (std::vector<Instruction>* list : {&condition_, &body_}) {
    std::vector<Instruction>& prologue = list == &body_ ? body_prologue_ : prologue_;
    std::vector<Instruction> kept;
    for (Instruction& instruction : *list) {
      bool hoist = pure(instruction.code) && instruction.result >= 0 &&
                   slots_[static_cast<size_t>(instruction.result)].source == Source::kScratch &&
                   writes[static_cast<size_t>(instruction.result)] == 1;
      ForEachRead(instruction, [&](int32_t slot, size_t) {
        hoist = hoist && invariant[static_cast<size_t>(slot)];
      });
      if (hoist) {
        invariant[static_cast<size_t>(instruction.result)] = true;
        prologue.push_back(instruction);
      } else {
        kept.push_back(instruction);
      }
    }
    *list = std::move(kept);
  }
  // A slice of one run of an array no trip writes (a constant, a capture,
  // a carry passed through: the xs a scan reads a row of) needs no copy:
  // its slot points into the array, valid until the loop ends. Only where
  // nothing else writes the slice's slot.
  for (Instruction& instruction : body_) {
    if (instruction.code != Code::kSlice) continue;
    const Window& window = windows_[static_cast<size_t>(instruction.detail)];
    const Slot& source = slots_[static_cast<size_t>(instruction.operands[0])];
    const bool unchanging = source.source == Source::kConstant ||
                            source.source == Source::kCapture ||
                            (source.source == Source::kCarry &&
                             carries_[static_cast<size_t>(source.index)] ==
                                 CarryKind::kPassThrough);
    instruction.view = window.contiguous && unchanging &&
                       writes[static_cast<size_t>(instruction.result)] == 1;
  }
}

namespace {

// What RunCalled needs: the program, and the error of the instruction that
// failed.
struct CallContext {
  const LoopProgram* program;
  Status status;
};

// A call's index: the section (prologue, body prologue, condition, body,
// stage, assign) above bit 16, the position below.
constexpr int kSectionShift = 16;

}  // namespace

int LoopProgram::RunCalled(void* context, int32_t index, uint8_t** at) {
  auto& call = *static_cast<CallContext*>(context);
  const LoopProgram& program = *call.program;
  const std::vector<Instruction>* sections[] = {&program.prologue_,  &program.body_prologue_,
                                                &program.condition_, &program.body_,
                                                &program.stage_,     &program.assign_};
  const std::vector<Instruction>& section = *sections[index >> kSectionShift];
  const auto position = static_cast<size_t>(index & ((1 << kSectionShift) - 1));
  // Nothing may unwind through the generated code's frames.
  try {
    call.status = program.RunInstructions({&section[position], 1}, at);
  } catch (const std::exception& error) {
    call.status = Internal("a while loop's instruction failed: ", error.what());
  }
  return call.status.ok() ? 0 : 1;
}

void LoopProgram::GenerateCode() {
  if (!kernels::ProgramJitAvailable()) return;
  std::vector<kernels::ProgramStep> sections[4];
  auto translate = [&](const std::vector<Instruction>& code, int section,
                       std::vector<kernels::ProgramStep>* steps) {
    for (size_t k = 0; k < code.size(); ++k) {
      steps->push_back(StepOf(code[k], static_cast<int32_t>((section << kSectionShift) | k)));
    }
  };
  translate(prologue_, 0, &sections[0]);
  translate(body_prologue_, 1, &sections[1]);
  translate(condition_, 2, &sections[2]);
  translate(body_, 3, &sections[3]);
  translate(stage_, 4, &sections[3]);
  translate(assign_, 5, &sections[3]);
  kernels::ProgramLoop loop;
  loop.prologue = sections[0];
  loop.body_prologue = sections[1];
  loop.condition = sections[2];
  loop.body = sections[3];
  loop.proceed = proceed_;
  code_ = kernels::CompileProgram(loop, &LoopProgram::RunCalled);
}

kernels::ProgramStep LoopProgram::StepOf(const Instruction& in, int32_t call) const {
  using Step = kernels::ProgramStep;
  Step step;
  step.call = call;
  step.a = in.operands[0];
  step.b = in.operands[1];
  step.c = in.operands[2];
  step.out = in.result;
  step.count = in.count;
  switch (in.code) {
    case Code::kScalar:
      step.kind = Step::Kind::kScalar;
      step.op = in.scalar;
      step.type = in.scalar_type;
      step.step = in.step;
      return step;
    case Code::kCopy: step.kind = Step::Kind::kCopy; return step;
    case Code::kConvert: {
      std::optional<ScalarType> from = ScalarTypeOf(in.type);
      std::optional<ScalarType> to = ScalarTypeOf(in.result_type);
      if (!from || !to) return step;
      step.kind = Step::Kind::kConvert;
      step.type = *from;
      step.to = *to;
      return step;
    }
    case Code::kSlice:
    case Code::kUpdate: {
      const Window& window = windows_[static_cast<size_t>(in.detail)];
      if (!in.view && !window.contiguous && in.count != 1) return step;
      // Start indices of other types (s8, s16, ...): called back, its
      // operands and result named, so no register holds them.
      if (!std::all_of(window.start_types.begin(), window.start_types.end(),
                       [](ElementType type) { return ScalarTypeOf(type).has_value(); })) {
        return step;
      }
      step.kind = Step::Kind::kWindow;
      step.mode = in.view                   ? Step::Mode::kView
                  : in.code == Code::kSlice ? Step::Mode::kSlice
                                            : Step::Mode::kUpdate;
      step.element_bytes = static_cast<int>(window.element_bytes);
      for (size_t d = 0; d < window.dims.size(); ++d) {
        step.starts.push_back({.slot = window.starts[d],
                               .type = *ScalarTypeOf(window.start_types[d]),
                               .limit = std::max<int64_t>(window.dims[d] - window.sizes[d], 0),
                               .stride = window.strides[d] * step.element_bytes});
      }
      return step;
    }
    case Code::kScatterOne: {
      const Window& window = windows_[static_cast<size_t>(in.detail)];
      std::optional<ScalarType> index_type = ScalarTypeOf(window.index_type);
      if (!index_type) return step;
      step.kind = Step::Kind::kWindow;
      step.mode = Step::Mode::kScatterOne;
      step.op = in.scalar;
      step.type = in.scalar_type;
      step.element_bytes = static_cast<int>(window.element_bytes);
      step.index_type = *index_type;
      step.index_stride = window.index_stride * ElementBytes(window.index_type);
      for (const int64_t d : window.index_map) {
        const auto dim = static_cast<size_t>(d);
        step.starts.push_back({.limit = window.dims[dim] - window.sizes[dim],
                               .stride = window.strides[dim] * step.element_bytes});
      }
      return step;
    }
    default: return step;  // kCall
  }
}

std::string LoopProgram::Describe() const {
  const size_t before = prologue_.size() + body_prologue_.size();
  const size_t count = before + condition_.size() + body_.size() + stage_.size() + assign_.size();
  std::string text = StrCat("loop program: ", count, " instructions");
  if (before > 0) text += StrCat(", ", before, " before the loop");
  const auto views = std::count_if(body_.begin(), body_.end(),
                                   [](const Instruction& instruction) { return instruction.view; });
  if (views > 0) text += StrCat(", ", views, views == 1 ? " slice" : " slices", " read in place");
  if (code_ != nullptr) text += StrCat(", ", code_->code_bytes(), " bytes of machine code");
  return text;
}

Status LoopProgram::RunInstructions(std::span<const Instruction> code, uint8_t** at) const {
  for (const Instruction& in : code) {
    // Slot -1 (no operand) is null: `at` has one entry before slot 0.
    const uint8_t* a = at[in.operands[0]];
    const uint8_t* b = at[in.operands[1]];
    const uint8_t* c = at[in.operands[2]];
    uint8_t* out = at[in.result];
    switch (in.code) {
      case Code::kScalar: in.step(a, b, c, out, in.count); break;
      case Code::kUnary:
        KILN_RETURN_IF_ERROR(kernels::Unary(in.unary, in.type, a, out, in.count));
        break;
      case Code::kBinary:
        KILN_RETURN_IF_ERROR(kernels::Binary(in.binary, in.type, a, b, out, in.count));
        break;
      case Code::kCompare:
        KILN_RETURN_IF_ERROR(kernels::Compare(in.direction, in.compare, in.type, a, b,
                                              reinterpret_cast<bool*>(out), in.count));
        break;
      case Code::kSelect:
        KILN_RETURN_IF_ERROR(kernels::Select(in.type, reinterpret_cast<const bool*>(a),
                                             in.first_scalar, b, c, out, in.count));
        break;
      case Code::kClamp:
        KILN_RETURN_IF_ERROR(kernels::Clamp(in.type, a, in.first_scalar, b, c, in.last_scalar, out,
                                            in.count));
        break;
      case Code::kConvert:
        KILN_RETURN_IF_ERROR(kernels::Convert(in.type, a, in.result_type, out, in.count));
        break;
      case Code::kFill: kernels::Fill(ElementBytes(in.type), a, out, in.count); break;
      case Code::kCopy:
        // A scalar carry's next value, each trip: no call for 4 or 8 bytes.
        if (out == a) break;
        if (in.count == 4) {
          std::memcpy(out, a, 4);
        } else if (in.count == 8) {
          std::memcpy(out, a, 8);
        } else {
          CopyBytes(out, a, in.count);
        }
        break;
      case Code::kStrided: {
        const Strided& strided = strided_[static_cast<size_t>(in.detail)];
        kernels::CopyStrided(strided.element_bytes, strided.dims,
                             a + strided.offset * static_cast<int64_t>(strided.element_bytes),
                             strided.strides, out);
        break;
      }
      case Code::kSlice:
      case Code::kUpdate: {
        const Window& window = windows_[static_cast<size_t>(in.detail)];
        int64_t offset = 0;
        for (size_t d = 0; d < window.dims.size(); ++d) {
          const int64_t start = kernels::LoadIndex(window.start_types[d], at[window.starts[d]], 0);
          offset += std::clamp<int64_t>(start, 0,
                                        std::max<int64_t>(window.dims[d] - window.sizes[d], 0)) *
                    window.strides[d];
        }
        const auto bytes = static_cast<int64_t>(window.element_bytes);
        if (in.view) {
          at[in.result] = const_cast<uint8_t*>(a) + offset * bytes;
          break;
        }
        if (window.contiguous) {
          if (in.code == Code::kSlice) {
            CopyBytes(out, a + offset * bytes, in.count * bytes);
          } else {
            CopyBytes(out + offset * bytes, b, in.count * bytes);
          }
        } else if (in.code == Code::kSlice) {
          if (in.count == 1) {
            CopyBytes(out, a + offset * bytes, bytes);
          } else {
            kernels::CopyStrided(window.element_bytes, window.sizes, a + offset * bytes,
                                 window.strides, out);
          }
        } else if (in.count == 1) {
          CopyBytes(out + offset * bytes, b, bytes);
        } else if (in.count > 0) {
          kernels::CopyBox(window.element_bytes, window.sizes, b, window.size_strides,
                           out + offset * bytes, window.strides);
        }
        break;
      }
      case Code::kScatterOne: {
        const Window& window = windows_[static_cast<size_t>(in.detail)];
        int64_t offset = 0;
        bool fits = true;
        for (size_t k = 0; k < window.index_map.size(); ++k) {
          const int64_t start = kernels::LoadIndex(window.index_type, a,
                                                   static_cast<int64_t>(k) * window.index_stride);
          const auto d = static_cast<size_t>(window.index_map[k]);
          fits = fits && start >= 0 && start <= window.dims[d] - window.sizes[d];
          if (fits) offset += start * window.strides[d];
        }
        if (!fits) break;
        const auto bytes = static_cast<int64_t>(window.element_bytes);
        uint8_t* to = out + offset * bytes;
        if (in.scalar == ScalarOp::kMove) {
          CopyBytes(to, b, in.count * bytes);
          break;
        }
        switch (in.scalar_type) {
          case ScalarType::kPred: InlineStep<bool>(in.scalar, to, b, nullptr, to, in.count); break;
          case ScalarType::kS32:
            InlineStep<int32_t>(in.scalar, to, b, nullptr, to, in.count);
            break;
          case ScalarType::kS64:
            InlineStep<int64_t>(in.scalar, to, b, nullptr, to, in.count);
            break;
          case ScalarType::kU32:
            InlineStep<uint32_t>(in.scalar, to, b, nullptr, to, in.count);
            break;
          case ScalarType::kU64:
            InlineStep<uint64_t>(in.scalar, to, b, nullptr, to, in.count);
            break;
          case ScalarType::kF32: InlineStep<float>(in.scalar, to, b, nullptr, to, in.count); break;
          case ScalarType::kF64: InlineStep<double>(in.scalar, to, b, nullptr, to, in.count); break;
        }
        break;
      }
      case Code::kScatter: {
        const Scatter& scatter = scatters_[static_cast<size_t>(in.detail)];
        KILN_RETURN_IF_ERROR(kernels::Scatter(scatter.type, scatter.op, scatter.geometry,
                                              scatter.index_type, a, b, out));
        break;
      }
    }
  }
  return Status::Ok();
}

Status LoopProgram::Run(RunContext& ctx) const {
  ExecutionEnv& env = ctx.env();
  uint8_t* scratch = nullptr;
  if (scratch_bytes_ > 0) {
    scratch = env.Arena(scratch_key_.get(), scratch_bytes_);
    if (scratch == nullptr) {
      return ResourceExhausted("out of host memory: the while loop needs ", scratch_bytes_,
                               " bytes of scratch");
    }
  }
  const size_t count = carries_.size();
  for (size_t i = 0; i < count; ++i) {
    if (carry_bytes_[i] > 0 && ctx.out(i) != ctx.in(i)) {
      kernels::CopyBytes(ctx.out(i), ctx.in(i), static_cast<size_t>(carry_bytes_[i]));
    }
  }
  // One null entry before slot 0, for the operands an instruction lacks (-1).
  auto** at = reinterpret_cast<uint8_t**>(env.Pointers(this, slots_.size() + 1)) + 1;
  at[-1] = nullptr;
  for (size_t s = 0; s < slots_.size(); ++s) {
    const Slot& slot = slots_[s];
    const auto index = static_cast<size_t>(slot.index);
    switch (slot.source) {
      case Source::kCarry: at[s] = static_cast<uint8_t*>(ctx.out(index)); break;
      case Source::kCapture:
        at[s] = static_cast<uint8_t*>(const_cast<void*>(ctx.in(count + index)));
        break;
      case Source::kConstant: at[s] = constants_[index]->data(); break;
      case Source::kScratch: at[s] = scratch + slot.index; break;
    }
  }
  if (code_ != nullptr) {
    CallContext context{this, Status::Ok()};
    if (code_->Run(at, &context) != 0) return context.status;
    return Status::Ok();
  }
  KILN_RETURN_IF_ERROR(RunInstructions(prologue_, at));
  for (bool first = true;; first = false) {
    KILN_RETURN_IF_ERROR(RunInstructions(condition_, at));
    if (!*reinterpret_cast<const bool*>(at[proceed_])) break;
    // The body's invariants only once a trip runs: a loop of no trips
    // computes nothing of its body.
    if (first) KILN_RETURN_IF_ERROR(RunInstructions(body_prologue_, at));
    KILN_RETURN_IF_ERROR(RunInstructions(body_, at));
    KILN_RETURN_IF_ERROR(RunInstructions(stage_, at));
    KILN_RETURN_IF_ERROR(RunInstructions(assign_, at));
  }
  return Status::Ok();
}

}  // namespace kiln::compiler
