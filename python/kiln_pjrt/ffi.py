"""jax.ffi registrations for platform "kiln" (docs/ffi.md).

`jax.ffi.register_ffi_target(name, fn, platform="kiln")` and
`jax.ffi.register_ffi_type(name, registration, platform="kiln")` reach the
handlers `register()` installs in jaxlib's `xla_client` (which also replays
what was registered before Kiln was initialized). They pass the capsules'
pointers to the plugin library:

- typed FFI handlers (`api_version=1`, a capsule or a dict of stage
  capsules) and types go through the XLA_FFI_Api table the library exports
  (`KilnXlaFfiApi`): its `XLA_FFI_Handler_Register` takes whole handler
  bundles, which the PJRT FFI extension's `register_handler` cannot;
- targets of the custom-call API before FFI (`api_version=0`) go through
  `KilnRegisterCustomCallTarget`.

The library is loaded with ctypes; jaxlib's dlopen of the same file gets the
same instance, so the registry is the one Kiln's compiler reads.
"""

import ctypes
import warnings

from kiln_pjrt import PLATFORM_NAME, library_path

_STAGES = ("instantiate", "prepare", "initialize", "execute")


class _ByteSpan(ctypes.Structure):
    _fields_ = [("ptr", ctypes.c_char_p), ("len", ctypes.c_size_t)]


class _Bundle(ctypes.Structure):
    _fields_ = [(name, ctypes.c_void_p) for name in _STAGES + ("record",)]


class _HandlerRegisterArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("name", _ByteSpan), ("platform", _ByteSpan), ("bundle", _Bundle),
                ("traits", ctypes.c_uint32)]


class _TypeRegisterArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("name", _ByteSpan), ("type_id", ctypes.c_void_p), ("type_info", ctypes.c_void_p)]


class _ErrorDetailsArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p), ("message", ctypes.c_char_p), ("errc", ctypes.c_int)]


class _ErrorDestroyArgs(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("error", ctypes.c_void_p)]


_Function = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
_VoidFunction = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _ApiVersion(ctypes.Structure):
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("major_version", ctypes.c_int), ("minor_version", ctypes.c_int)]


class _Api(ctypes.Structure):
    """The head of XLA_FFI_Api (xla/ffi/api/c_api.h): the functions used here."""
    _fields_ = [("struct_size", ctypes.c_size_t), ("extension_start", ctypes.c_void_p),
                ("api_version", _ApiVersion), ("internal_api", ctypes.c_void_p),
                ("error_create", ctypes.c_void_p), ("error_get_details", _VoidFunction),
                ("error_destroy", _VoidFunction), ("handler_register", _Function),
                ("stream_get", ctypes.c_void_p), ("type_register", _Function)]


class _Library:
    """The plugin library's exports, loaded once."""

    def __init__(self, path):
        library = ctypes.CDLL(path)
        get_api = library.KilnXlaFfiApi
        get_api.restype, get_api.argtypes = ctypes.POINTER(_Api), []
        self.api = get_api().contents
        self.register_legacy = library.KilnRegisterCustomCallTarget
        self.register_legacy.restype = ctypes.c_int
        self.register_legacy.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p,
                                         ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                         ctypes.c_size_t]

    def check(self, error, what):
        """Raises RuntimeError carrying an XLA_FFI_Error's message (and frees it)."""
        if not error:
            return
        details = _ErrorDetailsArgs(ctypes.sizeof(_ErrorDetailsArgs), None, error, None, 0)
        self.api.error_get_details(ctypes.addressof(details))
        message = (details.message or b"").decode(errors="replace")
        destroy = _ErrorDestroyArgs(ctypes.sizeof(_ErrorDestroyArgs), None, error)
        self.api.error_destroy(ctypes.addressof(destroy))
        raise RuntimeError(f"{what}: {message}")


_library = None
_replaying = False


def _capsule_pointer(capsule, what) -> int:
    if isinstance(capsule, int):
        return capsule
    name = ctypes.pythonapi.PyCapsule_GetName
    name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
    pointer = ctypes.pythonapi.PyCapsule_GetPointer
    pointer.restype, pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    try:
        address = pointer(capsule, name(capsule))
    except (TypeError, ValueError) as error:
        raise TypeError(f"{what} must be a PyCapsule holding a function pointer "
                        f"(jax.ffi.pycapsule), found {type(capsule).__name__}") from error
    if not address:
        raise ValueError(f"{what} holds a null pointer")
    return address


def _report(error):
    """Raises `error`, or only warns while replaying registrations made
    before Kiln was initialized (an exception there would fail the plugin's
    initialization, and with it every other registration)."""
    if _replaying:
        warnings.warn(f"Kiln: {error}", RuntimeWarning, stacklevel=3)
        return
    raise error


def register_target(name, fn, platform=PLATFORM_NAME, api_version=0, traits=0):
    """xla_client's custom call handler for platform "kiln"."""
    try:
        encoded = name.encode() if isinstance(name, str) else bytes(name)
        platform_bytes = str(platform).encode()
        if api_version == 0:
            message = ctypes.create_string_buffer(1024)
            address = _capsule_pointer(fn, f"custom call target {name!r}")
            if _library.register_legacy(encoded, len(encoded), address, platform_bytes,
                                        len(platform_bytes), message, len(message)):
                raise RuntimeError(message.value.decode(errors="replace"))
            return
        if api_version != 1:
            raise ValueError(f"FFI target {name!r}: api_version {api_version} is not 0 (the "
                             "custom-call API before FFI) or 1 (typed FFI)")
        bundle = _Bundle()
        if isinstance(fn, dict):
            unknown = sorted(set(fn) - set(_STAGES))
            if unknown:
                raise ValueError(f"FFI target {name!r}: unknown stage(s) {unknown}; the stages "
                                 f"are {list(_STAGES)}")
            for stage, capsule in fn.items():
                setattr(bundle, stage, _capsule_pointer(capsule, f"stage {stage!r} of {name!r}"))
        else:
            bundle.execute = _capsule_pointer(fn, f"FFI target {name!r}")
        args = _HandlerRegisterArgs(ctypes.sizeof(_HandlerRegisterArgs), None,
                                    _ByteSpan(encoded, len(encoded)),
                                    _ByteSpan(platform_bytes, len(platform_bytes)), bundle,
                                    int(traits))
        _library.check(_library.api.handler_register(ctypes.addressof(args)),
                       f"registering FFI target {name!r}")
    except (RuntimeError, TypeError, ValueError) as error:
        _report(error)


def register_type(name, registration):
    """xla_client's custom type handler for platform "kiln": `registration` is
    jax.ffi's TypeRegistration ({"type_id": capsule, "type_info": capsule})
    or a type-id capsule. The id Kiln assigns is written back into the
    user's XLA_FFI_TypeId, as XLA does."""
    try:
        if isinstance(registration, dict):
            type_id = registration.get("type_id")
            type_info = registration.get("type_info")
        else:
            type_id, type_info = registration, None
        if type_id is None:
            raise ValueError(f"FFI type {name!r}: the registration has no 'type_id'")
        encoded = name.encode() if isinstance(name, str) else bytes(name)
        args = _TypeRegisterArgs(ctypes.sizeof(_TypeRegisterArgs), None,
                                 _ByteSpan(encoded, len(encoded)),
                                 _capsule_pointer(type_id, f"type id of {name!r}"),
                                 _capsule_pointer(type_info, f"type info of {name!r}")
                                 if type_info is not None else None)
        _library.check(_library.api.type_register(ctypes.addressof(args)),
                       f"registering FFI type {name!r}")
    except (RuntimeError, TypeError, ValueError) as error:
        _report(error)


def register() -> None:
    """Installs the handlers (types first: a handler whose state has a type
    needs it registered before the handler) and replays registrations made
    for "kiln" before Kiln was initialized."""
    global _library, _replaying
    try:
        from jaxlib import xla_client
    except ImportError:
        return
    if not hasattr(xla_client, "register_custom_call_handler"):
        return
    try:
        _library = _Library(library_path())
    except (OSError, AttributeError) as error:  # a library older than the exports
        warnings.warn(f"Kiln: jax.ffi registrations are unavailable: {error}", RuntimeWarning)
        return
    _replaying = True
    try:
        if hasattr(xla_client, "register_custom_type_handler"):
            xla_client.register_custom_type_handler(PLATFORM_NAME, register_type)
        xla_client.register_custom_call_handler(PLATFORM_NAME, register_target)
    finally:
        _replaying = False
