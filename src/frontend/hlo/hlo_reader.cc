#include "frontend/hlo/hlo_reader.h"

#include <algorithm>
#include <climits>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "frontend/hlo/hlo_emit.h"
#include "frontend/proto/wire.h"
#include "frontend/text/parser.h"
#include "ir/printer.h"

namespace kiln::frontend::hlo {
namespace {

// Called computations are inlined as regions, recursively; deeper nesting
// (or a computation that calls itself) is refused.
constexpr int kMaxCallDepth = 64;
// Each use of a called computation writes it out again, so nesting can
// multiply a module's size; writing stops (an error) past this many
// instructions per instruction of the module, or kMinEmitBudget.
constexpr size_t kEmitBudgetPerInstruction = 64;
constexpr size_t kMinEmitBudget = size_t{1} << 18;

// `{1,0}`: a ShapeIndex as XLA prints it.
std::string IndexText(const std::vector<int64_t>& index) {
  std::string text = "{";
  for (size_t i = 0; i < index.size(); ++i) text += (i ? "," : "") + std::to_string(index[i]);
  return text + "}";
}

// The position, in Flatten's order, of the array leaf of `shape` at `index`
// (a ShapeIndex: tuple element numbers from the top); `what` names it in
// errors.
StatusOr<size_t> LeafPosition(const Shape& shape, const std::vector<int64_t>& index,
                              const std::string& what) {
  size_t position = 0;
  const Shape* at = &shape;
  for (int64_t element : index) {
    if (at->type != PrimitiveType::kTuple) {
      return InvalidArgument(what, " has shape index ", IndexText(index),
                             ", which goes into an array");
    }
    if (element < 0 || element >= static_cast<int64_t>(at->tuple.size())) {
      return InvalidArgument(what, " has shape index ", IndexText(index), "; element ", element,
                             " of a tuple of ", at->tuple.size());
    }
    for (int64_t k = 0; k < element; ++k) position += LeafCount(at->tuple[k]);
    at = &at->tuple[element];
  }
  if (at->type == PrimitiveType::kTuple) {
    return InvalidArgument(what, " has shape index ", IndexText(index),
                           ", a tuple; Kiln donates array buffers");
  }
  return position;
}

std::string Ints(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(values[i]);
  }
  return text;
}

std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* digits = "0123456789ABCDEF";
      out += '\\';
      out += digits[(c >> 4) & 0xF];
      out += digits[c & 0xF];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The id of `computation`'s root: root_id, or its last instruction when
// root_id is unset.
int64_t RootId(const Computation& computation) {
  return computation.root_id >= 0 || computation.instructions.empty()
             ? computation.root_id
             : computation.instructions.back().id;
}

// `"op"(%a, %b) : (ta, tb) -> ()`: a terminator returning `values`.
StatusOr<std::string> Return(std::string_view op, const Leaves& values) {
  std::string names, types;
  for (const Leaf& leaf : values) {
    KILN_ASSIGN_OR_RETURN(std::string type, TypeText(leaf.shape));
    names += (names.empty() ? "" : ", ") + leaf.name;
    types += (types.empty() ? "" : ", ") + type;
  }
  return "\"" + std::string(op) + "\"(" + names + ") : (" + types + ") -> ()";
}

}  // namespace

// The StableHLO spelling of an array or token shape, from Kiln's printer
// (so the parser reads back exactly the type meant).
StatusOr<std::string> TypeText(const Shape& shape) {
  KILN_ASSIGN_OR_RETURN(ElementType element, ToElementType(shape.type));
  if (element == ElementType::kToken) return ir::PrintType(ir::Type::Token());
  if (shape.dynamic) {
    return Unimplemented("dynamic dimensions (is_dynamic_dimension) are not supported");
  }
  for (int64_t dim : shape.dims) {
    if (dim < 0) return InvalidArgument("expected dimension sizes >= 0, found ", dim);
  }
  return ir::PrintType(ir::Type::Tensor(ir::Type::Element(element), shape.dims));
}

// The array leaves of `shape`, depth first (tuples flattened).
void Flatten(const Shape& shape, std::vector<Shape>& out) {
  std::vector<const Shape*> stack = {&shape};
  while (!stack.empty()) {
    const Shape* top = stack.back();
    stack.pop_back();
    if (top->type != PrimitiveType::kTuple) {
      out.push_back(*top);
      continue;
    }
    for (auto it = top->tuple.rbegin(); it != top->tuple.rend(); ++it) stack.push_back(&*it);
  }
}

size_t LeafCount(const Shape& shape) {
  std::vector<Shape> leaves;
  Flatten(shape, leaves);
  return leaves.size();
}

// Elements of an array shape; -1 when a dimension is negative or the
// count overflows.
int64_t NumElements(const Shape& shape) {
  int64_t count = 1;
  for (int64_t dim : shape.dims) {
    if (dim < 0 || (dim > 0 && count > INT64_MAX / dim)) return -1;
    count *= dim;
  }
  return count;
}

// `array<i64: 1, 2>` (`array<i64>` when empty).
std::string I64Array(const std::vector<int64_t>& values) {
  return values.empty() ? "array<i64>" : "array<i64: " + Ints(values) + ">";
}

std::string List(const std::vector<int64_t>& values) { return "[" + Ints(values) + "]"; }

std::string Hex(std::span<const uint8_t> bytes) {
  static const char* digits = "0123456789ABCDEF";
  std::string text = "\"0x";
  text.reserve(bytes.size() * 2 + 4);
  for (uint8_t byte : bytes) {
    text += digits[byte >> 4];
    text += digits[byte & 0xF];
  }
  return text + "\"";
}

// A single array operand's leaf.
StatusOr<Leaf> Single(const Leaves& leaves, size_t index) {
  if (leaves.size() != 1) {
    return InvalidArgument("operand ", index, " must be an array, found a tuple of ", leaves.size(),
                           " arrays");
  }
  return leaves[0];
}

std::string WindowAttributes(const std::vector<WindowDimension>& window, bool dimensions,
                             bool dilations) {
  std::vector<int64_t> sizes, strides, base, dilation;
  std::string padding;
  for (const WindowDimension& d : window) {
    sizes.push_back(d.size);
    strides.push_back(d.stride);
    base.push_back(d.base_dilation);
    dilation.push_back(d.window_dilation);
    padding += (padding.empty() ? "" : ", ") + std::string("[") + std::to_string(d.padding_low) +
               ", " + std::to_string(d.padding_high) + "]";
  }
  std::string text;
  if (dimensions) text += "window_dimensions = " + I64Array(sizes) + ", ";
  text += "window_strides = " + I64Array(strides);
  if (dilations) {
    text += ", base_dilations = " + I64Array(base) + ", window_dilations = " + I64Array(dilation);
  }
  text += ", padding = dense<" + (window.empty() ? std::string("") : "[" + padding + "]") +
          "> : tensor<" + std::to_string(window.size()) + "x2xi64>";
  return text;
}

StatusOr<std::string> Converter::Run() {
  size_t instructions = 0;
  for (const Computation& computation : module_.computations) {
    computations_[computation.id] = &computation;
    instructions += computation.instructions.size();
  }
  budget_ = std::max<size_t>(kMinEmitBudget, kEmitBudgetPerInstruction * instructions);
  const Computation* entry = nullptr;
  for (const Computation& computation : module_.computations) {
    if (computation.id == module_.entry_computation_id ||
        (module_.entry_computation_id < 0 && computation.name == module_.entry_computation_name)) {
      entry = &computation;
    }
  }
  if (entry == nullptr) {
    return InvalidArgument("the HloModuleProto names entry computation ",
                           module_.entry_computation_id, " (\"", module_.entry_computation_name,
                           "\"), but has no such computation");
  }
  // Entry parameters in parameter_number order, each flattened.
  std::string signature;
  KILN_ASSIGN_OR_RETURN(std::vector<Leaves> arguments, BlockArguments(*entry, "%arg", signature));
  std::string body;
  Leaves results;
  KILN_RETURN_IF_ERROR(EmitComputation(*entry, arguments, 0, "    ", body, results));
  std::string result_types;
  for (const Leaf& leaf : results) {
    KILN_ASSIGN_OR_RETURN(std::string type, TypeText(leaf.shape));
    result_types += (result_types.empty() ? "" : ", ") + type;
  }
  if (!module_.donations.empty()) {
    KILN_ASSIGN_OR_RETURN(signature, DonatingSignature(*entry, arguments));
  }
  std::string text = "module @" + Quote(module_.name.empty() ? "hlo" : module_.name) + " {\n";
  text += "  func.func @main(" + signature + ") -> (" + result_types + ") {\n";
  KILN_ASSIGN_OR_RETURN(std::string terminator, Return("func.return", results));
  text += body;
  text += "    " + terminator + "\n";
  text += "  }\n}\n";
  return text;
}

// The entry's argument list with the module's donations on it, as JAX
// writes them in StableHLO: an argument aliased with a result gets
// `tf.aliasing_output = <result>`, a buffer donor `jax.buffer_donor`.
StatusOr<std::string> Converter::DonatingSignature(const Computation& entry,
                                                   const std::vector<Leaves>& arguments) {
  std::vector<size_t> first_leaf;
  size_t leaves = 0;
  for (const Leaves& argument : arguments) {
    first_leaf.push_back(leaves);
    leaves += argument.size();
  }
  const int64_t root_id = RootId(entry);
  const Instruction* root = nullptr;
  std::vector<const Instruction*> parameters(arguments.size(), nullptr);
  for (const Instruction& instruction : entry.instructions) {
    if (instruction.id == root_id) root = &instruction;
    // BlockArguments checked that the numbers are 0 .. arguments.size() - 1.
    if (instruction.opcode == "parameter") {
      parameters[static_cast<size_t>(instruction.parameter_number)] = &instruction;
    }
  }
  std::vector<std::string> attributes(leaves);
  for (const Donation& donation : module_.donations) {
    const std::string what = StrCat(donation.output_index ? "an input_output_alias"
                                                          : "a buffer_donor",
                                    " entry of parameter ", donation.parameter);
    if (donation.parameter < 0 || donation.parameter >= static_cast<int64_t>(arguments.size())) {
      return InvalidArgument(what, ": the entry computation has ", arguments.size(), " parameters");
    }
    const auto parameter = static_cast<size_t>(donation.parameter);
    KILN_ASSIGN_OR_RETURN(size_t within, LeafPosition(parameters[parameter]->shape,
                                                      donation.parameter_index, what));
    std::string& attribute = attributes[first_leaf[parameter] + within];
    if (!attribute.empty()) {
      return InvalidArgument(what, " names a parameter buffer another entry names too");
    }
    if (!donation.output_index) {
      attribute = "jax.buffer_donor = true";
      continue;
    }
    if (root == nullptr) return InvalidArgument(what, ": the entry computation has no root");
    KILN_ASSIGN_OR_RETURN(size_t result,
                          LeafPosition(root->shape, *donation.output_index, what + "'s output"));
    attribute = StrCat("tf.aliasing_output = ", result, " : i32");
  }
  std::string signature;
  size_t leaf = 0;
  for (const Leaves& argument : arguments) {
    for (const Leaf& each : argument) {
      KILN_ASSIGN_OR_RETURN(std::string type, TypeText(each.shape));
      signature += (signature.empty() ? "" : ", ") + each.name + ": " + type;
      if (!attributes[leaf].empty()) signature += " {" + attributes[leaf] + "}";
      ++leaf;
    }
  }
  return signature;
}

Status Converter::EmitComputation(const Computation& computation,
                                  const std::vector<Leaves>& parameters, int depth,
                                  const std::string& indent, std::string& out, Leaves& root) {
  if (depth > kMaxCallDepth) {
    return InvalidArgument("computations nest deeper than ", kMaxCallDepth,
                           " calls (or one calls itself): at ", computation.name);
  }
  std::unordered_map<int64_t, Leaves> values;
  for (const Instruction& instruction : computation.instructions) {
    if (++emitted_ > budget_) {
      return InvalidArgument("inlining called computations gives more than ", budget_,
                             " instructions (computations called from many places at many "
                             "levels multiply); at ",
                             computation.name);
    }
    Leaves result;
    Status status = EmitInstruction(instruction, computation, parameters, values, depth, indent,
                                    out, result);
    if (!status.ok()) {
      std::string where = "instruction " + instruction.name + " (" + instruction.opcode + ")";
      if (!instruction.op_type.empty()) where += " from " + instruction.op_type;
      if (!instruction.source_file.empty()) {
        where += " at " + instruction.source_file + ":" + std::to_string(instruction.source_line);
      }
      return Status(status.code(), StrCat(where, " in ", computation.name, ": ", status.message()));
    }
    values[instruction.id] = std::move(result);
  }
  const int64_t root_id = RootId(computation);
  auto it = values.find(root_id);
  if (it == values.end()) {
    return InvalidArgument("computation ", computation.name, " names root instruction ", root_id,
                           ", which it does not hold");
  }
  root = it->second;
  return Status::Ok();
}

StatusOr<const Computation*> Converter::Called(const Instruction& instruction, size_t index) {
  if (index >= instruction.called_computation_ids.size()) {
    return InvalidArgument("expected at least ", index + 1, " called computations, found ",
                           instruction.called_computation_ids.size());
  }
  auto it = computations_.find(instruction.called_computation_ids[index]);
  if (it == computations_.end()) {
    return InvalidArgument("calls computation ", instruction.called_computation_ids[index],
                           ", which the module does not hold");
  }
  return it->second;
}

// The parameters of `computation` by parameter_number, each flattened
// into block arguments named `prefix`N; `declaration` gets their
// "name: type" list.
StatusOr<std::vector<Leaves>> Converter::BlockArguments(const Computation& computation,
                                                        std::string_view prefix,
                                                        std::string& declaration) {
  std::vector<const Instruction*> by_number;
  for (const Instruction& instruction : computation.instructions) {
    if (instruction.opcode != "parameter") continue;
    const auto number = static_cast<size_t>(instruction.parameter_number);
    if (instruction.parameter_number < 0 || number >= computation.instructions.size()) {
      return InvalidArgument("parameter ", instruction.name, " of ", computation.name,
                             " has number ", instruction.parameter_number, "; expected 0 to ",
                             computation.instructions.size() - 1);
    }
    if (by_number.size() <= number) by_number.resize(number + 1, nullptr);
    if (by_number[number] != nullptr) {
      return InvalidArgument("two parameters of ", computation.name, " have number ", number);
    }
    by_number[number] = &instruction;
  }
  std::vector<Leaves> arguments(by_number.size());
  for (size_t i = 0; i < by_number.size(); ++i) {
    if (by_number[i] == nullptr) {
      return InvalidArgument(computation.name, " has no parameter number ", i, " of ",
                             by_number.size());
    }
    std::vector<Shape> shapes;
    Flatten(by_number[i]->shape, shapes);
    for (Shape& shape : shapes) {
      KILN_ASSIGN_OR_RETURN(std::string type, TypeText(shape));
      Leaf leaf{std::string(prefix) + std::to_string(next_argument_++), std::move(shape)};
      declaration += (declaration.empty() ? "" : ", ") + leaf.name + ": " + type;
      arguments[i].push_back(std::move(leaf));
    }
  }
  return arguments;
}

Status Converter::EmitRegion(const Computation& computation, int depth, const std::string& indent,
                             std::string& out, bool with_arguments,
                             const std::vector<Leaves>& captured) {
  std::vector<Leaves> parameters = captured;
  std::string header;
  if (with_arguments) {
    KILN_ASSIGN_OR_RETURN(parameters, BlockArguments(computation, "%a", header));
  }
  out += "{\n";
  if (with_arguments) out += indent + "^bb0(" + header + "):\n";
  Leaves root;
  KILN_RETURN_IF_ERROR(EmitComputation(computation, parameters, depth + 1, indent + "  ", out,
                                       root));
  KILN_ASSIGN_OR_RETURN(std::string terminator, Return("stablehlo.return", root));
  out += indent + "  " + terminator + "\n" + indent + "}";
  return Status::Ok();
}

StatusOr<Leaves> Converter::Results(const Shape& shape, std::string& lhs) {
  std::vector<Shape> shapes;
  Flatten(shape, shapes);
  const std::string name = "%v" + std::to_string(next_value_++);
  Leaves leaves;
  if (shapes.size() == 1) {
    leaves.push_back({name, shapes[0]});
    lhs = name;
  } else {
    for (size_t i = 0; i < shapes.size(); ++i) {
      leaves.push_back({name + "#" + std::to_string(i), shapes[i]});
    }
    lhs = name + ":" + std::to_string(shapes.size());
  }
  return leaves;
}

StatusOr<std::string> Converter::OpText(std::string_view name, const std::string& lhs,
                                        const Leaves& operands, const std::string& properties,
                                        const std::string& regions, const Leaves& results,
                                        const Instruction& instruction) {
  std::string names, types, result_types;
  for (const Leaf& leaf : operands) {
    KILN_ASSIGN_OR_RETURN(std::string type, TypeText(leaf.shape));
    names += (names.empty() ? "" : ", ") + leaf.name;
    types += (types.empty() ? "" : ", ") + type;
  }
  for (const Leaf& leaf : results) {
    KILN_ASSIGN_OR_RETURN(std::string type, TypeText(leaf.shape));
    result_types += (result_types.empty() ? "" : ", ") + type;
  }
  std::string text = (lhs.empty() ? "" : lhs + " = ") + "\"" + std::string(name) + "\"(" + names +
                     ")";
  if (!properties.empty()) text += " <{" + properties + "}>";
  if (!regions.empty()) text += " (" + regions + ")";
  text += " : (" + types + ") -> ";
  text += results.size() == 1 ? result_types : "(" + result_types + ")";
  std::string location = instruction.op_name.empty() ? instruction.name : instruction.op_name;
  if (!instruction.source_file.empty()) {
    text += " loc(" + Quote(location) + "(" + Quote(instruction.source_file) + ":" +
            std::to_string(instruction.source_line) + ":0))";
  } else {
    text += " loc(" + Quote(location) + ")";
  }
  return text;
}

namespace {

// The emitter of each HLO opcode, from the families' tables; built once.
const std::unordered_map<std::string_view, EmitFn>& Emitters() {
  static const auto* table = [] {
    auto* emitters = new std::unordered_map<std::string_view, EmitFn>;
    for (auto family : {ValueEmitters(), ElementwiseEmitters(), ShapeEmitters(), LinalgEmitters(),
                        RegionEmitters()}) {
      for (const EmitRule& rule : family) emitters->emplace(rule.opcode, rule.emit);
    }
    return emitters;
  }();
  return *table;
}

}  // namespace

Status Converter::EmitInstruction(const Instruction& in, const Computation& computation,
                                  const std::vector<Leaves>& parameters,
                                  const std::unordered_map<int64_t, Leaves>& values, int depth,
                                  const std::string& indent, std::string& out, Leaves& result) {
  Emission emission{*this, in, computation, parameters, {}, {}, depth, indent, out, result};
  for (int64_t id : in.operand_ids) {
    auto it = values.find(id);
    if (it == values.end()) {
      return InvalidArgument("uses instruction ", id, ", which ", computation.name,
                             " does not define before it");
    }
    emission.operands.push_back(it->second);
    emission.flat.insert(emission.flat.end(), it->second.begin(), it->second.end());
  }
  auto emitter = Emitters().find(in.opcode);
  if (emitter == Emitters().end()) {
    return Unimplemented("HLO opcode \"", in.opcode, "\" is not supported by Kiln's HLO reader");
  }
  return emitter->second(emission);
}

Status Emission::ExpectOperands(size_t count) const {
  if (operands.size() == count) return Status::Ok();
  return InvalidArgument("expected ", count, " operands, found ", operands.size());
}

Status Emission::Emit(std::string_view name, const Leaves& args, const std::string& properties,
                      const std::string& regions) {
  std::string lhs;
  KILN_ASSIGN_OR_RETURN(result, converter.Results(in.shape, lhs));
  KILN_ASSIGN_OR_RETURN(std::string text,
                        converter.OpText(name, lhs, args, properties, regions, result, in));
  out += indent + text + "\n";
  return Status::Ok();
}

StatusOr<std::string> ToStableHloText(const Module& module) { return Converter(module).Run(); }

StatusOr<ir::Module> ReadHloModule(std::span<const uint8_t> bytes) {
  KILN_ASSIGN_OR_RETURN(Module module, DecodeModule(bytes));
  KILN_ASSIGN_OR_RETURN(std::string text, ToStableHloText(module));
  StatusOr<ir::Module> parsed = text::ParseModule(text);
  if (!parsed.ok()) {
    return Status(parsed.status().code(),
                  StrCat("the StableHLO Kiln wrote for HLO module \"", module.name,
                         "\" does not parse (a bug in Kiln's HLO reader): ",
                         parsed.status().message()));
  }
  return parsed;
}

StatusOr<std::span<const uint8_t>> ModuleOfModuleWithConfig(std::span<const uint8_t> bytes) {
  proto::Reader reader(bytes);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(proto::Field field, reader.Next());
    if (field.number == 1 && field.type == proto::WireType::kLengthDelimited) return field.bytes;
  }
  return InvalidArgument("expected an HloModuleProtoWithConfig holding hlo_module (field 1), "
                         "found none");
}

StatusOr<std::vector<uint8_t>> OptimizedProgramOf(std::span<const uint8_t> bytes,
                                                  std::string_view format) {
  std::span<const uint8_t> module = bytes;
  if (format == "hlo_with_config") {
    KILN_ASSIGN_OR_RETURN(module, ModuleOfModuleWithConfig(bytes));
  }
  // HloModuleProto.host_program_shape (field 4): the entry's parameter and
  // result shapes with their layouts, which is what the config's
  // entry_computation_layout (HloModuleConfigProto field 1) holds.
  std::span<const uint8_t> program_shape;
  proto::Reader reader(module);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(proto::Field field, reader.Next());
    if (field.number == 4 && field.type == proto::WireType::kLengthDelimited) {
      program_shape = field.bytes;
    }
  }
  if (program_shape.empty()) {
    return InvalidArgument("the HloModuleProto has no host_program_shape (field 4), which "
                           "XLA requires of a module");
  }
  proto::Writer config;
  config.Bytes(1, program_shape);
  proto::Writer with_config;
  with_config.Bytes(1, module);
  with_config.Bytes(2, config.bytes());
  return with_config.bytes();
}

}  // namespace kiln::frontend::hlo