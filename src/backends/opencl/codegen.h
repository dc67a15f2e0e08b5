// OpenCL C generated for a segment of a plan (compiler/split.h): which nodes
// the OpenCL backend compiles, and the kernels and launches it compiles a
// segment's nodes into. Runs of elementwise nodes (maps, strided reads,
// conversions, views) over one element count become one kernel whose
// intermediate values stay in registers; reductions over consecutive
// dimensions (one kernel, or two when split) and GEMMs are kernels of their
// own (docs/porting.md, "Compiling nodes").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "compiler/graph.h"

namespace kiln::backends::opencl {

// The options generated code is built with: division and square roots
// correctly rounded, as on the host; no warnings, which PoCL prints on the
// user's stdout ("19 warnings generated.", for the prelude's 16-lane
// helpers on a CPU without AVX-512).
inline constexpr std::string_view kBuildOptions = "-cl-fp32-correctly-rounded-divide-sqrt -w";

// What code generation needs to know of the device.
struct Target {
  bool doubles = false;  // cl_khr_fp64
  size_t max_work_group_size = 256;
  int compute_units = 1;
  // A GPU: work-groups are cooperating threads. Otherwise (PoCL) a
  // work-group is a loop on one CPU thread, and kernels are shaped for it.
  bool gpu = false;
};

// Whether the backend generates code for `node` (its values' shapes in
// `graph`): the node kinds above over element types the device has (pred,
// 8- to 64-bit integers, f32, and f64 with cl_khr_fp64).
bool Generates(const compiler::Graph& graph, const compiler::Node& node, const Target& target);

// One kernel launch: the kernel, the arrays it takes as arguments (each a
// buffer and a byte offset, in this order): values of the segment, or
// temporaries (TemporaryId), and its work size.
struct Launch {
  std::string kernel;
  std::vector<compiler::ValueId> arrays;
  std::vector<size_t> global, local;
};

// An array the kernels pass between them that is no value of the segment
// (a split reduction's partial results), in scratch memory.
struct Temporary {
  ElementType type;
  int64_t elements = 0;
  size_t bytes = 0;
};

// Temporary t's id in Launch::arrays: negative, unlike any value's.
constexpr compiler::ValueId TemporaryId(size_t t) { return -1 - static_cast<compiler::ValueId>(t); }
constexpr size_t TemporaryIndex(compiler::ValueId id) { return static_cast<size_t>(-1 - id); }

struct SegmentCode {
  std::string source;            // every kernel of the segment
  std::vector<Launch> launches;  // in order
  std::vector<Temporary> temporaries;
};

// The code for `segment`, every node of which Generates.
StatusOr<SegmentCode> Generate(const compiler::Graph& segment, const Target& target);

// A kernel `fold(dst, dst_offset, src, src_offset, count)` that combines
// `count` elements of `type` at `src` into `dst` as a reduction by `op`
// does (runtime::DeviceBackend::EnqueueFold); nothing when the device has
// no such reduction.
std::optional<std::string> FoldSource(kernels::ReduceOp op, ElementType type, const Target& target);

}  // namespace kiln::backends::opencl
