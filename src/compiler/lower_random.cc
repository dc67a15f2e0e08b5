// Lowering of the random-number ops onto kernels/rng.h:
// rng_bit_generator (stateless: bit-exact with XLA's CPU backend, DEFAULT
// being PHILOX there) and rng (stateful, implementation-defined: XLA's
// distributions over Philox bits with Kiln's own key and counter).
#include <atomic>
#include <cstring>

#include "compiler/lowering.h"
#include "kernels/rng.h"

namespace kiln::compiler {
namespace {

StatusOr<kernels::RngAlgorithm> AlgorithmOf(const ir::Operation& op) {
  const std::string_view name = EnumAttr(op, "rng_algorithm", "DEFAULT");
  if (name == "THREE_FRY") return kernels::RngAlgorithm::kThreeFry;
  // XLA's CPU backend expands DEFAULT as PHILOX (RngBitGeneratorExpander).
  if (name == "PHILOX" || name == "DEFAULT") return kernels::RngAlgorithm::kPhilox;
  return InvalidArgument("unknown rng_algorithm ", name);
}

Status LowerRngBitGenerator(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(kernels::RngAlgorithm algorithm, AlgorithmOf(op));
  KILN_ASSIGN_OR_RETURN(Shape state, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape output, lowering.ShapeOf(op.result(1)));
  if (state.element_type != ElementType::kU64 || state.dims.size() != 1) {
    return Unimplemented("Kiln's rng_bit_generator takes a rank-1 ui64 state, found ",
                         state.ToString());
  }
  const int64_t state_size = state.dims[0];
  KILN_RETURN_IF_ERROR(kernels::CheckRngBitGenerator(algorithm, state_size, output.element_type));
  return lowering.Emit(op, [algorithm, state_size, output](RunContext& ctx) {
    // Read the state before writing: the outputs never alias the input, but
    // the kernel copes either way.
    kernels::RngBitGenerator(algorithm, static_cast<const uint64_t*>(ctx.in(0)), state_size,
                             output.element_type, output.dims, ctx.out(1),
                             static_cast<uint64_t*>(ctx.out(0)));
    return Status::Ok();
  });
}

// The process-wide 128-bit counter every rng op draws from (as XLA's
// RngGetAndUpdateState), so that each run gives new numbers. The key is a
// fixed constant: XLA's is random per process, so no program can rely on it.
constexpr uint64_t kRngKey = 0x4b494c4e52414e44ull;  // "KILNRAND"
std::atomic<uint64_t> rng_counter{0};

Status LowerRng(Lowering& lowering, const ir::Operation& op) {
  const std::string_view name = EnumAttr(op, "rng_distribution", "UNIFORM");
  const kernels::RngDistribution distribution = name == "NORMAL"
                                                    ? kernels::RngDistribution::kNormal
                                                    : kernels::RngDistribution::kUniform;
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  const ElementType type = result.element_type;
  // Check the type now rather than at every run.
  static constexpr ElementType kSupported[] = {
      ElementType::kF16, ElementType::kBF16, ElementType::kF32, ElementType::kF64,
      ElementType::kS32, ElementType::kU32,  ElementType::kS64, ElementType::kU64};
  bool supported = false;
  for (ElementType candidate : kSupported) supported = supported || candidate == type;
  if (!supported) {
    return Unimplemented("Kiln's rng runs on f16, bf16, f32, f64 and 32/64-bit integers, not ",
                         GetElementTypeInfo(type).name);
  }
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < 2; ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    inputs.push_back(input);
  }
  // Counters per run: one per four 32-bit words, as Philox makes them
  // (twice as many for the pairs a NORMAL distribution draws).
  const size_t bytes = GetElementTypeInfo(type).storage_bytes;
  const int64_t words = result.NumElements() * (bytes == 8 ? 2 : 1) *
                        (distribution == kernels::RngDistribution::kNormal ? 2 : 1);
  const auto counters = static_cast<uint64_t>((words + 3) / 4 + 1);
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            op, std::move(inputs), {result},
                            [distribution, type, dims = result.dims, counters](RunContext& ctx) {
                              const uint64_t counter[2] = {rng_counter.fetch_add(counters), 0};
                              return kernels::RngDistributionKernel(distribution, type, ctx.in(0),
                                                                    ctx.in(1), dims, kRngKey,
                                                                    counter, ctx.out(0));
                            },
                            {}, {}, /*foldable=*/false));
  lowering.Bind(op.result(0), outputs[0]);
  return Status::Ok();
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kRngBitGenerator, LowerRngBitGenerator},
    {ir::OpCode::kRng, LowerRng},
};

}  // namespace

std::span<const LoweringRule> RandomLowerings() { return kRules; }

}  // namespace kiln::compiler
