// Hessenberg reduction and Schur decomposition of general square matrices in
// LAPACK's forms (gehrd, gees): the kernels behind lax.linalg.hessenberg and
// lax.linalg.schur (jax.scipy.linalg.hessenberg, schur, sqrtm, funm) on
// Kiln. JAX's CPU backend calls LAPACK for both and JAX's Python code reads
// LAPACK's packed output, so these follow the reference algorithms step for
// step. Matrices are batches of dense row-major arrays of f32, f64, c64 or
// c128.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// Reduces `batch` n x n matrices to upper Hessenberg form H = Q^H A Q
// (LAPACK gehrd with ilo = 1, ihi = n). `out` holds H on and above the first
// subdiagonal and, below it, the vectors v_i of the reflectors
// H(i) = I - tau_i v_i v_i^H (v_i is zero above row i + 1 and 1 at it, not
// stored); `taus` [batch, n - 1]; Q = H(0) H(1) ... H(n - 2). Complex input
// gives a real subdiagonal. out may alias a.
Status Hessenberg(ElementType type, const void* a, void* out, void* taus, int64_t batch, int64_t n);

// Schur decomposition A = Z T Z^H of `batch` n x n matrices, as LAPACK gees
// computes it without sorting: scaling of matrices with tiny or huge
// elements, permutation to isolate eigenvalues (gebal 'P'), Hessenberg
// reduction and the double-shift (real) or single-shift (complex) QR
// iteration of lahqr. `t` is real input's real Schur form (1x1 and 2x2
// blocks, each 2x2 block with equal diagonal elements and off-diagonal
// elements of opposite signs, as dlanv2 standardizes them) or complex
// input's upper triangular form; `schur_vectors` (Z, unitary; not computed
// when null) has the same shape. Up to n = 75 LAPACK runs lahqr too and the
// eigenvalues come in its order; above, LAPACK's multishift iteration
// (laqr0) may order them differently. A matrix the iteration does not
// converge on gives NaN in both results, as JAX's CPU lowering makes it.
Status Schur(ElementType type, const void* a, void* t, void* schur_vectors, int64_t batch,
             int64_t n);

}  // namespace kiln::kernels
