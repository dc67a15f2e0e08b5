#include "frontend/hlo/hlo_reader.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <cstdio>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

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

// One array (or token) value of the StableHLO program: an HLO value of
// tuple shape is the list of its leaves.
struct Leaf {
  std::string name;  // "%v3" or "%v3#1"
  Shape shape;
};
using Leaves = std::vector<Leaf>;

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

// The id of `computation`'s root: root_id, or its last instruction when
// root_id is unset.
int64_t RootId(const Computation& computation) {
  return computation.root_id >= 0 || computation.instructions.empty()
             ? computation.root_id
             : computation.instructions.back().id;
}

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
      return InvalidArgument(what, " has shape index ", IndexText(index), "; element ",
                             element, " of a tuple of ", at->tuple.size());
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

std::string Ints(const std::vector<int64_t>& values) {
  std::string text;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(values[i]);
  }
  return text;
}

// `array<i64: 1, 2>` (`array<i64>` when empty).
std::string I64Array(const std::vector<int64_t>& values) {
  return values.empty() ? "array<i64>" : "array<i64: " + Ints(values) + ">";
}

std::string List(const std::vector<int64_t>& values) { return "[" + Ints(values) + "]"; }

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

// The HLO opcodes that are StableHLO ops of the same meaning, operands and
// result: the StableHLO name is the HLO one with '-' as '_'.
bool IsSameNamedOp(std::string_view opcode) {
  static constexpr std::string_view kOps[] = {
      // unary
      "abs", "negate", "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt",
      "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan", "floor", "ceil",
      "round-nearest-afz", "round-nearest-even", "sign", "not", "is-finite", "popcnt",
      "count-leading-zeros", "real", "imag", "convert", "bitcast-convert", "reshape",
      // binary
      "add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
      "and", "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "complex",
      // ternary
      "select", "clamp"};
  return std::find(std::begin(kOps), std::end(kOps), opcode) != std::end(kOps);
}

class Converter {
 public:
  explicit Converter(const Module& module) : module_(module) {}

  StatusOr<std::string> Run() {
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
                             module_.entry_computation_id, " (\"",
                             module_.entry_computation_name, "\"), but has no such computation");
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

 private:
  // The entry's argument list with the module's donations on it, as JAX
  // writes them in StableHLO: an argument aliased with a result gets
  // `tf.aliasing_output = <result>`, a buffer donor `jax.buffer_donor`.
  StatusOr<std::string> DonatingSignature(const Computation& entry,
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
      const std::string what = StrCat(donation.output_index ? "an input_output_alias" : "a buffer_donor",
                                      " entry of parameter ", donation.parameter);
      if (donation.parameter < 0 || donation.parameter >= static_cast<int64_t>(arguments.size())) {
        return InvalidArgument(what, ": the entry computation has ", arguments.size(),
                               " parameters");
      }
      const auto parameter = static_cast<size_t>(donation.parameter);
      KILN_ASSIGN_OR_RETURN(size_t within,
                            LeafPosition(parameters[parameter]->shape, donation.parameter_index, what));
      std::string& attribute = attributes[first_leaf[parameter] + within];
      if (!attribute.empty()) {
        return InvalidArgument(what, " names a parameter buffer another entry names too");
      }
      if (!donation.output_index) {
        attribute = "jax.buffer_donor = true";
        continue;
      }
      if (root == nullptr) return InvalidArgument(what, ": the entry computation has no root");
      KILN_ASSIGN_OR_RETURN(size_t result, LeafPosition(root->shape, *donation.output_index,
                                                        what + "'s output"));
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

  // `"op"(%a, %b) : (ta, tb) -> ()`: a terminator returning `values`.
  static StatusOr<std::string> Return(std::string_view op, const Leaves& values) {
    std::string names, types;
    for (const Leaf& leaf : values) {
      KILN_ASSIGN_OR_RETURN(std::string type, TypeText(leaf.shape));
      names += (names.empty() ? "" : ", ") + leaf.name;
      types += (types.empty() ? "" : ", ") + type;
    }
    return "\"" + std::string(op) + "\"(" + names + ") : (" + types + ") -> ()";
  }

  // Emits `computation` with its parameters bound to `parameters` (by
  // parameter_number); `root` gets the leaves of its root instruction.
  Status EmitComputation(const Computation& computation, const std::vector<Leaves>& parameters,
                         int depth, const std::string& indent, std::string& out, Leaves& root) {
    if (depth > kMaxCallDepth) {
      return InvalidArgument("computations nest deeper than ", kMaxCallDepth,
                             " calls (or one calls itself): at ", computation.name);
    }
    std::unordered_map<int64_t, Leaves> values;
    for (const Instruction& instruction : computation.instructions) {
      if (++emitted_ > budget_) {
        return InvalidArgument("inlining called computations gives more than ", budget_,
                               " instructions (computations called from many places at many "
                               "levels multiply); at ", computation.name);
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
        return Status(status.code(), StrCat(where, " in ", computation.name, ": ",
                                            status.message()));
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

  StatusOr<const Computation*> Called(const Instruction& instruction, size_t index) {
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
  StatusOr<std::vector<Leaves>> BlockArguments(const Computation& computation,
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

  // A region holding `computation` whose block arguments are its
  // parameters, each flattened: `({ ^bb0(...): ... "stablehlo.return"(...) })`
  // without the outer parentheses.
  Status EmitRegion(const Computation& computation, int depth, const std::string& indent,
                    std::string& out, bool with_arguments = true,
                    const std::vector<Leaves>& captured = {}) {
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

  // Names `count` results of the op about to be written, as leaves of `shape`.
  StatusOr<Leaves> Results(const Shape& shape, std::string& lhs) {
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

  // `lhs = "name"(operands) <{properties}> (regions) : (types) -> (types)`.
  StatusOr<std::string> OpText(std::string_view name, const std::string& lhs,
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

  Status EmitInstruction(const Instruction& in, const Computation& computation,
                         const std::vector<Leaves>& parameters,
                         const std::unordered_map<int64_t, Leaves>& values, int depth,
                         const std::string& indent, std::string& out, Leaves& result);

  const Module& module_;
  std::unordered_map<int64_t, const Computation*> computations_;
  int next_value_ = 0;
  int next_argument_ = 0;
  size_t emitted_ = 0;  // instructions written, every inlined copy counted
  size_t budget_ = 0;
};

// A single array operand's leaf.
StatusOr<Leaf> Single(const Leaves& leaves, size_t index) {
  if (leaves.size() != 1) {
    return InvalidArgument("operand ", index, " must be an array, found a tuple of ",
                           leaves.size(), " arrays");
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

std::string ComparisonType(const Instruction& in, const Shape& operand) {
  if (!in.comparison_type.empty()) return in.comparison_type;
  switch (operand.type) {
    case PrimitiveType::kF16: case PrimitiveType::kBF16: case PrimitiveType::kF32:
    case PrimitiveType::kF64: case PrimitiveType::kC64: case PrimitiveType::kC128:
    case PrimitiveType::kF8E5M2: case PrimitiveType::kF8E4M3FN:
    case PrimitiveType::kF8E4M3B11FNUZ: case PrimitiveType::kF8E5M2FNUZ:
    case PrimitiveType::kF8E4M3FNUZ:
      return "FLOAT";
    case PrimitiveType::kS4: case PrimitiveType::kS8: case PrimitiveType::kS16:
    case PrimitiveType::kS32: case PrimitiveType::kS64:
      return "SIGNED";
    default:
      return "UNSIGNED";
  }
}

Status Converter::EmitInstruction(const Instruction& in, const Computation& computation,
                                  const std::vector<Leaves>& parameters,
                                  const std::unordered_map<int64_t, Leaves>& values, int depth,
                                  const std::string& indent, std::string& out, Leaves& result) {
  std::vector<Leaves> operands;
  Leaves flat;  // every operand leaf, in order
  for (int64_t id : in.operand_ids) {
    auto it = values.find(id);
    if (it == values.end()) {
      return InvalidArgument("uses instruction ", id, ", which ", computation.name,
                             " does not define before it");
    }
    operands.push_back(it->second);
    flat.insert(flat.end(), it->second.begin(), it->second.end());
  }
  const std::string& op = in.opcode;
  auto expect_operands = [&](size_t count) -> Status {
    if (operands.size() == count) return Status::Ok();
    return InvalidArgument("expected ", count, " operands, found ", operands.size());
  };
  auto emit = [&](std::string_view name, const Leaves& args, const std::string& properties,
                  const std::string& regions = "") -> Status {
    std::string lhs;
    KILN_ASSIGN_OR_RETURN(result, Results(in.shape, lhs));
    KILN_ASSIGN_OR_RETURN(std::string text,
                          OpText(name, lhs, args, properties, regions, result, in));
    out += indent + text + "\n";
    return Status::Ok();
  };

  if (op == "parameter") {
    const auto number = static_cast<size_t>(in.parameter_number);
    if (in.parameter_number < 0 || number >= parameters.size()) {
      return InvalidArgument("parameter number ", in.parameter_number, " of ", parameters.size());
    }
    result = parameters[number];
    return Status::Ok();
  }
  if (op == "tuple") {
    result = flat;
    return Status::Ok();
  }
  if (op == "get-tuple-element") {
    KILN_RETURN_IF_ERROR(expect_operands(1));
    // The operand's shape is not stored with it: count leaves per member
    // from this instruction's own shape and the operand's leaves.
    const int64_t index = in.tuple_index;
    auto it = std::find_if(computation.instructions.begin(), computation.instructions.end(),
                           [&](const Instruction& i) { return i.id == in.operand_ids[0]; });
    if (it == computation.instructions.end() || it->shape.type != PrimitiveType::kTuple ||
        index < 0 || static_cast<size_t>(index) >= it->shape.tuple.size()) {
      return InvalidArgument("expected a tuple operand with an element ", index);
    }
    size_t start = 0;
    for (int64_t i = 0; i < index; ++i) start += LeafCount(it->shape.tuple[i]);
    const size_t count = LeafCount(it->shape.tuple[index]);
    if (start + count > operands[0].size()) {
      return InvalidArgument("tuple element ", index, " is out of the operand's leaves");
    }
    result.assign(operands[0].begin() + start, operands[0].begin() + start + count);
    return Status::Ok();
  }
  if (op == "copy" || op == "domain") {
    result = flat;
    return Status::Ok();
  }
  if (op == "constant") {
    if (!in.has_literal) return InvalidArgument("expected a literal, found none");
    if (in.shape.type == PrimitiveType::kTuple || in.literal.shape.type == PrimitiveType::kTuple) {
      return Unimplemented("tuple constants are not supported");
    }
    KILN_ASSIGN_OR_RETURN(ElementType element, ToElementType(in.shape.type));
    const size_t bytes = GetElementTypeInfo(element).storage_bytes;
    if (bytes == 0) return InvalidArgument("constant of a non-array type");
    const int64_t elements = NumElements(in.shape);
    if (elements < 0 || static_cast<uint64_t>(elements) > in.literal.data.size()) {
      return InvalidArgument("literal holds ", in.literal.data.size(),
                             " bytes, fewer than its shape's elements");
    }
    const auto count = static_cast<size_t>(elements);
    if (in.literal.data.size() != bytes * count) {
      return InvalidArgument("literal holds ", in.literal.data.size(), " bytes; its shape needs ",
                             bytes * count, " (", count, " elements of ", bytes, " bytes)");
    }
    KILN_ASSIGN_OR_RETURN(std::string type, TypeText(in.shape));
    const std::string data = count == 0 ? "" : Hex(in.literal.data);
    return emit("stablehlo.constant", {}, "value = dense<" + data + "> : " + type);
  }
  if (IsSameNamedOp(op)) {
    std::string name = "stablehlo." + op;
    std::replace(name.begin(), name.end(), '-', '_');
    return emit(name, flat, "");
  }
  if (op == "bitcast") return emit("stablehlo.reshape", flat, "");
  // Opcodes newer XLA has that StableHLO keeps in CHLO.
  static constexpr std::string_view kChloOps[] = {"erf",  "acos", "acosh", "asin", "asinh",
                                                  "atan", "atanh", "cosh", "sinh"};
  if (std::find(std::begin(kChloOps), std::end(kChloOps), op) != std::end(kChloOps)) {
    return emit("chlo." + op, flat, "");
  }
  if (op == "compare") {
    KILN_RETURN_IF_ERROR(expect_operands(2));
    KILN_ASSIGN_OR_RETURN(Leaf lhs, Single(operands[0], 0));
    static constexpr std::string_view kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
    static constexpr std::string_view kTypes[] = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
    if (std::find(std::begin(kDirections), std::end(kDirections), in.comparison_direction) ==
        std::end(kDirections)) {
      return InvalidArgument("expected comparison_direction EQ, NE, GE, GT, LE or LT, found \"",
                             in.comparison_direction, "\"");
    }
    const std::string type = ComparisonType(in, lhs.shape);
    if (std::find(std::begin(kTypes), std::end(kTypes), type) == std::end(kTypes)) {
      return InvalidArgument("expected comparison_type FLOAT, TOTALORDER, SIGNED or UNSIGNED, "
                             "found \"", type, "\"");
    }
    return emit("stablehlo.compare", flat,
                "compare_type = #stablehlo<comparison_type " + type +
                    ">, comparison_direction = #stablehlo<comparison_direction " +
                    in.comparison_direction + ">");
  }
  if (op == "broadcast") {
    return emit("stablehlo.broadcast_in_dim", flat,
                "broadcast_dimensions = " + I64Array(in.dimensions));
  }
  if (op == "transpose") return emit("stablehlo.transpose", flat, "permutation = " + I64Array(in.dimensions));
  if (op == "reverse") return emit("stablehlo.reverse", flat, "dimensions = " + I64Array(in.dimensions));
  if (op == "concatenate" || op == "iota") {
    if (in.dimensions.size() != 1) {
      return InvalidArgument("expected one dimension, found ", in.dimensions.size());
    }
    const std::string dim = std::to_string(in.dimensions[0]) + " : i64";
    return op == "iota" ? emit("stablehlo.iota", {}, "iota_dimension = " + dim)
                        : emit("stablehlo.concatenate", flat, "dimension = " + dim);
  }
  if (op == "slice") {
    std::vector<int64_t> start, limit, stride;
    for (const SliceDimension& s : in.slices) {
      start.push_back(s.start);
      limit.push_back(s.limit);
      stride.push_back(s.stride);
    }
    return emit("stablehlo.slice", flat,
                "limit_indices = " + I64Array(limit) + ", start_indices = " + I64Array(start) +
                    ", strides = " + I64Array(stride));
  }
  if (op == "pad") {
    std::vector<int64_t> low, high, interior;
    for (const PaddingDimension& p : in.padding) {
      low.push_back(p.low);
      high.push_back(p.high);
      interior.push_back(p.interior);
    }
    return emit("stablehlo.pad", flat,
                "edge_padding_high = " + I64Array(high) + ", edge_padding_low = " + I64Array(low) +
                    ", interior_padding = " + I64Array(interior));
  }
  // dynamic-slice and dynamic-update-slice may take their start indices as
  // one rank-1 operand (HLO's older form, which torch_xla still emits, e.g.
  // for randperm): it becomes one scalar per dimension (slice + reshape).
  auto scalar_starts = [&](size_t first, size_t rank) -> Status {
    if (flat.size() != first + 1 || rank == 0 || flat[first].shape.dims.size() != 1) {
      return Status::Ok();
    }
    const Leaf starts = flat[first];
    if (starts.shape.dims[0] != static_cast<int64_t>(rank)) {
      return InvalidArgument("expected ", rank, " start indices in the rank-1 operand, found ",
                             starts.shape.dims[0]);
    }
    flat.pop_back();
    for (size_t d = 0; d < rank; ++d) {
      const auto i = static_cast<int64_t>(d);
      Leaves piece;
      std::string lhs;
      KILN_ASSIGN_OR_RETURN(piece, Results(Shape{starts.shape.type, {1}, {}, false}, lhs));
      KILN_ASSIGN_OR_RETURN(std::string text,
                            OpText("stablehlo.slice", lhs, {starts},
                                   "limit_indices = " + I64Array({i + 1}) +
                                       ", start_indices = " + I64Array({i}) +
                                       ", strides = " + I64Array({1}),
                                   "", piece, in));
      out += indent + text + "\n";
      Leaves scalar;
      KILN_ASSIGN_OR_RETURN(scalar, Results(Shape{starts.shape.type, {}, {}, false}, lhs));
      KILN_ASSIGN_OR_RETURN(text, OpText("stablehlo.reshape", lhs, piece, "", "", scalar, in));
      out += indent + text + "\n";
      flat.push_back(scalar[0]);
    }
    return Status::Ok();
  };
  if (op == "dynamic-slice") {
    if (!flat.empty()) KILN_RETURN_IF_ERROR(scalar_starts(1, flat[0].shape.dims.size()));
    return emit("stablehlo.dynamic_slice", flat, "slice_sizes = " + I64Array(in.dynamic_slice_sizes));
  }
  if (op == "dynamic-update-slice") {
    if (!flat.empty()) KILN_RETURN_IF_ERROR(scalar_starts(2, flat[0].shape.dims.size()));
    return emit("stablehlo.dynamic_update_slice", flat, "");
  }
  if (op == "reduce-precision") {
    return emit("stablehlo.reduce_precision", flat,
                "exponent_bits = " + std::to_string(in.exponent_bits) +
                    " : i32, mantissa_bits = " + std::to_string(in.mantissa_bits) + " : i32");
  }
  if (op == "dot") {
    std::string dims;
    auto add = [&](const char* name, const std::vector<int64_t>& v) {
      if (v.empty()) return;
      dims += (dims.empty() ? "" : ", ") + std::string(name) + " = " + List(v);
    };
    add("lhs_batching_dimensions", in.dot.lhs_batch);
    add("rhs_batching_dimensions", in.dot.rhs_batch);
    add("lhs_contracting_dimensions", in.dot.lhs_contracting);
    add("rhs_contracting_dimensions", in.dot.rhs_contracting);
    return emit("stablehlo.dot_general", flat, "dot_dimension_numbers = #stablehlo.dot<" + dims + ">");
  }
  if (op == "convolution") {
    const ConvolutionDims& d = in.convolution;
    std::vector<int64_t> lhs_dilation, rhs_dilation;
    for (const WindowDimension& w : in.window) {
      if (w.reversal) return Unimplemented("convolution with window_reversal");
      lhs_dilation.push_back(w.base_dilation);
      rhs_dilation.push_back(w.window_dilation);
    }
    // As XLA reads them: a count of 0 (unset) is 1.
    const int64_t feature_groups = std::max<int64_t>(in.feature_group_count, 1);
    const int64_t batch_groups = std::max<int64_t>(in.batch_group_count, 1);
    std::string properties =
        "batch_group_count = " + std::to_string(batch_groups) +
        " : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = " +
        std::to_string(d.input_batch) + ", input_feature_dimension = " +
        std::to_string(d.input_feature) + ", input_spatial_dimensions = " + List(d.input_spatial) +
        ", kernel_input_feature_dimension = " + std::to_string(d.kernel_input_feature) +
        ", kernel_output_feature_dimension = " + std::to_string(d.kernel_output_feature) +
        ", kernel_spatial_dimensions = " + List(d.kernel_spatial) +
        ", output_batch_dimension = " + std::to_string(d.output_batch) +
        ", output_feature_dimension = " + std::to_string(d.output_feature) +
        ", output_spatial_dimensions = " + List(d.output_spatial) +
        ">, feature_group_count = " + std::to_string(feature_groups) + " : i64";
    if (!in.window.empty()) {
      properties += ", lhs_dilation = " + I64Array(lhs_dilation) + ", " +
                    WindowAttributes(in.window, false, false) +
                    ", rhs_dilation = " + I64Array(rhs_dilation);
    }
    return emit("stablehlo.convolution", flat, properties);
  }
  if (op == "gather") {
    const GatherDims& g = in.gather;
    std::string dims = "offset_dims = " + List(g.offset_dims) +
                       ", collapsed_slice_dims = " + List(g.collapsed_slice_dims);
    if (!g.operand_batching_dims.empty()) {
      dims += ", operand_batching_dims = " + List(g.operand_batching_dims) +
              ", start_indices_batching_dims = " + List(g.start_indices_batching_dims);
    }
    dims += ", start_index_map = " + List(g.start_index_map) +
            ", index_vector_dim = " + std::to_string(g.index_vector_dim);
    return emit("stablehlo.gather", flat,
                "dimension_numbers = #stablehlo.gather<" + dims + ">, indices_are_sorted = " +
                    (in.indices_are_sorted ? "true" : "false") +
                    ", slice_sizes = " + I64Array(in.gather_slice_sizes));
  }

  // Ops with regions from called computations.
  if (op == "reduce" || op == "reduce-window" || op == "scatter" || op == "sort" || op == "map" ||
      op == "select-and-scatter") {
    KILN_ASSIGN_OR_RETURN(const Computation* apply, Called(in, 0));
    std::string regions;
    KILN_RETURN_IF_ERROR(EmitRegion(*apply, depth, indent, regions));
    if (op == "select-and-scatter") {
      KILN_ASSIGN_OR_RETURN(const Computation* scatter, Called(in, 1));
      regions += ", ";
      KILN_RETURN_IF_ERROR(EmitRegion(*scatter, depth, indent, regions));
    }
    if (op == "reduce") {
      return emit("stablehlo.reduce", flat, "dimensions = " + I64Array(in.dimensions), regions);
    }
    if (op == "reduce-window") {
      return emit("stablehlo.reduce_window", flat, WindowAttributes(in.window, true, true), regions);
    }
    if (op == "select-and-scatter") {
      std::string attributes = WindowAttributes(in.window, true, false);
      return emit("stablehlo.select_and_scatter", flat, attributes, regions);
    }
    if (op == "sort") {
      if (in.dimensions.size() != 1) {
        return InvalidArgument("expected one sort dimension, found ", in.dimensions.size());
      }
      return emit("stablehlo.sort", flat,
                  "dimension = " + std::to_string(in.dimensions[0]) +
                      " : i64, is_stable = " + (in.is_stable ? "true" : "false"),
                  regions);
    }
    if (op == "map") return emit("stablehlo.map", flat, "dimensions = " + I64Array(in.dimensions), regions);
    const ScatterDims& s = in.scatter;
    std::string dims = "update_window_dims = " + List(s.update_window_dims) +
                       ", inserted_window_dims = " + List(s.inserted_window_dims);
    if (!s.input_batching_dims.empty()) {
      dims += ", input_batching_dims = " + List(s.input_batching_dims) +
              ", scatter_indices_batching_dims = " + List(s.scatter_indices_batching_dims);
    }
    dims += ", scatter_dims_to_operand_dims = " + List(s.scatter_dims_to_operand_dims) +
            ", index_vector_dim = " + std::to_string(s.index_vector_dim);
    return emit("stablehlo.scatter", flat,
                std::string("indices_are_sorted = ") + (in.indices_are_sorted ? "true" : "false") +
                    ", scatter_dimension_numbers = #stablehlo.scatter<" + dims +
                    ">, unique_indices = " + (in.unique_indices ? "true" : "false"),
                regions);
  }
  if (op == "while") {
    // called_computation_ids: the body, then the condition.
    KILN_RETURN_IF_ERROR(expect_operands(1));
    KILN_ASSIGN_OR_RETURN(const Computation* body, Called(in, 0));
    KILN_ASSIGN_OR_RETURN(const Computation* condition, Called(in, 1));
    std::string regions;
    KILN_RETURN_IF_ERROR(EmitRegion(*condition, depth, indent, regions));
    regions += ", ";
    KILN_RETURN_IF_ERROR(EmitRegion(*body, depth, indent, regions));
    return emit("stablehlo.while", flat, "", regions);
  }
  if (op == "conditional") {
    // Operand 0 selects the branch (pred: true then false; s32: an index);
    // operand i + 1 is branch i's parameter, reached from the region by
    // capture.
    if (operands.size() != in.called_computation_ids.size() + 1) {
      return InvalidArgument("expected one operand per branch after the selector: ",
                             in.called_computation_ids.size(), " branches, ", operands.size(),
                             " operands");
    }
    KILN_ASSIGN_OR_RETURN(Leaf selector, Single(operands[0], 0));
    std::string regions;
    for (size_t i = 0; i < in.called_computation_ids.size(); ++i) {
      KILN_ASSIGN_OR_RETURN(const Computation* branch, Called(in, i));
      if (i > 0) regions += ", ";
      KILN_RETURN_IF_ERROR(EmitRegion(*branch, depth, indent, regions, false, {operands[i + 1]}));
    }
    const bool is_pred = selector.shape.type == PrimitiveType::kPred;
    return emit(is_pred ? "stablehlo.if" : "stablehlo.case", {selector}, "", regions);
  }
  if (op == "call") {
    KILN_ASSIGN_OR_RETURN(const Computation* callee, Called(in, 0));
    return EmitComputation(*callee, operands, depth + 1, indent, out, result);
  }
  if (op == "batch-norm-training" || op == "batch-norm-inference" || op == "batch-norm-grad") {
    std::string name = "stablehlo." + op;
    std::replace(name.begin(), name.end(), '-', '_');
    char epsilon[32];
    std::snprintf(epsilon, sizeof(epsilon), "%.9g", static_cast<double>(in.epsilon));
    std::string text = epsilon;
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    return emit(name, flat,
                "epsilon = " + text + " : f32, feature_index = " + std::to_string(in.feature_index) +
                    " : i64");
  }
  if (op == "opt-barrier") return emit("stablehlo.optimization_barrier", flat, "");
  if (op == "rng-bit-generator") {
    static constexpr const char* kAlgorithms[] = {"DEFAULT", "THREE_FRY", "PHILOX"};
    if (in.rng_algorithm < 0 || in.rng_algorithm > 2) {
      return InvalidArgument("expected rng_algorithm 0, 1 or 2, found ", in.rng_algorithm);
    }
    return emit("stablehlo.rng_bit_generator", flat,
                std::string("rng_algorithm = #stablehlo<rng_algorithm ") +
                    kAlgorithms[in.rng_algorithm] + ">");
  }
  if (op == "rng") {
    // StableHLO's rng takes the result shape as a third operand.
    if (in.distribution != 1 && in.distribution != 2) {
      return InvalidArgument("expected distribution RNG_UNIFORM (1) or RNG_NORMAL (2), found ",
                             in.distribution);
    }
    KILN_RETURN_IF_ERROR(expect_operands(2));
    Leaf shape{"%v" + std::to_string(next_value_++), Shape{PrimitiveType::kS64,
               {static_cast<int64_t>(in.shape.dims.size())}, {}, false}};
    std::vector<uint8_t> dims(in.shape.dims.size() * 8);
    if (!dims.empty()) std::memcpy(dims.data(), in.shape.dims.data(), dims.size());
    KILN_ASSIGN_OR_RETURN(std::string type, TypeText(shape.shape));
    KILN_ASSIGN_OR_RETURN(std::string constant,
                          OpText("stablehlo.constant", shape.name, {},
                                 "value = dense<" + (dims.empty() ? "" : Hex(dims)) + "> : " + type,
                                 "", {shape}, in));
    out += indent + constant + "\n";
    Leaves args = flat;
    args.push_back(shape);
    return emit("stablehlo.rng", args,
                std::string("rng_distribution = #stablehlo<rng_distribution ") +
                    (in.distribution == 1 ? "UNIFORM" : "NORMAL") + ">");
  }
  if (op == "fft") {
    static constexpr const char* kTypes[] = {"FFT", "IFFT", "RFFT", "IRFFT"};
    if (in.fft_type < 0 || in.fft_type > 3) {
      return InvalidArgument("expected fft_type 0 to 3, found ", in.fft_type);
    }
    return emit("stablehlo.fft", flat,
                "fft_length = " + I64Array(in.fft_length) + ", fft_type = #stablehlo<fft_type " +
                    kTypes[in.fft_type] + ">");
  }
  if (op == "cholesky") {
    return emit("stablehlo.cholesky", flat, std::string("lower = ") + (in.lower ? "true" : "false"));
  }
  if (op == "triangular-solve") {
    static constexpr const char* kTranspose[] = {"NO_TRANSPOSE", "NO_TRANSPOSE", "TRANSPOSE",
                                                 "ADJOINT"};
    if (in.transpose_a < 0 || in.transpose_a > 3) {
      return InvalidArgument("expected transpose_a 1 to 3, found ", in.transpose_a);
    }
    auto flag = [](bool value) { return value ? std::string("true") : std::string("false"); };
    return emit("stablehlo.triangular_solve", flat,
                "left_side = " + flag(in.left_side) + ", lower = " + flag(in.lower) +
                    ", transpose_a = #stablehlo<transpose " + kTranspose[in.transpose_a] +
                    ">, unit_diagonal = " + flag(in.unit_diagonal));
  }
  if (op == "custom-call") {
    return Unimplemented("custom-call target \"", in.custom_call_target,
                         "\" is not supported by Kiln's HLO reader");
  }
  return Unimplemented("HLO opcode \"", op, "\" is not supported by Kiln's HLO reader");
}

}  // namespace

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

}  // namespace kiln::frontend::hlo

namespace kiln::frontend::hlo {

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
