"""Reads the PJRT C API version straight from the plugin library, without JAX."""

import ctypes

from kiln_pjrt import library_path


class _PjrtApiVersion(ctypes.Structure):
    # PJRT_Api_Version from pjrt_c_api.h.
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.c_void_p),
        ("major_version", ctypes.c_int),
        ("minor_version", ctypes.c_int),
    ]


class _PjrtApiHeader(ctypes.Structure):
    # The leading fields of PJRT_Api; the function table that follows is not read.
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("extension_start", ctypes.c_void_p),
        ("pjrt_api_version", _PjrtApiVersion),
    ]


def api_version(path: str | None = None) -> tuple[int, int]:
    """(major, minor) of the PJRT C API the library at `path` implements.

    Raises OSError when the library cannot be loaded and RuntimeError when
    GetPjrtApi returns null.
    """
    library = ctypes.CDLL(path or library_path(), mode=ctypes.RTLD_LOCAL)
    get_api = library.GetPjrtApi
    get_api.restype = ctypes.POINTER(_PjrtApiHeader)
    get_api.argtypes = []
    api = get_api()
    if not api:
        raise RuntimeError(f"GetPjrtApi in {library._name} returned null")
    version = api.contents.pjrt_api_version
    return version.major_version, version.minor_version
