// QR factorization with column pivoting in LAPACK geqp3's form: the kernel
// behind lax.linalg.qr(pivoting=True) (jax.scipy.linalg.qr(pivoting=True),
// qr_multiply) on Kiln. JAX's CPU backend calls LAPACK and JAX's Python code
// reads its packed output and 1-based pivots, so this follows the reference
// algorithm (geqp3 with laqp2) step for step.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// A P = Q R for `batch` row-major m x n matrices `a` of f32, f64, c64 or
// c128. `jpvt` [batch, n] on entry: a nonzero element marks its column as
// fixed (moved to the front, in order, and factored first without
// pivoting); the other columns are pivoted by largest remaining norm. On
// exit `pivots` [batch, n] (may alias jpvt) holds 1-based column numbers:
// column j of A P is column pivots[j] - 1 of A. `out` holds R on and above
// the diagonal and the vectors of the reflectors H(i) = I - tau_i v_i v_i^H
// below it (v_i(i) = 1 not stored), `taus` [batch, min(m, n)];
// Q = H(0) ... H(min(m, n) - 1). out may alias a.
Status PivotedQr(ElementType type, const void* a, const int32_t* jpvt, void* out, int32_t* pivots,
                 void* taus, int64_t batch, int64_t m, int64_t n);

}  // namespace kiln::kernels
