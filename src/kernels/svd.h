// Singular value decomposition (LAPACK gesdd's job), the kernel behind
// jnp.linalg.svd where Kiln's package lowers it (kiln_pjrt/linalg.py): on
// the host's LAPACK only (kernels/lapack.h), as XLA's CPU backend runs it.
#pragma once

#include <cstdint>

#include "base/element_type.h"
#include "base/status.h"

namespace kiln::kernels {

// What gesdd computes besides the singular values: jobz 'A', 'S' or 'N'.
enum class SvdJob { kFull, kReduced, kValuesOnly };

// A = U diag(s) V^H of `batch` row-major m x n matrices of f32, f64, c64 or
// c128, k = min(m, n): `s` [batch, k] in the real type, descending; `u`
// [batch, m, m (kFull) or k] and `vt` [batch, n (kFull) or k, n], unused
// (may be null) for kValuesOnly. A failure of the iteration gives NaN in
// every output of that matrix, as XLA's CPU backend gives. UNIMPLEMENTED
// when the host lent no gesdd for `type`.
Status Svd(ElementType type, const void* a, void* s, void* u, void* vt, int64_t batch, int64_t m,
           int64_t n, SvdJob job);

// Whether Svd runs for `type` in this process.
bool SvdAvailable(ElementType type);

}  // namespace kiln::kernels
