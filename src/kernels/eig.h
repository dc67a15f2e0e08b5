// Eigendecomposition of general square matrices (LAPACK geev's job): the
// kernel behind jnp.linalg.eig / eigvals on Kiln.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// Eigenvalues `values` [batch, n] (complex: c64 for f32/c64 input, c128 for
// f64/c128) of `batch` row-major n x n matrices `a` of f32, f64, c64 or c128,
// and, when not null, right eigenvectors (A v = w v) and left eigenvectors
// (u^H A = w u^H) as the columns of [batch, n, n] complex arrays, in the
// order of the eigenvalues: for complex input LAPACK zgeev's order (the
// diagonal of gees's Schur form, schur.h), for real input Eigen's real Schur
// form's, conjugate pairs positive imaginary part first. Each eigenvector has unit 2-norm and its
// largest-magnitude component real and positive (LAPACK normalizes to norm 1
// with the largest component real). Left eigenvectors come from the inverse
// of the right ones, so a defective matrix gives inaccurate ones. A matrix
// with NaN or infinity, or one the iteration does not converge on, gives NaN
// everywhere, as XLA's CPU backend gives for a LAPACK failure.
Status Eig(ElementType type, const void* a, void* values, void* left, void* right, int64_t batch,
           int64_t n);

}  // namespace kiln::kernels
