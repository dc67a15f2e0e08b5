// Kiln IR: modules of operations holding regions of blocks of operations, in
// SSA form, as in MLIR. Ops keep their full names ("stablehlo.add",
// "func.func", "sdy.manual_computation"); op_names.h maps them to OpCode.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/op_names.h"

namespace kiln::ir {

class Block;
class Operation;
class Region;

// An SSA value: an op result or a block argument. Owned by its op or block.
class Value {
 public:
  Value(Type type, Operation* defining_op, Block* owner_block, int index, Location location = {})
      : type_(std::move(type)),
        defining_op_(defining_op),
        owner_block_(owner_block),
        index_(index),
        location_(std::move(location)) {}

  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = std::move(type); }
  // The op whose result this is; null for a block argument.
  Operation* defining_op() const { return defining_op_; }
  // The block whose argument this is; null for an op result.
  Block* owner_block() const { return owner_block_; }
  int index() const { return index_; }
  const Location& location() const { return location_; }

 private:
  Type type_;
  Operation* defining_op_;
  Block* owner_block_;
  int index_;
  Location location_;
};

class Operation {
 public:
  explicit Operation(std::string name, Location location = Location::Unknown());
  ~Operation();
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  const std::string& name() const { return name_; }
  OpCode code() const { return code_; }
  const Location& location() const { return location_; }
  void set_location(Location location) { location_ = std::move(location); }
  Block* parent_block() const { return parent_; }

  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(size_t i) const { return operands_[i]; }
  void AddOperand(Value* value) { operands_.push_back(value); }
  void SetOperand(size_t i, Value* value) { operands_[i] = value; }

  size_t num_results() const { return results_.size(); }
  Value* result(size_t i) const { return results_[i].get(); }
  Value* AddResult(Type type);

  // Attributes, kept sorted by name (as MLIR prints them).
  const std::vector<NamedAttribute>& attributes() const { return attributes_; }
  Attribute GetAttr(std::string_view name) const;
  void SetAttr(std::string name, Attribute value);
  bool RemoveAttr(std::string_view name);

  size_t num_regions() const { return regions_.size(); }
  Region& region(size_t i) const { return *regions_[i]; }
  Region& AddRegion();

 private:
  friend class Block;
  friend void DestroyTree(std::unique_ptr<Operation> root);

  std::string name_;
  OpCode code_;
  Location location_;
  Block* parent_ = nullptr;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::vector<NamedAttribute> attributes_;
  std::vector<std::unique_ptr<Region>> regions_;
};

class Block {
 public:
  explicit Block(Region* parent) : parent_(parent) {}
  Region* parent_region() const { return parent_; }

  size_t num_arguments() const { return arguments_.size(); }
  Value* argument(size_t i) const { return arguments_[i].get(); }
  Value* AddArgument(Type type, Location location = {});

  const std::vector<std::unique_ptr<Operation>>& operations() const { return operations_; }
  Operation* Append(std::unique_ptr<Operation> op);
  // The last op (the terminator in a well-formed block), or null.
  Operation* back() const { return operations_.empty() ? nullptr : operations_.back().get(); }
  // Removes and frees the ops `remove` selects (which nothing may still use);
  // returns how many.
  size_t RemoveIf(const std::function<bool(const Operation&)>& remove);

 private:
  friend void DestroyTree(std::unique_ptr<Operation> root);

  Region* parent_;
  std::vector<std::unique_ptr<Value>> arguments_;
  std::vector<std::unique_ptr<Operation>> operations_;
};

class Region {
 public:
  explicit Region(Operation* parent) : parent_(parent) {}
  Operation* parent_op() const { return parent_; }
  size_t num_blocks() const { return blocks_.size(); }
  Block& block(size_t i) const { return *blocks_[i]; }
  Block& AddBlock();
  bool empty() const { return blocks_.empty(); }

 private:
  friend void DestroyTree(std::unique_ptr<Operation> root);

  Operation* parent_;
  std::vector<std::unique_ptr<Block>> blocks_;
};

// Frees an op tree without recursion, so input-controlled nesting depth can
// never overflow the stack.
void DestroyTree(std::unique_ptr<Operation> root);

// A `builtin.module` and its body.
class Module {
 public:
  Module();
  explicit Module(std::unique_ptr<Operation> module_op);
  ~Module();
  Module(Module&&) = default;
  Module& operator=(Module&&) = default;

  Operation& op() const { return *op_; }
  Block& body() const { return op_->region(0).block(0); }
  // The `func.func` with this sym_name, or null.
  Operation* LookupFunction(std::string_view name) const;

 private:
  std::unique_ptr<Operation> op_;
};

}  // namespace kiln::ir
