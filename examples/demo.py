"""Kiln's demo: JAX sees Kiln's devices, moves arrays to them and back, runs
jitted programs on them, compared with numpy, and trains a small MLP on Kiln
beside the same training on JAX's own CPU backend; then, in a second
process with four Kiln devices, runs the integration guide's pmap example,
whose psum is a real all-reduce between the devices.

Run it with `make demo`, which sets JAX_PLATFORMS=kiln,cpu (Kiln is the
default backend; the CPU backend is there for the comparison).
"""

import os
import subprocess
import sys

os.environ.setdefault("JAX_PLATFORMS", "kiln,cpu")

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


def train_mlp(device: jax.Device, steps: int = 60) -> list[float]:
    """Trains a 2-layer MLP on synthetic regression data on `device` with SGD;
    returns the loss after every step."""
    jnp = jax.numpy
    rng = np.random.default_rng(42)
    x = rng.standard_normal((256, 8)).astype(np.float32)
    y = np.sin(x @ rng.standard_normal((8, 1)).astype(np.float32))
    params = [rng.standard_normal(shape).astype(np.float32) * scale
              for shape, scale in [((8, 32), 0.3), ((32,), 0.0), ((32, 1), 0.3), ((1,), 0.0)]]

    def loss_fn(params, x, y):
        w1, b1, w2, b2 = params
        hidden = jax.nn.relu(x @ w1 + b1)
        return jnp.mean((hidden @ w2 + b2 - y) ** 2)

    @jax.jit
    def step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        return [p - 0.1 * g for p, g in zip(params, grads)], loss

    params, x, y = jax.device_put((params, x, y), device)
    losses = []
    for _ in range(steps):
        params, loss = step(params, x, y)
        losses.append(float(loss))
    return losses


def main() -> int:
    print(f"Kiln {kiln_pjrt.__version__} ({kiln_pjrt.library_path()})")
    devices = jax.devices()
    print(f"jax.devices(): {devices}")
    # KILN_BACKEND picks them: Kiln's virtual CPUs, or an OpenCL device.
    print(f"  backend {devices[0].backend}, device kind {devices[0].device_kind}")

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

    print("Training a small MLP (8 -> 32 -> 1, SGD) on Kiln and on JAX's CPU backend:")
    kiln_losses = train_mlp(devices[0])
    try:
        cpu_losses = train_mlp(jax.devices("cpu")[0])
    except RuntimeError:  # JAX_PLATFORMS without cpu
        cpu_losses = [float("nan")] * len(kiln_losses)
    print("  step   loss on kiln   loss on cpu")
    for i in [0, 9, 19, 29, 39, 49, 59]:
        print(f"  {i + 1:4d}   {kiln_losses[i]:12.6f}   {cpu_losses[i]:11.6f}")
    falling = kiln_losses[-1] < 0.5 * kiln_losses[0]
    agrees = np.allclose(kiln_losses, cpu_losses, rtol=1e-4, atol=1e-6)
    print("  the loss falls" + (", and Kiln agrees with the CPU backend" if agrees else
                                "; Kiln DIFFERS from the CPU backend"))
    all_exact &= falling and agrees

    # The arrays are still alive here, so device 0 reports them in use.
    print(f"memory_stats() of {devices[0]} with both arrays alive (-1: not reported):")
    for key, value in sorted((devices[0].memory_stats() or {}).items()):
        print(f"  {key}: {value}")

    # Kiln's device count is fixed when its client is created, so the
    # four-device example runs in a child process.
    print("jax.pmap(lambda x: x + jax.lax.psum(x, 'i'), axis_name='i')(jnp.arange(4))"
          " on 4 Kiln devices:")
    env = dict(os.environ, JAX_PLATFORMS="kiln", KILN_NUM_DEVICES="4")
    child = subprocess.run([sys.executable, __file__, "--pmap"], env=env, capture_output=True,
                           text=True, timeout=300)
    print("  " + (child.stdout.strip() or child.stderr.strip()).replace("\n", "\n  "))
    all_exact &= child.returncode == 0 and child.stdout.strip().endswith("[6 7 8 9]")
    return 0 if all_exact else 1


def pmap_example() -> int:
    import jax.numpy as jnp

    print(f"devices: {jax.devices()}")
    print(jax.pmap(lambda x: x + jax.lax.psum(x, "i"), axis_name="i")(jnp.arange(4)))
    return 0


if __name__ == "__main__":
    sys.exit(pmap_example() if sys.argv[1:] == ["--pmap"] else main())
