// Dense linear-algebra kernels: Cholesky, triangular solve, Householder QR
// (LAPACK geqrf's packed form) and the product of its reflectors (orgqr),
// and exact top-k. Matrices are batches of dense row-major [rows, cols]
// arrays of f32, f64, c64 or c128; the factorizations call Eigen's blocked
// algorithms on mapped memory, one batch item per ParallelFor item.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// Cholesky factors of `batch` Hermitian positive definite n x n matrices.
// `lower`: reads a's lower triangle and writes L (A = L L^H), else reads the
// upper triangle and writes U (A = U^H U); the other triangle is zeroed. A
// matrix that is not positive definite (or has NaN) gives all NaN, as XLA's
// CPU backend does.
Status Cholesky(ElementType type, const void* a, void* out, int64_t batch, int64_t n, bool lower);

// How triangular_solve uses a: op(a) = a, a^T or a^H.
enum class TriangularTranspose { kNoTranspose, kTranspose, kAdjoint };

// Solves op(a) x = b (`left_side`) or x op(a) = b for x, per batch item: a
// is [batch, k, k] with k = m (left) or n (right), b and out [batch, m, n].
// Only a's `lower` (else upper) triangle is read; `unit_diagonal` assumes
// ones on its diagonal without reading it. out may not alias a.
Status TriangularSolve(ElementType type, const void* a, const void* b, void* out, int64_t batch,
                       int64_t m, int64_t n, bool left_side, bool lower, bool unit_diagonal,
                       TriangularTranspose transpose);

// Householder QR of [batch, m, n] matrices in LAPACK geqrf's form: R on and
// above the diagonal of `out`, the reflectors' vectors v_i (v_i[i] = 1
// implied) below it, and taus [batch, min(m, n)] with
// A = H_1 ... H_k R, H_i = I - tau_i v_i v_i^H.
Status HouseholderQr(ElementType type, const void* a, void* out, void* taus, int64_t batch,
                     int64_t m, int64_t n);

// LAPACK orgqr/ungqr: the first n columns of H_1 ... H_k for the vectors
// below the diagonal of a [batch, m, n] (m >= n >= k) and taus [batch, k].
Status HouseholderProduct(ElementType type, const void* a, const void* taus, void* out,
                          int64_t batch, int64_t m, int64_t n, int64_t k);

// LU with partial pivoting of [batch, m, n] matrices as LAPACK getrf
// computes it: L (unit diagonal implied) below and U on and above the
// diagonal of `out` (which may be `a`), the 0-based row each step swapped
// with in `pivots` [batch, min(m, n)], and the row permutation those swaps
// make in `permutation` [batch, m] (row i of L U is row permutation[i] of
// a). A zero pivot leaves its column unscaled, as getrf does.
Status LuDecomposition(ElementType type, const void* a, void* out, int32_t* pivots,
                       int32_t* permutation, int64_t batch, int64_t m, int64_t n);

// The orders top-k selects in, each matching XLA's CPU backend (ties always
// by position).
enum class TopKOrder {
  kTotalOrderDescending,  // chlo.top_k: +NaN first, -NaN last, +0 before -0
  // ApproxTopK with GT selecting every element (XLA CPU sorts then, and
  // with k < size it runs kTotalOrderDescending): NaN of either sign
  // first, -0 == +0.
  kApproxMaxAll,
  kApproxMin,  // ApproxTopK with LT: ascending, NaN of either sign last, -0 == +0
};

// Exact top-k along the middle dimension of [outer, size, inner] `keys`:
// the first `k` elements in `order`. Writes the keys to `out_keys` [outer, k, inner] and, per
// payload array (same shape as keys, `payload_bytes[p]` per element), the elements at the same
// positions, and to `out_indices` (if not null; i32) their positions along the dimension. k <=
// size.
Status TopK(ElementType key_type, const void* keys, void* out_keys, int64_t outer, int64_t size,
            int64_t inner, int64_t k, TopKOrder order, const void* const* payloads,
            void* const* out_payloads, const int64_t* payload_bytes, int64_t num_payloads,
            int32_t* out_indices);

}  // namespace kiln::kernels
