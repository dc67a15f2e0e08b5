// A static estimate of what a program costs to run, for
// PJRT_Executable_GetCostAnalysis (JAX's `compiled.cost_analysis()`).
#pragma once

#include <cstdint>

#include "ir/module.h"

namespace kiln::compiler {

// Totals over the entry function, the functions it calls and the bodies of
// its region ops (each loop body counted once, as XLA does).
struct CostAnalysis {
  double flops = 0;            // multiply-adds count 2; one per elementwise result element
  double transcendentals = 0;  // exp, log, tanh, sin, ... per result element
  double bytes_accessed = 0;   // operands read + results written, per op
};

CostAnalysis AnalyzeCost(const ir::Module& module, const ir::Operation& entry);

}  // namespace kiln::compiler
