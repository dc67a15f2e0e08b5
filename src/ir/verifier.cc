// The verifier's walk: visits every op with an explicit worklist, checks SSA
// dominance, placement of terminators and module-level ops, the generic
// shape of each op (operand, result and region counts) and then the op's own
// constraints (verify_*.cc). func.* ops are checked here.
#include "ir/verifier.h"

#include <algorithm>
#include <array>
#include <functional>
#include <unordered_map>

#include "ir/printer.h"
#include "ir/verifier_internal.h"

namespace kiln::ir {
namespace {

using verify_internal::ElementOf;
using verify_internal::FamilyRule;
using verify_internal::HasKind;
using verify_internal::IsRankedTensor;
using verify_internal::kOpaqueAttributes;
using verify_internal::kReturnTerminated;
using verify_internal::kSdyTerminated;
using verify_internal::kTensorOperands;
using verify_internal::kTensorResults;
using verify_internal::OpContext;
using verify_internal::OpRule;
using verify_internal::SymbolTable;
using verify_internal::TypesText;
using verify_internal::TypeText;

// ---------------------------------------------------------------------------
// func.*

// The function type of a func.func, or null if it has none.
const Type* FunctionType(const Operation& func) {
  Attribute attribute = func.GetAttr("function_type");
  if (!attribute.Is(AttrKind::kType) || !HasKind(attribute->type, TypeKind::kFunction)) {
    return nullptr;
  }
  return &attribute->type;
}

Status VerifyFuncFunc(const OpContext& context) {
  const Operation& op = context.op();
  KILN_RETURN_IF_ERROR(context.String("sym_name").status());
  const Type* type = FunctionType(op);
  if (type == nullptr) {
    return context.Fail("", "attribute 'function_type' must be a function type");
  }
  const Region& body = op.region(0);
  if (body.empty()) return Status::Ok();  // a declaration
  const Block& entry = body.block(0);
  const std::vector<Type>& inputs = type->members();
  if (entry.num_arguments() != inputs.size()) {
    return context.Fail("", "entry block has ", entry.num_arguments(),
                        " arguments but function_type has ", inputs.size(), " inputs");
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (entry.argument(i)->type() != inputs[i]) {
      return context.Fail("", "entry block argument #", i, " has type ",
                          TypeText(entry.argument(i)->type()), " but function_type declares ",
                          TypeText(inputs[i]));
    }
  }
  const Operation* last = entry.back();
  if (last == nullptr || last->code() != OpCode::kFuncReturn) {
    return context.Fail("", "body must end with func.return, found ",
                        last ? last->name() : "an empty block");
  }
  return Status::Ok();
}

Status VerifyFuncReturn(const OpContext& context) {
  // Placement (checked by the walk) makes the parent a func.func whose own
  // checks have passed.
  const Operation& func = *context.op().parent_block()->parent_region()->parent_op();
  const std::vector<Type>& results = FunctionType(func)->results();
  std::vector<Type> returned = context.OperandTypes();
  if (returned.size() != results.size()) {
    return context.Fail("", "returns ", returned.size(), " values but the function_type of @",
                        func.GetAttr("sym_name")->text, " has ", results.size(), " results");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (returned[i] != results[i]) {
      return context.Fail("", "returned value #", i, " has type ", TypeText(returned[i]),
                          " but the function_type of @", func.GetAttr("sym_name")->text,
                          " declares ", TypeText(results[i]));
    }
  }
  return Status::Ok();
}

Status VerifyFuncCall(const OpContext& context) {
  Attribute callee = context.op().GetAttr("callee");
  if (!callee.Is(AttrKind::kSymbolRef) || callee->symbol_path.size() != 1) {
    return context.Fail("", "attribute 'callee' must be a flat symbol reference (@name)");
  }
  const std::string& name = callee->symbol_path[0];
  const Operation* func = context.LookupFunction(name);
  if (func == nullptr) return context.Fail("", "callee @", name, " is not defined in the module");
  if (FunctionType(*func) == nullptr) {
    return context.Fail("", "callee @", name, " has no function_type");
  }
  const Type& type = *FunctionType(*func);
  std::vector<Type> operands = context.OperandTypes();
  std::vector<Type> results = context.ResultTypes();
  if (operands != type.members()) {
    return context.Fail("", "operand types ", TypesText(operands), " do not match @", name,
                        "'s inputs ", TypesText(type.members()));
  }
  if (results != type.results()) {
    return context.Fail("", "result types ", TypesText(results), " do not match @", name,
                        "'s results ", TypesText(type.results()));
  }
  return Status::Ok();
}

constexpr FamilyRule kStructureRules[] = {
    {OpCode::kBuiltinModule, nullptr, 0},
    {OpCode::kUnrealizedConversionCast, nullptr, 0},
    {OpCode::kFuncFunc, VerifyFuncFunc, 0},
    {OpCode::kFuncReturn, VerifyFuncReturn, 0},
    {OpCode::kFuncCall, VerifyFuncCall, 0},
    // sdy: attributes are Opaque text; the compiler reads shardings from it.
    {OpCode::kSdyMesh, nullptr, kOpaqueAttributes},
    {OpCode::kSdyShardingConstraint, nullptr, kOpaqueAttributes},
    {OpCode::kSdyReshard, nullptr, kOpaqueAttributes},
    {OpCode::kSdyManualComputation, nullptr, kOpaqueAttributes | kSdyTerminated},
    {OpCode::kSdyReturn, nullptr, kOpaqueAttributes},
    {OpCode::kSdyShardingGroup, nullptr, kOpaqueAttributes},
    {OpCode::kSdyAllGather, nullptr, kOpaqueAttributes},
    {OpCode::kSdyAllReduce, nullptr, kOpaqueAttributes},
    {OpCode::kSdyAllSlice, nullptr, kOpaqueAttributes},
    {OpCode::kSdyAllToAll, nullptr, kOpaqueAttributes},
    {OpCode::kSdyCollectivePermute, nullptr, kOpaqueAttributes},
    {OpCode::kSdyNamedComputation, nullptr, kOpaqueAttributes | kSdyTerminated},
    {OpCode::kSdyPropagationBarrier, nullptr, kOpaqueAttributes},
    // The StableHLO interpreter's test ops: checked by `kiln run` itself.
    {OpCode::kCheckExpectEq, nullptr, 0},
    {OpCode::kCheckExpectEqConst, nullptr, 0},
    {OpCode::kCheckExpectAlmostEq, nullptr, 0},
    {OpCode::kCheckExpectAlmostEqConst, nullptr, 0},
    {OpCode::kCheckExpectClose, nullptr, 0},
    {OpCode::kCheckExpectSerializedEq, nullptr, 0},
    {OpCode::kInterpreterRunParallel, nullptr, 0},
    {OpCode::kInterpreterPrint, nullptr, 0},
    {OpCode::kInterpreterProbe, nullptr, 0},
};

// The rule of every known op, indexed by OpCode.
const std::array<const OpRule*, kNumOpCodes>& Rules() {
  static const auto* table = [] {
    auto* rules = new std::array<const OpRule*, kNumOpCodes>{};
    const std::span<const FamilyRule> families[] = {
        kStructureRules,
        verify_internal::ElementwiseRules(),
        verify_internal::ShapeRules(),
        verify_internal::IndexingRules(),
        verify_internal::LinalgRules(),
        verify_internal::RegionOpRules(),
        verify_internal::CollectiveRules(),
        verify_internal::MiscRules(),
        verify_internal::ChloRules(),
    };
    // Each family rule with its row's counts; elementwise ops from their
    // rows alone.
    static auto* merged = new std::vector<OpRule>;
    merged->reserve(kNumOpCodes);
    for (std::span<const FamilyRule> family : families) {
      for (const FamilyRule& rule : family) {
        merged->push_back({rule.code, rule.verify, DescribeOp(rule.code).counts, rule.flags});
      }
    }
    for (const OpDescription& description : AllOpDescriptions()) {
      if (!description.elementwise || description.code == OpCode::kUnknown) continue;
      const verify_internal::VerifyFn verify = description.name.starts_with("chlo.")
                                                   ? verify_internal::VerifyChloElementwise
                                                   : verify_internal::VerifyElementwise;
      merged->push_back({description.code, verify, description.counts, verify_internal::kTensors});
    }
    for (const OpRule& rule : *merged) (*rules)[static_cast<size_t>(rule.code)] = &rule;
    return rules;
  }();
  return *table;
}

// ---------------------------------------------------------------------------
// Dominance bookkeeping
//
// An operand is visible at op X if it is an argument of a block being
// walked (X's block or an enclosing one), or the result of an op D in such a
// block that comes before that block's op being walked (X itself, or the op
// whose region holds X). Finding D's position cheaply: a block's ops split
// into a few runs of increasing address (readers allocate ops in order;
// malloc reusing a freed hole starts a new run), and a run is sorted, so D
// is found by binary search. Blocks of many runs record their ops' results
// in a hash set instead. Either way the common path touches no table per
// value, which keeps the verifier in cache.

// Blocks with more runs than this use the hash set.
constexpr size_t kMaxRuns = 32;

// A set of values, for blocks whose ops are not in address order.
class ValueSet {
 public:
  ValueSet() : slots_(1024) {}

  void Insert(const Value* value) {
    if ((count_ + 1) * 2 > slots_.size()) Grow();
    for (size_t i = IndexOf(value);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == value) return;
      if (slots_[i] == nullptr) {
        slots_[i] = value;
        ++count_;
        return;
      }
    }
  }

  bool Contains(const Value* value) const {
    if (count_ == 0) return false;
    for (size_t i = IndexOf(value);; i = (i + 1) & (slots_.size() - 1)) {
      if (slots_[i] == value) return true;
      if (slots_[i] == nullptr) return false;
    }
  }

 private:
  size_t IndexOf(const Value* value) const {
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(value) * 0x9E3779B97F4A7C15ull) >> 32) &
           (slots_.size() - 1);
  }
  void Grow() {
    std::vector<const Value*> old(slots_.size() * 2);
    old.swap(slots_);
    count_ = 0;
    for (const Value* value : old) {
      if (value != nullptr) Insert(value);
    }
  }

  std::vector<const Value*> slots_;
  size_t count_ = 0;
};

// ---------------------------------------------------------------------------
// The walk

// A block being walked: the op to visit next, whether that op's regions
// have been entered (its results become visible only after them), and the
// block's runs of increasing address (none: the hash set is used).
struct Frame {
  const Block* block;
  size_t runs_begin;  // first run start in ModuleVerifier::run_starts_
  size_t runs_end;
  size_t next = 0;
  bool entered = false;

  bool ordered() const { return runs_end > runs_begin; }
};

std::string LocationOf(const Operation& op) { return op.location().ToUserString(); }

bool IsTerminator(OpCode code) {
  return code == OpCode::kReturn || code == OpCode::kFuncReturn || code == OpCode::kSdyReturn;
}

std::string Count(int64_t count, std::string_view noun) {
  return StrCat(count, " ", noun, count == 1 ? "" : "s");
}

class ModuleVerifier {
 public:
  explicit ModuleVerifier(const Module& module) : module_(module) {}

  // An op outside any block (made by a compiler rule): its own constraints
  // only, no placement or dominance.
  Status CheckDetached(const Operation& op) {
    if (op.code() == OpCode::kUnknown) {
      return Unimplemented("Kiln does not know the op '", op.name(), "'");
    }
    OpContext context(op, symbols_);
    for (size_t i = 0; i < op.num_results(); ++i) {
      if (!WellFormed(op.result(i)->type())) {
        return TypeError(op, op.result(i)->type(), StrCat("result #", i));
      }
    }
    const OpRule* rule = Rules()[static_cast<size_t>(op.code())];
    if (rule == nullptr) return CheckAttributes(context);
    KILN_RETURN_IF_ERROR(CheckCounts(context, *rule));
    if (rule->flags & kOpaqueAttributes) return Status::Ok();
    if (rule->verify != nullptr) KILN_RETURN_IF_ERROR(rule->verify(context));
    return CheckAttributes(context);
  }

  Status Run() {
    const Operation& root = module_.op();
    if (root.code() != OpCode::kBuiltinModule || root.num_regions() != 1 ||
        root.region(0).num_blocks() != 1) {
      return InvalidArgument(LocationOf(root),
                             ": expected a builtin.module with one region of one block, found ",
                             root.name());
    }
    KILN_RETURN_IF_ERROR(BuildSymbolTable());
    Push(module_.body());
    while (!frames_.empty()) {
      Frame& frame = frames_.back();
      const auto& ops = frame.block->operations();
      if (frame.next == ops.size()) {
        open_blocks_.erase(frame.block);
        run_starts_.resize(frame.runs_begin);
        frames_.pop_back();
        continue;
      }
      const Operation& op = *ops[frame.next];
      if (!frame.entered) {
        KILN_RETURN_IF_ERROR(CheckOp(op));
        if (op.num_regions() > 0) {
          frame.entered = true;
          KILN_RETURN_IF_ERROR(EnterRegions(op));  // invalidates `frame`
          continue;
        }
      }
      frame.entered = false;
      if (!frame.ordered()) {
        for (size_t i = 0; i < op.num_results(); ++i) unordered_results_.Insert(op.result(i));
      }
      ++frame.next;
    }
    return Status::Ok();
  }

 private:
  void Push(const Block& block) {
    open_blocks_.emplace(&block, frames_.size());
    const size_t begin = run_starts_.size();
    const auto& ops = block.operations();
    std::less<const Operation*> less;
    for (size_t i = 0; i < ops.size(); ++i) {
      if (i > 0 && less(ops[i - 1].get(), ops[i].get())) continue;
      if (run_starts_.size() - begin == kMaxRuns) {
        run_starts_.resize(begin);
        break;
      }
      run_starts_.push_back(i);
    }
    frames_.push_back(Frame{&block, begin, run_starts_.size()});
  }

  // Whether `definer`, an op of the block `frame` walks, comes before the
  // op at `current` in it.
  bool Before(const Frame& frame, const Operation* definer, size_t current) const {
    const auto& ops = frame.block->operations();
    for (size_t back = 1; back <= 4 && back <= current; ++back) {
      if (ops[current - back].get() == definer) return true;
    }
    std::less<const Operation*> less;
    for (size_t r = frame.runs_begin; r < frame.runs_end; ++r) {
      const size_t begin = run_starts_[r];
      if (begin >= current) break;
      const size_t end = std::min(r + 1 < frame.runs_end ? run_starts_[r + 1] : ops.size(),
                                  current);
      auto it = std::lower_bound(ops.begin() + begin, ops.begin() + end, definer,
                                 [&](const std::unique_ptr<Operation>& op, const Operation* key) {
                                   return less(op.get(), key);
                                 });
      if (it != ops.begin() + end && it->get() == definer) return true;
    }
    return false;
  }

  // Pushes the blocks of `op`'s regions, last first so they are walked in
  // order, after checking their arguments' types.
  Status EnterRegions(const Operation& op) {
    for (size_t r = op.num_regions(); r-- > 0;) {
      for (size_t b = op.region(r).num_blocks(); b-- > 0;) {
        const Block& block = op.region(r).block(b);
        for (size_t i = 0; i < block.num_arguments(); ++i) {
          if (!WellFormed(block.argument(i)->type())) {
            return TypeError(op, block.argument(i)->type(),
                             StrCat("region #", r, " argument #", i));
          }
        }
        Push(block);
      }
    }
    return Status::Ok();
  }

  Status BuildSymbolTable() {
    for (const auto& op : module_.body().operations()) {
      if (op->code() != OpCode::kFuncFunc) continue;
      Attribute name = op->GetAttr("sym_name");
      if (!name.Is(AttrKind::kString)) continue;  // reported when the op is checked
      if (!symbols_.emplace(name->text, op.get()).second) {
        return InvalidArgument(LocationOf(*op), ": func.func: redefinition of symbol @",
                               name->text);
      }
    }
    return Status::Ok();
  }

  // A value's type is present, and a tensor's sizes are >= 0 or dynamic.
  static bool WellFormed(const Type& type) {
    if (!type) return false;
    if (!HasKind(type, TypeKind::kTensor)) return true;
    for (int64_t dim : type.dims()) {
      if (dim < 0 && dim != kDynamic) return false;
    }
    return static_cast<bool>(ElementOf(type));
  }

  // Why `type`, of the value `what` of `op`, is not WellFormed.
  static Status TypeError(const Operation& op, const Type& type, const std::string& what) {
    const std::string prefix = StrCat(LocationOf(op), ": ", op.name(), ": ", what);
    if (!type) return InvalidArgument(prefix, " has no type");
    if (!ElementOf(type)) return InvalidArgument(prefix, " is a tensor without an element type");
    return InvalidArgument(prefix, " has type ", TypeText(type), " with a negative dimension size");
  }

  // The frame walking `block`, or null if `block` is not being walked.
  const Frame* FrameOf(const Block* block) const {
    if (block == frames_.back().block) return &frames_.back();
    auto it = open_blocks_.find(block);
    return it == open_blocks_.end() ? nullptr : &frames_[it->second];
  }

  Status CheckOperands(const OpContext& context) {
    const Operation& op = context.op();
    for (size_t i = 0; i < op.operands().size(); ++i) {
      const Value* value = op.operand(i);
      if (value == nullptr) return context.Fail("", "operand #", i, " is null");
      if (value->owner_block() != nullptr) {  // a block argument
        if (FrameOf(value->owner_block()) != nullptr) continue;
        return context.Fail("", "operand #", i,
                            " is an argument of a block that does not enclose this op");
      }
      const Operation* definer = value->defining_op();
      if (definer == nullptr) return context.Fail("", "operand #", i, " has no definition");
      const Frame* frame = FrameOf(definer->parent_block());
      if (frame == nullptr) {
        return context.Fail("", "operand #", i,
                            " is defined inside a region that does not enclose this op");
      }
      // The op of that block being walked: this op, or the one enclosing it.
      const Operation* current = frame->block->operations()[frame->next].get();
      if (definer == current) {
        if (definer == &op) {
          return context.Fail("", "operand #", i, " is a result of this op itself");
        }
        return context.Fail("", "operand #", i, " is a result of the enclosing ", definer->name(),
                            ", which is not visible inside its regions");
      }
      const bool before = frame->ordered() ? Before(*frame, definer, frame->next)
                                           : unordered_results_.Contains(value);
      if (!before) return context.Fail("", "operand #", i, " is used before its definition");
    }
    return Status::Ok();
  }

  // Where an op may appear: func.func and sdy.mesh at module level only,
  // terminators last in a region of the right kind of op.
  Status CheckPlacement(const OpContext& context) {
    const Operation& op = context.op();
    const Block* block = op.parent_block();
    const Operation* parent = block ? block->parent_region()->parent_op() : nullptr;
    const bool at_module_level = parent == &module_.op();
    const bool module_op = op.code() == OpCode::kFuncFunc || op.code() == OpCode::kSdyMesh;
    if (module_op != at_module_level) {
      return context.Fail("", at_module_level
                                  ? "only func.func and sdy.mesh may appear at module level"
                                  : "may only appear at module level");
    }
    if (!IsTerminator(op.code())) return Status::Ok();
    if (block->back() != &op) return context.Fail("", "must be the last op of its block");
    const OpCode parent_code = parent->code();
    const bool parent_is_sdy = parent_code == OpCode::kSdyManualComputation ||
                               parent_code == OpCode::kSdyNamedComputation;
    const bool fits = op.code() == OpCode::kFuncReturn ? parent_code == OpCode::kFuncFunc
                      : op.code() == OpCode::kSdyReturn
                          ? parent_is_sdy
                          : parent_code != OpCode::kFuncFunc && !parent_is_sdy;
    if (!fits) return context.Fail("", "may not end a region of ", parent->name());
    return Status::Ok();
  }

  static bool CountFits(size_t found, int16_t min, int16_t max) {
    return static_cast<int64_t>(found) >= min && (max == kVariadic || found <= size_t(max));
  }

  static Status CountError(const OpContext& context, size_t found, int16_t min, int16_t max,
                           std::string_view noun) {
    std::string expected = max == kVariadic ? StrCat("at least ", Count(min, noun))
                           : min == max     ? Count(min, noun)
                                            : StrCat(min, " to ", Count(max, noun));
    return context.Fail("", "expected ", expected, ", found ", found);
  }

  Status CheckCounts(const OpContext& context, const OpRule& rule) {
    if (!CountFits(context.num_operands(), rule.counts.min_operands, rule.counts.max_operands)) {
      return CountError(context, context.num_operands(), rule.counts.min_operands,
                        rule.counts.max_operands, "operand");
    }
    if (!CountFits(context.num_results(), rule.counts.min_results, rule.counts.max_results)) {
      return CountError(context, context.num_results(), rule.counts.min_results,
                        rule.counts.max_results, "result");
    }
    if (rule.counts.regions != kVariadic &&
        context.op().num_regions() != size_t(rule.counts.regions)) {
      return CountError(context, context.op().num_regions(), rule.counts.regions,
                        rule.counts.regions, "region");
    }
    if (rule.flags & kTensorOperands) {
      for (size_t i = 0; i < context.num_operands(); ++i) {
        if (!IsRankedTensor(context.operand(i))) {
          return context.Fail("", "operand #", i, " must be a ranked tensor, found ",
                              TypeText(context.operand(i)));
        }
      }
    }
    if (rule.flags & kTensorResults) {
      for (size_t i = 0; i < context.num_results(); ++i) {
        if (!IsRankedTensor(context.result(i))) {
          return context.Fail("", "result #", i, " must be a ranked tensor, found ",
                              TypeText(context.result(i)));
        }
      }
    }
    return Status::Ok();
  }

  // Every region holds one block (func.func may have none: a declaration)
  // ending with the terminator the op's dialect uses.
  Status CheckRegions(const OpContext& context, const OpRule& rule) {
    const Operation& op = context.op();
    for (size_t r = 0; r < op.num_regions(); ++r) {
      const Region& region = op.region(r);
      if (region.num_blocks() == 0 && op.code() == OpCode::kFuncFunc) continue;
      if (region.num_blocks() != 1) {
        return context.Fail("", "region #", r, " must have one block, found ", region.num_blocks());
      }
      std::string_view terminator = (rule.flags & kReturnTerminated) ? "stablehlo.return"
                                    : (rule.flags & kSdyTerminated)  ? "sdy.return"
                                                                     : "";
      if (terminator.empty()) continue;
      const Operation* last = region.block(0).back();
      if (last == nullptr || last->name() != terminator) {
        return context.Fail("", "region #", r, " must end with ", terminator, ", found ",
                            last ? last->name() : "an empty block");
      }
    }
    return Status::Ok();
  }

  Status CheckOp(const Operation& op) {
    if (op.code() == OpCode::kUnknown) {
      return Unimplemented(LocationOf(op), ": Kiln does not know the op '", op.name(), "'");
    }
    OpContext context(op, symbols_);
    KILN_RETURN_IF_ERROR(CheckOperands(context));
    for (size_t i = 0; i < op.num_results(); ++i) {
      if (!WellFormed(op.result(i)->type())) {
        return TypeError(op, op.result(i)->type(), StrCat("result #", i));
      }
    }
    KILN_RETURN_IF_ERROR(CheckPlacement(context));
    const OpRule* rule = Rules()[static_cast<size_t>(op.code())];
    if (rule == nullptr) return CheckAttributes(context);
    KILN_RETURN_IF_ERROR(CheckCounts(context, *rule));
    KILN_RETURN_IF_ERROR(CheckRegions(context, *rule));
    if (rule->flags & kOpaqueAttributes) return Status::Ok();
    if (rule->verify != nullptr) KILN_RETURN_IF_ERROR(rule->verify(context));
    return CheckAttributes(context);
  }

  // The attributes ops.def declares for the op: each required one present,
  // each present one of its declared kind. Runs after the op's own rule, whose
  // messages cite the spec.
  static Status CheckAttributes(const OpContext& context) {
    const OpDescription& description = DescribeOp(context.op().code());
    for (const AttributeDescription& declared : description.attributes) {
      const Attribute* value = context.Find(declared.name);
      if (value == nullptr) {
        if (declared.optional) continue;
        return context.Fail("", "requires the attribute '", declared.name, "' (",
                            AttrTypeName(declared.type), "), found none");
      }
      if (!AttributeHasType(*value, declared.type)) {
        return context.Fail("", "attribute '", declared.name, "' must be ",
                            AttrTypeName(declared.type), ", found ", PrintAttribute(*value));
      }
    }
    return Status::Ok();
  }

  const Module& module_;
  SymbolTable symbols_;
  std::vector<Frame> frames_;
  std::vector<size_t> run_starts_;                        // the frames' runs, in frame order
  std::unordered_map<const Block*, size_t> open_blocks_;  // block -> its frame
  ValueSet unordered_results_;  // results of ops in blocks not in address order
};

}  // namespace

Status Verify(const Module& module) { return ModuleVerifier(module).Run(); }

Status VerifyDetachedOp(const Operation& op) {
  const Module empty;
  return ModuleVerifier(empty).CheckDetached(op);
}

}  // namespace kiln::ir
