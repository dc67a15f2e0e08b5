"""Host callbacks (jax.debug.print, jax.debug.callback, jax.pure_callback,
jax.experimental.io_callback) inside jax.jit on Kiln.

JAX lowers callbacks only for cpu, gpu and tpu. On a PJRT C-API plugin the
one transport that works is the TPU's: stablehlo.send / recv to the host,
whose Python callable jaxlib hands to the plugin as the send/recv callbacks
of PJRT_ExecuteOptions (docs/framework-notes.md, "Host callbacks").
`register()` makes a `kiln` module take that transport:
- JAX's own lowering rules of debug_callback_p / debug_print_p are
  registered for `kiln` too;
- `jax._src.callback.emit_python_callback` (looked up at call time by its
  callers) is wrapped: for a module lowered for `kiln` alone it emits the
  send/recv form through JAX's TPU emitter, checking the callback's results
  as JAX's own wrapper does; every other call goes to JAX unchanged.

These are private JAX names. Each is looked up with getattr; if one is
missing (a JAX that moved it), nothing is changed and JAX's own error stays.
Callback bodies run on JAX's CPU backend, which `initialize()` adds to
JAX_PLATFORMS after `kiln` (`_add_cpu_platform`).
`jax.debug.inspect_array_sharding` gets a rule of its own for `kiln`
(`_inspect_sharding_rule`).
"""

import functools

PLATFORM_NAME = "kiln"


def _kiln_emitter(original, callback_module):
    import numpy as np
    from jax._src import dtypes
    from jax._src.interpreters import mlir

    emit_send_recv = callback_module._emit_tpu_python_callback
    to_xla_shape = callback_module._aval_to_xla_shape
    is_empty = callback_module.is_empty_shape

    @functools.wraps(original)
    def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals,
                             *, has_side_effect, returns_token=True, partitioned=False,
                             sharding=None):
        if tuple(ctx.module_context.platforms) != (PLATFORM_NAME,) or partitioned:
            return original(ctx, callback, token, operands, operand_avals, result_avals,
                            has_side_effect=has_side_effect, returns_token=returns_token,
                            partitioned=partitioned, sharding=sharding)
        backend = ctx.module_context.get_backend()
        # Empty results are not transferred: the program makes them itself.
        sent = [i for i, aval in enumerate(result_avals) if not is_empty(aval.shape)]

        def checked_callback(*args):
            results = callback(*args)
            if len(results) != len(result_avals):
                raise RuntimeError(
                    f"Mismatched number of outputs from callback. Expected: "
                    f"{len(result_avals)}, Actual: {len(results)}")
            results = tuple(dtypes.canonicalize_value(np.asarray(r)) for r in results)
            for i, (result, aval) in enumerate(zip(results, result_avals)):
                if result.shape != aval.shape:
                    raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                                       f"Expected: {aval.shape}, Actual: {result.shape}")
                if result.dtype != aval.dtype:
                    raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                                       f"Expected: {aval.dtype}, Actual: {result.dtype}")
            return tuple(results[i] for i in sent)

        outputs, token = emit_send_recv(
            backend, ctx, checked_callback, token, operands, operand_avals,
            [to_xla_shape(aval) for aval in operand_avals],
            [result_avals[i] for i in sent],
            [to_xla_shape(result_avals[i]) for i in sent],
            returns_token=returns_token, sharding=sharding)
        received = iter(outputs)
        results = [mlir.ir_constant(np.zeros(aval.shape, dtype=aval.dtype))
                   if is_empty(aval.shape) else next(received) for aval in result_avals]
        return results, token, None

    emit_python_callback._kiln_wrapped = True
    return emit_python_callback


def _inspect_sharding_rule(debugging, original):
    """jax.debug.inspect_array_sharding on Kiln.

    JAX's rule, for a program over several devices, emits a custom call
    `InspectSharding` whose backend_config is a pointer to a Python callable
    that XLA's SPMD partitioner (in jaxlib) calls with the sharding it chose;
    no plugin can call it. Kiln computes every value whole on each device
    (issue 28 will partition per op), so the sharding of any value inside
    the program is "replicated over the program's devices": this rule calls
    the callback with that sharding at lowering time, as JAX's own rule does
    for a single device, and emits nothing.
    """
    import numpy as np
    from jax._src import mesh as mesh_lib
    from jax._src import sharding_impls
    from jax._src.sharding_impls import NamedSharding
    from jax.sharding import PartitionSpec

    def rule(ctx, value, *, callback):
        axis_context = ctx.module_context.axis_context
        mesh = mesh_lib.thread_resources.env.physical_mesh
        if isinstance(axis_context, sharding_impls.ShardingContext):
            devices = axis_context.device_assignment
            abstract = axis_context.abstract_mesh
            if devices is not None and abstract is not None:
                mesh = mesh_lib.Mesh(np.array(devices).reshape(abstract.axis_sizes),
                                     abstract.axis_names)
        elif isinstance(axis_context, sharding_impls.SPMDAxisContext):
            mesh = axis_context.mesh
            devices = axis_context.mesh._flat_devices_tuple
        else:
            return original(ctx, value, callback=callback)
        if devices is None or len(devices) == 1:
            return original(ctx, value, callback=callback)
        if mesh.empty:
            callback(sharding_impls.GSPMDSharding(devices,
                                                  sharding_impls.replicated_hlo_sharding))
        else:
            callback(NamedSharding(mesh, PartitionSpec()))
        return []

    return rule


def register() -> None:
    """Lets `kiln` modules lower host callbacks (called from `initialize()`)."""
    try:
        from jax._src import callback as callback_module
        from jax._src import debugging
        from jax._src.interpreters import mlir
    except ImportError:
        return
    original = getattr(callback_module, "emit_python_callback", None)
    needed = [original] + [getattr(callback_module, name, None) for name in
                           ("_emit_tpu_python_callback", "_aval_to_xla_shape",
                            "is_empty_shape")]
    rules = [(getattr(debugging, primitive, None), getattr(debugging, rule, None))
             for primitive, rule in (("debug_callback_p", "debug_callback_lowering"),
                                     ("debug_print_p", "debug_print_lowering_rule"))]
    if any(item is None for item in needed) or any(None in pair for pair in rules):
        return
    if not getattr(original, "_kiln_wrapped", False):
        callback_module.emit_python_callback = _kiln_emitter(original, callback_module)
    for primitive, rule in rules:
        # Like TPU's: channel ids make a lowering unfit for the cache.
        mlir.register_lowering(primitive, rule, platform=PLATFORM_NAME, cacheable=False)
    # checkify's runtime checks (`jax.experimental.checkify.check` under jit
    # with xla_runtime_errors): a callback raising the error, as on cpu.
    try:
        from jax._src import checkify
    except ImportError:
        checkify = None
    check = getattr(checkify, "check_p", None)
    check_rule = getattr(checkify, "check_lowering_rule", None)
    if check is not None and check_rule is not None:
        mlir.register_lowering(check, check_rule, platform=PLATFORM_NAME, cacheable=False)
    inspect = getattr(debugging, "inspect_sharding_p", None)
    inspect_rule = getattr(debugging, "_inspect_sharding_lowering_rule", None)
    if inspect is not None and inspect_rule is not None:
        mlir.register_lowering(inspect, _inspect_sharding_rule(debugging, inspect_rule),
                               platform=PLATFORM_NAME)
