"""Lends the plugin SciPy's LAPACK and BLAS, as jaxlib does for XLA's CPU backend.

jaxlib's CPU kernels call the LAPACK routines whose addresses
`scipy.linalg.cython_lapack` and `cython_blas` export in `__pyx_capi__`
(capsules of Fortran-convention functions). Kiln takes the same ones, for
the factorizations where that library beats Kiln's own code (LU, Cholesky,
triangular solves, QR and its Q, Hermitian eigendecomposition, of 32 or
more rows; SVD, which kiln_pjrt/linalg.py then lowers to gesdd): `lend()`
passes each address to the plugin's exported `KilnRegisterHostFunction`. The plugin library is loaded
here with ctypes; jaxlib's later dlopen of the same file gets the same
instance, so the registration is the one its kernels see. Without SciPy, or
with KILN_LAPACK=0, nothing is lent and Kiln's own kernels run
(docs/decisions.md, "LAPACK from the host process").
"""

import ctypes
import os

# The routines Kiln calls, per element type (s, d, c, z); a pair names the
# real and the complex routine.
LAPACK_ROUTINES = ("getrf", "potrf", "geqrf", ("orgqr", "ungqr"), ("syevd", "heevd"), "gesdd")
BLAS_ROUTINES = ("trsm",)


def _capsule_pointer(capsule) -> int:
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    return pointer(capsule, name(capsule))


def lend(path: str) -> list[str]:
    """Registers SciPy's routines with the plugin at `path`; the names taken."""
    if os.environ.get("KILN_LAPACK") == "0":
        return []
    try:
        from scipy.linalg import cython_blas, cython_lapack
    except ImportError:
        return []
    try:
        register = ctypes.CDLL(path).KilnRegisterHostFunction
    except (OSError, AttributeError):  # a library older than the export
        return []
    register.restype, register.argtypes = ctypes.c_int, [ctypes.c_char_p, ctypes.c_void_p]
    taken = []
    for module, routines in ((cython_lapack, LAPACK_ROUTINES), (cython_blas, BLAS_ROUTINES)):
        exported = getattr(module, "__pyx_capi__", {})
        for routine in routines:
            for prefix in "sdcz":
                name = prefix + (routine if isinstance(routine, str)
                                 else routine[prefix in "cz"])
                capsule = exported.get(name)
                if capsule is not None and register(name.encode(), _capsule_pointer(capsule)):
                    taken.append(name)
    return taken
