"""User XLA FFI handlers (tests/ffi/handlers.cc) called through `jax.ffi`.

Each test runs its jitted program on one platform (the `platform` fixture:
Kiln, or JAX's CPU backend as the reference), checks the values against
NumPy, and on Kiln also against the same program on the CPU backend: both
run the same C++ handler, so they must agree.
"""

import functools
import gc
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.extend.core import Primitive
# custom_call is not public in jax.interpreters.mlir (JAX 0.12); Kiln's
# linalg.py uses the same module.
from jax._src.interpreters import mlir

import ffi_targets

F32 = np.float32
EPS = F32(1e-5)


# ---------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------

def device_of(platform, index=0):
    return jax.devices(platform)[index]


def run(platform, fn, *args, index=0, jit=None):
    """Runs `jit` (default: jax.jit(fn)) on device `index` of `platform` with
    the arguments put there; returns the results as NumPy arrays."""
    device = device_of(platform, index)
    placed = [jax.device_put(arg, device) for arg in args]
    with jax.default_device(device):
        out = (jit or jax.jit(fn))(*placed)
    return jax.tree.map(np.asarray, out)


def assert_close(actual, expected, rtol=1e-5, atol=1e-6, what=""):
    actual_leaves, actual_tree = jax.tree.flatten(actual)
    expected_leaves, expected_tree = jax.tree.flatten(expected)
    assert actual_tree == expected_tree, f"{what}: structure {actual_tree} != {expected_tree}"
    for index, (got, want) in enumerate(zip(actual_leaves, expected_leaves)):
        got, want = np.asarray(got), np.asarray(want)
        assert got.shape == want.shape, f"{what} result {index}: shape {got.shape} != {want.shape}"
        assert got.dtype == want.dtype, f"{what} result {index}: dtype {got.dtype} != {want.dtype}"
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                                   err_msg=f"{what} result {index}")


def check(platform, fn, args, expected, rtol=1e-5, atol=1e-6):
    """Runs fn on `platform`, compares with `expected`, and on a platform other
    than the CPU backend also with the CPU backend's result; returns it."""
    got = run(platform, fn, *args)
    assert_close(got, expected, rtol=rtol, atol=atol, what=f"{platform} vs NumPy")
    if platform != "cpu":
        assert_close(got, run("cpu", fn, *args), rtol=1e-6, atol=1e-7,
                     what=f"{platform} vs XLA CPU")
    return got


def sds(shape, dtype=F32):
    return jax.ShapeDtypeStruct(shape, dtype)


def rms_norm_reference(x, eps=EPS):
    x64 = np.asarray(x, np.float64)
    scale = 1.0 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps)
    return (x64 * scale).astype(F32), scale[..., 0].astype(F32)


def random(shape, seed):
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


# ---------------------------------------------------------------------------
# rms_norm: attributes, any rank, vmap, custom_vjp
# ---------------------------------------------------------------------------

def rms_norm(x, eps=EPS):
    return jax.ffi.ffi_call("kiln_test_rms_norm", sds(x.shape, x.dtype),
                            vmap_method="broadcast_all")(x, eps=F32(eps))


@pytest.mark.parametrize("shape", [(7,), (3, 16), (2, 3, 5)])
def test_rms_norm(platform, shape):
    x = random(shape, seed=len(shape))
    check(platform, rms_norm, [x], rms_norm_reference(x)[0])


def test_rms_norm_eps_attribute_is_used(platform):
    x = np.full((2, 4), 0.01, F32)  # mean(x^2) = 1e-4, comparable to eps
    for eps in (F32(1e-4), F32(1.0)):
        check(platform, functools.partial(rms_norm, eps=eps), [x], rms_norm_reference(x, eps)[0])


@pytest.mark.parametrize("in_axes", [0, 1])
def test_rms_norm_vmap_broadcast_all(platform, in_axes):
    x = random((4, 3, 8), seed=11)
    batched = jax.vmap(rms_norm, in_axes=in_axes)
    # broadcast_all: one call on the whole batch, not a loop of calls.
    text = jax.jit(batched).lower(x).as_text()
    assert text.count("kiln_test_rms_norm") == 1, text
    expected = rms_norm_reference(np.moveaxis(x, in_axes, 0))[0]
    check(platform, batched, [x], expected)


def test_rms_norm_vmap_of_vmap(platform):
    x = random((2, 3, 4, 6), seed=12)
    check(platform, jax.vmap(jax.vmap(rms_norm)), [x], rms_norm_reference(x)[0])


@jax.custom_vjp
def rms_norm_vjp(x):
    return rms_norm(x)


def _rms_norm_fwd(x):
    y, residual = jax.ffi.ffi_call(
        "kiln_test_rms_norm_fwd", (sds(x.shape), sds(x.shape[:-1])),
        vmap_method="broadcast_all")(x, eps=EPS)
    return y, (residual, x)


def _rms_norm_bwd(saved, cotangent):
    residual, x = saved
    return (jax.ffi.ffi_call("kiln_test_rms_norm_bwd", sds(x.shape),
                             vmap_method="broadcast_all")(residual, x, cotangent),)


rms_norm_vjp.defvjp(_rms_norm_fwd, _rms_norm_bwd)


def test_rms_norm_fwd_two_results(platform):
    x = random((5, 6), seed=3)
    y, residual = rms_norm_reference(x)
    check(platform, lambda x: _rms_norm_fwd(x)[0], [x], y)
    check(platform, lambda x: _rms_norm_fwd(x)[1][0], [x], residual)


def _jnp_rms_norm(x):
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + EPS)


def test_rms_norm_grad_through_custom_vjp(platform):
    x = random((3, 8), seed=4)
    weights = random((3, 8), seed=5)

    def loss(norm, x, weights):
        return jnp.sum(jnp.sin(norm(x)) * weights)

    # The reference: JAX's own derivative of a jnp RMS norm, on the CPU backend.
    with jax.default_device(device_of("cpu")):
        expected = np.asarray(jax.jit(jax.grad(functools.partial(loss, _jnp_rms_norm)))(
            x, weights))
    grad = jax.grad(functools.partial(loss, rms_norm_vjp))
    check(platform, grad, [x, weights], expected, rtol=1e-4, atol=1e-5)
    # And under vmap: the ffi_calls of fwd and bwd batch with broadcast_all.
    batched = jax.vmap(grad)
    xs, ws = np.stack([x, 2 * x]), np.stack([weights, -weights])
    with jax.default_device(device_of("cpu")):
        reference = jax.jit(jax.vmap(jax.grad(functools.partial(loss, _jnp_rms_norm))))
        expected = np.asarray(reference(xs, ws))
    check(platform, batched, [xs, ws], expected, rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# Attributes: a dictionary of mixed types, every scalar type
# ---------------------------------------------------------------------------

def attr_dict(**attrs):
    return jax.ffi.ffi_call("kiln_test_attr_dict", sds((8,), np.float64))(**attrs)


@pytest.mark.parametrize("attrs, expected", [
    (dict(count=7, scale=F32(2.5), flag=True, name="kiln", dims=np.array([2, 3, 5], np.int64),
          nested={"offset": 4, "factor": 0.5, "label": "abc"}),
     [7, 2.5, 1, 4, ord("k"), 10, 2.0, 3]),
    (dict(count=np.int64(-3), scale=F32(-0.25), flag=False, name="z",
          dims=np.array([100], np.int64), nested={"offset": -2, "factor": 1.25, "label": ""}),
     [-3, -0.25, 0, 1, ord("z"), 100, -2.5, 0]),
])
def test_attr_dictionary(platform, attrs, expected):
    check(platform, lambda: attr_dict(**attrs), [], np.array(expected, np.float64), rtol=0,
          atol=0)


SCALAR_ATTRS = [
    dict(a_i8=np.int8(-128), a_i16=np.int16(-32768), a_i32=np.int32(-2**31),
         a_i64=np.int64(-2**53 + 1), a_u8=np.uint8(255), a_u16=np.uint16(65535),
         a_u32=np.uint32(2**32 - 1), a_u64=np.uint64(2**53), a_f32=F32(1.5), a_f64=0.1,
         a_bool=True),
    dict(a_i8=np.int8(127), a_i16=np.int16(32767), a_i32=np.int32(2**31 - 1),
         a_i64=np.int64(2**62), a_u8=np.uint8(0), a_u16=np.uint16(1), a_u32=np.uint32(123456),
         a_u64=np.uint64(2**63 - 2**10), a_f32=F32(-3.25e-3), a_f64=-1e300, a_bool=False),
]


@pytest.mark.parametrize("attrs", SCALAR_ATTRS, ids=["minimums", "maximums"])
def test_scalar_attribute_types(platform, attrs):
    # (u64 values stop below 2**63: JAX builds the attribute from a Python int
    # through a signed 64-bit MLIR API, which raises std::bad_cast above it.)
    fn = lambda: jax.ffi.ffi_call("kiln_test_scalar_attrs", sds((11,), np.float64))(**attrs)
    # Every value above is exact in f64 (f32 values are widened exactly).
    expected = np.array([float(value) for value in attrs.values()], np.float64)
    check(platform, fn, [], expected, rtol=0, atol=0)


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

def fail_if(x, fail):
    return jax.ffi.ffi_call("kiln_test_fail_if", sds(x.shape))(x, fail=fail)


def test_error_becomes_python_exception_and_client_stays_usable(platform):
    x = random((4,), seed=6)
    with pytest.raises(jax.errors.JaxRuntimeError) as caught:
        run(platform, functools.partial(fail_if, fail=True), x)
    message = str(caught.value)
    assert ffi_targets.FAILURE_MESSAGE in message, message
    # XLA CPU keeps the handler's code: "INVALID_ARGUMENT: <message>".
    assert "INVALID_ARGUMENT" in message, message
    # The same backend still runs programs, this target included.
    check(platform, functools.partial(fail_if, fail=False), [x], x, rtol=0, atol=0)
    check(platform, rms_norm, [x], rms_norm_reference(x)[0])
    # And the failing executable fails the same way again.
    with pytest.raises(jax.errors.JaxRuntimeError, match=ffi_targets.FAILURE_MESSAGE):
        run(platform, functools.partial(fail_if, fail=True), x)


def test_wrong_attribute_type_is_an_error(platform):
    x = random((4,), seed=7)
    # `fail` bound as bool; an i32 attribute must be refused, not reinterpreted.
    # The message is the handler's own decoding diagnostic (ffi.h).
    with pytest.raises(jax.errors.JaxRuntimeError, match="expected PRED but got S32"):
        run(platform, functools.partial(fail_if, fail=np.int32(1)), x)
    check(platform, functools.partial(fail_if, fail=False), [x], x, rtol=0, atol=0)


# ---------------------------------------------------------------------------
# State across calls: instantiate stage creates it, execute updates it
# ---------------------------------------------------------------------------

def counter(start):
    return jax.ffi.ffi_call("kiln_test_counter", sds((), np.int64),
                            has_side_effect=True)(start=np.int64(start))


def _stage_calls(handlers):
    return {stage: handlers.kiln_test_stage_calls(index)
            for stage, index in ffi_targets.STAGE_INDEX.items()}


def test_state_persists_across_calls(platform, handlers):
    before = _stage_calls(handlers)
    deleted_before = handlers.kiln_test_states_deleted()
    first = jax.jit(lambda: counter(0))
    second = jax.jit(lambda: counter(100))
    values = [int(run(platform, None, jit=first)) for _ in range(3)]
    assert values == [1, 2, 3]
    # A second executable has its own state, instantiated with its own `start`.
    assert [int(run(platform, None, jit=second)) for _ in range(2)] == [101, 102]
    assert int(run(platform, None, jit=first)) == 4
    calls = {stage: count - before[stage] for stage, count in _stage_calls(handlers).items()}
    # Instantiate once per executable (XLA CPU: when the executable is built).
    assert calls["instantiate"] == 2, calls
    assert calls["execute"] == 6, calls
    # XLA CPU never calls prepare or initialize; a runtime that does must
    # call each once per execution.
    assert calls["prepare"] in (0, 6) and calls["initialize"] in (0, 6), calls
    # The runtime owns the states and deletes them (through the registered
    # type info) with their executables.
    del first, second
    jax.clear_caches()
    gc.collect()
    assert handlers.kiln_test_states_deleted() - deleted_before == 2


# ---------------------------------------------------------------------------
# Asynchronous handler (returns ffi::Future), execution context
# ---------------------------------------------------------------------------

def async_add_one(x, fail=False):
    return jax.ffi.ffi_call("kiln_test_async_add_one", sds(x.shape))(x, fail=fail)


def test_async_handler(platform):
    x = random((1000,), seed=8)
    check(platform, async_add_one, [x], x + 1, rtol=0, atol=0)
    # Later work must wait for the future: chained calls and a consumer.
    chained = lambda x: async_add_one(async_add_one(x)) * 2.0
    check(platform, chained, [x], (x + 1 + 1) * 2, rtol=1e-6, atol=1e-6)


def test_async_handler_error(platform):
    x = random((16,), seed=9)
    with pytest.raises(jax.errors.JaxRuntimeError, match=ffi_targets.ASYNC_FAILURE_MESSAGE):
        run(platform, functools.partial(async_add_one, fail=True), x)
    check(platform, async_add_one, [x], x + 1, rtol=0, atol=0)


@pytest.mark.parametrize("size", [3, 37])
def test_thread_pool_and_device_ordinal(platform, size):
    fn = lambda: jax.ffi.ffi_call("kiln_test_thread_pool",
                                  (sds((size,), np.int32), sds((), np.int32)))()
    expected_values = np.arange(size, dtype=np.int32) * 3 + 1
    devices = jax.devices(platform)
    assert len(devices) >= ffi_targets.DEVICES_PER_PLATFORM
    for index, device in enumerate(devices[:ffi_targets.DEVICES_PER_PLATFORM]):
        values, ordinal = run(platform, fn, index=index)
        np.testing.assert_array_equal(values, expected_values)
        expected_ordinal = (device.local_hardware_id if device.local_hardware_id is not None
                            else device.id)
        assert int(ordinal) == expected_ordinal, (device, int(ordinal))


# ---------------------------------------------------------------------------
# No-op, side effects, variadic operands, aliasing
# ---------------------------------------------------------------------------

def test_noop(platform):
    x = np.array([3.5], F32)
    noop = jax.jit(lambda x: jax.ffi.ffi_call("kiln_test_noop", sds(x.shape))(x))

    def empty(x):
        jax.ffi.ffi_call("kiln_test_noop_empty", (), has_side_effect=True)()
        return x + 1

    check(platform, empty, [x], x + 1, rtol=0, atol=0)
    device = device_of(platform)
    placed = jax.device_put(x, device)
    for _ in range(3):
        np.testing.assert_array_equal(np.asarray(noop(placed)), x)


def test_side_effect_runs_with_result_unused(platform, handlers):
    x = random((5,), seed=10)

    def fn(x):
        jax.ffi.ffi_call("kiln_test_side_effect", sds(x.shape), has_side_effect=True)(x)
        return x * 2

    jitted = jax.jit(fn)
    before = handlers.kiln_test_side_effect_calls()
    for _ in range(3):
        np.testing.assert_array_equal(run(platform, None, x, jit=jitted), x * 2)
    jax.effects_barrier()
    assert handlers.kiln_test_side_effect_calls() - before == 3


@pytest.mark.parametrize("count", [1, 3])
def test_variadic_operands(platform, count):
    xs = [random((2, 5), seed=20 + index) for index in range(count)]
    fn = lambda *xs: jax.ffi.ffi_call("kiln_test_variadic_sum", sds((2, 5)))(*xs)
    check(platform, fn, xs, functools.reduce(np.add, xs), rtol=1e-6, atol=1e-6)


def inplace_set_first(x):
    return jax.ffi.ffi_call("kiln_test_inplace_set_first", (sds(x.shape), sds((), np.int32)),
                            input_output_aliases={0: 0})(x, value=F32(42.0))


@pytest.mark.parametrize("donate", [False, True], ids=["kept", "donated"])
def test_input_output_aliases(platform, donate):
    x = np.arange(10, dtype=F32)
    expected = x.copy()
    expected[0] = 42.0
    device = device_of(platform)
    placed = jax.device_put(x, device)
    jitted = jax.jit(inplace_set_first, donate_argnums=(0,) if donate else ())
    y, same = jax.tree.map(np.asarray, jitted(placed))
    # The handler writes only y[0]: the rest of y is x only if y aliases x.
    np.testing.assert_array_equal(y, expected)
    assert int(same) == 1, "the handler saw different addresses for an aliased operand and result"
    if donate:
        assert placed.is_deleted()
    else:
        # Without donation the caller's array is left as it was.
        np.testing.assert_array_equal(np.asarray(placed), x)


# ---------------------------------------------------------------------------
# Legacy custom calls (API_VERSION_ORIGINAL and _STATUS_RETURNING)
# ---------------------------------------------------------------------------

def _legacy_primitive(target, api_version, result_avals):
    """A primitive lowered to a legacy custom call of `target`."""
    primitive = Primitive(target)
    primitive.multiple_results = True
    primitive.def_abstract_eval(lambda *operands: result_avals(*operands))

    def lowering(ctx, *operands):
        types = [mlir.aval_to_ir_type(ctx.module_context, aval) for aval in ctx.avals_out]
        return mlir.custom_call(target, result_types=types, operands=list(operands),
                                api_version=api_version).results

    mlir.register_lowering(primitive, lowering)
    return primitive


legacy_add_one_p = _legacy_primitive(
    "kiln_test_legacy_add_one", 1,
    lambda count, x: [jax.core.ShapedArray(x.shape, x.dtype)])
legacy_scale_p = _legacy_primitive(
    "kiln_test_legacy_scale", 2,
    lambda count, scale, x: [jax.core.ShapedArray(x.shape, x.dtype)])
legacy_double_and_sum_p = _legacy_primitive(
    "kiln_test_legacy_double_and_sum", 1,
    lambda count, x: [jax.core.ShapedArray(x.shape, x.dtype),
                      jax.core.ShapedArray((), x.dtype)])


def test_legacy_original(platform):
    x = random((9,), seed=30)
    fn = lambda x: legacy_add_one_p.bind(jnp.int32(x.size), x)[0]
    check(platform, fn, [x], x + 1, rtol=0, atol=0)


def test_legacy_status_returning(platform):
    x = random((6,), seed=31)
    fn = lambda x, scale: legacy_scale_p.bind(jnp.int32(x.size), scale, x)[0]
    check(platform, fn, [x, F32(-1.5)], x * F32(-1.5), rtol=0, atol=0)


def test_legacy_two_results(platform):
    x = random((8,), seed=32)
    fn = lambda x: tuple(legacy_double_and_sum_p.bind(jnp.int32(x.size), x))
    check(platform, fn, [x], (2 * x, np.sum(x, dtype=F32)), rtol=1e-6, atol=1e-6)


def test_legacy_through_ffi_call(platform):
    x = random((5,), seed=33)
    fn = lambda count, scale, x: jax.ffi.ffi_call(
        "kiln_test_legacy_scale", sds(x.shape), custom_call_api_version=2)(count, scale, x)
    check(platform, fn, [np.int32(x.size), F32(3.0), x], x * F32(3.0), rtol=0, atol=0)


# ---------------------------------------------------------------------------
# Registration before and after the backend exists (fresh interpreters)
# ---------------------------------------------------------------------------

_REGISTRATION_SCRIPT = """
import json, sys
sys.path.insert(0, {test_dir!r})
import numpy as np
import jax
import ffi_targets

platform, order = {platform!r}, {order!r}
lib = ffi_targets.load({library!r})
if order == "after":
    jax.devices(platform)      # the backend exists first
ffi_targets.register(lib, [platform])
device = jax.devices(platform)[0]
x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
with jax.default_device(device):
    norm = jax.jit(lambda x: jax.ffi.ffi_call(
        "kiln_test_rms_norm", jax.ShapeDtypeStruct(x.shape, x.dtype))(x, eps=np.float32(1e-5)))
    y = np.asarray(norm(jax.device_put(x, device)))
    counter = jax.jit(lambda: jax.ffi.ffi_call(
        "kiln_test_counter", jax.ShapeDtypeStruct((), np.int64),
        has_side_effect=True)(start=np.int64(5)))
    counts = [int(counter()) for _ in range(2)]
    legacy = jax.jit(lambda count, scale, x: jax.ffi.ffi_call(
        "kiln_test_legacy_scale", jax.ShapeDtypeStruct(x.shape, x.dtype),
        custom_call_api_version=2)(count, scale, x))
    scaled = np.asarray(legacy(np.int32(x.size), np.float32(2), jax.device_put(x, device)))
print(json.dumps({{"platform": device.platform, "y": y.tolist(), "counts": counts,
                  "scaled": scaled.tolist()}}))
"""


_CPU_TYPE_ORDER_ERROR = "Types used by FFI handlers must be registered before the handler"


@pytest.mark.parametrize("order", ["before", "after"])
def test_registration_order(platform, order, run_python):
    code = _REGISTRATION_SCRIPT.format(test_dir=os.path.dirname(os.path.abspath(__file__)),
                                       platform=platform, order=order,
                                       library=ffi_targets.library_path())
    done = run_python(code)
    if (platform == "cpu" and order == "before" and done.returncode != 0
            and _CPU_TYPE_ORDER_ERROR in done.stderr):
        pytest.xfail("jaxlib's make_cpu_client registers queued targets before queued types, "
                     "so it refuses a stateful target registered before the CPU backend "
                     f"exists: {_CPU_TYPE_ORDER_ERROR!r}")
    assert done.returncode == 0, f"--- stdout\n{done.stdout}\n--- stderr\n{done.stderr}"
    result = json.loads(done.stdout.strip().splitlines()[-1])
    x = np.linspace(-2, 2, 12, dtype=F32).reshape(3, 4)
    assert result["platform"] == platform
    np.testing.assert_allclose(np.array(result["y"], F32), rms_norm_reference(x)[0],
                               rtol=1e-5, atol=1e-6)
    assert result["counts"] == [6, 7]
    np.testing.assert_array_equal(np.array(result["scaled"], F32), 2 * x)


# ---------------------------------------------------------------------------
# Layouts: operands and results in another dimension order
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("input_layout, output_layout", [
    ((1, 0), (0, 1)), ((0, 1), (1, 0)), ((0, 1), (0, 1)),
    ((2, 0, 1), (1, 2, 0)),
], ids=["out-transposed", "in-transposed", "both", "rank3"])
def test_layouts(platform, input_layout, output_layout):
    # kiln_test_noop copies its operand's bytes into its result: with other
    # layouts the result's elements are a permutation of the operand's,
    # which the CPU backend gives as the reference.
    shape = (2, 3) if len(input_layout) == 2 else (2, 3, 4)
    x = np.arange(np.prod(shape), dtype=F32).reshape(shape)
    fn = lambda x: jax.ffi.ffi_call("kiln_test_noop", sds(x.shape), input_layouts=[input_layout],
                                    output_layouts=output_layout)(x)
    expected = run("cpu", fn, x)
    assert not np.array_equal(expected, x) or input_layout == output_layout
    check(platform, fn, [x], expected, rtol=0, atol=0)
