// Indexing kernels. Boxes are copied as runs of bytes (dimensions merged
// where both sides are contiguous); gather splits its batch points over
// threads; scatter runs them in order so repeated indices combine in order.
#include "kernels/gather.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "base/small_vector.h"
#include "kernels/elementwise.h"
#include "kernels/isa_clones.h"
#include "kernels/parallel.h"
#include "kernels/types.h"

namespace kiln::kernels {
#ifdef KILN_GATHER_AVX512
namespace gather_internal {
// GatherRun with AVX-512's gathers (gather_avx512.cc).
bool HasGatherRuns();
void GatherRun32Avx512(const uint32_t* row, int32_t stride, const int32_t* idx,
                       int32_t gather_stride, int32_t limit, const bool* mask, bool fill_if,
                       uint32_t fill, uint32_t* out, int64_t n);
void GatherRun64Avx512(const uint64_t* row, int32_t stride, const int32_t* idx,
                       int32_t gather_stride, int32_t limit, const bool* mask, bool fill_if,
                       uint64_t fill, uint64_t* out, int64_t n);
}  // namespace gather_internal
#endif
namespace {

// GatherRun's loop of loads, built per ISA (one plain function per size).
#define KILN_GATHER_RUN(name, T)                                                                  \
  KILN_ISA_CLONES void name(const T* row, int32_t stride, const int32_t* idx,                     \
                            int32_t gather_stride, int32_t limit, const bool* mask, bool fill_if, \
                            T fill, T* out, int64_t n) {                                          \
    for (int64_t k = 0; k < n; ++k) {                                                             \
      const T value = row[static_cast<int32_t>(k) * stride +                                      \
                          std::clamp(idx[k], int32_t{0}, limit) * gather_stride];                 \
      out[k] = mask != nullptr && mask[k] == fill_if ? fill : value;                              \
    }                                                                                             \
  }
KILN_GATHER_RUN(GatherRunLoads32, uint32_t)
KILN_GATHER_RUN(GatherRunLoads64, uint64_t)
#undef KILN_GATHER_RUN

// An N-d box: element (i0, i1, ...) at src + sum(ik * src[k]) and
// dst + sum(ik * dst[k]).
struct Box {
  SmallVector<int64_t> dims;
  SmallVector<int64_t> src;
  SmallVector<int64_t> dst;
};

// Drops size-1 dimensions and merges neighbours contiguous on both sides.
Box Normalize(std::span<const int64_t> dims, std::span<const int64_t> src,
              std::span<const int64_t> dst) {
  Box box;
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k] == 1) continue;
    if (!box.dims.empty() && box.src.back() == src[k] * dims[k] &&
        box.dst.back() == dst[k] * dims[k]) {
      box.dims.back() *= dims[k];
      box.src.back() = src[k];
      box.dst.back() = dst[k];
      continue;
    }
    box.dims.push_back(dims[k]);
    box.src.push_back(src[k]);
    box.dst.push_back(dst[k]);
  }
  return box;
}

// Calls f(src_offset, dst_offset) for every element of the outer dimensions
// of `box` (all but the last); `outer` is the number of them.
template <typename F>
void ForEachOuter(const Box& box, F f) {
  const size_t rank = box.dims.size();
  if (rank <= 1) {
    f(int64_t{0}, int64_t{0});
    return;
  }
  int64_t index[16] = {};
  SmallVector<int64_t> heap_index;
  int64_t* position = index;
  if (rank > 16) {
    heap_index.assign(rank, 0);
    position = heap_index.data();
  }
  int64_t src = 0, dst = 0;
  for (;;) {
    f(src, dst);
    size_t k = rank - 1;
    for (; k-- > 0;) {
      src += box.src[k];
      dst += box.dst[k];
      if (++position[k] < box.dims[k]) break;
      src -= box.src[k] * box.dims[k];
      dst -= box.dst[k] * box.dims[k];
      position[k] = 0;
    }
    if (k == static_cast<size_t>(-1)) return;
  }
}

// A byte box: the element box with an innermost dimension of element_bytes.
Box ByteBox(size_t element_bytes, std::span<const int64_t> dims, std::span<const int64_t> src,
            std::span<const int64_t> dst) {
  const auto bytes = static_cast<int64_t>(element_bytes);
  SmallVector<int64_t> all_dims(dims.begin(), dims.end());
  SmallVector<int64_t> src_bytes, dst_bytes;
  for (int64_t s : src) src_bytes.push_back(s * bytes);
  for (int64_t s : dst) dst_bytes.push_back(s * bytes);
  all_dims.push_back(bytes);
  src_bytes.push_back(1);
  dst_bytes.push_back(1);
  Box box = Normalize(all_dims, src_bytes, dst_bytes);
  // CopyBytes needs a last dimension contiguous on both sides. Normalize drops
  // the byte dimension of 1-byte elements, so add it back as a run of one
  // byte when the last remaining dimension is strided (or none is left).
  if (box.dims.empty() || box.src.back() != 1 || box.dst.back() != 1) {
    box.dims.push_back(1);
    box.src.push_back(1);
    box.dst.push_back(1);
  }
  return box;
}

// Copies n bytes; the common element sizes as fixed-size copies, which the
// compiler turns into single moves.
inline void CopyRun(uint8_t* dst, const uint8_t* src, size_t n) {
  switch (n) {
    case 1: std::memcpy(dst, src, 1); return;
    case 2: std::memcpy(dst, src, 2); return;
    case 4: std::memcpy(dst, src, 4); return;
    case 8: std::memcpy(dst, src, 8); return;
    case 16: std::memcpy(dst, src, 16); return;
    default: std::memcpy(dst, src, n); return;
  }
}

// Copies a byte box (its last dimension contiguous on both sides).
void CopyBytes(const Box& box, const uint8_t* src, uint8_t* dst) {
  const auto run = static_cast<size_t>(box.dims.back());
  if (box.dims.size() == 1) {
    CopyRun(dst, src, run);
    return;
  }
  ForEachOuter(box, [&](int64_t s, int64_t d) { CopyRun(dst + d, src + s, run); });
}

int64_t NumElements(std::span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

// Calls f.template operator()<I>() with I the C++ type of an index type.
template <typename F>
void DispatchIndex(ElementType type, F&& f) {
  switch (type) {
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kS8: f.template operator()<int8_t>(); return;
    case ElementType::kS16: f.template operator()<int16_t>(); return;
    case ElementType::kS32: f.template operator()<int32_t>(); return;
    case ElementType::kS64: f.template operator()<int64_t>(); return;
    case ElementType::kU16: f.template operator()<uint16_t>(); return;
    case ElementType::kU32: f.template operator()<uint32_t>(); return;
    case ElementType::kU64: f.template operator()<uint64_t>(); return;
    default: f.template operator()<uint8_t>(); return;  // u1..u8 (indices are integers)
  }
}

template <typename I>
inline int64_t ToIndex(I value) {
  if constexpr (std::is_same_v<I, uint64_t>) {
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    return static_cast<int64_t>(std::min(value, kMax));
  } else {
    return static_cast<int64_t>(value);
  }
}

// Calls f(big, small) for the batch points [begin, end) of `g` in row-major
// order: `small` is the point's element offset in the small array, `big` its
// window's start in the big one. kClamp: starts are clamped into bounds;
// otherwise points whose window does not fit are skipped. The last batch
// dimension runs as a tight loop over locals (no divisions, nothing the
// body's stores could alias); the others are decomposed once per row.
inline constexpr int64_t kPrefetchAhead = 16;

template <bool kClamp, typename Indices, typename F>
void ForEachWindow(const IndexedWindows& g, Indices indices, int64_t begin, int64_t end, F&& f) {
  if constexpr (!kClamp) {
    // A window larger than its dimension fits nowhere.
    for (size_t d = 0; d < g.big_dims.size(); ++d) {
      if (g.window_sizes[d] > g.big_dims[d]) return;
    }
  }
  const size_t rank = g.batch.size();
  const IndexedWindows::Batch last = rank > 0 ? g.batch[rank - 1]
                                              : IndexedWindows::Batch{1, 0, 0, -1};
  auto big_stride_of = [&](const IndexedWindows::Batch& b) {
    return b.big_dim >= 0 ? g.big_strides[static_cast<size_t>(b.big_dim)] : int64_t{0};
  };
  const int64_t last_big = big_stride_of(last);
  SmallVector<int64_t> key_strides, limits;
  for (int64_t dim : g.index_map) {
    const auto d = static_cast<size_t>(dim);
    key_strides.push_back(g.big_strides[d]);
    // Negative when the window is larger than the dimension (an empty one):
    // scatter then skips every window; gather has no element to read.
    const int64_t limit = g.big_dims[d] - g.window_sizes[d];
    limits.push_back(kClamp ? std::max<int64_t>(limit, 0) : limit);
  }
  const size_t keys = key_strides.size();
  const int64_t vector_stride = g.index_vector_stride;
  for (int64_t point = begin; point < end;) {
    int64_t outer = point / last.size;
    const int64_t first = point % last.size;
    int64_t small = 0, index = 0, batch_big = 0;
    for (size_t j = rank > 0 ? rank - 1 : 0; j-- > 0;) {
      const IndexedWindows::Batch& b = g.batch[j];
      const int64_t coordinate = outer % b.size;
      outer /= b.size;
      small += coordinate * b.small_stride;
      index += coordinate * b.index_stride;
      batch_big += coordinate * big_stride_of(b);
    }
    const int64_t stop = std::min(last.size, first + (end - point));
    point += stop - first;
    if (keys == 1) {
      const int64_t key_stride = key_strides[0];
      const int64_t limit = limits[0];
      for (int64_t c = first; c < stop; ++c) {
        // A body that can prefetch is told the window kPrefetchAhead
        // points on: random starts into a big array miss the cache, and
        // issued one at a time the misses barely overlap (take_along_axis
        // of 4096 x 1024 floats by 4096 x 256 random indices: 81% of the
        // gather's time on the load).
        if constexpr (requires { f.Prefetch(int64_t{}); }) {
          if (c + kPrefetchAhead < stop) {
            const int64_t ahead = std::clamp<int64_t>(
                indices[index + (c + kPrefetchAhead) * last.index_stride], 0,
                std::max<int64_t>(limit, 0));
            f.Prefetch(batch_big + (c + kPrefetchAhead) * last_big + ahead * key_stride);
          }
        }
        int64_t start = indices[index + c * last.index_stride];
        if constexpr (kClamp) {
          start = std::clamp<int64_t>(start, 0, limit);
        } else if (start < 0 || start > limit) {
          continue;
        }
        f(batch_big + c * last_big + start * key_stride, small + c * last.small_stride);
      }
      continue;
    }
    for (int64_t c = first; c < stop; ++c) {
      int64_t big = batch_big + c * last_big;
      const int64_t at = index + c * last.index_stride;
      bool fits = true;
      for (size_t k = 0; k < keys; ++k) {
        int64_t start = indices[at + static_cast<int64_t>(k) * vector_stride];
        if constexpr (kClamp) {
          start = std::clamp<int64_t>(start, 0, limits[k]);
        } else {
          fits = fits && start >= 0 && start <= limits[k];
        }
        big += start * key_strides[k];
      }
      if (fits) f(big, small + c * last.small_stride);
    }
  }
}

// Index readers for ForEachWindow. TypedIndices<I> reads one index type with
// no dispatch (gather and scatter's copy, where the loop body is a move);
// AnyIndices switches on the type per read, so scatter's combining kernels
// (instantiated per element type and op) are not also instantiated per index
// type: that product made this file take minutes to compile under ASan.
template <typename I>
struct TypedIndices {
  const I* data;
  int64_t operator[](int64_t i) const { return ToIndex(data[i]); }
};

struct AnyIndices {
  ElementType type;
  const void* data;
  int64_t operator[](int64_t i) const { return LoadIndex(type, data, i); }
};

// Calls f(big, small) for every batch point whose window fits, in order.
template <typename F>
void ForEachFittingWindow(const IndexedWindows& g, ElementType index_type, const void* indices,
                          F&& f) {
  DispatchIndex(index_type, [&]<typename I>() {
    ForEachWindow<false>(g, TypedIndices<I>{static_cast<const I*>(indices)}, 0,
                         g.num_batch_points(), f);
  });
}

// As ForEachFittingWindow, reading indices through AnyIndices.
template <typename F>
void ForEachFittingWindowAnyIndex(const IndexedWindows& g, ElementType index_type,
                                  const void* indices, F&& f) {
  ForEachWindow<false>(g, AnyIndices{index_type, indices}, 0, g.num_batch_points(), f);
}

// The window box of a geometry: small-array strides as src, big as dst.
Box WindowBox(const IndexedWindows& g) {
  SmallVector<int64_t> sizes, small, big;
  for (const IndexedWindows::Window& w : g.window) {
    sizes.push_back(w.size);
    small.push_back(w.small_stride);
    big.push_back(w.big_stride);
  }
  return Normalize(sizes, small, big);
}

int64_t WindowElements(const IndexedWindows& g) {
  int64_t count = 1;
  for (const IndexedWindows::Window& w : g.window) count *= w.size;
  return count;
}

// --- scatter's typed combine ---

template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// a op b as the elementwise kernels compute it: integers wrap, pred add/max
// are or and multiply/min are and, f16/bf16 compute in f32, float max/min
// propagate NaN.
template <ReduceOp kOp, typename T>
inline T Combine(T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    if constexpr (kOp == ReduceOp::kAdd || kOp == ReduceOp::kMaximum) return a || b;
    return a && b;
  } else if constexpr (kIsInteger<T>) {
    using U = std::make_unsigned_t<T>;
    using Wide = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, U>;
    if constexpr (kOp == ReduceOp::kAdd)
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (kOp == ReduceOp::kMultiply) {
      return static_cast<T>(static_cast<Wide>(static_cast<U>(a)) *
                            static_cast<Wide>(static_cast<U>(b)));
    }
    if constexpr (kOp == ReduceOp::kMaximum) return a >= b ? a : b;
    return a <= b ? a : b;
  } else if constexpr (kIsComplex<T>) {
    if constexpr (kOp == ReduceOp::kMultiply) return ComplexMultiply(a, b);
    return a + b;  // ScatterAccepts admits only add and multiply
  } else {
    using C = ComputeType<T>;
    const C x = static_cast<C>(a);
    const C y = static_cast<C>(b);
    if constexpr (kOp == ReduceOp::kAdd) return static_cast<T>(x + y);
    if constexpr (kOp == ReduceOp::kMultiply) return static_cast<T>(x * y);
    if constexpr (kOp == ReduceOp::kMaximum) {
      return std::isnan(x) ? a : (std::isnan(y) ? b : (x >= y ? a : b));
    }
    return std::isnan(x) ? a : (std::isnan(y) ? b : (x <= y ? a : b));
  }
}

// Updated elements from which a one-run scatter splits its output among
// threads.
constexpr int64_t kParallelScatterElements = 1 << 16;

template <ReduceOp kOp, typename T>
void ScatterTyped(const IndexedWindows& g, ElementType index_type, const void* indices,
                  const T* updates, T* out) {
  if (WindowElements(g) == 0) return;
  const Box box = WindowBox(g);
  const int64_t run = box.dims.empty() ? 1 : box.dims.back();
  const int64_t run_small = box.dims.empty() ? 1 : box.src.back();
  const int64_t run_big = box.dims.empty() ? 1 : box.dst.back();
  if (box.dims.size() <= 1 && run == 1) {
    // One element per window (x.at[i].add(v), segment_sum): a body of
    // locals only, in index order. s32 indices (JAX's) are read without a
    // switch per element. (Splitting the output between threads, each
    // scanning every index for its part, made segment_sum of 1M into 1000
    // bins twice as slow: the in-part test mispredicts half the time.)
    auto body = [updates, out](int64_t big, int64_t small) {
      out[big] = Combine<kOp>(out[big], updates[small]);
    };
    if (index_type == ElementType::kS32) {
      ForEachWindow<false>(g, TypedIndices<int32_t>{static_cast<const int32_t*>(indices)}, 0,
                           g.num_batch_points(), body);
    } else {
      ForEachFittingWindowAnyIndex(g, index_type, indices, body);
    }
    return;
  }
  // Windows of one run (an embedding gradient's rows): threads split the
  // output, each applying, in index order, the parts of every window that
  // fall in its share; the result is the serial one, element for element.
  int64_t out_count = 1;
  for (int64_t d : g.big_dims) out_count *= d;
  const int64_t windows = g.num_batch_points();
  if (box.dims.size() <= 1 && run_big > 0 && windows * run >= kParallelScatterElements &&
      NumThreads() > 1) {
    const int64_t parts = NumThreads();
    ParallelFor(parts, windows * run / parts + windows, [&](int64_t begin, int64_t end) {
      for (int64_t part = begin; part < end; ++part) {
        const int64_t lo = out_count * part / parts, hi = out_count * (part + 1) / parts;
        ForEachFittingWindowAnyIndex(g, index_type, indices, [&](int64_t big, int64_t small) {
          if (big >= hi || big + (run - 1) * run_big < lo) return;
          const int64_t first = big >= lo ? 0 : (lo - big + run_big - 1) / run_big;
          const int64_t last = std::min(run, (hi - big + run_big - 1) / run_big);
          const T* u = updates + small;
          T* o = out + big;
          if (run_big == 1 && run_small == 1) {
            for (int64_t i = first; i < last; ++i) o[i] = Combine<kOp>(o[i], u[i]);
          } else {
            for (int64_t i = first; i < last; ++i) {
              o[i * run_big] = Combine<kOp>(o[i * run_big], u[i * run_small]);
            }
          }
        });
      }
    });
    return;
  }
  ForEachFittingWindowAnyIndex(g, index_type, indices, [&](int64_t big, int64_t small) {
    const T* u = updates + small;
    T* o = out + big;
    if (box.dims.size() <= 1) {
      for (int64_t i = 0; i < run; ++i) {
        o[i * run_big] = Combine<kOp>(o[i * run_big], u[i * run_small]);
      }
      return;
    }
    ForEachOuter(box, [&](int64_t s, int64_t d) {
      for (int64_t i = 0; i < run; ++i) {
        o[d + i * run_big] = Combine<kOp>(o[d + i * run_big], u[s + i * run_small]);
      }
    });
  });
}

}  // namespace

int64_t IndexedWindows::num_batch_points() const {
  int64_t points = 1;
  for (const Batch& b : batch) points *= b.size;
  return points;
}

int64_t LoadIndex(ElementType type, const void* indices, int64_t i) {
  switch (type) {
    case ElementType::kS1:
    case ElementType::kS2:
    case ElementType::kS4:
    case ElementType::kS8: return static_cast<const int8_t*>(indices)[i];
    case ElementType::kS16: return static_cast<const int16_t*>(indices)[i];
    case ElementType::kS32: return static_cast<const int32_t*>(indices)[i];
    case ElementType::kS64: return static_cast<const int64_t*>(indices)[i];
    case ElementType::kU1:
    case ElementType::kU2:
    case ElementType::kU4:
    case ElementType::kU8: return static_cast<const uint8_t*>(indices)[i];
    case ElementType::kU16: return static_cast<const uint16_t*>(indices)[i];
    case ElementType::kU32: return static_cast<const uint32_t*>(indices)[i];
    case ElementType::kU64: {
      const uint64_t value = static_cast<const uint64_t*>(indices)[i];
      constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      return static_cast<int64_t>(std::min(value, kMax));
    }
    default: return 0;  // the verifier admits only integer indices
  }
}

void CopyBox(size_t element_bytes, std::span<const int64_t> dims, const void* src,
             std::span<const int64_t> src_strides, void* dst,
             std::span<const int64_t> dst_strides) {
  if (NumElements(dims) == 0) return;
  const Box box = ByteBox(element_bytes, dims, src_strides, dst_strides);
  CopyBytes(box, static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst));
}

void Fill(size_t element_bytes, const void* value, void* dst, int64_t count) {
  if (count <= 0) return;
  auto* out = static_cast<uint8_t*>(dst);
  const auto* bytes = static_cast<const uint8_t*>(value);
  if (std::all_of(bytes, bytes + element_bytes, [](uint8_t b) { return b == 0; })) {
    std::memset(out, 0, element_bytes * static_cast<size_t>(count));
    return;
  }
  // Doubling copies: log(count) memcpys.
  std::memcpy(out, value, element_bytes);
  const size_t total = element_bytes * static_cast<size_t>(count);
  for (size_t done = element_bytes; done < total;) {
    const size_t chunk = std::min(done, total - done);
    std::memcpy(out + done, out, chunk);
    done += chunk;
  }
}

// Gather's body for windows of one run of kRun bytes: a fixed-size move.
// A window of several elements may start at any element, so the run is
// copied by byte offset (one move of kRun bytes), not as a word index:
// big * bytes / kRun rounded a start of element 1 in an 8-byte window of
// f32 down to element 0.
template <size_t kRun>
struct MoveRun {
  const uint8_t* src;
  uint8_t* dst;
  int64_t bytes;
  void operator()(int64_t big, int64_t small) const {
    std::memcpy(dst + small * bytes, src + big * bytes, kRun);
  }
  void Prefetch(int64_t big) const { __builtin_prefetch(src + big * bytes); }
};

Status Gather(size_t element_bytes, const IndexedWindows& g, const void* operand,
              ElementType index_type, const void* indices, void* out) {
  const int64_t window_elements = WindowElements(g);
  if (window_elements == 0) return Status::Ok();
  // Source is the big array, destination the small one.
  const Box elements = WindowBox(g);
  const Box box = ByteBox(element_bytes, elements.dims, elements.dst, elements.src);
  const auto bytes = static_cast<int64_t>(element_bytes);
  const auto* src = static_cast<const uint8_t*>(operand);
  auto* dst = static_cast<uint8_t*>(out);
  // kRun > 0: every window is one run of kRun bytes (a fixed-size copy).
  auto gather = [&]<typename I, size_t kRun>() {
    ParallelFor(g.num_batch_points(), window_elements + 8, [&](int64_t begin, int64_t end) {
      const TypedIndices<I> typed{static_cast<const I*>(indices)};
      if constexpr (kRun > 0) {
        ForEachWindow<true>(g, typed, begin, end, MoveRun<kRun>{src, dst, bytes});
      } else {
        ForEachWindow<true>(g, typed, begin, end, [&](int64_t big, int64_t small) {
          CopyBytes(box, src + big * bytes, dst + small * bytes);
        });
      }
    });
  };
  const int64_t run = box.dims.size() == 1 ? box.dims[0] : 0;
  DispatchIndex(index_type, [&]<typename I>() {
    switch (run) {
      case 4: gather.template operator()<I, 4>(); break;
      case 8: gather.template operator()<I, 8>(); break;
      case 2: gather.template operator()<I, 2>(); break;
      default: gather.template operator()<I, 0>(); break;
    }
  });
  return Status::Ok();
}

bool ScatterAccepts(ElementType type, std::optional<ReduceOp> op) {
  if (!op) return true;
  if (*op != ReduceOp::kAdd && *op != ReduceOp::kMultiply && *op != ReduceOp::kMaximum &&
      *op != ReduceOp::kMinimum) {
    return false;
  }
  bool accepted = false;
  Status status = DispatchType(type, [&]<typename T>() {
    accepted = !kIsComplex<T> || *op == ReduceOp::kAdd || *op == ReduceOp::kMultiply;
  });
  return status.ok() && accepted;
}

Status Scatter(ElementType type, std::optional<ReduceOp> op, const IndexedWindows& g,
               ElementType index_type, const void* indices, const void* updates, void* out) {
  if (!ScatterAccepts(type, op)) {
    return Unimplemented("scatter cannot combine ", GetElementTypeInfo(type).name,
                         " with this op in a kernel");
  }
  if (!op) {
    if (WindowElements(g) == 0) return Status::Ok();
    const size_t element_bytes = GetElementTypeInfo(type).storage_bytes;
    const auto bytes = static_cast<int64_t>(element_bytes);
    const Box elements = WindowBox(g);
    const Box box = ByteBox(element_bytes, elements.dims, elements.src, elements.dst);
    const auto* src = static_cast<const uint8_t*>(updates);
    auto* dst = static_cast<uint8_t*>(out);
    ForEachFittingWindow(g, index_type, indices, [&](int64_t big, int64_t small) {
      CopyBytes(box, src + small * bytes, dst + big * bytes);
    });
    return Status::Ok();
  }
  return DispatchType(type, [&]<typename T>() {
    const auto* u = static_cast<const T*>(updates);
    auto* o = static_cast<T*>(out);
    switch (*op) {
      case ReduceOp::kAdd: ScatterTyped<ReduceOp::kAdd>(g, index_type, indices, u, o); break;
      case ReduceOp::kMultiply:
        ScatterTyped<ReduceOp::kMultiply>(g, index_type, indices, u, o);
        break;
      case ReduceOp::kMaximum:
        if constexpr (!kIsComplex<T>)
          ScatterTyped<ReduceOp::kMaximum>(g, index_type, indices, u, o);
        break;
      case ReduceOp::kMinimum:
        if constexpr (!kIsComplex<T>)
          ScatterTyped<ReduceOp::kMinimum>(g, index_type, indices, u, o);
        break;
      default: break;
    }
  });
}

Status ScatterVisit(const IndexedWindows& g, ElementType index_type, const void* indices,
                    FunctionRef<Status(int64_t, int64_t)> visit) {
  if (WindowElements(g) == 0) return Status::Ok();
  const Box box = WindowBox(g);
  const int64_t run = box.dims.empty() ? 1 : box.dims.back();
  const int64_t run_small = box.dims.empty() ? 1 : box.src.back();
  const int64_t run_big = box.dims.empty() ? 1 : box.dst.back();
  Status status = Status::Ok();
  ForEachFittingWindowAnyIndex(g, index_type, indices, [&](int64_t big, int64_t small) {
    if (!status.ok()) return;
    ForEachOuter(box, [&](int64_t s, int64_t d) {
      for (int64_t i = 0; i < run && status.ok(); ++i) {
        status = visit(big + d + i * run_big, small + s + i * run_small);
      }
    });
  });
  return status;
}

void GatherRun(size_t element_bytes, const void* row, int32_t stride, const int32_t* idx,
               int32_t gather_stride, int32_t limit, const bool* mask, bool fill_if,
               const void* fill, void* out, int64_t n) {
  // Each size's two forms: AVX-512's gathers where the CPU has them, else
  // the loop of loads.
  const auto run = [&]<typename T>(auto loads, [[maybe_unused]] auto gathers) {
    T value = 0;
    if (fill != nullptr) std::memcpy(&value, fill, sizeof(value));
    const auto* from = static_cast<const T*>(row);
    auto* to = static_cast<T*>(out);
#ifdef KILN_GATHER_AVX512
    if (gather_internal::HasGatherRuns()) {
      gathers(from, stride, idx, gather_stride, limit, mask, fill_if, value, to, n);
      return;
    }
#endif
    loads(from, stride, idx, gather_stride, limit, mask, fill_if, value, to, n);
  };
#ifdef KILN_GATHER_AVX512
  const auto gathers32 = gather_internal::GatherRun32Avx512;
  const auto gathers64 = gather_internal::GatherRun64Avx512;
#else
  const auto gathers32 = nullptr;
  const auto gathers64 = nullptr;
#endif
  if (element_bytes == 4) {
    run.operator()<uint32_t>(GatherRunLoads32, gathers32);
  } else {
    run.operator()<uint64_t>(GatherRunLoads64, gathers64);
  }
}

}  // namespace kiln::kernels
