// Tridiagonal linear algebra in LAPACK's forms, for lax.linalg.tridiagonal
// and lax.linalg.tridiagonal_solve: JAX's CPU backend calls LAPACK's
// sytrd/hetrd and gtsv, and its tests compare with SciPy's LAPACK, so these
// follow the reference algorithms step for step (sytd2/hetd2, gtsv).
// Matrices are batches of dense row-major arrays of f32, f64, c64 or c128.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// Reduces `batch` Hermitian n x n matrices to real symmetric tridiagonal
// form T = Q^H A Q (LAPACK sytrd/hetrd). Reads a's `lower` (else upper)
// triangle; `out` is a with that triangle overwritten by the Householder
// vectors below (above) the first sub- (super-) diagonal and the other
// triangle unchanged. `d` [batch, n] and `e` [batch, n - 1] are T's
// diagonal and off-diagonal (real: f32 for c64, f64 for c128), `taus`
// [batch, n - 1] the reflectors' scalars, Q = H(1) ... H(n-1) (lower) or
// H(n-1) ... H(1) (upper).
Status Tridiagonalize(ElementType type, const void* a, void* out, void* d, void* e, void* taus,
                      int64_t batch, int64_t n, bool lower);

// Solves tridiagonal systems A x = b per batch item by Gaussian elimination
// with partial pivoting (LAPACK gtsv): dl, d, du [batch, n] hold A's sub-,
// main and super-diagonal (dl[0] and du[n-1] are not read), b and out
// [batch, n, nrhs]. A singular system's solution is all NaN, as JAX's CPU
// lowering makes it.
Status TridiagonalSolve(ElementType type, const void* dl, const void* d, const void* du,
                        const void* b, void* out, int64_t batch, int64_t n, int64_t nrhs);

}  // namespace kiln::kernels
