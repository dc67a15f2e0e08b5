#include "compiler/lowering.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "compiler/executor.h"
#include "compiler/on_tiles.h"
#include "compiler/plan_listing.h"
#include "ir/op_description.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "kernels/copy.h"
#include "kernels/elementwise.h"

namespace kiln::compiler {
namespace {

// Nesting of regions and inlined calls beyond which Kiln refuses a program
// (lowering recurses on it; the readers bound input nesting far below this).
constexpr int kMaxDepth = 200;

const std::array<const LoweringRule*, 1024>& Rules() {
  static const auto* table = [] {
    auto* rules = new std::array<const LoweringRule*, 1024>{};
    for (auto family : {ElementwiseLowerings(), ShapeLowerings(), MiscLowerings(), CheckLowerings(),
                        ReduceLowerings(), RegionLowerings(), LinalgLowerings(),
                        RaggedDotLowerings(), IndexingLowerings(), DynamicLowerings(),
                        RandomLowerings(), FftLowerings(), SolverLowerings(), ChloLowerings(),
                        CollectiveLowerings(), RunParallelLowerings(), SpmdLowerings()}) {
      for (const LoweringRule& rule : family) rules->at(static_cast<size_t>(rule.code)) = &rule;
    }
    return rules;
  }();
  return *table;
}

}  // namespace

const LoweringRule* FindLoweringRule(ir::OpCode code) {
  return Rules().at(static_cast<size_t>(code));
}

std::string Lowering::Where(const ir::Operation& op) { return op.location().ToUserString(); }

Status Lowering::LowerEntry(const ir::Module& module, const ir::Operation& entry, Graph& graph,
                            Spmd* spmd) {
  if (entry.num_regions() != 1 || entry.region(0).num_blocks() != 1) {
    return InvalidArgument("the entry function has no body");
  }
  Lowering lowering(module, graph, nullptr, 0);
  lowering.spmd_ = spmd;
  const ir::Block& body = entry.region(0).block(0);
  for (size_t i = 0; i < body.num_arguments(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, lowering.ShapeOf(body.argument(i)));
    const TensorSharding* sharding = nullptr;
    if (spmd != nullptr && i < spmd->parameters.size() && spmd->parameters[i]) {
      sharding = &*spmd->parameters[i];
    }
    if (sharding == nullptr || sharding->IsReplicated()) {
      const ValueId id = graph.AddValue(std::move(shape));
      graph.parameters.push_back(id);
      KILN_ASSIGN_OR_RETURN(ValueId computed, lowering.SubByteInComputeForm(id));
      lowering.Bind(body.argument(i), computed);
      continue;
    }
    // The device receives its tile; the whole array is gathered on first use.
    Shape local = shape;
    if (StatusOr<std::vector<int64_t>> dims = sharding->LocalDims(shape.dims); dims.ok()) {
      local.dims = std::move(*dims);
      const ValueId id = graph.AddValue(std::move(local));
      graph.parameters.push_back(id);
      lowering.ungathered_.emplace(body.argument(i), Tiles{id, *sharding});
      continue;
    }
    // A sharding that does not divide the array (GSPMD; JAX refuses such
    // arguments): the device receives its padded tile, as XLA's
    // partitioner lays the parameter out (PyTorch/XLA pads its shards with
    // zeros; Kiln assumes nothing of the padding).
    StatusOr<std::vector<int64_t>> padded = sharding->PaddedDims(shape.dims);
    if (!padded.ok() || !sharding->unreduced.empty()) {
      return InvalidArgument("parameter ", i, " of ", shape.ToString(), ": ",
                             padded.ok() ? "partial sums of uneven tiles"
                                         : padded.status().message());
    }
    local.dims = std::move(*padded);
    const ValueId id = graph.AddValue(std::move(local));
    graph.parameters.push_back(id);
    lowering.BindPadded(body.argument(i), id, *sharding);
  }
  // Results whose sharding holds partial sums leave as each device's
  // partial tile (the terminator takes them so, before anything sums them).
  RegionTiles partial_results;
  if (spmd != nullptr) {
    for (const auto& sharding : spmd->results) {
      partial_results.results.push_back(sharding && !sharding->unreduced.empty()
                                            ? sharding
                                            : std::optional<TensorSharding>());
    }
    lowering.region_results_ = &partial_results;
  }
  KILN_RETURN_IF_ERROR(lowering.LowerBlock(body, &graph.results));
  lowering.region_results_ = nullptr;
  KILN_RETURN_IF_ERROR(lowering.ConvertSubByteResults());
  if (spmd == nullptr) return Status::Ok();
  // A result left to the compiler (no sharding) that the program holds as
  // tiles leaves as them, as XLA's propagation would shard it; like XLA,
  // without sub-axes (and the axes after them).
  const ir::Operation* terminator = body.back();
  for (size_t r = 0; r < graph.results.size() && r < spmd->results.size(); ++r) {
    if (spmd->results[r] || terminator == nullptr || r >= terminator->operands().size()) continue;
    if (const Tiles* tiles = lowering.HeldAsTiles(terminator->operand(r))) {
      spmd->results[r] = WithoutSubAxes(tiles->sharding);
    }
  }
  // Each device returns its tile of every sharded result.
  for (size_t r = 0; r < graph.results.size() && r < spmd->results.size(); ++r) {
    if (!spmd->results[r] || spmd->results[r]->IsReplicated()) continue;
    const TensorSharding& sharding = *spmd->results[r];
    if (!sharding.unreduced.empty()) continue;  // already the device's partial tile
    const ValueId global = graph.results[r];
    const Shape shape = graph.shape(global);
    if (!sharding.LocalDims(shape.dims).ok()) {
      // Uneven (GSPMD): each device returns its padded tile, as XLA does
      // (the one the program holds, or made on the tile where it can be).
      if (terminator != nullptr && r < terminator->operands().size() &&
          lowering.BoundId(terminator->operand(r)) == global) {
        KILN_ASSIGN_OR_RETURN(graph.results[r],
                              PaddedTile(lowering, terminator->operand(r), sharding));
      } else {
        KILN_ASSIGN_OR_RETURN(graph.results[r],
                              EmitTile(lowering, global, shape, sharding, /*padded=*/true));
      }
      continue;
    }
    auto known = lowering.tiles_.find(global);
    if (known != lowering.tiles_.end() &&
        SameTiling(known->second.sharding, sharding, shape.dims)) {
      graph.results[r] = known->second.local;
      continue;
    }
    if (terminator != nullptr && r < terminator->operands().size() &&
        lowering.BoundId(terminator->operand(r)) == global) {
      // Made on tiles from the start where it can be (Shardy propagates a
      // result's sharding back through the ops that make it). (Not a
      // result converted on its way out: sub-byte integers.)
      KILN_ASSIGN_OR_RETURN(std::optional<ValueId> early,
                            lowering.TileEarly(terminator->operand(r), sharding));
      if (early) {
        graph.results[r] = *early;
        continue;
      }
      // Held as tiles sharing leading axes with these: gathered along the
      // others alone (the whole gather, unused, is dropped).
      if (const Tiles* held = lowering.HeldAsTiles(terminator->operand(r))) {
        const Tiles kept = *held;
        KILN_ASSIGN_OR_RETURN(std::optional<ValueId> resharded,
                              EmitReshard(lowering, kept, shape, sharding));
        if (resharded) {
          graph.results[r] = *resharded;
          continue;
        }
      }
    }
    KILN_ASSIGN_OR_RETURN(graph.results[r], EmitTile(lowering, global, shape, sharding));
  }
  return CombineCollectives(lowering);
}

namespace {

bool IsSignedSubByte(ElementType type) {
  return type == ElementType::kS1 || type == ElementType::kS2 || type == ElementType::kS4;
}

// The ops the sub-byte conversions' nodes are named after.
const ir::Operation& SubByteInOp() {
  static const ir::Operation* op = new ir::Operation("kiln.sub_byte_in");
  return *op;
}
const ir::Operation& SubByteOutOp() {
  static const ir::Operation* op = new ir::Operation("kiln.sub_byte_out");
  return *op;
}

}  // namespace

// A signed sub-byte parameter arrives with only its own bits set (ml_dtypes'
// form, kernels::SubByteToComputeForm); the kernels take it sign-extended.
StatusOr<ValueId> Lowering::SubByteInComputeForm(ValueId parameter) {
  const Shape shape = graph_.shape(parameter);
  if (!IsSignedSubByte(shape.element_type) || shape.NumElements() == 0) return parameter;
  KILN_ASSIGN_OR_RETURN(
      std::vector<ValueId> outputs,
      EmitNode(SubByteInOp(), {parameter}, {shape},
               [type = shape.element_type, count = shape.NumElements()](RunContext& ctx) {
                 kernels::SubByteToComputeForm(type, ctx.in(0), ctx.out(0), count);
                 return Status::Ok();
               }));
  return outputs[0];
}

// The entry's signed sub-byte results leave in the host's form.
Status Lowering::ConvertSubByteResults() {
  for (ValueId& result : graph_.results) {
    const Shape shape = graph_.shape(result);
    if (!IsSignedSubByte(shape.element_type) || shape.NumElements() == 0) continue;
    KILN_ASSIGN_OR_RETURN(std::vector<ValueId> outputs,
                          EmitNode(SubByteOutOp(), {result}, {shape},
                                   [type = shape.element_type,
                                    count = shape.NumElements()](RunContext& ctx) {
                                     kernels::SubByteToHostForm(type, ctx.in(0), ctx.out(0), count);
                                     return Status::Ok();
                                   }));
    result = outputs[0];
  }
  return Status::Ok();
}

StatusOr<const ir::Operation*> Lowering::LowerAdopted(std::unique_ptr<ir::Operation> op,
                                                      bool verify) {
  const ir::Operation& adopted = Adopt(std::move(op));
  if (verify) KILN_RETURN_IF_ERROR(ir::VerifyDetachedOp(adopted));
  KILN_RETURN_IF_ERROR(LowerOp(adopted));
  return &adopted;
}

const ir::QuantizedParams* QuantizationOf(const ir::Type& type) {
  if (!type.Is(ir::TypeKind::kTensor) || !type.element().Is(ir::TypeKind::kQuantized)) {
    return nullptr;
  }
  return &ir::GetQuantizedParams(type.element());
}

StatusOr<Shape> Lowering::ShapeOf(const ir::Value* value) const {
  const ir::Type& type = value->type();
  if (type.Is(ir::TypeKind::kToken)) return Shape{ElementType::kToken, {}};
  if (!type.Is(ir::TypeKind::kTensor)) {
    return Unimplemented("Kiln runs only ranked tensors; found a value of type ",
                         ir::PrintType(type));
  }
  if (!type.HasStaticShape()) {
    return Unimplemented("Kiln runs only static shapes; found ", ir::PrintType(type));
  }
  const ir::Type element = type.element();
  // A quantized tensor is held as its storage integers.
  if (const ir::QuantizedParams* params = QuantizationOf(type)) {
    return Shape{params->storage_type, type.dims()};
  }
  if (!element.Is(ir::TypeKind::kElement)) {
    return Unimplemented("Kiln cannot run tensors of ", ir::PrintType(element), " yet");
  }
  return Shape{element.element_type(), type.dims()};
}

StatusOr<ValueId> Lowering::Lookup(const ir::Value* value) {
  if (auto it = values_.find(value); it != values_.end()) return it->second;
  if (auto it = padded_.find(value); it != padded_.end()) {
    // Uneven tiles, used whole: gathered without their padding (the tiles
    // stay for the rules that take them).
    KILN_ASSIGN_OR_RETURN(Shape global, ShapeOf(value));
    const Tiles held = it->second;
    const size_t before = graph_.nodes.size();
    KILN_ASSIGN_OR_RETURN(ValueId id, GatherTiles(held.local, global, held.sharding));
    if (graph_.nodes.size() > before && lowering_op_ != nullptr) {
      graph_.nodes.back().detail = StrCat("for ", lowering_op_->name(), " at ",
                                          Where(*lowering_op_));
    }
    values_[value] = id;
    return id;
  }
  if (auto it = ungathered_.find(value);
      it != ungathered_.end() && captured_tiles_.count(value) == 0) {
    if (!it->second.sharding.unreduced.empty()) {
      // Partial sums: summed first.
      KILN_RETURN_IF_ERROR(SumPartials(value));
      it = ungathered_.find(value);
      if (it == ungathered_.end()) return values_.at(value);  // summed whole
    }
    // An entry parameter held as tiles, used whole for the first time.
    KILN_ASSIGN_OR_RETURN(Shape global, ShapeOf(value));
    const size_t before = graph_.nodes.size();
    KILN_ASSIGN_OR_RETURN(ValueId id, GatherTiles(it->second.local, global, it->second.sharding));
    if (graph_.nodes.size() > before && lowering_op_ != nullptr) {
      // `kiln plan` names the op that needed the whole array.
      graph_.nodes.back().detail = StrCat("for ", lowering_op_->name(), " at ",
                                          Where(*lowering_op_));
    }
    values_[value] = id;
    return id;
  }
  if (value->type().Is(ir::TypeKind::kTuple)) {
    return Unimplemented("a tuple value used as an operand, argument or result; Kiln takes "
                         "tuples apart only with get_tuple_element where stablehlo.tuple builds "
                         "them");
  }
  if (parent_ == nullptr) {
    return Internal("a value is used before it is defined (the verifier should have caught it)");
  }
  // Defined outside this region: capture it as an extra parameter.
  KILN_ASSIGN_OR_RETURN(ValueId outer, parent_->Lookup(value));
  const ValueId id = graph_.AddValue(parent_->graph_.shape(outer));
  graph_.parameters.push_back(id);
  captured_outer_.push_back(outer);
  values_[value] = id;
  return id;
}

const Lowering::Tiles* Lowering::HeldAsTiles(const ir::Value* value) {
  if (auto found = ungathered_.find(value); found != ungathered_.end()) return &found->second;
  if (!tile_captures_ || parent_ == nullptr || values_.count(value) != 0) return nullptr;
  const Tiles* outer = parent_->HeldAsTiles(value);
  if (outer == nullptr) return nullptr;
  // Captured as an extra parameter, like Lookup's captures.
  const ValueId id = graph_.AddValue(parent_->graph_.shape(outer->local));
  graph_.parameters.push_back(id);
  captured_outer_.push_back(outer->local);
  // Used whole, it is gathered once outside the region (Lookup).
  captured_tiles_.insert(value);
  return &ungathered_.emplace(value, Tiles{id, outer->sharding}).first->second;
}

StatusOr<ValueId> Lowering::Input(const ir::Operation& op, size_t i) {
  return Lookup(op.operand(i));
}

Status Lowering::LowerBlock(const ir::Block& block, std::vector<ValueId>* results) {
  for (const auto& op : block.operations()) {
    const ir::OpCode code = op->code();
    if (code == ir::OpCode::kFuncReturn || code == ir::OpCode::kReturn ||
        code == ir::OpCode::kSdyReturn) {
      std::vector<ValueId>& target = return_values_ != nullptr ? *return_values_ : *results;
      target.clear();
      RegionTiles* tiling = return_values_ == nullptr ? region_results_ : nullptr;
      for (size_t i = 0; i < op->operands().size(); ++i) {
        if (tiling != nullptr && tiling->probe) {
          const Tiles* tiles = HeldAsTiles(op->operand(i));
          tiling->observed.push_back(tiles != nullptr ? std::optional(tiles->sharding)
                                                      : std::nullopt);
        } else if (tiling != nullptr && i < tiling->results.size() && tiling->results[i]) {
          KILN_ASSIGN_OR_RETURN(ValueId tile, LocalTile(op->operand(i), *tiling->results[i]));
          target.push_back(tile);
          continue;
        }
        if (return_values_ != nullptr && returns_tiles_ && HeldAsTiles(op->operand(i))) {
          // An inlined function's result held as tiles (or partial sums)
          // stays so (InlineFunction binds it): nothing gathers or sums it.
          target.push_back(HeldAsTiles(op->operand(i))->local);
          continue;
        }
        if (return_values_ != nullptr && returns_padded_ && HeldAsPadded(op->operand(i)) &&
            values_.count(op->operand(i)) == 0) {
          target.push_back(HeldAsPadded(op->operand(i))->local);  // likewise uneven tiles
          continue;
        }
        KILN_ASSIGN_OR_RETURN(ValueId id, Input(*op, i));
        target.push_back(id);
      }
      continue;
    }
    Status status = LowerOp(*op);
    if (!status.ok() && !*annotated_) {
      // The innermost failing op names itself; enclosing ops pass it on.
      *annotated_ = true;
      return Status(status.code(), StrCat(Where(*op), ": ", op->name(), ": ", status.message()));
    }
    KILN_RETURN_IF_ERROR(status);
  }
  return Status::Ok();
}

Status Lowering::LowerOp(const ir::Operation& op) {
  const ir::Operation* outer = lowering_op_;
  lowering_op_ = &op;
  Status status = LowerOpAs(op);
  lowering_op_ = outer;
  return status;
}

Status Lowering::LowerOpAs(const ir::Operation& op) {
  if (op.code() == ir::OpCode::kFuncCall) return InlineCall(op);
  if (NeedsQuantizedLowering(op)) return LowerQuantized(*this, op);
  if (spmd_ != nullptr && op.code() == ir::OpCode::kCustomCall) {
    KILN_ASSIGN_OR_RETURN(bool gspmd, LowerGspmdCustomCall(*this, op));
    if (gspmd) return Status::Ok();
  }
  // (In a manual computation's body, ops compute on tiles of the
  // automatic axes: values held so split only over those.)
  if (spmd_ != nullptr && spmd_->on_tiles) {
    KILN_ASSIGN_OR_RETURN(bool on_tiles, LowerOnTiles(*this, op));
    if (on_tiles) return Status::Ok();
  }
  const LoweringRule* rule = Rules().at(static_cast<size_t>(op.code()));
  if (rule == nullptr) {
    return Unimplemented("Kiln cannot run this op yet");
  }
  if (!ir::CheckOpDescriptions()) return rule->lower(*this, op);
  // Test runs: every attribute the rule reads must be declared in ops.def.
  Status status = [&] {
    ir::AttributeReadCheck check;
    return rule->lower(*this, op);
  }();
  std::string undeclared = ir::TakeUndeclaredAttributeReads();
  if (!undeclared.empty()) {
    return Internal("the lowering read attributes src/ir/ops.def does not declare (", undeclared,
                    ")");
  }
  return status;
}

Status Lowering::InlineRegion(const ir::Region& region, std::vector<ValueId>* results,
                              bool keep_tiles) {
  if (region.num_blocks() != 1) return InvalidArgument("a region without a body");
  if (depth_ + static_cast<int>(call_stack_.size()) >= kMaxDepth) {
    return Unimplemented("regions nest deeper than ", kMaxDepth);
  }
  const ir::Block& block = region.block(0);
  std::vector<ValueId>* saved = return_values_;
  const bool saved_returns_tiles = returns_tiles_;
  returns_tiles_ = keep_tiles;  // else its callers bind the results as whole values
  const bool saved_returns_padded = returns_padded_;
  returns_padded_ = false;
  return_values_ = results;
  call_stack_.push_back(&block);
  Status status = LowerBlock(block, results);
  call_stack_.pop_back();
  return_values_ = saved;
  returns_tiles_ = saved_returns_tiles;
  returns_padded_ = saved_returns_padded;
  return status;
}

Status Lowering::InlineBody(const ir::Region& region, std::span<const ValueId> arguments,
                            std::vector<ValueId>* results, bool manual,
                            std::span<const std::optional<TensorSharding>> tiles) {
  if (region.num_blocks() != 1 || region.block(0).num_arguments() != arguments.size()) {
    return InvalidArgument("the body takes ",
                           region.num_blocks() == 1 ? region.block(0).num_arguments() : 0,
                           " arguments, the op gives ", arguments.size());
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (i < tiles.size() && tiles[i]) {
      BindTiles(region.block(0).argument(i), arguments[i], *tiles[i]);
    } else {
      Bind(region.block(0).argument(i), arguments[i]);
    }
  }
  if (!manual) return InlineRegion(region, results);
  ++manual_depth_;
  // Tiles over automatic axes leave as they are.
  Status status = InlineRegion(region, results, /*keep_tiles=*/true);
  --manual_depth_;
  return status;
}

ir::Value* Lowering::StandIn(ValueId id, ir::Type type) {
  auto holder = std::make_unique<ir::Operation>("kiln.stand_in");
  ir::Value* value = holder->AddResult(std::move(type));
  Adopt(std::move(holder));
  Bind(value, id);
  return value;
}

StatusOr<ValueId> Lowering::LocalTile(const ir::Value* value, const TensorSharding& sharding) {
  KILN_ASSIGN_OR_RETURN(Shape global, ShapeOf(value));
  if (const Tiles* partial = PartialTiles(value);
      partial != nullptr && SameTiling(partial->sharding, sharding, global.dims)) {
    return partial->local;
  }
  if (auto it = ungathered_.find(value); it != ungathered_.end()) {
    if (SameTiling(it->second.sharding, sharding, global.dims)) return it->second.local;
    KILN_ASSIGN_OR_RETURN(std::optional<ValueId> finer, EmitFinerTile(*this, it->second, sharding));
    if (finer) return *finer;
    if (!it->second.sharding.unreduced.empty()) {
      KILN_RETURN_IF_ERROR(SumPartials(value, sharding.unreduced.empty() ? &sharding : nullptr));
      it = ungathered_.find(value);
      if (it != ungathered_.end() && SameTiling(it->second.sharding, sharding, global.dims)) {
        return it->second.local;  // summed into these tiles (a reduce_scatter)
      }
    }
  }
  if (!sharding.unreduced.empty()) {
    if (auto it = ungathered_.find(value); it != ungathered_.end()) {
      // Tiles along the unreduced axes: each device's tile in zeros.
      KILN_ASSIGN_OR_RETURN(std::optional<ValueId> placed,
                            PlaceAsPartials(it->second, global, sharding));
      if (placed) return *placed;
    }
    // A whole value as partial sums: the tile on the devices first along
    // the unreduced axes, zeros on the others.
    TensorSharding tiles = sharding;
    tiles.unreduced.clear();
    KILN_ASSIGN_OR_RETURN(ValueId tile, LocalTile(value, tiles));
    return EmitPartialShare(*this, tile, sharding);
  }
  // Made again on these tiles where that is cheaper than a cut of the
  // whole (or a gather of other tiles and a cut).
  KILN_ASSIGN_OR_RETURN(std::optional<ValueId> early, TileEarly(value, sharding));
  if (early) return *early;
  // Held as tiles sharing leading axes with these (rows over ("x", "y")
  // wanted over "x"): gathered along the others alone, unless the whole
  // value is at hand.
  if (auto it = ungathered_.find(value); it != ungathered_.end() && !HeldWhole(value)) {
    const Tiles held = it->second;
    KILN_ASSIGN_OR_RETURN(std::optional<ValueId> resharded,
                          EmitReshard(*this, held, global, sharding));
    if (resharded) return *resharded;
  }
  KILN_ASSIGN_OR_RETURN(ValueId id, Lookup(value));
  if (auto it = tiles_.find(id); it != tiles_.end()) {
    if (SameTiling(it->second.sharding, sharding, global.dims)) return it->second.local;
  }
  return EmitTile(*this, id, global, sharding);
}

std::optional<ValueId> Lowering::BoundId(const ir::Value* value) const {
  if (auto bound = values_.find(value); bound != values_.end()) return bound->second;
  if (auto held = ungathered_.find(value);
      held != ungathered_.end() && captured_tiles_.count(value) == 0) {
    return held->second.local;
  }
  return std::nullopt;
}

const ir::Operation* Lowering::ProducerOf(const ir::Value*& value, ValueId id) const {
  for (int step = 0; step < kMaxDepth; ++step) {
    if (BoundId(value) != id) return nullptr;
    const ir::Operation* op = value->defining_op();
    if (op == nullptr) {
      // An inlined function's argument: the call's operand.
      auto call = inlined_by_.find(value);
      if (call == inlined_by_.end()) return nullptr;
      const auto i = static_cast<size_t>(value->index());
      if (value->index() < 0 || i >= call->second->operands().size()) return nullptr;
      value = call->second->operand(i);
      continue;
    }
    if (op->code() != ir::OpCode::kFuncCall) return op;
    // A call's result: the value its function returned.
    ir::Attribute callee = op->GetAttr("callee");
    if (!callee.Is(ir::AttrKind::kSymbolRef) || callee->symbol_path.empty()) return nullptr;
    const ir::Operation* function = module_.LookupFunction(callee->symbol_path.back());
    if (function == nullptr || function->num_regions() != 1 ||
        function->region(0).num_blocks() != 1) {
      return nullptr;
    }
    const ir::Operation* terminator = function->region(0).block(0).back();
    const auto r = static_cast<size_t>(value->index());
    if (terminator == nullptr || value->index() < 0 || r >= terminator->operands().size()) {
      return nullptr;
    }
    value = terminator->operand(r);
  }
  return nullptr;
}

StatusOr<std::optional<ValueId>> Lowering::PlaceAsPartials(const Tiles& tiles, const Shape& global,
                                                           const TensorSharding& sharding) {
  const TensorSharding& held = tiles.sharding;
  if (!held.unreduced.empty() || held.dims.size() != sharding.dims.size() ||
      !on_tiles::SameMesh(held.mesh, sharding.mesh)) {
    return std::optional<ValueId>();
  }
  // Each dimension keeps its axes or leaves them all to the unreduced
  // ones, which are exactly the axes left.
  TensorSharding placed = on_tiles::Unsplit(held.mesh, held.dims.size());
  std::vector<std::string> left, unreduced;
  for (size_t d = 0; d < held.dims.size(); ++d) {
    if (on_tiles::SameAxes(held.dims[d], sharding.dims[d])) continue;
    if (!sharding.dims[d].empty()) return std::optional<ValueId>();
    placed.dims[d] = held.dims[d];
    for (const AxisRef& ref : held.dims[d])
      left.push_back(StrCat(ref.name, ":", ref.pre_size, ":", ref.size));
  }
  for (const AxisRef& ref : sharding.unreduced)
    unreduced.push_back(StrCat(ref.name, ":", ref.pre_size, ":", ref.size));
  std::sort(left.begin(), left.end());
  std::sort(unreduced.begin(), unreduced.end());
  if (left.empty() || left != unreduced) return std::optional<ValueId>();
  KILN_ASSIGN_OR_RETURN(std::vector<int64_t> dims, sharding.LocalDims(global.dims));
  KILN_ASSIGN_OR_RETURN(ValueId local, EmitPlaceTile(*this, tiles.local,
                                                     Shape{global.element_type, dims}, placed));
  return std::optional<ValueId>(local);
}

const Lowering::Tiles* Lowering::PartialTiles(const ir::Value* value) {
  if (auto it = partials_.find(value); it != partials_.end()) return &it->second;
  const Tiles* tiles = HeldAsTiles(value);
  return tiles != nullptr && !tiles->sharding.unreduced.empty() ? tiles : nullptr;
}

Status Lowering::SumPartials(const ir::Value* value, const TensorSharding* into) {
  auto it = ungathered_.find(value);
  if (it == ungathered_.end() || it->second.sharding.unreduced.empty()) return Status::Ok();
  const Tiles partial = it->second;  // `it` may not outlive the ops emitted below
  Tiles summed = partial;
  const std::vector<AxisRef> axes = std::move(summed.sharding.unreduced);
  summed.sharding.unreduced.clear();
  Shape local = graph_.shape(summed.local);
  const ir::Type type = ir::Type::Tensor(value->type().element(), local.dims);
  static const ir::Operation* const kAt = new ir::Operation("kiln.spmd_sum_partials");
  // One dimension of `into` split over the unreduced axes, in order, the
  // value whole otherwise: a reduce_scatter.
  std::optional<size_t> scatter;
  if (into != nullptr && summed.sharding.IsReplicated() && into->unreduced.empty() &&
      into->dims.size() == local.dims.size() &&
      into->mesh.num_devices() == summed.sharding.mesh.num_devices() &&
      into->LocalDims(local.dims).ok()) {
    for (size_t d = 0; d < into->dims.size(); ++d) {
      if (into->dims[d].empty()) continue;
      const bool same = into->dims[d].size() == axes.size() &&
                        std::equal(axes.begin(), axes.end(), into->dims[d].begin(),
                                   [](const AxisRef& a, const AxisRef& b) {
                                     return a.name == b.name && a.pre_size == b.pre_size &&
                                            a.size == b.size;
                                   });
      scatter = same && !scatter ? std::optional<size_t>(d) : std::nullopt;
      if (!same) break;
    }
    if (scatter && !on_tiles::SameMesh(into->mesh, summed.sharding.mesh)) scatter.reset();
  }
  if (scatter) {
    KILN_ASSIGN_OR_RETURN(ValueId tile,
                          on_tiles::ScatterOverAxes(*this, *kAt, summed.local, type,
                                                    summed.sharding.mesh, axes, *scatter));
    partials_.insert_or_assign(value, partial);
    ungathered_[value] = Tiles{tile, *into};
    return Status::Ok();
  }
  KILN_ASSIGN_OR_RETURN(summed.local,
                        on_tiles::ReduceOverAxes(*this, *kAt, summed.local, type,
                                                 summed.sharding.mesh, axes, "stablehlo.add"));
  partials_.insert_or_assign(value, partial);
  if (summed.sharding.IsReplicated()) {
    ungathered_.erase(value);
    values_[value] = summed.local;
  } else {
    ungathered_[value] = std::move(summed);
  }
  return Status::Ok();
}

StatusOr<ValueId> Lowering::GatherTiles(ValueId local, const Shape& global,
                                        const TensorSharding& sharding) {
  KILN_ASSIGN_OR_RETURN(ValueId id, EmitGather(*this, local, global, sharding));
  tiles_.emplace(id, Tiles{local, sharding});
  return id;
}

Status Lowering::InlineCall(const ir::Operation& call) { return InlineFunction(call, "callee"); }

Status Lowering::InlineFunction(const ir::Operation& call, std::string_view attribute, bool whole) {
  ir::Attribute callee = call.GetAttr(attribute);
  if (!callee.Is(ir::AttrKind::kSymbolRef) || callee->symbol_path.empty()) {
    return InvalidArgument("expected a function symbol in attribute '", attribute, "'");
  }
  const ir::Operation* function = module_.LookupFunction(callee->symbol_path.back());
  if (function == nullptr || function->num_regions() != 1 ||
      function->region(0).num_blocks() != 1) {
    return InvalidArgument("no function body for @", callee->symbol_path.back());
  }
  if (depth_ + static_cast<int>(call_stack_.size()) >= kMaxDepth) {
    return Unimplemented("calls nest deeper than ", kMaxDepth,
                         " (recursive functions cannot be inlined)");
  }
  const ir::Block& body = function->region(0).block(0);
  for (size_t i = 0; i < body.num_arguments() && i < call.operands().size(); ++i) {
    if (const Tiles* tiles = whole ? nullptr : HeldAsTiles(call.operand(i))) {
      const Tiles kept = *tiles;
      BindTiles(body.argument(i), kept.local, kept.sharding);
      continue;
    }
    if (const Tiles* tiles = whole ? nullptr : HeldAsPadded(call.operand(i));
        tiles != nullptr && values_.count(call.operand(i)) == 0) {
      const Tiles kept = *tiles;
      BindPadded(body.argument(i), kept.local, kept.sharding);
      continue;
    }
    KILN_ASSIGN_OR_RETURN(ValueId id, Input(call, i));
    Bind(body.argument(i), id);
    inlined_by_[body.argument(i)] = &call;
  }
  std::vector<ValueId> returned;
  std::vector<ValueId>* saved = return_values_;
  const bool saved_returns_tiles = returns_tiles_;
  const bool saved_returns_padded = returns_padded_;
  return_values_ = &returned;
  returns_tiles_ = true;
  returns_padded_ = true;
  call_stack_.push_back(&body);
  Status status = LowerBlock(body, nullptr);
  call_stack_.pop_back();
  return_values_ = saved;
  returns_tiles_ = saved_returns_tiles;
  returns_padded_ = saved_returns_padded;
  KILN_RETURN_IF_ERROR(status);
  if (returned.size() != call.num_results()) {
    return InvalidArgument("@", callee->symbol_path.back(), " returns ", returned.size(),
                           " values, the op expects ", call.num_results());
  }
  // Results the body holds as tiles stay tiles.
  const ir::Operation* terminator = body.back();
  for (size_t i = 0; i < returned.size(); ++i) {
    const Tiles* tiles = terminator != nullptr && i < terminator->operands().size()
                             ? HeldAsTiles(terminator->operand(i))
                             : nullptr;
    const Tiles* padded = terminator != nullptr && i < terminator->operands().size()
                              ? HeldAsPadded(terminator->operand(i))
                              : nullptr;
    if (tiles != nullptr) {
      const Tiles kept = *tiles;
      BindTiles(call.result(i), kept.local, kept.sharding);
    } else if (padded != nullptr && values_.count(terminator->operand(i)) == 0) {
      const Tiles kept = *padded;
      BindPadded(call.result(i), kept.local, kept.sharding);
    } else {
      Bind(call.result(i), returned[i]);
    }
  }
  return Status::Ok();
}

StatusOr<std::shared_ptr<const Graph>> Lowering::LowerRegion(const ir::Region& region,
                                                             std::vector<ValueId>* captures) {
  if (region.num_blocks() != 1) return InvalidArgument("a region without a body");
  if (depth_ + 1 >= kMaxDepth) {
    return Unimplemented("regions nest deeper than ", kMaxDepth);
  }
  auto graph = std::make_shared<Graph>();
  Lowering inner(module_, *graph, this, depth_ + 1);
  inner.annotated_ = annotated_;
  inner.spmd_ = spmd_;
  inner.manual_depth_ = manual_depth_;
  // The bodies of loops and branches run on every device alike, so their
  // ops may compute on tiles of the values around them (lower_on_tiles_regions.cc).
  const ir::Operation* owner = region.parent_op();
  const ir::OpCode code = owner != nullptr ? owner->code() : ir::OpCode::kUnknown;
  inner.tile_captures_ = spmd_ != nullptr && spmd_->on_tiles && manual_depth_ == 0 &&
                         (code == ir::OpCode::kWhile || code == ir::OpCode::kIf ||
                          code == ir::OpCode::kCase);
  auto tiling = region_tiles_.find(&region);
  if (tiling != region_tiles_.end()) inner.region_results_ = &tiling->second;
  const ir::Block& block = region.block(0);
  inner.region_block_ = &block;
  for (size_t i = 0; i < block.num_arguments(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, inner.ShapeOf(block.argument(i)));
    if (inner.region_results_ != nullptr && i < inner.region_results_->arguments.size() &&
        inner.region_results_->arguments[i]) {
      const TensorSharding& sharding = *inner.region_results_->arguments[i];
      KILN_ASSIGN_OR_RETURN(shape.dims, sharding.LocalDims(shape.dims));
      const ValueId id = graph->AddValue(std::move(shape));
      graph->parameters.push_back(id);
      inner.BindTiles(block.argument(i), id, sharding);
      continue;
    }
    const ValueId id = graph->AddValue(std::move(shape));
    graph->parameters.push_back(id);
    inner.Bind(block.argument(i), id);
  }
  KILN_RETURN_IF_ERROR(inner.LowerBlock(block, &graph->results));
  if (spmd_ != nullptr) KILN_RETURN_IF_ERROR(CombineCollectives(inner));
  EliminateDeadNodes(*graph);
  FuseElementwise(*graph);
  PlanBuffers(*graph);
  *captures = inner.captured_outer_;
  return std::shared_ptr<const Graph>(std::move(graph));
}

Status Lowering::EmitWithRegions(const ir::Operation& op, RunFn run, bool foldable) {
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId id, Input(op, i));
    inputs.push_back(id);
  }
  std::vector<std::shared_ptr<const Graph>> regions;
  std::vector<std::vector<size_t>> capture_indexes;
  for (size_t r = 0; r < op.num_regions(); ++r) {
    std::vector<ValueId> captured;
    KILN_ASSIGN_OR_RETURN(auto graph, LowerRegion(op.region(r), &captured));
    regions.push_back(std::move(graph));
    std::vector<size_t> indexes;
    for (ValueId value : captured) {
      indexes.push_back(inputs.size());
      inputs.push_back(value);
    }
    capture_indexes.push_back(std::move(indexes));
  }
  std::vector<Shape> outputs;
  for (size_t i = 0; i < op.num_results(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, ShapeOf(op.result(i)));
    outputs.push_back(std::move(shape));
  }
  // A body with side effects (a host callback in a loop or a branch) makes
  // the op one: it is never folded nor removed when its results are unused.
  // When every such effect may run on the caller's thread (users' FFI
  // handlers), so may the op: a fori_loop calling a handler went to the
  // device's worker, a wake-up per call (53 us of a 1000-trip loop's 144).
  bool effects = false;
  bool effects_run_inline = true;
  for (const auto& region : regions) {
    for (const Node& node : region->nodes) {
      if (!node.has_side_effects) continue;
      effects = true;
      effects_run_inline = effects_run_inline && node.side_effects_run_inline;
    }
  }
  const size_t before = graph_.nodes.size();
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        EmitNode(op, std::move(inputs), std::move(outputs), std::move(run),
                                 std::move(regions), std::move(capture_indexes),
                                 foldable && !effects));
  if (foldable && effects && effects_run_inline && graph_.nodes.size() > before) {
    graph_.nodes.back().side_effects_run_inline = true;
  }
  for (size_t i = 0; i < ids.size(); ++i) Bind(op.result(i), ids[i]);
  return Status::Ok();
}

Status Lowering::Emit(const ir::Operation& op, RunFn run) {
  std::vector<ValueId> inputs;
  for (size_t i = 0; i < op.operands().size(); ++i) {
    KILN_ASSIGN_OR_RETURN(ValueId id, Input(op, i));
    inputs.push_back(id);
  }
  std::vector<Shape> outputs;
  for (size_t i = 0; i < op.num_results(); ++i) {
    KILN_ASSIGN_OR_RETURN(Shape shape, ShapeOf(op.result(i)));
    outputs.push_back(std::move(shape));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<ValueId> ids,
                        EmitNode(op, std::move(inputs), std::move(outputs), std::move(run)));
  for (size_t i = 0; i < ids.size(); ++i) Bind(op.result(i), ids[i]);
  return Status::Ok();
}

Status Lowering::EmitPointwise(const ir::Operation& op, PointwiseMap map, Pointwise::F32 f32) {
  auto pointwise = std::make_shared<Pointwise>();
  pointwise->map = std::move(map);
  pointwise->f32 = f32;
  const size_t before = graph_.nodes.size();
  KILN_RETURN_IF_ERROR(Emit(op, [pointwise](RunContext& ctx) {
    constexpr size_t kMaxInputs = 4;
    std::array<const void*, kMaxInputs> inputs{};
    const size_t count = std::min(ctx.num_inputs(), kMaxInputs);
    for (size_t i = 0; i < count; ++i) inputs[i] = ctx.in(i);
    return pointwise->map(std::span<const void* const>(inputs.data(), count), ctx.out(0),
                          ctx.out_shape(0).NumElements());
  }));
  // Folded into a constant: no node.
  if (graph_.nodes.size() > before && op.operands().size() <= 4) {
    Node& node = graph_.nodes.back();
    node.pointwise = std::move(pointwise);
    std::vector<Shape> outputs;
    for (ValueId id : node.outputs) outputs.push_back(graph_.shape(id));
    node.source = DetachForListing(op, outputs);
  }
  return Status::Ok();
}

StatusOr<std::vector<ValueId>> Lowering::EmitNode(const ir::Operation& op,
                                                  std::vector<ValueId> inputs,
                                                  std::vector<Shape> outputs, RunFn run,
                                                  std::vector<std::shared_ptr<const Graph>> regions,
                                                  std::vector<std::vector<size_t>> captures,
                                                  bool foldable) {
  Node node;
  node.op = op.name();
  node.location = Where(op);
  node.inputs = std::move(inputs);
  node.run = std::move(run);
  node.regions = std::move(regions);
  node.region_captures = std::move(captures);
  node.region_captures.resize(node.regions.size());
  if (spmd_ != nullptr && ListedAsItself(op)) {
    if (auto listed = DetachForListing(op, outputs)) node.listing.push_back(std::move(listed));
  }
  for (Shape& shape : outputs) node.outputs.push_back(graph_.AddValue(std::move(shape)));
  std::vector<ValueId> ids = node.outputs;
  bool folded = false;
  if (foldable) {
    KILN_ASSIGN_OR_RETURN(folded, TryFold(node));
  } else {
    node.has_side_effects = true;
  }
  if (!folded) graph_.nodes.push_back(std::move(node));
  return ids;
}

StatusOr<bool> Lowering::TryFold(Node& node) {
  if (node.has_side_effects) return false;
  for (ValueId in : node.inputs) {
    if (!graph_.values[static_cast<size_t>(in)].constant) return false;
  }
  size_t total = 0;
  for (ValueId out : node.outputs) total += graph_.values[static_cast<size_t>(out)].bytes;
  if (total > kMaxFoldedBytes) return false;
  // Run the node alone in a one-node graph over the constants.
  Graph scratch;
  Node copy = node;
  copy.inputs.clear();
  copy.outputs.clear();
  std::vector<const void*> parameters;
  for (ValueId in : node.inputs) {
    const ValueInfo& info = graph_.values[static_cast<size_t>(in)];
    copy.inputs.push_back(scratch.AddValue(info.shape));
    scratch.parameters.push_back(copy.inputs.back());
    parameters.push_back(info.constant->data());
  }
  std::vector<std::vector<uint8_t>> data;
  std::vector<void*> results;
  for (ValueId out : node.outputs) {
    const ValueInfo& info = graph_.values[static_cast<size_t>(out)];
    copy.outputs.push_back(scratch.AddValue(info.shape));
    scratch.results.push_back(copy.outputs.back());
    data.emplace_back(std::max<size_t>(info.bytes, 1));
  }
  for (auto& bytes : data) results.push_back(bytes.data());
  scratch.nodes.push_back(std::move(copy));
  PlanBuffers(scratch);
  ExecutionEnv env;
  Status status = Execute(scratch, parameters, results, env);
  if (!status.ok()) return false;  // leave it to run time, which reports the error
  for (size_t i = 0; i < node.outputs.size(); ++i) {
    ValueInfo& info = graph_.values[static_cast<size_t>(node.outputs[i])];
    data[i].resize(info.bytes);
    info.constant = std::make_shared<const std::vector<uint8_t>>(std::move(data[i]));
  }
  return true;
}

void EliminateDeadNodes(Graph& graph) {
  std::vector<bool> live(graph.values.size(), false);
  for (ValueId result : graph.results) live[static_cast<size_t>(result)] = true;
  std::vector<bool> keep(graph.nodes.size(), false);
  for (size_t n = graph.nodes.size(); n-- > 0;) {
    const Node& node = graph.nodes[n];
    bool needed = node.has_side_effects;
    for (ValueId out : node.outputs) needed = needed || live[static_cast<size_t>(out)];
    if (!needed) continue;
    keep[n] = true;
    for (ValueId in : node.inputs) live[static_cast<size_t>(in)] = true;
  }
  std::vector<Node> kept;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    if (keep[n]) kept.push_back(std::move(graph.nodes[n]));
  }
  graph.nodes = std::move(kept);
}

StatusOr<std::vector<uint8_t>> DenseData(const ir::Attribute& value, const Shape& shape) {
  if (!value.Is(ir::AttrKind::kDenseElements)) {
    return InvalidArgument("expected dense elements for ", shape.ToString());
  }
  const size_t bytes = shape.ByteSize();
  const size_t element = GetElementTypeInfo(shape.element_type).storage_bytes;
  const std::vector<uint8_t>& source = value->data;
  std::vector<uint8_t> data;
  if (value->splat) {
    if (source.size() < element) return InvalidArgument("a dense splat is too short");
    data.resize(bytes);
    for (size_t offset = 0; offset < bytes; offset += element) {
      std::memcpy(data.data() + offset, source.data(), element);
    }
  } else {
    if (source.size() != bytes) {
      return InvalidArgument("dense data holds ", source.size(), " bytes, ", shape.ToString(),
                             " needs ", bytes);
    }
    data = source;
  }
  const ElementType type = shape.element_type;
  if (type == ElementType::kS1 || type == ElementType::kS2 || type == ElementType::kS4) {
    const int width = GetElementTypeInfo(type).bit_width;
    for (uint8_t& byte : data) {
      byte = static_cast<uint8_t>(static_cast<int8_t>(static_cast<uint8_t>(byte << (8 - width))) >>
                                  (8 - width));
    }
  }
  return data;
}

std::vector<int64_t> IntsAttr(const ir::Operation& op, std::string_view name) {
  return ir::IntegersOf(op.GetAttr(name)).value_or(std::vector<int64_t>{});
}

int64_t IntAttr(const ir::Operation& op, std::string_view name, int64_t fallback) {
  ir::Attribute attribute = op.GetAttr(name);
  if (attribute.Is(ir::AttrKind::kInteger)) return attribute->int_value;
  return fallback;
}

std::string_view EnumAttr(const ir::Operation& op, std::string_view name,
                          std::string_view fallback) {
  ir::Attribute attribute = op.GetAttr(name);
  if (attribute.Is(ir::AttrKind::kEnum)) return attribute->enum_value;
  return fallback;
}

size_t ElementBytes(ElementType type) { return GetElementTypeInfo(type).storage_bytes; }

std::vector<int64_t> Strides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size());
  kernels::DenseStrides(dims, strides);
  return strides;
}

bool Contains(std::span<const int64_t> dims, int64_t dim) {
  return std::find(dims.begin(), dims.end(), dim) != dims.end();
}

std::vector<int64_t> FieldInts(const ir::Attribute& record, std::string_view field) {
  return ir::IntegersOf(record.Get(field)).value_or(std::vector<int64_t>{});
}

int64_t FieldInt(const ir::Attribute& record, std::string_view field) {
  ir::Attribute value = record.Get(field);
  return value.Is(ir::AttrKind::kInteger) ? value->int_value : 0;
}

}  // namespace kiln::compiler
