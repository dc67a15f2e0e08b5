// Emitters of values passed through or made: parameters, tuples, copies,
// barriers, constants and random numbers (and custom-call, refused).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/hlo/hlo_emit.h"

namespace kiln::frontend::hlo {
namespace {

// parameter: the leaves bound to its parameter_number; no op.
Status EmitParameter(Emission& e) {
  const auto number = static_cast<size_t>(e.in.parameter_number);
  if (e.in.parameter_number < 0 || number >= e.parameters.size()) {
    return InvalidArgument("parameter number ", e.in.parameter_number, " of ", e.parameters.size());
  }
  e.result = e.parameters[number];
  return Status::Ok();
}

// tuple, copy and domain: the operands' leaves, unchanged.
Status EmitPassThrough(Emission& e) {
  e.result = e.flat;
  return Status::Ok();
}

// get-tuple-element: the operand's leaves of that element; no op.
Status EmitGetTupleElement(Emission& e) {
  KILN_RETURN_IF_ERROR(e.ExpectOperands(1));
  // The operand's shape is not stored with it: count leaves per member
  // from this instruction's own shape and the operand's leaves.
  const Instruction& in = e.in;
  const int64_t index = in.tuple_index;
  const std::vector<Instruction>& instructions = e.computation.instructions;
  auto it = std::find_if(instructions.begin(), instructions.end(),
                         [&](const Instruction& i) { return i.id == in.operand_ids[0]; });
  if (it == instructions.end() || it->shape.type != PrimitiveType::kTuple || index < 0 ||
      static_cast<size_t>(index) >= it->shape.tuple.size()) {
    return InvalidArgument("expected a tuple operand with an element ", index);
  }
  size_t start = 0;
  for (int64_t i = 0; i < index; ++i) start += LeafCount(it->shape.tuple[i]);
  const size_t count = LeafCount(it->shape.tuple[index]);
  if (start + count > e.operands[0].size()) {
    return InvalidArgument("tuple element ", index, " is out of the operand's leaves");
  }
  e.result.assign(e.operands[0].begin() + start, e.operands[0].begin() + start + count);
  return Status::Ok();
}

// constant: stablehlo.constant of the literal's bytes (array literals only).
Status EmitConstant(Emission& e) {
  const Instruction& in = e.in;
  if (!in.has_literal) return InvalidArgument("expected a literal, found none");
  if (in.shape.type == PrimitiveType::kTuple || in.literal.shape.type == PrimitiveType::kTuple) {
    return Unimplemented("tuple constants are not supported");
  }
  KILN_ASSIGN_OR_RETURN(ElementType element, ToElementType(in.shape.type));
  const size_t bytes = GetElementTypeInfo(element).storage_bytes;
  if (bytes == 0) return InvalidArgument("constant of a non-array type");
  const int64_t elements = NumElements(in.shape);
  if (elements < 0 || static_cast<uint64_t>(elements) > in.literal.data.size()) {
    return InvalidArgument("literal holds ", in.literal.data.size(),
                           " bytes, fewer than its shape's elements");
  }
  const auto count = static_cast<size_t>(elements);
  if (in.literal.data.size() != bytes * count) {
    return InvalidArgument("literal holds ", in.literal.data.size(), " bytes; its shape needs ",
                           bytes * count, " (", count, " elements of ", bytes, " bytes)");
  }
  KILN_ASSIGN_OR_RETURN(std::string type, TypeText(in.shape));
  const std::string data = count == 0 ? "" : Hex(in.literal.data);
  return e.Emit("stablehlo.constant", {}, "value = dense<" + data + "> : " + type);
}

// opt-barrier: stablehlo.optimization_barrier on every leaf.
Status EmitOptimizationBarrier(Emission& e) {
  return e.Emit("stablehlo.optimization_barrier", e.flat, "");
}

// rng-bit-generator: stablehlo.rng_bit_generator, the algorithm checked.
Status EmitRngBitGenerator(Emission& e) {
  static constexpr const char* kAlgorithms[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
  if (e.in.rng_algorithm < 0 || e.in.rng_algorithm > 2) {
    return InvalidArgument("expected rng_algorithm 0, 1 or 2, found ", e.in.rng_algorithm);
  }
  return e.Emit("stablehlo.rng_bit_generator", e.flat,
                std::string("rng_algorithm = #stablehlo<rng_algorithm ") +
                    kAlgorithms[e.in.rng_algorithm] + ">");
}

// rng: stablehlo.rng, the distribution checked and the result shape made a
// constant operand.
Status EmitRng(Emission& e) {
  // StableHLO's rng takes the result shape as a third operand.
  const Instruction& in = e.in;
  if (in.distribution != 1 && in.distribution != 2) {
    return InvalidArgument("expected distribution RNG_UNIFORM (1) or RNG_NORMAL (2), found ",
                           in.distribution);
  }
  KILN_RETURN_IF_ERROR(e.ExpectOperands(2));
  Leaf shape{e.converter.NewValueName(),
             Shape{PrimitiveType::kS64, {static_cast<int64_t>(in.shape.dims.size())}, {}, false}};
  std::vector<uint8_t> dims(in.shape.dims.size() * 8);
  if (!dims.empty()) std::memcpy(dims.data(), in.shape.dims.data(), dims.size());
  KILN_ASSIGN_OR_RETURN(std::string type, TypeText(shape.shape));
  KILN_ASSIGN_OR_RETURN(std::string constant,
                        e.converter.OpText("stablehlo.constant", shape.name, {},
                                           "value = dense<" + (dims.empty() ? "" : Hex(dims)) +
                                               "> : " + type,
                                           "", {shape}, in));
  e.out += e.indent + constant + "\n";
  Leaves args = e.flat;
  args.push_back(shape);
  return e.Emit("stablehlo.rng", args,
                std::string("rng_distribution = #stablehlo<rng_distribution ") +
                    (in.distribution == 1 ? "UNIFORM" : "NORMAL") + ">");
}

// custom-call: GSPMD's Sharding, SPMDFullToShardShape and
// SPMDShardToFullShape (PyTorch/XLA's SPMD mode writes them), each with the
// instruction's sharding; every other target is refused by name.
Status EmitCustomCall(Emission& e) {
  const std::string& target = e.in.custom_call_target;
  if (target != "Sharding" && target != "SPMDFullToShardShape" &&
      target != "SPMDShardToFullShape") {
    return Unimplemented("custom-call target \"", target,
                         "\" is not supported by Kiln's HLO reader");
  }
  KILN_RETURN_IF_ERROR(e.ExpectOperands(1));
  KILN_ASSIGN_OR_RETURN(Leaf operand, Single(e.operands[0], 0));
  if (e.in.sharding.size() != 1) {
    return InvalidArgument("custom-call ", target, " expects the sharding of one array, found ",
                           e.in.sharding.size());
  }
  if (target == "Sharding" && e.in.sharding[0] == "{unknown}") {
    e.result = {operand};  // a placeholder: no constraint
    return Status::Ok();
  }
  return e.Emit("stablehlo.custom_call", {operand}, ShardingProperties(target, e.in.sharding[0]));
}

// This family's opcodes and their emitters.
constexpr EmitRule kRules[] = {
    {"parameter", EmitParameter},
    {"tuple", EmitPassThrough},
    {"get-tuple-element", EmitGetTupleElement},
    {"copy", EmitPassThrough},
    {"domain", EmitPassThrough},
    {"constant", EmitConstant},
    {"opt-barrier", EmitOptimizationBarrier},
    {"rng-bit-generator", EmitRngBitGenerator},
    {"rng", EmitRng},
    {"custom-call", EmitCustomCall},
};

}  // namespace

std::span<const EmitRule> ValueEmitters() { return kRules; }

}  // namespace kiln::frontend::hlo
