"""Loads libkiln_ffi_test_handlers.so and registers its targets with jax.ffi.

Shared by conftest.py (the pytest process) and the fresh interpreters that
test_ffi.py starts to check registration order; it imports jax only inside
functions, so a child can set its environment first.
"""

import ctypes
import os

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_LIBRARY = os.path.join(REPO, "build", "cpp", "tests", "ffi",
                               "libkiln_ffi_test_handlers.so")

# Typed-FFI targets (api_version=1) with one execute handler: target name ==
# exported symbol.
TYPED_TARGETS = (
    "kiln_test_rms_norm",
    "kiln_test_rms_norm_fwd",
    "kiln_test_rms_norm_bwd",
    "kiln_test_attr_dict",
    "kiln_test_scalar_attrs",
    "kiln_test_fail_if",
    "kiln_test_async_add_one",
    "kiln_test_thread_pool",
    "kiln_test_noop",
    "kiln_test_noop_empty",
    "kiln_test_side_effect",
    "kiln_test_variadic_sum",
    "kiln_test_inplace_set_first",
)

# The one staged target: a handler per XLA FFI execution stage.
COUNTER_TARGET = "kiln_test_counter"
COUNTER_STAGES = ("instantiate", "prepare", "initialize", "execute")
# XLA_FFI_ExecutionStage values, for kiln_test_stage_calls.
STAGE_INDEX = {"instantiate": 0, "prepare": 1, "initialize": 2, "execute": 3}
COUNTER_STATE_TYPE = "kiln_test.CounterState"

# Pre-FFI custom calls (api_version=0): target name == exported symbol.
LEGACY_TARGETS = (
    "kiln_test_legacy_add_one",
    "kiln_test_legacy_scale",
    "kiln_test_legacy_double_and_sum",
)

# Devices per platform in the pytest process: the device-ordinal test needs two.
DEVICES_PER_PLATFORM = 2

FAILURE_MESSAGE = "kiln-ffi-test: deliberate failure requested by attribute"
ASYNC_FAILURE_MESSAGE = "kiln-ffi-test: asynchronous failure requested by attribute"


def library_path() -> str:
    """`KILN_FFI_TEST_HANDLERS`, else the library in the default CMake build tree."""
    return os.path.abspath(os.environ.get("KILN_FFI_TEST_HANDLERS") or DEFAULT_LIBRARY)


def load(path: str) -> ctypes.CDLL:
    """Loads the handler library and declares its C getters' signatures."""
    lib = ctypes.cdll.LoadLibrary(path)
    lib.kiln_test_counter_state_type_id.restype = ctypes.c_void_p
    lib.kiln_test_counter_state_type_info.restype = ctypes.c_void_p
    lib.kiln_test_stage_calls.argtypes = (ctypes.c_int32,)
    lib.kiln_test_stage_calls.restype = ctypes.c_int64
    lib.kiln_test_states_deleted.restype = ctypes.c_int64
    lib.kiln_test_side_effect_calls.restype = ctypes.c_int64
    return lib


def register(lib: ctypes.CDLL, platforms) -> None:
    """Registers the state type and every target of `lib` for each platform.

    Each (name, platform) pair may be registered once per process.
    """
    import jax

    capsule = jax.ffi.pycapsule
    for platform in platforms:
        jax.ffi.register_ffi_type(
            COUNTER_STATE_TYPE,
            {"type_id": capsule(lib.kiln_test_counter_state_type_id()),
             "type_info": capsule(lib.kiln_test_counter_state_type_info())},
            platform=platform)
        for name in TYPED_TARGETS:
            jax.ffi.register_ffi_target(name, capsule(getattr(lib, name)),
                                        platform=platform, api_version=1)
        stages = {stage: capsule(getattr(lib, f"{COUNTER_TARGET}_{stage}"))
                  for stage in COUNTER_STAGES}
        jax.ffi.register_ffi_target(COUNTER_TARGET, stages, platform=platform,
                                    api_version=1)
        for name in LEGACY_TARGETS:
            jax.ffi.register_ffi_target(name, capsule(getattr(lib, name)),
                                        platform=platform, api_version=0)
