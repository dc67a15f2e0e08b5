// Fast Fourier transforms (stablehlo.fft): FFT, IFFT, RFFT and IRFFT over
// the 1 to 3 trailing dimensions of a batch, in f32/c64 or f64/c128.
// A plan is built once per op when a program is compiled (factorization,
// twiddles, Bluestein chirps) and run any number of times, concurrently.
// Lengths factor into radixes 4, 2, 3, 5 (mixed-radix Cooley-Tukey); a
// length with a prime factor above 7 runs through Bluestein's algorithm
// over a power of two. IFFT and IRFFT scale by 1 / (product of lengths).
#pragma once

#include <complex>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"

namespace kiln::kernels {

enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };

// A prepared stablehlo.fft.
class FftPlan {
 public:
  // `batch` transforms of `lengths` (the fft_length attribute, 1 to 3
  // entries, outermost first) in double (c128/f64) or single precision.
  // The input is [batch, lengths...] (complex; RFFT: real), the output
  // [batch, lengths...] (complex; IRFFT: real), except that the last
  // dimension of the complex side of RFFT/IRFFT is lengths.back() / 2 + 1.
  static StatusOr<std::shared_ptr<const FftPlan>> Create(FftType type, bool double_precision,
                                                         int64_t batch,
                                                         std::span<const int64_t> lengths);
  virtual ~FftPlan() = default;
  // Runs the transform; `input` is only read. Safe to call concurrently.
  virtual void Run(const void* input, void* output) const = 0;
};

// The plain O(n^2) DFT of one sequence (sign -1 forward, +1 inverse, no
// scaling), computed in long double: the reference the fast plans are
// tested against.
template <typename T>
std::vector<std::complex<T>> ReferenceDft(std::span<const std::complex<T>> input, bool inverse);

}  // namespace kiln::kernels
