// LAPACK's Hessenberg reduction (gehd2, orghr/unghr) and Schur decomposition
// (gees: lascl, gebal 'P', gehrd, hseqr's lahqr with dlanv2, gebak), written
// from the reference algorithms so that results match what JAX's CPU backend
// gets from LAPACK up to rounding. Each matrix is copied into a column-major
// workspace (LAPACK's layout, so that reflector vectors are contiguous) and
// back; one batch item per ParallelFor item.
#include "kernels/schur.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/householder.h"
#include "kernels/parallel.h"

namespace kiln::kernels {
namespace {

using lapack::Abs1;
using lapack::ApplyReflector;
using lapack::ColumnMajor;
using lapack::Conj;
using lapack::Larfg;
using lapack::RealOf;
using lapack::RealPart;
using lapack::SwapColumns;

// One thread's working memory, reused across the matrices it runs.
template <typename T>
struct Workspace {
  std::vector<T> h, z, taus, reflector;
  std::vector<int64_t> permutation;
  std::vector<bool> pairs;
};

// --- gehrd, orghr ------------------------------------------------------------

// gehd2 on rows and columns [ilo, ihi] of `a` (taus [n - 1], zero outside).
template <typename T>
void ReduceToHessenberg(ColumnMajor<T> a, int64_t n, int64_t ilo, int64_t ihi, T* taus,
                        std::vector<T>& work) {
  std::fill(taus, taus + std::max<int64_t>(n - 1, 0), T(0));
  for (int64_t i = ilo; i < ihi; ++i) {
    T alpha = a(i + 1, i);
    taus[i] = Larfg(ihi - i, alpha, &a(std::min(i + 2, n - 1), i), 1);
    a(i + 1, i) = alpha;
    const T* v = &a(i + 1, i);  // v[0] = 1 implied
    // H(i) from the right to A(0:ihi, i+1:ihi), H(i)^H from the left to
    // A(i+1:ihi, i+1:n).
    ApplyReflector(/*left=*/false, v, taus[i], a, 0, i + 1, ihi + 1, ihi - i, work);
    ApplyReflector(/*left=*/true, v, Conj(taus[i]), a, i + 1, i + 1, ihi - i, n - i - 1, work);
  }
}

// org2r/ung2r: the m x m product H(0) ... H(m-1) of the reflectors stored
// below the diagonal of the block of `q` at (first, first), in place.
template <typename T>
void FormQ(ColumnMajor<T> q, int64_t first, int64_t m, const T* taus, std::vector<T>& work) {
  auto at = [&](int64_t r, int64_t c) -> T& { return q(first + r, first + c); };
  for (int64_t i = m - 1; i >= 0; --i) {
    if (i < m - 1) {
      ApplyReflector(/*left=*/true, &at(i, i), taus[i], q, first + i, first + i + 1, m - i,
                     m - i - 1, work);
    }
    for (int64_t r = i + 1; r < m; ++r) at(r, i) *= -taus[i];
    at(i, i) = T(1) - taus[i];
    for (int64_t r = 0; r < i; ++r) at(r, i) = T(0);
  }
}

// orghr: Q of gehd2 on [ilo, ihi] from its reflectors in `q` (a copy of
// gehd2's output), in place.
template <typename T>
void FormHessenbergQ(ColumnMajor<T> q, int64_t n, int64_t ilo, int64_t ihi, const T* taus,
                     std::vector<T>& work) {
  // Shift the vectors one column right; the rows and columns outside
  // (ilo, ihi] are the identity's.
  for (int64_t j = ihi; j > ilo; --j) {
    for (int64_t r = 0; r < j; ++r) q(r, j) = T(0);
    for (int64_t r = j + 1; r <= ihi; ++r) q(r, j) = q(r, j - 1);
    for (int64_t r = ihi + 1; r < n; ++r) q(r, j) = T(0);
  }
  for (int64_t j = 0; j < n; ++j) {
    if (j > ilo && j <= ihi) continue;
    for (int64_t r = 0; r < n; ++r) q(r, j) = T(0);
    q(j, j) = T(1);
  }
  if (ihi > ilo) FormQ(q, ilo + 1, ihi - ilo, taus + ilo, work);
}

// --- gebal 'P', gebak ----------------------------------------------------------

template <typename T>
void SwapRows(ColumnMajor<T> a, int64_t x, int64_t y, int64_t first_column, int64_t n) {
  for (int64_t c = first_column; c < n; ++c) std::swap(a(x, c), a(y, c));
}

// gebal with job 'P': permutes rows and columns so that A is upper
// triangular outside [ilo, ihi]; `permutation[j]` records the interchange
// of j, as gebal's SCALE does. Returns {ilo, ihi}.
template <typename T>
std::pair<int64_t, int64_t> IsolateEigenvalues(ColumnMajor<T> a, int64_t n,
                                               std::vector<int64_t>& permutation) {
  permutation.assign(static_cast<size_t>(n), 0);
  for (int64_t j = 0; j < n; ++j) permutation[static_cast<size_t>(j)] = j;
  int64_t k = 0, l = n - 1;
  // Rows with zeros off the diagonal in columns [0, l] go to the bottom.
  for (bool changed = true; changed;) {
    changed = false;
    for (int64_t i = l; i >= 0; --i) {  // from the l at the loop's start, as Fortran's DO
      bool isolated = true;
      for (int64_t j = 0; j <= l && isolated; ++j) isolated = i == j || a(i, j) == T(0);
      if (!isolated) continue;
      permutation[static_cast<size_t>(l)] = i;
      if (i != l) {
        SwapColumns(a, i, l, l + 1);
        SwapRows(a, i, l, k, n);
      }
      changed = true;
      if (l == 0) return {0, 0};
      --l;
    }
  }
  // Columns with zeros off the diagonal in rows [k, l] go to the left.
  for (bool changed = true; changed;) {
    changed = false;
    for (int64_t j = k, last = l; j <= last; ++j) {
      bool isolated = true;
      for (int64_t i = k; i <= l && isolated; ++i) isolated = i == j || a(i, j) == T(0);
      if (!isolated) continue;
      permutation[static_cast<size_t>(k)] = j;
      if (j != k) {
        SwapColumns(a, j, k, l + 1);
        SwapRows(a, j, k, k, n);
      }
      changed = true;
      ++k;
    }
  }
  return {k, l};
}

// gebak 'P' for right vectors: undoes IsolateEigenvalues on v's rows.
template <typename T>
void UndoIsolation(ColumnMajor<T> v, int64_t n, int64_t ilo, int64_t ihi,
                   const std::vector<int64_t>& permutation) {
  for (int64_t step = 0; step < n; ++step) {
    int64_t i = step;
    if (i >= ilo && i <= ihi) continue;
    if (i < ilo) i = ilo - 1 - step;
    const int64_t k = permutation[static_cast<size_t>(i)];
    if (k != i) SwapRows(v, i, k, 0, n);
  }
}

// --- lascl ---------------------------------------------------------------------

enum class Part { kFull, kUpperHessenberg, kUpperTriangle };

// lascl: multiplies `part` of a by to / from in steps that neither overflow
// nor underflow.
template <typename T>
void Rescale(ColumnMajor<T> a, int64_t n, RealOf<T> from, RealOf<T> to, Part part) {
  using R = RealOf<T>;
  const R small = lapack::SafeMinimum<R>(), big = R(1) / small;
  for (bool done = false; !done;) {
    R factor;
    const R from_small = from * small;
    if (from_small == from) {  // from is infinite
      factor = to / from;
      done = true;
    } else if (const R to_big = to / big; to_big == to) {  // to is 0 or infinite
      factor = to;
      done = true;
      from = R(1);
    } else if (std::fabs(from_small) > std::fabs(to) && to != R(0)) {
      factor = small;
      from = from_small;
    } else if (std::fabs(to_big) > std::fabs(from)) {
      factor = big;
      to = to_big;
    } else {
      factor = to / from;
      done = true;
      if (factor == R(1)) return;
    }
    for (int64_t c = 0; c < n; ++c) {
      const int64_t rows = part == Part::kFull              ? n
                           : part == Part::kUpperHessenberg ? std::min(c + 2, n)
                                                            : c + 1;
      for (int64_t r = 0; r < rows; ++r) a(r, c) *= factor;
    }
  }
}

// --- lahqr, shared -----------------------------------------------------------

// lahqr's search, from row i up to l + 1, for a subdiagonal element
// h(k, k-1) negligible beside its neighbours (Ahues and Tisseur's
// criterion). Returns that k, or l when there is none.
template <typename T>
int64_t NegligibleSubdiagonal(ColumnMajor<T> h, int64_t l, int64_t i, int64_t ilo, int64_t ihi,
                              RealOf<T> small, RealOf<T> ulp) {
  using R = RealOf<T>;
  int64_t k = i;
  for (; k > l; --k) {
    if (Abs1(h(k, k - 1)) <= small) break;
    R test = Abs1(h(k - 1, k - 1)) + Abs1(h(k, k));
    if (test == R(0)) {
      if (k - 2 >= ilo) test += std::fabs(RealPart(h(k - 1, k - 2)));
      if (k + 1 <= ihi) test += std::fabs(RealPart(h(k + 1, k)));
    }
    if (std::fabs(RealPart(h(k, k - 1))) <= ulp * test) {
      const R ab = std::max(Abs1(h(k, k - 1)), Abs1(h(k - 1, k)));
      const R ba = std::min(Abs1(h(k, k - 1)), Abs1(h(k - 1, k)));
      const R aa = std::max(Abs1(h(k, k)), Abs1(h(k - 1, k - 1) - h(k, k)));
      const R bb = std::min(Abs1(h(k, k)), Abs1(h(k - 1, k - 1) - h(k, k)));
      const R s = aa + ab;
      if (ba * (ab / s) <= std::max(small, ulp * (bb * (aa / s)))) break;
    }
  }
  return k;
}

// Iterations since the last deflation after which lahqr shifts
// exceptionally (KEXSH), and its exceptional shift's weights.
constexpr int64_t kExceptionalShiftEvery = 10;
constexpr double kExceptionalWeight = 0.75, kExceptionalOffDiagonal = -0.4375;

// The active block of a lahqr sweep: rows and columns [l, i] of the matrix,
// transformations applied to all of H (wantt) and to rows [ilo, ihi] of Z.
template <typename T>
struct Active {
  ColumnMajor<T> h;
  T* z;  // column-major n x n, or null
  int64_t n, ilo, ihi;
  T& Z(int64_t r, int64_t c) const { return z[r + c * n]; }
};

// --- dlahqr (real) -------------------------------------------------------------

// dlanv2: the standardized Schur factorization of a real 2x2 block
// [a b; c d] = [cs -sn; sn cs] [aa bb; cc dd] [cs sn; -sn cs], in place:
// either cc = 0, or aa = dd and bb cc < 0 (complex eigenvalues).
template <typename R>
void StandardizeBlock(R& a, R& b, R& c, R& d, R& cs, R& sn) {
  const R eps = lapack::Precision<R>();
  const R safe_min2 = std::pow(R(2), R(static_cast<int>(std::log(lapack::SafeMinimum<R>() / eps) /
                                                        std::log(R(2)) / R(2))));
  const R safe_max2 = R(1) / safe_min2;
  const auto sign = [](R x) { return std::copysign(R(1), x); };
  if (c == R(0)) {
    cs = 1;
    sn = 0;
    return;
  }
  if (b == R(0)) {  // swap rows and columns
    cs = 0;
    sn = 1;
    std::swap(a, d);
    b = -c;
    c = 0;
    return;
  }
  if (a - d == R(0) && sign(b) != sign(c)) {
    cs = 1;
    sn = 0;
    return;
  }
  R temp = a - d, p = temp / 2;
  const R bc_max = std::max(std::fabs(b), std::fabs(c));
  const R bc_mis = std::min(std::fabs(b), std::fabs(c)) * sign(b) * sign(c);
  R scale = std::max(std::fabs(p), bc_max);
  R z = (p / scale) * p + (bc_max / scale) * bc_mis;
  if (z >= R(4) * eps) {  // real eigenvalues: compute a and d
    z = p + std::copysign(std::sqrt(scale) * std::sqrt(z), p);
    a = d + z;
    d = d - (bc_max / z) * bc_mis;
    const R tau = lapack::Lapy2(c, z);
    cs = z / tau;
    sn = c / tau;
    b = b - c;
    c = 0;
    return;
  }
  // Complex or nearly equal real eigenvalues: make the diagonal equal.
  R sigma = b + c;
  for (int count = 1; count <= 20; ++count) {
    scale = std::max(std::fabs(temp), std::fabs(sigma));
    if (scale >= safe_max2) {
      sigma *= safe_min2;
      temp *= safe_min2;
      continue;
    }
    if (scale <= safe_min2) {
      sigma *= safe_max2;
      temp *= safe_max2;
      continue;
    }
    break;
  }
  p = temp / 2;
  R tau = lapack::Lapy2(sigma, temp);
  cs = std::sqrt((R(1) + std::fabs(sigma) / tau) / 2);
  sn = -(p / (tau * cs)) * sign(sigma);
  // [aa bb; cc dd] = [a b; c d] [cs -sn; sn cs], then [cs sn; -sn cs] times it.
  const R aa = a * cs + b * sn, bb = -a * sn + b * cs;
  const R cc = c * cs + d * sn, dd = -c * sn + d * cs;
  a = aa * cs + cc * sn;
  b = bb * cs + dd * sn;
  c = -aa * sn + cc * cs;
  d = -bb * sn + dd * cs;
  temp = (a + d) / 2;
  a = temp;
  d = temp;
  if (c == R(0)) return;
  if (b == R(0)) {
    b = -c;
    c = 0;
    temp = cs;
    cs = -sn;
    sn = temp;
    return;
  }
  if (sign(b) != sign(c)) return;
  // Real eigenvalues: reduce to upper triangular form.
  const R sab = std::sqrt(std::fabs(b)), sac = std::sqrt(std::fabs(c));
  p = std::copysign(sab * sac, c);
  tau = R(1) / std::sqrt(std::fabs(b + c));
  a = temp + p;
  d = temp - p;
  b = b - c;
  c = 0;
  const R cs1 = sab * tau, sn1 = sac * tau;
  temp = cs * cs1 - sn * sn1;
  sn = cs * sn1 + sn * cs1;
  cs = temp;
}

// drot on x[0], x[stride], ... and y likewise: (x, y) := (cs x + sn y, cs y - sn x).
template <typename R>
void Rotate(R* x, R* y, int64_t count, int64_t stride, R cs, R sn) {
  for (int64_t k = 0; k < count; ++k) {
    const R first = x[k * stride], second = y[k * stride];
    x[k * stride] = cs * first + sn * second;
    y[k * stride] = cs * second - sn * first;
  }
}

// The two shifts of dlahqr's double-shift step (rt1 and rt2, as real and
// imaginary parts): the eigenvalues of the trailing 2x2 block, or the
// exceptional shift every kExceptionalShiftEvery iterations.
template <typename R>
std::array<R, 4> RealShifts(const Active<R>& m, int64_t l, int64_t i, int64_t deflations) {
  const ColumnMajor<R> h = m.h;
  R h11, h12, h21, h22;
  if (deflations % (2 * kExceptionalShiftEvery) == 0 || deflations % kExceptionalShiftEvery == 0) {
    const bool bottom = deflations % (2 * kExceptionalShiftEvery) == 0;
    const R s = bottom ? std::fabs(h(i, i - 1)) + std::fabs(h(i - 1, i - 2))
                       : std::fabs(h(l + 1, l)) + std::fabs(h(l + 2, l + 1));
    h11 = R(kExceptionalWeight) * s + (bottom ? h(i, i) : h(l, l));
    h12 = R(kExceptionalOffDiagonal) * s;
    h21 = s;
    h22 = h11;
  } else {
    h11 = h(i - 1, i - 1);
    h21 = h(i, i - 1);
    h12 = h(i - 1, i);
    h22 = h(i, i);
  }
  const R s = std::fabs(h11) + std::fabs(h12) + std::fabs(h21) + std::fabs(h22);
  if (s == R(0)) return {0, 0, 0, 0};
  h11 /= s;
  h21 /= s;
  h12 /= s;
  h22 /= s;
  const R trace = (h11 + h22) / 2;
  const R det = (h11 - trace) * (h22 - trace) - h12 * h21;
  const R root = std::sqrt(std::fabs(det));
  if (det >= R(0)) return {trace * s, root * s, trace * s, -root * s};  // a conjugate pair
  // Real shifts: use the one nearer h22 twice.
  R first = trace + root, second = trace - root;
  first = std::fabs(first - h22) <= std::fabs(second - h22) ? first * s : second * s;
  return {first, 0, first, 0};
}

// Applies the reflector I - t1 (1, v2, v3)(1, v2, v3)^T (order nr = 2 or 3)
// at rows/columns k.. of the double-shift sweep over [l, i].
template <typename R>
void ApplyBulgeReflector(const Active<R>& m, int64_t k, int64_t i, int64_t nr, R t1, R v2, R v3) {
  const ColumnMajor<R> h = m.h;
  const R t2 = t1 * v2, t3 = t1 * v3;
  const bool three = nr == 3;
  for (int64_t j = k; j < m.n; ++j) {  // from the left, columns k..
    R sum = h(k, j) + v2 * h(k + 1, j);
    if (three) sum += v3 * h(k + 2, j);
    h(k, j) -= sum * t1;
    h(k + 1, j) -= sum * t2;
    if (three) h(k + 2, j) -= sum * t3;
  }
  auto right = [&](R& x, R& y, R* w) {
    R sum = x + v2 * y;
    if (three) sum += v3 * *w;
    x -= sum * t1;
    y -= sum * t2;
    if (three) *w -= sum * t3;
  };
  const int64_t last_row = three ? std::min(k + 3, i) : i;
  for (int64_t j = 0; j <= last_row; ++j) {  // from the right, rows ..min(k+3, i)
    right(h(j, k), h(j, k + 1), three ? &h(j, k + 2) : nullptr);
  }
  if (m.z == nullptr) return;
  for (int64_t j = m.ilo; j <= m.ihi; ++j) {
    right(m.Z(j, k), m.Z(j, k + 1), three ? &m.Z(j, k + 2) : nullptr);
  }
}

// One double-shift QR sweep of dlahqr over the active block [l, i].
template <typename R>
void RealSweep(const Active<R>& m, int64_t l, int64_t i, int64_t deflations) {
  const ColumnMajor<R> h = m.h;
  const R ulp = lapack::Precision<R>();
  const auto [rt1r, rt1i, rt2r, rt2i] = RealShifts(m, l, i, deflations);
  // Start the sweep at row `start` when that makes h(start, start-1) negligible.
  R v[3];
  int64_t start = i - 2;
  for (;; --start) {
    const int64_t s0 = start;
    R s = std::fabs(h(s0, s0) - rt2r) + std::fabs(rt2i) + std::fabs(h(s0 + 1, s0));
    const R h21s = h(s0 + 1, s0) / s;
    v[0] = h21s * h(s0, s0 + 1) + (h(s0, s0) - rt1r) * ((h(s0, s0) - rt2r) / s) - rt1i * (rt2i / s);
    v[1] = h21s * (h(s0, s0) + h(s0 + 1, s0 + 1) - rt1r - rt2r);
    v[2] = h21s * h(s0 + 2, s0 + 1);
    s = std::fabs(v[0]) + std::fabs(v[1]) + std::fabs(v[2]);
    for (R& x : v) x /= s;
    if (s0 == l) break;
    const R h00 = std::fabs(h(s0, s0 - 1)) * (std::fabs(v[1]) + std::fabs(v[2]));
    const R h01 = ulp * std::fabs(v[0]) *
                  (std::fabs(h(s0 - 1, s0 - 1)) + std::fabs(h(s0, s0)) +
                   std::fabs(h(s0 + 1, s0 + 1)));
    if (h00 <= h01) break;
  }
  for (int64_t k = start; k <= i - 1; ++k) {
    const int64_t nr = std::min<int64_t>(3, i - k + 1);
    if (k > start) {
      for (int64_t r = 0; r < nr; ++r) v[r] = h(k + r, k - 1);
    }
    const R t1 = Larfg(nr, v[0], &v[1], 1);
    if (k > start) {
      h(k, k - 1) = v[0];
      h(k + 1, k - 1) = 0;
      if (k < i - 1) h(k + 2, k - 1) = 0;
    } else if (start > l) {
      // Not h(k, k-1) = -h(k, k-1): that goes wrong when v[1] and v[2] underflow.
      h(k, k - 1) *= R(1) - t1;
    }
    ApplyBulgeReflector(m, k, i, nr, t1, v[1], nr == 3 ? v[2] : R(0));
  }
}

// dlahqr's end of a 2x2 block that split off at rows i-1, i: standardized
// (dlanv2), its rotation applied to the rest of H and to Z.
template <typename R>
void StandardizeSplitBlock(const Active<R>& m, int64_t i) {
  const ColumnMajor<R> h = m.h;
  R cs, sn;
  StandardizeBlock(h(i - 1, i - 1), h(i - 1, i), h(i, i - 1), h(i, i), cs, sn);
  if (i + 1 < m.n) Rotate(&h(i - 1, i + 1), &h(i, i + 1), m.n - i - 1, h.ld, cs, sn);
  Rotate(&h(0, i - 1), &h(0, i), i - 1, 1, cs, sn);
  if (m.z != nullptr) Rotate(&m.Z(m.ilo, i - 1), &m.Z(m.ilo, i), m.ihi - m.ilo + 1, 1, cs, sn);
}

// --- zlahqr (complex) ----------------------------------------------------------

// Multiplies row `row`, columns [first, last], of h by `factor`.
template <typename C>
void ScaleRow(ColumnMajor<C> h, int64_t row, int64_t first, int64_t last, C factor) {
  for (int64_t c = first; c <= last; ++c) h(row, c) *= factor;
}
// Multiplies column `column`, rows [first, last], of h by `factor`.
template <typename C>
void ScaleColumn(ColumnMajor<C> h, int64_t column, int64_t first, int64_t last, C factor) {
  for (int64_t r = first; r <= last; ++r) h(r, column) *= factor;
}

// zlahqr's single shift: Wilkinson's (the eigenvalue of the trailing 2x2
// block nearer h(i, i)), or the exceptional shift.
template <typename C>
C ComplexShift(ColumnMajor<C> h, int64_t l, int64_t i, int64_t deflations) {
  using R = RealOf<C>;
  if (deflations % (2 * kExceptionalShiftEvery) == 0) {
    return R(kExceptionalWeight) * std::fabs(h(i, i - 1).real()) + h(i, i);
  }
  if (deflations % kExceptionalShiftEvery == 0) {
    return R(kExceptionalWeight) * std::fabs(h(l + 1, l).real()) + h(l, l);
  }
  C t = h(i, i);
  const C u = std::sqrt(h(i - 1, i)) * std::sqrt(h(i, i - 1));
  R s = Abs1(u);
  if (s == R(0)) return t;
  const C x = R(0.5) * (h(i - 1, i - 1) - t);
  const R sx = Abs1(x);
  s = std::max(s, Abs1(x));
  C y = s * std::sqrt((x / s) * (x / s) + (u / s) * (u / s));
  if (sx > R(0)) {
    const C unit = x / sx;
    if (unit.real() * y.real() + unit.imag() * y.imag() < R(0)) y = -y;
  }
  return t - u * (u / (x + y));
}

// One single-shift QR sweep of zlahqr over the active block [l, i].
template <typename C>
void ComplexSweep(const Active<C>& m, int64_t l, int64_t i, int64_t deflations) {
  using R = RealOf<C>;
  const ColumnMajor<C> h = m.h;
  const R ulp = lapack::Precision<R>();
  const C t = ComplexShift(h, l, i, deflations);
  // Start at row `start` when that makes h(start, start-1) negligible.
  C v[2];
  int64_t start = i - 1;
  for (;; --start) {
    const C h11 = h(start, start), h22 = h(start + 1, start + 1);
    C h11s = h11 - t;
    R h21 = h(start + 1, start).real();
    const R s = Abs1(h11s) + std::fabs(h21);
    h11s /= s;
    h21 /= s;
    v[0] = h11s;
    v[1] = h21;
    if (start == l) break;
    const R h10 = h(start, start - 1).real();
    if (std::fabs(h10) * std::fabs(h21) <= ulp * (Abs1(h11s) * (Abs1(h11) + Abs1(h22)))) break;
  }
  for (int64_t k = start; k <= i - 1; ++k) {
    if (k > start) {
      v[0] = h(k, k - 1);
      v[1] = h(k + 1, k - 1);
    }
    const C t1 = Larfg(2, v[0], &v[1], 1);
    if (k > start) {
      h(k, k - 1) = v[0];
      h(k + 1, k - 1) = C(0);
    }
    const C v2 = v[1];
    const R t2 = (t1 * v2).real();  // v[1] is real before larfg, so t1 v2 is
    for (int64_t j = k; j < m.n; ++j) {
      const C sum = std::conj(t1) * h(k, j) + t2 * h(k + 1, j);
      h(k, j) -= sum;
      h(k + 1, j) -= sum * v2;
    }
    auto right = [&](C& x, C& y) {
      const C sum = t1 * x + t2 * y;
      x -= sum;
      y -= sum * std::conj(v2);
    };
    for (int64_t j = 0; j <= std::min(k + 2, i); ++j) right(h(j, k), h(j, k + 1));
    if (m.z != nullptr) {
      for (int64_t j = m.ilo; j <= m.ihi; ++j) right(m.Z(j, k), m.Z(j, k + 1));
    }
    if (k == start && start > l) {
      // Started below l: scale so that h(start, start-1) stays real.
      C temp = C(1) - t1;
      temp /= std::abs(temp);
      h(start + 1, start) *= std::conj(temp);
      if (start + 2 <= i) h(start + 2, start + 1) *= temp;
      for (int64_t j = start; j <= i; ++j) {
        if (j == start + 1) continue;
        if (m.n - 1 > j) ScaleRow(h, j, j + 1, m.n - 1, temp);
        ScaleColumn(h, j, 0, j - 1, std::conj(temp));
        if (m.z != nullptr) ScaleColumn(ColumnMajor<C>{m.z, m.n}, j, m.ilo, m.ihi, std::conj(temp));
      }
    }
  }
  // Make h(i, i-1) real.
  const C temp = h(i, i - 1);
  if (temp.imag() == R(0)) return;
  const R magnitude = std::abs(temp);
  h(i, i - 1) = magnitude;
  const C unit = temp / magnitude;
  if (m.n - 1 > i) ScaleRow(h, i, i + 1, m.n - 1, std::conj(unit));
  ScaleColumn(h, i, 0, i - 1, unit);
  if (m.z != nullptr) ScaleColumn(ColumnMajor<C>{m.z, m.n}, i, m.ilo, m.ihi, unit);
}

// zlahqr's start: scales rows and columns of H (and Z's columns) by unit
// complex numbers so that the subdiagonal of [ilo, ihi] is real.
template <typename C>
void MakeSubdiagonalReal(const Active<C>& m) {
  using R = RealOf<C>;
  const ColumnMajor<C> h = m.h;
  for (int64_t i = m.ilo + 1; i <= m.ihi; ++i) {
    if (h(i, i - 1).imag() == R(0)) continue;
    C scale = h(i, i - 1) / Abs1(h(i, i - 1));  // normalized twice against underflow
    scale = std::conj(scale) / std::abs(scale);
    h(i, i - 1) = std::abs(h(i, i - 1));
    ScaleRow(h, i, i, m.n - 1, scale);
    ScaleColumn(h, i, 0, std::min(m.n - 1, i + 1), std::conj(scale));
    if (m.z != nullptr) ScaleColumn(ColumnMajor<C>{m.z, m.n}, i, m.ilo, m.ihi, std::conj(scale));
  }
}

// --- lahqr's main loop -----------------------------------------------------------

// dlahqr / zlahqr with wantt: the Schur form of the Hessenberg block
// [ilo, ihi] of H, Z updated. From the bottom up, QR sweeps run over the
// active block [l, i] until a 1x1 block (or, real, a 2x2 one) splits off at
// its bottom. False when that takes more than 30 sweeps per row.
template <typename T>
bool SchurIteration(const Active<T>& m) {
  using R = RealOf<T>;
  const ColumnMajor<T> h = m.h;
  const int64_t ilo = m.ilo, ihi = m.ihi;
  if (m.n == 0 || ilo == ihi) return true;
  for (int64_t j = ilo; j + 3 <= ihi; ++j) h(j + 2, j) = h(j + 3, j) = T(0);
  if (ilo <= ihi - 2) h(ihi, ihi - 2) = T(0);
  if constexpr (kIsComplex<T>) MakeSubdiagonalReal(m);
  const int64_t size = ihi - ilo + 1;
  const R ulp = lapack::Precision<R>();
  const R small = lapack::SafeMinimum<R>() * (R(size) / ulp);
  const int64_t max_iterations = 30 * std::max<int64_t>(10, size);
  const int64_t largest_block = kIsComplex<T> ? 1 : 2;
  int64_t deflations = 0;
  for (int64_t i = ihi; i >= ilo;) {
    int64_t l = ilo;
    bool split = false;
    for (int64_t iteration = 0; iteration <= max_iterations && !split; ++iteration) {
      l = NegligibleSubdiagonal(h, l, i, ilo, ihi, small, ulp);
      if (l > ilo) h(l, l - 1) = T(0);
      split = l > i - largest_block;
      if (split) break;
      if constexpr (kIsComplex<T>) {
        ComplexSweep(m, l, i, ++deflations);
      } else {
        RealSweep(m, l, i, ++deflations);
      }
    }
    if (!split) return false;
    if constexpr (!kIsComplex<T>) {
      if (l == i - 1) StandardizeSplitBlock(m, i);
    }
    deflations = 0;
    i = l - 1;
  }
  return true;
}

// --- gees ------------------------------------------------------------------------

// After scaling a tiny real Schur form back down, a 2x2 block whose
// subdiagonal underflowed is triangular already; one whose superdiagonal
// did is swapped into triangular form (dgees, scaling back towards
// underflow). `pairs[i]`: rows i, i+1 held a 2x2 block before.
template <typename R>
void FixUnderflowedBlocks(ColumnMajor<R> t, ColumnMajor<R>* z, int64_t n, int64_t ilo, int64_t ihi,
                          const std::vector<bool>& pairs) {
  for (int64_t i = ilo; i < ihi; ++i) {
    if (!pairs[static_cast<size_t>(i)]) continue;
    if (t(i + 1, i) != R(0) && t(i, i + 1) == R(0)) {
      SwapColumns(t, i, i + 1, i);
      for (int64_t c = i + 2; c < n; ++c) std::swap(t(i, c), t(i + 1, c));
      if (z != nullptr) SwapColumns(*z, i, i + 1, n);
      t(i, i + 1) = t(i + 1, i);
      t(i + 1, i) = 0;
    }
    ++i;
  }
}

// gees (jobvs 'V' when z is not null, no sorting) on the column-major
// n x n `a`, which becomes T. False when the QR iteration fails.
template <typename T>
bool SchurOne(ColumnMajor<T> a, ColumnMajor<T>* z, int64_t n, Workspace<T>& work) {
  using R = RealOf<T>;
  if (n == 0) return true;
  // Scale a matrix whose largest element is outside [small, big].
  R largest = 0;
  for (int64_t k = 0; k < n * n; ++k) {
    const R magnitude = std::abs(a.data[k]);
    if (largest < magnitude || std::isnan(magnitude)) largest = magnitude;
    if (std::isnan(largest)) break;
  }
  const R small = std::sqrt(lapack::SafeMinimum<R>()) / lapack::Precision<R>();
  const R big = R(1) / small;
  const bool scaled = (largest > R(0) && largest < small) || largest > big;
  const R target = largest > big ? big : small;
  if (scaled) Rescale(a, n, largest, target, Part::kFull);
  const auto [ilo, ihi] = IsolateEigenvalues(a, n, work.permutation);
  work.taus.resize(static_cast<size_t>(n));
  ReduceToHessenberg(a, n, ilo, ihi, work.taus.data(), work.reflector);
  if (z != nullptr) {
    std::memcpy(z->data, a.data, static_cast<size_t>(n * n) * sizeof(T));
    FormHessenbergQ(*z, n, ilo, ihi, work.taus.data(), work.reflector);
  }
  const Active<T> active{a, z == nullptr ? nullptr : z->data, n, ilo, ihi};
  bool converged = true;
  if (ilo < ihi) {
    converged = SchurIteration(active);
    for (int64_t c = 0; c < n; ++c) {
      for (int64_t r = c + 2; r < n; ++r) a(r, c) = T(0);
    }
  }
  if (!converged) return false;
  if (z != nullptr) UndoIsolation(*z, n, ilo, ihi, work.permutation);
  if (scaled) {
    if constexpr (kIsComplex<T>) {
      Rescale(a, n, target, largest, Part::kUpperTriangle);
    } else {
      work.pairs.assign(static_cast<size_t>(n), false);
      for (int64_t i = ilo; i < ihi; ++i) work.pairs[static_cast<size_t>(i)] = a(i + 1, i) != R(0);
      Rescale(a, n, target, largest, Part::kUpperHessenberg);
      if (target == small) FixUnderflowedBlocks(a, z, n, ilo, ihi, work.pairs);
    }
  }
  return true;
}

}  // namespace

Status Hessenberg(ElementType type, const void* a, void* out, void* taus, int64_t batch,
                  int64_t n) {
  return DispatchLinalgType(type, "hessenberg", [&]<typename T>() {
    const int64_t off = std::max<int64_t>(n - 1, 0);
    ParallelFor(batch, std::max<int64_t>(1, 10 * n * n * n / 3), [&](int64_t begin, int64_t end) {
      Workspace<T> work;
      work.h.resize(static_cast<size_t>(n * n));
      for (int64_t item = begin; item < end; ++item) {
        lapack::ToColumnMajor(static_cast<const T*>(a) + item * n * n, work.h.data(), n, n);
        ReduceToHessenberg(ColumnMajor<T>{work.h.data(), n}, n, 0, n - 1,
                           static_cast<T*>(taus) + item * off, work.reflector);
        lapack::ToRowMajor(work.h.data(), static_cast<T*>(out) + item * n * n, n, n);
      }
    });
  });
}

Status Schur(ElementType type, const void* a, void* t, void* schur_vectors, int64_t batch,
             int64_t n) {
  return DispatchLinalgType(type, "schur", [&]<typename T>() {
    ParallelFor(batch, std::max<int64_t>(1, 25 * n * n * n), [&](int64_t begin, int64_t end) {
      Workspace<T> work;
      work.h.resize(static_cast<size_t>(n * n));
      work.z.resize(static_cast<size_t>(n * n));
      for (int64_t item = begin; item < end; ++item) {
        T* form = static_cast<T*>(t) + item * n * n;
        T* vectors = schur_vectors == nullptr ? nullptr
                                              : static_cast<T*>(schur_vectors) + item * n * n;
        lapack::ToColumnMajor(static_cast<const T*>(a) + item * n * n, work.h.data(), n, n);
        ColumnMajor<T> h{work.h.data(), n}, z{work.z.data(), n};
        if (!SchurOne(h, vectors == nullptr ? nullptr : &z, n, work)) {
          // NaN + NaN i for complex, as JAX's CPU lowering fills a failure.
          const RealOf<T> real_nan = std::numeric_limits<RealOf<T>>::quiet_NaN();
          T nan(real_nan);
          if constexpr (kIsComplex<T>) nan = T(real_nan, real_nan);
          std::fill(form, form + n * n, nan);
          if (vectors != nullptr) std::fill(vectors, vectors + n * n, nan);
          continue;
        }
        lapack::ToRowMajor(work.h.data(), form, n, n);
        if (vectors != nullptr) lapack::ToRowMajor(work.z.data(), vectors, n, n);
      }
    });
  });
}

}  // namespace kiln::kernels
