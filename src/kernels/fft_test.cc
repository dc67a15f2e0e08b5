// The FFT plans against the plain DFT: every radix, Bluestein lengths,
// inverse scaling, real transforms and 2-D/3-D transforms.
#include "kernels/fft.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace kiln::kernels {
namespace {

template <typename T>
std::vector<std::complex<T>> RandomComplex(int64_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::normal_distribution<double> normal;
  std::vector<std::complex<T>> values(static_cast<size_t>(count));
  for (auto& v : values) v = {static_cast<T>(normal(engine)), static_cast<T>(normal(engine))};
  return values;
}

// max |got - want| / max(1, max |want|)
template <typename T>
double RelativeError(const std::vector<std::complex<T>>& got,
                     const std::vector<std::complex<T>>& want) {
  double error = 0, scale = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    error = std::max(error, static_cast<double>(std::abs(got[i] - want[i])));
    scale = std::max(scale, static_cast<double>(std::abs(want[i])));
  }
  return error / scale;
}

template <typename T>
std::vector<std::complex<T>> RunPlan(FftType type, int64_t batch, std::vector<int64_t> lengths,
                                     const std::vector<std::complex<T>>& input,
                                     int64_t output_count) {
  auto plan = FftPlan::Create(type, sizeof(T) == 8, batch, lengths);
  EXPECT_TRUE(plan.ok());
  std::vector<std::complex<T>> output(static_cast<size_t>(output_count));
  (*plan)->Run(input.data(), output.data());
  return output;
}

class FftLengthTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(FftLengthTest, ComplexMatchesTheDftBothWays) {
  const int64_t n = GetParam();
  const auto input = RandomComplex<double>(2 * n, 1);
  const auto forward = RunPlan<double>(FftType::kFft, 2, {n}, input, 2 * n);
  const auto inverse = RunPlan<double>(FftType::kIfft, 2, {n}, input, 2 * n);
  for (int64_t row = 0; row < 2; ++row) {
    std::span<const std::complex<double>> x(input.data() + row * n, static_cast<size_t>(n));
    auto want = ReferenceDft<double>(x, false);
    std::vector<std::complex<double>> got(forward.begin() + row * n,
                                          forward.begin() + (row + 1) * n);
    EXPECT_LT(RelativeError(got, want), 1e-12) << "n=" << n;
    want = ReferenceDft<double>(x, true);
    for (auto& v : want) v /= static_cast<double>(n);
    got.assign(inverse.begin() + row * n, inverse.begin() + (row + 1) * n);
    EXPECT_LT(RelativeError(got, want), 1e-12) << "inverse n=" << n;
  }
  const auto single = RandomComplex<float>(n, 2);
  const auto got = RunPlan<float>(FftType::kFft, 1, {n}, single, n);
  EXPECT_LT(RelativeError(got, ReferenceDft<float>(single, false)), 1e-5) << "f32 n=" << n;
}

TEST_P(FftLengthTest, RealTransformsMatchTheDftAndRoundTrip) {
  const int64_t n = GetParam();
  const int64_t half = n / 2 + 1;
  const auto complex_input = RandomComplex<double>(n, 3);
  std::vector<double> real(static_cast<size_t>(n));
  std::vector<std::complex<double>> promoted(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    real[static_cast<size_t>(i)] = complex_input[static_cast<size_t>(i)].real();
    promoted[static_cast<size_t>(i)] = real[static_cast<size_t>(i)];
  }
  auto plan = FftPlan::Create(FftType::kRfft, true, 1, std::vector<int64_t>{n});
  ASSERT_TRUE(plan.ok());
  std::vector<std::complex<double>> spectrum(static_cast<size_t>(half));
  (*plan)->Run(real.data(), spectrum.data());
  auto want = ReferenceDft<double>(promoted, false);
  want.resize(static_cast<size_t>(half));
  EXPECT_LT(RelativeError(spectrum, want), 1e-12) << "rfft n=" << n;
  // IRFFT ignores the imaginary parts of the DC and Nyquist terms.
  spectrum[0] += std::complex<double>(0, 3);
  if (n % 2 == 0) spectrum.back() += std::complex<double>(0, -2);
  auto inverse = FftPlan::Create(FftType::kIrfft, true, 1, std::vector<int64_t>{n});
  ASSERT_TRUE(inverse.ok());
  std::vector<double> back(static_cast<size_t>(n));
  (*inverse)->Run(spectrum.data(), back.data());
  for (int64_t i = 0; i < n; ++i) {
    EXPECT_NEAR(back[static_cast<size_t>(i)], real[static_cast<size_t>(i)], 1e-12) << "n=" << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Lengths, FftLengthTest,
                         ::testing::Values(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                           17, 25, 27, 30, 49, 60, 64, 97, 100, 121, 128, 143, 169,
                                           210, 243, 256, 289, 1000, 1009, 1024,
                                           // Bluestein on a chirp of 8k roots (octant tables)
                                           68, 152, 4096));

// Every row of a batch of real transforms equals its own DFT (Stockham's
// split arrays and the twiddle pass after them, row after row).
TEST(FftKernelTest, BatchedRealRowsMatchTheDft) {
  for (int64_t n : {32, 100, 4096}) {
    const int64_t rows = 20, half = n / 2 + 1;
    const auto values = RandomComplex<double>(rows * n, 6);
    std::vector<double> real(static_cast<size_t>(rows * n));
    for (size_t i = 0; i < real.size(); ++i) real[i] = values[i].real();
    auto plan = FftPlan::Create(FftType::kRfft, true, rows, std::vector<int64_t>{n});
    ASSERT_TRUE(plan.ok());
    std::vector<std::complex<double>> spectrum(static_cast<size_t>(rows * half));
    (*plan)->Run(real.data(), spectrum.data());
    for (int64_t row = 0; row < rows; ++row) {
      std::vector<std::complex<double>> line(static_cast<size_t>(n));
      for (int64_t t = 0; t < n; ++t)
        line[static_cast<size_t>(t)] = real[static_cast<size_t>(row * n + t)];
      auto want = ReferenceDft<double>(line, false);
      want.resize(static_cast<size_t>(half));
      std::vector<std::complex<double>> got(spectrum.begin() + row * half,
                                            spectrum.begin() + (row + 1) * half);
      EXPECT_LT(RelativeError(got, want), 1e-12) << "n=" << n << " row " << row;
    }
  }
}

// A 3-D transform of `dims` equals the DFT along each axis in turn, and
// the IFFT of the FFT is the input.
void ExpectSeparable(const std::vector<int64_t>& dims) {
  const int64_t total = dims[0] * dims[1] * dims[2];
  const auto input = RandomComplex<double>(total, 4);
  const auto got = RunPlan<double>(FftType::kFft, 1, dims, input, total);
  std::vector<std::complex<double>> want = input;
  const int64_t strides[] = {dims[1] * dims[2], dims[2], 1};
  for (int axis = 0; axis < 3; ++axis) {
    const int64_t n = dims[static_cast<size_t>(axis)];
    for (int64_t start = 0; start < total; ++start) {
      if ((start / strides[axis]) % n != 0) continue;  // first element of a line
      std::vector<std::complex<double>> line(static_cast<size_t>(n));
      for (int64_t t = 0; t < n; ++t)
        line[static_cast<size_t>(t)] = want[static_cast<size_t>(start + t * strides[axis])];
      const auto transformed = ReferenceDft<double>(line, false);
      for (int64_t t = 0; t < n; ++t)
        want[static_cast<size_t>(start + t * strides[axis])] = transformed[static_cast<size_t>(t)];
    }
  }
  EXPECT_LT(RelativeError(got, want), 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
  const auto back = RunPlan<double>(FftType::kIfft, 1, dims, got, total);
  EXPECT_LT(RelativeError(back, input), 1e-12) << dims[0] << "x" << dims[1] << "x" << dims[2];
}

TEST(FftKernelTest, TwoAndThreeDimensionsAreSeparable) {
  // Lengths of the recursive plan, and of Stockham's passes, whose columns
  // transform in batches of 16 (here 18 x 25 and 25: partial batches).
  ExpectSeparable({3, 4, 5});
  ExpectSeparable({16, 18, 25});
  ExpectSeparable({20, 3, 32});
}

TEST(FftKernelTest, TwoDimensionalRealRoundTrip) {
  // RFFT then IRFFT (batch 2) returns the input: [6, 7] on the recursive
  // plans, [20, 64] on Stockham's (columns of 33 in batches of 16).
  for (const std::vector<int64_t>& lengths : {std::vector<int64_t>{6, 7}, {20, 64}}) {
    const int64_t count = 2 * lengths[0] * lengths[1];
    std::vector<float> real(static_cast<size_t>(count));
    std::mt19937 engine(5);
    std::normal_distribution<float> normal;
    for (auto& v : real) v = normal(engine);
    auto forward = FftPlan::Create(FftType::kRfft, false, 2, lengths);
    auto inverse = FftPlan::Create(FftType::kIrfft, false, 2, lengths);
    ASSERT_TRUE(forward.ok() && inverse.ok());
    std::vector<std::complex<float>> spectrum(static_cast<size_t>(2 * lengths[0] *
                                                                  (lengths[1] / 2 + 1)));
    (*forward)->Run(real.data(), spectrum.data());
    std::vector<float> back(static_cast<size_t>(count));
    (*inverse)->Run(spectrum.data(), back.data());
    for (int64_t i = 0; i < count; ++i) {
      EXPECT_NEAR(back[static_cast<size_t>(i)], real[static_cast<size_t>(i)], 1e-5)
          << lengths[0] << "x" << lengths[1];
    }
  }
}

TEST(FftKernelTest, EmptyAndInvalid) {
  auto plan = FftPlan::Create(FftType::kFft, false, 0, std::vector<int64_t>{8});
  ASSERT_TRUE(plan.ok());
  (*plan)->Run(nullptr, nullptr);  // nothing to do
  EXPECT_FALSE(FftPlan::Create(FftType::kFft, false, 1, std::vector<int64_t>{}).ok());
  EXPECT_FALSE(FftPlan::Create(FftType::kFft, false, 1, std::vector<int64_t>{1, 2, 3, 4}).ok());
  EXPECT_FALSE(FftPlan::Create(FftType::kFft, false, 1, std::vector<int64_t>{-1}).ok());
}

}  // namespace
}  // namespace kiln::kernels
