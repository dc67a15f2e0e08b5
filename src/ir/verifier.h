// The Kiln IR verifier: checks that a module is well formed before anything
// compiles it. Each op is checked against the "Constraints" of its section in
// the StableHLO specification (docs/ir.md, "Verifier", lists what is checked),
// plus SSA dominance, region terminators, symbols and func.* signatures.
#pragma once

#include "base/status.h"
#include "ir/module.h"

namespace kiln::ir {

// OK, or INVALID_ARGUMENT for the first violation found, in the form
// "file:line:col: stablehlo.op (C3): what was expected, what was found".
// Walks nesting with an explicit worklist, so any depth verifies.
Status Verify(const Module& module);

// The constraints of one op that belongs to no block: one a compiler rule
// builds (a dynamic op's static form) before lowering it.
Status VerifyDetachedOp(const Operation& op);

}  // namespace kiln::ir
