#include "compiler/scalar_program.h"

#include <cstring>
#include <unordered_map>

#include "compiler/elementwise_ops.h"
#include "compiler/lowering.h"

namespace kiln::compiler {
namespace {

// The element type of a 0-d tensor of a type the elementwise kernels
// compute in (sub-byte integers included, f8 and friends not), or nullopt.
std::optional<ElementType> KernelScalar(const ir::Value* value) {
  const ir::Type& type = value->type();
  if (!type.Is(ir::TypeKind::kTensor) || !type.dims().empty()) return std::nullopt;
  const ir::Type element = type.element();
  if (!element.Is(ir::TypeKind::kElement)) return std::nullopt;
  const ElementType result = element.element_type();
  if (!ElementwiseKernelType(result)) return std::nullopt;
  return result;
}

size_t Bytes(ElementType type) { return GetElementTypeInfo(type).storage_bytes; }

constexpr size_t kAlignment = 64;

}  // namespace

ElementType ScalarProgram::result_type(size_t i) const {
  return registers_[static_cast<size_t>(results_[i])].type;
}

std::optional<ScalarProgram> ScalarProgram::Compile(const ir::Region& region) {
  if (region.num_blocks() != 1) return std::nullopt;
  const ir::Block& block = region.block(0);
  const ir::Operation* terminator = block.back();
  if (terminator == nullptr) return std::nullopt;
  ScalarProgram program;
  std::unordered_map<const ir::Value*, int> registers;
  auto add_register = [&](const ir::Value* value, Source source, size_t index, ElementType type) {
    registers[value] = static_cast<int>(program.registers_.size());
    program.registers_.push_back({source, index, type});
  };
  for (size_t i = 0; i < block.num_arguments(); ++i) {
    std::optional<ElementType> type = KernelScalar(block.argument(i));
    if (!type) return std::nullopt;
    program.argument_types_.push_back(*type);
    add_register(block.argument(i), Source::kArgument, i, *type);
  }
  for (const auto& op : block.operations()) {
    if (op.get() == terminator) break;
    if (op->num_regions() != 0 || op->num_results() != 1) return std::nullopt;
    const ir::Value* result = op->result(0);
    std::optional<ElementType> result_type = KernelScalar(result);
    if (!result_type) return std::nullopt;
    if (op->code() == ir::OpCode::kConstant) {
      StatusOr<std::vector<uint8_t>> data = DenseData(op->GetAttr("value"),
                                                      Shape{*result_type, {}});
      if (!data.ok() || data->size() != Bytes(*result_type)) return std::nullopt;
      std::vector<uint8_t> lanes(data->size() * kMaxLanes);
      for (size_t l = 0; l < static_cast<size_t>(kMaxLanes); ++l) {
        std::memcpy(lanes.data() + l * data->size(), data->data(), data->size());
      }
      add_register(result, Source::kConstant, program.constants_.size(), *result_type);
      program.constants_.push_back(std::move(lanes));
      continue;
    }
    Instruction instruction{};
    instruction.result_type = *result_type;
    const size_t count = op->operands().size();
    if (count == 0 || count > 3) return std::nullopt;
    for (size_t k = 0; k < count; ++k) {
      auto found = registers.find(op->operand(k));
      if (found == registers.end()) return std::nullopt;  // a captured outer value
      instruction.operands[k] = found->second;
    }
    instruction.type = program.registers_[static_cast<size_t>(instruction.operands[0])].type;
    const ir::OpCode code = op->code();
    if (auto unary = UnaryOpOf(code); unary && count == 1) {
      instruction.kind = Kind::kUnary;
      instruction.unary = *unary;
    } else if (auto binary = BinaryOpOf(code); binary && count == 2) {
      instruction.kind = Kind::kBinary;
      instruction.binary = *binary;
    } else if (code == ir::OpCode::kCompare && count == 2) {
      StatusOr<kernels::CompareDirection> direction = CompareDirectionOf(
          EnumAttr(*op, "comparison_direction"));
      if (!direction.ok()) return std::nullopt;
      instruction.kind = Kind::kCompare;
      instruction.direction = *direction;
      instruction.compare = EnumAttr(*op, "compare_type") == "TOTALORDER"
                                ? kernels::CompareKind::kTotalOrder
                                : kernels::CompareKind::kFloat;
    } else if (code == ir::OpCode::kSelect && count == 3) {
      instruction.kind = Kind::kSelect;
      instruction.type = *result_type;
    } else if (code == ir::OpCode::kConvert && count == 1) {
      if (instruction.type == *result_type) {  // a no-op: the same register
        registers[result] = instruction.operands[0];
        continue;
      }
      instruction.kind = Kind::kConvert;
    } else {
      return std::nullopt;
    }
    const size_t size = Bytes(*result_type) * kMaxLanes;
    const size_t bytes = (size + kAlignment - 1) / kAlignment * kAlignment;
    add_register(result, Source::kScratch, program.scratch_bytes_, *result_type);
    program.scratch_bytes_ += bytes;
    instruction.result = registers[result];
    program.instructions_.push_back(instruction);
  }
  for (const ir::Value* value : terminator->operands()) {
    auto found = registers.find(value);
    if (found == registers.end()) return std::nullopt;
    program.results_.push_back(found->second);
  }
  return program;
}

ScalarProgram::Scratch::Scratch(const ScalarProgram& program)
    : memory_((program.scratch_bytes_ + sizeof(Chunk) - 1) / sizeof(Chunk)),
      pointers_(program.registers_.size()) {
  for (size_t r = 0; r < program.registers_.size(); ++r) {
    const Register& reg = program.registers_[r];
    if (reg.source == Source::kConstant) pointers_[r] = program.constants_[reg.index].data();
    if (reg.source == Source::kScratch) {
      pointers_[r] = reinterpret_cast<const uint8_t*>(memory_.data()) + reg.index;
    }
  }
}

Status ScalarProgram::Run(int64_t lanes, std::span<const void* const> args,
                          std::span<void* const> results, Scratch& scratch) const {
  if (lanes <= 0) return Status::Ok();
  if (lanes > kMaxLanes || args.size() != argument_types_.size() ||
      results.size() != results_.size()) {
    return Internal("a batched region body was run with ", lanes, " lanes, ", args.size(),
                    " arguments and ", results.size(), " results");
  }
  std::vector<const void*>& at = scratch.pointers_;
  for (size_t r = 0; r < registers_.size(); ++r) {
    if (registers_[r].source == Source::kArgument) at[r] = args[registers_[r].index];
  }
  for (const Instruction& instruction : instructions_) {
    const void* a = at[static_cast<size_t>(instruction.operands[0])];
    const void* b = instruction.operands[1] >= 0 ? at[static_cast<size_t>(instruction.operands[1])]
                                                 : nullptr;
    void* out = const_cast<void*>(at[static_cast<size_t>(instruction.result)]);
    switch (instruction.kind) {
      case Kind::kUnary:
        KILN_RETURN_IF_ERROR(kernels::Unary(instruction.unary, instruction.type, a, out, lanes));
        break;
      case Kind::kBinary:
        KILN_RETURN_IF_ERROR(kernels::Binary(instruction.binary, instruction.type, a, b, out,
                                             lanes));
        break;
      case Kind::kCompare:
        KILN_RETURN_IF_ERROR(kernels::Compare(instruction.direction, instruction.compare,
                                              instruction.type, a, b, static_cast<bool*>(out),
                                              lanes));
        break;
      case Kind::kSelect:
        KILN_RETURN_IF_ERROR(kernels::Select(instruction.type, static_cast<const bool*>(a), false,
                                             b, at[static_cast<size_t>(instruction.operands[2])],
                                             out, lanes));
        break;
      case Kind::kConvert:
        KILN_RETURN_IF_ERROR(kernels::Convert(instruction.type, a, instruction.result_type, out,
                                              lanes));
        break;
    }
  }
  for (size_t i = 0; i < results_.size(); ++i) {
    const auto r = static_cast<size_t>(results_[i]);
    std::memcpy(results[i], at[r], Bytes(registers_[r].type) * static_cast<size_t>(lanes));
  }
  return Status::Ok();
}

}  // namespace kiln::compiler
