// Lowering of the remaining single-device ops: composite (its decomposition
// is inlined; chlo.top_k's is top-k itself), custom_call (the targets JAX
// emits that Kiln understands, and a test-only fault), replica_id /
// partition_id, tokens, tuples, reduce_precision, get_dimension_size;
// infeed / outfeed and send / recv (to the host, and between devices
// through the runtime's queues).
#include <cstring>
#include <functional>
#include <string_view>

#include "base/env.h"
#include "base/small_vector.h"
#include "compiler/lowering.h"
#include "kernels/elementwise.h"
#include "kernels/testing_faults.h"

namespace kiln::compiler {
namespace {

Status LowerComposite(Lowering& lowering, const ir::Operation& op) {
  // GSPMD returns top_k's results whole whatever splits its operand (XLA
  // makes the composite its TopK, which its partitioner leaves whole): in
  // a GSPMD program Kiln computes it whole too, as the shardings JAX reads
  // back must agree. (Shardy partitions the decomposition, as Kiln does.)
  const ir::Attribute name = op.GetAttr("name");
  const bool top_k = name.Is(ir::AttrKind::kString) && name->text == "chlo.top_k";
  // The top-k kernel, not the decomposition's sort of every row, wherever
  // the operand is whole (under Shardy a tiled operand is partitioned
  // through the decomposition; GSPMD computes it whole).
  if (top_k && !op.operands().empty()) {
    const ir::Value* operand = op.operand(0);
    const bool whole = lowering.spmd() == nullptr || lowering.spmd()->gspmd ||
                       (lowering.HeldAsTiles(operand) == nullptr &&
                        lowering.HeldAsPadded(operand) == nullptr &&
                        lowering.PartialTiles(operand) == nullptr);
    if (whole) {
      KILN_ASSIGN_OR_RETURN(bool lowered, LowerTopKComposite(lowering, op));
      if (lowered) return Status::Ok();
    }
  }
  const bool whole = lowering.spmd() != nullptr && lowering.spmd()->gspmd && top_k;
  return lowering.InlineFunction(op, "decomposition", whole);
}

// Results are the operands: sharding annotations on a single device.
Status BindOperands(Lowering& lowering, const ir::Operation& op) {
  for (size_t i = 0; i < op.num_results() && i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    lowering.Bind(op.result(i), input);
  }
  return Status::Ok();
}

// The custom_call target of kernels::ThrowOnWorker, a fault for tests of a
// run's error path (docs/architecture.md, "Work off the calling thread").
constexpr std::string_view kThrowOnWorker = "kiln.testing.throw_on_worker";

// Whether the test-only targets are lowered: only while KILN_TESTING_FAULTS=1
// is set; otherwise they are unknown targets, UNIMPLEMENTED like any other.
bool TestingFaultsEnabled() { return GetEnv("KILN_TESTING_FAULTS") == "1"; }

// custom_call @kiln.testing.throw_on_worker(%x) -> the type of %x: its run
// calls kernels::ThrowOnWorker, whose exception on a pool worker fails the
// run; the result would be %x.
Status LowerThrowOnWorker(Lowering& lowering, const ir::Operation& op) {
  if (op.operands().size() != 1 || op.num_results() != 1) {
    return InvalidArgument("custom_call @", kThrowOnWorker, " takes one operand and gives one ",
                           "result, found ", op.operands().size(), " and ", op.num_results());
  }
  KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, 0));
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
  const Shape& operand = lowering.graph().shape(input);
  if (shape.element_type != operand.element_type || shape.dims != operand.dims) {
    return InvalidArgument("custom_call @", kThrowOnWorker, " gives its operand's type, ",
                           operand.ToString(), "; found ", shape.ToString());
  }
  const size_t bytes = shape.ByteSize();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            op, {input}, {shape},
                            [bytes](RunContext& ctx) {
                              KILN_RETURN_IF_ERROR(kernels::ThrowOnWorker());
                              std::memcpy(ctx.out(0), ctx.in(0), bytes);
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  lowering.Bind(op.result(0), outputs[0]);
  return Status::Ok();
}

Status LowerCustomCall(Lowering& lowering, const ir::Operation& op) {
  ir::Attribute target = op.GetAttr("call_target_name");
  const std::string name = target.Is(ir::AttrKind::kString) ? target->text : "";
  // Sharding annotations: JAX's partitioner hints. On one device they are
  // the identity (multi-device programs are partitioned before lowering).
  if (name == "Sharding" || name == "SPMDFullToShardShape" || name == "SPMDShardToFullShape" ||
      name == "MoveToHost" || name == "MoveToDevice" || name == "annotate_device_placement") {
    return BindOperands(lowering, op);
  }
  // JAX's lax.dce_sink(x, prevent_mlir_dce=True): keeps `x` alive for MLIR's
  // dead-code elimination. It has no results and no effect of its own; what
  // computes `x` is pure or a side-effecting node Kiln keeps anyway.
  if (name == "dce_sink" && op.num_results() == 0) return Status::Ok();
  if (name.starts_with("check.")) return LowerCheckCustomCall(lowering, op, name);
  if (name == kThrowOnWorker && TestingFaultsEnabled()) return LowerThrowOnWorker(lowering, op);
  KILN_ASSIGN_OR_RETURN(bool known, LowerKnownCustomCall(lowering, op, name));
  if (known) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(bool elementwise, LowerMhloElementwiseCall(lowering, op, name));
  if (elementwise) return Status::Ok();
  KILN_ASSIGN_OR_RETURN(bool registered, LowerRegisteredCustomCall(lowering, op, name));
  if (registered) return Status::Ok();
  return Unimplemented("custom_call target \"", name,
                       "\" is not supported by Kiln: it runs the StableHLO ops, the sharding "
                       "annotations JAX emits, and handlers registered for platform \"kiln\" "
                       "(jax.ffi.register_ffi_target(\"",
                       name,
                       "\", handler, platform=\"kiln\"); "
                       "docs/ffi.md), and no handler is registered under this name");
}

// replica_id / partition_id: where the run happens, so never folded.
Status LowerDeviceId(Lowering& lowering, const ir::Operation& op) {
  const bool replica = op.code() == ir::OpCode::kReplicaId;
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(0)));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            op, {}, {shape},
                            [replica](RunContext& ctx) {
                              const auto id = static_cast<uint32_t>(replica
                                                                        ? ctx.env().replica_id
                                                                        : ctx.env().partition_id);
                              std::memcpy(ctx.out(0), &id, sizeof(id));
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  lowering.Bind(op.result(0), outputs[0]);
  return Status::Ok();
}

// after_all / create_token: tokens hold no data; order is program order.
Status LowerToken(Lowering& lowering, const ir::Operation& op) {
  lowering.Bind(op.result(0), lowering.graph().AddConstant(Shape{ElementType::kToken, {}}, {}));
  return Status::Ok();
}

// Whether a send/recv transfers to or from the host (JAX's host callbacks)
// rather than between devices.
bool IsHostTransfer(const ir::Operation& op) {
  ir::Attribute host = op.GetAttr("is_host_transfer");
  return host.Is(ir::AttrKind::kBool) && host->bool_value;
}

// The channel handle of a send/recv between devices (any type: the spec
// leaves DEVICE_TO_DEVICE's numbering to the producer).
StatusOr<int64_t> DeviceChannel(const ir::Operation& op) {
  ir::Attribute channel = op.GetAttr("channel_handle");
  if (!channel.Is(ir::AttrKind::kStruct)) {
    return InvalidArgument(op.name(), " without a #stablehlo.channel_handle");
  }
  return FieldInt(channel, "handle");
}

Status NoFeeds(std::string_view what) {
  return FailedPrecondition(what, ": this run has no device queues (programs run by the "
                                  "runtime on a device, or by `kiln run`, have them)");
}

// The host channel of a send/recv to or from the host (JAX's host callbacks).
StatusOr<int64_t> HostChannel(const ir::Operation& op, int64_t expected_type) {
  ir::Attribute channel = op.GetAttr("channel_handle");
  if (!channel.Is(ir::AttrKind::kStruct)) {
    return InvalidArgument(op.name(), " without a #stablehlo.channel_handle");
  }
  const int64_t type = FieldInt(channel, "type");
  if (type != expected_type) {
    return InvalidArgument(op.name(), " to the host needs a channel of type ", expected_type, " (",
                           expected_type == 2 ? "DEVICE_TO_HOST" : "HOST_TO_DEVICE",
                           "), found type ", type);
  }
  return FieldInt(channel, "handle");
}

Status NoHost(const char* op, int64_t channel) {
  return FailedPrecondition(op, " on host channel ", channel,
                            ": this run has no host "
                            "callbacks (PJRT_ExecuteOptions.send_callbacks / recv_callbacks); "
                            "programs with jax.debug.print or other callbacks run from JAX");
}

// The operands of `op` but its last (a token), their values and shapes.
Status DataOperands(Lowering& lowering, const ir::Operation& op, std::vector<ValueId>& inputs,
                    std::vector<Shape>& shapes) {
  for (size_t i = 0; i + 1 < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    inputs.push_back(input);
    shapes.push_back(lowering.graph().shape(input));
  }
  return Status::Ok();
}

// The shapes of `op`'s results but its last (a token).
StatusOr<std::vector<Shape>> DataResults(Lowering& lowering, const ir::Operation& op) {
  std::vector<Shape> shapes;
  for (size_t r = 0; r + 1 < op.num_results(); ++r) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(r)));
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

// A side-effecting node that hands its data operands to `put` (outfeed, a
// send between devices) and gives a token.
Status EmitPut(
    Lowering& lowering, const ir::Operation& op,
    std::function<Status(RunContext&, std::span<const Shape>, std::span<const void* const>)> put) {
  std::vector<ValueId> inputs;
  std::vector<Shape> shapes;
  KILN_RETURN_IF_ERROR(DataOperands(lowering, op, inputs, shapes));
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            op, inputs, {Shape{ElementType::kToken, {}}},
                            [shapes, put = std::move(put)](RunContext& ctx) {
                              const void** data = const_cast<const void**>(
                                  ctx.env().Pointers(&ctx.node(), shapes.size()));
                              for (size_t i = 0; i < shapes.size(); ++i) data[i] = ctx.in(i);
                              return put(ctx, shapes, std::span(data, shapes.size()));
                            },
                            {}, {}, /*foldable=*/false));
  lowering.Bind(op.result(0), outputs[0]);
  return Status::Ok();
}

// A side-effecting node whose data results come from `take` (infeed, a
// recv between devices), plus a token.
Status EmitTake(
    Lowering& lowering, const ir::Operation& op,
    std::function<Status(RunContext&, std::span<const Shape>, std::span<void* const>)> take) {
  KILN_ASSIGN_OR_RETURN(std::vector<Shape> shapes, DataResults(lowering, op));
  std::vector<Shape> outputs = shapes;
  outputs.push_back(Shape{ElementType::kToken, {}});
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        lowering.EmitNode(
                            op, {}, std::move(outputs),
                            [shapes, take = std::move(take)](RunContext& ctx) {
                              void** data = ctx.env().Pointers(&ctx.node(), shapes.size());
                              for (size_t r = 0; r < shapes.size(); ++r) data[r] = ctx.out(r);
                              return take(ctx, shapes, std::span(data, shapes.size()));
                            },
                            {}, {}, /*foldable=*/false));
  for (size_t r = 0; r < ids.size(); ++r) lowering.Bind(op.result(r), ids[r]);
  return Status::Ok();
}

// infeed(token) -> (results..., token): the next entry of the device's infeed.
Status LowerInfeed(Lowering& lowering, const ir::Operation& op) {
  return EmitTake(lowering, op,
                  [](RunContext& ctx, std::span<const Shape> shapes, std::span<void* const> data) {
                    if (ctx.env().feeds == nullptr) return NoFeeds("stablehlo.infeed");
                    return ctx.env().feeds->Infeed(shapes, data);
                  });
}

// outfeed(inputs..., token) -> token: one entry onto the device's outfeed.
Status LowerOutfeed(Lowering& lowering, const ir::Operation& op) {
  return EmitPut(lowering, op,
                 [](RunContext& ctx, std::span<const Shape> shapes,
                    std::span<const void* const> data) {
                   if (ctx.env().feeds == nullptr) return NoFeeds("stablehlo.outfeed");
                   return ctx.env().feeds->Outfeed(shapes, data);
                 });
}

// send / recv between devices: an entry on the channel's queue.
Status LowerDeviceSend(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(int64_t channel, DeviceChannel(op));
  return EmitPut(lowering, op,
                 [channel](RunContext& ctx, std::span<const Shape> shapes,
                           std::span<const void* const> data) {
                   if (ctx.env().feeds == nullptr) return NoFeeds("stablehlo.send");
                   return ctx.env().feeds->Send(channel, shapes, data);
                 });
}

Status LowerDeviceRecv(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(int64_t channel, DeviceChannel(op));
  return EmitTake(lowering, op,
                  [channel](RunContext& ctx, std::span<const Shape> shapes,
                            std::span<void* const> data) {
                    if (ctx.env().feeds == nullptr) return NoFeeds("stablehlo.recv");
                    return ctx.env().feeds->Recv(channel, shapes, data);
                  });
}

// The one partition a host transfer runs on, when JAX placed it on one
// device: a callback outside shard_map in a program over several devices
// gets `sdy.sharding` on a mesh of no axes and one device (`@maximal_mesh_0
// = <[], device_ids=[0]>`), and XLA runs it there alone. nullopt: every
// partition runs it (one device, or a shard_map body's callbacks).
StatusOr<std::optional<int64_t>> MaximalPartition(Lowering& lowering, const ir::Operation& op) {
  const ir::Attribute sharding = op.GetAttr("sdy.sharding");
  if (lowering.spmd() == nullptr || !sharding.Is(ir::AttrKind::kOpaque)) {
    return std::optional<int64_t>();
  }
  KILN_ASSIGN_OR_RETURN(std::vector<TensorSharding> values,
                        ParseShardingPerValue(sharding->text, lowering.spmd()->meshes));
  if (values.empty() || !values[0].mesh.axes.empty() || values[0].mesh.device_ids.size() != 1) {
    return std::optional<int64_t>();
  }
  return std::optional<int64_t>(values[0].mesh.device_ids[0]);
}

// send(operands..., token) -> token: each operand to the host in order.
Status LowerSend(Lowering& lowering, const ir::Operation& op) {
  if (!IsHostTransfer(op)) return LowerDeviceSend(lowering, op);
  KILN_ASSIGN_OR_RETURN(int64_t channel, HostChannel(op, 2));
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> only, MaximalPartition(lowering, op));
  std::vector<ValueId> inputs;
  std::vector<Shape> shapes;
  for (size_t i = 0; i + 1 < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId input, lowering.Input(op, i));
    inputs.push_back(input);
    shapes.push_back(lowering.graph().shape(input));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                        lowering.EmitNode(
                            op, inputs, {Shape{ElementType::kToken, {}}},
                            [channel, shapes, only](RunContext& ctx) {
                              if (only && ctx.env().partition_id != *only) return Status::Ok();
                              if (ctx.env().host == nullptr)
                                return NoHost("stablehlo.send", channel);
                              for (size_t i = 0; i < shapes.size(); ++i) {
                                KILN_RETURN_IF_ERROR(ctx.env().host->Send(channel, shapes[i],
                                                                          ctx.in(i)));
                              }
                              return Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  lowering.Bind(op.result(0), outputs[0]);
  return Status::Ok();
}

// What a recv placed on one partition gives the others: they meet (all
// partitions of this replica) and copy that partition's results.
Status ShareFromPartition(RunContext& ctx, int64_t source, std::span<const Shape> shapes) {
  const ExecutionEnv& env = ctx.env();
  if (env.num_partitions <= 1) return Status::Ok();
  if (env.collectives == nullptr) {
    return FailedPrecondition("a host recv placed on partition ", source, " of ",
                              env.num_partitions, " has no peers to share its results with");
  }
  SmallVector<int64_t> group;
  for (int64_t p = 0; p < env.num_partitions; ++p) {
    group.push_back(env.replica_id * env.num_partitions + p);
  }
  void** mine = ctx.env().Pointers(&ctx.node(), shapes.size());
  SmallVector<int64_t> bytes;
  for (size_t r = 0; r < shapes.size(); ++r) {
    mine[r] = ctx.out(r);
    bytes.push_back(shapes[r].ByteSize());
  }
  return env.collectives->Meet(group, std::span(mine, shapes.size()), bytes,
                               [&](std::span<void* const> all) {
                                 if (env.partition_id == source) return Status::Ok();
                                 for (size_t r = 0; r < shapes.size(); ++r) {
                                   std::memcpy(ctx.out(r),
                                               all[static_cast<size_t>(source) * shapes.size() + r],
                                               shapes[r].ByteSize());
                                 }
                                 return Status::Ok();
                               });
}

// recv(token) -> (results..., token): each result from the host in order.
Status LowerRecv(Lowering& lowering, const ir::Operation& op) {
  if (!IsHostTransfer(op)) return LowerDeviceRecv(lowering, op);
  KILN_ASSIGN_OR_RETURN(int64_t channel, HostChannel(op, 3));
  KILN_ASSIGN_OR_RETURN(std::optional<int64_t> only, MaximalPartition(lowering, op));
  std::vector<Shape> shapes;
  for (size_t r = 0; r + 1 < op.num_results(); ++r) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.result(r)));
    shapes.push_back(std::move(shape));
  }
  std::vector<Shape> outputs = shapes;
  outputs.push_back(Shape{ElementType::kToken, {}});
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        lowering.EmitNode(
                            op, {}, std::move(outputs),
                            [channel, shapes, only](RunContext& ctx) {
                              if (!only || ctx.env().partition_id == *only) {
                                if (ctx.env().host == nullptr) {
                                  return NoHost("stablehlo.recv", channel);
                                }
                                for (size_t r = 0; r < shapes.size(); ++r) {
                                  KILN_RETURN_IF_ERROR(ctx.env().host->Recv(channel, shapes[r],
                                                                            ctx.out(r)));
                                }
                              }
                              return only ? ShareFromPartition(ctx, *only, shapes) : Status::Ok();
                            },
                            {}, {}, /*foldable=*/false));
  // Named apart: a recv whose results are shared meets the other partitions,
  // so the launch must queue its devices' runs together (UsesCollectives).
  if (only && lowering.spmd() != nullptr) lowering.graph().nodes.back().op = kSharedHostRecv;
  for (size_t r = 0; r < ids.size(); ++r) lowering.Bind(op.result(r), ids[r]);
  return Status::Ok();
}

Status LowerReducePrecision(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(op.operand(0)));
  const auto exponent_bits = static_cast<int>(IntAttr(op, "exponent_bits", 8));
  const auto mantissa_bits = static_cast<int>(IntAttr(op, "mantissa_bits", 23));
  const int64_t count = shape.NumElements();
  return lowering.Emit(op, [type = shape.element_type, count, exponent_bits,
                            mantissa_bits](RunContext& ctx) {
    return kernels::ReducePrecision(type, ctx.in(0), ctx.out(0), count, exponent_bits,
                                    mantissa_bits);
  });
}

// A static size: a constant.
Status LowerGetDimensionSize(Lowering& lowering, const ir::Operation& op) {
  KILN_ASSIGN_OR_RETURN(Shape operand, lowering.ShapeOf(op.operand(0)));
  const auto dimension = static_cast<size_t>(IntAttr(op, "dimension", 0));
  if (dimension >= operand.dims.size()) return InvalidArgument("dimension out of range");
  const auto size = static_cast<int32_t>(operand.dims[dimension]);
  std::vector<uint8_t> data(sizeof(size));
  std::memcpy(data.data(), &size, sizeof(size));
  lowering.Bind(op.result(0),
                lowering.graph().AddConstant(Shape{ElementType::kS32, {}}, std::move(data)));
  return Status::Ok();
}

// The value a tuple element stands for: tuples live only at compile time,
// between the stablehlo.tuple that builds one and the get_tuple_element ops
// that take it apart (walked through nested tuples without recursion).
StatusOr<const ir::Value*> TupleElement(const ir::Operation& op) {
  std::vector<int64_t> path = {IntAttr(op, "index", 0)};
  const ir::Value* value = op.operand(0);
  while (!path.empty()) {
    const ir::Operation* producer = value->defining_op();
    if (producer != nullptr && producer->code() == ir::OpCode::kGetTupleElement) {
      path.push_back(IntAttr(*producer, "index", 0));
      value = producer->operand(0);
      continue;
    }
    if (producer == nullptr || producer->code() != ir::OpCode::kTuple) {
      return Unimplemented("a tuple from ",
                           producer == nullptr ? std::string("a block argument") : producer->name(),
                           "; Kiln takes tuples apart only where stablehlo.tuple builds them "
                           "in the same function");
    }
    const int64_t index = path.back();
    path.pop_back();
    if (index < 0 || index >= static_cast<int64_t>(producer->operands().size())) {
      return InvalidArgument("tuple index ", index, " out of range for a tuple of ",
                             producer->operands().size(), " elements");
    }
    value = producer->operand(static_cast<size_t>(index));
  }
  return value;
}

// stablehlo.tuple emits nothing: its elements are found through the IR.
Status LowerTuple(Lowering&, const ir::Operation&) { return Status::Ok(); }

Status LowerGetTupleElement(Lowering& lowering, const ir::Operation& op) {
  if (op.result(0)->type().Is(ir::TypeKind::kTuple)) return Status::Ok();  // a nested tuple
  KILN_ASSIGN_OR_RETURN(const ir::Value* element, TupleElement(op));
  KILN_ASSIGN_OR_RETURN(ValueId id, lowering.Lookup(element));
  lowering.Bind(op.result(0), id);
  return Status::Ok();
}

constexpr LoweringRule kRules[] = {
    {ir::OpCode::kTuple, LowerTuple},
    {ir::OpCode::kGetTupleElement, LowerGetTupleElement},
    {ir::OpCode::kComposite, LowerComposite},
    {ir::OpCode::kCustomCall, LowerCustomCall},
    {ir::OpCode::kReplicaId, LowerDeviceId},
    {ir::OpCode::kPartitionId, LowerDeviceId},
    {ir::OpCode::kAfterAll, LowerToken},
    {ir::OpCode::kCreateToken, LowerToken},
    {ir::OpCode::kReducePrecision, LowerReducePrecision},
    {ir::OpCode::kGetDimensionSize, LowerGetDimensionSize},
    {ir::OpCode::kSend, LowerSend},
    {ir::OpCode::kRecv, LowerRecv},
    {ir::OpCode::kInfeed, LowerInfeed},
    {ir::OpCode::kOutfeed, LowerOutfeed},
};

}  // namespace

std::span<const LoweringRule> MiscLowerings() { return kRules; }

}  // namespace kiln::compiler
