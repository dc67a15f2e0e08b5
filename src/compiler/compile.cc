#include "compiler/compile.h"

#include "compiler/lowering.h"
#include "ir/printer.h"

namespace kiln::compiler {
namespace {

// The function a program runs: the public `main`, else the only function.
StatusOr<const ir::Operation*> EntryFunction(const ir::Module& module) {
  const ir::Operation* only = nullptr;
  int functions = 0;
  for (const auto& op : module.body().operations()) {
    if (op->code() != ir::OpCode::kFuncFunc) continue;
    ++functions;
    only = op.get();
    ir::Attribute name = op->GetAttr("sym_name");
    if (name.Is(ir::AttrKind::kString) && name->text == "main") return op.get();
  }
  if (functions == 1) return only;
  return InvalidArgument("the module has ", functions,
                         " functions and none is called main; expected an entry function "
                         "@main");
}

uint64_t Fnv1a(std::string_view text, uint64_t hash = 1469598103934665603ull) {
  for (char c : text) hash = (hash ^ static_cast<uint8_t>(c)) * 1099511628211ull;
  return hash;
}

}  // namespace

StatusOr<std::shared_ptr<const Program>> Compile(const ir::Module& module,
                                                 frontend::CompileOptions options) {
  KILN_ASSIGN_OR_RETURN(const ir::Operation* entry, EntryFunction(module));
  auto graph = std::make_shared<Graph>();
  KILN_RETURN_IF_ERROR(Lowering::LowerEntry(module, *entry, *graph));
  EliminateDeadNodes(*graph);
  PlanBuffers(*graph);
  auto program = std::make_shared<Program>();
  ir::Attribute module_name = module.op().GetAttr("sym_name");
  program->name = module_name.Is(ir::AttrKind::kString) ? module_name->text : "main";
  for (ValueId id : graph->parameters) program->parameter_shapes.push_back(graph->shape(id));
  for (ValueId id : graph->results) program->result_shapes.push_back(graph->shape(id));
  program->graph = std::move(graph);
  program->text = ir::PrintModule(module);
  std::string_view serialized(reinterpret_cast<const char*>(options.serialized.data()),
                              options.serialized.size());
  program->fingerprint = Fnv1a(serialized, Fnv1a(program->text));
  program->options = std::move(options);
  return std::shared_ptr<const Program>(std::move(program));
}

}  // namespace kiln::compiler
