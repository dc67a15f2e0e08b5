"""Functions exported for the CPU (`jax.export`) run on Kiln.

An `Exported` records the platforms it was lowered for, and calling it
(`exp.call(x)`, or inside a jit) checks that the platform lowering the call
is among them: an artifact exported with the default platforms on a CPU
machine, `("cpu",)`, or for `("cpu", "tpu")`, raises "was exported for
platforms ... but it is used on ('kiln',)" on Kiln. Kiln runs the programs
JAX lowers for its CPU backend (same StableHLO, same custom calls Kiln
implements), so on Kiln the call takes the artifact's CPU lowering: the
`call_exported` lowering rule registered for the `kiln` platform presents
the artifact's "cpu" entry as "kiln" (the platform index the module takes
stays the CPU's) and hands it to JAX's own rule. An artifact that lists
`kiln` itself keeps its own lowering. A custom call of the CPU lowering that
Kiln does not implement is a compile error naming it.
"""

import dataclasses

from kiln_pjrt import PLATFORM_NAME


def _kiln_rule(original):
    def rule(ctx, *args, exported, **params):
        platforms = tuple(exported.platforms)
        if PLATFORM_NAME not in platforms and "cpu" in platforms:
            exported = dataclasses.replace(
                exported,
                platforms=tuple(PLATFORM_NAME if p == "cpu" else p for p in platforms))
        return original(ctx, *args, exported=exported, **params)
    return rule


def register() -> None:
    """Registers the `kiln` lowering of `call_exported` (quietly absent when
    this JAX has no such primitive or rule)."""
    try:
        from jax._src.export import _export
        from jax._src.interpreters import mlir
    except ImportError:
        return
    primitive = getattr(_export, "call_exported_p", None)
    original = getattr(_export, "_call_exported_lowering", None)
    if primitive is None or original is None:
        return
    mlir.register_lowering(primitive, _kiln_rule(original), platform=PLATFORM_NAME)
