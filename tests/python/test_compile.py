"""jax.jit on Kiln: programs compile and run; what Kiln cannot run yet fails at
compile time with a clear error; the program can be captured with
KILN_DUMP_DIR."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest


def test_integration_guide_checks(run_python):
    result = run_python("""
import jax
print(jax.numpy.add(1, 1))
print(jax.jit(lambda x: x * 2)(1.))
""")
    assert result.stdout.split() == ["2", "2.0"], result.stdout


def test_jit_runs_elementwise_and_shape_ops():
    def f(x, y):
        return jnp.tanh(x) * 2 + y.T, jnp.sin(x).astype(jnp.int32), x[::-1, 1:]

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.ones((3, 2), np.float32)
    got = jax.jit(f)(x, y)
    np.testing.assert_allclose(got[0], np.tanh(x) * 2 + y.T, rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.sin(x).astype(np.int32))
    np.testing.assert_array_equal(got[2], x[::-1, 1:])


def test_an_op_kiln_cannot_run_is_unimplemented_at_compile_time():
    def f(x):
        return jax.ffi.ffi_call("kiln_no_such_target", jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    with pytest.raises(Exception) as info:
        jax.jit(f)(np.float32(1))
    message = str(info.value)
    assert "UNIMPLEMENTED" in message and "PJRT_Client_Compile" in message, message
    assert "stablehlo.custom_call" in message and "kiln_no_such_target" in message, message


def test_run_time_shape_mismatch_is_rejected_before_running():
    compiled = jax.jit(lambda x: x + 1).lower(np.ones(3, np.float32)).compile()
    with pytest.raises(Exception):
        compiled(np.ones(4, np.float32))


def test_dump_dir_captures_the_portable_artifact(run_python, tmp_path):
    code = """
import jax, numpy as np
print(jax.jit(lambda x: x + 1)(np.float32(1)))
"""
    result = run_python(code, env={"KILN_DUMP_DIR": str(tmp_path)})
    assert result.stdout.strip() == "2.0", result.stdout
    dumps = sorted(tmp_path.glob("kiln-*.mlir.bc"))
    assert dumps, list(tmp_path.iterdir())
    data = dumps[0].read_bytes()
    assert data.startswith(b"ML\xefR"), data[:16]
    assert b"StableHLO_v" in data[:64]


def test_a_jitted_function_without_results_runs():

    @jax.jit
    def nothing(x):
        jnp.sin(x)  # its value is dropped: the program has no results

    assert nothing(jnp.ones(3)) is None

    def step(carry, x):
        return carry + x, None  # a scan with no stacked outputs

    total, stacked = jax.jit(lambda xs: jax.lax.scan(step, 0.0, xs))(jnp.arange(4.0))
    assert float(total) == 6.0 and stacked is None


def test_dce_sink_keeps_its_operand_and_computes_nothing_else():
    def f(x):
        jax.lax.dce_sink(x * 2, prevent_mlir_dce=True)
        return x + 1

    assert "dce_sink" in jax.jit(f).lower(jnp.ones(2)).as_text()
    np.testing.assert_array_equal(jax.jit(f)(jnp.ones(2)), [2.0, 2.0])


def test_compile_options_are_checked_by_xlas_rules():
    lowered = jax.jit(lambda x: jnp.sqrt(x ** 2) + 1.0).lower(1.0)
    # Every field of XLA's DebugOptions with a value of its type is accepted,
    # GPU options included, as on XLA's CPU backend.
    lowered.compile(compiler_options={
        "xla_embed_ir_in_executable": True,
        "xla_dump_max_hlo_modules": 200,
        "xla_gpu_auto_spmd_partitioning_memory_budget_ratio": 0.5,
        "xla_cpu_scheduler_type": "CPU_SCHEDULER_TYPE_DEFAULT",
    })
    with pytest.raises(jax.errors.JaxRuntimeError,
                       match="INVALID_ARGUMENT.*No such compile option: 'unknown_option'"):
        lowered.compile(compiler_options={"unknown_option": 1})
    with pytest.raises(jax.errors.JaxRuntimeError,
                       match="While setting option xla_embed_ir_in_executable, "
                             "'invalid_value' is not a valid bool value"):
        lowered.compile(compiler_options={"xla_embed_ir_in_executable": "invalid_value"})
    with pytest.raises(jax.errors.JaxRuntimeError, match="'1.5' is not a valid int32 value"):
        lowered.compile(compiler_options={"xla_backend_optimization_level": 1.5})
    with pytest.raises(jax.errors.JaxRuntimeError, match="No such compile option"):
        jax.jit(lambda x: x, compiler_options={"exec_time_compilation_effort": 0.0})(1.0)


def test_compiled_text_shows_calls_inlined_as_xla_inlines_them():
    # JAX's api_test.test_inline_optimized_hlo: nested jits become calls in
    # the lowered module; the compiled program's text has them inlined,
    # except a call JAX marks xla_late (which XLA's CPU backend keeps).
    def sub(x):
        return x * 2

    def compiled_text(mode):
        f = jax.jit(lambda x: jax.jit(sub, inline=mode)(x) + 1.0)
        assert float(f(3.0)) == 7.0
        return f.lower(1.0).compile().as_text()

    assert "call(" not in compiled_text(jax.Inline.XLA_EARLY)
    assert "call(" in compiled_text(jax.Inline.XLA_LATE)
    plain = jax.jit(lambda x: jax.jit(sub)(x) + jax.jit(sub)(x)).lower(1.0)
    assert "call @sub" in plain.as_text()
    assert "call(" not in plain.compile().as_text()


def test_compiled_text_of_a_sharded_program_is_what_each_device_runs():
    # compiled.as_text() converts the reported program to HLO, which rejects
    # Shardy's ops ("'sdy.sharding_constraint' op unsupported op for export
    # to XLA"): Kiln reports a partitioned program as its per-device plan
    # (compiler/plan_listing.cc), as XLA reports its partitioned HLO.
    from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

    mesh = Mesh(np.array(jax.devices()[:2]), ("x",))
    x = jax.device_put(np.arange(8.0, dtype=np.float32).reshape(4, 2),
                       NamedSharding(mesh, P("x", None)))

    @jax.jit
    def f(a):
        b = jax.shard_map(lambda v: jax.lax.psum(v * 2, "x"), mesh=mesh,
                          in_specs=P("x"), out_specs=P())(a)
        return jax.lax.with_sharding_constraint(b + 1, NamedSharding(mesh, P(None, "x")))

    lowered = f.lower(x)
    assert "sdy.manual_computation" in lowered.as_text()
    assert "sdy.sharding_constraint" in lowered.as_text()
    text = lowered.compile().as_text()
    assert "sdy." not in text and "SPMDFullToShardShape" not in text
    # Each device's 2 x 2 rows, the body's psum an all-reduce of both.
    assert "f32[2,2]" in text and "f32[4,2]" not in text.split("ENTRY")[1].split("\n")[0]
    assert "all-reduce(" in text
    np.testing.assert_array_equal(np.asarray(f(x)), [[9.0, 13.0], [17.0, 21.0]])
