// Running a fused loop (fused_loop.h): each thread takes a range of the
// loop's elements and, tile by tile, fills the reads' tiles (or reads them
// in place), runs the members' kernels or the loop's generated stages, copies
// out the values used outside the loop and folds the tile into the rows of
// its reductions. These are the hot loops of fusion: built at -O3
// (CMakeLists.txt). Building the loop is fused_loop_build.cc; choosing the
// runs is fusion.cc.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <utility>

#include "base/small_vector.h"
#include "compiler/executor.h"
#include "compiler/fused_loop.h"
#include "compiler/graph.h"
#include "kernels/gather.h"
#include "kernels/loop_jit.h"
#include "kernels/parallel.h"
#include "kernels/scratch.h"

namespace kiln::compiler {
namespace fusion_internal {
namespace {

// Copies `run` elements of type T `stride` elements apart (0: one element
// repeated) to `to`.
template <typename T>
void CopyRun(const uint8_t* from, int64_t stride, int64_t run, uint8_t* to) {
  T* out = reinterpret_cast<T*>(to);
  if (stride == 0) {
    T value;
    std::memcpy(&value, from, sizeof(T));
    std::fill_n(out, run, value);
    return;
  }
  for (int64_t k = 0; k < run; ++k) std::memcpy(out + k, from + k * stride * sizeof(T), sizeof(T));
}

// a / b and a % b for a >= 0, b > 0, in 32-bit arithmetic when both fit:
// the tile loops divide a few times per read per tile, and a 64-bit
// division took several times as long as a 32-bit one (about 45 against 13
// cycles on Zen 2).
struct QuotientRemainder {
  int64_t quotient, remainder;
};
inline QuotientRemainder DivMod(int64_t a, int64_t b) {
  if (static_cast<uint64_t>(a) <= UINT32_MAX && static_cast<uint64_t>(b) <= UINT32_MAX) {
    const auto x = static_cast<uint32_t>(a), y = static_cast<uint32_t>(b);
    return {x / y, x % y};
  }
  return {a / b, a % b};
}

// Elements [start, start + n) of a strided read when they lie within one
// run of its innermost dimension and that dimension's source stride is
// `stride`: their address. Stride 1: the elements are contiguous in the
// source (a broadcast row within one row of the output), read in place;
// stride 0: they are one element repeated (a row's mean). Else null.
const uint8_t* ReadRun(const Pointwise& read, const uint8_t* source, int64_t start, int64_t n,
                       int64_t stride) {
  const size_t rank = read.dims.size();
  if (rank == 0 || read.strides[rank - 1] != stride) return nullptr;
  const int64_t last = read.dims[rank - 1];
  const auto [outer, position] = DivMod(start, last);
  if (position + n > last) return nullptr;
  int64_t offset = read.base + position * stride;
  int64_t rest = outer;
  for (size_t j = rank - 1; j-- > 0 && rest > 0;) {
    const QuotientRemainder split = DivMod(rest, read.dims[j]);
    offset += split.remainder * read.strides[j];
    rest = split.quotient;
  }
  return source + offset * static_cast<int64_t>(read.element_bytes);
}

// Copies elements [start, start + n) of a strided read into `out`.
void ReadTile(const Pointwise& read, const uint8_t* source, int64_t start, int64_t n,
              uint8_t* out) {
  const size_t bytes = read.element_bytes;
  const size_t rank = read.dims.size();
  if (rank == 0) {  // one element for all: a fill (not a memcpy call per element)
    const uint8_t* value = source + read.base * bytes;
    switch (bytes) {
      case 1: CopyRun<uint8_t>(value, 0, n, out); return;
      case 2: CopyRun<uint16_t>(value, 0, n, out); return;
      case 4: CopyRun<uint32_t>(value, 0, n, out); return;
      case 8: CopyRun<uint64_t>(value, 0, n, out); return;
      default:
        for (int64_t k = 0; k < n; ++k) std::memcpy(out + k * bytes, value, bytes);
        return;
    }
  }
  SmallVector<int64_t, 8> index(rank, 0);
  int64_t offset = read.base;
  int64_t rest = start;
  for (size_t j = rank; j-- > 0;) {
    const int64_t size = read.dims[j];
    index[j] = rest % size;
    rest /= size;
    offset += index[j] * read.strides[j];
  }
  const size_t last = rank - 1;
  const int64_t stride = read.strides[last];
  int64_t done = 0;
  while (done < n) {
    const int64_t run = std::min(n - done, read.dims[last] - index[last]);
    uint8_t* to = out + done * static_cast<int64_t>(bytes);
    const uint8_t* from = source + offset * static_cast<int64_t>(bytes);
    if (stride == 1) {
      std::memcpy(to, from, static_cast<size_t>(run) * bytes);
    } else {
      switch (bytes) {
        case 1: CopyRun<uint8_t>(from, stride, run, to); break;
        case 2: CopyRun<uint16_t>(from, stride, run, to); break;
        case 4: CopyRun<uint32_t>(from, stride, run, to); break;
        case 8: CopyRun<uint64_t>(from, stride, run, to); break;
        default:
          for (int64_t k = 0; k < run; ++k) {
            std::memcpy(to + k * static_cast<int64_t>(bytes),
                        from + k * stride * static_cast<int64_t>(bytes), bytes);
          }
      }
    }
    done += run;
    offset += run * stride;
    index[last] += run;
    // Carry into the outer dimensions.
    for (size_t j = last; j > 0 && index[j] == read.dims[j]; --j) {
      offset -= index[j] * read.strides[j];
      index[j] = 0;
      ++index[j - 1];
      offset += read.strides[j - 1];
    }
  }
}

// A gather's start index, clamped into [0, limit].
template <typename I>
inline int64_t ClampedIndex(const I* indices, int64_t at, int64_t limit) {
  return std::clamp<int64_t>(static_cast<int64_t>(indices[at]), 0, limit);
}

// Where a gather finds its index array and, when a select was folded into
// it (Member::masked), its predicates and fill: the index (and predicate)
// of output element k is element `at(k) - origin` of its array, where
// at(k) is its offset by the gather's index strides. An array from memory
// has origin 0; a member's tile holds the tile's own elements (the gather
// reads its indices in order), so its origin is the tile's start.
struct GatherOperands {
  const uint8_t* indices = nullptr;
  int64_t index_origin = 0;
  const bool* mask = nullptr;  // null: not masked
  int64_t mask_origin = 0;
  const uint8_t* fill = nullptr;
  bool fill_if = false;
};

// Elements [start, start + n) of gather read `g` (Pointwise::kGather) into
// `out`, elements of type T, indices of type I. Along the innermost
// dimension a run either has one index (a row of jnp.take: one copy) or
// one per element (take_along_axis). kMasked: where the predicate is
// `fill_if`, the fill instead (a whole run at once when it has one index).
template <typename I, typename T, bool kMasked>
void GatherTileOf(const Pointwise& g, const uint8_t* source, const GatherOperands& operands,
                  int64_t start, int64_t n, uint8_t* out) {
  const size_t rank = g.dims.size();
  SmallVector<int64_t, 8> index(rank, 0);
  int64_t offset = g.base, at = 0;  // into the source and the indices, in elements
  int64_t rest = start;
  for (size_t j = rank; j-- > 0;) {
    const QuotientRemainder split = DivMod(rest, g.dims[j]);
    index[j] = split.remainder;
    rest = split.quotient;
    offset += index[j] * g.strides[j];
    at += index[j] * g.index_strides[j];
  }
  const auto* indices = reinterpret_cast<const I*>(operands.indices);
  const int64_t index_origin = operands.index_origin, mask_origin = operands.mask_origin;
  const bool* mask = operands.mask;
  const bool fill_if = operands.fill_if;
  T fill{};
  if constexpr (kMasked) std::memcpy(&fill, operands.fill, sizeof(T));
  const auto* from = reinterpret_cast<const T*>(source);
  auto* to = reinterpret_cast<T*>(out);
  const size_t last = rank - 1;
  const int64_t stride = g.strides[last], index_stride = g.index_strides[last];
  const int64_t gather_stride = g.gather_stride, limit = g.gather_limit;
  // The span one run's indices reach, prefetched a row ahead when it is
  // small enough to stay in cache until then and the row's elements touch
  // a good part of its cache lines (a label per row of 16K logits would
  // fetch 64 KiB for one element).
  const int64_t next_row = rank >= 2 ? g.strides[last - 1] : 0;
  const int64_t span = (limit * gather_stride + (g.dims[last] - 1) * stride + 1) *
                       static_cast<int64_t>(sizeof(T));
  const int64_t prefetch_bytes = next_row > 0 && span <= 64 * 1024 && g.dims[last] * 4 * 64 >= span
                                     ? span
                                     : 0;
  // The offsets within a run fit in 32 bits (and are not negative).
  const bool fast_runs = span / static_cast<int64_t>(sizeof(T)) <= INT32_MAX && stride >= 0 &&
                         gather_stride >= 0 && limit <= INT32_MAX;
  int64_t done = 0;
  while (done < n) {
    const int64_t run = std::min(n - done, g.dims[last] - index[last]);
    if (index_stride == 0) {
      if (kMasked && mask[at - mask_origin] == fill_if) {
        std::fill_n(to + done, run, fill);
      } else {
        const T* row = from + offset +
                       ClampedIndex(indices, at - index_origin, limit) * gather_stride;
        if (stride == 1) {
          std::memcpy(to + done, row, static_cast<size_t>(run) * sizeof(T));
        } else {
          for (int64_t k = 0; k < run; ++k) to[done + k] = row[k * stride];
        }
      }
    } else {
      // Each element's index picks its own place in the span the run's
      // indices may reach (take_along_axis: a row of the source). Reading
      // places at random, a thread waited on one cache miss after another
      // (a 16 MB source took 4.3 ms for 1M elements); the next row of the
      // outer dimension, where the next run most likely reads, is fetched
      // meanwhile.
      if (index[last] == 0 && prefetch_bytes > 0 && index[last - 1] + 1 < g.dims[last - 1]) {
        // In integers: the address is only a hint, and no pointer past the
        // source is ever formed.
        const uintptr_t next = reinterpret_cast<uintptr_t>(from) +
                               static_cast<uintptr_t>((offset + next_row) *
                                                      static_cast<int64_t>(sizeof(T)));
        for (int64_t b = 0; b < prefetch_bytes; b += 64) {
          __builtin_prefetch(reinterpret_cast<const void*>(next + static_cast<uintptr_t>(b)));
        }
      }
      bool gathered = false;
      if constexpr (std::is_same_v<I, int32_t> && (sizeof(T) == 4 || sizeof(T) == 8)) {
        if (fast_runs && index_stride == 1) {
          kernels::GatherRun(sizeof(T), from + offset, static_cast<int32_t>(stride),
                             indices + (at - index_origin), static_cast<int32_t>(gather_stride),
                             static_cast<int32_t>(limit),
                             kMasked ? mask + (at - mask_origin) : nullptr, fill_if, &fill,
                             to + done, run);
          gathered = true;
        }
      }
      for (int64_t k = 0; k < run && !gathered; ++k) {
        // A masked element's index is clamped and read like any other (no
        // branch in the loop), then replaced.
        T value = from[offset + k * stride +
                       ClampedIndex(indices, at - index_origin + k * index_stride, limit) *
                           gather_stride];
        if constexpr (kMasked) {
          if (mask[at - mask_origin + k * index_stride] == fill_if) value = fill;
        }
        to[done + k] = value;
      }
    }
    done += run;
    offset += run * stride;
    at += run * index_stride;
    index[last] += run;
    for (size_t j = last; j > 0 && index[j] == g.dims[j]; --j) {
      offset -= index[j] * g.strides[j];
      at -= index[j] * g.index_strides[j];
      index[j] = 0;
      ++index[j - 1];
      offset += g.strides[j - 1];
      at += g.index_strides[j - 1];
    }
  }
}

struct Bytes16 {
  uint64_t low, high;
};

template <typename I, typename T>
void GatherTileMasked(const Pointwise& g, const uint8_t* source, const GatherOperands& operands,
                      int64_t start, int64_t n, uint8_t* out) {
  if (operands.mask != nullptr) {
    GatherTileOf<I, T, true>(g, source, operands, start, n, out);
  } else {
    GatherTileOf<I, T, false>(g, source, operands, start, n, out);
  }
}

template <typename I>
void GatherTileIndexed(const Pointwise& g, const uint8_t* source, const GatherOperands& operands,
                       int64_t start, int64_t n, uint8_t* out) {
  switch (g.element_bytes) {
    case 1: GatherTileMasked<I, uint8_t>(g, source, operands, start, n, out); return;
    case 2: GatherTileMasked<I, uint16_t>(g, source, operands, start, n, out); return;
    case 4: GatherTileMasked<I, uint32_t>(g, source, operands, start, n, out); return;
    case 8: GatherTileMasked<I, uint64_t>(g, source, operands, start, n, out); return;
    default: GatherTileMasked<I, Bytes16>(g, source, operands, start, n, out); return;
  }
}

// The element sizes and index types GatherRead (lower_indexing.cc) admits.
void GatherTile(const Pointwise& g, const uint8_t* source, const GatherOperands& operands,
                int64_t start, int64_t n, uint8_t* out) {
  switch (g.index_type) {
    case ElementType::kS64: GatherTileIndexed<int64_t>(g, source, operands, start, n, out); return;
    case ElementType::kU32: GatherTileIndexed<uint32_t>(g, source, operands, start, n, out); return;
    default: GatherTileIndexed<int32_t>(g, source, operands, start, n, out); return;
  }
}

// Where member `m`'s elements of the tile at `start` go: straight into the
// fused node's output when `direct[m]`, else the member's tile buffer (not
// for splats, which operands name as such).
uint8_t* TileOf(const Member& member, RunContext& ctx, std::span<const bool> direct, size_t m,
                int64_t start, uint8_t* scratch) {
  if (direct[m]) {
    return static_cast<uint8_t*>(ctx.out(static_cast<size_t>(member.output))) +
           start * static_cast<int64_t>(member.output_bytes);
  }
  return scratch + member.slot_offset;
}

// Where a gather member finds operand `i` (its indices or predicates):
// the array in memory, or an earlier member's tile, whose origin is then
// the tile's `start` (GatherOperands).
const uint8_t* GatherArray(const FusedLoop& loop, const Member& member, size_t i, RunContext& ctx,
                           std::span<const bool> direct, int64_t start, uint8_t* scratch,
                           int64_t& origin) {
  const Operand& operand = member.operands[i];
  if (operand.from == Operand::From::kMember) {
    origin = start;
    return TileOf(loop.members[operand.index], ctx, direct, operand.index, start, scratch);
  }
  if (operand.from == Operand::From::kSplat) {  // one index for all: any origin reads it
    origin = start;
    return loop.splats[operand.index].data();
  }
  origin = 0;
  return static_cast<const uint8_t*>(ctx.in(operand.index));
}

// Fills the tile of read or gather `member` at `start`.
void FillReadTile(const FusedLoop& loop, const Member& member, RunContext& ctx,
                  std::span<const bool> direct, const uint8_t* source, int64_t start, int64_t n,
                  uint8_t* scratch, uint8_t* out) {
  const Pointwise& read = *member.pointwise;
  if (read.kind != Pointwise::Kind::kGather) {
    ReadTile(read, source, start, n, out);
    return;
  }
  GatherOperands operands;
  operands.indices = GatherArray(loop, member, 1, ctx, direct, start, scratch,
                                 operands.index_origin);
  if (member.masked) {
    operands.mask = reinterpret_cast<const bool*>(GatherArray(loop, member, 2, ctx, direct, start,
                                                              scratch, operands.mask_origin));
    operands.fill = loop.splats[member.operands[3].index].data();
    operands.fill_if = member.fill_if;
  }
  GatherTile(read, source, operands, start, n, out);
}

// Where the tile at `start` finds `operand`.
const void* OperandTile(const FusedLoop& loop, const Operand& operand, RunContext& ctx,
                        std::span<const bool> direct, int64_t start, uint8_t* scratch) {
  switch (operand.from) {
    case Operand::From::kMember:
      return TileOf(loop.members[operand.index], ctx, direct, operand.index, start, scratch);
    case Operand::From::kSplat: return loop.splats[operand.index].data();
    case Operand::From::kInput: break;
  }
  return static_cast<const uint8_t*>(ctx.in(operand.index)) +
         start * static_cast<int64_t>(loop.input_bytes[operand.index]);
}

// Folds elements [start, start + n) of the reducer's values (at `values`)
// into their rows' results; a row's result starts from init at its first
// element.
Status FoldTile(const FusedLoop& loop, const Reducer& reducer, RunContext& ctx,
                const uint8_t* values, int64_t start, int64_t n) {
  const int64_t cols = loop.cols;
  const auto bytes = static_cast<int64_t>(reducer.bytes);
  auto* out = static_cast<uint8_t*>(ctx.out(reducer.output));
  const void* init = ctx.in(reducer.init);
  const int64_t end = start + n;
  for (int64_t pos = start; pos < end;) {
    const auto [row, offset] = DivMod(pos, cols);
    int64_t rows = 1, width = std::min(end - pos, cols - offset);
    if (offset == 0 && pos + cols <= end) {  // whole rows
      rows = (end - pos) / cols;
      width = cols;
    }
    if (offset == 0) {
      for (int64_t r = 0; r < rows; ++r) {
        std::memcpy(out + (row + r) * bytes, init, reducer.bytes);
      }
    }
    KILN_RETURN_IF_ERROR(kernels::FoldRowsInto(reducer.op, reducer.type,
                                               values + (pos - start) * bytes, rows, width,
                                               out + row * bytes));
    pos += rows * width;
  }
  return Status::Ok();
}

// The tile at `start` through the loop's stages: the reads fill their
// tiles (or are read in place), then each stage computes its maps.
// `in_place` (one entry per member, null outside reads) receives where
// each read's tile is read in place, or null where it is filled.
// `sources` holds each read member's source array (null elsewhere), looked
// up once per run of tiles rather than per tile.
Status RunStages(const FusedLoop& loop, RunContext& ctx, std::span<const bool> direct,
                 int64_t start, int64_t n, uint8_t* scratch, const uint8_t* const* sources,
                 const uint8_t** in_place) {
  // The uniform reads all uniform over this tile: the stages read one
  // element of each (their uniform code); else every one fills its tile.
  bool uniform = true;
  for (size_t k = 0; k < loop.uniform_reads.size() && uniform; ++k) {
    const size_t m = loop.uniform_reads[k];
    const Member& member = loop.members[m];
    in_place[m] = ReadRun(*member.pointwise, sources[m], start, n, 0);
    uniform = in_place[m] != nullptr;
  }
  for (const size_t m : loop.reads) {
    const Member& member = loop.members[m];
    if (loop.uniform[m] && uniform) continue;
    const uint8_t* source = sources[m];
    in_place[m] = loop.read_in_place[m] ? ReadRun(*member.pointwise, source, start, n, 1) : nullptr;
    if (in_place[m] != nullptr) continue;
    FillReadTile(loop, member, ctx, direct, source, start, n, scratch,
                 TileOf(member, ctx, direct, m, start, scratch));
  }
  const auto member_tile = [&](size_t m) -> const void* {
    return in_place[m] != nullptr ? in_place[m]
                                  : TileOf(loop.members[m], ctx, direct, m, start, scratch);
  };
  // CompileLoop takes at most kMaxLoopArrays inputs and outputs.
  std::array<const float*, kernels::kMaxLoopArrays> in;
  std::array<float*, kernels::kMaxLoopArrays> out;
  for (const FusedLoop::Stage& stage : loop.stages) {
    if (stage.code == nullptr) {
      const Member& member = loop.members[stage.tile_member];
      for (size_t k = 0; k < member.operands.size(); ++k) {
        const Operand& operand = member.operands[k];
        in[k] = static_cast<const float*>(operand.from == Operand::From::kMember
                                              ? member_tile(operand.index)
                                              : OperandTile(loop, operand, ctx, direct, start,
                                                            scratch));
      }
      member.tile_f32(in.data(),
                      reinterpret_cast<float*>(TileOf(member, ctx, direct, stage.tile_member, start,
                                                      scratch)),
                      n);
      continue;
    }
    const bool scalar = uniform && stage.uniform_code != nullptr;
    const std::vector<FusedLoop::CodeArray>& inputs = scalar ? stage.uniform_inputs : stage.inputs;
    for (size_t j = 0; j < inputs.size(); ++j) {
      const FusedLoop::CodeArray& array = inputs[j];
      in[j] = static_cast<const float*>(array.member
                                            ? member_tile(array.index)
                                            : static_cast<const uint8_t*>(ctx.in(array.index)) +
                                                  start * static_cast<int64_t>(sizeof(float)));
    }
    for (size_t k = 0; k < stage.outputs.size(); ++k) {
      const size_t m = stage.outputs[k];
      out[k] = reinterpret_cast<float*>(TileOf(loop.members[m], ctx, direct, m, start, scratch));
    }
    (scalar ? stage.uniform_code : stage.code)->Run(in.data(), out.data(), n);
  }
  return Status::Ok();
}

}  // namespace

Status RunTiles(const FusedLoop& loop, RunContext& ctx, std::span<const bool> direct, int64_t begin,
                int64_t end, uint8_t* scratch) {
  SmallVector<const void*, 4> in;
  kernels::ScratchArray<const uint8_t*> in_place(loop.members.size(), nullptr);
  kernels::ScratchArray<const uint8_t*> sources(loop.members.size(), nullptr);
  for (const size_t m : loop.reads) {
    sources[m] = static_cast<const uint8_t*>(ctx.in(loop.members[m].operands[0].index));
  }
  // The members whose tiles are copied out after each tile (scratch, not a
  // vector: steady-state runs allocate nothing).
  kernels::ScratchArray<uint32_t> copied_members(loop.members.size());
  size_t copies = 0;
  for (size_t m = 0; m < loop.members.size(); ++m) {
    if (loop.members[m].output >= 0 && !direct[m]) {
      copied_members[copies++] = static_cast<uint32_t>(m);
    }
  }
  const std::span<const uint32_t> copied(copied_members.data(), copies);
  for (int64_t start = begin; start < end; start += loop.tile) {
    const int64_t n = std::min(loop.tile, end - start);
    if (!loop.stages.empty()) {
      KILN_RETURN_IF_ERROR(RunStages(loop, ctx, direct, start, n, scratch, sources.data(),
                                     in_place.data()));
    }
    for (size_t m = 0; loop.stages.empty() && m < loop.members.size(); ++m) {
      const Member& member = loop.members[m];
      if (member.pointwise == nullptr) continue;  // a splat
      uint8_t* out = TileOf(member, ctx, direct, m, start, scratch);
      const Pointwise& pointwise = *member.pointwise;
      if (pointwise.kind != Pointwise::Kind::kMap) {
        FillReadTile(loop, member, ctx, direct,
                     static_cast<const uint8_t*>(ctx.in(member.operands[0].index)), start, n,
                     scratch, out);
        continue;
      }
      in.resize(0);
      if (member.tile_f32 != nullptr) {
        const float* operands[4];
        for (size_t k = 0; k < member.operands.size(); ++k) {
          operands[k] = static_cast<const float*>(OperandTile(loop, member.operands[k], ctx, direct,
                                                              start, scratch));
        }
        member.tile_f32(operands, reinterpret_cast<float*>(out), n);
        continue;
      }
      for (const Operand& operand : member.operands) {
        in.push_back(OperandTile(loop, operand, ctx, direct, start, scratch));
      }
      Status status = pointwise.map(std::span<const void* const>(in.data(), in.size()), out, n);
      if (!status.ok()) {
        return Status(status.code(),
                      StrCat(member.location, ": ", member.op, ": ", status.message()));
      }
    }
    for (const uint32_t m : copied) {
      const Member& member = loop.members[m];
      const uint8_t* from = member.pointwise == nullptr ? loop.splats[member.slot_offset].data()
                                                        : scratch + member.slot_offset;
      std::memcpy(static_cast<uint8_t*>(ctx.out(static_cast<size_t>(member.output))) +
                      start * static_cast<int64_t>(member.output_bytes),
                  from, static_cast<size_t>(n) * member.output_bytes);
    }
    for (const Reducer& reducer : loop.reducers) {
      const Member& member = loop.members[reducer.member];
      const uint8_t* values = member.pointwise == nullptr
                                  ? loop.splats[member.slot_offset].data()
                                  : TileOf(member, ctx, direct, reducer.member, start, scratch);
      KILN_RETURN_IF_ERROR(FoldTile(loop, reducer, ctx, values, start, n));
    }
  }
  return Status::Ok();
}

namespace {

// Whether [a, a + a_bytes) and [b, b + b_bytes) share memory.
bool Overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + b_bytes && y < x + a_bytes;
}

// Runs all of `loop`'s elements, split among threads.
Status RunFused(const FusedLoop& loop, RunContext& ctx) {
  // A member's escaping value is computed straight into the node's output
  // unless that memory is also an input (a donated argument written in
  // place): then it goes through the tile buffer and is copied out after
  // the tile is read.
  kernels::ScratchArray<bool> direct(loop.members.size(), false);
  for (size_t m = 0; m < loop.members.size(); ++m) {
    const Member& member = loop.members[m];
    if (member.output < 0 || member.pointwise == nullptr) continue;
    const auto out = static_cast<size_t>(member.output);
    const size_t out_bytes = static_cast<size_t>(loop.count) * member.output_bytes;
    bool shared = false;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      shared = shared || Overlap(ctx.out(out), out_bytes, ctx.in(i), ctx.in_shape(i).ByteSize());
    }
    direct[m] = !shared;
  }
  // Threads take whole rows when the loop reduces; members run on this
  // thread's tiles only.
  const int64_t unit = loop.reducers.empty() ? 1 : loop.cols;
  return kernels::ParallelForStatus(
      loop.count / unit, loop.cost * unit, [&](int64_t begin, int64_t end) {
        kernels::ScratchArray<uint8_t> scratch(loop.scratch_bytes);
        return RunTiles(loop, ctx, std::span<const bool>(direct.data(), direct.size()),
                        begin * unit, end * unit, scratch.data());
      });
}

}  // namespace

RunFn LoopRunner(std::shared_ptr<const FusedLoop> loop) {
  return [loop = std::move(loop)](RunContext& ctx) { return RunFused(*loop, ctx); };
}

}  // namespace fusion_internal
}  // namespace kiln::compiler
