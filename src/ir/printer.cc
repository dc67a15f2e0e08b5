// The module printer: value names as MLIR assigns them, the generic op form,
// and the walk over regions with an explicit stack. Per-op pretty forms are in
// printer_ops.cc; types and attributes in printer_attributes.cc.
#include "ir/printer.h"

#include <algorithm>

#include "ir/float_format.h"
#include "ir/op_syntax.h"
#include "ir/printer_internal.h"

namespace kiln::ir::print_internal {

// ---- NameTable ----

NameTable::NameTable(const Operation& root, bool generic) : generic_(generic) {
  // AsmPrinter's SSANameState: regions are numbered from a stack (last pushed
  // first); each starts from the counters its parent region had when it was
  // pushed (or, in the generic form, from the running counters, so every id
  // is unique), in a name scope nested in its parent region's.
  struct Pending {
    const Region* region;
    int64_t value, argument, conflict;
    size_t parent_scope;  // scope depth to return to
  };
  scope_marks_.push_back(0);  // top-level names
  std::vector<Pending> pending;
  for (size_t i = 0; i < root.num_regions(); ++i) {
    pending.push_back({&root.region(i), 0, 0, 0, scope_marks_.size()});
  }
  NameOp(root);
  while (!pending.empty()) {
    Pending next = pending.back();
    pending.pop_back();
    if (!generic_) {
      next_value_ = next.value;
      next_argument_ = next.argument;
      next_conflict_ = next.conflict;
    }
    while (scope_marks_.size() > next.parent_scope) {
      for (size_t i = used_log_.size(); i-- > scope_marks_.back();) {
        if (--used_[used_log_[i]] == 0) used_.erase(used_log_[i]);
      }
      used_log_.resize(scope_marks_.back());
      scope_marks_.pop_back();
    }
    scope_marks_.push_back(used_log_.size());
    NameRegion(*next.region);
    size_t scope = scope_marks_.size();
    for (size_t b = 0; b < next.region->num_blocks(); ++b) {
      for (const auto& op : next.region->block(b).operations()) {
        for (size_t r = 0; r < op->num_regions(); ++r) {
          pending.push_back({&op->region(r), next_value_, next_argument_, next_conflict_, scope});
        }
      }
    }
  }
}

std::string NameTable::Unique(std::string_view name) {
  std::string unique(name);
  if (used_.count(unique) != 0) {
    std::string probe;
    do {
      probe = unique + "_" + std::to_string(next_conflict_++);
    } while (used_.count(probe) != 0);
    unique = probe;
  }
  ++used_[unique];
  used_log_.push_back(unique);
  return unique;
}

void NameTable::SetName(const Value* value, std::string_view name) {
  if (name.empty()) {
    names_[value] = Name{std::to_string(next_value_++)};
  } else {
    names_[value] = Name{Unique(name)};
  }
}

void NameTable::NameRegion(const Region& region) {
  if (!generic_ && region.parent_op() != nullptr && region.parent_op()->code() == OpCode::kWhile &&
      !region.empty()) {
    const Block& entry = region.block(0);
    for (size_t i = 0; i < entry.num_arguments(); ++i) SetName(entry.argument(i), "iterArg");
  }
  for (size_t b = 0; b < region.num_blocks(); ++b) {
    block_ids_[&region.block(b)] = static_cast<int>(b);
    NameBlock(region.block(b));
  }
}

void NameTable::NameBlock(const Block& block) {
  bool entry = block.parent_region() != nullptr && &block.parent_region()->block(0) == &block;
  for (size_t i = 0; i < block.num_arguments(); ++i) {
    const Value* argument = block.argument(i);
    if (names_.count(argument) != 0) continue;
    SetName(argument, entry ? "arg" + std::to_string(next_argument_++) : "");
  }
  for (const auto& op : block.operations()) NameOp(*op);
}

void NameTable::NameOp(const Operation& op) {
  std::vector<int> groups = {0};
  if (!generic_) {
    std::span<const std::string_view> named = NamedResults(op.name());
    if (op.code() == OpCode::kConstant && op.num_results() == 1) {
      const Type& type = op.result(0)->type();
      bool integer = type.Is(TypeKind::kTensor) && type.element().Is(TypeKind::kElement) &&
                     GetFloatSemantics(type.element().element_type()) == std::nullopt &&
                     type.element().element_type() != ElementType::kC64 &&
                     type.element().element_type() != ElementType::kC128;
      SetName(op.result(0), integer ? "c" : "cst");
    } else if (!named.empty() && named.size() == op.num_results()) {
      for (size_t i = 0; i < named.size(); ++i) {
        SetName(op.result(i), named[i]);
        if (i != 0) groups.push_back(static_cast<int>(i));
      }
    }
  }
  if (op.num_results() == 0) return;
  if (names_.count(op.result(0)) == 0) names_[op.result(0)] = Name{std::to_string(next_value_++)};
  if (groups.size() > 1) groups_[&op] = std::move(groups);
}

void NameTable::FindGroup(const Value* result, const Value*& group, int& index, int& size) const {
  const Operation* owner = result->defining_op();
  group = result;
  index = 0;
  size = 1;
  if (owner == nullptr || owner->num_results() == 1) return;
  int number = result->index();
  auto it = groups_.find(owner);
  if (it == groups_.end()) {
    group = owner->result(0);
    index = number;
    size = static_cast<int>(owner->num_results());
    return;
  }
  const std::vector<int>& starts = it->second;
  auto next = std::upper_bound(starts.begin(), starts.end(), number);
  int start = *std::prev(next);
  size = (next != starts.end() ? *next : static_cast<int>(owner->num_results())) - start;
  group = owner->result(static_cast<size_t>(start));
  index = number - start;
}

void NameTable::AppendValue(std::string& out, const Value* value) const {
  if (value == nullptr) {
    out += "<<null value>>";
    return;
  }
  const Value* group = value;
  int index = 0;
  int size = 1;
  FindGroup(value, group, index, size);
  auto it = names_.find(group);
  out += '%';
  out += it == names_.end() ? "<<unknown value>>" : it->second.text;
  if (size > 1) {
    out += '#';
    out += std::to_string(index);
  }
}

void NameTable::AppendResults(std::string& out, const Operation& op) const {
  size_t count = op.num_results();
  if (count == 0) return;
  auto it = groups_.find(&op);
  std::vector<int> starts = it == groups_.end() ? std::vector<int>{0} : it->second;
  for (size_t g = 0; g < starts.size(); ++g) {
    if (g > 0) out += ", ";
    int end = g + 1 < starts.size() ? starts[g + 1] : static_cast<int>(count);
    auto name = names_.find(op.result(static_cast<size_t>(starts[g])));
    out += '%';
    out += name == names_.end() ? "<<unknown value>>" : name->second.text;
    if (end - starts[g] > 1) {
      out += ':';
      out += std::to_string(end - starts[g]);
    }
  }
  out += " = ";
}

int NameTable::BlockId(const Block* block) const {
  auto it = block_ids_.find(block);
  return it == block_ids_.end() ? 0 : it->second;
}

// ---- LocationAliases ----

namespace {

void AppendAlias(std::string& out, size_t index) {
  out += "#loc";
  if (index != 0) out += std::to_string(index);
}

}  // namespace

size_t LocationAliases::Intern(std::string body) {
  auto [it, inserted] = by_body_.emplace(std::move(body), bodies_.size());
  if (inserted) bodies_.push_back(it->first);
  return it->second;
}

size_t LocationAliases::Register(const Location& location) {
  if (!location) return Intern("unknown");
  // Post-order over the location DAG with an explicit stack: children get
  // their aliases before the locations that refer to them.
  std::vector<std::pair<const LocationStorage*, bool>> stack = {{&location.storage(), false}};
  while (!stack.empty()) {
    const LocationStorage* node = stack.back().first;
    bool children_done = stack.back().second;
    if (by_storage_.count(node) != 0) {
      stack.pop_back();
      continue;
    }
    if (!children_done) {
      stack.back().second = true;
      for (const Location& child : node->children) {
        if (child && by_storage_.count(&child.storage()) == 0)
          stack.push_back({&child.storage(), false});
      }
      continue;
    }
    stack.pop_back();
    auto child = [&](size_t i) {
      std::string text;
      if (i < node->children.size() && node->children[i]) {
        AppendAlias(text, by_storage_.at(&node->children[i].storage()));
      } else {
        AppendAlias(text, Intern("unknown"));
      }
      return text;
    };
    std::string body;
    switch (node->kind) {
      case LocationKind::kUnknown:
      case LocationKind::kFileLineCol:
        AppendLocationBody(body, Location(std::shared_ptr<const LocationStorage>(
                                     std::shared_ptr<const LocationStorage>(), node)));
        break;
      case LocationKind::kName:
        AppendQuoted(body, node->text);
        if (!node->children.empty() && node->children[0] &&
            node->children[0].kind() != LocationKind::kUnknown) {
          body += "(" + child(0) + ")";
        }
        break;
      case LocationKind::kCallSite: body = "callsite(" + child(0) + " at " + child(1) + ")"; break;
      case LocationKind::kFused:
        body = "fused";
        if (node->metadata) {
          body += '<';
          AppendAttribute(body, node->metadata);
          body += '>';
        }
        body += '[';
        for (size_t i = 0; i < node->children.size(); ++i) body += (i > 0 ? ", " : "") + child(i);
        body += ']';
        break;
    }
    by_storage_[node] = Intern(std::move(body));
  }
  return by_storage_.at(&location.storage());
}

void LocationAliases::AppendReference(std::string& out, const Location& location) {
  size_t index = Register(location);
  out += " loc(";
  AppendAlias(out, index);
  out += ')';
}

void LocationAliases::AppendDefinitions(std::string& out) const {
  for (size_t i = 0; i < bodies_.size(); ++i) {
    AppendAlias(out, i);
    out += " = loc(";
    out += bodies_[i];
    out += ")\n";
  }
}

// ---- OpWriter ----

void OpWriter::Region(const ir::Region& region, bool entry_arguments, bool empty_block_header) {
  pieces_.back().region = &region;
  pieces_.back().entry_arguments = entry_arguments;
  pieces_.back().empty_block_header = empty_block_header;
  pieces_.emplace_back();
}

void OpWriter::Name(const Operation& op) {
  std::string_view name = op.name();
  size_t dot = name.find('.');
  if (dot != std::string_view::npos) {
    std::string_view dialect = name.substr(0, dot);
    if (dialect == "builtin" || (!default_dialect_.empty() && dialect == default_dialect_)) {
      name.remove_prefix(dot + 1);
    }
  }
  out() += name;
}

void OpWriter::Values(std::span<ir::Value* const> values) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out() += ", ";
    Value(values[i]);
  }
}

void OpWriter::Types(std::span<const ir::Type> types) {
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out() += ", ";
    Type(types[i]);
  }
}

void OpWriter::OperandTypes(const Operation& op) {
  for (size_t i = 0; i < op.operands().size(); ++i) {
    if (i > 0) out() += ", ";
    Type(op.operand(i) ? op.operand(i)->type() : ir::Type());
  }
}

void OpWriter::ResultTypes(const Operation& op) {
  for (size_t i = 0; i < op.num_results(); ++i) {
    if (i > 0) out() += ", ";
    Type(op.result(i)->type());
  }
}

void OpWriter::FunctionalType(const Operation& op) {
  out() += '(';
  OperandTypes(op);
  out() += ") -> ";
  bool parens = op.num_results() != 1 || op.result(0)->type().Is(TypeKind::kFunction);
  if (parens) out() += '(';
  ResultTypes(op);
  if (parens) out() += ')';
}

void OpWriter::AttrDict(const Operation& op, std::span<const std::string_view> elided,
                        bool keyword) {
  std::vector<NamedAttribute> kept;
  for (const NamedAttribute& attribute : op.attributes()) {
    if (std::find(elided.begin(), elided.end(), attribute.name) == elided.end()) {
      kept.push_back(attribute);
    }
  }
  if (kept.empty()) return;
  out() += keyword ? " attributes " : " ";
  AppendDictionary(out(), kept);
}

void OpWriter::BlockArgument(const ir::Value* argument) {
  Value(argument);
  out() += ": ";
  Type(argument->type());
  Location(argument->location());
}

void OpWriter::Location(const ir::Location& location) {
  if (aliases_ != nullptr) aliases_->AppendReference(out(), location);
}

}  // namespace kiln::ir::print_internal

namespace kiln::ir {
namespace {

using print_internal::AppendDictionary;
using print_internal::LocationAliases;
using print_internal::NameTable;
using print_internal::OpWriter;
using print_internal::Piece;

// MLIR's generic form: "name"(operands) <{props}> (regions) {attrs} : type.
void WriteGenericOp(const Operation& op, OpWriter& w) {
  print_internal::AppendQuoted(w.out(), op.name());
  w.out() += '(';
  w.Values(op.operands());
  w.out() += ')';
  std::vector<NamedAttribute> inherent;
  std::vector<NamedAttribute> discardable;
  for (const NamedAttribute& attribute : op.attributes()) {
    (IsInherentAttribute(op.name(), attribute.name) ? inherent : discardable).push_back(attribute);
  }
  if (!inherent.empty()) {
    w.out() += " <";
    AppendDictionary(w.out(), inherent);
    w.out() += '>';
  }
  if (op.num_regions() != 0) {
    w.out() += " (";
    for (size_t i = 0; i < op.num_regions(); ++i) {
      if (i > 0) w.out() += ", ";
      w.Region(op.region(i), /*entry_arguments=*/true, /*empty_block_header=*/true);
    }
    w.out() += ')';
  }
  if (!discardable.empty()) {
    w.out() += ' ';
    AppendDictionary(w.out(), discardable);
  }
  w.out() += " : ";
  w.FunctionalType(op);
}

class ModulePrinter {
 public:
  ModulePrinter(const Module& module, const PrintOptions& options)
      : module_(module),
        options_(options),
        names_(module.op(), options.generic),
        aliases_(options.locations ? &aliases_storage_ : nullptr) {}

  std::string Print() {
    StartOp(module_.op(), 0, "");
    Run();
    out_ += '\n';
    if (aliases_ != nullptr) aliases_->AppendDefinitions(out_);
    return std::move(out_);
  }

 private:
  // An op whose pieces are being written, or a region whose blocks are.
  struct Frame {
    std::vector<Piece> pieces;  // op frames
    size_t next_piece = 0;
    const Operation* op = nullptr;
    const Region* region = nullptr;  // region frames
    bool entry_arguments = false;
    bool empty_block_header = false;
    size_t block = 0;
    size_t next_op = 0;
    bool header_done = false;
    int indent = 0;
    std::string default_dialect;
  };

  void Indent(int indent) { out_.append(static_cast<size_t>(indent), ' '); }

  void StartOp(const Operation& op, int indent, std::string_view default_dialect) {
    OpWriter writer(names_, aliases_, default_dialect, indent);
    names_.AppendResults(writer.out(), op);
    bool pretty = !options_.generic && print_internal::WritePrettyOp(op, writer);
    if (!pretty) {
      writer.Reset();
      names_.AppendResults(writer.out(), op);
      WriteGenericOp(op, writer);
    }
    Frame frame;
    frame.pieces = std::move(writer.pieces());
    frame.op = &op;
    frame.indent = indent;
    frame.default_dialect = std::string(DefaultDialect(op.name()));
    stack_.push_back(std::move(frame));
  }

  void Run() {
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.op != nullptr) {
        StepOp(frame);
      } else {
        StepRegion(frame);
      }
    }
  }

  void StepOp(Frame& frame) {
    if (frame.next_piece == frame.pieces.size()) {
      if (aliases_ != nullptr) aliases_->AppendReference(out_, frame.op->location());
      stack_.pop_back();
      if (!stack_.empty()) out_ += '\n';  // ops in a region end their line
      return;
    }
    Piece& piece = frame.pieces[frame.next_piece++];
    out_ += piece.text;
    if (piece.region == nullptr) return;
    out_ += "{\n";
    Frame region;
    region.region = piece.region;
    region.entry_arguments = piece.entry_arguments;
    region.empty_block_header = piece.empty_block_header;
    region.indent = frame.indent;
    region.default_dialect = frame.default_dialect;
    stack_.push_back(std::move(region));
  }

  void StepRegion(Frame& frame) {
    const Region& region = *frame.region;
    if (frame.block == region.num_blocks()) {
      Indent(frame.indent);
      out_ += '}';
      stack_.pop_back();
      return;
    }
    const Block& block = region.block(frame.block);
    if (!frame.header_done) {
      frame.header_done = true;
      bool print_header = frame.block != 0 ||
                          (frame.entry_arguments && block.num_arguments() != 0) ||
                          (frame.empty_block_header && block.operations().empty());
      if (print_header) WriteBlockHeader(block, frame.indent);
    }
    if (frame.next_op == block.operations().size()) {
      ++frame.block;
      frame.next_op = 0;
      frame.header_done = false;
      return;
    }
    const Operation& op = *block.operations()[frame.next_op++];
    int indent = frame.indent + 2;
    std::string dialect = frame.default_dialect;
    Indent(indent);
    StartOp(op, indent, dialect);  // may reallocate stack_, invalidating `frame`
  }

  void WriteBlockHeader(const Block& block, int indent) {
    Indent(indent);
    out_ += "^bb";
    out_ += std::to_string(names_.BlockId(&block));
    if (block.num_arguments() != 0) {
      OpWriter writer(names_, aliases_, "", indent);
      writer.out() += '(';
      for (size_t i = 0; i < block.num_arguments(); ++i) {
        if (i > 0) writer.out() += ", ";
        writer.BlockArgument(block.argument(i));
      }
      writer.out() += ')';
      out_ += writer.out();
    }
    out_ += ":\n";
  }

  const Module& module_;
  const PrintOptions& options_;
  NameTable names_;
  LocationAliases aliases_storage_;
  LocationAliases* aliases_;
  std::vector<Frame> stack_;
  std::string out_;
};

}  // namespace

std::string PrintModule(const Module& module, const PrintOptions& options) {
  ModulePrinter printer(module, options);
  return printer.Print();
}

}  // namespace kiln::ir
