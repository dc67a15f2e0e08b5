// `kiln run FILE [INPUT...]`: compiles and runs a module's entry function on
// the host, prints its results, and reports the interpreter's check ops.
// Files of `// -----` separated modules (upstream's conformance tests) run
// case by case.
#include "tools/kiln/run.h"

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

#include "backends/backends.h"
#include "compiler/compile.h"
#include "compiler/executor.h"
#include "compiler/lowering.h"
#include "compiler/sharding.h"
#include "frontend/program.h"
#include "frontend/text/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "runtime/collectives.h"
#include "runtime/device_plan.h"
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

std::string ResultText(const Shape& shape, const std::vector<uint8_t>& data,
                       bool interpreter_format = false) {
  ir::Type type = ir::Type::Tensor(ir::Type::Element(shape.element_type), shape.dims);
  if (interpreter_format) return ir::PrintInterpreterTensor(type, data);
  return ir::PrintAttribute(ir::Attribute::DenseElements(type, data, false));
}

// interpreter.print's output and the probe folder, for the run's ops.
class ToolIo final : public compiler::InterpreterIo {
 public:
  explicit ToolIo(std::string probe_dir) : probe_dir_(std::move(probe_dir)) {}
  void Print(const std::string& text) override {
    std::lock_guard lock(mutex_);
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }
  const std::string& probe_dir() const override { return probe_dir_; }
  int64_t NextProbeFile() override { return next_probe_++; }

 private:
  std::mutex mutex_;
  std::string probe_dir_;
  std::atomic<int64_t> next_probe_{0};
};

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
                          frontend::text::ParseModule(
                              StrCat("func.func @f() -> ", literal.substr(colon + 1),
                                     " {\n  %0 = stablehlo.constant ", literal,
                                     "\n  return %0 : ", literal.substr(colon + 1), "\n}\n")));
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

// A run's arguments and result memory, and the pointer lists Execute takes.
struct RunBuffers {
  RunBuffers(std::vector<std::vector<uint8_t>> argument_data,
             const std::vector<Shape>& result_shapes)
      : arguments(std::move(argument_data)) {
    for (const Shape& shape : result_shapes) results.emplace_back(shape.ByteSize());
    for (const auto& data : arguments) parameters.push_back(data.data());
    for (auto& data : results) outputs.push_back(data.data());
  }
  std::vector<std::vector<uint8_t>> arguments, results;
  std::vector<const void*> parameters;
  std::vector<void*> outputs;
};

StatusOr<CaseResult> RunModule(const ir::Module& module, const RunOptions& options,
                               compiler::InterpreterIo& io) {
  const std::vector<std::string>& inputs = options.inputs;
  const std::vector<std::string>& infeed = options.infeed;
  // A case of comments alone (upstream's "empty module" case) runs nothing.
  bool has_function = false;
  for (const auto& op : module.body().operations()) {
    has_function = has_function || op->code() == ir::OpCode::kFuncFunc;
  }
  if (!has_function && module.body().operations().empty()) return CaseResult{};
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
  RunBuffers buffers(std::move(arguments), program->result_shapes);
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
  env.interpreter = &io;
  runtime::GridRunner grid(feeds);
  env.grid = &grid;
  KILN_RETURN_IF_ERROR(compiler::Execute(*program->graph, buffers.parameters, buffers.outputs,
                                         env));
  for (size_t i = 0; i < buffers.results.size(); ++i) {
    std::printf("%s\n", ResultText(program->result_shapes[i], buffers.results[i],
                                   options.interpreter_format)
                            .c_str());
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

std::string FormatMicros(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%10.1f us", seconds * 1e6);
  return text;
}

std::string FormatPercent(double part, double whole) {
  char text[16];
  std::snprintf(text, sizeof(text), "%5.1f%%", whole > 0 ? 100 * part / whole : 0.0);
  return text;
}

// Arguments for timing a plan: floats in [-1, 1), integers in [0, 8) (valid
// indices for most gathers), alternating predicates; the same every run.
std::vector<uint8_t> TimingArgument(const Shape& shape) {
  std::vector<uint8_t> data(shape.ByteSize());
  const int64_t count = shape.NumElements();
  uint64_t state = 0x9E3779B97F4A7C15ull;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
  };
  auto fill = [&]<typename T>(auto value) {
    T* out = reinterpret_cast<T*>(data.data());
    for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(value(i));
  };
  switch (shape.element_type) {
    case ElementType::kF32:
      fill.operator()<float>([&](int64_t) {
        return static_cast<double>(next() % 2000000) / 1e6 - 1;
      });
      break;
    case ElementType::kF64:
      fill.operator()<double>([&](int64_t) {
        return static_cast<double>(next() % 2000000) / 1e6 - 1;
      });
      break;
    case ElementType::kS32: fill.operator()<int32_t>([&](int64_t) { return next() % 8; }); break;
    case ElementType::kS64: fill.operator()<int64_t>([&](int64_t) { return next() % 8; }); break;
    case ElementType::kPred: fill.operator()<uint8_t>([&](int64_t i) { return i % 2; }); break;
    default:  // other types: small byte patterns
      for (uint8_t& byte : data) byte = static_cast<uint8_t>(next() % 8);
  }
  return data;
}

// Runs `program` once to warm up, then `runs` times adding each node's time
// to `seconds`.
Status TimeNodes(const compiler::Program& program, int runs, std::vector<double>& seconds) {
  std::vector<std::vector<uint8_t>> arguments;
  for (const Shape& shape : program.parameter_shapes) arguments.push_back(TimingArgument(shape));
  RunBuffers buffers(std::move(arguments), program.result_shapes);
  runtime::Feeds feeds;
  feeds.set_timeout(std::chrono::milliseconds(0));
  compiler::ExecutionEnv env;
  env.feeds = feeds.ForDevice(0);
  KILN_RETURN_IF_ERROR(compiler::Execute(*program.graph, buffers.parameters, buffers.outputs, env));
  env.timed_graph = program.graph.get();
  env.timed_nodes = &seconds;
  for (int run = 0; run < runs; ++run) {
    KILN_RETURN_IF_ERROR(compiler::Execute(*program.graph, buffers.parameters, buffers.outputs,
                                           env));
  }
  return Status::Ok();
}

}  // namespace

namespace {

// The options `kiln plan` compiles `module` with. A program with Shardy
// meshes is planned for as many partitions as its largest mesh has
// devices, a GSPMD program for its mhlo.num_partitions (`devices`, when
// given, instead): the plan every device runs (its tiles and the
// collectives between them).
frontend::CompileOptions PlanOptions(const ir::Module& module, int64_t devices) {
  frontend::CompileOptions options;
  ir::Attribute partitions = module.op().GetAttr("mhlo.num_partitions");
  if (partitions.Is(ir::AttrKind::kInteger) && partitions->int_value > 1) {
    options.num_partitions = partitions->int_value;
  }
  for (const auto& op : module.body().operations()) {
    if (op->code() != ir::OpCode::kSdyMesh) continue;
    ir::Attribute text = op->GetAttr("mesh");
    if (!text.Is(ir::AttrKind::kOpaque)) continue;
    StatusOr<compiler::Mesh> mesh = compiler::ParseMesh(text->text);
    if (mesh.ok()) options.num_partitions = std::max(options.num_partitions, mesh->num_devices());
  }
  if (devices > 0) options.num_partitions = devices;
  options.use_spmd_partitioning = options.num_partitions > 1;
  return options;
}

}  // namespace

int Plan(const std::string& path, const std::vector<uint8_t>& bytes, int runs, int64_t devices) {
  auto module = frontend::ReadProgram(bytes);
  Status status = module.status();
  if (module.ok()) status = ir::Verify(*module);
  StatusOr<std::shared_ptr<const compiler::Program>> program = status;
  if (status.ok()) program = compiler::Compile(*module, PlanOptions(*module, devices));
  if (!program.ok()) {
    std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), program.status().ToString().c_str());
    return 1;
  }
  const compiler::Graph& graph = *(*program)->graph;
  std::vector<double> seconds(graph.nodes.size(), 0.0);
  double total = 0;
  if (runs > 0) {
    if (Status timed = TimeNodes(**program, runs, seconds); !timed.ok()) {
      std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), timed.ToString().c_str());
      return 1;
    }
    for (double& s : seconds) {
      s /= runs;
      total += s;
    }
  }
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    const compiler::Node& node = graph.nodes[n];
    std::string line;
    if (runs > 0) {
      line = StrCat(FormatMicros(seconds[n]), " ", FormatPercent(seconds[n], total), "  ");
    }
    std::string outputs;
    for (compiler::ValueId out : node.outputs) {
      outputs += (outputs.empty() ? "" : ", ") + ValueText(graph, out);
    }
    line += outputs + " = " + node.op;
    if (!node.detail.empty()) line += " [" + node.detail + "]";
    std::string inputs;
    for (compiler::ValueId in : node.inputs) {
      inputs += (inputs.empty() ? "" : ", ") + ValueText(graph, in);
    }
    std::printf("%s (%s)\n", line.c_str(), inputs.c_str());
  }
  std::printf("%zu nodes; intermediate values: %lld bytes", graph.nodes.size(),
              static_cast<long long>(graph.arena_bytes));
  if (runs > 0) std::printf("; %s per run (mean of %d)", FormatMicros(total).c_str(), runs);
  std::printf("\n");
  return 0;
}

int PlanForBackend(const std::string& path, const std::vector<uint8_t>& bytes,
                   const std::string& backend_name, int64_t devices) {
  auto failed = [&](const Status& status) {
    std::fprintf(stderr, "kiln: %s: %s\n", path.c_str(), status.ToString().c_str());
    return 1;
  };
  StatusOr<std::shared_ptr<runtime::DeviceBackend>> backend = backends::Create(backend_name);
  if (!backend.ok()) return failed(backend.status());
  auto module = frontend::ReadProgram(bytes);
  if (!module.ok()) return failed(module.status());
  if (Status verified = ir::Verify(*module); !verified.ok()) return failed(verified);
  auto program = compiler::Compile(*module, PlanOptions(*module, devices),
                                   (*backend)->CompilesNodes());
  if (!program.ok()) return failed(program.status());
  auto plan = runtime::DevicePlan::Build(**program, **backend);
  if (!plan.ok()) return failed(plan.status());
  if (*plan == nullptr) {
    std::printf("backend %s: the whole program runs on the host kernels%s\n", backend_name.c_str(),
                (*backend)->MemoryIsHostAddressable() ? "" : ", over copies of its device memory");
    return 0;
  }
  std::printf("backend %s:\n%s", backend_name.c_str(), (*plan)->Listing().c_str());
  return 0;
}

StatusOr<std::vector<std::string>> SplitArgsList(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') {
    return InvalidArgument("--args takes a list of literals, --args=[dense<1> : tensor<2xi32>, "
                           "...]; found '",
                           text, "'");
  }
  text = text.substr(1, text.size() - 2);
  std::vector<std::string> literals;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    const char c = i < text.size() ? text[i] : ',';
    if (c == '<' || c == '[' || c == '(') ++depth;
    if (c == '>' || c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      std::string_view literal = text.substr(start, i - start);
      while (!literal.empty() && literal.front() == ' ') literal.remove_prefix(1);
      while (!literal.empty() && literal.back() == ' ') literal.remove_suffix(1);
      if (!literal.empty()) {
        if (!literal.starts_with("dense<")) {
          return InvalidArgument("--args: expected dense elements, dense<...> : tensor<...>; "
                                 "found '",
                                 literal, "'");
        }
        literals.emplace_back(literal);
      }
      start = i + 1;
    }
  }
  return literals;
}

int Run(const std::string& path, const std::vector<uint8_t>& bytes, const RunOptions& options) {
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
  ToolIo io(options.probe_dir);
  for (size_t i = 0; i < modules.size(); ++i) {
    auto result = RunModule(modules[i], options, io);
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
