"""Kiln, a PJRT device plugin: registration with JAX.

JAX imports this module through the `jax_plugins` entry point and calls
`initialize()`. Importing it must stay cheap: it never imports jax or torch.
"""

import os

__version__ = "0.1.0"

PLATFORM_NAME = "kiln"
LIBRARY_NAME = "pjrt_plugin_kiln.so"
# Below JAX's CPU backend (priority 0): until Kiln meets the gate of JAX's
# own suite (docs/conformance.md), installing it must not change JAX's
# default platform. Users opt in with JAX_PLATFORMS=kiln. docs/decisions.md
# says when this changes.
JAX_PRIORITY = -100


def library_path() -> str:
    """Absolute path of the plugin library.

    `KILN_LIBRARY_PATH` overrides the library shipped next to this module, so
    developers can point JAX at a library from their own build tree.
    """
    override = os.environ.get("KILN_LIBRARY_PATH")
    if override:
        return os.path.abspath(override)
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)


def tool_path() -> str:
    """Absolute path of `kiln-tool`, the C++ program behind `kiln print` and
    `kiln inspect`; `KILN_TOOL_PATH` overrides it."""
    override = os.environ.get("KILN_TOOL_PATH")
    if override:
        return os.path.abspath(override)
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "kiln-tool")


def initialize() -> None:
    """Registers Kiln as the JAX platform `kiln` (called by JAX's plugin discovery)."""
    path = library_path()
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"Kiln's plugin library {path} does not exist: reinstall kiln-pjrt "
            "or set KILN_LIBRARY_PATH to a built pjrt_plugin_kiln.so")
    from jax._src import xla_bridge

    from kiln_pjrt import host_lapack

    lent = host_lapack.lend(path)
    xla_bridge.register_plugin(
        PLATFORM_NAME, priority=JAX_PRIORITY, library_path=path, options={})
    _add_cpu_platform()
    _enable_donation()
    from kiln_pjrt import callbacks, export, ffi, linalg

    linalg.register(lent)
    callbacks.register()
    export.register()
    ffi.register()


def _add_cpu_platform() -> None:
    """With `JAX_PLATFORMS=kiln`, makes JAX's CPU backend exist too, for host callbacks.

    JAX runs the Python body of every host callback (`jax.debug.print`,
    `jax.debug.callback`, `pure_callback`, `io_callback`) with its arguments
    put on a device of its CPU backend (`xb.local_devices(backend="cpu")` in
    jax/_src/callback.py and debugging.py); without one they raise "failed to
    find a local CPU device". JAX builds its backends from the platform list
    once (`xla_bridge.backends()`); this wraps that function so that, when
    the list gave Kiln but not the CPU backend, the CPU client is created
    and added beside Kiln. Kiln stays the default backend, `jax.devices()`
    lists Kiln's devices, and the user's `jax_platforms` setting is left as
    it was (JAX's own tests check that config values do not change).
    `KILN_ADD_CPU_PLATFORM=0` turns this off.
    """
    if os.environ.get("KILN_ADD_CPU_PLATFORM", "1") == "0":
        return
    try:
        from jax._src import xla_bridge
    except ImportError:
        return
    original = getattr(xla_bridge, "backends", None)
    lock = getattr(xla_bridge, "_backend_lock", None)
    if (original is None or lock is None or getattr(original, "_kiln_wrapped", False)
            or not hasattr(xla_bridge, "_init_backend")
            or not hasattr(xla_bridge, "_backend_factories")):
        return

    def backends():
        result = original()
        if PLATFORM_NAME in result and "cpu" not in result and \
                "cpu" in xla_bridge._backend_factories:
            with lock:
                table = xla_bridge._backends
                if PLATFORM_NAME in table and "cpu" not in table:
                    try:
                        table["cpu"] = xla_bridge._init_backend("cpu")
                    except Exception:  # noqa: BLE001 - callbacks then fail as before
                        pass
        return result

    backends.__doc__ = original.__doc__
    backends._kiln_wrapped = True
    xla_bridge.backends = backends


def _enable_donation() -> None:
    """Lets JAX donate buffers to Kiln (`jax.jit(..., donate_argnums=...)`).

    JAX emits donation attributes (`tf.aliasing_output`, `jax.buffer_donor`)
    only for the platforms in a private list; without this, donations to Kiln
    are dropped with a warning. Kiln honours them: a donated argument reports
    itself deleted and an aliased result may reuse its memory.
    """
    try:
        from jax._src.interpreters import mlir
    except ImportError:
        return
    platforms = getattr(mlir, "_platforms_with_donation", None)
    if isinstance(platforms, list) and PLATFORM_NAME not in platforms:
        platforms.append(PLATFORM_NAME)
