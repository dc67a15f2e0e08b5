// What the scatter lowering (lower_indexing.cc) decodes from a scatter op,
// shared with the loop programs (loop_program.cc), which run scatters in
// small loop bodies.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "base/element_type.h"
#include "base/status.h"
#include "ir/module.h"
#include "kernels/gather.h"
#include "kernels/reduce.h"

namespace kiln::compiler {

class Lowering;

// What both forms of a scatter's run read: the operands' element types and
// sizes, their shape, the index type and the windows' geometry.
struct ScatterShape {
  size_t count = 0;  // operands (and results)
  std::vector<ElementType> types;
  std::vector<size_t> bytes;
  int64_t elements = 0;       // of each operand
  std::vector<int64_t> dims;  // of each operand
  ElementType index_type{};
  kernels::IndexedWindows geometry;
};

// Scatter `op`'s dimension numbers and shapes, decoded once.
StatusOr<ScatterShape> ReadScatter(Lowering& lowering, const ir::Operation& op);

// Per input: the op a scatter body applies (nullopt: it returns the update),
// when it is one of those forms.
std::optional<std::vector<std::optional<kernels::ReduceOp>>> MatchScatterBody(
    const ir::Region& body, size_t count);

}  // namespace kiln::compiler
