// Verifier rules for the collectives: all_gather, all_reduce,
// reduce_scatter, all_to_all, collective_permute, collective_broadcast, and
// replica_id / partition_id. Replica groups are checked as upstream does:
// every id once, and ids 0..n-1 all present.
#include <algorithm>
#include <unordered_set>

#include "ir/verifier_internal.h"

namespace kiln::ir::verify_internal {
namespace {

// replica_groups as a [groups, size] list; present = false when the op
// carries it in a form Kiln does not read (e.g. mesh axes).
struct ReplicaGroups {
  IntList ids;
  int64_t group_size = -1;  // -1: unknown
};

// `padded`: groups of different sizes are padded with -1 (all_reduce);
// `cover`: the ids must be 0..n-1 (collective_broadcast and
// collective_reduce leave processes out).
StatusOr<ReplicaGroups> ReadReplicaGroups(const OpContext& context, std::string_view constraint,
                                          bool padded, bool cover = true) {
  ReplicaGroups groups;
  Attribute attribute = context.op().GetAttr("replica_groups");
  if (!attribute) return context.Fail("", "missing attribute 'replica_groups'");
  std::optional<IntList> ids = ReadInts(attribute);
  if (!ids) return groups;
  if (ids->rank != 2) {
    return context.Fail("", "replica_groups must be a 2-dimensional tensor, found shape ",
                        DimsText(ids->shape()));
  }
  groups.group_size = ids->shape_dims[1];
  std::unordered_set<int64_t> seen;
  for (int64_t id : *ids) {
    if (id == -1 && padded) continue;
    if (id < 0) return context.Fail(constraint, "replica_groups contains the negative id ", id);
    if (!seen.insert(id).second) {
      return context.Fail(constraint, "replica id ", id,
                          " appears more than once in "
                          "replica_groups");
    }
  }
  for (int64_t id = 0; cover && id < static_cast<int64_t>(seen.size()); ++id) {
    if (!seen.count(id)) {
      return context.Fail(constraint, "replica_groups lists ", seen.size(), " ids but not id ", id,
                          "; expected ids 0..", seen.size() - 1);
    }
  }
  groups.ids = std::move(*ids);
  return groups;
}

// use_global_device_ids needs a channel: channel_id > 0 (>= 0 for
// all_gather, as upstream).
Status VerifyGlobalDeviceIds(const OpContext& context, std::string_view constraint,
                             int64_t minimum) {
  KILN_ASSIGN_OR_RETURN(bool global_ids, context.BoolOr("use_global_device_ids", false));
  if (!global_ids) return Status::Ok();
  Attribute channel = context.op().GetAttr("channel_handle");
  int64_t id = 0;
  if (channel) {
    if (!channel.Is(AttrKind::kStruct) || channel->text != "stablehlo.channel_handle") {
      return context.Fail("", "attribute 'channel_handle' must be #stablehlo.channel_handle<...>");
    }
    KILN_ASSIGN_OR_RETURN(id, context.FieldInt(channel, "handle", 0));
  }
  if (id < minimum) {
    return context.Fail(constraint, "use_global_device_ids needs a channel_id >= ", minimum,
                        ", found ", id);
  }
  return Status::Ok();
}

// Variadic collectives map operand i to result i.
Status ExpectPairs(const OpContext& context, std::string_view constraint) {
  if (context.num_operands() == context.num_results()) return Status::Ok();
  return context.Fail(constraint, "expected one result per operand (", context.num_operands(),
                      "), found ", context.num_results());
}

Status VerifyAllGather(const OpContext& context) {
  KILN_RETURN_IF_ERROR(ExpectPairs(context, "C6"));
  KILN_RETURN_IF_ERROR(ReadReplicaGroups(context, "C2", /*padded=*/false).status());
  KILN_RETURN_IF_ERROR(VerifyGlobalDeviceIds(context, "C5", 0));
  KILN_ASSIGN_OR_RETURN(int64_t dim, context.Int("all_gather_dim"));
  for (size_t i = 0; i < context.num_operands(); ++i) {
    const Type& operand = context.operand(i);
    const Type& result = context.result(i);
    if (dim < 0 || dim >= Rank(operand)) {
      return context.Fail("C1", "all_gather_dim ", dim, " must be in [0, ", Rank(operand),
                          ") for operand ", TypeText(operand));
    }
    bool fits = Rank(result) == Rank(operand) && SameElement(ElementOf(result), ElementOf(operand));
    for (int64_t d = 0; fits && d < Rank(operand); ++d) {
      const int64_t from = operand.dims()[static_cast<size_t>(d)];
      const int64_t to = result.dims()[static_cast<size_t>(d)];
      fits = d == dim ? from == kDynamic || to == kDynamic || (from != 0 && to % from == 0)
                      : DimsCompatible(from, to);
    }
    if (!fits) {
      return context.Fail("C6", "result #", i, " ", TypeText(result), " must be operand ",
                          TypeText(operand), " with dimension ", dim,
                          " multiplied by the group size");
    }
  }
  return Status::Ok();
}

// all_reduce C5-C7 for the first `count` operands: each is reduced by the
// region, and its result has the operand's shape and the region's element type.
Status VerifyReducedOperands(const OpContext& context, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const Type& operand = context.operand(i);
    const Type init = Type::Tensor(ElementOf(operand), {});
    std::vector<Type> accumulators;
    KILN_RETURN_IF_ERROR(VerifyReducer(context, "C5", context.op().region(0),
                                       std::span(&operand, 1), std::span(&init, 1), {},
                                       &accumulators));
    const Type& result = context.result(i);
    if (!ShapesCompatible(result.dims(), operand.dims())) {
      return context.Fail("C6", "result #", i, " must have the shape of operand #", i, " ",
                          DimsText(operand.dims()), ", found ", TypeText(result));
    }
    if (!SameElement(ElementOf(result), ElementOf(accumulators[0]))) {
      return context.Fail("C7", "result #", i, " must have the computation's element type ",
                          TypeText(ElementOf(accumulators[0])), ", found ", TypeText(result));
    }
  }
  return Status::Ok();
}

Status VerifyAllReduce(const OpContext& context) {
  KILN_RETURN_IF_ERROR(ExpectPairs(context, "C6"));
  KILN_RETURN_IF_ERROR(ReadReplicaGroups(context, "C1", /*padded=*/true).status());
  KILN_RETURN_IF_ERROR(VerifyGlobalDeviceIds(context, "C4", 1));
  return VerifyReducedOperands(context, context.num_operands());
}

Status VerifyReduceScatter(const OpContext& context) {
  const Type& operand = context.operand(0);
  const Type& result = context.result(0);
  KILN_ASSIGN_OR_RETURN(ReplicaGroups groups, ReadReplicaGroups(context, "C3", false));
  KILN_RETURN_IF_ERROR(VerifyGlobalDeviceIds(context, "C6", 1));
  KILN_ASSIGN_OR_RETURN(int64_t dim, context.Int("scatter_dimension"));
  if (dim < 0 || dim >= Rank(operand)) {
    return context.Fail("C2", "scatter_dimension ", dim, " must be in [0, ", Rank(operand), ")");
  }
  const int64_t size = operand.dims()[static_cast<size_t>(dim)];
  if (size != kDynamic && groups.group_size > 0 && size % groups.group_size != 0) {
    return context.Fail("C1", "operand dimension ", dim, " has size ", size,
                        ", not a multiple of the group size ", groups.group_size);
  }
  const Type init = Type::Tensor(ElementOf(operand), {});
  std::vector<Type> accumulators;
  KILN_RETURN_IF_ERROR(VerifyReducer(context, "C7", context.op().region(0), std::span(&operand, 1),
                                     std::span(&init, 1), {}, &accumulators));
  bool fits = Rank(result) == Rank(operand);
  for (int64_t d = 0; fits && d < Rank(operand); ++d) {
    const int64_t from = operand.dims()[static_cast<size_t>(d)];
    const int64_t to = result.dims()[static_cast<size_t>(d)];
    fits = d == dim ? from == kDynamic || to == kDynamic || (to != 0 && from % to == 0)
                    : DimsCompatible(from, to);
  }
  if (!fits) {
    return context.Fail("C8", "result ", TypeText(result), " must be operand ", TypeText(operand),
                        " with dimension ", dim, " divided by the group size");
  }
  if (!SameElement(ElementOf(result), ElementOf(accumulators[0]))) {
    return context.Fail("C9", "result must have the computation's element type ",
                        TypeText(ElementOf(accumulators[0])), ", found ", TypeText(result));
  }
  return Status::Ok();
}

Status VerifyAllToAll(const OpContext& context) {
  KILN_RETURN_IF_ERROR(ExpectPairs(context, "C9"));
  KILN_ASSIGN_OR_RETURN(int64_t split_dim, context.Int("split_dimension"));
  KILN_ASSIGN_OR_RETURN(int64_t concat_dim, context.Int("concat_dimension"));
  KILN_ASSIGN_OR_RETURN(int64_t count, context.Int("split_count"));
  if (count <= 0) return context.Fail("C4", "split_count must be > 0, found ", count);
  KILN_ASSIGN_OR_RETURN(ReplicaGroups groups, ReadReplicaGroups(context, "C5", false));
  if (groups.ids.present && groups.group_size != count) {
    return context.Fail("C8", "replica groups have size ", groups.group_size,
                        ", expected split_count ", count);
  }
  for (size_t i = 0; i < context.num_operands(); ++i) {
    const Type& operand = context.operand(i);
    if (split_dim < 0 || split_dim >= Rank(operand)) {
      return context.Fail("C1", "split_dimension ", split_dim, " must be in [0, ", Rank(operand),
                          ")");
    }
    if (concat_dim < 0 || concat_dim >= Rank(operand)) {
      return context.Fail("C3", "concat_dimension ", concat_dim, " must be in [0, ", Rank(operand),
                          ")");
    }
    std::vector<int64_t> expected = operand.dims();
    int64_t& split = expected[static_cast<size_t>(split_dim)];
    if (split != kDynamic && split % count != 0) {
      return context.Fail("C2", "operand dimension ", split_dim, " has size ", split,
                          ", not a multiple of split_count ", count);
    }
    if (split != kDynamic) split /= count;
    int64_t& concat = expected[static_cast<size_t>(concat_dim)];
    if (concat != kDynamic) concat = CheckedMul(concat, count).value_or(kDynamic);
    if (!SameElement(ElementOf(context.result(i)), ElementOf(operand))) {
      return context.Fail("C9", "result #", i, " must have element type ",
                          TypeText(ElementOf(operand)), ", found ", TypeText(context.result(i)));
    }
    KILN_RETURN_IF_ERROR(context.ExpectResultShape("C9", i, expected));
  }
  return Status::Ok();
}

Status VerifyCollectivePermute(const OpContext& context) {
  KILN_ASSIGN_OR_RETURN(IntList pairs, context.Ints("source_target_pairs"));
  if (pairs.rank != 2 || pairs.shape_dims[1] != 2) {
    return context.Fail("C1", "source_target_pairs must have shape [N, 2], found ",
                        DimsText(pairs.shape()));
  }
  std::unordered_set<int64_t> sources, targets;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (pairs[i] < 0) {
      return context.Fail("C4", "source_target_pairs contains the negative id ", pairs[i]);
    }
    const bool source = i % 2 == 0;
    if (!(source ? sources : targets).insert(pairs[i]).second) {
      return context.Fail(source ? "C2" : "C3", source ? "source " : "target ", pairs[i],
                          " appears more than once in source_target_pairs");
    }
  }
  if (!TypesCompatible(context.result(0), context.operand(0))) {
    return context.Fail("C5", "result must have the operand type ", TypeText(context.operand(0)),
                        ", found ", TypeText(context.result(0)));
  }
  return Status::Ok();
}

// The operands of collective_broadcast and collective_reduce: N data
// operands, then (with has_dynamic_root) a tensor<Nxi32> of root indices;
// N results. Returns N.
StatusOr<size_t> DataOperands(const OpContext& context, std::string_view label) {
  KILN_ASSIGN_OR_RETURN(bool dynamic_root, context.BoolOr("has_dynamic_root", false));
  const size_t data = context.num_operands() - (dynamic_root ? 1 : 0);
  if (context.num_operands() < (dynamic_root ? 2u : 1u) || context.num_results() != data) {
    return context.Fail(label, "expected ",
                        dynamic_root ? "N data operands and a root index" : "N operands",
                        " and N results, found ", context.num_operands(), " operands and ",
                        context.num_results(), " results");
  }
  if (dynamic_root) {
    const Type& root = context.operand(data);
    if (Rank(root) != 1 || root.dims()[0] != static_cast<int64_t>(data) ||
        ElementOf(root) != Type::Element(ElementType::kS32)) {
      return context.Fail(label, "the root index must be tensor<", data, "xi32>, found ",
                          TypeText(root));
    }
  }
  return data;
}

Status VerifyCollectiveBroadcast(const OpContext& context) {
  KILN_RETURN_IF_ERROR(ReadReplicaGroups(context, "C1", false, /*cover=*/false).status());
  KILN_ASSIGN_OR_RETURN(size_t data, DataOperands(context, "C4"));
  for (size_t i = 0; i < data; ++i) {
    if (!TypesCompatible(context.result(i), context.operand(i))) {
      return context.Fail("C3", "result #", i, " must have the type of operand #", i, " ",
                          TypeText(context.operand(i)), ", found ", TypeText(context.result(i)));
    }
  }
  return Status::Ok();
}

// collective_reduce (VHLO 1.19, not yet in the spec): all_reduce's reduction
// delivered to a root, with collective_broadcast's optional dynamic root.
Status VerifyCollectiveReduce(const OpContext& context) {
  KILN_RETURN_IF_ERROR(ReadReplicaGroups(context, "C1", /*padded=*/true, /*cover=*/false).status());
  KILN_RETURN_IF_ERROR(VerifyGlobalDeviceIds(context, "C4", 1));
  KILN_ASSIGN_OR_RETURN(size_t data, DataOperands(context, "C6"));
  return VerifyReducedOperands(context, data);
}

// replica_id, partition_id: tensor<ui32>.
Status VerifyDeviceId(const OpContext& context) {
  const Type& result = context.result(0);
  if (Rank(result) != 0 || ElementOf(result) != Type::Element(ElementType::kU32)) {
    return context.Fail("", "result must be tensor<ui32>, found ", TypeText(result));
  }
  return Status::Ok();
}

constexpr uint8_t kReducing = kTensors | kReturnTerminated;
constexpr FamilyRule kRules[] = {
    {OpCode::kAllGather, VerifyAllGather, kTensors},
    {OpCode::kAllReduce, VerifyAllReduce, kReducing},
    {OpCode::kReduceScatter, VerifyReduceScatter, kReducing},
    {OpCode::kAllToAll, VerifyAllToAll, kTensors},
    {OpCode::kCollectivePermute, VerifyCollectivePermute, kTensors},
    {OpCode::kCollectiveBroadcast, VerifyCollectiveBroadcast, kTensors},
    {OpCode::kCollectiveReduce, VerifyCollectiveReduce, kReducing},
    {OpCode::kCrossReplicaSum, nullptr, kTensors},
    {OpCode::kReplicaId, VerifyDeviceId, kTensors},
    {OpCode::kPartitionId, VerifyDeviceId, kTensors},
};

}  // namespace

std::span<const FamilyRule> CollectiveRules() { return kRules; }

}  // namespace kiln::ir::verify_internal
