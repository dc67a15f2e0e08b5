// The program Kiln reports as optimized (PJRT_Executable_OptimizedProgram,
// JAX's `compiled.as_text()`): the module with its calls inlined, as XLA's
// CPU pipeline inlines them, so that what users read is what runs.
#pragma once

#include <optional>

#include "ir/module.h"

namespace kiln::compiler {

// A copy of `module` in which every func.call of a function with a body is
// replaced by that body, except calls JAX asks to keep (frontend attribute
// `inlineable` "xla_late" or "false", which XLA's CPU backend keeps too), and
// private functions no longer referenced are dropped. Shardy's ops go as
// XLA's CPU pipeline removes them: a sharding constraint, reshard or
// collective on global values becomes its operand (Kiln's devices compute on
// gathered values), a sharding group goes, a named computation is inlined,
// and a manual computation is inlined between custom calls
// SPMDFullToShardShape / SPMDShardToFullShape, as XLA's export of Shardy
// writes it. nullopt when inlining
// would grow the module past a bound (a call tree that multiplies it) or
// nothing is inlined: the caller reports the module as it is.
std::optional<ir::Module> InlineCalls(const ir::Module& module);

}  // namespace kiln::compiler
