#include "compiler/plan_listing.h"

#include <unordered_map>

#include "compiler/on_tiles.h"
#include "ir/printer.h"

namespace kiln::compiler {
namespace {

// Constants up to this size are written with their data, larger ones as a
// `kiln.constant` call (XLA's listing elides large constants too).
constexpr size_t kMaxListedConstantBytes = 256;
// Nested graphs deeper than this are written as calls without bodies.
constexpr int kMaxListedDepth = 32;

ir::Type TypeOf(const Shape& shape) {
  if (shape.element_type == ElementType::kToken) return ir::Type::Token();
  return ir::Type::Tensor(ir::Type::Element(shape.element_type), shape.dims);
}

class Lister {
 public:
  explicit Lister(ir::Module& module) : module_(module) {}

  // Appends a function `name` computing `graph` to the module.
  Status AddFunction(const Graph& graph, const std::string& name, bool entry, int depth);

 private:
  // The value of `id`: defined already, or a constant written now.
  StatusOr<ir::Value*> ValueOf(ValueId id);
  Status AddNode(const Node& node, int depth);
  // A function calling the function of each of `node`'s regions (`names`)
  // on arguments of its own; its name.
  StatusOr<std::string> CallEach(const Node& node, const std::vector<std::string>& names);
  ir::Operation* Append(std::unique_ptr<ir::Operation> op) { return block_->Append(std::move(op)); }

  ir::Module& module_;
  int functions_ = 0;
  // Of the function being written.
  const Graph* graph_ = nullptr;
  ir::Block* block_ = nullptr;
  std::vector<ir::Value*> values_;
};

StatusOr<ir::Value*> Lister::ValueOf(ValueId id) {
  const auto index = static_cast<size_t>(id);
  if (id < 0 || index >= values_.size()) return Internal("plan listing: no value ", id);
  if (values_[index] != nullptr) return values_[index];
  const ValueInfo& info = graph_->values[index];
  if (info.constant == nullptr)
    return Internal("plan listing: value ", id, " used before its node");
  std::unique_ptr<ir::Operation> op;
  if (info.constant->size() <= kMaxListedConstantBytes) {
    op = std::make_unique<ir::Operation>("stablehlo.constant");
    op->SetAttr("value", ir::Attribute::DenseElements(TypeOf(info.shape), *info.constant,
                                                      /*splat=*/false));
  } else {
    op = std::make_unique<ir::Operation>("stablehlo.custom_call");
    op->SetAttr("call_target_name", ir::Attribute::String("kiln.constant"));
    op->SetAttr("backend_config", ir::Attribute::String(StrCat(info.constant->size(), " bytes")));
  }
  values_[index] = op->AddResult(TypeOf(info.shape));
  Append(std::move(op));
  return values_[index];
}

StatusOr<std::string> Lister::CallEach(const Node& node, const std::vector<std::string>& names) {
  auto func = std::make_unique<ir::Operation>("func.func");
  const std::string name = StrCat("regions_", functions_++);
  func->SetAttr("sym_name", ir::Attribute::String(name));
  func->SetAttr("sym_visibility", ir::Attribute::String("private"));
  ir::Block& block = func->AddRegion().AddBlock();
  std::vector<ir::Type> inputs, outputs;
  std::vector<ir::Value*> returned;
  for (size_t r = 0; r < names.size(); ++r) {
    const Graph& region = *node.regions[r];
    auto call = std::make_unique<ir::Operation>("func.call");
    call->SetAttr("callee", ir::Attribute::SymbolRef({names[r]}));
    for (ValueId id : region.parameters) {
      inputs.push_back(TypeOf(region.shape(id)));
      call->AddOperand(block.AddArgument(inputs.back()));
    }
    for (ValueId id : region.results) {
      outputs.push_back(TypeOf(region.shape(id)));
      returned.push_back(call->AddResult(outputs.back()));
    }
    block.Append(std::move(call));
  }
  auto done = std::make_unique<ir::Operation>("func.return");
  for (ir::Value* value : returned) done->AddOperand(value);
  block.Append(std::move(done));
  func->SetAttr("function_type", ir::Attribute::TypeAttr(ir::Type::Function(inputs, outputs)));
  module_.body().Append(std::move(func));
  return name;
}

Status Lister::AddNode(const Node& node, int depth) {
  std::vector<ir::Value*> operands;
  for (ValueId in : node.inputs) {
    KILN_ASSIGN_OR_RETURN(ir::Value * value, ValueOf(in));
    operands.push_back(value);
  }
  std::vector<ir::Value*> results;
  if (!node.listing_chains.empty()) {
    // One chain per input (a combined meeting).
    if (node.listing_chains.size() != operands.size() ||
        node.listing_chains.size() != node.outputs.size()) {
      return Internal("plan listing: ", node.op, " lists ", node.listing_chains.size(),
                      " chains for ", operands.size(), " inputs");
    }
    size_t next = 0;
    for (size_t k = 0; k < node.listing_chains.size(); ++k) {
      ir::Value* value = operands[k];
      for (uint32_t step = 0; step < node.listing_chains[k]; ++step, ++next) {
        if (next >= node.listing.size()) return Internal("plan listing: a chain past its ops");
        const ir::Operation& listed = *node.listing[next];
        auto made = std::make_unique<ir::Operation>(listed.name(), listed.location());
        made->AddOperand(value);
        on_tiles::CopyAttributes(listed, *made);
        std::unordered_map<const ir::Value*, ir::Value*> copies;
        for (size_t r = 0; r < listed.num_regions(); ++r) {
          KILN_RETURN_IF_ERROR(on_tiles::CloneRegion(listed.region(r), *made, copies));
        }
        if (listed.num_results() != 1) return Internal("plan listing: a chain op of many results");
        value = made->AddResult(listed.result(0)->type());
        Append(std::move(made));
      }
      results.push_back(value);
    }
  } else if (!node.listing.empty()) {
    for (const std::shared_ptr<const ir::Operation>& listed : node.listing) {
      auto made = std::make_unique<ir::Operation>(listed->name(), listed->location());
      for (ir::Value* operand : operands) made->AddOperand(operand);
      on_tiles::CopyAttributes(*listed, *made);
      std::unordered_map<const ir::Value*, ir::Value*> copies;
      for (size_t r = 0; r < listed->num_regions(); ++r) {
        KILN_RETURN_IF_ERROR(on_tiles::CloneRegion(listed->region(r), *made, copies));
      }
      results.clear();
      for (size_t r = 0; r < listed->num_results(); ++r) {
        results.push_back(made->AddResult(listed->result(r)->type()));
      }
      operands = results;
      Append(std::move(made));
    }
  } else {
    auto call = std::make_unique<ir::Operation>("stablehlo.custom_call");
    for (ir::Value* operand : operands) call->AddOperand(operand);
    call->SetAttr("call_target_name", ir::Attribute::String(node.op));
    if (!node.detail.empty()) call->SetAttr("backend_config", ir::Attribute::String(node.detail));
    if (node.has_side_effects) call->SetAttr("has_side_effect", ir::Attribute::Bool(true));
    std::vector<std::string> called;
    if (depth < kMaxListedDepth) {
      for (const std::shared_ptr<const Graph>& region : node.regions) {
        called.push_back(StrCat("region_", functions_++));
        // Written after this function by a lister of its own.
        Lister nested(module_);
        nested.functions_ = functions_;
        KILN_RETURN_IF_ERROR(nested.AddFunction(*region, called.back(), /*entry=*/false,
                                                depth + 1));
        functions_ = nested.functions_;
      }
    }
    if (called.size() > 1) {
      // XLA's export takes one called computation per custom call: one
      // that calls each region's function on its own arguments.
      KILN_ASSIGN_OR_RETURN(std::string each, CallEach(node, called));
      called = {each};
    }
    if (!called.empty()) {
      call->SetAttr("called_computations",
                    ir::Attribute::Array({ir::Attribute::SymbolRef({called[0]})}));
    }
    for (ValueId out : node.outputs) results.push_back(call->AddResult(TypeOf(graph_->shape(out))));
    Append(std::move(call));
  }
  if (results.size() != node.outputs.size()) {
    return Internal("plan listing: ", node.op, " lists ", results.size(), " results for ",
                    node.outputs.size(), " outputs");
  }
  for (size_t i = 0; i < results.size(); ++i) {
    values_[static_cast<size_t>(node.outputs[i])] = results[i];
  }
  return Status::Ok();
}

Status Lister::AddFunction(const Graph& graph, const std::string& name, bool entry, int depth) {
  auto func = std::make_unique<ir::Operation>("func.func");
  func->SetAttr("sym_name", ir::Attribute::String(name));
  if (!entry) func->SetAttr("sym_visibility", ir::Attribute::String("private"));
  graph_ = &graph;
  block_ = &func->AddRegion().AddBlock();
  values_.assign(graph.values.size(), nullptr);
  std::vector<ir::Type> inputs, outputs;
  for (ValueId id : graph.parameters) {
    inputs.push_back(TypeOf(graph.shape(id)));
    values_[static_cast<size_t>(id)] = block_->AddArgument(inputs.back());
  }
  // Appended before its body is written, so that the functions of nested
  // graphs follow it.
  ir::Operation* made = module_.body().Append(std::move(func));
  for (const Node& node : graph.nodes) KILN_RETURN_IF_ERROR(AddNode(node, depth));
  auto done = std::make_unique<ir::Operation>("func.return");
  for (ValueId id : graph.results) {
    KILN_ASSIGN_OR_RETURN(ir::Value * value, ValueOf(id));
    done->AddOperand(value);
    outputs.push_back(TypeOf(graph.shape(id)));
  }
  Append(std::move(done));
  made->SetAttr("function_type", ir::Attribute::TypeAttr(ir::Type::Function(inputs, outputs)));
  return Status::Ok();
}

}  // namespace

bool ListedAsItself(const ir::Operation& op) {
  switch (op.code()) {
    case ir::OpCode::kAllGather:
    case ir::OpCode::kAllReduce:
    case ir::OpCode::kAllToAll:
    case ir::OpCode::kReduceScatter:
    case ir::OpCode::kCollectivePermute:
    case ir::OpCode::kCollectiveBroadcast: return true;
    default: return false;
  }
}

namespace {

bool IsShardyAnnotation(const ir::Operation& op) {
  return (op.code() == ir::OpCode::kSdyShardingConstraint ||
          op.code() == ir::OpCode::kSdyReshard) &&
         op.operands().size() == 1 && op.num_results() == 1;
}

// Drops Shardy's constraints from `op`'s regions (a reduction body JAX
// wrote inside a shard_map carries them), as XLA's export removes them:
// their uses take their operands.
void DropShardyAnnotations(ir::Operation& op) {
  for (size_t r = 0; r < op.num_regions(); ++r) {
    for (size_t b = 0; b < op.region(r).num_blocks(); ++b) {
      ir::Block& block = op.region(r).block(b);
      for (const auto& inner : block.operations()) {
        for (size_t i = 0; i < inner->operands().size(); ++i) {
          ir::Value* value = inner->operand(i);
          while (value->defining_op() != nullptr && IsShardyAnnotation(*value->defining_op())) {
            value = value->defining_op()->operand(0);
          }
          inner->SetOperand(i, value);
        }
        DropShardyAnnotations(*inner);
      }
      block.RemoveIf(IsShardyAnnotation);
    }
  }
}

}  // namespace

std::shared_ptr<const ir::Operation> DetachForListing(const ir::Operation& op,
                                                      const std::vector<Shape>& outputs) {
  auto made = std::make_shared<ir::Operation>(op.name(), op.location());
  on_tiles::CopyAttributes(op, *made);
  std::unordered_map<const ir::Value*, ir::Value*> copies;
  for (size_t r = 0; r < op.num_regions(); ++r) {
    if (!on_tiles::CloneRegion(op.region(r), *made, copies).ok()) return nullptr;
  }
  DropShardyAnnotations(*made);
  for (const Shape& shape : outputs) made->AddResult(TypeOf(shape));
  return made;
}

StatusOr<std::string> ListPlan(const Graph& graph, const ir::Module& source, std::string_view name,
                               int64_t num_partitions, int64_t num_replicas,
                               const ListedShardings* shardings) {
  ir::Module module;
  module.op().SetAttr("sym_name", ir::Attribute::String(std::string(name)));
  const ir::Type i32 = ir::Type::Element(ElementType::kS32);
  module.op().SetAttr("mhlo.num_partitions", ir::Attribute::Integer(num_partitions, i32));
  module.op().SetAttr("mhlo.num_replicas", ir::Attribute::Integer(num_replicas, i32));
  if (shardings != nullptr) {
    std::vector<ir::Attribute> parameters;
    for (const auto& sharding : shardings->parameters) {
      parameters.push_back(ir::Attribute::String(HloShardingText(sharding)));
    }
    std::string output;
    for (const auto& sharding : shardings->results) {
      output += (output.empty() ? "" : ", ") + HloShardingText(sharding);
    }
    if (shardings->results.size() != 1) output = "{" + output + "}";
    module.op().SetAttr("mhlo.spmd_parameters_shardings",
                        ir::Attribute::Array(std::move(parameters)));
    module.op().SetAttr("mhlo.spmd_output_sharding", ir::Attribute::String(output));
  }
  for (const auto& op : source.body().operations()) {
    if (op->code() == ir::OpCode::kFuncFunc || op->num_regions() != 0 || op->num_results() != 0) {
      continue;
    }
    auto mesh = std::make_unique<ir::Operation>(op->name(), op->location());
    on_tiles::CopyAttributes(*op, *mesh);
    module.body().Append(std::move(mesh));
  }
  Lister lister(module);
  KILN_RETURN_IF_ERROR(lister.AddFunction(graph, "main", /*entry=*/true, 0));
  return ir::PrintModule(module);
}

}  // namespace kiln::compiler
