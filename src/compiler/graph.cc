#include "compiler/graph.h"

#include <utility>

namespace kiln::compiler {

ValueId Graph::AddValue(Shape shape) {
  ValueInfo info;
  info.bytes = shape.ByteSize();
  info.shape = std::move(shape);
  values.push_back(std::move(info));
  return static_cast<ValueId>(values.size() - 1);
}

ValueId Graph::AddConstant(Shape shape, std::vector<uint8_t> data) {
  const ValueId id = AddValue(std::move(shape));
  values.back().constant = std::make_shared<const std::vector<uint8_t>>(std::move(data));
  return id;
}

}  // namespace kiln::compiler
