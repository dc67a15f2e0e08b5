"""Kiln's demo: JAX sees Kiln's devices, moves arrays to them and back, and
runs jitted programs on them, compared with numpy.

Run it with `make demo`, which sets JAX_PLATFORMS=kiln.
"""

import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "kiln")

import jax  # noqa: E402  (JAX_PLATFORMS must be set first)
import numpy as np  # noqa: E402

import kiln_pjrt  # noqa: E402


def round_trip(name: str, host: np.ndarray) -> tuple[jax.Array, bool]:
    """Copies `host` to Kiln's default device and back; reports whether every bit survived."""
    on_device = jax.device_put(host)
    back = np.asarray(on_device)
    exact = back.dtype == host.dtype and back.shape == host.shape and \
        back.tobytes() == host.tobytes()
    device = next(iter(on_device.devices()))
    print(f"  {name}: {host.dtype}{list(host.shape)} -> {device} -> host: "
          + ("exact" if exact else f"DIFFERS, got {back!r}"))
    return on_device, exact


def main() -> int:
    print(f"Kiln {kiln_pjrt.__version__} ({kiln_pjrt.library_path()})")
    devices = jax.devices()
    print(f"jax.devices(): {devices}")

    print("Round trips through jax.device_put and np.asarray:")
    rng = np.random.default_rng(0)
    floats = rng.standard_normal((3, 4)).astype(np.float32)
    ints = np.arange(-64, 64, 8, dtype=np.int8).reshape(2, 8)
    kept = []
    all_exact = True
    for name, host in [("float32 matrix", floats), ("int8 matrix", ints)]:
        on_device, exact = round_trip(name, host)
        kept.append(on_device)
        all_exact &= exact

    print("Programs compiled and run by Kiln:")
    print(f"  jax.numpy.add(1, 1) = {jax.numpy.add(1, 1)}")
    print(f"  jax.jit(lambda x: x * 2)(1.) = {jax.jit(lambda x: x * 2)(1.)}")
    layer = jax.jit(lambda x, b: jax.numpy.tanh(x.T + b) * 2)
    bias = np.linspace(-1, 1, 3, dtype=np.float32)
    got = np.asarray(layer(floats, bias))
    close = np.allclose(got, np.tanh(floats.T + bias) * 2, rtol=1e-6, atol=1e-6)
    print(f"  tanh(x.T + b) * 2 on {got.shape}: " + ("matches numpy" if close else "DIFFERS"))
    all_exact &= close

    # The arrays are still alive here, so device 0 reports them in use.
    print(f"memory_stats() of {devices[0]} with both arrays alive (-1: not reported):")
    for key, value in sorted((devices[0].memory_stats() or {}).items()):
        print(f"  {key}: {value}")
    return 0 if all_exact else 1


if __name__ == "__main__":
    sys.exit(main())
