// The collectives: all_reduce, all_gather, reduce_scatter, all_to_all,
// collective_permute and collective_broadcast, with the spec's process
// groups. Each node works out its process group when it runs (from the
// run's replica and partition in the ExecutionEnv), meets the group's other
// members through the env's DeviceCollectives, and computes its own result
// from every member's operands: Kiln's devices share the host's memory, so a
// member reads its peers' operands in place and no data is staged. A
// collective is never folded nor removed (its result depends on the other
// devices, and they wait for it).
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <vector>

#include "base/small_vector.h"
#include "compiler/elementwise_ops.h"
#include "compiler/lowering.h"
#include "compiler/on_tiles.h"
#include "compiler/region_patterns.h"
#include "ir/printer.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"
#include "kernels/gather.h"

namespace kiln::compiler {
namespace {

// How a collective's id lists become process groups (the spec's
// cross_replica, cross_partition, cross_replica_and_partition and
// flattened_ids).
enum class Scope { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedIds };

struct Groups {
  Scope scope = Scope::kCrossReplica;
  // The id lists (-1 padding dropped); empty: one group of every id.
  std::vector<std::vector<int64_t>> lists;
  // The lists need not hold every process (collective_broadcast and
  // collective_reduce): a process in none gets an empty group.
  bool partial = false;
};

int64_t ChannelId(const ir::Operation& op) {
  ir::Attribute channel = op.GetAttr("channel_handle");
  return channel ? FieldInt(channel, "handle") : 0;
}

bool UsesGlobalDeviceIds(const ir::Operation& op) {
  ir::Attribute flag = op.GetAttr("use_global_device_ids");
  return flag.Is(ir::AttrKind::kUnit) || (flag.Is(ir::AttrKind::kBool) && flag->bool_value);
}

// replica_groups given as mesh axes (#stablehlo.replica_group_mesh_axes):
// the devices that differ only along the listed axes (or sub-axes) form a
// group, ordered by their coordinates along those axes, the first major.
StatusOr<std::vector<std::vector<int64_t>>> MeshAxesGroups(Lowering& lowering,
                                                           const ir::Attribute& groups) {
  ir::Attribute mesh_ref = groups.Get("mesh");
  ir::Attribute axes = groups.Get("axes");
  if (!mesh_ref.Is(ir::AttrKind::kSymbolRef) || mesh_ref->symbol_path.empty() ||
      !axes.Is(ir::AttrKind::kArray)) {
    return Unimplemented("replica_group_mesh_axes with an inline mesh");
  }
  const std::string& name = mesh_ref->symbol_path.back();
  const Spmd* spmd = lowering.spmd();
  auto found = spmd ? spmd->meshes.find(name) : MeshTable::const_iterator();
  if (spmd == nullptr || found == spmd->meshes.end()) {
    return InvalidArgument("replica_groups names mesh @", name, ", which the module lacks");
  }
  TensorSharding along;  // one "dimension" holding the listed axes
  along.mesh = found->second;
  along.dims.emplace_back();
  for (const ir::Attribute& ref : axes->elements) {
    ir::Attribute axis_name = ref.Get("name");
    if (!axis_name.Is(ir::AttrKind::kString) || along.mesh.WrittenSize(axis_name->text) < 0) {
      return InvalidArgument("replica_groups names an axis mesh @", name, " lacks");
    }
    AxisRef axis{axis_name->text, 1, 0};
    if (ir::Attribute info = ref.Get("sub_axis_info")) {
      axis.pre_size = FieldInt(info, "pre_size");
      axis.size = FieldInt(info, "size");
    }
    // Over a mesh refined by the program's sub-axes, the parts it spans.
    std::optional<std::vector<AxisRef>> parts = along.mesh.Resolve(axis);
    if (!parts) {
      return InvalidArgument("replica_groups names sub-axis \"", axis.name, "\":(", axis.pre_size,
                             ")", axis.size, ", which does not fit mesh @", name);
    }
    along.dims[0].insert(along.dims[0].end(), parts->begin(), parts->end());
  }
  return GroupsAlong(along.mesh, along.dims[0]);
}

// The [N, size] id lists of attribute `name` (replica_groups or
// source_target_pairs), rows without their -1 padding.
StatusOr<std::vector<std::vector<int64_t>>> IdLists(Lowering& lowering, const ir::Operation& op,
                                                    std::string_view name) {
  ir::Attribute attribute = op.GetAttr(name);
  if (attribute.Is(ir::AttrKind::kStruct) &&
      attribute->text == "stablehlo.replica_group_mesh_axes") {
    return MeshAxesGroups(lowering, attribute);
  }
  std::optional<std::vector<int64_t>> ids;
  if (attribute) ids = ir::IntegersOf(attribute);
  if (!ids || !attribute.Is(ir::AttrKind::kDenseElements)) {
    return Unimplemented(op.name(), ": ", name, " in a form other than a dense 2-d tensor of ids");
  }
  const std::vector<int64_t>& dims = attribute->type.dims();
  if (dims.size() != 2) {
    return InvalidArgument(op.name(), ": ", name, " must be a 2-d tensor");
  }
  std::vector<std::vector<int64_t>> lists;
  for (int64_t row = 0; row < dims[0]; ++row) {
    std::vector<int64_t> list;
    for (int64_t k = 0; k < dims[1]; ++k) {
      const int64_t id = (*ids)[static_cast<size_t>(row * dims[1] + k)];
      if (id >= 0) list.push_back(id);
    }
    if (!list.empty()) lists.push_back(std::move(list));
  }
  return lists;
}

// The process groups of a collective that reads replica_groups: all_gather,
// all_reduce and reduce_scatter choose among three scopes (`mixed`), the
// others between cross_replica and cross_partition by their channel.
StatusOr<Groups> ReadGroups(Lowering& lowering, const ir::Operation& op, bool mixed) {
  Groups groups;
  KILN_ASSIGN_OR_RETURN(groups.lists, IdLists(lowering, op, "replica_groups"));
  const bool channel = ChannelId(op) > 0;
  if (!mixed) {
    groups.scope = channel ? Scope::kCrossPartition : Scope::kCrossReplica;
  } else if (!channel) {
    groups.scope = Scope::kCrossReplica;
  } else {
    groups.scope = UsesGlobalDeviceIds(op) ? Scope::kFlattenedIds
                                           : Scope::kCrossReplicaAndPartition;
  }
  return groups;
}

// This run's process group (flattened ids, in the group's order) and its
// position in it; empty when the groups are partial and hold no list with
// this process.
Status GroupOf(const Groups& groups, const ExecutionEnv& env, SmallVector<int64_t>& group,
               size_t& rank) {
  const int64_t replicas = env.num_replicas;
  const int64_t partitions = env.num_partitions;
  const int64_t me = env.replica_id * partitions + env.partition_id;
  int64_t domain = replicas;
  int64_t mine = env.replica_id;
  const char* what = "replica";
  if (groups.scope == Scope::kCrossPartition) {
    domain = partitions;
    mine = env.partition_id;
    what = "partition";
  } else if (groups.scope == Scope::kFlattenedIds) {
    domain = replicas * partitions;
    mine = me;
    what = "flattened device";
  }
  // The list holding this process's id.
  SmallVector<int64_t> list;
  if (groups.lists.empty()) {
    for (int64_t id = 0; id < domain; ++id) list.push_back(id);
  } else {
    for (const std::vector<int64_t>& candidate : groups.lists) {
      for (int64_t id : candidate) {
        if (id >= domain) {
          return InvalidArgument("the groups name ", what, " id ", id, " but the program runs ",
                                 domain, " ", what, domain == 1 ? "" : "s", " (", replicas,
                                 " replicas x ", partitions, " partitions)");
        }
      }
      if (std::find(candidate.begin(), candidate.end(), mine) != candidate.end()) {
        list = SmallVector<int64_t>(candidate.begin(), candidate.end());
      }
    }
    if (list.empty()) {
      group.resize(0);
      if (groups.partial) return Status::Ok();
      return InvalidArgument("no group holds ", what, " ", mine, " (replica ", env.replica_id,
                             ", partition ", env.partition_id, ")");
    }
  }
  group.resize(0);
  switch (groups.scope) {
    case Scope::kCrossReplica:
      for (int64_t r : list) group.push_back(r * partitions + env.partition_id);
      break;
    case Scope::kCrossPartition:
      for (int64_t p : list) group.push_back(env.replica_id * partitions + p);
      break;
    case Scope::kCrossReplicaAndPartition:
      for (int64_t p = 0; p < partitions; ++p) {
        for (int64_t r : list) group.push_back(r * partitions + p);
      }
      break;
    case Scope::kFlattenedIds:
      for (int64_t id : list) group.push_back(id);
      break;
  }
  rank = static_cast<size_t>(std::find(group.begin(), group.end(), me) - group.begin());
  return Status::Ok();
}

using MeetFn = FunctionRef<Status(std::span<void* const> all, size_t rank, size_t size)>;

// Meets this run's group with `mine` published and runs `work` with every
// member's pointers; a group of one is this run alone.
// This run's group and its place in it, worked out once per run and shared
// by the transport's in-place paths and the meetings.
struct Membership {
  SmallVector<int64_t> group;
  size_t rank = 0;
};

StatusOr<Membership> MembershipOf(const Groups& groups, const ExecutionEnv& env) {
  Membership membership;
  KILN_RETURN_IF_ERROR(GroupOf(groups, env, membership.group, membership.rank));
  return membership;
}

// The description of a collective a backend may run in its own memory.
std::shared_ptr<const DeviceCollective> DeviceCollectiveOf(DeviceCollective::Kind kind,
                                                           kernels::ReduceOp op,
                                                           const Groups& groups) {
  auto collective = std::make_shared<DeviceCollective>();
  collective->kind = kind;
  collective->op = op;
  collective->membership =
      [groups](const ExecutionEnv& env) -> StatusOr<DeviceCollective::Membership> {
    DeviceCollective::Membership membership;
    SmallVector<int64_t> group;
    KILN_RETURN_IF_ERROR(GroupOf(groups, env, group, membership.rank));
    membership.group.assign(group.begin(), group.end());
    return membership;
  };
  return collective;
}

// Whether `node`, emitted for `op`, has one output per input and every
// dimension of input k before dims[k] has size 1: the members' blocks
// along it are consecutive bytes.
bool InBlocks(const Graph& graph, const Node& node, const ir::Operation& op,
              const std::vector<int64_t>& dims) {
  if (node.op != op.name() || node.outputs.size() != dims.size() ||
      node.inputs.size() < dims.size()) {
    return false;
  }
  for (size_t k = 0; k < dims.size(); ++k) {
    const Shape& in = graph.shape(node.inputs[k]);
    for (int64_t i = 0; i < dims[k] && i < static_cast<int64_t>(in.dims.size()); ++i) {
      if (in.dims[static_cast<size_t>(i)] != 1) return false;
    }
  }
  return true;
}

Status MeetGroup(RunContext& ctx, const Membership& membership, std::span<void* const> mine,
                 MeetFn work) {
  SmallVector<int64_t> bytes;
  for (size_t i = 0; i < mine.size(); ++i) bytes.push_back(ctx.in_shape(i).ByteSize());
  const SmallVector<int64_t>& group = membership.group;
  const size_t rank = membership.rank;
  if (group.size() <= 1) return work(mine, 0, group.size());
  if (ctx.env().collectives == nullptr) {
    return FailedPrecondition("the collective's group has ", group.size(),
                              " processes but this run has no peers (it was not launched on "
                              "the program's devices together)");
  }
  return ctx.env().collectives->Meet(group, mine, bytes, [&](std::span<void* const> all) {
    return work(all, rank, group.size());
  });
}

Status MeetGroup(RunContext& ctx, const Groups& groups, std::span<void* const> mine, MeetFn work) {
  KILN_ASSIGN_OR_RETURN(Membership membership, MembershipOf(groups, ctx.env()));
  return MeetGroup(ctx, membership, mine, work);
}

// The node's operands, as the pointers a member publishes.
SmallVector<void*> Operands(const RunContext& ctx, size_t count) {
  SmallVector<void*> pointers;
  for (size_t i = 0; i < count; ++i) pointers.push_back(const_cast<void*>(ctx.in(i)));
  return pointers;
}

// Where a reducing collective's result elements come from in each member's
// operand: `outer` runs of `run` contiguous elements, run o of the result at
// o * run and of an operand at o * stride + offset (all_reduce: one run of
// everything; reduce_scatter: this member's block of the scatter dimension).
struct Runs {
  int64_t outer = 1;
  int64_t run = 0;
  int64_t stride = 0;
  int64_t offset = 0;
};

struct alignas(16) Scalar {
  uint8_t bytes[16];
};

// Folds operand k of every member (in group order) into result k over
// `runs`: with the typed op when the body is recognized, else by running
// the body per element. The body reduces one operand at a time (it takes
// two scalars; a variadic all_reduce applies it to each operand).
Status ReduceMembers(RunContext& ctx, std::span<void* const> all, size_t size,
                     const std::vector<ElementType>& types,
                     const std::optional<kernels::ReduceOp>& fast, std::span<const Runs> runs) {
  const size_t count = types.size();
  auto operand = [&](size_t member, size_t k, int64_t element) {
    return static_cast<const uint8_t*>(all[member * count + k]) +
           element * static_cast<int64_t>(ElementBytes(types[k]));
  };
  if (fast) {
    for (size_t k = 0; k < count; ++k) {
      const int64_t bytes = static_cast<int64_t>(ElementBytes(types[k]));
      auto* out = static_cast<uint8_t*>(ctx.out(k));
      const Runs& r = runs[k];
      for (int64_t o = 0; o < r.outer; ++o) {
        uint8_t* dst = out + o * r.run * bytes;
        std::memcpy(dst, operand(0, k, o * r.stride + r.offset),
                    static_cast<size_t>(r.run * bytes));
        for (size_t m = 1; m < size; ++m) {
          KILN_RETURN_IF_ERROR(kernels::Binary(BinaryOf(*fast), types[k], dst,
                                               operand(m, k, o * r.stride + r.offset), dst, r.run));
        }
      }
    }
    return Status::Ok();
  }
  Scalar slots[2];
  const void* args[2];
  void* results[1];
  for (size_t k = 0; k < count; ++k) {
    const size_t bytes = ElementBytes(types[k]);
    const Runs& r = runs[k];
    for (int64_t o = 0; o < r.outer; ++o) {
      for (int64_t e = 0; e < r.run; ++e) {
        const int64_t at = o * r.stride + r.offset + e;
        int current = 0;
        std::memcpy(slots[0].bytes, operand(0, k, at), bytes);
        for (size_t m = 1; m < size; ++m) {
          args[0] = slots[current].bytes;
          args[1] = operand(m, k, at);
          results[0] = slots[1 - current].bytes;
          KILN_RETURN_IF_ERROR(ctx.RunRegion(0, args, results));
          current = 1 - current;
        }
        std::memcpy(static_cast<uint8_t*>(ctx.out(k)) +
                        (o * r.run + e) * static_cast<int64_t>(bytes),
                    slots[current].bytes, bytes);
      }
    }
  }
  return Status::Ok();
}

// A reducing collective's body: two scalars of the operands' element type
// (the one body reduces each operand). The types of the first `count`
// operands, and the typed op when the body is one recognized op.
struct ReducingBody {
  std::vector<ElementType> types;
  std::optional<kernels::ReduceOp> fast;
};

StatusOr<ReducingBody> ReadBody(Lowering& lowering, const ir::Operation& op, size_t count) {
  ReducingBody body;
  KILN_ASSIGN_OR_RETURN(std::vector<ElementType> first,
                        ReductionTypes(lowering, op, op.region(0), 1));
  for (size_t k = 0; k < count; ++k) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(k)));
    if (shape.element_type != first[0]) {
      return Unimplemented("operands of different element types (",
                           GetElementTypeInfo(first[0]).name, " and ",
                           GetElementTypeInfo(shape.element_type).name, ") for one body");
    }
    body.types.push_back(shape.element_type);
  }
  if (auto ops = FastOps(op.region(0), first)) body.fast = (*ops)[0];
  return body;
}

// The run's transport when it folds `body`'s op in place for the group (a
// ring between processes); null when the members meet instead.
DeviceCollectives* InPlaceReducer(RunContext& ctx, const Membership& membership,
                                  const ReducingBody& body) {
  DeviceCollectives* collectives = ctx.env().collectives;
  if (!body.fast || collectives == nullptr || membership.group.size() <= 1 ||
      !collectives->ReducesInPlace(membership.group, body.types[0], BinaryOf(*body.fast))) {
    return nullptr;
  }
  return collectives;
}

// all_reduce through the transport's own all-reduce; false when it has
// none for this group, op and type, and the members meet instead.
StatusOr<bool> ReduceInPlace(RunContext& ctx, const Membership& membership,
                             const ReducingBody& body, size_t count) {
  DeviceCollectives* collectives = InPlaceReducer(ctx, membership, body);
  if (collectives == nullptr) return false;
  for (size_t k = 0; k < count; ++k) {
    const Shape& shape = ctx.out_shape(k);
    if (ctx.out(k) != ctx.in(k)) std::memcpy(ctx.out(k), ctx.in(k), shape.ByteSize());
    KILN_RETURN_IF_ERROR(collectives->AllReduce(membership.group, body.types[k],
                                                BinaryOf(*body.fast), ctx.out(k),
                                                shape.NumElements()));
  }
  return true;
}

// From this size of (the first) result on, members of an in-memory
// all_reduce fold a slice each and then copy each other's slices (two
// meetings) rather than each folding everything: 16 MB over 4 devices
// read 4x the data per member the other way.
constexpr size_t kSplitReductionBytes = 128 << 10;

// From this size of a result on, an all_reduce may write it over its
// operand (folding in slices, whatever its size).
constexpr size_t kAliasedReductionBytes = 16 << 10;

// The [begin, end) elements of `total` that member `rank` of `size` folds.
std::pair<int64_t, int64_t> SliceOf(int64_t total, size_t rank, size_t size) {
  const auto members = static_cast<int64_t>(size);
  const auto r = static_cast<int64_t>(rank);
  return {total * r / members, total * (r + 1) / members};
}

// all_reduce with a recognized body in two meetings: each member folds its
// slice of every operand into its own result (starting from its own
// operand, so a result that shares the operand's memory is safe: peers read
// only their own slices of it), then copies the other slices from the
// members' results (each writes only slices it does not own, and reads
// only owners' slices).
Status ReduceInSlices(RunContext& ctx, const Membership& membership, const ReducingBody& body,
                      size_t count) {
  const kernels::BinaryOp op = BinaryOf(*body.fast);
  KILN_RETURN_IF_ERROR(MeetGroup(
      ctx, membership, Operands(ctx, count),
      [&](std::span<void* const> all, size_t rank, size_t size) -> Status {
        for (size_t k = 0; k < count; ++k) {
          const int64_t bytes = static_cast<int64_t>(ElementBytes(body.types[k]));
          const auto [begin, end] = SliceOf(ctx.out_shape(k).NumElements(), rank, size);
          auto* dst = static_cast<uint8_t*>(ctx.out(k)) + begin * bytes;
          if (size <= 1 || end == begin) {
            if (ctx.out(k) != ctx.in(k)) {
              std::memcpy(dst, static_cast<const uint8_t*>(ctx.in(k)) + begin * bytes,
                          static_cast<size_t>((end - begin) * bytes));
            }
            continue;
          }
          const uint8_t* first = static_cast<const uint8_t*>(all[rank * count + k]) + begin * bytes;
          bool started = false;
          for (size_t m = 0; m < size; ++m) {
            if (m == rank) continue;
            const auto* peer = static_cast<const uint8_t*>(all[m * count + k]) + begin * bytes;
            KILN_RETURN_IF_ERROR(kernels::Binary(op, body.types[k], started ? dst : first, peer,
                                                 dst, end - begin));
            started = true;
          }
        }
        return Status::Ok();
      }));
  SmallVector<void*> results;
  for (size_t k = 0; k < count; ++k) results.push_back(ctx.out(k));
  return MeetGroup(ctx, membership, results,
                   [&](std::span<void* const> all, size_t rank, size_t size) -> Status {
                     for (size_t k = 0; k < count; ++k) {
                       const int64_t bytes = static_cast<int64_t>(ElementBytes(body.types[k]));
                       for (size_t m = 0; m < size; ++m) {
                         if (m == rank) continue;
                         const auto [begin, end] = SliceOf(ctx.out_shape(k).NumElements(), m, size);
                         std::memcpy(static_cast<uint8_t*>(ctx.out(k)) + begin * bytes,
                                     static_cast<const uint8_t*>(all[m * count + k]) +
                                         begin * bytes,
                                     static_cast<size_t>((end - begin) * bytes));
                       }
                     }
                     return Status::Ok();
                   });
}

// all_reduce: every member's result is the fold of all members' operands.
Status LowerAllReduce(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  KILN_ASSIGN_OR_RETURN(Groups groups, ReadGroups(lowering, op, /*mixed=*/true));
  KILN_ASSIGN_OR_RETURN(ReducingBody body, ReadBody(lowering, op, count));
  KILN_RETURN_IF_ERROR(lowering.EmitWithRegions(
      op,
      [groups, body, count](RunContext& ctx) -> Status {
        KILN_ASSIGN_OR_RETURN(Membership membership, MembershipOf(groups, ctx.env()));
        KILN_ASSIGN_OR_RETURN(bool reduced, ReduceInPlace(ctx, membership, body, count));
        if (reduced) return Status::Ok();
        // A result written over its operand: only the folding in slices
        // reads peers' operands where they are not being written.
        bool aliased = false;
        for (size_t k = 0; k < count; ++k) aliased = aliased || ctx.out(k) == ctx.in(k);
        if (body.fast && (aliased || ctx.out_shape(0).ByteSize() >= kSplitReductionBytes)) {
          return ReduceInSlices(ctx, membership, body, count);
        }
        SmallVector<Runs> runs;
        for (size_t k = 0; k < count; ++k) {
          runs.push_back({1, ctx.out_shape(k).NumElements(), 0, 0});
        }
        return MeetGroup(ctx, membership, Operands(ctx, count),
                         [&](std::span<void* const> all, size_t, size_t size) {
                           return ReduceMembers(ctx, all, size, body.types, body.fast, runs);
                         });
      },
      /*foldable=*/false));
  // Results from kAliasedReductionBytes on may take their operands' memory
  // (a step's gradients are not held twice while they are summed).
  Node& node = lowering.graph().nodes.back();
  if (body.fast && node.op == op.name() && node.outputs.size() == count) {
    node.collective = DeviceCollectiveOf(DeviceCollective::Kind::kAllReduce, *body.fast, groups);
    node.output_over_input.assign(count, -1);
    for (size_t k = 0; k < count; ++k) {
      if (lowering.graph().values[static_cast<size_t>(node.outputs[k])].bytes >=
          kAliasedReductionBytes) {
        node.output_over_input[k] = static_cast<int32_t>(k);
      }
    }
  }
  return Status::Ok();
}

// reduce_scatter through the transport's all-reduce (see ReduceInPlace):
// the whole operand folded in a copy, of which this member keeps its
// block. A ring moves 2(n-1)/n of the operand per member where meeting
// gathers n-1 operands. False when the transport has none. Operand `k`
// along `dim` (a combined reduce_scatter has several).
StatusOr<bool> ScatterInPlace(RunContext& ctx, const Membership& membership,
                              const ReducingBody& body, size_t k, int64_t dim) {
  DeviceCollectives* collectives = InPlaceReducer(ctx, membership, body);
  if (collectives == nullptr) return false;
  const SmallVector<int64_t>& group = membership.group;
  const size_t rank = membership.rank;
  const kernels::BinaryOp op = BinaryOf(*body.fast);
  const Shape& in = ctx.in_shape(k);
  const auto d = static_cast<size_t>(dim);
  const int64_t chunk = ctx.out_shape(k).dims[d];
  if (in.dims[d] != chunk * static_cast<int64_t>(group.size())) return false;  // Meet says why
  int64_t outer = 1;
  int64_t after = static_cast<int64_t>(ElementBytes(in.element_type));
  for (size_t i = 0; i < d; ++i) outer *= in.dims[i];
  for (size_t i = d + 1; i < in.dims.size(); ++i) after *= in.dims[i];
  auto whole = std::make_unique_for_overwrite<uint8_t[]>(in.ByteSize());
  std::memcpy(whole.get(), ctx.in(k), in.ByteSize());
  // Members' blocks one after another: a ring reduce-scatter moves half
  // an all-reduce's data; otherwise the whole operand is all-reduced.
  if (outer == 1) {
    KILN_RETURN_IF_ERROR(collectives->ReduceScatter(group, in.element_type, op, whole.get(),
                                                    in.NumElements()));
  } else {
    KILN_RETURN_IF_ERROR(collectives->AllReduce(group, in.element_type, op, whole.get(),
                                                in.NumElements()));
  }
  for (int64_t o = 0; o < outer; ++o) {
    std::memcpy(static_cast<uint8_t*>(ctx.out(k)) + o * chunk * after,
                whole.get() + (o * in.dims[d] + static_cast<int64_t>(rank) * chunk) * after,
                static_cast<size_t>(chunk * after));
  }
  return true;
}

// The attribute a combined reduce_scatter (CombineCollectives) carries:
// each operand's scatter dimension.
constexpr std::string_view kScatterDimensions = "kiln.scatter_dimensions";

// reduce_scatter: the fold of all members' operands, of which each member
// keeps its block along scatter_dimension. Several operands (a combined
// reduce_scatter, each along its own dimension) meet once.
Status LowerReduceScatter(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Groups groups, ReadGroups(lowering, op, /*mixed=*/true));
  const size_t count = op.num_results();
  if (count == 0 || op.operands().size() != count) {
    return InvalidArgument("reduce_scatter of ", op.operands().size(), " operands and ", count,
                           " results");
  }
  KILN_ASSIGN_OR_RETURN(ReducingBody body, ReadBody(lowering, op, count));
  std::vector<int64_t> dims(count, IntAttr(op, "scatter_dimension", 0));
  if (std::optional<std::vector<int64_t>> each = ir::IntegersOf(op.GetAttr(kScatterDimensions))) {
    if (each->size() != count) return InvalidArgument("a scatter dimension per operand expected");
    dims = std::move(*each);
  }
  for (size_t k = 0; k < count; ++k) {
    KILN_ASSIGN_OR_RETURN(Shape in, lowering.ShapeOf(op.operand(k)));
    if (dims[k] < 0 || static_cast<size_t>(dims[k]) >= in.dims.size()) {
      return InvalidArgument("scatter_dimension ", dims[k], " of an operand of rank ",
                             in.dims.size());
    }
  }
  KILN_RETURN_IF_ERROR(lowering.EmitWithRegions(
      op,
      [groups, body, dims, count](RunContext& ctx) -> Status {
        KILN_ASSIGN_OR_RETURN(Membership membership, MembershipOf(groups, ctx.env()));
        // In place only when every operand is (a wrong size meets, which
        // says why).
        bool in_place = InPlaceReducer(ctx, membership, body) != nullptr;
        for (size_t k = 0; k < count && in_place; ++k) {
          const auto d = static_cast<size_t>(dims[k]);
          in_place = ctx.in_shape(k).dims[d] ==
                     ctx.out_shape(k).dims[d] * static_cast<int64_t>(membership.group.size());
        }
        for (size_t k = 0; k < count && in_place; ++k) {
          KILN_ASSIGN_OR_RETURN(bool scattered, ScatterInPlace(ctx, membership, body, k, dims[k]));
          if (!scattered) return Internal("a reduce_scatter scattered in part");
        }
        if (in_place) return Status::Ok();
        return MeetGroup(
            ctx, membership, Operands(ctx, count),
            [&](std::span<void* const> all, size_t rank, size_t size) -> Status {
              SmallVector<Runs> runs;
              for (size_t k = 0; k < count; ++k) {
                const Shape& in = ctx.in_shape(k);
                const auto d = static_cast<size_t>(dims[k]);
                if (in.dims[d] != ctx.out_shape(k).dims[d] * static_cast<int64_t>(size)) {
                  return InvalidArgument("scatter_dimension ", dims[k], " has size ", in.dims[d],
                                         " for a group of ", size, " processes and a result of ",
                                         ctx.out_shape(k).dims[d], ": expected ",
                                         ctx.out_shape(k).dims[d] * static_cast<int64_t>(size));
                }
                int64_t outer = 1;
                int64_t after = 1;
                for (size_t i = 0; i < d; ++i) outer *= in.dims[i];
                for (size_t i = d + 1; i < in.dims.size(); ++i) after *= in.dims[i];
                const int64_t chunk = ctx.out_shape(k).dims[d];
                runs.push_back({outer, chunk * after, in.dims[d] * after,
                                static_cast<int64_t>(rank) * chunk * after});
              }
              return ReduceMembers(ctx, all, size, body.types, body.fast, runs);
            });
      },
      /*foldable=*/false));
  // Scattered in consecutive blocks, a backend may fold them in its memory.
  Node& node = lowering.graph().nodes.back();
  if (body.fast && InBlocks(lowering.graph(), node, op, dims)) {
    node.collective = DeviceCollectiveOf(DeviceCollective::Kind::kReduceScatter, *body.fast,
                                         groups);
  }
  return Status::Ok();
}

// all_gather through the transport's own gather, straight into each
// result, when the members' operands lie one after another there (every
// dimension before all_gather_dim has size 1); false when it has none.
StatusOr<bool> GatherInPlace(RunContext& ctx, const Membership& membership, size_t count,
                             int64_t dim) {
  DeviceCollectives* collectives = ctx.env().collectives;
  const SmallVector<int64_t>& group = membership.group;
  if (collectives == nullptr || group.size() <= 1 || !collectives->GathersInPlace(group)) {
    return false;
  }
  for (size_t k = 0; k < count; ++k) {
    const Shape& in = ctx.in_shape(k);
    for (int64_t i = 0; i < dim; ++i) {
      if (in.dims[static_cast<size_t>(i)] != 1) return false;
    }
  }
  for (size_t k = 0; k < count; ++k) {
    const Shape& in = ctx.in_shape(k);
    if (ctx.out_shape(k).ByteSize() != in.ByteSize() * group.size()) return false;  // Meet says
  }
  for (size_t k = 0; k < count; ++k) {
    KILN_RETURN_IF_ERROR(collectives->AllGather(group, ctx.in(k),
                                                static_cast<int64_t>(ctx.in_shape(k).ByteSize()),
                                                ctx.out(k)));
  }
  return true;
}

// all_gather: each result is the members' operands concatenated along
// all_gather_dim, in group order.
Status LowerAllGather(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  KILN_ASSIGN_OR_RETURN(Groups groups, ReadGroups(lowering, op, /*mixed=*/true));
  const int64_t dim = IntAttr(op, "all_gather_dim", 0);
  KILN_RETURN_IF_ERROR(lowering.EmitWithRegions(
      op,
      [groups, count, dim](RunContext& ctx) -> Status {
        KILN_ASSIGN_OR_RETURN(Membership membership, MembershipOf(groups, ctx.env()));
        KILN_ASSIGN_OR_RETURN(bool gathered, GatherInPlace(ctx, membership, count, dim));
        if (gathered) return Status::Ok();
        return MeetGroup(ctx, membership, Operands(ctx, count),
                         [&](std::span<void* const> all, size_t, size_t size) -> Status {
                           const auto d = static_cast<size_t>(dim);
                           for (size_t k = 0; k < count; ++k) {
                             const Shape& in = ctx.in_shape(k);
                             const Shape& out = ctx.out_shape(k);
                             if (out.dims[d] != in.dims[d] * static_cast<int64_t>(size)) {
                               return InvalidArgument("all_gather_dim ", dim,
                                                      ": the result has size ", out.dims[d],
                                                      " but ", size, " processes of size ",
                                                      in.dims[d], " gather ",
                                                      in.dims[d] * static_cast<int64_t>(size));
                             }
                             const size_t bytes = ElementBytes(in.element_type);
                             SmallVector<int64_t> in_strides(in.dims.size()),
                                 out_strides(out.dims.size());
                             kernels::DenseStrides(in.dims, in_strides);
                             kernels::DenseStrides(out.dims, out_strides);
                             for (size_t m = 0; m < size; ++m) {
                               auto* dst = static_cast<uint8_t*>(ctx.out(k)) +
                                           static_cast<int64_t>(m) * in.dims[d] * out_strides[d] *
                                               static_cast<int64_t>(bytes);
                               kernels::CopyBox(bytes, in.dims, all[m * count + k], in_strides, dst,
                                                out_strides);
                             }
                           }
                           return Status::Ok();
                         });
      },
      /*foldable=*/false));
  // Gathered in consecutive blocks, a backend may copy them in its memory.
  Node& node = lowering.graph().nodes.back();
  if (InBlocks(lowering.graph(), node, op, std::vector<int64_t>(count, dim))) {
    node.collective = DeviceCollectiveOf(DeviceCollective::Kind::kAllGather,
                                         kernels::ReduceOp::kAdd, groups);
  }
  return Status::Ok();
}

// all_to_all: member r's result is, for each member s in group order, block
// r of s's operand along split_dimension, concatenated along
// concat_dimension.
Status LowerAllToAll(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  KILN_ASSIGN_OR_RETURN(Groups groups, ReadGroups(lowering, op, /*mixed=*/false));
  const int64_t split = IntAttr(op, "split_dimension", 0);
  const int64_t concat = IntAttr(op, "concat_dimension", 0);
  const int64_t split_count = IntAttr(op, "split_count", 1);
  return lowering.EmitWithRegions(
      op,
      [groups = std::move(groups), count, split, concat, split_count](RunContext& ctx) -> Status {
        return MeetGroup(ctx, groups, Operands(ctx, count),
                         [&](std::span<void* const> all, size_t rank, size_t size) -> Status {
                           if (static_cast<int64_t>(size) != split_count) {
                             return InvalidArgument("split_count is ", split_count,
                                                    " but the group has ", size, " processes");
                           }
                           const auto sd = static_cast<size_t>(split);
                           const auto cd = static_cast<size_t>(concat);
                           for (size_t k = 0; k < count; ++k) {
                             const Shape& in = ctx.in_shape(k);
                             const Shape& out = ctx.out_shape(k);
                             const size_t bytes = ElementBytes(in.element_type);
                             SmallVector<int64_t> box(in.dims.begin(), in.dims.end());
                             box[sd] = in.dims[sd] / split_count;
                             SmallVector<int64_t> in_strides(in.dims.size()),
                                 out_strides(out.dims.size());
                             kernels::DenseStrides(in.dims, in_strides);
                             kernels::DenseStrides(out.dims, out_strides);
                             const int64_t src_offset = static_cast<int64_t>(rank) * box[sd] *
                                                        in_strides[sd];
                             for (size_t s = 0; s < size; ++s) {
                               const auto* src = static_cast<const uint8_t*>(all[s * count + k]) +
                                                 src_offset * static_cast<int64_t>(bytes);
                               auto* dst = static_cast<uint8_t*>(ctx.out(k)) +
                                           static_cast<int64_t>(s) * box[cd] * out_strides[cd] *
                                               static_cast<int64_t>(bytes);
                               kernels::CopyBox(bytes, box, src, in_strides, dst, out_strides);
                             }
                           }
                           return Status::Ok();
                         });
      },
      /*foldable=*/false);
}

// collective_permute: every process of the replica (or partition) meets;
// a target receives its source's operand, the others zeros.
Status LowerCollectivePermute(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> pairs,
                        IdLists(lowering, op, "source_target_pairs"));
  Groups groups;
  groups.scope = ChannelId(op) > 0 ? Scope::kCrossPartition : Scope::kCrossReplica;
  return lowering.EmitWithRegions(
      op,
      [groups = std::move(groups), pairs = std::move(pairs)](RunContext& ctx) -> Status {
        return MeetGroup(ctx, groups, Operands(ctx, 1),
                         [&](std::span<void* const> all, size_t rank, size_t size) -> Status {
                           const int64_t bytes = ctx.out_shape(0).ByteSize();
                           for (const std::vector<int64_t>& pair : pairs) {
                             if (pair.size() != 2 || pair[0] >= static_cast<int64_t>(size) ||
                                 pair[1] >= static_cast<int64_t>(size)) {
                               return InvalidArgument(
                                   "source_target_pairs names an id outside the ", size,
                                   " processes of the group");
                             }
                           }
                           for (const std::vector<int64_t>& pair : pairs) {
                             if (pair[1] == static_cast<int64_t>(rank)) {
                               std::memcpy(ctx.out(0), all[static_cast<size_t>(pair[0])],
                                           static_cast<size_t>(bytes));
                               return Status::Ok();
                             }
                           }
                           std::memset(ctx.out(0), 0, static_cast<size_t>(bytes));
                           return Status::Ok();
                         });
      },
      /*foldable=*/false);
}

// The root of result k for collective_broadcast / collective_reduce: the
// group's first member, or with has_dynamic_root the member that the root
// operand (after the `count` data operands) names for result k.
StatusOr<size_t> RootOf(const RunContext& ctx, bool dynamic_root, size_t count, size_t k,
                        size_t size) {
  if (!dynamic_root) return size_t{0};
  const int64_t root = kernels::LoadIndex(ctx.in_shape(count).element_type, ctx.in(count),
                                          static_cast<int64_t>(k));
  if (root < 0 || root >= static_cast<int64_t>(size)) {
    return InvalidArgument("the root of result ", k, " is ", root, ", outside the group of ", size,
                           " processes");
  }
  return static_cast<size_t>(root);
}

bool HasDynamicRoot(const ir::Operation& op) {
  ir::Attribute flag = op.GetAttr("has_dynamic_root");
  return flag.Is(ir::AttrKind::kUnit) || (flag.Is(ir::AttrKind::kBool) && flag->bool_value);
}

// collective_broadcast: every member of a group receives its root's
// operands (the first member, or has_dynamic_root's choice); a process in
// no group gets zeros.
Status LowerCollectiveBroadcast(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  KILN_ASSIGN_OR_RETURN(Groups groups, ReadGroups(lowering, op, /*mixed=*/false));
  groups.partial = true;
  const bool dynamic_root = HasDynamicRoot(op);
  return lowering.EmitWithRegions(
      op,
      [groups = std::move(groups), count, dynamic_root](RunContext& ctx) -> Status {
        return MeetGroup(ctx, groups, Operands(ctx, count),
                         [&](std::span<void* const> all, size_t, size_t size) -> Status {
                           for (size_t k = 0; k < count; ++k) {
                             const auto bytes = static_cast<size_t>(ctx.out_shape(k).ByteSize());
                             if (size == 0) {
                               std::memset(ctx.out(k), 0, bytes);
                               continue;
                             }
                             KILN_ASSIGN_OR_RETURN(size_t root,
                                                   RootOf(ctx, dynamic_root, count, k, size));
                             std::memcpy(ctx.out(k), all[root * count + k], bytes);
                           }
                           return Status::Ok();
                         });
      },
      /*foldable=*/false);
}

// collective_reduce: all_reduce's fold, delivered to the group's root only;
// the other members (and processes in no group) get zeros.
Status LowerCollectiveReduce(Lowering& lowering, const ir::Operation& op) {
  const size_t count = op.num_results();
  KILN_ASSIGN_OR_RETURN(Groups groups, ReadGroups(lowering, op, /*mixed=*/true));
  groups.partial = true;
  KILN_ASSIGN_OR_RETURN(ReducingBody body, ReadBody(lowering, op, count));
  const bool dynamic_root = HasDynamicRoot(op);
  return lowering.EmitWithRegions(
      op,
      [groups = std::move(groups), body, count, dynamic_root](RunContext& ctx) -> Status {
        return MeetGroup(
            ctx, groups, Operands(ctx, count),
            [&](std::span<void* const> all, size_t rank, size_t size) -> Status {
              for (size_t k = 0; k < count; ++k) {
                size_t root = 0;
                if (size > 0) {
                  KILN_ASSIGN_OR_RETURN(root, RootOf(ctx, dynamic_root, count, k, size));
                }
                if (size == 0 || root != rank) {
                  std::memset(ctx.out(k), 0, static_cast<size_t>(ctx.out_shape(k).ByteSize()));
                  continue;
                }
                // Reduce only result k: the other results may have other roots.
                SmallVector<Runs> runs(count, Runs{1, 0, 0, 0});
                runs[k].run = ctx.out_shape(k).NumElements();
                KILN_RETURN_IF_ERROR(ReduceMembers(ctx, all, size, body.types, body.fast, runs));
              }
              return Status::Ok();
            });
      },
      /*foldable=*/false);
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kAllReduce, LowerAllReduce},
    {ir::OpCode::kReduceScatter, LowerReduceScatter},
    {ir::OpCode::kAllGather, LowerAllGather},
    {ir::OpCode::kAllToAll, LowerAllToAll},
    {ir::OpCode::kCollectivePermute, LowerCollectivePermute},
    {ir::OpCode::kCollectiveBroadcast, LowerCollectiveBroadcast},
    {ir::OpCode::kCollectiveReduce, LowerCollectiveReduce},
};

}  // namespace

// A collective over a shard_map's manual axes of a value its body holds
// split over automatic ones (a psum, all_gather, psum_scatter or
// all_to_all): when every group's members hold the same tile, each group
// runs the collective on its tiles and the result keeps the tiling; the
// dimensions an all_gather, reduce_scatter or all_to_all works along must
// be whole in it. False otherwise (the operand is gathered first).
StatusOr<bool> CollectiveOnTiles(Lowering& lowering, const ir::Operation& op) {
  const Lowering::Tiles* tiles = op.operands().size() == 1 ? lowering.HeldAsTiles(op.operand(0))
                                                           : nullptr;
  if (tiles == nullptr || op.num_results() != 1 || !tiles->sharding.unreduced.empty() ||
      lowering.spmd()->num_replicas != 1 ||
      tiles->sharding.mesh.num_devices() != lowering.spmd()->num_partitions) {
    return false;
  }
  const TensorSharding sharding = tiles->sharding;
  std::vector<int64_t> worked;
  switch (op.code()) {
    case ir::OpCode::kAllReduce: break;
    case ir::OpCode::kAllGather: worked = {IntAttr(op, "all_gather_dim", 0)}; break;
    case ir::OpCode::kReduceScatter: worked = {IntAttr(op, "scatter_dimension", 0)}; break;
    case ir::OpCode::kAllToAll:
      worked = {IntAttr(op, "split_dimension", 0), IntAttr(op, "concat_dimension", 0)};
      break;
    default: return false;
  }
  for (int64_t d : worked) {
    if (d < 0 || static_cast<size_t>(d) >= sharding.dims.size() ||
        !sharding.dims[static_cast<size_t>(d)].empty()) {
      return false;
    }
  }
  if (!op.GetAttr("replica_groups")) return false;
  // (all_to_all reads its scope from its channel alone, as LowerAllToAll.)
  KILN_ASSIGN_OR_RETURN(Groups groups,
                        ReadGroups(lowering, op, /*mixed=*/op.code() != ir::OpCode::kAllToAll));
  if (groups.lists.empty() ||
      (groups.scope != Scope::kFlattenedIds && groups.scope != Scope::kCrossPartition)) {
    return false;
  }
  KILN_ASSIGN_OR_RETURN(Shape global, lowering.ShapeOf(op.operand(0)));
  auto tile_index = [&](int64_t device) -> std::optional<std::vector<int64_t>> {
    std::optional<std::vector<int64_t>> coordinates = sharding.mesh.CoordinatesOf(device);
    if (!coordinates) return std::nullopt;
    std::vector<int64_t> index;
    for (size_t d = 0; d < sharding.dims.size(); ++d) {
      index.push_back(sharding.TileOf(d, *coordinates));
    }
    return index;
  };
  for (const std::vector<int64_t>& list : groups.lists) {
    const std::optional<std::vector<int64_t>> first = tile_index(list.front());
    for (int64_t device : list) {
      if (!first || tile_index(device) != first) return false;
    }
  }
  KILN_ASSIGN_OR_RETURN(Shape result, lowering.ShapeOf(op.result(0)));
  if (result.dims.size() != global.dims.size()) return false;
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> local, sharding.LocalDims(result.dims));
  KILN_ASSIGN_OR_RETURN(ir::Value * tile, on_tiles::TileOf(lowering, op, 0, sharding));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> reduced,
                        on_tiles::LowerRebuilt(lowering, op, op.name(), {tile},
                                               {on_tiles::LocalType(op.result(0)->type(),
                                                                    std::move(local))},
                                               {}, &op, /*regions=*/true));
  lowering.BindTiles(op.result(0), reduced[0], sharding);
  return true;
}

std::span<const LoweringRule> CollectiveLowerings() { return kRules; }

}  // namespace kiln::compiler

namespace kiln::compiler {
namespace {

// Combined all_reduces of at most this many bytes (as XLA's combiner caps
// its own).
constexpr size_t kMaxCombinedBytes = size_t{64} << 20;

// What collectives must share to become one: all_reduces and
// reduce_scatters their groups, channel and body, and the element type
// (one body folds every operand; a reduce_scatter's dimension may differ);
// gathers of tiles their groups. Each key starts with its kind.
std::string CombineKey(const Lowering& lowering, const Graph& graph, const Node& node) {
  if (node.inputs.size() != 1 || node.outputs.size() != 1 || !node.listing_chains.empty()) {
    return "";
  }
  if (std::string gather = GatherCombineKey(lowering, node); !gather.empty()) {
    return "gather|" + gather;
  }
  const bool reduce = node.op == "stablehlo.all_reduce";
  if ((!reduce && node.op != "stablehlo.reduce_scatter") || node.listing.size() != 1) return "";
  const ir::Operation& op = *node.listing[0];
  const std::string body = on_tiles::BinaryBodyOp(op);
  if (body.empty()) return "";
  std::string key = StrCat(reduce ? "all_reduce|" : "reduce_scatter|", body, "|",
                           GetElementTypeInfo(graph.shape(node.inputs[0]).element_type).name);
  for (const ir::NamedAttribute& attribute : op.attributes()) {
    if (attribute.name == "scatter_dimension") continue;
    key += StrCat("|", attribute.name, "=", ir::PrintAttribute(attribute.value));
  }
  return key;
}

// One node doing what the collectives `members` (of one key) do, in one
// meeting; its outputs are theirs.
StatusOr<Node> Combined(Lowering& lowering, const std::vector<size_t>& members) {
  Graph& graph = lowering.graph();
  const Node& front = graph.nodes[members[0]];
  if (front.op == "kiln.spmd_gather") {
    std::vector<const Node*> nodes;
    for (size_t m : members) nodes.push_back(&graph.nodes[m]);
    return CombinedGather(lowering, nodes);
  }
  // A variadic all_reduce, or a reduce_scatter of several operands (each
  // along its own dimension, kScatterDimensions), lowered by its rule.
  const bool scatter = front.op == "stablehlo.reduce_scatter";
  const ir::Operation& first = *front.listing[0];
  auto op = std::make_unique<ir::Operation>(front.op, first.location());
  std::vector<ValueId> results;
  std::vector<int64_t> dimensions;
  for (size_t m : members) {
    const Node& node = graph.nodes[m];
    const Shape& in = graph.shape(node.inputs[0]);
    op->AddOperand(lowering.StandIn(node.inputs[0],
                                    ir::Type::Tensor(ir::Type::Element(in.element_type), in.dims)));
    const Shape& out = graph.shape(node.outputs[0]);
    op->AddResult(ir::Type::Tensor(ir::Type::Element(out.element_type), out.dims));
    results.push_back(node.outputs[0]);
    dimensions.push_back(IntAttr(*node.listing[0], "scatter_dimension", 0));
  }
  on_tiles::CopyAttributes(first, *op);
  if (scatter)
    op->SetAttr(std::string(kScatterDimensions), ir::Attribute::DenseI64Array(dimensions));
  std::unordered_map<const ir::Value*, ir::Value*> copies;
  KILN_RETURN_IF_ERROR(on_tiles::CloneRegion(first.region(0), *op, copies));
  const size_t made = graph.nodes.size();
  // (A reduce_scatter of several operands is no StableHLO op: unverified.)
  KILN_RETURN_IF_ERROR(lowering.LowerAdopted(std::move(op), /*verify=*/!scatter).status());
  if (graph.nodes.size() != made + 1) {
    return Internal("combining collectives made ", graph.nodes.size() - made, " nodes");
  }
  Node node = std::move(graph.nodes.back());
  graph.nodes.pop_back();
  node.outputs = results;
  if (scatter) {
    // Listed as the reduce_scatters it does, one per operand.
    node.listing.clear();
    for (size_t m : members) node.listing.push_back(graph.nodes[m].listing[0]);
    node.listing_chains.assign(members.size(), 1);
  }
  return node;
}

// Whether a node's place among such nodes must stay: side effects other
// than collectives (those a partitioned program lists as themselves) and
// the SPMD nodes (every device orders its collectives by the same plan, so
// they may move).
bool KeepsItsOrder(const Node& node) {
  return node.has_side_effects && node.listing.empty() && !node.op.starts_with("kiln.spmd_");
}

}  // namespace

Status CombineCollectives(Lowering& lowering) {
  Graph& graph = lowering.graph();
  EliminateDeadNodes(graph);
  const size_t count = graph.nodes.size();
  std::vector<int64_t> producer(graph.values.size(), -1);
  for (size_t i = 0; i < count; ++i) {
    for (ValueId out : graph.nodes[i].outputs)
      producer[static_cast<size_t>(out)] = static_cast<int64_t>(i);
  }
  // The all_reduces that may combine, numbered; per node, the bit set of
  // those it depends on (through its inputs and the order of nodes whose
  // order matters).
  std::vector<std::string> keys(count);
  std::vector<int64_t> number(count, -1);
  size_t candidates = 0;
  for (size_t i = 0; i < count; ++i) {
    keys[i] = CombineKey(lowering, graph, graph.nodes[i]);
    if (!keys[i].empty()) number[i] = static_cast<int64_t>(candidates++);
  }
  if (candidates < 2) return Status::Ok();
  const size_t words = (candidates + 63) / 64;
  std::vector<uint64_t> depends(count * words, 0);
  std::vector<std::vector<size_t>> before(count);  // predecessors
  int64_t last_ordered = -1;
  for (size_t i = 0; i < count; ++i) {
    const Node& node = graph.nodes[i];
    for (ValueId in : node.inputs) {
      const int64_t p = producer[static_cast<size_t>(in)];
      if (p >= 0) before[i].push_back(static_cast<size_t>(p));
    }
    if (KeepsItsOrder(node)) {
      if (last_ordered >= 0) before[i].push_back(static_cast<size_t>(last_ordered));
      last_ordered = static_cast<int64_t>(i);
    }
    uint64_t* mine = &depends[i * words];
    for (size_t p : before[i]) {
      const uint64_t* theirs = &depends[p * words];
      for (size_t w = 0; w < words; ++w) mine[w] |= theirs[w];
      if (number[p] >= 0) {
        const auto n = static_cast<size_t>(number[p]);
        mine[n / 64] |= uint64_t{1} << (n % 64);
      }
    }
  }
  // Greedily, in order: an all_reduce joins the open group of its key
  // unless it depends on a member (or the group is full).
  struct Open {
    std::vector<size_t> members;
    size_t bytes = 0;
  };
  std::map<std::string, Open> open;
  std::vector<std::vector<size_t>> groups;
  auto close = [&](std::map<std::string, Open>::iterator it) {
    if (it->second.members.size() > 1) groups.push_back(std::move(it->second.members));
    open.erase(it);
  };
  for (size_t i = 0; i < count; ++i) {
    if (keys[i].empty()) continue;
    const size_t bytes = graph.values[static_cast<size_t>(graph.nodes[i].outputs[0])].bytes;
    if (auto it = open.find(keys[i]); it != open.end()) {
      bool independent = it->second.bytes + bytes <= kMaxCombinedBytes;
      for (size_t m : it->second.members) {
        const auto n = static_cast<size_t>(number[m]);
        independent = independent && (depends[i * words + n / 64] >> (n % 64) & 1) == 0;
      }
      if (!independent) close(it);
    }
    Open& group = open[keys[i]];
    group.members.push_back(i);
    group.bytes += bytes;
  }
  while (!open.empty()) close(open.begin());
  if (groups.empty()) return Status::Ok();
  // Each group becomes one node writing its members' result values, in
  // the place of its last member.
  std::vector<int64_t> group_of(count, -1);
  std::vector<Node> combined;
  for (const std::vector<size_t>& members : groups) {
    for (size_t m : members) group_of[m] = static_cast<int64_t>(combined.size());
    KILN_ASSIGN_OR_RETURN(Node node, Combined(lowering, members));
    combined.push_back(std::move(node));
  }
  // The new order: each node as early as its predecessors allow, in its
  // old order (a combined all_reduce takes its last member's place).
  // Units: old nodes not in a group, then the combined ones.
  const size_t units = count + combined.size();
  auto unit_of = [&](size_t i) {
    return group_of[i] >= 0 ? count + static_cast<size_t>(group_of[i]) : i;
  };
  std::vector<size_t> rank(units, 0), waiting(units, 0);
  std::vector<std::vector<size_t>> after(units);
  for (size_t i = 0; i < count; ++i) rank[unit_of(i)] = std::max(rank[unit_of(i)], i);
  for (size_t i = 0; i < count; ++i) {
    const size_t u = unit_of(i);
    for (size_t p : before[i]) {
      const size_t v = unit_of(p);
      if (v == u) continue;
      after[v].push_back(u);
      ++waiting[u];
    }
  }
  size_t live = 0;  // units left: old nodes outside groups and the combined ones
  std::priority_queue<std::pair<size_t, size_t>, std::vector<std::pair<size_t, size_t>>,
                      std::greater<>>
      ready;
  for (size_t u = 0; u < units; ++u) {
    if (u < count && group_of[u] >= 0) continue;
    ++live;
    if (waiting[u] == 0) ready.emplace(rank[u], u);
  }
  std::vector<Node> nodes;
  nodes.reserve(units);
  while (!ready.empty()) {
    const size_t u = ready.top().second;
    ready.pop();
    nodes.push_back(u < count ? std::move(graph.nodes[u]) : std::move(combined[u - count]));
    for (size_t v : after[u]) {
      if (--waiting[v] == 0) ready.emplace(rank[v], v);
    }
  }
  if (nodes.size() != live) {
    return Internal("combining collectives left a cycle among ", count, " nodes");
  }
  graph.nodes = std::move(nodes);
  return Status::Ok();
}

}  // namespace kiln::compiler
