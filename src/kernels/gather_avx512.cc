// GatherRun (kernels/gather.h) with AVX-512's gathers, sixteen 4-byte or
// eight 8-byte elements at a time, built with -mavx512f/bw/vl and chosen by
// CPUID at run time. GCC does not vectorize GatherRun's loop of loads into
// gathers (its tuning for generic x86-64 keeps them scalar); on a Zen 5 the
// scalar loop was most of take_along_axis's time.
#include <immintrin.h>

#include <cstdint>

namespace kiln::kernels::gather_internal {
namespace {

// The lanes' offsets into the row: clamp(idx, 0, limit) * gather_stride +
// base.
__m512i ClampedOffsets(const int32_t* idx, __mmask16 lanes, __m512i limit, int32_t gather_stride,
                       __m512i base) {
  __m512i i = _mm512_maskz_loadu_epi32(lanes, idx);
  i = _mm512_min_epi32(_mm512_max_epi32(i, _mm512_setzero_si512()), limit);
  if (gather_stride != 1) i = _mm512_mullo_epi32(i, _mm512_set1_epi32(gather_stride));
  return _mm512_add_epi32(i, base);
}

// The lanes whose predicate (one byte each) is `fill_if`.
__mmask16 FillLanes(const bool* mask, __mmask16 lanes, bool fill_if) {
  const __m128i bytes = _mm_maskz_loadu_epi8(lanes, mask);
  return _mm_mask_cmpeq_epi8_mask(lanes, bytes, _mm_set1_epi8(fill_if ? 1 : 0));
}

// Sixteen lanes from element k of a run of n: which lanes hold elements,
// and the offsets clamp(idx, 0, limit) * gather_stride + lane * stride
// they read (the lane's position along the run times the run's stride).
struct Lanes {
  __mmask16 used;
  __m512i offsets;
};
Lanes LanesAt(int64_t k, int64_t n, const int32_t* idx, int32_t stride, int32_t gather_stride,
              __m512i limits) {
  const __mmask16 used = n - k >= 16 ? __mmask16{0xffff}
                                     : static_cast<__mmask16>((1u << (n - k)) - 1);
  const __m512i positions = _mm512_add_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5,
                                                              4, 3, 2, 1, 0),
                                             _mm512_set1_epi32(static_cast<int32_t>(k)));
  const __m512i base = _mm512_mullo_epi32(positions, _mm512_set1_epi32(stride));
  return {used, ClampedOffsets(idx + k, used, limits, gather_stride, base)};
}

}  // namespace

bool HasGatherRuns() {
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl");
  return has;
}

void GatherRun32Avx512(const uint32_t* row, int32_t stride, const int32_t* idx,
                       int32_t gather_stride, int32_t limit, const bool* mask, bool fill_if,
                       uint32_t fill, uint32_t* out, int64_t n) {
  const __m512i limits = _mm512_set1_epi32(limit);
  const __m512i fills = _mm512_set1_epi32(static_cast<int>(fill));
  for (int64_t k = 0; k < n; k += 16) {
    const Lanes lanes = LanesAt(k, n, idx, stride, gather_stride, limits);
    __m512i values = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), lanes.used, lanes.offsets,
                                                 row, 4);
    if (mask != nullptr) {
      values = _mm512_mask_mov_epi32(values, FillLanes(mask + k, lanes.used, fill_if), fills);
    }
    _mm512_mask_storeu_epi32(out + k, lanes.used, values);
  }
}

void GatherRun64Avx512(const uint64_t* row, int32_t stride, const int32_t* idx,
                       int32_t gather_stride, int32_t limit, const bool* mask, bool fill_if,
                       uint64_t fill, uint64_t* out, int64_t n) {
  const __m512i limits = _mm512_set1_epi32(limit);
  const __m512i fills = _mm512_set1_epi64(static_cast<long long>(fill));
  for (int64_t k = 0; k < n; k += 16) {
    const Lanes lanes = LanesAt(k, n, idx, stride, gather_stride, limits);
    const __mmask16 fill_lanes = mask != nullptr ? FillLanes(mask + k, lanes.used, fill_if) : 0;
    for (int half = 0; half < 2; ++half) {  // eight 8-byte elements per gather
      const auto part = static_cast<__mmask8>(lanes.used >> (8 * half));
      if (part == 0) break;
      const __m256i offsets = half == 0 ? _mm512_castsi512_si256(lanes.offsets)
                                        : _mm512_extracti64x4_epi64(lanes.offsets, 1);
      __m512i values = _mm512_mask_i32gather_epi64(_mm512_setzero_si512(), part, offsets, row, 8);
      values = _mm512_mask_mov_epi64(values, static_cast<__mmask8>(fill_lanes >> (8 * half)),
                                     fills);
      _mm512_mask_storeu_epi64(out + k + 8 * half, part, values);
    }
  }
}

}  // namespace kiln::kernels::gather_internal
