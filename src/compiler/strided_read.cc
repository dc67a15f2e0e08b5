// Data-movement ops as strided reads, and their canonicalization: a read of
// a value another read produced reads the first source directly, and a read
// of all of its source in order is no copy at all (lowering.h, StridedRead).
#include <cstring>
#include <utility>

#include "compiler/lowering.h"
#include "kernels/copy.h"

namespace kiln::compiler {
namespace {

// `outer` reads a value that `inner` read from its source: the same read
// expressed on inner's source.
StridedRead Compose(const StridedRead& inner, const StridedRead& outer) {
  StridedRead read;
  read.source = inner.source;
  read.dims = outer.dims;
  read.base = inner.base;
  for (size_t k = 0; k < inner.axis.size() && k < outer.base.size(); ++k) {
    if (inner.axis[k] >= 0) {
      read.base[static_cast<size_t>(inner.axis[k])] += inner.step[k] * outer.base[k];
    }
  }
  for (size_t j = 0; j < outer.dims.size(); ++j) {
    const int k = outer.axis[j];
    if (k < 0 || inner.axis[static_cast<size_t>(k)] < 0) {
      read.axis.push_back(-1);
      read.step.push_back(0);
    } else {
      read.axis.push_back(inner.axis[static_cast<size_t>(k)]);
      read.step.push_back(outer.step[j] * inner.step[static_cast<size_t>(k)]);
    }
  }
  return read;
}

// Whether `read` gives its source unchanged: same dimensions, each of size
// over one walked in order from the start.
bool ReadsWholeSource(const StridedRead& read, const std::vector<int64_t>& source_dims) {
  if (read.dims != source_dims) return false;
  for (int64_t b : read.base) {
    if (b != 0) return false;
  }
  for (size_t j = 0; j < read.dims.size(); ++j) {
    if (read.dims[j] == 1) continue;
    if (read.axis[j] != static_cast<int>(j) || read.step[j] != 1) return false;
  }
  return true;
}

// Whether `read` gives its source's elements in order under other
// dimensions that differ only by dimensions of size 1 ([n] read as [n, 1]:
// jnp.expand_dims, a scatter's index vector): the same bytes, a view.
bool ReadsSourceInOrder(const StridedRead& read, const std::vector<int64_t>& source_dims) {
  for (int64_t b : read.base) {
    if (b != 0) return false;
  }
  std::vector<int> walked;
  for (size_t j = 0; j < read.dims.size(); ++j) {
    if (read.dims[j] == 1) continue;
    if (read.axis[j] < 0 || read.step[j] != 1 ||
        read.dims[j] != source_dims[static_cast<size_t>(read.axis[j])]) {
      return false;
    }
    walked.push_back(read.axis[j]);
  }
  size_t next = 0;
  for (size_t k = 0; k < source_dims.size(); ++k) {
    if (source_dims[k] == 1) continue;
    if (next >= walked.size() || walked[next] != static_cast<int>(k)) return false;
    ++next;
  }
  return next == walked.size();
}

}  // namespace

StridedRead MakeRead(ValueId source, std::vector<int64_t> dims, std::vector<int64_t> base,
                     std::vector<int> axis, std::vector<int64_t> step) {
  return StridedRead{source, std::move(dims), std::move(base), std::move(axis), std::move(step)};
}

Status Lowering::EmitRead(const ir::Operation& op, StridedRead read) {
  if (auto it = reads_.find(read.source); it != reads_.end()) read = Compose(it->second, read);
  const Shape& source = graph_.shape(read.source);
  if (ReadsWholeSource(read, source.dims)) {
    Bind(op.result(0), read.source);
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(Shape shape, ShapeOf(op.result(0)));
  shape.dims = read.dims;
  const std::vector<int64_t> source_strides = Strides(source.dims);
  std::vector<int64_t> strides;
  for (size_t j = 0; j < read.dims.size(); ++j) {
    strides.push_back(read.axis[j] < 0
                          ? 0
                          : read.step[j] * source_strides[static_cast<size_t>(read.axis[j])]);
  }
  int64_t offset = 0;
  for (size_t m = 0; m < read.base.size(); ++m) offset += read.base[m] * source_strides[m];
  const size_t bytes = ElementBytes(shape.element_type);
  auto pointwise = std::make_shared<Pointwise>();
  pointwise->kind = Pointwise::Kind::kRead;
  pointwise->dims = read.dims;
  pointwise->strides = strides;
  pointwise->base = offset;
  pointwise->element_bytes = bytes;
  const size_t before = graph_.nodes.size();
  // The source's elements in order under other dimensions (differing only
  // by dimensions of size 1: [n] read as [n, 1], jnp.expand_dims, a
  // scatter's index vector): a view, the output aliasing the input where
  // the planner can (a copy where it cannot, as reshape's); still a read
  // that fused loops absorb.
  const bool view = ReadsSourceInOrder(read, source.dims);
  const size_t total = shape.ByteSize();
  RunFn run = view ? RunFn([total](RunContext& ctx) {
    if (ctx.out(0) != ctx.in(0)) kernels::CopyBytes(ctx.out(0), ctx.in(0), total);
    return Status::Ok();
  })
                   : RunFn([bytes, dims = read.dims, strides = std::move(strides),
                            offset](RunContext& ctx) {
                       const auto* base = static_cast<const uint8_t*>(ctx.in(0)) +
                                          offset * static_cast<int64_t>(bytes);
                       kernels::CopyStrided(bytes, dims, base, strides, ctx.out(0));
                       return Status::Ok();
                     });
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        EmitNode(op, {read.source}, {shape}, std::move(run)));
  if (graph_.nodes.size() > before) {
    graph_.nodes.back().pointwise = std::move(pointwise);
    graph_.nodes.back().output_aliases_input = view;
  }
  Bind(op.result(0), outputs[0]);
  // A folded read is a constant: later reads of it copy from the constant.
  if (!graph_.values[static_cast<size_t>(outputs[0])].constant) {
    reads_.emplace(outputs[0], std::move(read));
  }
  return Status::Ok();
}

}  // namespace kiln::compiler
