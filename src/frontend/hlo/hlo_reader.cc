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
  // The root's sharding is the results' (GSPMD: each device returns its
  // tile of them).
  const Instruction* root = nullptr;
  const int64_t root_id = RootId(*entry);
  for (const Instruction& instruction : entry->instructions) {
    if (instruction.id == root_id) root = &instruction;
  }
  if (root != nullptr && !root->sharding.empty() && root->sharding.size() != results.size()) {
    return InvalidArgument("the entry's root ", root->name, " has a sharding of ",
                           root->sharding.size(), " leaves for ", results.size(), " results");
  }
  std::string result_types;
  for (size_t r = 0; r < results.size(); ++r) {
    KILN_ASSIGN_OR_RETURN(std::string type, TypeText(results[r].shape));
    result_types += (result_types.empty() ? "" : ", ") + type;
    if (root != nullptr && !root->sharding.empty() && root->sharding[r] != "{unknown}") {
      result_types += " {mhlo.sharding = \"" + root->sharding[r] + "\"}";
    }
  }
  KILN_ASSIGN_OR_RETURN(signature, EntrySignature(*entry, arguments));
  std::string text = "module @" + Quote(module_.name.empty() ? "hlo" : module_.name) + " {\n";
  text += "  func.func @main(" + signature + ") -> (" + result_types + ") {\n";
  KILN_ASSIGN_OR_RETURN(std::string terminator, Return("func.return", results));
  text += body;
  text += "    " + terminator + "\n";
  text += "  }\n}\n";
  return text;
}

// The entry's argument list with the module's donations and the
// parameters' shardings on it, as JAX writes them in StableHLO: an
// argument aliased with a result gets `tf.aliasing_output = <result>`, a
// buffer donor `jax.buffer_donor`, a sharded one `mhlo.sharding`.
StatusOr<std::string> Converter::EntrySignature(const Computation& entry,
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
  for (size_t p = 0; p < parameters.size(); ++p) {
    const std::vector<std::string>& sharding = parameters[p]->sharding;
    if (sharding.empty()) continue;
    if (sharding.size() != arguments[p].size()) {
      return InvalidArgument("parameter ", p, " has a sharding of ", sharding.size(),
                             " leaves for ", arguments[p].size(), " arrays");
    }
    for (size_t i = 0; i < sharding.size(); ++i) {
      if (sharding[i] == "{unknown}") continue;
      std::string& attribute = attributes[first_leaf[p] + i];
      attribute += (attribute.empty() ? "" : ", ") + std::string("mhlo.sharding = \"") +
                   sharding[i] + "\"";
    }
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
  KILN_RETURN_IF_ERROR(emitter->second(emission));
  // A sharding on any other instruction constrains its result, as GSPMD's
  // `Sharding` custom call does (the entry's parameters and root carry
  // theirs on the signature; tuples only group their operands).
  const bool constrains = !in.sharding.empty() && in.opcode != "parameter" &&
                          in.opcode != "custom-call" && in.opcode != "tuple" &&
                          in.opcode != "get-tuple-element" &&
                          !(depth == 0 && in.id == RootId(computation));
  if (!constrains) return Status::Ok();
  if (in.sharding.size() != result.size()) {
    return InvalidArgument("a sharding of ", in.sharding.size(), " leaves on a result of ",
                           result.size());
  }
  for (size_t i = 0; i < result.size(); ++i) {
    if (in.sharding[i] == "{unknown}" || result[i].shape.type == PrimitiveType::kToken) continue;
    KILN_ASSIGN_OR_RETURN(result[i],
                          ShardingConstraint(result[i], in.sharding[i], in, indent, out));
  }
  return Status::Ok();
}

StatusOr<Leaf> Converter::ShardingConstraint(const Leaf& value, const std::string& sharding,
                                             const Instruction& in, const std::string& indent,
                                             std::string& out) {
  Leaf constrained{NewValueName(), value.shape};
  KILN_ASSIGN_OR_RETURN(std::string text,
                        OpText("stablehlo.custom_call", constrained.name, {value},
                               ShardingProperties("Sharding", sharding), "", {constrained}, in));
  out += indent + text + "\n";
  return constrained;
}

std::string ShardingProperties(std::string_view target, const std::string& sharding) {
  // (The text is Kiln's own, of digits and words: nothing to escape.)
  return StrCat("call_target_name = \"", target, "\", mhlo.sharding = \"", sharding, "\"");
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

namespace {

// Whether a ProgramShapeProto's result (field 2) is a tuple (its
// ShapeProto's element_type, field 2, is TUPLE).
StatusOr<bool> ReturnsTuple(const proto::Field& program_shape) {
  proto::Reader reader = proto::Reader::Nested(program_shape);
  while (!reader.done()) {
    KILN_ASSIGN_OR_RETURN(proto::Field field, reader.Next());
    if (field.number != 2 || field.type != proto::WireType::kLengthDelimited) continue;
    proto::Reader shape = proto::Reader::Nested(field);
    while (!shape.done()) {
      KILN_ASSIGN_OR_RETURN(proto::Field each, shape.Next());
      if (each.number == 2 && each.type == proto::WireType::kVarint) {
        return each.value == static_cast<uint64_t>(PrimitiveType::kTuple);
      }
    }
  }
  return true;
}

}  // namespace

StatusOr<std::vector<uint8_t>> WithSpmdShardings(std::span<const uint8_t> with_config,
                                                 std::span<const std::string> parameters,
                                                 std::span<const std::string> outputs) {
  auto bytes_of = [](const std::string& text) {
    return std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size());
  };
  proto::Writer tuple;
  tuple.Varint(1, 2);  // type = TUPLE
  for (const std::string& output : outputs) tuple.Bytes(5, bytes_of(output));
  proto::Writer rebuilt;
  proto::Reader outer(with_config);
  while (!outer.done()) {
    KILN_ASSIGN_OR_RETURN(proto::Field field, outer.Next());
    if (field.number != 1 || field.type != proto::WireType::kLengthDelimited) {
      rebuilt.Copy(field);
      continue;
    }
    // HloModuleProto: fields 12 (spmd_output_sharding) and 14
    // (spmd_parameters_shardings) replaced, the rest kept.
    proto::Writer module;
    bool tuple_result = true;
    proto::Reader inner = proto::Reader::Nested(field);
    while (!inner.done()) {
      KILN_ASSIGN_OR_RETURN(proto::Field each, inner.Next());
      if (each.number != 12 && each.number != 14) module.Copy(each);
      if (each.number == 4 && each.type == proto::WireType::kLengthDelimited) {
        KILN_ASSIGN_OR_RETURN(tuple_result, ReturnsTuple(each));
      }
    }
    // A root of one array has that array's sharding, not a tuple's.
    if (!tuple_result && outputs.size() == 1) {
      module.Bytes(12, bytes_of(outputs[0]));
    } else {
      module.Bytes(12, tuple.bytes());
    }
    for (const std::string& parameter : parameters) module.Bytes(14, bytes_of(parameter));
    rebuilt.Bytes(1, module.bytes());
  }
  return rebuilt.bytes();
}

}  // namespace kiln::frontend::hlo
