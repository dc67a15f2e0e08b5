// Indexing kernels: gather and scatter (windows of a big array at run-time
// start indices), the box copies and fills behind dynamic_slice,
// dynamic_update_slice and pad.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <vector>

#include "base/element_type.h"
#include "base/function_ref.h"
#include "base/status.h"
#include "kernels/reduce.h"

namespace kiln::kernels {

// Element `i` of an array of integer indices of `type` (any signed or
// unsigned integer type; unsigned 64-bit values above INT64_MAX saturate).
int64_t LoadIndex(ElementType type, const void* indices, int64_t i);

// Copies the box of shape `dims` from `src` to `dst`, element (i0, i1, ...)
// from src + sum(ik * src_strides[k]) to dst + sum(ik * dst_strides[k])
// (strides in elements). Inner runs contiguous on both sides are memcpy'd.
void CopyBox(size_t element_bytes, std::span<const int64_t> dims, const void* src,
             std::span<const int64_t> src_strides, void* dst, std::span<const int64_t> dst_strides);

// Writes `count` copies of the element at `value` to `dst`.
void Fill(size_t element_bytes, const void* value, void* dst, int64_t count);

// The geometry gather and scatter share. A "big" array (gather's operand,
// scatter's input) has a window at each "batch point" of a "small" array
// (gather's result, scatter's updates), whose dimensions are batch
// dimensions (one per start_indices dimension but the index vector one) and
// window dimensions. Strides are in elements of dense row-major arrays.
struct IndexedWindows {
  std::vector<int64_t> big_dims;
  std::vector<int64_t> big_strides;
  std::vector<int64_t> window_sizes;  // per big dimension (1 where collapsed/inserted)

  // Per batch dimension of the small array.
  struct Batch {
    int64_t size;
    int64_t small_stride;
    int64_t index_stride;  // of the matching start_indices dimension
    int64_t big_dim;       // the big dimension it indexes (batching dims), or -1
  };
  std::vector<Batch> batch;

  // start_index_map / scatter_dims_to_operand_dims: index vector entry k
  // gives the start of big dimension index_map[k].
  std::vector<int64_t> index_map;
  int64_t index_vector_stride = 0;  // between entries of one index vector

  // Per window dimension of the small array, in order.
  struct Window {
    int64_t size;
    int64_t small_stride;
    int64_t big_stride;
  };
  std::vector<Window> window;

  int64_t num_batch_points() const;
};

// gather: out (the small array) receives, at every batch point, the window
// of `operand` (the big array) whose start index vector comes from
// `indices`, each start clamped to [0, dim - window size] as the spec says.
Status Gather(size_t element_bytes, const IndexedWindows& geometry, const void* operand,
              ElementType index_type, const void* indices, void* out);

// One run of a gather reading an s32 index per element (take_along_axis's
// rows in a fused loop): for k in [0, n), out[k] = row[k * stride +
// clamp(idx[k], 0, limit) * gather_stride], elements of `element_bytes`
// (4 or 8); where mask is not null, elements whose mask[k] is `fill_if`
// take the element at `fill` instead. Every offset must fit in an int32
// and none may be negative (the caller checks, GatherRunAccepts the
// sizes). AVX-512's gathers where the CPU has them (F, BW, VL), else a
// loop of loads.
void GatherRun(size_t element_bytes, const void* row, int32_t stride, const int32_t* idx,
               int32_t gather_stride, int32_t limit, const bool* mask, bool fill_if,
               const void* fill, void* out, int64_t n);
inline bool GatherRunAccepts(size_t element_bytes) {
  return element_bytes == 4 || element_bytes == 8;
}

// scatter with a recognized update computation: `out` already holds the
// input; every element u of `updates` is combined into its place:
// out = op(out, u), or out = u when `op` is nullopt (the body returns the
// update). Windows that do not fit the input entirely are skipped, as
// XLA's CPU backend does. Batch points run in order, so repeated indices
// apply in order. Types and ops as ScatterAccepts.
Status Scatter(ElementType type, std::optional<ReduceOp> op, const IndexedWindows& geometry,
               ElementType index_type, const void* indices, const void* updates, void* out);

// Whether Scatter computes `op` (nullopt: overwrite) in `type`: add,
// multiply, maximum and minimum of the types kernels compute in (not max/min
// of complex), any type for overwrite.
bool ScatterAccepts(ElementType type, std::optional<ReduceOp> op);

// The generic scatter: calls visit(big_element, small_element) for every
// update element that lands in the big array, in order (element offsets, not
// bytes). Stops at, and returns, the first error `visit` returns.
Status ScatterVisit(const IndexedWindows& geometry, ElementType index_type, const void* indices,
                    FunctionRef<Status(int64_t, int64_t)> visit);

}  // namespace kiln::kernels
