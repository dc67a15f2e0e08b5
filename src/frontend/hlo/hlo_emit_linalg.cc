// Emitters of linear algebra: dot, convolution, FFT, Cholesky, triangular
// solve and batch normalization.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "frontend/hlo/hlo_emit.h"

namespace kiln::frontend::hlo {
namespace {

// dot: stablehlo.dot_general, naming only the dimension lists it has.
Status EmitDot(Emission& e) {
  const DotDims& dot = e.in.dot;
  std::string dims;
  auto add = [&](const char* name, const std::vector<int64_t>& v) {
    if (v.empty()) return;
    dims += (dims.empty() ? "" : ", ") + std::string(name) + " = " + List(v);
  };
  add("lhs_batching_dimensions", dot.lhs_batch);
  add("rhs_batching_dimensions", dot.rhs_batch);
  add("lhs_contracting_dimensions", dot.lhs_contracting);
  add("rhs_contracting_dimensions", dot.rhs_contracting);
  return e.Emit("stablehlo.dot_general", e.flat,
                "dot_dimension_numbers = #stablehlo.dot<" + dims + ">");
}

// `#stablehlo.conv<raw ...>`: the convolution's dimension numbers.
std::string ConvDimensions(const ConvolutionDims& d) {
  return "#stablehlo.conv<raw input_batch_dimension = " + std::to_string(d.input_batch) +
         ", input_feature_dimension = " + std::to_string(d.input_feature) +
         ", input_spatial_dimensions = " + List(d.input_spatial) +
         ", kernel_input_feature_dimension = " + std::to_string(d.kernel_input_feature) +
         ", kernel_output_feature_dimension = " + std::to_string(d.kernel_output_feature) +
         ", kernel_spatial_dimensions = " + List(d.kernel_spatial) +
         ", output_batch_dimension = " + std::to_string(d.output_batch) +
         ", output_feature_dimension = " + std::to_string(d.output_feature) +
         ", output_spatial_dimensions = " + List(d.output_spatial) + ">";
}

// convolution: stablehlo.convolution; the window gives the dilations,
// strides and padding (window reversal is refused).
Status EmitConvolution(Emission& e) {
  const Instruction& in = e.in;
  std::vector<int64_t> lhs_dilation, rhs_dilation;
  for (const WindowDimension& w : in.window) {
    if (w.reversal) return Unimplemented("convolution with window_reversal");
    lhs_dilation.push_back(w.base_dilation);
    rhs_dilation.push_back(w.window_dilation);
  }
  // As XLA reads them: a count of 0 (unset) is 1.
  const int64_t feature_groups = std::max<int64_t>(in.feature_group_count, 1);
  const int64_t batch_groups = std::max<int64_t>(in.batch_group_count, 1);
  std::string properties = "batch_group_count = " + std::to_string(batch_groups) +
                           " : i64, dimension_numbers = " + ConvDimensions(in.convolution) +
                           ", feature_group_count = " + std::to_string(feature_groups) + " : i64";
  if (!in.window.empty()) {
    properties += ", lhs_dilation = " + I64Array(lhs_dilation) + ", " +
                  WindowAttributes(in.window, false, false) +
                  ", rhs_dilation = " + I64Array(rhs_dilation);
  }
  return e.Emit("stablehlo.convolution", e.flat, properties);
}

// fft: stablehlo.fft, fft_type checked.
Status EmitFft(Emission& e) {
  static constexpr const char* kTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  if (e.in.fft_type < 0 || e.in.fft_type > 3) {
    return InvalidArgument("expected fft_type 0 to 3, found ", e.in.fft_type);
  }
  return e.Emit("stablehlo.fft", e.flat,
                "fft_length = " + I64Array(e.in.fft_length) + ", fft_type = #stablehlo<fft_type " +
                    kTypes[e.in.fft_type] + ">");
}

// cholesky: stablehlo.cholesky.
Status EmitCholesky(Emission& e) {
  return e.Emit("stablehlo.cholesky", e.flat,
                std::string("lower = ") + (e.in.lower ? "true" : "false"));
}

// triangular-solve: stablehlo.triangular_solve, transpose_a checked.
Status EmitTriangularSolve(Emission& e) {
  const Instruction& in = e.in;
  static constexpr const char* kTranspose[] = {"NO_TRANSPOSE", "NO_TRANSPOSE", "TRANSPOSE",
                                               "ADJOINT"};
  if (in.transpose_a < 0 || in.transpose_a > 3) {
    return InvalidArgument("expected transpose_a 1 to 3, found ", in.transpose_a);
  }
  auto flag = [](bool value) { return value ? std::string("true") : std::string("false"); };
  return e.Emit("stablehlo.triangular_solve", e.flat,
                "left_side = " + flag(in.left_side) + ", lower = " + flag(in.lower) +
                    ", transpose_a = #stablehlo<transpose " + kTranspose[in.transpose_a] +
                    ">, unit_diagonal = " + flag(in.unit_diagonal));
}

// batch-norm-training, -inference and -grad: StableHLO's ops of the same
// name, with epsilon written so that it reads back as the same f32.
Status EmitBatchNorm(Emission& e) {
  std::string name = "stablehlo." + e.in.opcode;
  std::replace(name.begin(), name.end(), '-', '_');
  char epsilon[32];
  std::snprintf(epsilon, sizeof(epsilon), "%.9g", static_cast<double>(e.in.epsilon));
  std::string text = epsilon;
  if (text.find_first_of(".en") == std::string::npos) text += ".0";
  return e.Emit(name, e.flat,
                "epsilon = " + text +
                    " : f32, feature_index = " + std::to_string(e.in.feature_index) + " : i64");
}

// This family's opcodes and their emitters.
constexpr EmitRule kRules[] = {
    {"dot", EmitDot},
    {"convolution", EmitConvolution},
    {"fft", EmitFft},
    {"cholesky", EmitCholesky},
    {"triangular-solve", EmitTriangularSolve},
    {"batch-norm-training", EmitBatchNorm},
    {"batch-norm-inference", EmitBatchNorm},
    {"batch-norm-grad", EmitBatchNorm},
};

}  // namespace

std::span<const EmitRule> LinalgEmitters() { return kRules; }

}  // namespace kiln::frontend::hlo
