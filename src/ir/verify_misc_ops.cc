// Verifier rules for the remaining ops: tuples, tokens, optimization_barrier,
// rng, rng_bit_generator, custom_call, composite, infeed / outfeed /
// send / recv, and stablehlo.return (whose types its parent op checks).
#include <cctype>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

Status VerifyTuple(const OpContext& context) {
  const Type expected = Type::Tuple(context.OperandTypes());
  if (context.result(0) != expected) {
    return context.Fail("C1", "result must have type ", TypeText(expected), ", found ",
                        TypeText(context.result(0)));
  }
  return Status::Ok();
}

Status VerifyGetTupleElement(const OpContext& context) {
  const Type& tuple = context.operand(0);
  if (!HasKind(tuple, TypeKind::kTuple)) {
    return context.Fail("I1", "operand must be a tuple, found ", TypeText(tuple));
  }
  KILN_ASSIGN_OR_RETURN(int64_t index, context.Int("index"));
  const int64_t size = static_cast<int64_t>(tuple.members().size());
  if (index < 0 || index >= size) {
    return context.Fail("C1", "index ", index, " must be in [0, ", size, ") for ", TypeText(tuple));
  }
  const Type& expected = tuple.members()[static_cast<size_t>(index)];
  if (context.result(0) != expected) {
    return context.Fail("C2", "result must have type ", TypeText(expected), ", found ",
                        TypeText(context.result(0)));
  }
  return Status::Ok();
}

// after_all, create_token: token operands (if any) and a token result.
Status VerifyTokens(const OpContext& context) {
  for (size_t i = 0; i < context.num_operands(); ++i) {
    if (!HasKind(context.operand(i), TypeKind::kToken)) {
      return context.Fail("I1", "operand #", i, " must be a token, found ",
                          TypeText(context.operand(i)));
    }
  }
  if (!HasKind(context.result(0), TypeKind::kToken)) {
    return context.Fail("", "result must be a token, found ", TypeText(context.result(0)));
  }
  return Status::Ok();
}

Status VerifyOptimizationBarrier(const OpContext& context) {
  std::vector<Type> operands = context.OperandTypes();
  std::vector<Type> results = context.ResultTypes();
  if (operands != results) {
    return context.Fail("C1", "results ", TypesText(results), " must have the operand types ",
                        TypesText(operands));
  }
  return Status::Ok();
}

Status VerifyRng(const OpContext& context) {
  const Type& a = context.operand(0);
  const Type& b = context.operand(1);
  const Type& result = context.result(0);
  const uint16_t classes = kBoolClass | kIntegerClasses | kFloatClass;
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I1", "a", a, classes));
  KILN_RETURN_IF_ERROR(context.ExpectScalar("I1", "a", a));
  KILN_RETURN_IF_ERROR(context.ExpectScalar("I2", "b", b));
  if (ElementOf(b) != ElementOf(a) || ElementOf(result) != ElementOf(a)) {
    return context.Fail("C1", "a, b and result must have one element type, found ", TypeText(a),
                        ", ", TypeText(b), " and ", TypeText(result));
  }
  KILN_ASSIGN_OR_RETURN(std::string_view distribution, context.Enum("rng_distribution"));
  if (distribution != "UNIFORM" && distribution != "NORMAL") {
    return context.Fail("I4", "rng_distribution must be UNIFORM or NORMAL, found ", distribution);
  }
  if (distribution == "NORMAL" && ClassOf(ElementOf(a)) != kFloatClass) {
    return context.Fail("C2", "a NORMAL distribution needs floating-point a and b, found ",
                        TypeText(a));
  }
  const Type& shape = context.operand(2);
  KILN_RETURN_IF_ERROR(context.ExpectClasses("I3", "shape", shape, kIntegerClasses | kIndexClass));
  if (Rank(shape) != 1 || (shape.dims()[0] != kDynamic && shape.dims()[0] != Rank(result))) {
    return context.Fail("C3", "shape ", TypeText(shape), " must list one size per dimension of ",
                        TypeText(result));
  }
  return Status::Ok();
}

Status VerifyRngBitGenerator(const OpContext& context) {
  const Type& state = context.operand(0);
  KILN_ASSIGN_OR_RETURN(std::string_view algorithm, context.Enum("rng_algorithm"));
  if (algorithm != "DEFAULT" && algorithm != "THREE_FRY" && algorithm != "PHILOX") {
    return context.Fail("I1", "rng_algorithm must be DEFAULT, THREE_FRY or PHILOX, found ",
                        algorithm);
  }
  if (!TypesCompatible(context.result(0), state)) {
    return context.Fail("C1", "output_state must have the type of initial_state ", TypeText(state),
                        ", found ", TypeText(context.result(0)));
  }
  KILN_RETURN_IF_ERROR(context.ExpectClasses("", "output", context.result(1),
                                             kIntegerClasses | kFloatClass));
  // C2 counts ui64 words; states of other types (JAX may pass ui32 keys)
  // are left to the kernel.
  if (Rank(state) != 1 || ElementOf(state) != Type::Element(ElementType::kU64) ||
      state.dims()[0] == kDynamic) {
    return Status::Ok();
  }
  const int64_t size = state.dims()[0];
  if ((algorithm == "THREE_FRY" && size != 2) ||
      (algorithm == "PHILOX" && size != 2 && size != 3)) {
    return context.Fail("C2", algorithm, " needs an initial_state of ",
                        algorithm == "PHILOX" ? "2 or 3" : "2", " ui64 values, found ",
                        TypeText(state));
  }
  return Status::Ok();
}

Status VerifyCustomCall(const OpContext& context) {
  KILN_ASSIGN_OR_RETURN(std::string_view target, context.String("call_target_name"));
  if (target.empty()) return context.Fail("I2", "call_target_name must not be empty");
  KILN_RETURN_IF_ERROR(context.BoolOr("has_side_effect", false).status());
  Attribute called = context.op().GetAttr("called_computations");
  if (!called) return Status::Ok();
  if (!called.Is(AttrKind::kArray)) {
    return context.Fail("I6", "attribute 'called_computations' must be an array of symbols");
  }
  // Upstream does not require the callees to exist (a backend may supply
  // them), so neither does Kiln.
  for (const Attribute& callee : called->elements) {
    if (!callee.Is(AttrKind::kSymbolRef) && !callee.Is(AttrKind::kString)) {
      return context.Fail("I6", "called_computations must hold symbol references");
    }
  }
  return Status::Ok();
}

// A namespaced op name: [a-zA-Z][a-zA-Z0-9_]* then one or more
// .[a-zA-Z0-9_$]+ (upstream's regular expression).
bool IsNamespacedOpName(std::string_view name) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  if (name.empty() || !std::isalpha(static_cast<unsigned char>(name[0]))) return false;
  size_t i = 1;
  while (i < name.size() && word(name[i])) ++i;
  int parts = 0;
  while (i < name.size()) {
    if (name[i] != '.') return false;
    const size_t start = ++i;
    while (i < name.size() && (word(name[i]) || name[i] == '$')) ++i;
    if (i == start) return false;
    ++parts;
  }
  return parts > 0;
}

Status VerifyComposite(const OpContext& context) {
  KILN_ASSIGN_OR_RETURN(std::string_view name, context.String("name"));
  if (!IsNamespacedOpName(name)) {
    return context.Fail("C1", "name \"", name,
                        "\" must be a namespaced op name such as "
                        "\"my_namespace.my_op\"");
  }
  KILN_RETURN_IF_ERROR(context.IntOr("version", 0).status());
  Attribute decomposition = context.op().GetAttr("decomposition");
  if (!decomposition.Is(AttrKind::kSymbolRef) || decomposition->symbol_path.size() != 1) {
    return context.Fail("I4", "attribute 'decomposition' must be a flat symbol reference");
  }
  const std::string& callee = decomposition->symbol_path[0];
  const Operation* func = context.LookupFunction(callee);
  if (func == nullptr) {
    return context.Fail("C2", "decomposition @", callee, " is not defined in the module");
  }
  Attribute function_type = func->GetAttr("function_type");
  if (!function_type.Is(AttrKind::kType) || !HasKind(function_type->type, TypeKind::kFunction)) {
    return context.Fail("C2", "decomposition @", callee, " has no function_type");
  }
  const Type& type = function_type->type;
  std::vector<Type> operands = context.OperandTypes();
  if (operands != type.members()) {
    return context.Fail("C3", "operand types ", TypesText(operands), " do not match @", callee,
                        "'s inputs ", TypesText(type.members()));
  }
  std::vector<Type> results = context.ResultTypes();
  if (results != type.results()) {
    return context.Fail("C4", "result types ", TypesText(results), " do not match @", callee,
                        "'s results ", TypesText(type.results()));
  }
  return Status::Ok();
}

// infeed, recv: a token operand; results are tensors then a token.
Status VerifyTokenInput(const OpContext& context) {
  if (!HasKind(context.operand(0), TypeKind::kToken)) {
    return context.Fail("I1", "operand must be a token, found ", TypeText(context.operand(0)));
  }
  const size_t last = context.num_results() - 1;
  for (size_t i = 0; i < last; ++i) {
    if (!IsRankedTensor(context.result(i))) {
      return context.Fail("C2", "result #", i, " must be a tensor, found ",
                          TypeText(context.result(i)));
    }
  }
  if (!HasKind(context.result(last), TypeKind::kToken)) {
    return context.Fail("C3", "the last result must be a token, found ",
                        TypeText(context.result(last)));
  }
  return Status::Ok();
}

// outfeed, send: tensors then a token in; a token out.
Status VerifyTokenOutput(const OpContext& context) {
  const size_t last = context.num_operands() - 1;
  for (size_t i = 0; i < last; ++i) {
    if (!IsRankedTensor(context.operand(i))) {
      return context.Fail("I1", "input #", i, " must be a tensor, found ",
                          TypeText(context.operand(i)));
    }
  }
  if (!HasKind(context.operand(last), TypeKind::kToken)) {
    return context.Fail("I2", "the last operand must be a token, found ",
                        TypeText(context.operand(last)));
  }
  if (!HasKind(context.result(0), TypeKind::kToken)) {
    return context.Fail("", "result must be a token, found ", TypeText(context.result(0)));
  }
  return Status::Ok();
}

constexpr FamilyRule kRules[] = {
    {OpCode::kTuple, VerifyTuple, 0},
    {OpCode::kGetTupleElement, VerifyGetTupleElement, 0},
    {OpCode::kAfterAll, VerifyTokens, 0},
    {OpCode::kCreateToken, VerifyTokens, 0},
    {OpCode::kOptimizationBarrier, VerifyOptimizationBarrier, 0},
    {OpCode::kRng, VerifyRng, kTensors},
    {OpCode::kRngBitGenerator, VerifyRngBitGenerator, kTensors},
    {OpCode::kCustomCall, VerifyCustomCall, 0},
    // composite_regions model ops with bodies; any terminator.
    {OpCode::kComposite, VerifyComposite, 0},
    {OpCode::kInfeed, VerifyTokenInput, 0},
    {OpCode::kRecv, VerifyTokenInput, 0},
    {OpCode::kOutfeed, VerifyTokenOutput, 0},
    {OpCode::kSend, VerifyTokenOutput, 0},
    {OpCode::kAsyncStart, nullptr, kReturnTerminated},
    {OpCode::kAsyncDone, nullptr, 0},
    {OpCode::kReturn, nullptr, 0},
};

}  // namespace

std::span<const FamilyRule> MiscRules() { return kRules; }

}  // namespace kiln::ir::verify_internal
