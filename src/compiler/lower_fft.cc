// Lowering of stablehlo.fft onto kernels/fft.h: the plan (factorization,
// twiddles, Bluestein chirps) is built here, once, and shared by every run
// of the node.
#include "compiler/lowering.h"
#include "kernels/fft.h"

namespace kiln::compiler {
namespace {

bool IsComplex(ElementType type) { return type == ElementType::kC64 || type == ElementType::kC128; }
bool IsReal(ElementType type) { return type == ElementType::kF32 || type == ElementType::kF64; }

Status LowerFft(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  const std::string_view name = EnumAttr(op, "fft_type", "FFT");
  kernels::FftType type;
  if (name == "FFT") {
    type = kernels::FftType::kFft;
  } else if (name == "IFFT") {
    type = kernels::FftType::kIfft;
  } else if (name == "RFFT") {
    type = kernels::FftType::kRfft;
  } else if (name == "IRFFT") {
    type = kernels::FftType::kIrfft;
  } else {
    return InvalidArgument("unknown fft_type ", name);
  }
  const std::vector<int64_t> lengths = IntsAttr(op, "fft_length");
  const size_t rank = operand.dims.size();
  if (lengths.empty() || lengths.size() > 3 || lengths.size() > rank ||
      result.dims.size() != rank) {
    return InvalidArgument("fft_length must have 1 to 3 entries, at most the operand's rank ", rank,
                           "; found ", lengths.size());
  }
  const bool real_in = type == kernels::FftType::kRfft;
  const bool real_out = type == kernels::FftType::kIrfft;
  if ((real_in ? !IsReal(operand.element_type) : !IsComplex(operand.element_type)) ||
      (real_out ? !IsReal(result.element_type) : !IsComplex(result.element_type))) {
    return Unimplemented(name, " of ", operand.ToString(), " to ", result.ToString(),
                         " is not supported (expected c64/c128, or f32/f64 on the real side)");
  }
  // The real side's trailing dimensions are the lengths; the complex side of
  // RFFT/IRFFT has lengths.back() / 2 + 1 in its last dimension.
  const size_t first = rank - lengths.size();
  std::vector<int64_t> expected_in = operand.dims, expected_out = operand.dims;
  for (size_t i = 0; i < lengths.size(); ++i) {
    expected_in[first + i] = expected_out[first + i] = lengths[i];
  }
  const int64_t half = lengths.back() == 0 ? 0 : lengths.back() / 2 + 1;
  if (real_in) expected_out.back() = half;
  if (real_out) expected_in.back() = half;
  if (operand.dims != expected_in || result.dims != expected_out) {
    return InvalidArgument(name, " with fft_length of ", lengths.size(),
                           " entries does not fit operand ", operand.ToString(), " and result ",
                           result.ToString());
  }
  int64_t batch = 1;
  for (size_t i = 0; i < first; ++i) batch *= operand.dims[i];
  const bool double_precision = operand.element_type == ElementType::kC128 ||
                                operand.element_type == ElementType::kF64;
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<const kernels::FftPlan> plan,
                        kernels::FftPlan::Create(type, double_precision, batch, lengths));
  return lowering.Emit(op, [plan](RunContext& ctx) {
    plan->Run(ctx.in(0), ctx.out(0));
    return Status::Ok();
  });
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kFft, LowerFft},
};

}  // namespace

std::span<const LoweringRule> FftLowerings() { return kRules; }

}  // namespace kiln::compiler
