#include "ir/module.h"

#include <algorithm>

#include "ir/op_description.h"

namespace kiln::ir {

Operation::Operation(std::string name, Location location)
    : name_(std::move(name)), code_(LookupOpCode(name_)), location_(std::move(location)) {}

Operation::~Operation() {
  // Nested regions are normally emptied by DestroyTree first; a shallow tree
  // freed directly recurses only as deep as it is.
  regions_.clear();
}

Value* Operation::AddResult(Type type) {
  results_.push_back(std::make_unique<Value>(std::move(type), this, nullptr,
                                             static_cast<int>(results_.size())));
  return results_.back().get();
}

Attribute Operation::GetAttr(std::string_view name) const {
  if (AttributeReadCheck::Active()) NoteAttributeRead(code(), name);
  auto it = std::lower_bound(attributes_.begin(), attributes_.end(), name,
                             [](const NamedAttribute& a, std::string_view key) {
                               return a.name < key;
                             });
  if (it != attributes_.end() && it->name == name) return it->value;
  return Attribute();
}

void Operation::SetAttr(std::string name, Attribute value) {
  auto it = std::lower_bound(attributes_.begin(), attributes_.end(), name,
                             [](const NamedAttribute& a, const std::string& key) {
                               return a.name < key;
                             });
  if (it != attributes_.end() && it->name == name) {
    it->value = std::move(value);
  } else {
    attributes_.insert(it, NamedAttribute{std::move(name), std::move(value)});
  }
}

bool Operation::RemoveAttr(std::string_view name) {
  auto it = std::lower_bound(attributes_.begin(), attributes_.end(), name,
                             [](const NamedAttribute& a, std::string_view key) {
                               return a.name < key;
                             });
  if (it == attributes_.end() || it->name != name) return false;
  attributes_.erase(it);
  return true;
}

Region& Operation::AddRegion() {
  regions_.push_back(std::make_unique<Region>(this));
  return *regions_.back();
}

Value* Block::AddArgument(Type type, Location location) {
  arguments_.push_back(std::make_unique<Value>(std::move(type), nullptr, this,
                                               static_cast<int>(arguments_.size()),
                                               std::move(location)));
  return arguments_.back().get();
}

Operation* Block::Append(std::unique_ptr<Operation> op) {
  op->parent_ = this;
  operations_.push_back(std::move(op));
  return operations_.back().get();
}

size_t Block::RemoveIf(const std::function<bool(const Operation&)>& remove) {
  size_t removed = 0;
  std::vector<std::unique_ptr<Operation>> kept;
  kept.reserve(operations_.size());
  for (auto& op : operations_) {
    if (remove(*op)) {
      DestroyTree(std::move(op));
      ++removed;
    } else {
      kept.push_back(std::move(op));
    }
  }
  operations_ = std::move(kept);
  return removed;
}

Block& Region::AddBlock() {
  blocks_.push_back(std::make_unique<Block>(this));
  return *blocks_.back();
}

void DestroyTree(std::unique_ptr<Operation> root) {
  std::vector<std::unique_ptr<Operation>> pending;
  pending.push_back(std::move(root));
  while (!pending.empty()) {
    std::unique_ptr<Operation> op = std::move(pending.back());
    pending.pop_back();
    if (op == nullptr) continue;
    for (auto& region : op->regions_) {
      for (auto& block : region->blocks_) {
        for (auto& nested : block->operations_) pending.push_back(std::move(nested));
      }
    }
    // `op` now holds only empty blocks and frees without recursing.
  }
}

Module::Module() : op_(std::make_unique<Operation>("builtin.module")) {
  op_->AddRegion().AddBlock();
}

Module::Module(std::unique_ptr<Operation> module_op) : op_(std::move(module_op)) {}

Module::~Module() { DestroyTree(std::move(op_)); }

Operation* Module::LookupFunction(std::string_view name) const {
  for (const auto& op : body().operations()) {
    if (op->code() != OpCode::kFuncFunc) continue;
    Attribute sym_name = op->GetAttr("sym_name");
    if (sym_name.Is(AttrKind::kString) && sym_name->text == name) return op.get();
  }
  return nullptr;
}

}  // namespace kiln::ir
