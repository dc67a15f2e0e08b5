// Recognizers for the region bodies frameworks emit over and over: a
// reduction body that is one binary op, a select body that is one compare,
// a sort comparator that is a lexicographic "less than". A recognized body
// runs as a typed kernel; anything else runs the region per element.
#pragma once

#include <optional>
#include <vector>

#include "ir/module.h"
#include "kernels/elementwise.h"
#include "kernels/reduce.h"
#include "kernels/sort.h"

namespace kiln::compiler {

// For a reduction body over N accumulators (reduce, reduce_window, scatter,
// the reducing collectives): the op of each result i when the body computes
// it as one add, multiply, maximum, minimum, and, or or xor of its arguments
// i and N+i (in either order), each of the type of those arguments and
// nothing else. nullopt for any other body.
std::optional<std::vector<kernels::ReduceOp>> MatchReductionBody(const ir::Region& body);

// For select_and_scatter's select body: the direction when the body is one
// GE/GT/LE/LT compare of its two arguments (IEEE or integer, not
// TOTALORDER), normalized to `arg0 <direction> arg1`. nullopt otherwise.
std::optional<kernels::CompareDirection> MatchSelectBody(const ir::Region& body);

// For a sort comparator over operands (arguments 2i, 2i+1 are operand i's
// pair): the keys when it is a lexicographic "less than" on some operands,
// each key a LT or GT compare of the two arguments of one operand, or of
// their real or imaginary parts, or of JAX's canonicalization of those
// floats (-0 -> +0, NaN -> +NaN, under TOTALORDER),
// combined as JAX does: lt(k0) or (eq(k0) and (lt(k1) or ...)). nullopt
// otherwise.
std::optional<std::vector<kernels::SortKey>> MatchComparator(const ir::Region& comparator);

}  // namespace kiln::compiler
