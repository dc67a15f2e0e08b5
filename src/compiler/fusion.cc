// Fusion of elementwise chains: each run of consecutive nodes that compute
// their output element for element (Pointwise maps) or read it from another
// array (Pointwise reads: broadcast, transpose, slice, reverse) over the same
// number of elements becomes one node. That node splits the elements across
// threads and, for each tile of kTile elements, runs the members' kernels on
// the tile in order, keeping every member's result in a small per-thread
// buffer; values used outside the run are copied out at the end of each
// tile. A chain of ten ops then reads its inputs and writes its results once
// instead of streaming ten arrays through memory, and the values only the
// chain uses get no memory in the plan.
//
// A reduction over trailing dimensions (RowReduction) right after a run
// that computes its operand joins the run: each tile's values are folded
// into their rows' results while still in cache, and the operand itself is
// never written out (layernorm's variance, softmax's denominator). Before
// runs are formed, pointwise nodes move down to just before their first
// user, so that what a later run needs is computed there rather than
// materialized early, and small computations between them do not split
// runs.
#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <memory>
#include <queue>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/small_vector.h"
#include "compiler/executor.h"
#include "compiler/graph.h"
#include "compiler/fused_loop.h"
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

// Where the tile at `start` finds `operand`.
const void* OperandTile(const FusedLoop& loop, const Operand& operand, RunContext& ctx,
                        std::span<const bool> direct, int64_t start, uint8_t* scratch) {
  switch (operand.from) {
    case Operand::From::kMember:
      return TileOf(loop.members[operand.index], ctx, direct, operand.index, start, scratch);
    case Operand::From::kSplat:
      return loop.splats[operand.index].data();
    case Operand::From::kInput:
      break;
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
    in_place[m] = loop.read_in_place[m] ? ReadRun(*member.pointwise, source, start, n, 1)
                                        : nullptr;
    if (in_place[m] != nullptr) continue;
    ReadTile(*member.pointwise, source, start, n, TileOf(member, ctx, direct, m, start, scratch));
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
      member.tile_f32(in.data(), reinterpret_cast<float*>(TileOf(
                                     member, ctx, direct, stage.tile_member, start, scratch)),
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

Status RunTiles(const FusedLoop& loop, RunContext& ctx, std::span<const bool> direct,
                int64_t begin, int64_t end, uint8_t* scratch) {
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
      KILN_RETURN_IF_ERROR(
          RunStages(loop, ctx, direct, start, n, scratch, sources.data(), in_place.data()));
    }
    for (size_t m = 0; loop.stages.empty() && m < loop.members.size(); ++m) {
      const Member& member = loop.members[m];
      if (member.pointwise == nullptr) continue;  // a splat
      uint8_t* out = TileOf(member, ctx, direct, m, start, scratch);
      const Pointwise& pointwise = *member.pointwise;
      if (pointwise.kind == Pointwise::Kind::kRead) {
        ReadTile(pointwise, static_cast<const uint8_t*>(ctx.in(member.operands[0].index)), start,
                 n, out);
        continue;
      }
      in.resize(0);
      if (member.tile_f32 != nullptr) {
        const float* operands[4];
        for (size_t k = 0; k < member.operands.size(); ++k) {
          operands[k] = static_cast<const float*>(OperandTile(loop, member.operands[k], ctx, direct, start, scratch));
        }
        member.tile_f32(operands, reinterpret_cast<float*>(out), n);
        continue;
      }
      for (const Operand& operand : member.operands) {
        in.push_back(OperandTile(loop, operand, ctx, direct, start, scratch));
      }
      Status status = pointwise.map(std::span<const void* const>(in.data(), in.size()), out, n);
      if (!status.ok()) {
        return Status(status.code(), StrCat(member.location, ": ", member.op, ": ",
                                            status.message()));
      }
    }
    for (const uint32_t m : copied) {
      const Member& member = loop.members[m];
      const uint8_t* from = member.pointwise == nullptr
                                ? loop.splats[member.slot_offset].data()
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

// A tile of kTile copies of the element at `element`.
std::vector<uint8_t> Splat(const uint8_t* element, size_t bytes) {
  std::vector<uint8_t> tile(static_cast<size_t>(kTile) * bytes);
  for (size_t offset = 0; offset < tile.size(); offset += bytes) {
    std::memcpy(tile.data() + offset, element, bytes);
  }
  return tile;
}

// Whether every element of `data` has the same bytes.
bool Uniform(const std::vector<uint8_t>& data, size_t bytes) {
  if (data.size() < bytes || bytes == 0) return false;
  for (size_t offset = bytes; offset < data.size(); offset += bytes) {
    if (std::memcmp(data.data() + offset, data.data(), bytes) != 0) return false;
  }
  return true;
}

// Whether a map member runs as a stage of its own (a transcendental op).
bool RunsAlone(const Member& member) {
  const Pointwise::F32& f32 = member.pointwise->f32;
  if (f32.kind != Pointwise::F32::Kind::kUnary ||
      kernels::LoopJitInlines(static_cast<kernels::UnaryOp>(f32.op))) {
    return false;
  }
  switch (static_cast<kernels::UnaryOp>(f32.op)) {
    case kernels::UnaryOp::kExponential: case kernels::UnaryOp::kLog:
    case kernels::UnaryOp::kTanh: case kernels::UnaryOp::kLogistic:
    case kernels::UnaryOp::kLogPlusOne: case kernels::UnaryOp::kExponentialMinusOne:
    case kernels::UnaryOp::kSine: case kernels::UnaryOp::kCosine:
      return true;
    default:
      return false;
  }
}

// The code of one stage for the map members [first, last) (none runs
// alone), reading the reads marked in `scalar` one element per tile, into
// `stage` (its inputs and outputs too); false when it cannot be generated.
bool BuildStage(const FusedLoop& loop, size_t first, size_t last,
                const std::vector<size_t>& last_user, const std::vector<bool>& kept,
                const std::vector<bool>& scalar, FusedLoop::Stage& stage) {
  stage.inputs.clear();
  stage.outputs.clear();
  std::vector<kernels::LoopStep> steps;
  std::unordered_map<size_t, int> value_of, load_of_input, load_of_member, splat_of;
  const auto add = [&](kernels::LoopStep step) {
    steps.push_back(step);
    return static_cast<int>(steps.size()) - 1;
  };
  const auto load = [&](std::unordered_map<size_t, int>& loads, bool member, size_t index) {
    if (auto it = loads.find(index); it != loads.end()) return it->second;
    kernels::LoopStep step;
    step.kind = member && scalar[index] ? kernels::LoopStep::Kind::kLoadScalar
                                        : kernels::LoopStep::Kind::kLoad;
    step.slot = static_cast<int32_t>(stage.inputs.size());
    stage.inputs.push_back({member, index});
    return loads[index] = add(step);
  };
  const auto value = [&](const Operand& operand) -> int {
    switch (operand.from) {
      case Operand::From::kInput:
        if (loop.input_bytes[operand.index] != sizeof(float)) return -1;
        return load(load_of_input, false, operand.index);
      case Operand::From::kMember:
        if (auto it = value_of.find(operand.index); it != value_of.end()) return it->second;
        // A read, or a map of an earlier stage: its tile.
        return load(load_of_member, true, operand.index);
      case Operand::From::kSplat: {
        if (auto it = splat_of.find(operand.index); it != splat_of.end()) return it->second;
        kernels::LoopStep step;
        step.kind = kernels::LoopStep::Kind::kSplat;
        std::memcpy(&step.constant, loop.splats[operand.index].data(), sizeof(float));
        return splat_of[operand.index] = add(step);
      }
    }
    return -1;
  };
  for (size_t m = first; m < last; ++m) {
    const Member& member = loop.members[m];
    if (member.pointwise == nullptr || member.pointwise->kind == Pointwise::Kind::kRead) continue;
    const Pointwise::F32& f32 = member.pointwise->f32;
    const bool unary = f32.kind == Pointwise::F32::Kind::kUnary;
    if (unary ? !kernels::LoopJitSupports(static_cast<kernels::UnaryOp>(f32.op))
              : !kernels::LoopJitSupports(static_cast<kernels::BinaryOp>(f32.op))) {
      return false;
    }
    kernels::LoopStep step;
    step.kind = unary ? kernels::LoopStep::Kind::kUnary : kernels::LoopStep::Kind::kBinary;
    step.op = f32.op;
    step.a = value(member.operands[0]);
    step.b = unary ? -1 : value(member.operands[1]);
    if (step.a < 0 || (!unary && step.b < 0)) return false;
    value_of[m] = add(step);
    if (kept[m] || last_user[m] >= last) {  // needed outside this stage
      kernels::LoopStep store;
      store.kind = kernels::LoopStep::Kind::kStore;
      store.a = value_of[m];
      store.slot = static_cast<int32_t>(stage.outputs.size());
      stage.outputs.push_back(m);
      add(store);
    }
  }
  if (value_of.empty()) return true;  // only reads: nothing to compute
  stage.code = kernels::CompileLoop(steps, static_cast<int>(stage.inputs.size()),
                                    static_cast<int>(stage.outputs.size()));
  return stage.code != nullptr;
}

// Adds the stage of generated code for the map members [first, last): code
// reading every read as a tile, and when the stage reads one that can be
// uniform over a tile (`uniform`), a second code for the tiles where they
// all are, reading one element of each.
bool AddCodeStage(FusedLoop& loop, size_t first, size_t last, const std::vector<size_t>& last_user,
                  const std::vector<bool>& kept, const std::vector<bool>& uniform) {
  FusedLoop::Stage stage;
  if (!BuildStage(loop, first, last, last_user, kept, std::vector<bool>(loop.members.size(), false),
                  stage)) {
    return false;
  }
  if (stage.code == nullptr) return true;  // only reads
  const bool reads_uniform = std::any_of(
      stage.inputs.begin(), stage.inputs.end(),
      [&](const FusedLoop::CodeArray& array) { return array.member && uniform[array.index]; });
  if (reads_uniform) {
    FusedLoop::Stage scalar;
    if (BuildStage(loop, first, last, last_user, kept, uniform, scalar)) {
      stage.uniform_code = std::move(scalar.code);
      stage.uniform_inputs = std::move(scalar.inputs);
    }
  }
  loop.stages.push_back(std::move(stage));
  return true;
}

// Gives `loop` stages of generated code when every map is an f32 op with a
// tile kernel and the generator has the ones not run alone
// (kernels/loop_jit.h); else the loop keeps its tile kernels throughout.
void GenerateCode(FusedLoop& loop) {
  const size_t count = loop.members.size();
  std::vector<bool> kept(count, false);  // an output or reduced
  for (const Reducer& reducer : loop.reducers) kept[reducer.member] = true;
  std::vector<size_t> last_user(count, 0);
  for (size_t m = 0; m < count; ++m) {
    const Member& member = loop.members[m];
    kept[m] = kept[m] || member.output >= 0;
    if (member.pointwise == nullptr) continue;
    for (const Operand& operand : member.operands) {
      if (operand.from == Operand::From::kMember) last_user[operand.index] = m;
    }
    if (member.pointwise->kind == Pointwise::Kind::kMap &&
        (member.pointwise->f32.kind == Pointwise::F32::Kind::kNone ||
         member.output_bytes != sizeof(float))) {
      return;
    }
  }
  loop.read_in_place.assign(count, false);
  loop.uniform.assign(count, false);
  std::vector<bool> used_alone(count, false);
  for (size_t m = 0; m < count; ++m) {
    const Member& member = loop.members[m];
    if (member.pointwise == nullptr || member.pointwise->kind != Pointwise::Kind::kMap ||
        !RunsAlone(member)) {
      continue;
    }
    for (const Operand& operand : member.operands) {
      if (operand.from == Operand::From::kMember) used_alone[operand.index] = true;
    }
  }
  for (size_t m = 0; m < count; ++m) {
    const Member& member = loop.members[m];
    if (member.pointwise == nullptr || member.pointwise->kind != Pointwise::Kind::kRead) continue;
    const Pointwise& read = *member.pointwise;
    loop.read_in_place[m] = !kept[m];
    loop.uniform[m] = !kept[m] && !used_alone[m] && !read.dims.empty() &&
                      read.strides.back() == 0 && read.element_bytes == sizeof(float);
  }
  size_t first = 0;
  for (size_t m = 0; m <= count; ++m) {
    const bool alone = m < count && loop.members[m].pointwise != nullptr &&
                       loop.members[m].pointwise->kind == Pointwise::Kind::kMap &&
                       RunsAlone(loop.members[m]);
    if (m < count && !alone) continue;
    if (!AddCodeStage(loop, first, m, last_user, kept, loop.uniform)) {
      loop.stages.clear();
      return;
    }
    if (alone) {
      FusedLoop::Stage stage;
      stage.tile_member = m;
      loop.stages.push_back(std::move(stage));
    }
    first = m + 1;
  }
  // Only transcendental maps: the tile kernels alone do the same.
  if (std::none_of(loop.stages.begin(), loop.stages.end(),
                   [](const FusedLoop::Stage& stage) { return stage.code != nullptr; })) {
    loop.stages.clear();
    return;
  }
  // Tiles skip filling the uniform reads only if every stage reading one
  // has code that reads them so (a stage whose second code could not be
  // generated reads their tiles).
  const bool all_have_uniform_code = std::all_of(
      loop.stages.begin(), loop.stages.end(), [&](const FusedLoop::Stage& stage) {
        return stage.code == nullptr || stage.uniform_code != nullptr ||
               std::none_of(stage.inputs.begin(), stage.inputs.end(),
                            [&](const FusedLoop::CodeArray& array) {
                              return array.member && loop.uniform[array.index];
                            });
      });
  if (!all_have_uniform_code) {
    loop.uniform.assign(count, false);
    for (FusedLoop::Stage& stage : loop.stages) {
      stage.uniform_code.reset();
      stage.uniform_inputs.clear();
    }
  }
  for (size_t m = 0; m < count; ++m) {
    if (loop.uniform[m]) loop.uniform_reads.push_back(static_cast<uint32_t>(m));
  }
}

// Builds the fused node of `run` (indexes of graph.nodes, in order) and
// sets `built` to its loop.
Node Fuse(const Graph& graph, const std::vector<size_t>& run,
          const std::vector<std::vector<size_t>>& users, const std::vector<bool>& is_result,
          std::shared_ptr<const FusedLoop>& built) {
  auto loop = std::make_shared<FusedLoop>();
  Node fused;
  fused.op = std::string(kFusionOp);
  fused.location = graph.nodes[run.front()].location;
  std::unordered_map<ValueId, size_t> member_of;  // value -> member producing it
  std::unordered_map<ValueId, size_t> input_of;   // value -> fused input index
  const size_t first = run.front(), last = run.back();
  for (size_t n : run) {
    const Node& node = graph.nodes[n];
    if (node.row_reduction != nullptr) {  // the run's last node: folds a member's values
      const RowReduction& row = *node.row_reduction;
      const size_t bytes = GetElementTypeInfo(row.type).storage_bytes;
      auto [init, added] = input_of.emplace(node.inputs[1], fused.inputs.size());
      if (added) {
        fused.inputs.push_back(node.inputs[1]);
        loop->input_bytes.push_back(bytes);
        fused.inputs_read_pointwise.push_back(false);
      }
      fused.inputs_read_pointwise[init->second] = false;
      loop->reducers.push_back({member_of.at(node.inputs[0]), row.op, row.type, bytes,
                                fused.outputs.size(), init->second});
      fused.outputs.push_back(node.outputs[0]);
      loop->cols = row.cols;
      loop->cost += 1;
      continue;
    }
    Member member;
    member.pointwise = node.pointwise;
    member.location = node.location;
    member.op = node.op;
    const ValueId output = node.outputs[0];
    member.output_bytes = GetElementTypeInfo(graph.shape(output).element_type).storage_bytes;
    const bool read = node.pointwise->kind == Pointwise::Kind::kRead;
    // A constant element broadcast: a splat tile made now.
    if (read && graph.values[static_cast<size_t>(node.inputs[0])].constant &&
        std::all_of(node.pointwise->strides.begin(), node.pointwise->strides.end(),
                    [](int64_t stride) { return stride == 0; })) {
      const auto& data = *graph.values[static_cast<size_t>(node.inputs[0])].constant;
      member.pointwise = nullptr;
      member.slot_offset = loop->splats.size();
      loop->splats.push_back(
          Splat(data.data() + node.pointwise->base * static_cast<int64_t>(member.output_bytes),
                member.output_bytes));
    }
    for (ValueId value : member.pointwise == nullptr ? std::vector<ValueId>{} : node.inputs) {
      if (auto it = member_of.find(value); it != member_of.end()) {
        const Member& producer = loop->members[it->second];
        if (producer.pointwise == nullptr) {
          member.operands.push_back({Operand::From::kSplat, producer.slot_offset});
        } else {
          member.operands.push_back({Operand::From::kMember, it->second});
        }
        continue;
      }
      // A constant of one repeated element: a splat tile too.
      if (const auto& data = graph.values[static_cast<size_t>(value)].constant;
          !read && data && Uniform(*data, GetElementTypeInfo(graph.shape(value).element_type)
                                              .storage_bytes)) {
        member.operands.push_back({Operand::From::kSplat, loop->splats.size()});
        loop->splats.push_back(
            Splat(data->data(), GetElementTypeInfo(graph.shape(value).element_type).storage_bytes));
        continue;
      }
      auto [it, added] = input_of.emplace(value, fused.inputs.size());
      if (added) {
        fused.inputs.push_back(value);
        loop->input_bytes.push_back(
            GetElementTypeInfo(graph.shape(value).element_type).storage_bytes);
        fused.inputs_read_pointwise.push_back(true);
      }
      if (read) fused.inputs_read_pointwise[it->second] = false;
      member.operands.push_back({Operand::From::kInput, it->second});
    }
    // Needed outside the run: by a later node, or as a result.
    bool escapes = is_result[static_cast<size_t>(output)];
    for (size_t user : users[static_cast<size_t>(output)]) {
      escapes = escapes || user < first || user > last;
    }
    if (escapes) {
      member.output = static_cast<int64_t>(fused.outputs.size());
      fused.outputs.push_back(output);
    }
    if (member.pointwise != nullptr) loop->cost += read ? 1 : 4;
    member_of.emplace(output, loop->members.size());
    loop->members.push_back(std::move(member));
  }
  loop->count = Elements(graph, graph.nodes[first].outputs[0]);
  for (size_t m = 0; m < loop->members.size(); ++m) {
    const auto& pointwise = loop->members[m].pointwise;
    if (pointwise != nullptr && pointwise->kind == Pointwise::Kind::kRead) {
      loop->reads.push_back(static_cast<uint32_t>(m));
    }
  }
  // Small tiles when every map has a tile kernel; a reducing loop's tiles
  // hold whole rows when a row fits in one, and a row of up to kRowTile
  // elements is one tile: each row then folds in one call, with one
  // horizontal sum, rather than in pieces (softmax over rows of 1024: the
  // plan's time went from 1.08 to 0.97 ms, layer norm's from 5.27 to 4.73,
  // means of four alternating runs each).
  const bool small = std::all_of(loop->members.begin(), loop->members.end(), [](const Member& m) {
    return m.pointwise == nullptr || m.pointwise->kind == Pointwise::Kind::kRead ||
           m.pointwise->f32.tile != nullptr;
  });
  int64_t tile = small ? kSmallTile : kTile;
  if (small && loop->cols > tile && loop->cols <= kRowTile) tile = loop->cols;
  loop->tile = loop->cols > 0 && loop->cols <= tile ? tile / loop->cols * loop->cols : tile;
  for (Member& member : loop->members) {
    if (member.pointwise == nullptr) continue;
    if (small) member.tile_f32 = member.pointwise->f32.tile;
    member.slot_offset = loop->scratch_bytes;
    loop->scratch_bytes += (static_cast<size_t>(loop->tile) * member.output_bytes + 63) / 64 * 64;
  }
  if (small) GenerateCode(*loop);
  for (size_t n : run) {
    const std::string& op = graph.nodes[n].op;
    if (!fused.detail.empty()) fused.detail += graph.nodes[n].row_reduction ? " => " : ", ";
    fused.detail += op.starts_with("stablehlo.") ? op.substr(10) : op;
  }
  if (!loop->stages.empty()) fused.detail += " (generated code)";
  fused.run = [loop](RunContext& ctx) { return RunFused(*loop, ctx); };
  built = loop;
  return fused;
}

// Whether node `n` can join a run whose members produce `produced` and
// whose outputs have `count` elements.
bool Joins(const Graph& graph, const Node& node, int64_t count,
           const std::unordered_map<ValueId, bool>& produced) {
  if (Elements(graph, node.outputs[0]) != count) return false;
  if (node.pointwise->kind == Pointwise::Kind::kRead) {
    // A read walks its whole source, which must be in memory already.
    return !produced.contains(node.inputs[0]);
  }
  return true;
}

bool Fusible(const Node& node) {
  return node.pointwise != nullptr && node.outputs.size() == 1 && node.regions.empty() &&
         !node.has_side_effects && !node.output_aliases_input;
}

// Whether the row reduction `node` can end a run whose members produce
// `produced` over `count` elements: the run computes its operand (not its
// init), and there are enough rows to share among threads.
bool Absorbs(const Node& node, int64_t count, const std::unordered_map<ValueId, bool>& produced) {
  if (node.row_reduction == nullptr || node.inputs.size() != 2 || node.has_side_effects) {
    return false;
  }
  const RowReduction& row = *node.row_reduction;
  return produced.contains(node.inputs[0]) && !produced.contains(node.inputs[1]) &&
         row.rows * row.cols == count && row.rows >= 8 && row.cols >= 2;
}

// Moves each pointwise node that does not shrink its inputs down to just
// before its first user. A kept node's slot is its own index; a moved
// node's is its earliest user's slot. Each kept node is preceded by the
// nodes moved to its slot, in an order that respects their dependencies and
// otherwise takes smaller arrays first: in a layer norm, the per-row
// statistics (a few elements) are computed before the chain over the whole
// matrix that broadcasts them, so that chain is one run. The original order
// is topological, so the new one is too; side effects and every kept node
// keep their order.
void SinkPointwise(Graph& graph) {
  const size_t count = graph.nodes.size();
  const auto end = static_cast<int64_t>(count);
  std::vector<int64_t> first_user(graph.values.size(), end);
  std::vector<int64_t> slot(count);
  std::vector<bool> moved(count, false);
  for (size_t n = count; n-- > 0;) {
    const Node& node = graph.nodes[n];
    bool sinks = Fusible(node);
    for (ValueId in : node.inputs) {
      sinks = sinks && Elements(graph, in) <= Elements(graph, node.outputs[0]);
    }
    // A result nobody reads stays: moving it to the end would only keep its
    // inputs alive longer (and a loop body's carry read after its update
    // could no longer be updated in place).
    sinks = sinks && first_user[static_cast<size_t>(node.outputs[0])] < end;
    moved[n] = sinks;
    slot[n] = sinks ? first_user[static_cast<size_t>(node.outputs[0])] : static_cast<int64_t>(n);
    for (ValueId in : node.inputs) {
      int64_t& user = first_user[static_cast<size_t>(in)];
      user = std::min(user, slot[n]);
    }
  }
  if (std::none_of(moved.begin(), moved.end(), [](bool m) { return m; })) return;
  std::vector<std::vector<size_t>> groups(count);
  std::vector<size_t> producer(graph.values.size(), count);
  for (size_t n = 0; n < count; ++n) {
    if (moved[n]) groups[static_cast<size_t>(slot[n])].push_back(n);
    for (ValueId out : graph.nodes[n].outputs) producer[static_cast<size_t>(out)] = n;
  }
  std::vector<size_t> order;
  order.reserve(count);
  std::vector<size_t> waiting(count, 0);  // unplaced producers in the same group
  std::vector<std::vector<size_t>> consumers(count);  // in the same group
  using Ready = std::pair<int64_t, size_t>;          // (elements, node): smallest first
  std::priority_queue<Ready, std::vector<Ready>, std::greater<Ready>> ready;
  for (size_t s = 0; s < count; ++s) {
    for (size_t n : groups[s]) {
      for (ValueId in : graph.nodes[n].inputs) {
        const size_t p = producer[static_cast<size_t>(in)];
        if (p < count && moved[p] && slot[p] == slot[n]) {
          ++waiting[n];
          consumers[p].push_back(n);
        }
      }
    }
    for (size_t n : groups[s]) {
      if (waiting[n] == 0) ready.emplace(Elements(graph, graph.nodes[n].outputs[0]), n);
    }
    while (!ready.empty()) {
      const size_t n = ready.top().second;
      ready.pop();
      order.push_back(n);
      for (size_t c : consumers[n]) {
        if (--waiting[c] == 0) ready.emplace(Elements(graph, graph.nodes[c].outputs[0]), c);
      }
    }
    if (!moved[s]) order.push_back(s);
  }
  std::vector<Node> nodes;
  nodes.reserve(count);
  for (size_t n : order) nodes.push_back(std::move(graph.nodes[n]));
  graph.nodes = std::move(nodes);
}

}  // namespace

// FuseElementwise's work, then the row groups over its loops.
// The runs of consecutive nodes FuseRuns makes one fused loop each
// (indexes of graph.nodes, in order).
std::vector<std::vector<size_t>> FormRuns(const Graph& graph) {
  std::vector<std::vector<size_t>> runs;
  std::vector<size_t> current;
  std::unordered_map<ValueId, bool> produced;
  int64_t count = -1;
  // A run is worth fusing when it computes something: a run of reads alone
  // would only copy through the tiles.
  auto close = [&] {
    const bool computes = std::any_of(current.begin(), current.end(), [&](size_t n) {
      const auto& pointwise = graph.nodes[n].pointwise;
      return pointwise != nullptr && pointwise->kind == Pointwise::Kind::kMap;
    });
    if (current.size() >= 2 && computes) runs.push_back(current);
    current.clear();
    produced.clear();
  };
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const Node& node = graph.nodes[n];
    if (!Fusible(node)) {
      if (!current.empty() && Absorbs(node, count, produced)) current.push_back(n);
      close();
      continue;
    }
    if (current.empty() || !Joins(graph, node, count, produced)) {
      close();
      count = Elements(graph, node.outputs[0]);
    }
    if (count == 0) continue;  // nothing to compute
    current.push_back(n);
    produced.emplace(node.outputs[0], true);
  }
  close();
  return runs;
}

// Recomputes values of one run in the later runs that read them, instead of
// keeping them in memory in between: the gradient of a GELU reads four
// arrays its forward loop computed from one product (x, x^3, tanh(...)),
// each as large as the product. The values of a run that only later runs
// read, element for element, are recomputed there from the run's inputs
// (the members they depend on are cloned in front of each later run, which
// then fuses them) when the bytes they hold exceed the bytes of the inputs
// whose lives this lengthens; parameters and constants cost nothing. XLA
// duplicates cheap producers into their consumers the same way. Only for
// later runs past a node no row group can hold (a product, say): between
// runs a row group may join, a value stays in the group's blocks anyway.
// Returns whether it changed the graph.
bool RecomputeInLaterRuns(Graph& graph, const std::vector<std::vector<size_t>>& runs) {
  // At most this many members are recomputed for one value.
  constexpr size_t kMaxRecomputed = 32;
  const size_t count = graph.nodes.size();
  const size_t values = graph.values.size();
  std::vector<int64_t> run_of(count, -1);
  for (size_t r = 0; r < runs.size(); ++r) {
    for (size_t n : runs[r]) run_of[n] = static_cast<int64_t>(r);
  }
  std::vector<int64_t> producer(values, -1);
  std::vector<std::vector<size_t>> users(values);
  std::vector<int64_t> last_use(values, -1);
  for (size_t n = 0; n < count; ++n) {
    for (ValueId out : graph.nodes[n].outputs) producer[static_cast<size_t>(out)] = static_cast<int64_t>(n);
    for (ValueId in : graph.nodes[n].inputs) {
      users[static_cast<size_t>(in)].push_back(n);
      last_use[static_cast<size_t>(in)] = static_cast<int64_t>(n);
    }
  }
  for (ValueId result : graph.results) last_use[static_cast<size_t>(result)] = static_cast<int64_t>(count);
  // Per node, the last node before it that no row group can hold (neither
  // pointwise nor a row reduction: a product, a gather, ...), or -1.
  std::vector<int64_t> barrier_before(count, -1);
  for (size_t n = 1; n < count; ++n) {
    const Node& previous = graph.nodes[n - 1];
    barrier_before[n] = previous.pointwise == nullptr && previous.row_reduction == nullptr
                            ? static_cast<int64_t>(n - 1)
                            : barrier_before[n - 1];
  }
  // Whether clones of `elements` elements put in front of node `first` start
  // a run with it, rather than joining a run ending before it (which would
  // then write them to memory after all): the node before is no pointwise
  // node of that many elements.
  auto StartsARun = [&](size_t first, int64_t elements) {
    if (first == 0) return true;
    const Node& previous = graph.nodes[first - 1];
    return !Fusible(previous) || Elements(graph, previous.outputs[0]) != elements;
  };
  auto bytes = [&](ValueId v) { return static_cast<int64_t>(graph.values[static_cast<size_t>(v)].bytes); };

  // Per later run: the clones to insert in front of it, and the values they
  // replace there.
  std::vector<std::vector<Node>> clones(runs.size());
  std::vector<std::unordered_map<ValueId, ValueId>> renamed(runs.size());
  bool changed = false;
  for (size_t r = 0; r < runs.size(); ++r) {
    const std::vector<size_t>& run = runs[r];
    // The members of this run value v depends on (its own among them), in
    // node order; empty when one of them is not a pointwise member or there
    // are too many.
    auto cone = [&](ValueId v) {
      std::vector<size_t> members;
      std::vector<ValueId> pending{v};
      while (!pending.empty()) {
        const ValueId value = pending.back();
        pending.pop_back();
        // A clone made for an earlier run: not recomputed again.
        if (static_cast<size_t>(value) >= values) return std::vector<size_t>{};
        const int64_t n = producer[static_cast<size_t>(value)];
        if (n < 0 || run_of[static_cast<size_t>(n)] != static_cast<int64_t>(r)) continue;
        if (std::find(members.begin(), members.end(), static_cast<size_t>(n)) != members.end()) {
          continue;
        }
        if (graph.nodes[static_cast<size_t>(n)].pointwise == nullptr ||
            members.size() == kMaxRecomputed) {
          return std::vector<size_t>{};
        }
        members.push_back(static_cast<size_t>(n));
        for (ValueId in : graph.nodes[static_cast<size_t>(n)].inputs) pending.push_back(in);
      }
      std::sort(members.begin(), members.end());
      return members;
    };
    std::vector<ValueId> moved;
    std::vector<std::vector<size_t>> cones;  // per moved value
    std::vector<size_t> moved_members;       // union of the cones
    int64_t saved = 0, latest = -1;
    for (size_t n : run) {
      const Node& node = graph.nodes[n];
      if (node.pointwise == nullptr) continue;
      const ValueId v = node.outputs[0];
      bool later_only = !users[static_cast<size_t>(v)].empty();
      int64_t last = -1;
      for (size_t user : users[static_cast<size_t>(v)]) {
        const int64_t later = run_of[user];
        if (later == static_cast<int64_t>(r)) continue;
        const Node& reader = graph.nodes[user];
        // Past a barrier: else the two runs may share a row group, where v
        // never reaches memory (softmax's exp(x - max)), and recomputing
        // would only cost time.
        later_only = later_only && later > static_cast<int64_t>(r) && reader.pointwise != nullptr &&
                     reader.pointwise->kind == Pointwise::Kind::kMap &&
                     Elements(graph, reader.outputs[0]) == Elements(graph, v) &&
                     barrier_before[user] > static_cast<int64_t>(run.back()) &&
                     StartsARun(runs[static_cast<size_t>(later)].front(), Elements(graph, v));
        last = std::max<int64_t>(last, static_cast<int64_t>(user));
      }
      if (!later_only || last < 0 || last_use[static_cast<size_t>(v)] == static_cast<int64_t>(count)) {
        continue;
      }
      std::vector<size_t> members = cone(v);
      if (members.empty()) continue;
      moved.push_back(v);
      saved += bytes(v);
      latest = std::max(latest, last);
      for (size_t m : members) {
        if (std::find(moved_members.begin(), moved_members.end(), m) == moved_members.end()) {
          moved_members.push_back(m);
        }
      }
      cones.push_back(std::move(members));
    }
    if (moved.empty()) continue;
    // The run's inputs the recomputed members read: kept until the last
    // later run that reads them.
    int64_t lengthened = 0;
    std::vector<ValueId> inputs;
    for (size_t m : moved_members) {
      for (ValueId in : graph.nodes[m].inputs) {
        const int64_t n = producer[static_cast<size_t>(in)];
        if (n >= 0 && run_of[static_cast<size_t>(n)] == static_cast<int64_t>(r)) continue;
        if (std::find(inputs.begin(), inputs.end(), in) != inputs.end()) continue;
        inputs.push_back(in);
        if (n >= 0 && last_use[static_cast<size_t>(in)] < latest) lengthened += bytes(in);
      }
    }
    if (saved <= lengthened) continue;
    changed = true;
    for (size_t k = 0; k < moved.size(); ++k) {
      const ValueId v = moved[k];
      for (size_t user : users[static_cast<size_t>(v)]) {
        const int64_t later = run_of[user];
        if (later == static_cast<int64_t>(r)) continue;
        auto& names = renamed[static_cast<size_t>(later)];
        // Clone v's members in front of the later run (once per run); the
        // reader then reads the clone (only maps read moved values, never a
        // view, so no alias ever points at a clone).
        for (size_t m : cones[k]) {
          const ValueId old_value = graph.nodes[m].outputs[0];
          if (names.contains(old_value)) continue;
          Node copy = graph.nodes[m];
          for (ValueId& in : copy.inputs) {
            if (auto it = names.find(in); it != names.end()) in = it->second;
          }
          const ValueId fresh = graph.AddValue(graph.shape(old_value));
          copy.outputs = {fresh};
          names.emplace(old_value, fresh);
          clones[static_cast<size_t>(later)].push_back(std::move(copy));
        }
        const ValueId clone = names.find(v)->second;  // v's own member is in its cone
        for (ValueId& in : graph.nodes[user].inputs) {
          if (in == v) in = clone;
        }
      }
    }
  }
  if (!changed) return false;
  std::vector<size_t> first_of(count, runs.size());
  for (size_t r = 0; r < runs.size(); ++r) first_of[runs[r].front()] = r;
  std::vector<Node> nodes;
  nodes.reserve(count);
  for (size_t n = 0; n < count; ++n) {
    if (first_of[n] < runs.size()) {
      for (Node& copy : clones[first_of[n]]) nodes.push_back(std::move(copy));
    }
    nodes.push_back(std::move(graph.nodes[n]));
  }
  graph.nodes = std::move(nodes);
  return true;
}

void FuseRuns(Graph& graph) {
  SinkPointwise(graph);
  std::vector<std::vector<size_t>> runs = FormRuns(graph);
  if (RecomputeInLaterRuns(graph, runs)) {
    EliminateDeadNodes(graph);
    runs = FormRuns(graph);
  }
  const size_t values = graph.values.size();
  std::vector<std::vector<size_t>> users(values);
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (ValueId in : graph.nodes[n].inputs) users[static_cast<size_t>(in)].push_back(n);
  }
  std::vector<bool> is_result(values, false);
  for (ValueId result : graph.results) is_result[static_cast<size_t>(result)] = true;

  std::vector<Node> nodes;
  std::vector<std::shared_ptr<const FusedLoop>> loops;
  nodes.reserve(graph.nodes.size());
  size_t next_run = 0;
  for (size_t n = 0; n < graph.nodes.size();) {
    if (next_run < runs.size() && runs[next_run].front() == n) {
      loops.emplace_back();
      nodes.push_back(Fuse(graph, runs[next_run], users, is_result, loops.back()));
      n = runs[next_run].back() + 1;
      ++next_run;
      continue;
    }
    nodes.push_back(std::move(graph.nodes[n]));
    loops.emplace_back();
    ++n;
  }
  graph.nodes = std::move(nodes);
  GroupRows(graph, loops);
}

}  // namespace fusion_internal

void FuseElementwise(Graph& graph) { fusion_internal::FuseRuns(graph); }

}  // namespace kiln::compiler
