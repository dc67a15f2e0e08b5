"""Setup for the XLA FFI tests: user handlers from libkiln_ffi_test_handlers.so
registered with `jax.ffi` for Kiln and for JAX's CPU backend, run on each.

`KILN_FFI_TEST_PLATFORMS` (default "kiln,cpu") lists the platforms the tests
run on; "cpu" runs the CPU half alone (the reference: what XLA does). JAX's
CPU backend is always created and its targets always registered, since the
Kiln half compares its results with it. `KILN_FFI_TEST_HANDLERS` overrides
the library's path (default: the CMake build tree, build/cpp/tests/ffi).
"""

import os
import subprocess
import sys
import textwrap

import pytest

import ffi_targets

PLATFORMS = tuple(name.strip() for name in
                  os.environ.get("KILN_FFI_TEST_PLATFORMS", "kiln,cpu").split(",")
                  if name.strip())
# Every platform whose targets are registered in this process.
REGISTERED_PLATFORMS = PLATFORMS + (() if "cpu" in PLATFORMS else ("cpu",))
DEVICES_PER_PLATFORM = ffi_targets.DEVICES_PER_PLATFORM

# Set before any test module imports jax.
os.environ["JAX_PLATFORMS"] = ",".join(REGISTERED_PLATFORMS)
os.environ["KILN_NUM_DEVICES"] = str(DEVICES_PER_PLATFORM)
_device_count_flag = f"--xla_force_host_platform_device_count={DEVICES_PER_PLATFORM}"
os.environ["XLA_FLAGS"] = " ".join(
    flag for flag in (os.environ.get("XLA_FLAGS", ""), _device_count_flag) if flag)


def _load_handlers():
    """The loaded library and, per platform, the error its registration raised
    (None when it registered)."""
    path = ffi_targets.library_path()
    if not os.path.isfile(path):
        pytest.skip(f"the FFI test handler library {path} does not exist: build it "
                    "(cmake --build build/cpp --target kiln_ffi_test_handlers) or set "
                    "KILN_FFI_TEST_HANDLERS to a built libkiln_ffi_test_handlers.so")
    import jax

    lib = ffi_targets.load(path)
    errors = {}
    for platform in REGISTERED_PLATFORMS:
        try:
            # The backend first: jaxlib's CPU client, when created after the
            # registrations, registers queued targets before queued types, and
            # then rejects kiln_test_counter whose state type is still unknown
            # ("Types used by FFI handlers must be registered before the
            # handler registration"). test_registration_order covers the
            # other order in a fresh interpreter.
            jax.devices(platform)
            ffi_targets.register(lib, [platform])
            errors[platform] = None
        except Exception as error:  # reported by the `platform` fixture
            errors[platform] = error
    return lib, errors


@pytest.fixture(scope="session")
def _handlers_and_errors():
    return _load_handlers()


@pytest.fixture(scope="session")
def handlers(_handlers_and_errors):
    """The ctypes handle of the handler library (its counters' getters)."""
    return _handlers_and_errors[0]


@pytest.fixture(params=PLATFORMS)
def platform(request, _handlers_and_errors):
    """Each platform under test, once its targets are registered; a platform
    whose registration failed fails its tests alone, with that error."""
    error = _handlers_and_errors[1][request.param]
    if error is not None:
        pytest.fail(f"registering the FFI test targets for {request.param!r} failed: "
                    f"{type(error).__name__}: {error}")
    if "cpu" not in PLATFORMS and _handlers_and_errors[1]["cpu"] is not None:
        pytest.fail(f"registering the FFI test targets for 'cpu' failed: "
                    f"{_handlers_and_errors[1]['cpu']}")
    return request.param


@pytest.fixture(scope="session")
def run_python():
    """Runs `code` in a fresh interpreter with `env` over this process's
    environment; returns the CompletedProcess (the caller checks it)."""

    def run(code: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        child_env = dict(os.environ)
        child_env.update(env or {})
        return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=child_env,
                              capture_output=True, text=True, timeout=120)

    return run
