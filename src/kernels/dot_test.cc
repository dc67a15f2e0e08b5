// The batched GEMM against its reference loop: every element type, both
// transpositions, shapes that split over threads, and each instruction-set
// variant of the f32/f64 GEMM this machine can run.
#include "kernels/dot.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "kernels/dot_internal.h"
#include "kernels/types.h"

namespace kiln::kernels {
namespace {

// How a test holds elements of T (pred as bytes: std::vector<bool> packs).
template <typename T>
using Stored = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;

// Deterministic small values of any element type (integers wrap).
template <typename T>
std::vector<Stored<T>> Values(size_t count, int seed) {
  std::vector<Stored<T>> values(count);
  for (size_t i = 0; i < count; ++i) {
    const int v = static_cast<int>((i * 37 + static_cast<size_t>(seed) * 11) % 17) - 8;
    if constexpr (std::is_same_v<T, bool>) {
      values[i] = v > 0 ? 1 : 0;
    } else if constexpr (kIsComplex<T>) {
      values[i] = T(static_cast<float>(v) / 4, static_cast<float>(v % 3));
    } else if constexpr (kIsFloat<T>) {
      values[i] = T(static_cast<float>(v) / 4);
    } else {
      values[i] = static_cast<T>(v * 1234567);
    }
  }
  return values;
}

template <typename T>
double Distance(Stored<T> a, Stored<T> b) {
  if constexpr (std::is_same_v<T, bool>) {
    return a == b ? 0 : 1;
  } else if constexpr (kIsComplex<T>) {
    return std::abs(a - b);
  } else {
    return std::abs(static_cast<double>(static_cast<ComputeType<T>>(a)) -
                    static_cast<double>(static_cast<ComputeType<T>>(b)));
  }
}

struct Case {
  int64_t batch, m, n, k;
};

template <typename T>
void CheckAgainstReference(ElementType type, double tolerance) {
  const Case cases[] = {{1, 1, 1, 1},    {1, 3, 5, 7},    {2, 17, 33, 9}, {1, 130, 70, 40},
                        {1, 5, 200, 31}, {3, 64, 64, 64}, {1, 4, 4, 0},   {5, 1, 9, 13}};
  for (const Case& c : cases) {
    for (int transposes = 0; transposes < 4; ++transposes) {
      MatMulShape shape{c.batch, c.m, c.n, c.k, (transposes & 1) != 0, (transposes & 2) != 0};
      const auto lhs = Values<T>(static_cast<size_t>(c.batch * c.m * c.k), 1);
      const auto rhs = Values<T>(static_cast<size_t>(c.batch * c.k * c.n), 2);
      std::vector<Stored<T>> got(static_cast<size_t>(c.batch * c.m * c.n), Stored<T>(1));
      std::vector<Stored<T>> want(got.size());
      ASSERT_TRUE(MatMul(type, shape, lhs.data(), rhs.data(), got.data()).ok());
      ASSERT_TRUE(MatMulReference(type, shape, lhs.data(), rhs.data(), want.data()).ok());
      for (size_t i = 0; i < got.size(); ++i) {
        ASSERT_LE(Distance<T>(got[i], want[i]), tolerance)
            << GetElementTypeInfo(type).name << " " << c.batch << "x" << c.m << "x" << c.n << "x"
            << c.k << " transposes " << transposes << " element " << i;
      }
    }
  }
}

TEST(MatMul, MatchesTheReferenceInEveryType) {
  CheckAgainstReference<float>(ElementType::kF32, 1e-3);
  CheckAgainstReference<double>(ElementType::kF64, 1e-9);
  CheckAgainstReference<complex64>(ElementType::kC64, 1e-3);
  CheckAgainstReference<complex128>(ElementType::kC128, 1e-9);
  CheckAgainstReference<half>(ElementType::kF16, 0.0);
  CheckAgainstReference<bfloat16>(ElementType::kBF16, 0.0);
  CheckAgainstReference<int8_t>(ElementType::kS8, 0.0);
  CheckAgainstReference<int32_t>(ElementType::kS32, 0.0);
  CheckAgainstReference<int64_t>(ElementType::kS64, 0.0);
  CheckAgainstReference<uint16_t>(ElementType::kU16, 0.0);
  CheckAgainstReference<uint64_t>(ElementType::kU64, 0.0);
  CheckAgainstReference<bool>(ElementType::kPred, 0.0);
}

// bf16 and f16 products run in tiles of at most 256 x 256 with depth panels
// of 256 (smaller tiles when there are fewer than threads): shapes whose
// last tile and panel are partial, batches, both transpositions. The
// reference sums in f32 in another order, so the two may round to adjacent
// values; `ulp` is the type's relative spacing at 1.
template <typename T>
void CheckWidenedTiles(ElementType type, double ulp, std::span<const Case> cases) {
  for (const Case& c : cases) {
    for (int transposes = 0; transposes < 4; ++transposes) {
      MatMulShape shape{c.batch, c.m, c.n, c.k, (transposes & 1) != 0, (transposes & 2) != 0};
      std::vector<T> lhs(static_cast<size_t>(c.batch * c.m * c.k));
      std::vector<T> rhs(static_cast<size_t>(c.batch * c.k * c.n));
      for (size_t i = 0; i < lhs.size(); ++i) lhs[i] = T(std::sin(0.37 * static_cast<double>(i)));
      for (size_t i = 0; i < rhs.size(); ++i) rhs[i] = T(std::cos(0.11 * static_cast<double>(i)));
      std::vector<T> got(static_cast<size_t>(c.batch * c.m * c.n), T(99.0f));
      std::vector<T> want(got.size());
      ASSERT_TRUE(MatMul(type, shape, lhs.data(), rhs.data(), got.data()).ok());
      ASSERT_TRUE(MatMulReference(type, shape, lhs.data(), rhs.data(), want.data()).ok());
      for (size_t i = 0; i < got.size(); ++i) {
        const double w = static_cast<float>(want[i]);
        ASSERT_NEAR(static_cast<float>(got[i]), w, std::abs(w) * ulp + 1e-3)
            << GetElementTypeInfo(type).name << " " << c.batch << "x" << c.m << "x" << c.n << "x"
            << c.k << " transposes " << transposes << " element " << i;
      }
    }
  }
}

TEST(MatMul, NarrowFloatTilesAndPanelsCoverEveryElement) {
  const Case cases[] = {{1, 300, 270, 600}, {2, 257, 3, 513}, {1, 1, 700, 260},
                        {3, 40, 40, 40},    {1, 513, 9, 1},   {1, 6, 6, 0}};
  CheckWidenedTiles<bfloat16>(ElementType::kBF16, 1.0 / 128, cases);
  CheckWidenedTiles<half>(ElementType::kF16, 1.0 / 1024, cases);
}

// On a CPU with AVX512_BF16, bf16 products whose A is row-major and whose
// depth is even run on VDPBF16PS: register blocks of 12 rows by 32 columns,
// tiles of 96 rows by 8 panels. Rows and columns past every block and tile
// boundary, depths of one pair up to several hundred, batches, B stored
// either way (the cases with A transposed or an odd depth check the
// fallback beside them).
TEST(MatMul, Bf16ProductsOnVdpbf16psCoverEveryElement) {
  if (!MatMulBf16Native()) {
    GTEST_SKIP() << "this CPU has no AVX512_BF16: bf16 products widen to f32 here";
  }
  const Case cases[] = {{1, 25, 33, 2},   {2, 100, 65, 130}, {1, 13, 1, 4},    {1, 97, 257, 64},
                        {1, 12, 32, 512}, {4, 7, 47, 6},     {1, 193, 31, 300}};
  CheckWidenedTiles<bfloat16>(ElementType::kBF16, 1.0 / 128, cases);
}

// Infinities and NaN come through VDPBF16PS as through f32 arithmetic:
// inf x 0 is NaN, inf x 1 stays inf, a NaN operand gives NaN.
TEST(MatMul, Bf16NonFiniteValuesPropagate) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // A: 3 x 2 rows {inf, 0}, {1, nan}, {1, 2}; B: 2 x 2 [[0, 1], [1, 1]].
  const std::vector<bfloat16> lhs = {bfloat16(inf), bfloat16(0.0f), bfloat16(1.0f),
                                     bfloat16(nan), bfloat16(1.0f), bfloat16(2.0f)};
  const std::vector<bfloat16> rhs = {bfloat16(0.0f), bfloat16(1.0f), bfloat16(1.0f),
                                     bfloat16(1.0f)};
  std::vector<bfloat16> got(6);
  ASSERT_TRUE(MatMul(ElementType::kBF16, MatMulShape{1, 3, 2, 2, false, false}, lhs.data(),
                     rhs.data(), got.data())
                  .ok());
  EXPECT_TRUE(std::isnan(static_cast<float>(got[0])));  // inf x 0 + 0 x 1
  EXPECT_EQ(static_cast<float>(got[1]), inf);           // inf x 1 + 0 x 1
  EXPECT_TRUE(std::isnan(static_cast<float>(got[2])));
  EXPECT_TRUE(std::isnan(static_cast<float>(got[3])));
  EXPECT_EQ(static_cast<float>(got[4]), 2.0f);
  EXPECT_EQ(static_cast<float>(got[5]), 3.0f);
}

// The rounding of a widened tile: every output is 1 + 3u/2 + u/4 in f32
// (u the type's spacing at 1), above the midpoint of 1 + u and 1 + 2u, so
// rounding to nearest gives 1 + 2u and truncation 1 + u. Sixteen columns:
// the vector conversions and the scalar tail both round.
template <typename T>
void CheckWidenedRounding(ElementType type, float u) {
  const std::vector<T> lhs = {T(1.0f), T(u / 2)};
  std::vector<T> rhs(32);
  for (size_t j = 0; j < 16; ++j) {
    rhs[j] = T(1.0f + u);
    rhs[16 + j] = T(1.5f);
  }
  std::vector<T> got(16);
  ASSERT_TRUE(MatMul(type, MatMulShape{1, 1, 16, 2, false, false}, lhs.data(), rhs.data(),
                     got.data())
                  .ok());
  for (size_t j = 0; j < 16; ++j) {
    EXPECT_EQ(static_cast<float>(got[j]), 1.0f + 2 * u)
        << GetElementTypeInfo(type).name << " " << j;
  }
}

TEST(MatMul, NarrowFloatTilesRoundToNearest) {
  CheckWidenedRounding<bfloat16>(ElementType::kBF16, 1.0f / 128);
  CheckWidenedRounding<half>(ElementType::kF16, 1.0f / 1024);
}

// accumulate adds the product to what out holds, on every path (Eigen's
// GEMM split over threads, the loops of the other types); bf16 and f16,
// which round each product once, refuse it.
template <typename T>
void CheckAccumulates(ElementType type, double tolerance) {
  for (const Case& c : {Case{1, 130, 70, 40}, Case{3, 5, 9, 7}}) {
    MatMulShape shape{c.batch, c.m, c.n, c.k, false, true};
    const auto lhs = Values<T>(static_cast<size_t>(c.batch * c.m * c.k), 1);
    const auto rhs = Values<T>(static_cast<size_t>(c.batch * c.k * c.n), 2);
    const auto before = Values<T>(static_cast<size_t>(c.batch * c.m * c.n), 3);
    std::vector<Stored<T>> product(before.size());
    ASSERT_TRUE(MatMulReference(type, shape, lhs.data(), rhs.data(), product.data()).ok());
    std::vector<Stored<T>> got = before;
    shape.accumulate = true;
    ASSERT_TRUE(MatMul(type, shape, lhs.data(), rhs.data(), got.data()).ok());
    for (size_t i = 0; i < got.size(); ++i) {
      Stored<T> want;
      if constexpr (std::is_integral_v<T>) {  // wraps, as MatMul's integers do
        using U = std::make_unsigned_t<T>;
        const U sum = static_cast<U>(static_cast<U>(before[i]) + static_cast<U>(product[i]));
        want = static_cast<T>(sum);
      } else {
        want = static_cast<T>(before[i] + product[i]);
      }
      ASSERT_LE(Distance<T>(got[i], want), tolerance)
          << GetElementTypeInfo(type).name << " " << c.m << "x" << c.n << " element " << i;
    }
  }
}

// Every (batch, m, n, k) of `sizes`, each with the four transpositions.
std::vector<MatMulShape> WithTranspositions(std::initializer_list<std::array<int64_t, 4>> sizes) {
  std::vector<MatMulShape> shapes;
  for (const auto& [batch, m, n, k] : sizes) {
    for (int transposes = 0; transposes < 4; ++transposes) {
      MatMulShape shape;
      shape.batch = batch;
      shape.m = m;
      shape.n = n;
      shape.k = k;
      shape.lhs_transposed = (transposes & 1) != 0;
      shape.rhs_transposed = (transposes & 2) != 0;
      shapes.push_back(shape);
    }
  }
  return shapes;
}

// 8-bit products in 32-bit sums, against the s32 reference of the same
// values: every pairing of s8 and u8 (extremes included: -128 x -128 sums
// past int16), both transpositions, depths not a multiple of 4, columns
// short of a panel, a batch, and rows that split over threads.
TEST(MatMul, Int8ProductsMatchTheInt32Reference) {
  const std::vector<MatMulShape> shapes = WithTranspositions({{1, 1, 1, 1},
                                                              {1, 5, 7, 3},
                                                              {2, 13, 33, 17},
                                                              {1, 64, 64, 64},
                                                              {3, 30, 65, 130},
                                                              {1, 200, 96, 257},
                                                              {2, 3, 5, 0}});
  int seed = 0;
  for (ElementType lt : {ElementType::kS8, ElementType::kU8}) {
    for (ElementType rt : {ElementType::kS8, ElementType::kU8}) {
      for (const MatMulShape& shape : shapes) {
        std::vector<uint8_t> a(static_cast<size_t>(shape.batch * shape.m * shape.k));
        std::vector<uint8_t> b(static_cast<size_t>(shape.batch * shape.k * shape.n));
        for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>((i * 37 + seed) * 11);
        for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>((i * 53 + seed) * 7);
        if (!a.empty() && !b.empty()) a[0] = b[0] = 0x80;  // -128 or 128
        ++seed;
        auto widen = [](const std::vector<uint8_t>& bytes, ElementType type) {
          std::vector<int32_t> wide(bytes.size());
          for (size_t i = 0; i < bytes.size(); ++i) {
            wide[i] = type == ElementType::kS8 ? static_cast<int8_t>(bytes[i]) : bytes[i];
          }
          return wide;
        };
        const std::vector<int32_t> wide_a = widen(a, lt), wide_b = widen(b, rt);
        std::vector<int32_t> want(static_cast<size_t>(shape.batch * shape.m * shape.n));
        std::vector<int32_t> got(want.size(), -1);
        ASSERT_TRUE(MatMulReference(ElementType::kS32, shape, wide_a.data(), wide_b.data(),
                                    want.data())
                        .ok());
        ASSERT_TRUE(MatMulInt8(lt, rt, shape, a.data(), b.data(), got.data()).ok());
        std::vector<int32_t> portable(want.size(), -1);
        ASSERT_TRUE(MatMulInt8Portable(lt, rt, shape, a.data(), b.data(), portable.data()).ok());
        ASSERT_EQ(portable, want) << "portable " << shape.m << "x" << shape.n << "x" << shape.k;
        ASSERT_EQ(got, want) << GetElementTypeInfo(lt).name << " x " << GetElementTypeInfo(rt).name
                             << " " << shape.batch << "x" << shape.m << "x" << shape.n << "x"
                             << shape.k << " transposed " << shape.lhs_transposed
                             << shape.rhs_transposed;
      }
    }
  }
  EXPECT_EQ(MatMulInt8(ElementType::kS16, ElementType::kS8, MatMulShape{}, nullptr, nullptr,
                       nullptr)
                .code(),
            StatusCode::kInvalidArgument);
  std::printf("8-bit products on AVX512_VNNI: %s\n", MatMulInt8Native() ? "yes" : "no");
}

// 16-bit products in 32-bit sums against the s32 reference: extremes
// (-32768 squared wraps past int32 over a few depths), both transpositions,
// odd depths, short panels, a batch, a depth split into passes.
TEST(MatMul, Int16ProductsMatchTheInt32Reference) {
  int seed = 0;
  for (const MatMulShape& shape : WithTranspositions(
           {{1, 1, 1, 1}, {1, 5, 7, 3}, {2, 13, 33, 17}, {1, 30, 65, 301}, {2, 3, 5, 0}})) {
    std::vector<int16_t> a(static_cast<size_t>(shape.batch * shape.m * shape.k));
    std::vector<int16_t> b(static_cast<size_t>(shape.batch * shape.k * shape.n));
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int16_t>((i * 7919 + seed) * 31);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<int16_t>((i * 104729 + seed) * 17);
    if (!a.empty() && !b.empty()) a[0] = b[0] = -32768;
    ++seed;
    const std::vector<int32_t> wide_a(a.begin(), a.end()), wide_b(b.begin(), b.end());
    std::vector<int32_t> want(static_cast<size_t>(shape.batch * shape.m * shape.n));
    std::vector<int32_t> got(want.size(), -1), portable(want.size(), -1);
    ASSERT_TRUE(
        MatMulReference(ElementType::kS32, shape, wide_a.data(), wide_b.data(), want.data()).ok());
    ASSERT_TRUE(MatMulInt16(shape, a.data(), b.data(), got.data()).ok());
    ASSERT_TRUE(MatMulInt16Portable(shape, a.data(), b.data(), portable.data()).ok());
    ASSERT_EQ(got, want) << shape.batch << "x" << shape.m << "x" << shape.n << "x" << shape.k
                         << " transposed " << shape.lhs_transposed << shape.rhs_transposed;
    ASSERT_EQ(portable, want) << "portable " << shape.m << "x" << shape.n << "x" << shape.k;
  }
}

// s32 products over the whole range wrap as the spec's do, on every path
// (VNNI machines split each element into 16-bit halves: the low half's
// sign and a high half of 0x8000 are the cases that split can get wrong).
TEST(MatMul, Int32ProductsWrapOverTheWholeRange) {
  const int32_t edges[] = {std::numeric_limits<int32_t>::min(),
                           std::numeric_limits<int32_t>::max(),
                           0x7FFF8000,
                           -0x8000,
                           0x8000,
                           -1,
                           0x12348765,
                           0};
  uint32_t state = 7;
  for (const MatMulShape& shape : WithTranspositions(
           {{1, 1, 1, 1}, {1, 5, 7, 3}, {2, 13, 33, 17}, {1, 30, 65, 301}, {2, 3, 5, 0}})) {
    std::vector<int32_t> a(static_cast<size_t>(shape.batch * shape.m * shape.k));
    std::vector<int32_t> b(static_cast<size_t>(shape.batch * shape.k * shape.n));
    for (auto* values : {&a, &b}) {
      for (int32_t& x : *values) {
        state = state * 1664525u + 1013904223u;
        x = (state >> 29) == 0 ? edges[(state >> 8) % 8] : static_cast<int32_t>(state);
      }
    }
    std::vector<int32_t> want(static_cast<size_t>(shape.batch * shape.m * shape.n));
    std::vector<int32_t> got(want.size(), -1);
    ASSERT_TRUE(MatMulReference(ElementType::kS32, shape, a.data(), b.data(), want.data()).ok());
    ASSERT_TRUE(MatMul(ElementType::kS32, shape, a.data(), b.data(), got.data()).ok());
    ASSERT_EQ(got, want) << shape.batch << "x" << shape.m << "x" << shape.n << "x" << shape.k
                         << " transposed " << shape.lhs_transposed << shape.rhs_transposed;
  }
}

TEST(MatMul, AccumulatesIntoItsOutput) {
  CheckAccumulates<float>(ElementType::kF32, 1e-3);
  CheckAccumulates<double>(ElementType::kF64, 1e-9);
  CheckAccumulates<int32_t>(ElementType::kS32, 0.0);
  MatMulShape shape{1, 2, 2, 2, false, false};
  shape.accumulate = true;
  std::vector<bfloat16> a(4, bfloat16(1.0f)), out(4);
  EXPECT_EQ(MatMul(ElementType::kBF16, shape, a.data(), a.data(), out.data()).code(),
            StatusCode::kInvalidArgument);
}

TEST(MatMul, RejectsTypesItDoesNotCompute) {
  EXPECT_FALSE(MatMulAccepts(ElementType::kF8E4M3FN));
  EXPECT_TRUE(MatMulAccepts(ElementType::kBF16));
  MatMulShape shape;
  float x = 0;
  EXPECT_FALSE(MatMul(ElementType::kF8E4M3FN, shape, &x, &x, &x).ok());
}

// Each variant's GEMM directly (the public entry uses only the best one).
template <typename T, typename Gemm>
void CheckVariant(Gemm gemm, const char* name) {
  const int64_t m = 37, n = 29, k = 53;
  for (int transposes = 0; transposes < 4; ++transposes) {
    const bool a_t = (transposes & 1) != 0, b_t = (transposes & 2) != 0;
    const auto a = Values<T>(static_cast<size_t>(m * k), 3);
    const auto b = Values<T>(static_cast<size_t>(k * n), 4);
    // Output rows strided (ldc > n) to check the leading dimension.
    std::vector<T> c(static_cast<size_t>(m * (n + 3)), T(-7));
    dot_internal::GemmArgs<T> args{m,        n,           k,   a.data(), a_t ? m : k, a_t,
                                   b.data(), b_t ? k : n, b_t, c.data(), n + 3,       false};
    gemm(args);
    std::vector<T> want(static_cast<size_t>(m * n));
    MatMulShape shape{1, m, n, k, a_t, b_t};
    const ElementType type = std::is_same_v<T, float> ? ElementType::kF32 : ElementType::kF64;
    ASSERT_TRUE(MatMulReference(type, shape, a.data(), b.data(), want.data()).ok());
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_NEAR(c[static_cast<size_t>(i * (n + 3) + j)], want[static_cast<size_t>(i * n + j)],
                    1e-3)
            << name << " transposes " << transposes;
      }
      ASSERT_EQ(c[static_cast<size_t>(i * (n + 3) + n)], T(-7)) << name << ": wrote past n";
    }
    // Accumulating adds the product to what c holds.
    args.accumulate = true;
    gemm(args);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_NEAR(c[static_cast<size_t>(i * (n + 3) + j)],
                    2 * want[static_cast<size_t>(i * n + j)], 2e-3)
            << name << " accumulating, transposes " << transposes;
      }
    }
  }
}

TEST(MatMul, EveryInstructionSetVariantAgrees) {
  CheckVariant<float>([](const auto& g) { dot_internal::baseline::Gemm(g); }, "baseline");
  CheckVariant<double>([](const auto& g) { dot_internal::baseline::Gemm(g); }, "baseline");
  const std::string isa = MatMulIsa();
#if defined(__x86_64__) && defined(KILN_DOT_ISA_VARIANTS)
  __builtin_cpu_init();
  if (isa != "baseline" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    CheckVariant<float>([](const auto& g) { dot_internal::avx2::Gemm(g); }, "avx2");
    CheckVariant<double>([](const auto& g) { dot_internal::avx2::Gemm(g); }, "avx2");
  }
  if (isa == "avx512") {
    CheckVariant<float>([](const auto& g) { dot_internal::avx512::Gemm(g); }, "avx512");
    CheckVariant<double>([](const auto& g) { dot_internal::avx512::Gemm(g); }, "avx512");
  }
#endif
  std::printf("MatMul uses the %s GEMM on this machine\n", isa.c_str());
}

}  // namespace
}  // namespace kiln::kernels
