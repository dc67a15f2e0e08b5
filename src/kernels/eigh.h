// Hermitian eigendecomposition (LAPACK syevd/heevd's job): the kernel behind
// jnp.linalg.eigh, and through it JAX's generic SVD, pinv and lstsq.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// Eigenvalues and eigenvectors of `batch` Hermitian n x n row-major matrices
// of f32, f64, c64 or c128. Only a's `lower` (else upper) triangle is read.
// `vectors` [batch, n, n] holds the eigenvectors as columns, `values`
// [batch, n] (the real type of `type`) the eigenvalues in ascending order. A
// matrix with NaN or infinity, or one the iteration does not converge on,
// gives NaN in both, as XLA's CPU backend gives for a LAPACK failure.
Status Eigh(ElementType type, const void* a, void* vectors, void* values, int64_t batch, int64_t n,
            bool lower);

}  // namespace kiln::kernels
