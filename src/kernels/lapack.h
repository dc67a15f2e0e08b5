// LAPACK and BLAS routines lent to Kiln at run time by the process it runs
// in, for the factorizations where a tuned library beats Kiln's own
// kernels (docs/decisions.md, "LAPACK from the host process").
//
// JAX's CPU backend takes its LAPACK from SciPy (jaxlib reads the function
// pointers scipy.linalg.cython_lapack and cython_blas export); under JAX,
// Kiln's Python package hands the same functions to the plugin through
// KilnRegisterHostFunction (capi). The routines have the Fortran calling
// convention of those modules: every argument by pointer, 32-bit integers,
// column-major matrices. Where a routine is not registered (PyTorch/XLA,
// the C++ tests, KILN_LAPACK=0) the kernels use their own code.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/element_type.h"
#include "kernels/copy.h"

namespace kiln::kernels::lapack {

// One routine per element type, indexed by TypeIndex: s, d, c, z.
using Getrf = void(int* m, int* n, void* a, int* lda, int* ipiv, int* info);
using Potrf = void(char* uplo, int* n, void* a, int* lda, int* info);
using Trsm = void(char* side, char* uplo, char* transa, char* diag, int* m, int* n,
                  const void* alpha, const void* a, int* lda, void* b, int* ldb);
using Geqrf = void(int* m, int* n, void* a, int* lda, void* tau, void* work, int* lwork, int* info);
// orgqr (s, d) and ungqr (c, z).
using Orgqr = void(int* m, int* n, int* k, void* a, int* lda, const void* tau, void* work,
                   int* lwork, int* info);
// syevd (s, d): work and w in the real type.
using Syevd = void(char* jobz, char* uplo, int* n, void* a, int* lda, void* w, void* work,
                   int* lwork, int* iwork, int* liwork, int* info);
// gesdd (s, d); the complex ones (c, z) take `rwork` (real) before iwork.
using Gesdd = void(char* jobz, int* m, int* n, void* a, int* lda, void* s, void* u, int* ldu,
                   void* vt, int* ldvt, void* work, int* lwork, int* iwork, int* info);
using GesddComplex = void(char* jobz, int* m, int* n, void* a, int* lda, void* s, void* u, int* ldu,
                          void* vt, int* ldvt, void* work, int* lwork, void* rwork, int* iwork,
                          int* info);
// heevd (c, z): w and rwork in the real type.
using Heevd = void(char* jobz, char* uplo, int* n, void* a, int* lda, void* w, void* work,
                   int* lwork, void* rwork, int* lrwork, int* iwork, int* liwork, int* info);

// 0..3 for f32, f64, c64, c128; -1 for any other type.
int TypeIndex(ElementType type);

// Stores `function` under its LAPACK name ("sgetrf", "zpotrf", "dtrsm",
// "cgeqrf", "dorgqr", "zungqr", "ssyevd", "cheevd", "zgesdd", ...); false for a name
// Kiln does not use (nothing is stored). Thread-safe;
// registering again replaces the function.
bool Register(std::string_view name, void* function);

// The registered routine for `type`, or null.
Getrf* GetGetrf(ElementType type);
Potrf* GetPotrf(ElementType type);
Trsm* GetTrsm(ElementType type);
Geqrf* GetGeqrf(ElementType type);
Orgqr* GetOrgqr(ElementType type);
Syevd* GetSyevd(ElementType type);                // f32, f64 only
Heevd* GetHeevd(ElementType type);                // c64, c128 only
Gesdd* GetGesdd(ElementType type);                // f32, f64 only
GesddComplex* GetGesddComplex(ElementType type);  // c64, c128 only

// Forgets every routine (tests).
void ClearForTesting();

// Whether a size fits LAPACK's 32-bit integers (element counts, which it
// indexes with, and workspace lengths): the kernels keep their own code, or
// refuse, where one does not.
inline bool FitsInt(int64_t value) { return value >= 0 && value <= INT32_MAX; }

// to (cols x rows) = from (rows x cols)^T, both dense row-major: the
// column-major copy LAPACK factors, and back (CopyStrided's blocked
// transpose).
template <typename T>
void Transpose(const T* from, int64_t rows, int64_t cols, T* to) {
  const int64_t dims[] = {cols, rows};
  const int64_t strides[] = {1, cols};
  CopyStrided(sizeof(T), dims, from, strides, to);
}

}  // namespace kiln::kernels::lapack
