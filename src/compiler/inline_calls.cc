#include "compiler/inline_calls.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace kiln::compiler {
namespace {

using ValueMap = std::unordered_map<const ir::Value*, ir::Value*>;

// Copies made at most this many times the module's own ops, and calls
// inlined this deep at most: past either, the module is reported as it is.
constexpr size_t kGrowthBound = 8;
constexpr size_t kDepthBound = 256;

// Shardy ops whose result is their operand's value, with the same (global)
// type: what a device computes once the runtime has gathered the operand.
bool ForwardsItsOperand(const ir::Operation& op) {
  switch (op.code()) {
    case ir::OpCode::kSdyShardingConstraint:
    case ir::OpCode::kSdyReshard:
    case ir::OpCode::kSdyAllGather:
    case ir::OpCode::kSdyAllReduce:
    case ir::OpCode::kSdyAllSlice:
    case ir::OpCode::kSdyAllToAll:
    case ir::OpCode::kSdyCollectivePermute:
    case ir::OpCode::kSdyPropagationBarrier:
      return op.operands().size() == 1 && op.num_results() == 1;
    default: return false;
  }
}

bool KeptByXla(const ir::Operation& call) {
  ir::Attribute frontend = call.GetAttr("mhlo.frontend_attributes");
  if (!frontend.Is(ir::AttrKind::kDictionary)) return false;
  for (const ir::NamedAttribute& field : frontend->fields) {
    if (field.name == "inlineable" && field.value.Is(ir::AttrKind::kString)) {
      return field.value->text == "xla_late" || field.value->text == "false";
    }
  }
  return false;
}

size_t CountOps(const ir::Operation& root) {
  size_t count = 0;
  std::vector<const ir::Operation*> pending = {&root};
  while (!pending.empty()) {
    const ir::Operation* op = pending.back();
    pending.pop_back();
    ++count;
    for (size_t r = 0; r < op->num_regions(); ++r) {
      for (size_t b = 0; b < op->region(r).num_blocks(); ++b) {
        for (const auto& inner : op->region(r).block(b).operations())
          pending.push_back(inner.get());
      }
    }
  }
  return count;
}

// Symbols an attribute names (`@f` in callee, called_computations, ...).
void CollectSymbols(const ir::Attribute& attribute, std::unordered_set<std::string>& names) {
  if (!attribute) return;
  if (attribute.Is(ir::AttrKind::kSymbolRef) && !attribute->symbol_path.empty()) {
    names.insert(attribute->symbol_path.front());
  }
  for (const ir::Attribute& element : attribute->elements) CollectSymbols(element, names);
  for (const ir::NamedAttribute& field : attribute->fields) CollectSymbols(field.value, names);
}

class Inliner {
 public:
  explicit Inliner(const ir::Module& module) : module_(module) {
    budget_ = kGrowthBound * CountOps(module.op());
  }

  // The copy, or nullopt (see InlineCalls).
  std::optional<ir::Module> Run() {
    auto root = std::make_unique<ir::Operation>(module_.op().name(), module_.op().location());
    for (const ir::NamedAttribute& attribute : module_.op().attributes()) {
      root->SetAttr(attribute.name, attribute.value);
    }
    ir::Block& body = root->AddRegion().AddBlock();
    ir::Module copy(std::move(root));
    if (!CopyBlock(module_.body(), body)) return std::nullopt;
    if (inlined_ == 0 && rewritten_ == 0) return std::nullopt;
    DropUnreferencedPrivateFunctions(copy);
    return copy;
  }

 private:
  // One block being copied into `target`: ops [next, end) of `source` still
  // to copy. A frame for an inlined callee also maps the call's results to
  // what its body returns when done.
  struct Frame {
    const ir::Block* source;
    size_t next;
    ir::Block* target;
    const ir::Operation* call;  // the call this frame inlines, or null
  };

  // Copies `source`'s ops into `target`, inlining calls, with an explicit
  // stack (nesting depth comes from the input).
  bool CopyBlock(const ir::Block& source, ir::Block& target) {
    std::vector<Frame> stack = {{&source, 0, &target, nullptr}};
    size_t inline_depth = 0;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const auto& ops = frame.source->operations();
      if (frame.next == ops.size()) {
        if (frame.call != nullptr) --inline_depth;
        stack.pop_back();
        continue;
      }
      const ir::Operation& op = *ops[frame.next++];
      if (frame.call != nullptr && frame.next == ops.size()) {
        // The callee's return: the call's results are what it returns (a
        // manual computation's, brought back to their global type).
        const bool manual = frame.call->code() == ir::OpCode::kSdyManualComputation;
        for (size_t i = 0; i < op.operands().size() && i < frame.call->num_results(); ++i) {
          ir::Value* returned = Mapped(op.operand(i));
          if (manual) {
            returned = ShapeCast(*frame.target, "SPMDShardToFullShape", returned,
                                 frame.call->result(i)->type(), op.location());
          }
          map_[frame.call->result(i)] = returned;
        }
        continue;
      }
      if (budget_-- == 0) return false;
      // Shardy's ops are how the program is split, not what a device
      // computes; XLA's CPU pipeline removes them too, and JAX's conversion
      // of the reported program to HLO (compiled.as_text()) rejects them.
      if (ForwardsItsOperand(op)) {
        map_[op.result(0)] = Mapped(op.operand(0));
        ++rewritten_;
        continue;
      }
      if (op.code() == ir::OpCode::kSdyShardingGroup) {
        ++rewritten_;
        continue;
      }
      if (const ir::Block* body = InlinedBody(op)) {
        if (++inline_depth > kDepthBound) return false;
        const bool manual = op.code() == ir::OpCode::kSdyManualComputation;
        for (size_t i = 0; i < body->num_arguments(); ++i) {
          ir::Value* argument = Mapped(op.operand(i));
          if (manual) {
            // As XLA's export of Shardy writes a manual computation: each
            // operand cast to its per-device type, the body, each result
            // cast back.
            argument = ShapeCast(*frame.target, "SPMDFullToShardShape", argument,
                                 body->argument(i)->type(), op.location());
          }
          map_[body->argument(i)] = argument;
        }
        ++rewritten_;
        stack.push_back({body, 0, frame.target, &op});
        continue;
      }
      const ir::Operation* callee = Callee(op);
      if (callee != nullptr) {
        if (++inline_depth > kDepthBound) return false;
        const ir::Block& callee_body = callee->region(0).block(0);
        for (size_t i = 0; i < callee_body.num_arguments() && i < op.operands().size(); ++i) {
          map_[callee_body.argument(i)] = Mapped(op.operand(i));
        }
        ++inlined_;
        ir::Block* into = frame.target;
        stack.push_back({&callee_body, 0, into, &op});
        continue;
      }
      ir::Operation* copy = frame.target->Append(CopyShell(op));
      // Nested blocks next (before the rest of this block: they only use
      // values defined before their op), last pushed first.
      std::vector<Frame> nested;
      for (size_t r = 0; r < op.num_regions(); ++r) {
        ir::Region& region = copy->AddRegion();
        for (size_t b = 0; b < op.region(r).num_blocks(); ++b) {
          const ir::Block& block = op.region(r).block(b);
          ir::Block& into = region.AddBlock();
          for (size_t a = 0; a < block.num_arguments(); ++a) {
            map_[block.argument(a)] = into.AddArgument(block.argument(a)->type(),
                                                       block.argument(a)->location());
          }
          nested.push_back({&block, 0, &into, nullptr});
        }
      }
      for (auto it = nested.rbegin(); it != nested.rend(); ++it) stack.push_back(*it);
    }
    return true;
  }

  // The function `op` calls when it is a call to inline, else null.
  const ir::Operation* Callee(const ir::Operation& op) const {
    if (op.code() != ir::OpCode::kFuncCall || KeptByXla(op)) return nullptr;
    ir::Attribute callee = op.GetAttr("callee");
    if (!callee.Is(ir::AttrKind::kSymbolRef) || callee->symbol_path.size() != 1) return nullptr;
    const ir::Operation* function = module_.LookupFunction(callee->symbol_path.front());
    if (function == nullptr || function->num_regions() == 0 || function->region(0).empty()) {
      return nullptr;
    }
    const ir::Block& body = function->region(0).block(0);
    if (body.num_arguments() != op.operands().size() || body.back() == nullptr ||
        body.back()->operands().size() != op.num_results()) {
      return nullptr;
    }
    return function;
  }

  // The body of a Shardy op that holds one (named_computation,
  // manual_computation) when it can be inlined, else null.
  static const ir::Block* InlinedBody(const ir::Operation& op) {
    if (op.code() != ir::OpCode::kSdyNamedComputation &&
        op.code() != ir::OpCode::kSdyManualComputation) {
      return nullptr;
    }
    if (op.num_regions() != 1 || op.region(0).num_blocks() != 1) return nullptr;
    const ir::Block& body = op.region(0).block(0);
    if (body.num_arguments() != op.operands().size() || body.back() == nullptr ||
        body.back()->operands().size() != op.num_results()) {
      return nullptr;
    }
    return &body;
  }

  // stablehlo.custom_call @`target`(value) : `type`, appended to `block`.
  static ir::Value* ShapeCast(ir::Block& block, const char* target, ir::Value* value, ir::Type type,
                              ir::Location location) {
    auto cast = std::make_unique<ir::Operation>("stablehlo.custom_call", location);
    cast->AddOperand(value);
    ir::Value* result = cast->AddResult(type);
    cast->SetAttr("call_target_name", ir::Attribute::String(target));
    block.Append(std::move(cast));
    return result;
  }

  ir::Value* Mapped(ir::Value* value) const {
    auto it = map_.find(value);
    return it == map_.end() ? value : it->second;
  }

  // `op` without its regions: operands mapped, results recorded.
  std::unique_ptr<ir::Operation> CopyShell(const ir::Operation& op) {
    auto copy = std::make_unique<ir::Operation>(op.name(), op.location());
    for (ir::Value* operand : op.operands()) copy->AddOperand(Mapped(operand));
    for (size_t i = 0; i < op.num_results(); ++i) {
      map_[op.result(i)] = copy->AddResult(op.result(i)->type());
    }
    for (const ir::NamedAttribute& attribute : op.attributes()) {
      copy->SetAttr(attribute.name, attribute.value);
    }
    return copy;
  }

  // XLA drops computations nothing calls; private functions every call of
  // which was inlined go too (public ones are entry points).
  static void DropUnreferencedPrivateFunctions(ir::Module& module) {
    // Until none goes: a dropped function may have been the last to call
    // another.
    for (;;) {
      std::unordered_set<std::string> referenced;
      std::vector<const ir::Operation*> pending;
      for (const auto& op : module.body().operations()) pending.push_back(op.get());
      while (!pending.empty()) {
        const ir::Operation* op = pending.back();
        pending.pop_back();
        for (const ir::NamedAttribute& attribute : op->attributes()) {
          CollectSymbols(attribute.value, referenced);
        }
        for (size_t r = 0; r < op->num_regions(); ++r) {
          for (size_t b = 0; b < op->region(r).num_blocks(); ++b) {
            for (const auto& inner : op->region(r).block(b).operations()) {
              pending.push_back(inner.get());
            }
          }
        }
      }
      const size_t dropped = module.body().RemoveIf([&](const ir::Operation& op) {
        if (op.code() != ir::OpCode::kFuncFunc) return false;
        ir::Attribute visibility = op.GetAttr("sym_visibility");
        ir::Attribute name = op.GetAttr("sym_name");
        return visibility.Is(ir::AttrKind::kString) && visibility->text == "private" &&
               name.Is(ir::AttrKind::kString) && !referenced.contains(name->text);
      });
      if (dropped == 0) return;
    }
  }

  const ir::Module& module_;
  ValueMap map_;
  size_t budget_ = 0;
  size_t inlined_ = 0;
  size_t rewritten_ = 0;  // Shardy ops removed
};

}  // namespace

std::optional<ir::Module> InlineCalls(const ir::Module& module) { return Inliner(module).Run(); }

}  // namespace kiln::compiler
