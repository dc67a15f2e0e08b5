// Where XLA's CPU backend departs from the StableHLO specification, Kiln
// follows XLA: it is the judge for JAX and PyTorch/XLA programs. `kiln run
// --spec-semantics` asks for the specification instead (the StableHLO
// interpreter's own tests expect it), process-wide:
// - denormal floats are kept, in operands and results (XLA flushes them to
//   zero: float_env.h);
// - reduce_precision to zero mantissa bits gives infinity for NaN (XLA's
//   CPU backend keeps NaN).
#pragma once

namespace kiln::kernels {

// Set once, before any program runs (pool workers read it as they start).
void SetSpecSemantics(bool spec);
bool SpecSemantics();

}  // namespace kiln::kernels
