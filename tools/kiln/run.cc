// `kiln run FILE [INPUT...]`: compiles and runs a module's entry function on
// the host, prints its results, and reports the interpreter's check ops.
// Files of `// -----` separated modules (upstream's conformance tests) run
// case by case.
#include "tools/kiln/run.h"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>

#include "compiler/compile.h"
#include "compiler/executor.h"
#include "compiler/lowering.h"
#include "frontend/program.h"
#include "frontend/text/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/collectives.h"
#include "runtime/feeds.h"

namespace kiln::tool {
namespace {

// An input literal, `dense<...> : tensor<...>`, read by parsing it as the
// value of a constant.
StatusOr<std::vector<uint8_t>> ParseInput(const std::string& literal, const Shape& shape) {
  const size_t colon = literal.rfind(':');
  if (colon == std::string::npos) {
    return InvalidArgument("input '", literal, "': expected `dense<...> : tensor<...>`");
  }
  const std::string type = literal.substr(colon + 1);
  const std::string text = StrCat("func.func @f() -> ", type, " {\n  %0 = stablehlo.constant ",
                                  literal, "\n  return %0 : ", type, "\n}\n");
  KILN_ASSIGN_OR_RETURN(ir::Module module, frontend::text::ParseModule(text));
  const ir::Operation* function = module.LookupFunction("f");
  const ir::Operation& constant = *function->region(0).block(0).operations().front();
  ir::Attribute value = constant.GetAttr("value");
  if (!value.Is(ir::AttrKind::kDenseElements)) {
    return InvalidArgument("input '", literal, "': expected dense elements");
  }
  const ir::Type& tensor = value->type;
  if (tensor.element().element_type() != shape.element_type || tensor.dims() != shape.dims) {
    return InvalidArgument("input '", literal, "' has type ", ir::PrintType(tensor),
                           ", the function expects ", shape.ToString());
  }
  return compiler::DenseData(value, shape);
}

std::string ResultText(const Shape& shape, const std::vector<uint8_t>& data) {
  ir::Type type = ir::Type::Tensor(ir::Type::Element(shape.element_type), shape.dims);
  return ir::PrintAttribute(ir::Attribute::DenseElements(type, data, false));
}

struct CaseResult {
  int64_t checks = 0;
  std::vector<std::string> failures;
};

// The arrays of an infeed entry: literals joined by ';', each read with
// its own type.
StatusOr<runtime::FeedEntry> ParseEntry(const std::string& text) {
  runtime::FeedEntry entry;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    const std::string literal = text.substr(start, end - start);
    const size_t colon = literal.rfind(':');
    if (colon == std::string::npos) {
      return InvalidArgument("infeed entry '", literal, "': expected `dense<...> : tensor<...>`");
    }
    KILN_ASSIGN_OR_RETURN(ir::Module module,
                          frontend::text::ParseModule(StrCat("func.func @f() -> ",
                                                             literal.substr(colon + 1),
                                                             " {\n  %0 = stablehlo.constant ",
                                                             literal, "\n  return %0 : ",
                                                             literal.substr(colon + 1), "\n}\n")));
    const ir::Operation* function = module.LookupFunction("f");
    const ir::Type& type = function->region(0).block(0).operations().front()->result(0)->type();
    if (!type.Is(ir::TypeKind::kTensor) || !type.HasStaticShape() ||
        !type.element().Is(ir::TypeKind::kElement)) {
      return InvalidArgument("infeed entry '", literal, "': expected a tensor literal");
    }
    Shape shape{type.element().element_type(), type.dims()};
    KILN_ASSIGN_OR_RETURN(auto data, ParseInput(literal, shape));
    entry.push_back({std::move(shape), std::move(data)});
    start = end + 1;
  }
  return entry;
}

StatusOr<CaseResult> RunModule(const ir::Module& module, const std::vector<std::string>& inputs,
                               const std::vector<std::string>& infeed, bool print_results) {
  KILN_RETURN_IF_ERROR(ir::Verify(module));
  KILN_ASSIGN_OR_RETURN(auto program, compiler::Compile(module, frontend::CompileOptions{}));
  if (inputs.size() != program->parameter_shapes.size()) {
    return InvalidArgument("the entry function takes ", program->parameter_shapes.size(),
                           " arguments, ", inputs.size(),
                           " inputs were given (as `dense<...> : tensor<...>`)");
  }
  std::vector<std::vector<uint8_t>> arguments;
  for (size_t i = 0; i < inputs.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(auto data, ParseInput(inputs[i], program->parameter_shapes[i]));
    arguments.push_back(std::move(data));
  }
  std::vector<std::vector<uint8_t>> results;
  for (const Shape& shape : program->result_shapes) results.emplace_back(shape.ByteSize());
  std::vector<const void*> parameter_pointers;
  for (const auto& data : arguments) parameter_pointers.push_back(data.data());
  std::vector<void*> result_pointers;
  for (auto& data : results) result_pointers.push_back(data.data());
  // One device's queues; nothing else feeds it, so an empty infeed fails
  // at once rather than waiting.
  runtime::Feeds feeds;
  feeds.set_timeout(std::chrono::milliseconds(0));
  for (const std::string& text : infeed) {
    KILN_ASSIGN_OR_RETURN(runtime::FeedEntry entry, ParseEntry(text));
    feeds.PushInfeed(0, std::move(entry));
  }
  compiler::ExecutionEnv env;
  env.feeds = feeds.ForDevice(0);
  runtime::GridRunner grid(feeds);
  env.grid = &grid;
  KILN_RETURN_IF_ERROR(
      compiler::Execute(*program->graph, parameter_pointers, result_pointers, env));
  if (print_results) {
    for (size_t i = 0; i < results.size(); ++i) {
      std::printf("%s\n", ResultText(program->result_shapes[i], results[i]).c_str());
    }
  }
  while (std::optional<runtime::FeedEntry> entry = feeds.PopOutfeed(0)) {
    for (const runtime::FeedArray& array : *entry) {
      std::printf("outfeed: %s\n", ResultText(array.shape, array.bytes).c_str());
    }
  }
  return CaseResult{env.checks_run, std::move(env.check_failures)};
}

std::string ValueText(const compiler::Graph& graph, compiler::ValueId value) {
  return StrCat("%", value, ":", graph.shape(value).ToString());
}

}  // namespace

int Plan(const std::string& path, const std::vector<uint8_t>& bytes) {
  auto module = frontend::ReadProgram(bytes);
  Status status = module.status();
  if (module.ok()) status = ir::Verify(*module);
  StatusOr<std::shared_ptr<const compiler::Program>> program = status;
  if (status.ok()) program = compiler::Compile(*module, frontend::CompileOptions{});
  if (!program.ok()) {
    std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), program.status().ToString().c_str());
    return 1;
  }
  const compiler::Graph& graph = *(*program)->graph;
  for (const compiler::Node& node : graph.nodes) {
    std::string line;
    for (compiler::ValueId out : node.outputs) {
      line += (line.empty() ? "" : ", ") + ValueText(graph, out);
    }
    line += " = " + node.op;
    if (!node.detail.empty()) line += " [" + node.detail + "]";
    std::string inputs;
    for (compiler::ValueId in : node.inputs) {
      inputs += (inputs.empty() ? "" : ", ") + ValueText(graph, in);
    }
    std::printf("%s (%s)\n", line.c_str(), inputs.c_str());
  }
  std::printf("%zu nodes; intermediate values: %lld bytes\n", graph.nodes.size(),
              static_cast<long long>(graph.arena_bytes));
  return 0;
}

int Run(const std::string& path, const std::vector<uint8_t>& bytes,
        const std::vector<std::string>& inputs, const std::vector<std::string>& infeed) {
  std::vector<ir::Module> modules;
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const bool chunked = frontend::DetectFormat(bytes) == frontend::ProgramFormat::kText &&
                       text.find("// -----") != std::string_view::npos;
  if (chunked) {
    auto parsed = frontend::text::ParseChunks(text);
    if (!parsed.ok()) {
      std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), parsed.status().ToString().c_str());
      return 1;
    }
    modules = std::move(*parsed);
  } else {
    auto module = frontend::ReadProgram(bytes);
    if (!module.ok()) {
      std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), module.status().ToString().c_str());
      return 1;
    }
    modules.push_back(std::move(*module));
  }
  int failed = 0;
  int64_t checks = 0;
  for (size_t i = 0; i < modules.size(); ++i) {
    auto result = RunModule(modules[i], inputs, infeed, !chunked);
    const std::string label = chunked ? StrCat("case ", i + 1, ": ") : std::string();
    if (!result.ok()) {
      ++failed;
      std::printf("%sERROR %s\n", label.c_str(), result.status().ToString().c_str());
      continue;
    }
    checks += result->checks;
    if (!result->failures.empty()) ++failed;
    for (const std::string& failure : result->failures) {
      std::printf("%sFAIL %s\n", label.c_str(), failure.c_str());
    }
    if (chunked && result->failures.empty()) {
      std::printf("%sPASS (%lld checks)\n", label.c_str(), static_cast<long long>(result->checks));
    }
  }
  if (chunked || checks > 0) {
    std::printf("%zu cases, %d failed, %lld checks\n", modules.size(), failed,
                static_cast<long long>(checks));
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace kiln::tool
